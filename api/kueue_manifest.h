#ifndef JOBSET_API_KUEUE_MANIFEST_H_
#define JOBSET_API_KUEUE_MANIFEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/kueue.pb.h"

namespace jobset::api {

inline constexpr absl::string_view kKueueApiVersion = "kueue.x-k8s.io/v1beta1";
inline constexpr absl::string_view kKueueApiVersionV1beta2 =
    "kueue.x-k8s.io/v1beta2";

// Whether `kind` is ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
// WorkloadPriorityClass or Workload.
bool IsKueueKind(absl::string_view kind);

// Reads one Kueue document (YAML or JSON, upstream's field names) of
// apiVersion kueue.x-k8s.io/v1beta1 or v1beta2 into the KueueObject of its
// kind, as api/manifest.h reads JobSets: unknown fields, wrong types and a
// wrong kind or apiVersion are kInvalidArgument naming the field; text
// over kMaxManifestBytes is kResourceExhausted.
//
// Every object comes back in one form, v1beta1's (proto/kueue.proto),
// apiVersion included, whichever version was read:
//   - v1beta2's ClusterQueue `cohortName` becomes `cohort`, LocalQueue
//     status `flavorsUsage` becomes `flavorUsage`, Workload
//     `priorityClassRef{group, kind, name}` becomes `priorityClassName` and
//     `priorityClassSource`, `accumulatedPastExecutionTimeSeconds` the
//     v1beta1 spelling; each version's document may use only its own names;
//   - v1beta1's flavorFungibility `Borrow` and `Preempt` become
//     `MayStopSearch`, as Kueue converts them (v1beta2 refuses them).
// Fields Kueue has and jobsetd does not act on (admission checks, topology
// requests) are dropped with a "<path>: ignored by jobsetd" warning appended
// to `warnings` (may be null). Only the shape is checked: defaults and
// validation are api/kueue_defaults.h and api/kueue_validation.h.
absl::StatusOr<KueueObject> ParseKueueDocument(
    absl::string_view text, std::vector<std::string>* warnings = nullptr);

}  // namespace jobset::api

#endif  // JOBSET_API_KUEUE_MANIFEST_H_
