#ifndef JOBSET_API_POD_SECURITY_H_
#define JOBSET_API_POD_SECURITY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "proto/jobset.pb.h"
#include "proto/k8s.pb.h"

// Pod Security admission: Kubernetes' Pod Security Standards (levels
// privileged, baseline and restricted, version "latest") over the pod
// templates of a JobSet, with Kubernetes' checks, order and wording
// (k8s.io/pod-security-admission/policy). Pure functions. Three departures,
// all in docs/api.md: hostNetwork is not a violation (every jobsetd pod
// uses the host's network), hostPath volumes at or under an operator's
// allowed prefixes pass at every level, and runAsUser 0 (pod or container)
// fails baseline too, with restricted's wording: explicit root needs a
// privileged namespace.
namespace jobset::api {

enum class PodSecurityLevel { kPrivileged, kBaseline, kRestricted };

// "privileged", "baseline" or "restricted".
absl::string_view PodSecurityLevelName(PodSecurityLevel level);

// Parses a level name; kInvalidArgument naming `what` (a flag or a label)
// otherwise, with Kubernetes' wording ("must be one of privileged, baseline,
// restricted").
absl::StatusOr<PodSecurityLevel> ParsePodSecurityLevel(absl::string_view what,
                                                       absl::string_view value);

// The namespace labels that set a namespace's policy.
inline constexpr absl::string_view kEnforceLabel =
    "pod-security.kubernetes.io/enforce";
inline constexpr absl::string_view kEnforceVersionLabel =
    "pod-security.kubernetes.io/enforce-version";
inline constexpr absl::string_view kWarnLabel =
    "pod-security.kubernetes.io/warn";
inline constexpr absl::string_view kWarnVersionLabel =
    "pod-security.kubernetes.io/warn-version";

// Host paths that pass Pod Security at every level: a hostPath volume whose
// path is one of these or lies under one, compared component by component
// ("/datasets" admits "/datasets/x", not "/datasets2"). A path with a ".."
// component never matches (on the host, ".." after a symlink leaves the
// prefix, so no lexical normalisation can decide it). Thread-compatible.
class AllowedHostPaths {
 public:
  AllowedHostPaths() = default;

  // Parses a comma-separated list of absolute paths ("" for none):
  // kInvalidArgument naming `what` and the entry for a relative path, a ".."
  // component or an empty entry. Redundant slashes and "." are normalised.
  static absl::StatusOr<AllowedHostPaths> Parse(absl::string_view what,
                                                absl::string_view list);

  // Whether `path` is at or under one of the prefixes.
  bool Allows(absl::string_view path) const;

  // The normalised prefixes, as given.
  const std::vector<std::vector<std::string>>& prefixes() const {
    return prefixes_;
  }

 private:
  std::vector<std::vector<std::string>> prefixes_;
};

// What the server enforces where a namespace says nothing.
struct PodSecurityConfig {
  PodSecurityLevel enforce = PodSecurityLevel::kBaseline;
  AllowedHostPaths allowed_host_paths;
};

// A namespace's policy, read from its labels.
struct NamespacePodSecurity {
  std::optional<PodSecurityLevel> enforce;  // Unset: the server's default.
  std::optional<PodSecurityLevel> warn;     // Unset: no warnings.
};

// Reads the pod-security.kubernetes.io/ labels of a Namespace: enforce and
// warn must name a level, enforce-version and warn-version must be "latest"
// or "v1.<minor>" (jobsetd checks every version with latest's rules). Any
// other value is kInvalidArgument naming the label's path and value.
absl::StatusOr<NamespacePodSecurity> ParseNamespacePodSecurity(
    const google::protobuf::Map<std::string, std::string>& labels);

// One failed check: Kubernetes' reason ("hostPath volumes") and detail
// ("volume \"data\"", may be empty).
struct PodSecurityViolation {
  std::string reason;
  std::string detail;

  bool operator==(const PodSecurityViolation& o) const {
    return reason == o.reason && detail == o.detail;
  }
};

// Returns the checks of `level` that a pod (its template's metadata and
// spec, init containers included) fails, in Kubernetes' order (baseline
// check ids sorted, then restricted ones); empty when it passes.
std::vector<PodSecurityViolation> CheckPodSecurity(
    const ObjectMeta& pod_metadata, const PodSpec& pod_spec,
    PodSecurityLevel level, const AllowedHostPaths& allowed_host_paths);

// Formats violations as Kubernetes does:
// `violates PodSecurity "baseline:latest": hostPath volumes (volume "data")`.
std::string FormatPodSecurityViolations(
    PodSecurityLevel level, const std::vector<PodSecurityViolation>& found);

// Checks the pod template of every replicatedJob of `jobset` at `level`:
// OK, or kPermissionDenied (Kubernetes answers 403 Forbidden) naming the
// JobSet and, for each failing replicatedJob, its template's path and the
// message of FormatPodSecurityViolations.
absl::Status CheckJobSetPodSecurity(const JobSet& jobset,
                                    PodSecurityLevel level,
                                    const AllowedHostPaths& allowed_host_paths);

// Returns one warning per replicatedJob whose template fails `level`, in
// Kubernetes' warning wording (`would violate PodSecurity
// "restricted:latest": ...`) with the template's path.
std::vector<std::string> PodSecurityWarnings(
    const JobSet& jobset, PodSecurityLevel level,
    const AllowedHostPaths& allowed_host_paths);

}  // namespace jobset::api

#endif  // JOBSET_API_POD_SECURITY_H_
