#include "api/rbac_manifest.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/manifest.h"
#include "common/quote.h"

namespace jobset::api {
namespace {

// Reads `text` into `message` (a Role or RoleBinding) and checks its kind
// and apiVersion.
template <typename T>
absl::Status ParseAs(absl::string_view text, T* message,
                     std::initializer_list<absl::string_view> kinds) {
  if (absl::Status s = ParseManifestDocument(text, message, nullptr); !s.ok()) {
    return s;
  }
  const std::string& kind = message->kind();
  const std::string& api_version = message->api_version();
  bool kind_ok = false;
  for (absl::string_view k : kinds) kind_ok = kind_ok || k == kind;
  if (!kind_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("document: kind: Unsupported value: ", Quote(kind)));
  }
  if (api_version != kRbacApiVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "document: apiVersion: Unsupported value: ", Quote(api_version),
        ": supported values: \"", kRbacApiVersion, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsRbacKind(absl::string_view kind) {
  return kind == "Role" || kind == "ClusterRole" || kind == "RoleBinding" ||
         kind == "ClusterRoleBinding";
}

absl::StatusOr<RbacObject> ParseRbacDocument(absl::string_view text) {
  if (text.size() > kMaxManifestBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("document is larger than ", kMaxManifestBytes, " bytes"));
  }
  // The kind decides the message.
  absl::StatusOr<DocumentType> type = ReadDocumentType(text);
  if (!type.ok()) return type.status();
  const std::string& kind = type->kind;
  RbacObject object;
  absl::Status s;
  if (kind == "Role" || kind == "ClusterRole") {
    Role* role = object.mutable_role();
    s = ParseAs(text, role, {"Role", "ClusterRole"});
  } else if (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
    RoleBinding* binding = object.mutable_binding();
    s = ParseAs(text, binding, {"RoleBinding", "ClusterRoleBinding"});
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "document: kind: Unsupported value: ", Quote(kind),
        ": supported values: \"Role\", \"ClusterRole\", \"RoleBinding\", "
        "\"ClusterRoleBinding\""));
  }
  if (!s.ok()) return s;
  return object;
}

}  // namespace jobset::api
