#ifndef JOBSET_SCHEDULER_QUEUES_PODSET_INJECTION_H_
#define JOBSET_SCHEDULER_QUEUES_PODSET_INJECTION_H_

// Starting and stopping an admitted JobSet (kueue-semantics.md §2.5; Kueue's
// JobSet RunWithPodSetsInfo / RestorePodSetsInfo and pkg/podset): on
// admission each replicatedJob's pod template gains its assigned flavors'
// nodeLabels (nodeSelector) and tolerations and Kueue's pod labels, and the
// JobSet is unsuspended; on eviction the JobSet is suspended and the
// templates get back exactly what they had.
//
// What is saved, and where. Kueue restores from the Workload: its
// spec.podSets[i].template is a copy of the pod template taken before any
// admission, and restoring resets the template's labels, annotations,
// nodeSelector and tolerations to it. Here Inject returns those four fields
// of every template as they were (`SavedPodTemplates`, one
// api::PodTemplateSpec per replicatedJob with nothing else set) and Restore
// takes them back. The caller keeps the value with its Workload record, so
// it survives a restart and is as hard to edit as the Workload: a proto, it
// serialises as it is (binary, or JSON as Kubernetes writes a template). Not
// an annotation on the JobSet: users may edit those, and a template read
// back from a stale annotation would stack old selectors on a re-admission
// on another flavor (jobset PR #1294). SaveTemplates() gives the same value
// without injecting, e.g. when the Workload is created.
//
// Inject() then Restore() leaves the JobSet as it was but for
// spec.suspend. Restore before injecting again: a template that still holds
// the selectors of an earlier admission conflicts with a new flavor.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/jobset.pb.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {

// The pod labels Kueue adds on admission.
inline constexpr absl::string_view kPodSetLabel = "kueue.x-k8s.io/podset";
inline constexpr absl::string_view kLocalQueueLabel =
    "kueue.x-k8s.io/local-queue-name";
inline constexpr absl::string_view kClusterQueueLabel =
    "kueue.x-k8s.io/cluster-queue-name";

// One api::PodTemplateSpec per replicatedJob, in order, holding only
// metadata.labels, metadata.annotations, spec.nodeSelector and
// spec.tolerations of its pod template.
using SavedPodTemplates = std::vector<api::PodTemplateSpec>;

// Returns what Restore() would put back into `jobset` now.
SavedPodTemplates SaveTemplates(const api::JobSet& jobset);

// Returns the part of one pod template that Restore() puts back: its
// metadata.labels, metadata.annotations, spec.nodeSelector and
// spec.tolerations, nothing else set.
api::PodTemplateSpec SaveTemplate(const api::PodTemplateSpec& pod_template);

// Starts `jobset` with `admission` (RunWithPodSetsInfo): for the i-th
// replicatedJob and the i-th podSet assignment, merges into the pod template
//   nodeSelector  the nodeLabels of every flavor the assignment names (each
//                 flavor once; on a key two flavors share, the flavor of the
//                 later resource name wins);
//   tolerations   those flavors' tolerations not already there (key,
//                 operator, value and effect compared; "" is Equal);
//   labels        kueue.x-k8s.io/podset = the podSet's name,
//                 kueue.x-k8s.io/local-queue-name = `queue_name` and, when
//                 the ClusterQueue's name is a DNS-1123 label,
//                 kueue.x-k8s.io/cluster-queue-name = it
//                 (AssignQueueLabelsForPods, on by default);
// then sets spec.suspend to false, and returns the templates as they were.
// Tolerations come from model.h's flavors, so they are written with an
// explicit operator and without tolerationSeconds (model.h carries none).
//
// Changes nothing and returns
//   kFailedPrecondition, a permanent error (Kueue finishes the Workload
//     with FailedToStart), when the number of assignments is not the number
//     of replicatedJobs ("invalid podset infos: expecting 2 podset, got 1")
//     or when a template already holds a different value for an injected
//     key ("invalid admission check PodSetUpdate: conflict for nodeSelector:
//     conflict for key=k, value1=<template's>, value2=<flavor's>"; labels
//     checked before nodeSelector, the first key in sorted order named);
//   kNotFound when an assigned flavor is not in `flavors`
//     (`resourceflavors.kueue.x-k8s.io "x" not found`); retry once it is.
absl::StatusOr<SavedPodTemplates> Inject(const Admission& admission,
                                         absl::string_view queue_name,
                                         const FlavorIndex& flavors,
                                         api::JobSet* jobset);

// Stops `jobset` (Kueue's stop on eviction): sets spec.suspend to true and
// resets each replicatedJob's pod template labels, annotations, nodeSelector
// and tolerations to `saved` (RestorePodSetsInfo). Returns whether anything
// changed. When `saved` does not hold one template per replicatedJob the
// templates are left alone, as Kueue does (only suspend is set).
bool Restore(const SavedPodTemplates& saved, api::JobSet* jobset);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_PODSET_INJECTION_H_
