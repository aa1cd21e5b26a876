// Client against several replicas: a follower's redirect is followed, an
// unreachable replica is passed over, a failover is ridden out with a
// back-off on the Clock, and the call keeps one deadline.
#include "cli/client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/leader_redirect.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "proto/kueue_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

// A replica: the leader answers GetJobSet with the name asked for; a
// follower answers UNAVAILABLE naming `leader` ("" names none), as
// scheduler/ha/follower_server.cc words it. After `lead_after` calls, it
// leads (-1: never).
class Replica final : public api::JobSetService::Service {
 public:
  explicit Replica(std::string leader) : leader_(std::move(leader)) {}
  void set_leader(std::string leader) {
    absl::MutexLock lock(&mu_);
    leader_ = std::move(leader);
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

  grpc::Status GetJobSet(grpc::ServerContext* context,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    if (lead_after_ >= 0 && calls_ > lead_after_) leader_ = "self";
    if (leader_ == "self") {
      response->mutable_metadata()->set_name(request->name());
      return grpc::Status::OK;
    }
    if (!leader_.empty())
      context->AddTrailingMetadata(kLeaderMetadataKey, leader_);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "jobsetd: this replica is a follower");
  }
  void set_lead_after(int calls) {
    absl::MutexLock lock(&mu_);
    lead_after_ = calls;
  }

 private:
  absl::Mutex mu_;
  std::string leader_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  int lead_after_ ABSL_GUARDED_BY(mu_) = -1;
};

// A FakeClock that moves to the deadline of every SleepUntil at once, and
// remembers each wait: the Client's back-off without sleeping.
class SteppingClock final : public Clock {
 public:
  absl::Time Now() const override { return fake_.Now(); }
  void SleepUntil(absl::Time deadline) override {
    absl::MutexLock lock(&mu_);
    waits_.push_back(deadline - fake_.Now());
    if (deadline > fake_.Now()) fake_.SetTime(deadline);
  }
  std::vector<absl::Duration> waits() {
    absl::MutexLock lock(&mu_);
    return waits_;
  }

 private:
  FakeClock fake_;
  absl::Mutex mu_;
  std::vector<absl::Duration> waits_ ABSL_GUARDED_BY(mu_);
};

// KueueService on a replica: the leader answers GetKueueObject with the
// name asked for and WatchKueueObjects with one event; a follower as
// Replica's.
class KueueReplica final : public api::KueueService::Service {
 public:
  explicit KueueReplica(std::string leader) : leader_(std::move(leader)) {}

  grpc::Status GetKueueObject(grpc::ServerContext* context,
                              const api::KueueObjectRef* ref,
                              api::KueueObject* response) override {
    if (grpc::Status s = Follow(context); !s.ok()) return s;
    response->mutable_cluster_queue()->mutable_metadata()->set_name(
        ref->name());
    return grpc::Status::OK;
  }
  grpc::Status WatchKueueObjects(
      grpc::ServerContext* context, const api::WatchKueueObjectsRequest*,
      grpc::ServerWriter<api::KueueWatchEvent>* writer) override {
    if (grpc::Status s = Follow(context); !s.ok()) return s;
    api::KueueWatchEvent event;
    event.set_type("ADDED");
    event.mutable_object()->mutable_local_queue()->mutable_metadata()->set_name(
        "q");
    writer->Write(event);
    return grpc::Status::OK;
  }

 private:
  grpc::Status Follow(grpc::ServerContext* context) {
    if (leader_ == "self") return grpc::Status::OK;
    if (!leader_.empty()) {
      context->AddTrailingMetadata(kLeaderMetadataKey, leader_);
    }
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "jobsetd: this replica is a follower");
  }

  const std::string leader_;
};

struct Served {
  explicit Served(std::string leader) : replica(leader), kueue(leader) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&replica);
    builder.RegisterService(&kueue);
    server = builder.BuildAndStart();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port); }
  Replica replica;
  KueueReplica kueue;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

// A loopback port nobody listens on (bound, then closed).
std::string ClosedPort() {
  Served gone("");
  const std::string address = gone.address();
  gone.server->Shutdown();
  return address;
}

absl::StatusOr<api::JobSet> GetNamed(Client& client, const std::string& name) {
  api::GetJobSetRequest request;
  request.set_name(name);
  return client.Get(request);
}

TEST(ClientReplicasTest, AFollowerSendsTheCallToTheLeader) {
  Served leader("self");
  Served follower(leader.address());
  Client client(absl::StrCat(follower.address(), ",", leader.address()),
                absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->metadata().name(), "one");
  EXPECT_EQ(client.address(), leader.address());
  // The next call goes straight to the leader.
  ASSERT_TRUE(GetNamed(client, "two").ok());
  EXPECT_EQ(follower.replica.calls(), 1);
  EXPECT_EQ(leader.replica.calls(), 2);
}

// KueueService's calls ride the same failover: a follower's redirect and
// an unreachable replica, for a unary call and a stream.
TEST(ClientReplicasTest, KueueCallsFollowTheLeaderToo) {
  Served leader("self");
  Served follower(leader.address());
  Client client(absl::StrCat(ClosedPort(), ",", follower.address(), ",",
                             leader.address()),
                absl::Seconds(10));
  api::KueueObjectRef ref;
  ref.set_kind("ClusterQueue");
  ref.set_name("research");
  absl::StatusOr<api::KueueObject> got = client.GetKueueObject(ref);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->cluster_queue().metadata().name(), "research");
  EXPECT_EQ(client.address(), leader.address());

  Client watcher(absl::StrCat(follower.address(), ",", leader.address()),
                 absl::Seconds(10));
  std::vector<std::string> seen;
  absl::Status watched = watcher.WatchKueueObjects(
      api::WatchKueueObjectsRequest(), absl::InfiniteFuture(),
      [&](const api::KueueWatchEvent& event) {
        seen.push_back(absl::StrCat(
            event.type(), " ", event.object().local_queue().metadata().name()));
        return true;
      });
  ASSERT_TRUE(watched.ok()) << watched;
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED q"));
  // Unreachable: the same error as any call.
  Client alone(ClosedPort(), absl::Milliseconds(300));
  EXPECT_THAT(alone.GetKueueObject(ref).status().message(),
              HasSubstr("cannot reach jobsetd"));
}

TEST(ClientReplicasTest, AnUnreachableReplicaIsPassedOver) {
  Served leader("self");
  Client client(absl::StrCat(ClosedPort(), ",", leader.address()),
                absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(client.address(), leader.address());
}

TEST(ClientReplicasTest, WithNoLeaderItBacksOffUntilTheTimeout) {
  Served follower("");  // Campaigning: no leader known.
  const std::string closed = ClosedPort();
  SteppingClock clock;
  Client client(absl::StrCat(follower.address(), ",", closed),
                absl::Seconds(10), &clock);
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  // The last error, every address tried, how often and how long.
  EXPECT_THAT(got.status().message(), HasSubstr("cannot reach jobsetd at"));
  EXPECT_THAT(got.status().message(),
              HasSubstr(absl::StrCat("replicas tried ", follower.address(), ",",
                                     closed, ": ")));
  EXPECT_THAT(got.status().message(), HasSubstr("the next past the 10s"));
  // One back-off per round of both replicas: 100 ms doubling to 2 s
  // (jittered into the upper half), within the 10 s.
  const std::vector<absl::Duration> waits = clock.waits();
  ASSERT_GE(waits.size(), 5u);
  EXPECT_GE(waits[0], absl::Milliseconds(50));
  EXPECT_LE(waits[0], absl::Milliseconds(100));
  absl::Duration total;
  for (absl::Duration w : waits) {
    EXPECT_LE(w, absl::Seconds(2));
    total += w;
  }
  EXPECT_LE(total, absl::Seconds(10));
  EXPECT_GE(total, absl::Seconds(6));
  EXPECT_EQ(follower.replica.calls(), static_cast<int>(waits.size()) + 1);
}

TEST(ClientReplicasTest, RidesOutAFailover) {
  // The leader is gone; the next is elected after three calls, then
  // followers name it.
  const std::string dead = ClosedPort();
  Served next("");
  next.replica.set_lead_after(3);
  Served other("");
  SteppingClock clock;
  Client client(absl::StrCat(dead, ",", other.address(), ",", next.address()),
                absl::Seconds(30), &clock);
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(client.address(), next.address());
  EXPECT_EQ(clock.waits().size(), 3u);
  // The other follower learns the leader and redirects: followed at once.
  other.replica.set_leader(next.address());
  Client fresh(absl::StrCat(other.address(), ",", dead), absl::Seconds(30),
               &clock);
  got = GetNamed(fresh, "two");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(fresh.address(), next.address());
  EXPECT_EQ(clock.waits().size(), 3u);
}

TEST(ClientReplicasTest, FollowersNamingEachOtherDoNotLoopForever) {
  Served a("");
  Served b(a.address());
  a.replica.set_leader(b.address());
  SteppingClock clock;
  Client client(absl::StrCat(a.address(), ",", b.address()), absl::Seconds(10),
                &clock);
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  // The first call and three redirects at once, then one a back-off
  // until the timeout.
  EXPECT_EQ(a.replica.calls() + b.replica.calls(),
            static_cast<int>(clock.waits().size()) + 4);
  EXPECT_LE(a.replica.calls() + b.replica.calls(), 30);
}

TEST(ClientReplicasTest, ABadListIsAnErrorOnEveryCall) {
  Client client("127.0.0.1:1,,x", absl::Seconds(1));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("entry 1 \"\" is empty"));
}

}  // namespace
}  // namespace jobset::cli
