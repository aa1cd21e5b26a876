#ifndef JOBSET_CLI_DESCRIBE_H_
#define JOBSET_CLI_DESCRIBE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.pb.h"

namespace jobset::cli {

// Renders `jobset describe` for `jobset`: metadata, policies, conditions,
// per-ReplicatedJob counts, its `pods` with their nodes, why pods are pending
// (their PodScheduled=False reasons, each distinct one once with a count),
// and the last `max_events` of `events` (oldest first). Pure.
std::string DescribeJobSet(const api::JobSet& jobset,
                           const std::vector<api::Pod>& pods,
                           const std::vector<api::Event>& events,
                           absl::Time now, int max_events = 20);

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
// "Key:<tab>value" lines aligned as kubectl's tabwriter aligns them. Pure.
std::string DescribeResource(const google::protobuf::Message& object,
                             absl::string_view api_version,
                             absl::string_view kind,
                             const std::vector<api::Event>* events,
                             absl::Time now);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_DESCRIBE_H_
