#include "auth/rbac_validation.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "api/names.h"
#include "auth/rbac_authorizer.h"
#include "common/quote.h"

namespace jobset::auth {
namespace {

using ::google::protobuf::RepeatedPtrField;
using ::jobset::api::FieldErrors;

// Bounds on what one object may hold: every list is scanned on every request
// the object's bindings apply to.
constexpr int kMaxRules = 1000;
constexpr int kMaxSubjects = 1000;
constexpr int kMaxListEntries = 256;
constexpr int kMaxStringBytes = 253;
constexpr int64_t kMaxAnnotationBytes = 256 * 1024;

// Kubernetes' path.IsValidPathSegmentName (RBAC's minimal name rules), with
// jobsetd's length bound.
void CheckPathSegmentName(absl::string_view path, absl::string_view name,
                          FieldErrors* errors) {
  if (name.size() > kMaxStringBytes) {
    errors->TooLong(path, kMaxStringBytes);
    return;
  }
  if (name == "." || name == "..") {
    errors->Invalid(path, name, absl::StrCat("may not be '", name, "'"));
  }
  if (absl::StrContains(name, '/')) {
    errors->Invalid(path, name, "may not contain '/'");
  }
  if (absl::StrContains(name, '%')) {
    errors->Invalid(path, name, "may not contain '%'");
  }
}

void CheckNames(absl::string_view path, absl::string_view value,
                const std::vector<std::string>& problems, FieldErrors* errors) {
  for (const std::string& p : problems) errors->Invalid(path, value, p);
}

void CheckMetadata(const api::ObjectMeta& meta, bool namespaced,
                   FieldErrors* errors) {
  if (meta.name().empty()) {
    errors->Required("metadata.name");
  } else {
    CheckPathSegmentName("metadata.name", meta.name(), errors);
  }
  if (!meta.generate_name().empty()) {
    errors->Forbidden("metadata.generateName",
                      "jobsetd does not generate RBAC object names");
  }
  if (namespaced) {
    if (meta.namespace_().empty()) {
      errors->Required("metadata.namespace");
    } else {
      CheckNames("metadata.namespace", meta.namespace_(),
                 api::IsDns1123Label(meta.namespace_()), errors);
    }
  } else if (!meta.namespace_().empty()) {
    errors->Forbidden("metadata.namespace", "not allowed on this type");
  }
  int64_t label_bytes = 0;
  for (const auto& [key, value] : meta.labels()) {
    const std::string path = api::Key("metadata.labels", key);
    CheckNames(path, key, api::IsQualifiedName(key), errors);
    CheckNames(path, value, api::IsValidLabelValue(value), errors);
    label_bytes += key.size() + value.size();
  }
  if (label_bytes > kMaxAnnotationBytes) {
    errors->TooLong("metadata.labels", kMaxAnnotationBytes);
  }
  int64_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.annotations()) {
    CheckNames(api::Key("metadata.annotations", key), key,
               api::IsQualifiedName(key), errors);
    annotation_bytes += key.size() + value.size();
  }
  if (annotation_bytes > kMaxAnnotationBytes) {
    errors->TooLong("metadata.annotations", kMaxAnnotationBytes);
  }
}

// Bounds a list and its strings; `allow_empty` lets "" stand (the core API
// group).
void CheckList(absl::string_view path,
               const RepeatedPtrField<std::string>& list, bool allow_empty,
               FieldErrors* errors) {
  if (list.size() > kMaxListEntries) {
    errors->TooMany(path, list.size(), kMaxListEntries);
    return;
  }
  for (int i = 0; i < list.size(); ++i) {
    if (list[i].size() > kMaxStringBytes) {
      errors->TooLong(api::Index(path, i), kMaxStringBytes);
    } else if (list[i].empty() && !allow_empty) {
      errors->Invalid(api::Index(path, i), "", "must not be empty");
    }
  }
}

void CheckRule(const api::PolicyRule& rule, bool namespaced,
               absl::string_view path, FieldErrors* errors) {
  CheckList(api::Child(path, "verbs"), rule.verbs(), false, errors);
  CheckList(api::Child(path, "apiGroups"), rule.api_groups(), true, errors);
  CheckList(api::Child(path, "resources"), rule.resources(), false, errors);
  CheckList(api::Child(path, "resourceNames"), rule.resource_names(), false,
            errors);
  CheckList(api::Child(path, "nonResourceURLs"), rule.non_resource_urls(),
            false, errors);
  if (rule.verbs().empty()) {
    errors->Required(api::Child(path, "verbs"),
                     "verbs must contain at least one value");
  }
  if (!rule.non_resource_urls().empty()) {
    const std::string urls = api::Child(path, "nonResourceURLs");
    if (namespaced) {
      errors->InvalidList(urls, rule.non_resource_urls(),
                          "namespaced rules cannot apply to non-resource "
                          "URLs");
    }
    if (!rule.api_groups().empty() || !rule.resources().empty() ||
        !rule.resource_names().empty()) {
      errors->InvalidList(urls, rule.non_resource_urls(),
                          "rules cannot apply to both regular resources and "
                          "non-resource URLs");
    }
    return;
  }
  if (rule.api_groups().empty()) {
    errors->Required(api::Child(path, "apiGroups"),
                     "resource rules must supply at least one api group");
  }
  if (rule.resources().empty()) {
    errors->Required(api::Child(path, "resources"),
                     "resource rules must supply at least one resource");
  }
}

void CheckRole(const api::Role& role, FieldErrors* errors) {
  const bool namespaced = role.kind() == kRoleKind;
  CheckMetadata(role.metadata(), namespaced, errors);
  if (role.rules_size() > kMaxRules) {
    errors->TooMany("rules", role.rules_size(), kMaxRules);
    return;
  }
  for (int i = 0; i < role.rules_size(); ++i) {
    CheckRule(role.rules(i), namespaced, api::Index("rules", i), errors);
  }
}

void CheckSubject(const api::Subject& subject, bool namespaced,
                  absl::string_view path, FieldErrors* errors) {
  const std::string name_path = api::Child(path, "name");
  const std::string namespace_path = api::Child(path, "namespace");
  const std::string group_path = api::Child(path, "apiGroup");
  if (subject.name().empty()) {
    errors->Required(name_path);
  } else if (subject.name().size() > kMaxStringBytes) {
    errors->TooLong(name_path, kMaxStringBytes);
  }
  if (subject.namespace_().size() > kMaxStringBytes) {
    errors->TooLong(namespace_path, kMaxStringBytes);
  }
  if (subject.kind() == kServiceAccountKind) {
    if (!subject.name().empty() && subject.name().size() <= kMaxStringBytes) {
      CheckNames(name_path, subject.name(),
                 api::IsDns1123Subdomain(subject.name()), errors);
    }
    if (!subject.api_group().empty()) {
      errors->NotSupported(group_path, subject.api_group(), {""});
    }
    if (subject.namespace_().empty()) {
      // In a RoleBinding it defaults to the binding's namespace.
      if (!namespaced) errors->Required(namespace_path);
    } else if (subject.namespace_().size() <= kMaxStringBytes) {
      CheckNames(namespace_path, subject.namespace_(),
                 api::IsDns1123Label(subject.namespace_()), errors);
    }
  } else if (subject.kind() == kUserKind || subject.kind() == kGroupKind) {
    // Kubernetes defaults an empty apiGroup of a User or Group to the RBAC
    // group; jobsetd accepts either.
    if (!subject.api_group().empty() && subject.api_group() != kRbacGroup) {
      errors->NotSupported(group_path, subject.api_group(), {kRbacGroup});
    }
  } else {
    errors->NotSupported(api::Child(path, "kind"), subject.kind(),
                         {kServiceAccountKind, kUserKind, kGroupKind});
  }
}

void CheckBinding(const api::RoleBinding& binding, FieldErrors* errors) {
  const bool namespaced = binding.kind() == kRoleBindingKind;
  CheckMetadata(binding.metadata(), namespaced, errors);
  const api::RoleRef& ref = binding.role_ref();
  if (ref.api_group() != kRbacGroup) {
    errors->NotSupported("roleRef.apiGroup", ref.api_group(), {kRbacGroup});
  }
  if (namespaced) {
    if (ref.kind() != kRoleKind && ref.kind() != kClusterRoleKind) {
      errors->NotSupported("roleRef.kind", ref.kind(),
                           {kRoleKind, kClusterRoleKind});
    }
  } else if (ref.kind() != kClusterRoleKind) {
    errors->NotSupported("roleRef.kind", ref.kind(), {kClusterRoleKind});
  }
  if (ref.name().empty()) {
    errors->Required("roleRef.name");
  } else {
    CheckPathSegmentName("roleRef.name", ref.name(), errors);
  }
  if (binding.subjects_size() > kMaxSubjects) {
    errors->TooMany("subjects", binding.subjects_size(), kMaxSubjects);
    return;
  }
  for (int i = 0; i < binding.subjects_size(); ++i) {
    CheckSubject(binding.subjects(i), namespaced, api::Index("subjects", i),
                 errors);
  }
}

// `ClusterRole.rbac.authorization.k8s.io "view"`, as Kubernetes names an
// invalid object.
std::string ObjectLabel(absl::string_view kind, absl::string_view name) {
  if (kind.empty()) return absl::StrCat("RBAC object ", Quote(name));
  return absl::StrCat(kind, ".", kRbacGroup, " ", Quote(name));
}

}  // namespace

absl::Status ValidateRbacObject(const api::RbacObject& object) {
  FieldErrors errors;
  if (!object.has_role() && !object.has_binding()) {
    errors.Required("object", "one of role or binding");
    return errors.ToStatus("RBAC object");
  }
  const absl::string_view api_version = object.has_role()
                                            ? object.role().api_version()
                                            : object.binding().api_version();
  const absl::string_view kind =
      object.has_role() ? object.role().kind() : object.binding().kind();
  const absl::string_view name = object.has_role()
                                     ? object.role().metadata().name()
                                     : object.binding().metadata().name();
  if (api_version.empty()) {
    errors.Required("apiVersion");
  } else if (api_version != kRbacApiVersion) {
    errors.NotSupported("apiVersion", api_version, {kRbacApiVersion});
  }
  absl::string_view label_kind = kind;
  if (object.has_role()) {
    if (kind != kRoleKind && kind != kClusterRoleKind) {
      errors.NotSupported("kind", kind, {kRoleKind, kClusterRoleKind});
      label_kind = "";
    } else {
      CheckRole(object.role(), &errors);
    }
  } else {
    if (kind != kRoleBindingKind && kind != kClusterRoleBindingKind) {
      errors.NotSupported("kind", kind,
                          {kRoleBindingKind, kClusterRoleBindingKind});
      label_kind = "";
    } else {
      CheckBinding(object.binding(), &errors);
    }
  }
  // A hostile name is bounded before it is repeated in the message.
  return errors.ToStatus(
      ObjectLabel(label_kind, name.substr(0, kMaxStringBytes)));
}

absl::Status ValidateRoleRefExists(const RbacObjects& objects,
                                   const api::RbacObject& object) {
  if (!object.has_binding()) return absl::OkStatus();
  const api::RoleBinding& binding = object.binding();
  const bool cluster = binding.kind() == kClusterRoleBindingKind;
  const absl::string_view ns =
      cluster ? absl::string_view() : binding.metadata().namespace_();
  if (FindRole(objects, binding.role_ref(), ns) != nullptr) {
    return absl::OkStatus();
  }
  const api::RoleRef& ref = binding.role_ref();
  std::string missing = absl::StrCat("no ", ref.kind(), " ", Quote(ref.name()));
  if (ref.kind() == kRoleKind) {
    absl::StrAppend(&missing, " in namespace ", Quote(ns));
  }
  return absl::NotFoundError(absl::StrCat(
      ObjectLabel(binding.kind(),
                  binding.metadata().name().substr(0, kMaxStringBytes)),
      " is invalid: roleRef.name: Not found: ", Quote(ref.name()), " (",
      missing, ")"));
}

}  // namespace jobset::auth
