#ifndef JOBSET_API_RBAC_MANIFEST_H_
#define JOBSET_API_RBAC_MANIFEST_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/manifest.h"
#include "proto/auth.pb.h"

namespace jobset::api {

inline constexpr absl::string_view kRbacApiVersion =
    "rbac.authorization.k8s.io/v1";

// Whether `kind` is Role, ClusterRole, RoleBinding or ClusterRoleBinding.
bool IsRbacKind(absl::string_view kind);

// Reads one rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding or
// ClusterRoleBinding document (YAML or JSON, upstream's field names) as
// api/manifest.h reads JobSets: unknown fields, wrong types and a wrong
// kind or apiVersion are kInvalidArgument naming the field. Only the shape
// is checked; jobsetd validates the content.
absl::StatusOr<RbacObject> ParseRbacDocument(absl::string_view text);

}  // namespace jobset::api

#endif  // JOBSET_API_RBAC_MANIFEST_H_
