#ifndef JOBSET_CLI_DESCRIBE_H_
#define JOBSET_CLI_DESCRIBE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.pb.h"
#include "proto/kueue.pb.h"
#include "proto/kueue_service.pb.h"

namespace jobset::cli {

// Renders `jobset describe` for `jobset`: metadata, policies, conditions,
// per-ReplicatedJob counts, its `pods` with their nodes, why pods are pending
// (their PodScheduled=False reasons, each distinct one once with a count),
// `kueue_section` as it is (DescribeKueueSection's; "" for none), and the last
// `max_events` of `events` (oldest first). Pure.
std::string DescribeJobSet(const api::JobSet& jobset,
                           const std::vector<api::Pod>& pods,
                           const std::vector<api::Event>& events,
                           absl::string_view kueue_section, absl::Time now,
                           int max_events = 20);

// A Workload's entry among its LocalQueue's pending Workloads
// (KueueService.ListPendingWorkloads), as far as describe could read it.
struct PendingPosition {
  // False: the Workload does not wait for quota, so it was not looked for.
  bool looked_up = false;
  // The entry; none when it is not listed or could not be read (`error`).
  std::optional<api::PendingWorkload> entry = std::nullopt;
  absl::Status error = absl::OkStatus();
};

// What describe read of how Kueue holds a JobSet (the calls are
// cli/cmd/kueue_lookup.cc's), each part with why it could not be read.
struct KueueLookup {
  // The JobSet's kueue.x-k8s.io/queue-name label ("" without one).
  std::string queue_name = "";
  // The Workload labelled kueue.x-k8s.io/job-uid=<the JobSet's uid>; none
  // when there is none (`workload_error` OK) or it could not be listed.
  std::optional<api::Workload> workload = std::nullopt;
  absl::Status workload_error = absl::OkStatus();
  PendingPosition position = {};
};

// Whether `workload` waits for quota (neither Finished nor holding a quota
// reservation): only then has it a place among the pending Workloads.
bool WaitsForQuota(const api::Workload& workload);

// Renders describe jobset's "Kueue:" section: the Workload, its LocalQueue
// (and ClusterQueue when known), its State (Finished, Evicted (reason),
// Admitted, QuotaReserved or Pending, from its conditions; a pending one
// with its 0-based positions in its ClusterQueue and LocalQueue), the
// Reason (the reason and message of the condition behind the State), and
// what could not be read. "" for a JobSet Kueue does not manage (no
// queue-name label and no Workload found). Pure.
std::string DescribeKueueSection(const KueueLookup& lookup);

// describe workload's lines for `position` ("Key:\tvalue", for
// DescribeResource's `extra_lines`): "Position In Cluster Queue" and
// "Position In Local Queue", or one line saying why they are unknown; none
// when it was not looked up. Pure.
std::vector<std::string> PendingPositionLines(const api::Workload& workload,
                                              const PendingPosition& position);

// Renders `describe node` for `node` as kubectl lays it out: name, roles,
// labels, annotations, creation time, taints, unschedulable, the conditions
// (with their heartbeat and transition times), addresses, capacity,
// allocatable, system info, and what its pods request (jobsetd's
// annotations). Pure.
std::string DescribeNode(const api::Node& node, absl::Time now);

// Renders `describe secret` as kubectl does: name, namespace, labels,
// annotations, type, and each key with its size only ("password:  6
// bytes"): never a value. Pure.
std::string DescribeSecret(const api::Secret& secret);

// Renders `describe configmap` as kubectl does: metadata, each data key with
// its value under a "----" rule, and binaryData keys with their sizes. Pure.
std::string DescribeConfigMap(const api::ConfigMap& config_map);

// Renders `describe` of a custom resource (Kueue's objects) as kubectl's
// generic describer does: Name, Namespace, Labels, Annotations, then every
// other field of the object's `-o json` form (ToJson with `api_version` and
// `kind`) in key order, each key in words ("nominalQuota" -> "Nominal
// Quota", "apiVersion" -> "API Version"; keys with other characters than
// letters as they are), an object's fields a level (two spaces) deeper, a
// list's items one after another, then `events` (Type Reason Age From
// Message; "<none>"; none at all when null: they could not be read), the
// "Key:<tab>value" lines aligned as kubectl's tabwriter aligns them;
// `extra_lines` (in that form) go between the object's fields and the
// events. Pure.
std::string DescribeResource(const google::protobuf::Message& object,
                             absl::string_view api_version,
                             absl::string_view kind,
                             const std::vector<api::Event>* events,
                             absl::Time now,
                             const std::vector<std::string>& extra_lines = {});

}  // namespace jobset::cli

#endif  // JOBSET_CLI_DESCRIBE_H_
