// Crashes at named failpoints (common/failpoint.h, docs/failpoints.md), end to
// end. For each point, jobsetd runs armed to abort there after a few hits
// (JOBSET_FAILPOINTS='POINT=N*off->abort', N drawn per crash) while clients
// create and update JobSets and two agents run pods that succeed, fail and
// restart their JobSets (and, for store.snapshot.add, a client saves
// snapshots). jobsetd must die of the failpoint (SIGKILL, its line in the
// log); it is then restarted unarmed on the same data directory and port,
// and the checker asserts that
//   - the store opens and jobsetd serves at a revision no lower than any
//     acknowledged one;
//   - every acknowledged Create is stored with the acknowledged spec and uid;
//   - nothing is stored that no client sent, and nothing is listed twice;
//   - a Create whose outcome the crash hid, retried with the same name and
//     spec, returns the JobSet (created or found, same spec), never
//     ALREADY_EXISTS;
//   - each client's register (a label its Updates set to 1, 2, 3, ...) holds
//     a value between the last acknowledged and the last sent;
//   - no JobSet's status.restarts is below what a client saw before;
//   - no JobSet seen terminal (Completed, Failed) is active again.
// After the last crash, a last jobsetd waits for every workload JobSet to end
// and the checker asserts that each ended as it would have without crashes
// (succeeding ones Completed, failing ones Failed after exactly two
// restarts), and that each pod of each attempt started exactly once.
//
// Every point of kPoints crashes twice by default; the long form:
//   bazel test //tests:failpoint_e2e_test --test_timeout=1800
//       --test_arg=--crashes_per_point=20
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "common/failpoint.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/acknowledged.h"
#include "tests/cluster_credentials.h"
#include "tests/e2e_support.h"
#include "tests/failpoint_load.h"
#include "tests/jobsetd_process.h"

ABSL_FLAG(int, crashes_per_point, 2,
          "How many times jobsetd crashes at each point");
ABSL_FLAG(std::string, points, "",
          "Comma-separated failpoints to crash at; empty: every one");
ABSL_FLAG(uint64_t, seed, 0,
          "Seed of the hits each crash lets pass; 0 picks one (printed)");

namespace jobset {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::JobSetService;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::AcknowledgedMismatches;
using ::jobset::testing::Client;
using ::jobset::testing::ClusterCredentials;
using ::jobset::testing::ExpectedLaunches;
using ::jobset::testing::FailpointLoad;
using ::jobset::testing::Generation;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::Key;
using ::jobset::testing::kRegisterNamespace;
using ::jobset::testing::kWorkNamespace;
using ::jobset::testing::ListJobSets;
using ::jobset::testing::Revision;
using ::jobset::testing::Runfile;
using ::jobset::testing::Seen;
using ::jobset::testing::WorkloadJobSets;

constexpr absl::Duration kRpcDeadline = absl::Seconds(2);
// An armed jobsetd must reach its point under the load within this.
constexpr absl::Duration kMaxRound = absl::Seconds(30);
constexpr absl::Duration kPoll = absl::Milliseconds(100);
// How long the last jobsetd may take to see every workload JobSet end.
constexpr absl::Duration kMaxDrain = absl::Seconds(60);
constexpr int kClients = 2;  // Bulk ones; one more sends the workload.
constexpr size_t kMaxProblemsShown = 20;

// The hits a crash lets pass are drawn from [1, MaxSkip(point)]: the crash
// lands under load, not at the first touch, and soon.
int MaxSkip(absl::string_view point) {
  if (point == "store.snapshot.add") return 50;      // a hit per key
  if (point == "store.history.trim") return 20;      // an event past 32
  if (absl::StartsWith(point, "server.")) return 8;  // per Create or Update
  return 2;  // the controller's passes and the agents' exits are fewer
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// The failpoint's last words (common/failpoint.cc).
std::string AbortLine(absl::string_view point) {
  return absl::StrCat("failpoint ", point, ": abort at hit ");
}

void Report(const std::string& when, std::vector<std::string> problems,
            const std::string& what) {
  if (problems.empty()) return;
  const size_t count = problems.size();
  problems.resize(std::min(count, kMaxProblemsShown));
  ADD_FAILURE() << when << ": " << what << " (" << count
                << " problems; the first " << problems.size() << "):\n  "
                << absl::StrJoin(problems, "\n  ");
}

class FailpointE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        std::getenv("TEST_TMPDIR"), "/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override {
    agents_.clear();                  // SIGKILL: the pods' shims live on...
    testing::RemovePods(work_dirs_);  // ... so their pods are removed.
  }

  // Starts jobsetd with `failpoints` armed (none if empty), on the port of
  // its first start, its stderr in `stderr_path`.
  absl::StatusOr<std::unique_ptr<JobsetdProcess>> StartJobsetd(
      const std::string& failpoints, const std::string& stderr_path) {
    JobsetdProcess::Options options{
        .binary = Runfile("scheduler/jobsetd"),
        .args = {absl::StrCat("--listen=",
                              address_.empty() ? "127.0.0.1:0" : address_),
                 absl::StrCat("--data_dir=", DataDir()),
                 "--node_lost_timeout=5s", "--heartbeat_interval=200ms",
                 "--restart_grace=5s", "--shutdown_grace=1s",
                 absl::StrCat("--allowed_host_paths=", testing::PodIoDir())},
        .stderr_path = stderr_path};
    if (!failpoints.empty()) {
      options.env = {
          absl::StrCat(failpoint::kEnvironmentVariable, "=", failpoints)};
    }
    if (absl::StartsWith(failpoints, "store.history.trim=")) {
      // Every commit past the first 32 events trims the history (and a
      // List's continue goes stale as soon: only while that point is armed).
      options.args.push_back("--watch_history=32");
    }
    return JobsetdProcess::Start(options);
  }

  std::string DataDir() const { return absl::StrCat(dir_, "/jobsetd"); }
  // Where the workload's pods note their starts.
  static std::string Launches() {
    return absl::StrCat(testing::PodIoDir(), "/launches");
  }

  std::unique_ptr<JobSetService::Stub> NewStub() const {
    return load_->NewStub();
  }

  void StartAgent(const std::string& name, int n) {
    const std::string work_dir = absl::StrCat(dir_, "/", name);
    work_dirs_.push_back(work_dir);
    auto agent = JobsetdProcess::Start(
        {.binary = Runfile("agent/jobset-agent"),
         .args = {absl::StrCat("--scheduler=", address_),
                  absl::StrCat("--node_name=", name),
                  absl::StrCat("--address=127.0.0.", n),
                  absl::StrCat("--work_dir=", work_dir),
                  absl::StrCat("--join_token_file=", DataDir(), "/join-token"),
                  absl::StrCat("--shim=",
                               Runfile("agent/runtime/jobset-pod-shim")),
                  "--capacity=cpu=4,memory=4Gi"},
         .stderr_path = absl::StrCat(dir_, "/", name, ".stderr"),
         .ready_prefix = absl::StrCat("jobset-agent ", name, " serving")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents_[name] = *std::move(agent);
  }

  // The first start: the cluster's credentials, the agents, each client's
  // register.
  void StartCluster();
  // Crashes jobsetd at `point` under load and checks the store after.
  void CrashAt(const std::string& point, int crash, std::mt19937_64& random);
  // Starts jobsetd unarmed, retries what was in flight, checks everything
  // against what clients were told, and SIGKILLs it again. `when` names the
  // moment in failures.
  void Verify(const std::string& when);
  // Lists every JobSet; false (with a failure added) when the List fails.
  bool ListAll(std::map<std::string, JobSet>* listed,
               std::vector<std::string>* problems);
  void Note(const std::map<std::string, Seen>& seen);
  // Starts jobsetd unarmed once more, waits for every workload JobSet to end
  // and checks how: the -ok ones Completed without a restart, the -fail-
  // ones Failed after their two restarts (a crash neither lost nor doubled a
  // failure). Stops jobsetd with SIGTERM.
  void Drain();

  std::string dir_;
  std::string address_;
  ClusterCredentials credentials_;
  std::map<std::string, std::unique_ptr<JobsetdProcess>> agents_;
  std::vector<std::string> work_dirs_;
  std::unique_ptr<FailpointLoad> load_;
  std::vector<Client> clients_;
  int round_ = 0;
  // The checker's model: acknowledged Creates by Key, every Key sent, what
  // was seen of each JobSet, the highest revision acknowledged.
  std::map<std::string, JobSet> acked_;
  std::set<std::string> sent_;
  std::map<std::string, Seen> seen_;
  int64_t max_acked_revision_ = 0;
  int retries_created_ = 0;
  int retries_found_ = 0;
};

void FailpointE2eTest::StartCluster() {
  auto jobsetd = StartJobsetd("", absl::StrCat(dir_, "/jobsetd-first.stderr"));
  ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
  address_ = (*jobsetd)->address();
  absl::StatusOr<ClusterCredentials> read =
      testing::ReadClusterCredentials(DataDir());
  ASSERT_TRUE(read.ok()) << read.status();
  credentials_ = *read;
  load_ = std::make_unique<FailpointLoad>(address_, credentials_, kMaxRound);
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);

  std::unique_ptr<JobSetService::Stub> stub = NewStub();
  for (int i = 0; i <= kClients; ++i) {
    Client& client = clients_.emplace_back();
    client.id = i;
    client.bulk = i < kClients;  // The last one creates the workload.
    if (!client.bulk) continue;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
    api::CreateJobSetRequest request;
    *request.mutable_jobset() = JobSetBuilder(absl::StrCat("reg-", i))
                                    .Namespace(kRegisterNamespace)
                                    .Replicated("workers", 1)
                                    .Suspend()
                                    .Build();
    api::CreateJobSetResponse response;
    const grpc::Status status =
        stub->CreateJobSet(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    client.reg = response.jobset();
    sent_.insert(Key(client.reg));
    acked_[Key(client.reg)] = client.reg;
  }
  ASSERT_TRUE((*jobsetd)->Kill(SIGKILL).ok());
  (*jobsetd)->Wait().IgnoreError();
}

void FailpointE2eTest::Note(const std::map<std::string, Seen>& seen) {
  for (const auto& [key, s] : seen) {
    Seen& mine = seen_[key];
    mine.restarts = std::max(mine.restarts, s.restarts);
    if (!s.terminal.empty()) mine.terminal = s.terminal;
  }
}

void FailpointE2eTest::CrashAt(const std::string& point, int crash,
                               std::mt19937_64& random) {
  ++round_;
  const int skip =
      absl::Uniform<int>(absl::IntervalClosed, random, 1, MaxSkip(point));
  const std::string spec = absl::StrCat(point, "=", skip, "*off->abort");
  const std::string when =
      absl::StrCat(point, " crash ", crash + 1, " (", spec, ")");
  const std::string stderr_path =
      absl::StrCat(dir_, "/jobsetd-", point, "-", crash, ".stderr");
  const absl::Time start = absl::Now();
  auto jobsetd = StartJobsetd(spec, stderr_path);
  if (!jobsetd.ok()) {
    // The point was hit while jobsetd started (recovery's own commits):
    // a crash at the point all the same.
    ASSERT_TRUE(absl::StrContains(jobsetd.status().message(), "killed by"))
        << when << ": " << jobsetd.status();
  } else {
    for (Client& client : clients_) {
      client.todo.clear();
      if (!client.bulk) {
        client.todo = WorkloadJobSets(round_, testing::PodIoDir(), Launches());
      }
    }
    std::atomic<bool> stop = false;
    std::map<std::string, Seen> seen;
    int snapshots = 0;
    std::vector<std::thread> threads;
    for (Client& client : clients_) {
      Client* const c = &client;
      threads.emplace_back([this, c, &stop] { load_->RunClient(*c, stop); });
    }
    threads.emplace_back([&] { load_->Monitor(stop, &seen); });
    if (point == "store.snapshot.add") {
      threads.emplace_back([&] { snapshots = load_->SaveSnapshots(stop); });
    }
    absl::StatusOr<int> status = (*jobsetd)->Wait(kMaxRound);
    stop = true;
    if (!status.ok()) {
      (*jobsetd)->Kill(SIGKILL).IgnoreError();
      (*jobsetd)->Wait().IgnoreError();
    }
    for (std::thread& thread : threads) thread.join();
    Note(seen);
    ASSERT_TRUE(status.ok()) << when << ": the load never reached the point "
                             << "in " << absl::FormatDuration(kMaxRound) << " ("
                             << snapshots << " snapshots)";
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL)
        << when << ": wait status " << *status << "; stderr:\n"
        << (*jobsetd)->StderrTail();
  }
  const std::string log = ReadFile(stderr_path);
  ASSERT_TRUE(absl::StrContains(log, AbortLine(point)))
      << when << ": jobsetd died, not at its failpoint; stderr:\n"
      << log.substr(log.size() - std::min<size_t>(log.size(), 4096));
  for (Client& client : clients_) {
    sent_.insert(client.sent.begin(), client.sent.end());
    client.sent.clear();
    for (JobSet& jobset : client.acked) {
      max_acked_revision_ = std::max(
          max_acked_revision_, Revision(jobset.metadata().resource_version()));
      EXPECT_TRUE(acked_.emplace(Key(jobset), std::move(jobset)).second)
          << when << ": acknowledged twice";
    }
    client.acked.clear();
  }
  absl::string_view hit(log);
  hit.remove_prefix(log.rfind(AbortLine(point)) + AbortLine(point).size());
  hit = hit.substr(0, hit.find(' '));
  std::printf("failpoint_e2e_test: %s: crashed at hit %s, %s after its start\n",
              when.c_str(), std::string(hit).c_str(),
              absl::FormatDuration(absl::Now() - start).c_str());
  Verify(when);
}

bool FailpointE2eTest::ListAll(std::map<std::string, JobSet>* listed,
                               std::vector<std::string>* problems) {
  std::vector<JobSet> items;
  const grpc::Status status = ListJobSets(*NewStub(), "", &items);
  if (!status.ok()) {
    ADD_FAILURE() << "List: " << status.error_code() << " "
                  << status.error_message();
    return false;
  }
  for (JobSet& item : items) {
    const std::string key = Key(item);
    if (!listed->emplace(key, std::move(item)).second)
      problems->push_back(absl::StrCat(key, " is listed twice"));
  }
  return true;
}

void FailpointE2eTest::Verify(const std::string& when) {
  const absl::Time start = absl::Now();
  auto jobsetd = StartJobsetd(
      "", absl::StrCat(dir_, "/jobsetd-verify-", round_, ".stderr"));
  ASSERT_TRUE(jobsetd.ok())
      << when << ": the restart failed: " << jobsetd.status();
  const absl::Duration restart = absl::Now() - start;
  EXPECT_GE((*jobsetd)->start_revision(), max_acked_revision_)
      << when << ": jobsetd restarted at an older revision";
  std::vector<std::string> problems;

  // Creates whose outcome the crash hid: the same name and spec again.
  std::unique_ptr<JobSetService::Stub> stub = NewStub();
  for (Client& client : clients_) {
    if (!client.in_flight.has_value()) continue;
    const JobSet& sent = *client.in_flight;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
    api::CreateJobSetRequest request;
    *request.mutable_jobset() = sent;
    api::CreateJobSetResponse response;
    const grpc::Status status =
        stub->CreateJobSet(&context, request, &response);
    ASSERT_TRUE(status.ok())
        << when << ": retrying " << Key(sent) << ": " << status.error_code()
        << " " << status.error_message();
    ++(response.created() ? retries_created_ : retries_found_);
    max_acked_revision_ =
        std::max(max_acked_revision_,
                 Revision(response.jobset().metadata().resource_version()));
    acked_[Key(sent)] = response.jobset();
    client.in_flight.reset();
  }

  std::map<std::string, JobSet> listed;
  ASSERT_TRUE(ListAll(&listed, &problems)) << when;
  for (const auto& [key, item] : listed) {
    if (!sent_.contains(key))
      problems.push_back(absl::StrCat(key, " is stored; nobody created it"));
  }
  for (std::string& problem : AcknowledgedMismatches(acked_, listed))
    problems.push_back(std::move(problem));
  for (Client& client : clients_) {
    if (!client.bulk) continue;
    auto it = listed.find(Key(client.reg));
    if (it == listed.end()) continue;  // Reported above.
    const int64_t generation = Generation(it->second);
    if (generation < client.reg_acked || generation > client.reg_sent) {
      problems.push_back(absl::StrCat(
          Key(client.reg), " holds generation ", generation, "; acknowledged ",
          client.reg_acked, ", sent up to ", client.reg_sent));
    }
    client.reg_acked = generation;  // Durable: read after a restart.
  }
  for (const auto& [key, s] : seen_) {
    auto it = listed.find(key);
    if (it == listed.end()) continue;  // Reported above.
    const api::JobSetStatus& status = it->second.status();
    if (status.restarts() < s.restarts) {
      problems.push_back(absl::StrCat(key, " has status.restarts ",
                                      status.restarts(), "; ", s.restarts,
                                      " was seen before"));
    }
    if (!s.terminal.empty() && status.terminal_state() != s.terminal) {
      problems.push_back(absl::StrCat(key, " was seen ", s.terminal,
                                      " and is now \"", status.terminal_state(),
                                      "\""));
    }
  }
  std::map<std::string, Seen> now;
  for (const auto& [key, item] : listed) {
    if (item.metadata().namespace_() != kWorkNamespace) continue;
    now[key] = {item.status().restarts(), item.status().terminal_state()};
  }
  Note(now);
  Report(when, std::move(problems),
         absl::StrCat("the store disagrees with what clients were told (",
                      listed.size(), " listed, ", acked_.size(),
                      " acknowledged)"));
  std::printf(
      "failpoint_e2e_test: %s: restarted in %s; %zu stored, %zu acknowledged "
      "and checked\n",
      when.c_str(), absl::FormatDuration(restart).c_str(), listed.size(),
      acked_.size());
  ASSERT_TRUE((*jobsetd)->Kill(SIGKILL).ok());
  (*jobsetd)->Wait().IgnoreError();
}

void FailpointE2eTest::Drain() {
  auto jobsetd = StartJobsetd("", absl::StrCat(dir_, "/jobsetd-drain.stderr"));
  ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
  std::unique_ptr<JobSetService::Stub> stub = NewStub();
  std::vector<JobSet> last;
  const absl::Time start = absl::Now();
  const bool ended = testing::Eventually(
      [&] {
        if (!ListJobSets(*stub, kWorkNamespace, &last).ok()) return false;
        return std::all_of(last.begin(), last.end(), [](const JobSet& js) {
          return !js.status().terminal_state().empty();
        });
      },
      kMaxDrain, kPoll);
  EXPECT_TRUE(ended) << "the workload did not end in "
                     << absl::FormatDuration(kMaxDrain);
  std::vector<std::string> problems;
  std::map<std::string, Seen> now;
  for (const JobSet& js : last) {
    const bool fails = absl::StrContains(js.metadata().name(), "-fail-");
    const Seen want{fails ? 2 : 0, fails ? "Failed" : "Completed"};
    now[Key(js)] = {js.status().restarts(), js.status().terminal_state()};
    if (now[Key(js)].terminal != want.terminal ||
        now[Key(js)].restarts != want.restarts) {
      problems.push_back(
          absl::StrCat(Key(js), " ended \"", js.status().terminal_state(),
                       "\" after ", js.status().restarts(), " restarts; want ",
                       want.terminal, " after ", want.restarts));
    }
  }
  Note(now);
  // Each pod of each attempt started once: no assignment was lost or run
  // twice, no finished JobSet ran again.
  std::map<std::string, int> launches;
  for (absl::string_view line : absl::StrSplit(ReadFile(Launches()), '\n')) {
    if (!line.empty()) ++launches[std::string(line)];
  }
  for (const std::string& key : sent_) {
    if (!absl::StartsWith(key, absl::StrCat(kWorkNamespace, "/"))) continue;
    for (const std::string& line :
         ExpectedLaunches(key.substr(key.find('/') + 1))) {
      if (launches[line] != 1) {
        problems.push_back(
            absl::StrCat("\"", line, "\" started ", launches[line], " times"));
      }
      launches.erase(line);
    }
  }
  for (const auto& [line, count] : launches) {
    problems.push_back(
        absl::StrCat("\"", line, "\" started ", count, " times, unexpected"));
  }
  Report("after the last crash", std::move(problems),
         "the workload did not end as it would have without crashes");
  std::printf("failpoint_e2e_test: %zu workload JobSets ended in %s\n",
              last.size(), absl::FormatDuration(absl::Now() - start).c_str());
  ASSERT_TRUE((*jobsetd)->Kill(SIGTERM).ok());
  absl::StatusOr<int> status = (*jobsetd)->Wait();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "wait status " << *status << "; stderr:\n"
      << (*jobsetd)->StderrTail();
}

TEST_F(FailpointE2eTest, EveryPointCrashedUnderLoadKeepsTheInvariants) {
  if (!failpoint::kCompiledIn) GTEST_SKIP() << "failpoints are compiled out";
  const int crashes = absl::GetFlag(FLAGS_crashes_per_point);
  ASSERT_GE(crashes, 1);
  std::vector<std::string> points;
  if (const std::string only = absl::GetFlag(FLAGS_points); !only.empty()) {
    points = absl::StrSplit(only, ',');
  } else {
    points = failpoint::PointNames();
  }
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = absl::Uniform<uint64_t>(absl::BitGen(), 1, UINT64_MAX);
  std::printf("failpoint_e2e_test: --crashes_per_point=%d --seed=%llu\n",
              crashes, static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  const absl::Time start = absl::Now();

  ASSERT_NO_FATAL_FAILURE(StartCluster());
  for (const std::string& point : points) {
    for (int crash = 0; crash < crashes; ++crash) {
      ASSERT_NO_FATAL_FAILURE(CrashAt(point, crash, random));
      ASSERT_FALSE(HasFailure()) << "stopped after " << point;
    }
  }
  ASSERT_NO_FATAL_FAILURE(Drain());
  int terminal = 0;
  int32_t restarts = 0;
  for (const auto& [key, s] : seen_) {
    terminal += !s.terminal.empty();
    restarts += s.restarts;
  }
  std::printf(
      "failpoint_e2e_test: %zu points x %d crashes in %s; %zu Creates "
      "acknowledged and checked, %d lost Creates retried (%d created by the "
      "retry, %d already stored); workload: %zu JobSets, %d terminal, %d "
      "restarts\n",
      points.size(), crashes, absl::FormatDuration(absl::Now() - start).c_str(),
      acked_.size(), retries_created_ + retries_found_, retries_created_,
      retries_found_, seen_.size(), terminal, restarts);
  // Every workload JobSet sent was created, ran and ended; each -fail- one
  // after its two restarts.
  int workload = 0;
  int failing = 0;
  for (const std::string& key : sent_) {
    if (!absl::StartsWith(key, absl::StrCat(kWorkNamespace, "/"))) continue;
    ++workload;
    failing += absl::StrContains(key, "-fail-");
  }
  EXPECT_GT(failing, 0);
  EXPECT_EQ(static_cast<int>(seen_.size()), workload);
  EXPECT_EQ(terminal, workload);
  EXPECT_EQ(restarts, 2 * failing);
}

// A typo in the spec stops jobsetd at startup, naming every point.
TEST_F(FailpointE2eTest, AMalformedSpecStopsJobsetdAtStartup) {
  if (!failpoint::kCompiledIn) GTEST_SKIP() << "failpoints are compiled out";
  auto jobsetd = StartJobsetd("server.create.aftercommit=abort",
                              absl::StrCat(dir_, "/jobsetd.stderr"));
  ASSERT_FALSE(jobsetd.ok());
  EXPECT_TRUE(absl::StrContains(jobsetd.status().message(), "exit 2"))
      << jobsetd.status();
  EXPECT_TRUE(
      absl::StrContains(jobsetd.status().message(),
                        "unknown failpoint \"server.create.aftercommit\""))
      << jobsetd.status();
  for (const std::string& point : failpoint::PointNames()) {
    EXPECT_TRUE(absl::StrContains(jobsetd.status().message(), point))
        << jobsetd.status();
  }
}

}  // namespace
}  // namespace jobset

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);
  return RUN_ALL_TESTS();
}
