#include "tests/failpoint_load.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/jobset_builder.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/auth.grpc.pb.h"
#include "tests/e2e_support.h"

namespace jobset::testing {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;

constexpr absl::Duration kRpcDeadline = absl::Seconds(2);
constexpr absl::Duration kSnapshotDeadline = absl::Seconds(10);
// Each bulk client's Creates per round (the rest of a round it updates its
// register), and the pause between its calls: the load reaches every point
// soon and the store stays small across 20 crashes per point.
constexpr int kCreatesPerRound = 12;
constexpr absl::Duration kPace = absl::Milliseconds(20);
constexpr int kMaxCallsPerRound = 5'000;
constexpr absl::Duration kMonitorInterval = absl::Milliseconds(100);
constexpr absl::Duration kListDeadline = absl::Seconds(10);
constexpr int kListPageSize = 500;
constexpr int kMaxListPages = 1'000;

// One Job of `pods` pods of 100m CPU each that note their start in
// `launches` and then run `script`.
JobSetBuilder ShellJobSet(const std::string& name, int pods,
                          const std::string& launches,
                          const std::string& script) {
  JobSetBuilder b(name);
  b.Namespace(kWorkNamespace)
      .Replicated("workers", pods)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .Command("workers",
               {"/bin/sh", "-c",
                absl::StrCat("echo \"$JOBSET_NAME $JOBSET_RESTART_ATTEMPT ",
                             "$(hostname)\" >> ", launches, "; ", script)})
      .Request("workers", "cpu", "100m");
  return b;
}

}  // namespace

int64_t Generation(const JobSet& jobset) {
  auto it = jobset.metadata().labels().find(kGenerationLabel);
  int64_t generation = 0;
  if (it == jobset.metadata().labels().end() ||
      !absl::SimpleAtoi(it->second, &generation)) {
    return 0;
  }
  return generation;
}

JobSet BulkJobSet(int client, int seq) {
  return JobSetBuilder(absl::StrCat("c", client, "-", seq))
      .Namespace(absl::StrCat("fp-", client))
      .Label("client", absl::StrCat(client))
      .Replicated("workers", 1 + seq % 4)
      .TtlSecondsAfterFinished(seq)
      .Suspend()
      .Build();
}

std::vector<JobSet> WorkloadJobSets(int round, const std::string& pod_dir,
                                    const std::string& launches) {
  std::vector<JobSet> out;
  out.push_back(
      ShellJobSet(absl::StrCat("w", round, "-ok"), 2, launches, "sleep 0.3")
          .Build());
  for (int i = 0; i < 2; ++i) {
    out.push_back(ShellJobSet(absl::StrCat("w", round, "-fail-", i), 1,
                              launches, "sleep 0.2; exit 1")
                      .FailurePolicy(2)
                      .Build());
  }
  for (JobSet& js : out) MountHostDir(&js, pod_dir);
  return out;
}

std::vector<std::string> ExpectedLaunches(absl::string_view name) {
  if (absl::StrContains(name, "-fail-")) {
    // One pod, in attempts 0, 1 and 2.
    return {absl::StrCat(name, " 0 ", name, "-workers-0-0"),
            absl::StrCat(name, " 1 ", name, "-workers-0-0"),
            absl::StrCat(name, " 2 ", name, "-workers-0-0")};
  }
  return {absl::StrCat(name, " 0 ", name, "-workers-0-0"),
          absl::StrCat(name, " 0 ", name, "-workers-1-0")};
}

bool OutcomeUnknown(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED;
}

grpc::Status ListJobSets(api::JobSetService::Stub& stub, absl::string_view ns,
                         std::vector<JobSet>* items) {
  items->clear();
  std::string continue_token;
  for (int page = 0; page < kMaxListPages; ++page) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kListDeadline));
    api::ListJobSetsRequest request;
    if (ns.empty()) {
      request.set_all_namespaces(true);
    } else {
      request.set_namespace_(std::string(ns));
    }
    request.set_limit(kListPageSize);
    request.set_continue_(continue_token);
    api::ListJobSetsResponse response;
    const grpc::Status status = stub.ListJobSets(&context, request, &response);
    if (!status.ok()) return status;
    for (JobSet& item : *response.mutable_items())
      items->push_back(std::move(item));
    if (response.continue_().empty()) return grpc::Status::OK;
    continue_token = response.continue_();
  }
  return grpc::Status(
      grpc::StatusCode::INTERNAL,
      absl::StrCat("List did not end after ", kMaxListPages, " pages"));
}

std::unique_ptr<api::JobSetService::Stub> FailpointLoad::NewStub() const {
  // A channel (one TCP connection) of its own per caller.
  return api::JobSetService::NewStub(
      SecureChannel(address_, credentials_.ca_pem, credentials_.admin_token));
}

void FailpointLoad::RunClient(Client& client,
                              const std::atomic<bool>& stop) const {
  std::unique_ptr<api::JobSetService::Stub> stub = NewStub();
  const absl::Time end = absl::Now() + max_round_;
  int creates = 0;
  size_t next_todo = 0;
  for (int call = 0; call < kMaxCallsPerRound && absl::Now() < end &&
                     !stop.load(std::memory_order_relaxed);
       ++call) {
    const bool create = next_todo < client.todo.size() ||
                        (client.bulk && creates < kCreatesPerRound);
    if (!create && !client.bulk) return;  // The workload is created.
    if (create) {
      client.in_flight = next_todo < client.todo.size()
                             ? client.todo[next_todo++]
                             : BulkJobSet(client.id, client.next_seq++);
      client.sent.push_back(Key(*client.in_flight));
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
      api::CreateJobSetRequest request;
      *request.mutable_jobset() = *client.in_flight;
      api::CreateJobSetResponse response;
      const grpc::Status status =
          stub->CreateJobSet(&context, request, &response);
      if (!status.ok()) {
        if (OutcomeUnknown(status.error_code())) return;  // Retried later.
        ADD_FAILURE() << "Create " << Key(*client.in_flight) << ": "
                      << status.error_code() << " " << status.error_message();
        client.in_flight.reset();
        return;
      }
      // Nobody sent this name before: it cannot exist yet.
      EXPECT_TRUE(response.created()) << Key(*client.in_flight);
      client.acked.push_back(response.jobset());
      client.in_flight.reset();
      ++creates;
    }
    if (client.bulk) {
      JobSet update = client.reg;
      update.mutable_metadata()->clear_resource_version();
      update.clear_status();
      const int64_t generation = ++client.reg_sent;
      (*update.mutable_metadata()->mutable_labels())[kGenerationLabel] =
          absl::StrCat(generation);
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
      api::UpdateJobSetRequest request;
      *request.mutable_jobset() = std::move(update);
      JobSet response;
      const grpc::Status status =
          stub->UpdateJobSet(&context, request, &response);
      if (!status.ok()) {
        if (OutcomeUnknown(status.error_code())) return;
        ADD_FAILURE() << "Update " << Key(client.reg) << ": "
                      << status.error_code() << " " << status.error_message();
        return;
      }
      EXPECT_EQ(Generation(response), generation) << Key(client.reg);
      client.reg_acked = generation;
    }
    absl::SleepFor(kPace);
  }
}

void FailpointLoad::Monitor(const std::atomic<bool>& stop,
                            std::map<std::string, Seen>* seen) const {
  std::unique_ptr<api::JobSetService::Stub> stub = NewStub();
  const absl::Time end = absl::Now() + max_round_;
  std::vector<JobSet> items;
  while (absl::Now() < end && !stop.load(std::memory_order_relaxed)) {
    const grpc::Status status = ListJobSets(*stub, kWorkNamespace, &items);
    if (OutcomeUnknown(status.error_code())) return;  // jobsetd is gone.
    // (A List whose continue went stale behind a short history: next time.)
    for (const JobSet& js : items) {
      Seen& s = (*seen)[Key(js)];
      s.restarts = std::max(s.restarts, js.status().restarts());
      if (!js.status().terminal_state().empty())
        s.terminal = js.status().terminal_state();
    }
    absl::SleepFor(kMonitorInterval);
  }
}

int FailpointLoad::SaveSnapshots(const std::atomic<bool>& stop) const {
  auto stub = api::AccessService::NewStub(
      SecureChannel(address_, credentials_.ca_pem, credentials_.admin_token));
  const absl::Time end = absl::Now() + max_round_;
  int saved = 0;
  while (absl::Now() < end && !stop.load(std::memory_order_relaxed)) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kSnapshotDeadline));
    auto reader = stub->SaveSnapshot(&context, api::SaveSnapshotRequest());
    api::SnapshotChunk chunk;
    bool last = false;
    while (reader->Read(&chunk)) last = chunk.last();
    if (!reader->Finish().ok() || !last) return saved;
    ++saved;
  }
  return saved;
}

}  // namespace jobset::testing
