#ifndef JOBSET_API_NAMESPACE_MANIFEST_H_
#define JOBSET_API_NAMESPACE_MANIFEST_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/jobset_service.pb.h"

namespace jobset::api {

// Whether a document's apiVersion and kind are v1 Namespace.
bool IsNamespaceKind(absl::string_view api_version, absl::string_view kind);

// Reads one v1 Namespace document (YAML or JSON, Kubernetes' field names) as
// api/manifest.h reads JobSets: unknown fields, wrong types and a wrong kind
// or apiVersion are kInvalidArgument naming the field; spec and status are
// ignored fields. Only the shape is checked: see ValidateNamespace.
absl::StatusOr<Namespace> ParseNamespaceDocument(absl::string_view text);

// Checks a Namespace as Kubernetes' ValidateNamespace does (name a DNS-1123
// label, labels, annotations) plus its pod-security.kubernetes.io/ labels
// (api/pod_security.h): kInvalidArgument `Namespace "x" is invalid: ...`.
absl::Status ValidateNamespace(const Namespace& ns);

}  // namespace jobset::api

#endif  // JOBSET_API_NAMESPACE_MANIFEST_H_
