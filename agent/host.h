#ifndef JOBSET_AGENT_HOST_H_
#define JOBSET_AGENT_HOST_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// What the agent learns about its host, and the flags that describe it.

// Parses "k=v,k2=v2" (labels, --capacity). Values may be empty; keys may
// not. kInvalidArgument names `flag` and the bad item.
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    absl::string_view flag, absl::string_view text);

// Parses "k=v:Effect,k2:Effect" (--taints).
absl::StatusOr<std::vector<api::Taint>> ParseTaints(absl::string_view text);

// The accelerators found on the host.
struct Accelerators {
  int nvidia_gpus = 0;
  std::string nvidia_model;  // "NVIDIA H200"
  int tpu_chips = 0;
};

// Parses `nvidia-smi --query-gpu=name --format=csv,noheader` output.
Accelerators ParseNvidiaSmi(absl::string_view output);

// Looks for GPUs (nvidia-smi) and TPU chips (/dev/accel*). Never fails: a
// host without them has none.
Accelerators DetectAccelerators();

// The host's capacity (cpu: online CPUs; memory: MemTotal) plus detected
// accelerators, overridden by `given` (--capacity); and the labels the
// accelerators add (nvidia.com/gpu.product, nvidia.com/gpu.count,
// google.com/tpu.count), overridden by `labels`.
void DescribeHost(const Accelerators& accelerators,
                  const std::map<std::string, std::string>& given,
                  api::NodeRegistration* registration);

// Device indices of extended resource `resource` to give a pod asking for
// `count`, from `total` devices of which `used` are taken: the lowest free
// ones. kResourceExhausted if too few are free.
absl::StatusOr<std::vector<int>> PickDevices(int count, int total,
                                             const std::set<int>& used);

// Adds what the pod's frameworks expect to every container's environment
// (a variable the spec sets itself wins): for `gpus`, CUDA_VISIBLE_DEVICES
// and NVIDIA_VISIBLE_DEVICES; for a pod asking for google.com/tpu,
// TPU_WORKER_ID (its completion index) and TPU_WORKER_HOSTNAMES (its Job's
// pods' hostnames, from the host table, in index order).
void AddAcceleratorEnv(const std::vector<int>& gpus,
                       api::PodAssignment* assignment);

// Sets `assignment`'s devices to what this agent gives the pod, replacing
// whatever jobsetd sent: GPUs `gpus` (PickDevices' choice), and the host's
// TPUs when the pod asks for google.com/tpu. The runtime gives the
// containers those device nodes, whatever the pod's env says.
void SetPodDevices(const std::vector<int>& gpus,
                   api::PodAssignment* assignment);

// Whole units of extended resource `name` the pod asks for (limits, else
// requests, summed over containers).
int ExtendedRequest(const api::PodSpec& spec, absl::string_view name);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_HOST_H_
