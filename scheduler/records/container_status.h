#ifndef JOBSET_SCHEDULER_RECORDS_CONTAINER_STATUS_H_
#define JOBSET_SCHEDULER_RECORDS_CONTAINER_STATUS_H_

// Pod statuses as clients see them: Kubernetes' core/v1 form, made from the
// flat form agents report and the controller stores (proto/cluster.proto,
// ContainerStatus fields 4-10). Pure functions; thread-compatible.

#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"
#include "proto/k8s.pb.h"

namespace jobset::scheduler {

// Returns `reported` (one container's status, flat) in Kubernetes' form:
//   flat "running"     state.running{startedAt}, started true
//   flat "terminated"  state.terminated{exitCode, signal, reason, message,
//                      startedAt, finishedAt, containerID}
//   anything else      state.waiting{reason, message}
// and lastState, the last termination, when the container has restarted
// and still knows it: waiting with a finish time (CrashLoopBackOff,
// InPlaceRestarting: exitCode, signal, startedAt, finishedAt), or running
// (exitCode and signal); its reason is the "last exit: <reason>," of a
// CrashLoopBackOff message, else "Completed" for exit code 0 and "Error"
// for any other. Otherwise lastState is {}. ready, restartCount, started,
// image (`image`, what the container's spec names) and imageID (the
// reported one, or "") are always set, as Kubernetes prints them; the flat
// fields are cleared, and a structured state the report may carry is
// replaced.
api::ContainerStatus KubernetesContainerStatus(
    const api::ContainerStatus& reported, absl::string_view image);

// Rewrites `status` (a pod's, as stored) in Kubernetes' form, for API
// responses: every init and app container's status by
// KubernetesContainerStatus, with the image `spec` gives the container of
// that name; hostIPs and podIPs from hostIP and podIP.
void ToKubernetesPodStatus(const api::PodSpec& spec, api::PodStatus* status);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_RECORDS_CONTAINER_STATUS_H_
