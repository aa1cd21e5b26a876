#ifndef JOBSET_CLI_MANIFEST_SPLIT_H_
#define JOBSET_CLI_MANIFEST_SPLIT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace jobset::cli {

// One rbac.authorization.k8s.io document of a manifest.
struct RbacDocument {
  int document = 0;  // 1-based position among the input's documents.
  std::string text;
};

// A manifest split by kind: the Kubernetes RBAC documents (Role,
// ClusterRole, RoleBinding, ClusterRoleBinding of apiVersion
// rbac.authorization.k8s.io/...) apart, and the rest for api::LoadManifest.
struct SplitDocuments {
  // The input unchanged when it has no RBAC document; else the input with
  // each RBAC document replaced by an empty one (`~`, line count kept), so
  // that api::LoadManifest numbers the other documents and lines as before.
  std::string rest;
  std::vector<RbacDocument> rbac;
  // The v1 Namespace documents, taken apart (and blanked) as RBAC ones.
  std::vector<RbacDocument> namespaces;
  // The v1 Secret and ConfigMap documents, likewise.
  std::vector<RbacDocument> secrets;
  std::vector<RbacDocument> config_maps;
  // Kueue's documents (a Kueue kind of apiVersion kueue.x-k8s.io/...),
  // likewise.
  std::vector<RbacDocument> kueue;
};

// Splits YAML or JSON `text` at its "---" lines and finds each document's
// top-level kind and apiVersion. A document that cannot be read is left in
// `rest` (api::LoadManifest reports it). Never fails.
SplitDocuments SplitByKind(absl::string_view text);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_MANIFEST_SPLIT_H_
