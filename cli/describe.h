#ifndef JOBSET_CLI_DESCRIBE_H_
#define JOBSET_CLI_DESCRIBE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
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

}  // namespace jobset::cli

#endif  // JOBSET_CLI_DESCRIBE_H_
