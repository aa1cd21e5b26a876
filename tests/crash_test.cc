// Crash safety of jobsetd, end to end: several clients create JobSets while
// jobsetd is SIGKILLed at random moments and restarted on the same data
// directory. After every restart the test checks that
//   - every acknowledged Create is stored, with the acknowledged spec, uid and
//     resourceVersion or a later one (the controller writes status);
//   - no JobSet appears twice, and none appears that no client sent;
//   - revisions never go backwards: the restarted store's revision is at least
//     every acknowledged one, and a JobSet created after the restart gets a
//     revision above everything read before it;
//   - jobsetd serves again within kMaxRestart;
//   - retrying a Create whose outcome was lost in the crash returns the JobSet
//     (created or already there), never ALREADY_EXISTS.
//
// CI runs --kills=10; for a longer run:
//   bazel test //tests:crash_test --test_arg=--kills=100 --test_timeout=900
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/acknowledged.h"
#include "tests/cluster_credentials.h"
#include "tests/jobsetd_process.h"

ABSL_FLAG(int, kills, 10, "How many times jobsetd is SIGKILLed and restarted");
ABSL_FLAG(int, clients, 4, "Clients creating JobSets concurrently");
ABSL_FLAG(uint64_t, seed, 0,
          "Seed of the kill delays; 0 picks one (printed, to replay a run)");
ABSL_FLAG(std::string, jobsetd, "",
          "Path of the jobsetd binary; empty: //scheduler:jobsetd from the "
          "test's runfiles");

namespace jobset {
namespace {

using ::jobset::api::CreateJobSetRequest;
using ::jobset::api::CreateJobSetResponse;
using ::jobset::api::JobSet;
using ::jobset::api::JobSetService;
using ::jobset::api::ListJobSetsRequest;
using ::jobset::api::ListJobSetsResponse;
using ::jobset::testing::AcknowledgedMismatches;
using ::jobset::testing::ClusterCredentials;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::Key;
using ::jobset::testing::ReadClusterCredentials;
using ::jobset::testing::Revision;
using ::jobset::testing::SecureChannel;

// Deadline of every Create, so that no client waits long on a dead server.
constexpr absl::Duration kRpcDeadline = absl::Seconds(2);
// Deadline of each List page.
constexpr absl::Duration kListDeadline = absl::Seconds(10);
// How long jobsetd may take from exec to serving after a crash.
constexpr absl::Duration kMaxRestart = absl::Seconds(15);
// jobsetd is killed this long after the clients start.
constexpr int64_t kMinKillDelayMs = 50;
constexpr int64_t kMaxKillDelayMs = 400;
// Bounds on one client's work in one round, should the kill not stop it.
constexpr int kMaxCreatesPerRound = 10'000;
constexpr absl::Duration kMaxRound = absl::Seconds(30);
constexpr int kListPageSize = 500;
// Problems listed in a failure message; the rest are counted.
constexpr size_t kMaxProblemsShown = 20;

// Returns the `seq`th JobSet of client `client`: a name no other Create uses,
// in one of two namespaces, with a spec that differs from its neighbours'.
JobSet TestJobSet(int client, int seq) {
  return api::testing::JobSetBuilder(absl::StrCat("c", client, "-", seq))
      .Namespace(absl::StrCat("crash-", client % 2))
      .Label("client", absl::StrCat(client))
      .Replicated("workers", 1 + seq % 5)
      .TtlSecondsAfterFinished(seq)
      .Build();
}

// The CA and administrator token jobsetd wrote at its first start (the
// same after every restart); set by the test before any client runs.
ClusterCredentials* credentials = nullptr;

std::unique_ptr<JobSetService::Stub> NewStub(const std::string& address) {
  // A channel (one TCP connection) of its own per client.
  return JobSetService::NewStub(
      SecureChannel(address, credentials->ca_pem, credentials->admin_token));
}

// True for the codes a call gets when jobsetd dies under it: the Create may
// or may not have been committed.
bool OutcomeUnknown(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// One client across rounds: the Creates acknowledged to it and the one whose
// outcome it does not know. Used by its round's thread while the round runs
// and by the test's thread between rounds.
struct Client {
  int id = 0;
  int next_seq = 0;
  // The Create sent and not acknowledged when jobsetd died; retried first in
  // the next round.
  std::optional<JobSet> in_flight;
  // What the Creates acknowledged in the current round returned.
  std::vector<JobSet> acked;
  // Retries of an in-flight Create that created it, or found it stored.
  int retries_created = 0;
  int retries_found = 0;
};

// Sends Creates to `address` until jobsetd stops answering: first the
// client's in-flight Create, then, with `new_creates`, fresh ones. Every
// JobSet created now must get a revision above `floor_revision`, the store
// revision read before this round began.
void RunClient(Client& client, const std::string& address,
               int64_t floor_revision, bool new_creates) {
  std::unique_ptr<JobSetService::Stub> stub = NewStub(address);
  const absl::Time end = absl::Now() + kMaxRound;
  for (int i = 0; i < kMaxCreatesPerRound && absl::Now() < end; ++i) {
    const bool retry = client.in_flight.has_value();
    if (!retry && !new_creates) return;
    if (!retry) client.in_flight = TestJobSet(client.id, client.next_seq++);
    const JobSet& sent = *client.in_flight;

    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
    CreateJobSetRequest request;
    *request.mutable_jobset() = sent;
    CreateJobSetResponse response;
    const grpc::Status status =
        stub->CreateJobSet(&context, request, &response);
    if (!status.ok()) {
      if (OutcomeUnknown(status.error_code())) return;  // Retried next round.
      ADD_FAILURE() << "Create " << Key(sent) << (retry ? " (retry)" : "")
                    << ": " << status.error_code() << " "
                    << status.error_message();
      client.in_flight.reset();
      return;
    }

    const JobSet& stored = response.jobset();
    EXPECT_EQ(Key(stored), Key(sent));
    EXPECT_FALSE(stored.metadata().uid().empty()) << Key(sent);
    const int64_t revision = Revision(stored.metadata().resource_version());
    if (retry) {
      ++(response.created() ? client.retries_created : client.retries_found);
    } else {
      // Nobody sent this name before: it cannot exist yet.
      EXPECT_TRUE(response.created()) << Key(sent) << " existed before";
    }
    if (response.created()) {
      EXPECT_GT(revision, floor_revision)
          << Key(sent) << " was created at a revision read before";
    } else {
      EXPECT_GT(revision, 0) << Key(sent);
    }
    client.acked.push_back(stored);
    client.in_flight.reset();
  }
}

// Lists every JobSet from `address` and checks it against `acked` (what
// Creates returned, by Key) and `sent` (the keys of every Create sent).
// Returns the list's revision, or -1 when the list failed.
int64_t VerifyStore(const std::string& address,
                    const std::map<std::string, JobSet>& acked,
                    const std::set<std::string>& sent,
                    int64_t max_acked_revision, int* unknown_stored) {
  std::unique_ptr<JobSetService::Stub> stub = NewStub(address);
  std::map<std::string, JobSet> listed;
  std::vector<std::string> problems;
  int64_t list_revision = -1;
  std::string continue_token;
  const int max_pages = static_cast<int>(sent.size()) / kListPageSize + 10;
  for (int page = 0;; ++page) {
    if (page == max_pages) {
      ADD_FAILURE() << "List did not end after " << page << " pages";
      return -1;
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kListDeadline));
    ListJobSetsRequest request;
    request.set_all_namespaces(true);
    request.set_limit(kListPageSize);
    request.set_continue_(continue_token);
    ListJobSetsResponse response;
    const grpc::Status status = stub->ListJobSets(&context, request, &response);
    if (!status.ok()) {
      ADD_FAILURE() << "List page " << page << ": " << status.error_code()
                    << " " << status.error_message();
      return -1;
    }
    const int64_t page_revision = Revision(response.resource_version());
    if (page == 0) list_revision = page_revision;
    if (page_revision < max_acked_revision) {
      problems.push_back(absl::StrCat(
          "List page ", page, " has resourceVersion ", page_revision,
          ", below the acknowledged revision ", max_acked_revision));
    }
    for (JobSet& item : *response.mutable_items()) {
      const std::string key = Key(item);
      if (!sent.contains(key)) {
        problems.push_back(absl::StrCat(key, " is stored; nobody created it"));
      }
      if (!listed.emplace(key, std::move(item)).second) {
        problems.push_back(absl::StrCat(key, " is listed twice"));
      }
    }
    if (response.continue_().empty()) break;
    continue_token = response.continue_();
  }

  for (std::string& problem : AcknowledgedMismatches(acked, listed))
    problems.push_back(std::move(problem));
  *unknown_stored =
      static_cast<int>(listed.size()) - static_cast<int>(acked.size());

  if (!problems.empty()) {
    const size_t count = problems.size();
    problems.resize(std::min(count, kMaxProblemsShown));
    ADD_FAILURE() << "the store disagrees with what clients were told ("
                  << listed.size() << " listed, " << acked.size()
                  << " acknowledged, " << count << " problems; the first "
                  << problems.size() << "):\n  "
                  << absl::StrJoin(problems, "\n  ");
  }
  return list_revision;
}

std::string TestTmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

TEST(CrashTest, AcknowledgedCreatesSurviveSigkill) {
  const int kills = absl::GetFlag(FLAGS_kills);
  const int num_clients = absl::GetFlag(FLAGS_clients);
  ASSERT_GE(kills, 0);
  ASSERT_GE(num_clients, 1);
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = absl::Uniform<uint64_t>(absl::BitGen(), 1, UINT64_MAX);
  std::printf("crash_test: --kills=%d --clients=%d --seed=%llu\n", kills,
              num_clients, static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);

  const std::string data_dir = absl::StrCat(TestTmpDir(), "/jobsetd-data");
  JobsetdProcess::Options options;
  options.binary = absl::GetFlag(FLAGS_jobsetd);
  if (options.binary.empty()) options.binary = JobsetdProcess::DefaultBinary();
  options.args = {"--listen=127.0.0.1:0",
                  absl::StrCat("--data_dir=", data_dir)};
  options.stderr_path = absl::StrCat(TestTmpDir(), "/jobsetd.stderr");
  options.startup_timeout = kMaxRestart + absl::Seconds(5);

  std::vector<Client> clients(num_clients);
  for (int i = 0; i < num_clients; ++i) clients[i].id = i;
  std::map<std::string, JobSet> acked;  // By Key().
  std::set<std::string> sent;           // Keys of every Create sent.
  int64_t max_acked_revision = 0;
  int64_t last_list_revision = 0;
  std::vector<absl::Duration> restarts;
  int unknown_stored = 0;
  int kills_done = 0;

  // Round `kills` is the last: it only retries what was in flight, then
  // stops jobsetd with SIGTERM.
  for (int round = 0; round <= kills && !::testing::Test::HasFailure();
       ++round) {
    const bool last = round == kills;
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<JobsetdProcess>> jobsetd =
        JobsetdProcess::Start(options);
    ASSERT_TRUE(jobsetd.ok()) << "round " << round << ": " << jobsetd.status();
    const absl::Duration restart = absl::Now() - start;
    restarts.push_back(restart);
    absl::StatusOr<ClusterCredentials> read = ReadClusterCredentials(data_dir);
    ASSERT_TRUE(read.ok()) << "round " << round << ": " << read.status();
    if (credentials == nullptr) {
      credentials = new ClusterCredentials(*read);
    } else {
      EXPECT_EQ(read->admin_token, credentials->admin_token)
          << "round " << round << ": admin.conf's token changed";
      EXPECT_EQ(read->ca_pem, credentials->ca_pem) << "round " << round;
    }
    EXPECT_LT(restart, kMaxRestart) << "round " << round;
    EXPECT_GE((*jobsetd)->start_revision(), max_acked_revision)
        << "round " << round << ": jobsetd restarted at an older revision";

    const int64_t list_revision =
        VerifyStore((*jobsetd)->address(), acked, sent, max_acked_revision,
                    &unknown_stored);
    ASSERT_GE(list_revision, last_list_revision)
        << "round " << round << ": the store's revision went backwards";
    last_list_revision = list_revision;

    std::vector<std::thread> threads;
    for (Client& client : clients) {
      if (client.in_flight.has_value()) sent.insert(Key(*client.in_flight));
      threads.emplace_back(RunClient, std::ref(client), (*jobsetd)->address(),
                           list_revision, /*new_creates=*/!last);
    }
    if (!last) {
      // The random moment of the crash: this sleep is the schedule, not a
      // wait for a condition.
      absl::SleepFor(absl::Milliseconds(absl::Uniform<int64_t>(
          random, kMinKillDelayMs, kMaxKillDelayMs + 1)));
      ASSERT_TRUE((*jobsetd)->Kill(SIGKILL).ok());
      absl::StatusOr<int> status = (*jobsetd)->Wait();
      ASSERT_TRUE(status.ok()) << status.status();
      EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
          << "wait status " << *status << "; stderr:\n"
          << (*jobsetd)->StderrTail();
      ++kills_done;
    }
    for (std::thread& thread : threads) thread.join();

    for (Client& client : clients) {
      for (JobSet& jobset : client.acked) {
        const std::string key = Key(jobset);
        sent.insert(key);
        max_acked_revision = std::max(
            max_acked_revision, Revision(jobset.metadata().resource_version()));
        auto [it, inserted] = acked.emplace(key, jobset);
        if (!inserted) {
          // A name is acknowledged once: its retry ends when it is.
          ADD_FAILURE() << key << " was acknowledged twice";
        }
      }
      client.acked.clear();
      if (client.in_flight.has_value()) sent.insert(Key(*client.in_flight));
    }

    if (last) {
      // Every lost Create has been retried and acknowledged by now.
      for (const Client& client : clients) {
        EXPECT_FALSE(client.in_flight.has_value())
            << "client " << client.id << " still has " << Key(*client.in_flight)
            << " in flight";
      }
      VerifyStore((*jobsetd)->address(), acked, sent, max_acked_revision,
                  &unknown_stored);
      ASSERT_TRUE((*jobsetd)->Kill(SIGTERM).ok());
      absl::StatusOr<int> status = (*jobsetd)->Wait();
      ASSERT_TRUE(status.ok()) << status.status();
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << "wait status " << *status << "; stderr:\n"
          << (*jobsetd)->StderrTail();
    }
  }

  int retries_created = 0;
  int retries_found = 0;
  for (const Client& client : clients) {
    retries_created += client.retries_created;
    retries_found += client.retries_found;
  }
  std::sort(restarts.begin(), restarts.end());
  std::printf(
      "crash_test: %d kills, %zu Creates acknowledged and checked (last "
      "revision %lld), %d lost Creates retried (%d created by the retry, %d "
      "already stored), %d stored with no acknowledgement; restart to "
      "serving: min %s, median %s, max %s\n",
      kills_done, acked.size(), static_cast<long long>(max_acked_revision),
      retries_created + retries_found, retries_created, retries_found,
      unknown_stored, absl::FormatDuration(restarts.front()).c_str(),
      absl::FormatDuration(restarts[restarts.size() / 2]).c_str(),
      absl::FormatDuration(restarts.back()).c_str());
  EXPECT_EQ(kills_done, kills);
  // Without acknowledged Creates the test would prove nothing.
  EXPECT_GT(acked.size(), 0u);
}

}  // namespace
}  // namespace jobset

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);
  return RUN_ALL_TESTS();
}
