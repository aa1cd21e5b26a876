// Every stored record decoder, over a MemoryStore filled with arbitrary
// values at the keys jobsetd reads. The input is a sequence of steps
// (steps.h); each stores its payload after the first byte at a key of kind
// op % 5 (0 a JobSet, 1 a Job, 2 a Job's pods, 3 a node, 4 an event), the
// first byte picking the JobSet (bit 0) and the Job (bit 1). Then:
//   - DecodeJobPods on every pods record; each record, with its Job when
//     that decodes, goes through CompactJob/ExpandJob, CheckPodEnv,
//     ExpandPod (stored and assigned form), PodHostname and HostTable; the
//     records decoded re-encode (EncodeJobPods) to records that decode again
//     to the same pods (the controller must be able to store what it loads);
//   - ReadStoredPods, as the API lists pods;
//   - a ControllerCore loads the store and runs a pass (a failed pass is
//     what makes jobsetd exit, so it is a finding; a failed Load is not: it
//     reports DATA_LOSS);
//   - an AgentHub loads the stored nodes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "fuzz/steps.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/controller_core.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/memory_store.h"
#include "store/scan.h"

namespace jobset::fuzz {
namespace {

constexpr char kNamespace[] = "default";

void Trap(const absl::Status& status, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  __builtin_trap();
}

std::string KeyFor(uint8_t op, uint8_t pick) {
  const std::string jobset = (pick & 1) ? "b" : "a";
  const std::string job = absl::StrCat(jobset, "-workers-", (pick >> 1) & 1);
  switch (op % 5) {
    case 0:
      return store::keys::JobSetKey(kNamespace, jobset);
    case 1:
      return store::keys::JobKey(kNamespace, jobset, job);
    case 2:
      return store::keys::JobPodsKey(kNamespace, jobset, job);
    case 3:
      return store::keys::NodeKey((pick & 1) ? "node-b" : "node-a");
    default:
      return store::keys::EventKey(kNamespace, jobset, pick);
  }
}

// The pods records under `kv` through every reader of records.h.
void ReadPods(store::MemoryStore& store, const store::KeyValue& kv) {
  absl::StatusOr<std::vector<api::PodRecord>> records =
      scheduler::DecodeJobPods(kv);
  if (!records.ok()) return;
  const std::string job_key = absl::StrCat(
      store::keys::kJobs, kv.key.substr(store::keys::kPods.size()));
  const std::string job_name = kv.key.substr(kv.key.rfind('/') + 1);
  std::optional<api::Job> job;
  if (absl::StatusOr<std::optional<store::KeyValue>> got = store.Get(job_key);
      got.ok() && got->has_value()) {
    absl::StatusOr<api::Job> decoded = store::DecodeValue<api::Job>(**got);
    if (decoded.ok()) job = *std::move(decoded);
  }
  std::map<std::string, api::PodRecord> by_name;
  for (const api::PodRecord& record : *records) by_name[record.name()] = record;
  if (job.has_value()) {
    api::Job expanded = *job;
    scheduler::ExpandJob(&expanded);
    scheduler::CompactJob(&expanded);
    scheduler::CompactJob(&*job);
    (void)scheduler::CheckPodEnv(*job);
    std::vector<std::pair<const api::Job*, const api::PodRecord*>> placed;
    for (const api::PodRecord& record : *records) {
      (void)scheduler::ExpandPod(*job, record);
      (void)scheduler::ExpandPod(*job, scheduler::AssignedPodOf(record));
      (void)scheduler::PodHostname(*job, record.completion_index());
      placed.emplace_back(&*job, &record);
    }
    (void)scheduler::HostTable(placed);
  }
  // What the controller loaded it can store again.
  store::KeyValue again = kv;
  again.value = scheduler::EncodeJobPods(job_name, by_name);
  absl::StatusOr<std::vector<api::PodRecord>> reread =
      scheduler::DecodeJobPods(again);
  if (!reread.ok()) Trap(reread.status(), "re-encoded pods do not decode");
  std::map<std::string, api::PodRecord> reread_by_name;
  for (const api::PodRecord& record : *reread)
    reread_by_name[record.name()] = record;
  bool same = reread_by_name.size() == by_name.size();
  for (auto a = by_name.begin(), b = reread_by_name.begin();
       same && a != by_name.end(); ++a, ++b) {
    same = a->first == b->first &&
           google::protobuf::util::MessageDifferencer::Equals(a->second,
                                                              b->second);
  }
  if (!same) Trap(absl::DataLossError("pods changed"), "re-encode");
}

}  // namespace
}  // namespace jobset::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobset;  // NOLINT: a fuzz entry point
  store::MemoryStore store;
  fuzz::StepReader steps(data, size);
  fuzz::Step step;
  while (steps.Next(&step)) {
    const absl::string_view value =
        step.payload.empty() ? step.payload : step.payload.substr(1);
    if (!store
             .Commit(store::Batch().Put(
                 fuzz::KeyFor(step.op, fuzz::FirstByte(step.payload)), value))
             .ok())
      return 0;
  }
  (void)store::ScanAll(store, store::keys::kPods,
                       [&](const store::KeyValue& kv) -> absl::Status {
                         fuzz::ReadPods(store, kv);
                         return absl::OkStatus();
                       });
  (void)scheduler::ReadStoredPods(&store, "pods/default/");

  FakeClock clock;
  scheduler::NoAgentFleet fleet;
  scheduler::ControllerCore core(&store, &fleet, &clock,
                                 {.features = {.restart_job = true}});
  if (core.Load().ok()) {
    core.Announce();
    if (absl::Status s = core.Pass(); !s.ok()) fuzz::Trap(s, "Pass");
  }
  (void)scheduler::AgentHub::Create(
      &store,
      scheduler::AgentHub::Options{.clock = &clock, .liveness_thread = false});
  return 0;
}
