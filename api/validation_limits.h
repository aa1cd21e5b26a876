#ifndef JOBSET_API_VALIDATION_LIMITS_H_
#define JOBSET_API_VALIDATION_LIMITS_H_

#include <cstdint>

namespace jobset::api {

// jobsetd's own bounds on what one JobSet may ask for, checked at admission
// (validation.h) so that no single spec can make the scheduler build more
// Jobs and pods, or store more bytes, than it was sized for. Upstream JobSet
// and Kubernetes have no such limits except the annotation total; the
// defaults admit every upstream example. jobsetd sets them from its flags
// (the flag named at each field; scheduler/README.md has the table). A
// refusal is INVALID_ARGUMENT naming the field path, the value and the limit.
struct Limits {
  // Pods of one attempt: replicas x parallelism summed over the
  // replicatedJobs (--max_pods_per_jobset).
  int64_t max_pods_per_jobset = 100'000;
  // Jobs of one attempt: replicas summed over the replicatedJobs
  // (--max_jobs_per_jobset).
  int64_t max_jobs_per_jobset = 20'000;
  // Per pod template (--max_containers_per_pod,
  // --max_init_containers_per_pod, --max_volumes_per_pod).
  int64_t max_containers_per_pod = 64;
  int64_t max_init_containers_per_pod = 64;
  int64_t max_volumes_per_pod = 256;
  // Per container (--max_env_per_container, --max_ports_per_container).
  int64_t max_env_per_container = 1'024;
  int64_t max_ports_per_container = 256;
  // Bytes of one container's command and args together, as execve sees
  // them (each string and its NUL) (--max_command_bytes).
  int64_t max_command_bytes = 256 << 10;
  // Bytes of the keys and values of one object's labels, and of its
  // annotations (Kubernetes: 256 KiB) (--max_label_bytes,
  // --max_annotation_bytes).
  int64_t max_label_bytes = 64 << 10;
  int64_t max_annotation_bytes = 256 << 10;
};

}  // namespace jobset::api

#endif  // JOBSET_API_VALIDATION_LIMITS_H_
