// The agents' stream on gRPC's callback API (agent_stream.h) with raw gRPC
// clients: Hello and Welcome, either side ending it, a newer stream of the
// same node replacing the first, and many streams opened and closed without
// leaking file descriptors or sessions.
#include "scheduler/agents/agent_stream.h"

#include <dirent.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/agent_service.h"
#include "scheduler/auth/insecure_auth_for_test.h"
#include "scheduler/server/server.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using Stream =
    grpc::ClientReaderWriter<api::AgentMessage, api::SchedulerMessage>;

// Entries of /proc/self/`what` ("fd": open files, "task": threads).
int Count(const char* what) {
  int n = 0;
  DIR* dir = opendir(absl::StrCat("/proc/self/", what).c_str());
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

class AgentStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hub = AgentHub::Create(
        &store_, AgentHub::Options{.node_lost_timeout = absl::Seconds(30)});
    ASSERT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
    service_ = std::make_unique<AgentServiceImpl>(hub_.get(), auth_.get());
    Server::Options options;
    options.listen = "127.0.0.1:0";
    options.auth = auth_.get();
    options.services = {service_.get()};
    options.end_streams = [this] { hub_->CloseAll(); };
    auto server = Server::Start(options, &store_);
    ASSERT_THAT(server.status(), IsOk());
    server_ = *std::move(server);
    stub_ = api::AgentService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    server_->Shutdown(absl::Now() + absl::Seconds(1));
    server_.reset();
    hub_->CloseAll();
  }

  // Opens a stream as node `name` and reads its Welcome.
  std::unique_ptr<Stream> Connect(grpc::ClientContext* ctx,
                                  const std::string& name) {
    std::unique_ptr<Stream> s = stub_->Connect(ctx);
    api::AgentMessage hello;
    api::NodeRegistration* n = hello.mutable_hello()->mutable_node();
    n->set_name(name);
    n->set_address("10.0.0.1");
    (*n->mutable_capacity())["cpu"] = "1";
    (*n->mutable_capacity())["memory"] = "1Gi";
    EXPECT_TRUE(s->Write(hello));
    api::SchedulerMessage welcome;
    EXPECT_TRUE(s->Read(&welcome));
    EXPECT_TRUE(welcome.has_welcome()) << welcome.DebugString();
    return s;
  }

  // A heartbeat's round trip on `s`.
  static bool Heartbeat(Stream& s, int64_t seq) {
    api::AgentMessage beat;
    beat.mutable_heartbeat()->set_seq(seq);
    if (!s.Write(beat)) return false;
    api::SchedulerMessage ack;
    while (s.Read(&ack)) {
      if (ack.has_heartbeat_ack()) return ack.heartbeat_ack().seq() == seq;
    }
    return false;
  }

  store::MemoryStore store_;
  InsecureAuthForTest auth_;
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<AgentServiceImpl> service_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<api::AgentService::Stub> stub_;
};

TEST_F(AgentStreamTest, HelloWelcomeHeartbeatsAndTheAgentsEnd) {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> s = Connect(&ctx, "n1");
  for (int seq = 1; seq <= 20; ++seq) ASSERT_TRUE(Heartbeat(*s, seq));
  ASSERT_TRUE(s->WritesDone());
  api::SchedulerMessage m;
  while (s->Read(&m)) {
  }
  EXPECT_TRUE(s->Finish().ok());
}

TEST_F(AgentStreamTest, TheFirstMessageMustBeAHello) {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> s = stub_->Connect(&ctx);
  api::AgentMessage beat;
  beat.mutable_heartbeat()->set_seq(1);
  ASSERT_TRUE(s->Write(beat));
  api::SchedulerMessage m;
  EXPECT_FALSE(s->Read(&m));
  grpc::Status status = s->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "the first message of a stream must be a hello");
}

TEST_F(AgentStreamTest, ANewerStreamOfTheNodeEndsTheFirst) {
  grpc::ClientContext first_ctx;
  std::unique_ptr<Stream> first = Connect(&first_ctx, "n1");
  grpc::ClientContext second_ctx;
  std::unique_ptr<Stream> second = Connect(&second_ctx, "n1");
  api::SchedulerMessage m;
  while (first->Read(&m)) {
  }
  grpc::Status status = first->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  EXPECT_TRUE(Heartbeat(*second, 1)) << "the newer stream carries on";
  second_ctx.TryCancel();
}

TEST_F(AgentStreamTest, AgentsCancellingMidStreamLeaveTheOthersServed) {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> kept = Connect(&ctx, "kept");
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext c;
    std::unique_ptr<Stream> s = Connect(&c, absl::StrCat("gone-", i));
    api::AgentMessage beat;
    beat.mutable_heartbeat()->set_seq(1);
    s->Write(beat);
    c.TryCancel();  // with its heartbeat's ack possibly in flight
    s->Finish().IgnoreError();
    ASSERT_TRUE(Heartbeat(*kept, i + 1));
  }
  ctx.TryCancel();
}

// 5 rounds of 200 streams opened (Hello, Welcome, a heartbeat) and closed,
// half by the agent's WritesDone and half by its cancel: 200 open streams
// hold no thread each (the sync API held two), and the file descriptors
// come back to where they were after the first round.
TEST_F(AgentStreamTest, ManyStreamsOpenedAndClosedLeakNothing) {
  constexpr int kStreams = 200;
  int after_first = -1;
  const int threads_before = Count("task");
  for (int round = 0; round < 5; ++round) {
    std::vector<std::unique_ptr<grpc::ClientContext>> ctxs;
    std::vector<std::unique_ptr<Stream>> streams;
    for (int i = 0; i < kStreams; ++i) {
      ctxs.push_back(std::make_unique<grpc::ClientContext>());
      streams.push_back(Connect(ctxs.back().get(), absl::StrCat("n-", i)));
      ASSERT_TRUE(Heartbeat(*streams.back(), round + 1));
    }
    EXPECT_LT(Count("task"), threads_before + 40) << "round " << round;
    for (int i = 0; i < kStreams; ++i) {
      if (i % 2 == 0) {
        streams[i]->WritesDone();
        api::SchedulerMessage m;
        while (streams[i]->Read(&m)) {
        }
      } else {
        ctxs[i]->TryCancel();
      }
      streams[i]->Finish().IgnoreError();
    }
    const int fds = Count("fd");
    if (round == 0) after_first = fds;
    EXPECT_LE(fds, after_first + 2) << "round " << round;
  }
}

}  // namespace
}  // namespace jobset::scheduler
