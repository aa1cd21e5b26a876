#include "api/namespace_manifest.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/field_errors.h"
#include "api/manifest.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "api/pod_security.h"
#include "common/quote.h"

namespace jobset::api {

bool IsNamespaceKind(absl::string_view api_version, absl::string_view kind) {
  return api_version == "v1" && kind == "Namespace";
}

absl::StatusOr<Namespace> ParseNamespaceDocument(absl::string_view text) {
  if (text.size() > kMaxManifestBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("document is larger than ", kMaxManifestBytes, " bytes"));
  }
  Namespace ns;
  if (absl::Status s = ParseManifestDocument(text, &ns, nullptr); !s.ok()) {
    return s;
  }
  if (ns.kind() != "Namespace") {
    return absl::InvalidArgumentError(
        absl::StrCat("document: kind: Unsupported value: ", Quote(ns.kind()),
                     ": supported values: \"Namespace\""));
  }
  if (ns.api_version() != "v1") {
    return absl::InvalidArgumentError(absl::StrCat(
        "document: apiVersion: Unsupported value: ", Quote(ns.api_version()),
        ": supported values: \"v1\""));
  }
  return ns;
}

absl::Status ValidateNamespace(const Namespace& ns) {
  const ObjectMeta& meta = ns.metadata();
  FieldErrors errors;
  if (meta.name().empty()) {
    errors.Required("metadata.name", "name or generateName is required");
  } else if (std::vector<std::string> bad = IsDns1123Label(meta.name());
             !bad.empty()) {
    errors.Invalid("metadata.name", meta.name(), absl::StrJoin(bad, "; "));
  }
  if (!meta.namespace_().empty()) {
    errors.Forbidden("metadata.namespace",
                     "not allowed on this type (Namespace is cluster-scoped)");
  }
  if (!meta.generate_name().empty()) {
    errors.Forbidden("metadata.generateName",
                     "jobsetd needs the name of a Namespace");
  }
  ValidateLabels(meta.labels(), "metadata.labels", &errors);
  ValidateAnnotations(meta.annotations(), "metadata.annotations", &errors);
  const std::string object = absl::StrCat("Namespace ", Quote(meta.name()));
  if (absl::Status s = errors.ToStatus(object); !s.ok()) return s;
  if (absl::StatusOr<NamespacePodSecurity> psa =
          ParseNamespacePodSecurity(meta.labels());
      !psa.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(object, " is invalid: ", psa.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace jobset::api
