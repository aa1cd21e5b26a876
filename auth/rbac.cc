#include "auth/rbac.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "api/names.h"

namespace jobset::auth {
namespace {

using ::google::protobuf::RepeatedPtrField;

constexpr absl::string_view kApiVersion = "rbac.authorization.k8s.io/v1";
constexpr absl::string_view kRoleKind = "Role";
constexpr absl::string_view kClusterRoleKind = "ClusterRole";
constexpr absl::string_view kRoleBindingKind = "RoleBinding";
constexpr absl::string_view kClusterRoleBindingKind = "ClusterRoleBinding";
constexpr absl::string_view kUserKind = "User";
constexpr absl::string_view kGroupKind = "Group";
constexpr absl::string_view kServiceAccountKind = "ServiceAccount";
constexpr absl::string_view kServiceAccountPrefix = "system:serviceaccount:";
constexpr absl::string_view kAll = "*";

// Kubernetes' labels and annotation on its bootstrap policy.
constexpr absl::string_view kBootstrappingLabel = "kubernetes.io/bootstrapping";
constexpr absl::string_view kBootstrappingValue = "rbac-defaults";
constexpr absl::string_view kAutoupdateAnnotation =
    "rbac.authorization.kubernetes.io/autoupdate";

// Bounds on what one object may hold: every list is scanned on every request
// the object's bindings apply to.
constexpr int kMaxRules = 1000;
constexpr int kMaxSubjects = 1000;
constexpr int kMaxListEntries = 256;
constexpr int kMaxStringBytes = 253;
constexpr int64_t kMaxAnnotationBytes = 256 * 1024;
// The most (group, resource, verb, name) combinations CheckCanGrant expands
// rules into; beyond it the check would cost more than any real role needs.
constexpr int64_t kMaxGrantCombinations = 1 << 16;

struct ResourceInfo {
  absl::string_view resource;
  absl::string_view group;
  bool cluster_scoped;
};

constexpr ResourceInfo kResources[] = {
    {"jobsets", kJobSetGroup, false},
    {"jobs", "batch", false},
    {"pods", "", false},
    {"events", "", false},
    {"secrets", "", false},
    {"configmaps", "", false},
    {"nodes", "", true},
    {"namespaces", "", true},
    {"tokens", kJobSetGroup, true},
    {"roles", kRbacGroup, false},
    {"rolebindings", kRbacGroup, false},
    {"clusterroles", kRbacGroup, true},
    {"clusterrolebindings", kRbacGroup, true},
};

// "pods/log" is known as "pods".
const ResourceInfo* FindResource(absl::string_view resource) {
  resource = resource.substr(0, resource.find('/'));
  for (const ResourceInfo& info : kResources) {
    if (info.resource == resource) return &info;
  }
  return nullptr;
}

// Quotes as Go's %q does for the strings Kubernetes puts in its messages:
// quotes and backslashes escaped, control bytes as escapes, so that a hostile
// name cannot forge a line of its own.
void AppendQuoted(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          absl::StrAppendFormat(out, "\\x%02x", u);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string Quoted(absl::string_view s) {
  std::string out;
  AppendQuoted(&out, s);
  return out;
}

// Go's %q of a []string: ["a" "b"].
template <typename Strings>
std::string QuotedList(const Strings& values) {
  std::string out = "[";
  bool first = true;
  for (absl::string_view v : values) {
    if (!first) out.push_back(' ');
    first = false;
    AppendQuoted(&out, v);
  }
  out.push_back(']');
  return out;
}

bool Has(const RepeatedPtrField<std::string>& list, absl::string_view value) {
  for (const std::string& entry : list) {
    if (entry == value) return true;
  }
  return false;
}

bool HasOrAll(const RepeatedPtrField<std::string>& list,
              absl::string_view value) {
  for (const std::string& entry : list) {
    if (entry == value || entry == kAll) return true;
  }
  return false;
}

bool InGroup(const UserInfo& user, absl::string_view group) {
  for (const std::string& g : user.groups) {
    if (g == group) return true;
  }
  return false;
}

// ---- Matching a request (Kubernetes' RuleAllows) ----

// Whether `entry` names "<resource>/<subresource>".
bool IsCombined(absl::string_view entry, absl::string_view resource,
                absl::string_view subresource) {
  return entry.size() == resource.size() + 1 + subresource.size() &&
         absl::StartsWith(entry, resource) && entry[resource.size()] == '/' &&
         absl::EndsWith(entry, subresource);
}

// "*" matches everything; "pods" only pods (never pods/log); "pods/log" and
// "*/log" match pods/log.
bool ResourceMatches(const api::PolicyRule& rule, absl::string_view resource,
                     absl::string_view subresource) {
  for (const std::string& entry : rule.resources()) {
    if (entry == kAll) return true;
    if (subresource.empty()) {
      if (entry == resource) return true;
      continue;
    }
    if (IsCombined(entry, resource, subresource)) return true;
    if (IsCombined(entry, kAll, subresource)) return true;
  }
  return false;
}

// A rule that names resources does not apply to a collection (a request with
// no name), as in Kubernetes.
bool ResourceNameMatches(const api::PolicyRule& rule, absl::string_view name) {
  if (rule.resource_names().empty()) return true;
  return !name.empty() && Has(rule.resource_names(), name);
}

bool RuleAllows(const api::PolicyRule& rule, const Attributes& attrs) {
  // jobsetd makes no non-resource requests: a rule of nonResourceURLs (no
  // resources) matches nothing here.
  return HasOrAll(rule.verbs(), attrs.verb) &&
         HasOrAll(rule.api_groups(), attrs.api_group) &&
         ResourceMatches(rule, attrs.resource, attrs.subresource) &&
         ResourceNameMatches(rule, attrs.name);
}

// ---- Bindings ----

// Whether `user` is "system:serviceaccount:<ns>:<name>", compared in place.
bool IsServiceAccount(absl::string_view user, absl::string_view ns,
                      absl::string_view name) {
  if (!absl::ConsumePrefix(&user, kServiceAccountPrefix)) return false;
  if (!absl::ConsumePrefix(&user, ns)) return false;
  if (!absl::ConsumePrefix(&user, ":")) return false;
  return user == name;
}

// A ServiceAccount subject of a RoleBinding without a namespace means the
// binding's (Kubernetes' appliesToUser).
absl::string_view SubjectNamespace(const api::Subject& subject,
                                   absl::string_view binding_namespace) {
  return subject.namespace_().empty() ? binding_namespace
                                      : absl::string_view(subject.namespace_());
}

bool SubjectMatches(const api::Subject& subject, const UserInfo& user,
                    absl::string_view binding_namespace) {
  if (subject.kind() == kUserKind) return subject.name() == user.name;
  if (subject.kind() == kGroupKind) return InGroup(user, subject.name());
  if (subject.kind() == kServiceAccountKind) {
    absl::string_view ns = SubjectNamespace(subject, binding_namespace);
    return !ns.empty() && IsServiceAccount(user.name, ns, subject.name());
  }
  return false;
}

const api::Subject* AppliesTo(const api::RoleBinding& binding,
                              const UserInfo& user,
                              absl::string_view binding_namespace) {
  for (const api::Subject& subject : binding.subjects()) {
    if (SubjectMatches(subject, user, binding_namespace)) return &subject;
  }
  return nullptr;
}

void AppendKey(std::string* key, absl::string_view kind, absl::string_view ns,
               absl::string_view name) {
  key->clear();
  absl::StrAppend(key, kind, "/", ns, "/", name);
}

std::string Key(absl::string_view kind, absl::string_view ns,
                absl::string_view name) {
  std::string key;
  AppendKey(&key, kind, ns, name);
  return key;
}

using ObjectMap = std::map<std::string, api::RbacObject>;

// The role a binding in `binding_namespace` (empty: a ClusterRoleBinding)
// refers to, or null. `key` is scratch space, kept by the caller so that one
// evaluation allocates it once.
const api::Role* FindRole(const ObjectMap& objects, const api::RoleRef& ref,
                          absl::string_view binding_namespace,
                          std::string* key) {
  if (ref.kind() == kRoleKind) {
    if (binding_namespace.empty()) return nullptr;
    AppendKey(key, kRoleKind, binding_namespace, ref.name());
  } else if (ref.kind() == kClusterRoleKind) {
    AppendKey(key, kClusterRoleKind, "", ref.name());
  } else {
    return nullptr;
  }
  auto it = objects.find(*key);
  if (it == objects.end() || !it->second.has_role()) return nullptr;
  return &it->second.role();
}

// Whether `key` is "<kind>/<ns>/<name>" for some name.
bool InScope(absl::string_view key, absl::string_view kind,
             absl::string_view ns) {
  return absl::ConsumePrefix(&key, kind) && absl::ConsumePrefix(&key, "/") &&
         absl::ConsumePrefix(&key, ns) && absl::StartsWith(key, "/");
}

// Calls visit(binding, subject, rule) for every rule granted to `user` in
// `ns` (empty: cluster-wide), ClusterRoleBindings first, as Kubernetes'
// VisitRulesFor; stops when visit returns false. The bindings of a kind and
// namespace are one range of the map (a namespace holds no '/'), so the cost
// is O(log objects + bindings in scope x their subjects), plus a lookup by
// key, O(log objects), and a scan of the rules of each binding that applies.
// Nothing is copied; one scratch key is allocated.
template <typename Visitor>
void VisitRulesFor(const ObjectMap& objects, const UserInfo& user,
                   absl::string_view ns, Visitor visit) {
  std::string key;
  // Visits the bindings of `kind` in `scope`; false once visit said stop.
  auto visit_bindings = [&](absl::string_view kind, absl::string_view scope) {
    AppendKey(&key, kind, scope, "");
    for (auto it = objects.lower_bound(key);
         it != objects.end() && InScope(it->first, kind, scope); ++it) {
      if (!it->second.has_binding()) continue;
      const api::RoleBinding& binding = it->second.binding();
      const api::Subject* subject = AppliesTo(binding, user, scope);
      if (subject == nullptr) continue;
      const api::Role* role =
          FindRole(objects, binding.role_ref(), scope, &key);
      if (role == nullptr) continue;
      for (const api::PolicyRule& rule : role->rules()) {
        if (!visit(binding, *subject, rule)) return false;
      }
    }
    return true;
  };
  if (!visit_bindings(kClusterRoleBindingKind, "")) return;
  if (!ns.empty()) visit_bindings(kRoleBindingKind, ns);
}

// `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, or
// `RoleBinding "x/ns" of Role "y" to ServiceAccount "sa/ns"`, as Kubernetes'
// describers.
std::string DescribeGrant(const api::RoleBinding& binding,
                          const api::Subject& subject) {
  const absl::string_view ns = binding.metadata().namespace_();
  std::string out = binding.kind();
  out.push_back(' ');
  AppendQuoted(&out, ns.empty()
                         ? binding.metadata().name()
                         : absl::StrCat(binding.metadata().name(), "/", ns));
  absl::StrAppend(&out, " of ", binding.role_ref().kind(), " ");
  AppendQuoted(&out, binding.role_ref().name());
  absl::StrAppend(&out, " to ", subject.kind(), " ");
  if (subject.kind() == kServiceAccountKind) {
    AppendQuoted(
        &out, absl::StrCat(subject.name(), "/", SubjectNamespace(subject, ns)));
  } else {
    AppendQuoted(&out, subject.name());
  }
  return out;
}

// Whether a rule granted to `user` in `ns` (empty: cluster-wide) allows the
// request; says which binding if `reason` is not null.
bool AllowsIn(const ObjectMap& objects, const UserInfo& user,
              const Attributes& attrs, absl::string_view ns,
              std::string* reason) {
  bool allowed = false;
  VisitRulesFor(objects, user, ns,
                [&](const api::RoleBinding& binding,
                    const api::Subject& subject, const api::PolicyRule& rule) {
                  if (!RuleAllows(rule, attrs)) return true;
                  allowed = true;
                  if (reason != nullptr) {
                    *reason = absl::StrCat("allowed by ",
                                           DescribeGrant(binding, subject));
                  }
                  return false;
                });
  return allowed;
}

// ---- Escalation (Kubernetes' Covers over broken-down rules) ----

// One (group, resource, verb, name) or (nonResourceURL, verb) combination.
struct Permission {
  absl::string_view group;
  absl::string_view resource;
  absl::string_view verb;
  absl::string_view name;  // empty: any name
  absl::string_view url;   // set only for a non-resource permission
};

bool ResourceCovers(const RepeatedPtrField<std::string>& owner,
                    absl::string_view resource) {
  if (Has(owner, kAll) || Has(owner, resource)) return true;
  const size_t slash = resource.find('/');
  if (slash == absl::string_view::npos) return false;
  for (const std::string& entry : owner) {
    if (IsCombined(entry, kAll, resource.substr(slash + 1))) return true;
  }
  return false;
}

bool UrlCovers(const RepeatedPtrField<std::string>& owner,
               absl::string_view url) {
  for (absl::string_view entry : owner) {
    if (entry == url) return true;
    // "/api/*" covers "/api/v1" (every trailing '*' dropped, as Go's
    // TrimRight).
    if (!absl::EndsWith(entry, "*")) continue;
    while (absl::ConsumeSuffix(&entry, "*")) {
    }
    if (absl::StartsWith(url, entry)) return true;
  }
  return false;
}

// Kubernetes' ruleCovers for one broken-down permission: the owner rule
// must list it (or "*") in every dimension; a permission on any name needs an
// owner rule on any name.
bool Covers(const api::PolicyRule& owner, const Permission& p) {
  if (!HasOrAll(owner.verbs(), p.verb)) return false;
  if (!owner.resource_names().empty() &&
      (p.name.empty() || !Has(owner.resource_names(), p.name))) {
    return false;
  }
  if (!p.url.empty()) return UrlCovers(owner.non_resource_urls(), p.url);
  return HasOrAll(owner.api_groups(), p.group) &&
         ResourceCovers(owner.resources(), p.resource);
}

// Kubernetes' CompactString of one broken-down permission.
std::string DescribePermission(const Permission& p) {
  std::vector<std::string> parts;
  auto one = [](absl::string_view v) {
    return QuotedList(std::initializer_list<absl::string_view>{v});
  };
  if (!p.url.empty()) {
    parts.push_back(absl::StrCat("NonResourceURLs:", one(p.url)));
  } else {
    parts.push_back(absl::StrCat("APIGroups:", one(p.group)));
    parts.push_back(absl::StrCat("Resources:", one(p.resource)));
    if (!p.name.empty()) {
      parts.push_back(absl::StrCat("ResourceNames:", one(p.name)));
    }
  }
  parts.push_back(absl::StrCat("Verbs:", one(p.verb)));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

bool HasAllOrAll(const RepeatedPtrField<std::string>& owner,
                 const RepeatedPtrField<std::string>& wanted) {
  if (Has(owner, kAll)) return true;
  for (const std::string& w : wanted) {
    if (!Has(owner, w)) return false;
  }
  return true;
}

// Whether one owner rule covers every combination of `rule` (so that they
// need not be enumerated, e.g. under cluster-admin).
bool CoversWhole(const api::PolicyRule& owner, const api::PolicyRule& rule) {
  if (!HasAllOrAll(owner.verbs(), rule.verbs())) return false;
  // Among resourceNames "*" is a name like any other.
  if (!owner.resource_names().empty()) {
    if (rule.resource_names().empty()) return false;
    for (const std::string& name : rule.resource_names()) {
      if (!Has(owner.resource_names(), name)) return false;
    }
  }
  if (!rule.resources().empty() || !rule.api_groups().empty()) {
    if (!HasAllOrAll(owner.api_groups(), rule.api_groups())) return false;
    for (const std::string& r : rule.resources()) {
      if (!ResourceCovers(owner.resources(), r)) return false;
    }
  }
  for (const std::string& url : rule.non_resource_urls()) {
    if (!UrlCovers(owner.non_resource_urls(), url)) return false;
  }
  return true;
}

// The first combination of `rule` that no owner rule covers, in Kubernetes'
// BreakdownRule order (group, resource, verb, name; then non-resource URLs
// by verb), or none.
std::optional<Permission> FirstNotHeld(
    const std::vector<const api::PolicyRule*>& owner,
    const api::PolicyRule& rule) {
  auto held = [&](const Permission& p) {
    for (const api::PolicyRule* o : owner) {
      if (Covers(*o, p)) return true;
    }
    return false;
  };
  for (const std::string& group : rule.api_groups()) {
    for (const std::string& resource : rule.resources()) {
      for (const std::string& verb : rule.verbs()) {
        Permission p{group, resource, verb, "", ""};
        if (rule.resource_names().empty()) {
          if (!held(p)) return p;
          continue;
        }
        for (const std::string& name : rule.resource_names()) {
          p.name = name;
          if (!held(p)) return p;
        }
      }
    }
  }
  for (const std::string& url : rule.non_resource_urls()) {
    for (const std::string& verb : rule.verbs()) {
      Permission p{"", "", verb, "", url};
      if (!held(p)) return p;
    }
  }
  return std::nullopt;
}

int64_t CombinationsOf(const api::PolicyRule& rule) {
  // Each factor is at most kMaxListEntries in a validated rule; clamp anyway
  // so that an unvalidated one cannot overflow.
  auto clamp = [](int n) {
    return static_cast<int64_t>(n > 1 << 12 ? 1 << 12 : n);
  };
  const int64_t names =
      rule.resource_names().empty() ? 1 : clamp(rule.resource_names_size());
  return clamp(rule.verbs_size()) *
         (clamp(rule.api_groups_size()) * clamp(rule.resources_size()) * names +
          clamp(rule.non_resource_urls_size()));
}

// ---- Validation ----

// Collects `path: problem` strings in api/field_errors' wording.
class Problems {
 public:
  void Add(absl::string_view path, absl::string_view message) {
    problems_.push_back(absl::StrCat(path, ": ", message));
  }
  void Required(absl::string_view path, absl::string_view detail = "") {
    Add(path, detail.empty() ? std::string("Required value")
                             : absl::StrCat("Required value: ", detail));
  }
  void Invalid(absl::string_view path, absl::string_view value,
               absl::string_view detail) {
    Add(path, absl::StrCat("Invalid value: ", Quoted(value), ": ", detail));
  }
  void InvalidList(absl::string_view path,
                   const RepeatedPtrField<std::string>& value,
                   absl::string_view detail) {
    Add(path, absl::StrCat("Invalid value: ", QuotedList(value), ": ", detail));
  }
  void NotSupported(absl::string_view path, absl::string_view value,
                    std::initializer_list<absl::string_view> supported) {
    std::vector<std::string> quoted;
    for (absl::string_view s : supported) quoted.push_back(Quoted(s));
    Add(path,
        absl::StrCat("Unsupported value: ", Quoted(value),
                     ": supported values: ", absl::StrJoin(quoted, ", ")));
  }
  void Forbidden(absl::string_view path, absl::string_view detail) {
    Add(path, absl::StrCat("Forbidden: ", detail));
  }
  void TooLong(absl::string_view path, int64_t max_bytes) {
    Add(path,
        absl::StrCat("Too long: may not be more than ", max_bytes, " bytes"));
  }
  void TooMany(absl::string_view path, int64_t count, int64_t max_items) {
    Add(path, absl::StrCat("Too many: ", count, ": must have at most ",
                           max_items, " items"));
  }

  // OK, or kInvalidArgument `<object> is invalid: <problem>; <problem>`.
  absl::Status ToStatus(absl::string_view object) const {
    if (problems_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(object, " is invalid: ", absl::StrJoin(problems_, "; ")));
  }

 private:
  std::vector<std::string> problems_;
};

std::string Index(absl::string_view path, int i) {
  return absl::StrCat(path, "[", i, "]");
}

// Kubernetes' path.IsValidPathSegmentName (RBAC's minimal name rules), with
// jobsetd's length bound.
void CheckPathSegmentName(absl::string_view path, absl::string_view name,
                          Problems* problems) {
  if (name.size() > kMaxStringBytes) {
    problems->TooLong(path, kMaxStringBytes);
    return;
  }
  if (name == "." || name == "..") {
    problems->Invalid(path, name, absl::StrCat("may not be '", name, "'"));
  }
  if (absl::StrContains(name, '/')) {
    problems->Invalid(path, name, "may not contain '/'");
  }
  if (absl::StrContains(name, '%')) {
    problems->Invalid(path, name, "may not contain '%'");
  }
}

void CheckNames(absl::string_view path, absl::string_view value,
                const std::vector<std::string>& errors, Problems* problems) {
  for (const std::string& e : errors) problems->Invalid(path, value, e);
}

void CheckMetadata(const api::ObjectMeta& meta, bool namespaced,
                   Problems* problems) {
  if (meta.name().empty()) {
    problems->Required("metadata.name");
  } else {
    CheckPathSegmentName("metadata.name", meta.name(), problems);
  }
  if (!meta.generate_name().empty()) {
    problems->Forbidden("metadata.generateName",
                        "jobsetd does not generate RBAC object names");
  }
  if (namespaced) {
    if (meta.namespace_().empty()) {
      problems->Required("metadata.namespace");
    } else {
      CheckNames("metadata.namespace", meta.namespace_(),
                 api::IsDns1123Label(meta.namespace_()), problems);
    }
  } else if (!meta.namespace_().empty()) {
    problems->Forbidden("metadata.namespace", "not allowed on this type");
  }
  int64_t label_bytes = 0;
  for (const auto& [key, value] : meta.labels()) {
    const std::string path = absl::StrCat("metadata.labels[", key, "]");
    CheckNames(path, key, api::IsQualifiedName(key), problems);
    CheckNames(path, value, api::IsValidLabelValue(value), problems);
    label_bytes += key.size() + value.size();
  }
  if (label_bytes > kMaxAnnotationBytes) {
    problems->TooLong("metadata.labels", kMaxAnnotationBytes);
  }
  int64_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.annotations()) {
    CheckNames(absl::StrCat("metadata.annotations[", key, "]"), key,
               api::IsQualifiedName(key), problems);
    annotation_bytes += key.size() + value.size();
  }
  if (annotation_bytes > kMaxAnnotationBytes) {
    problems->TooLong("metadata.annotations", kMaxAnnotationBytes);
  }
}

// Bounds a list and its strings; `allow_empty` lets "" stand (the core API
// group).
void CheckList(absl::string_view path,
               const RepeatedPtrField<std::string>& list, bool allow_empty,
               Problems* problems) {
  if (list.size() > kMaxListEntries) {
    problems->TooMany(path, list.size(), kMaxListEntries);
    return;
  }
  for (int i = 0; i < list.size(); ++i) {
    if (list[i].size() > kMaxStringBytes) {
      problems->TooLong(Index(path, i), kMaxStringBytes);
    } else if (list[i].empty() && !allow_empty) {
      problems->Invalid(Index(path, i), "", "must not be empty");
    }
  }
}

void CheckRule(const api::PolicyRule& rule, bool namespaced,
               absl::string_view path, Problems* problems) {
  CheckList(absl::StrCat(path, ".verbs"), rule.verbs(), false, problems);
  CheckList(absl::StrCat(path, ".apiGroups"), rule.api_groups(), true,
            problems);
  CheckList(absl::StrCat(path, ".resources"), rule.resources(), false,
            problems);
  CheckList(absl::StrCat(path, ".resourceNames"), rule.resource_names(), false,
            problems);
  CheckList(absl::StrCat(path, ".nonResourceURLs"), rule.non_resource_urls(),
            false, problems);
  if (rule.verbs().empty()) {
    problems->Required(absl::StrCat(path, ".verbs"),
                       "verbs must contain at least one value");
  }
  if (!rule.non_resource_urls().empty()) {
    const std::string urls = absl::StrCat(path, ".nonResourceURLs");
    if (namespaced) {
      problems->InvalidList(urls, rule.non_resource_urls(),
                            "namespaced rules cannot apply to non-resource "
                            "URLs");
    }
    if (!rule.api_groups().empty() || !rule.resources().empty() ||
        !rule.resource_names().empty()) {
      problems->InvalidList(urls, rule.non_resource_urls(),
                            "rules cannot apply to both regular resources and "
                            "non-resource URLs");
    }
    return;
  }
  if (rule.api_groups().empty()) {
    problems->Required(absl::StrCat(path, ".apiGroups"),
                       "resource rules must supply at least one api group");
  }
  if (rule.resources().empty()) {
    problems->Required(absl::StrCat(path, ".resources"),
                       "resource rules must supply at least one resource");
  }
}

void CheckRole(const api::Role& role, Problems* problems) {
  const bool namespaced = role.kind() == kRoleKind;
  CheckMetadata(role.metadata(), namespaced, problems);
  if (role.rules_size() > kMaxRules) {
    problems->TooMany("rules", role.rules_size(), kMaxRules);
    return;
  }
  for (int i = 0; i < role.rules_size(); ++i) {
    CheckRule(role.rules(i), namespaced, Index("rules", i), problems);
  }
}

void CheckSubject(const api::Subject& subject, bool namespaced,
                  absl::string_view path, Problems* problems) {
  const std::string name_path = absl::StrCat(path, ".name");
  const std::string group_path = absl::StrCat(path, ".apiGroup");
  if (subject.name().empty()) {
    problems->Required(name_path);
  } else if (subject.name().size() > kMaxStringBytes) {
    problems->TooLong(name_path, kMaxStringBytes);
  }
  if (subject.namespace_().size() > kMaxStringBytes) {
    problems->TooLong(absl::StrCat(path, ".namespace"), kMaxStringBytes);
  }
  if (subject.kind() == kServiceAccountKind) {
    if (!subject.name().empty() && subject.name().size() <= kMaxStringBytes) {
      CheckNames(name_path, subject.name(),
                 api::IsDns1123Subdomain(subject.name()), problems);
    }
    if (!subject.api_group().empty()) {
      problems->NotSupported(group_path, subject.api_group(), {""});
    }
    if (subject.namespace_().empty()) {
      // In a RoleBinding it defaults to the binding's namespace.
      if (!namespaced) problems->Required(absl::StrCat(path, ".namespace"));
    } else if (subject.namespace_().size() <= kMaxStringBytes) {
      CheckNames(absl::StrCat(path, ".namespace"), subject.namespace_(),
                 api::IsDns1123Label(subject.namespace_()), problems);
    }
  } else if (subject.kind() == kUserKind || subject.kind() == kGroupKind) {
    // Kubernetes defaults an empty apiGroup of a User or Group to the RBAC
    // group; jobsetd accepts either.
    if (!subject.api_group().empty() && subject.api_group() != kRbacGroup) {
      problems->NotSupported(group_path, subject.api_group(), {kRbacGroup});
    }
  } else {
    problems->NotSupported(absl::StrCat(path, ".kind"), subject.kind(),
                           {kServiceAccountKind, kUserKind, kGroupKind});
  }
}

void CheckBinding(const api::RoleBinding& binding, Problems* problems) {
  const bool namespaced = binding.kind() == kRoleBindingKind;
  CheckMetadata(binding.metadata(), namespaced, problems);
  const api::RoleRef& ref = binding.role_ref();
  if (ref.api_group() != kRbacGroup) {
    problems->NotSupported("roleRef.apiGroup", ref.api_group(), {kRbacGroup});
  }
  if (namespaced) {
    if (ref.kind() != kRoleKind && ref.kind() != kClusterRoleKind) {
      problems->NotSupported("roleRef.kind", ref.kind(),
                             {kRoleKind, kClusterRoleKind});
    }
  } else if (ref.kind() != kClusterRoleKind) {
    problems->NotSupported("roleRef.kind", ref.kind(), {kClusterRoleKind});
  }
  if (ref.name().empty()) {
    problems->Required("roleRef.name");
  } else {
    CheckPathSegmentName("roleRef.name", ref.name(), problems);
  }
  if (binding.subjects_size() > kMaxSubjects) {
    problems->TooMany("subjects", binding.subjects_size(), kMaxSubjects);
    return;
  }
  for (int i = 0; i < binding.subjects_size(); ++i) {
    CheckSubject(binding.subjects(i), namespaced, Index("subjects", i),
                 problems);
  }
}

// `ClusterRole.rbac.authorization.k8s.io "view"`, as Kubernetes names an
// invalid object.
std::string ObjectLabel(absl::string_view kind, absl::string_view name) {
  if (kind.empty()) return absl::StrCat("RBAC object ", Quoted(name));
  return absl::StrCat(kind, ".", kRbacGroup, " ", Quoted(name));
}

// The plural resource of each kind, for messages.
absl::string_view ResourceOfKind(absl::string_view kind) {
  if (kind == kRoleKind) return "roles";
  if (kind == kClusterRoleKind) return "clusterroles";
  if (kind == kRoleBindingKind) return "rolebindings";
  if (kind == kClusterRoleBindingKind) return "clusterrolebindings";
  return "";
}

bool IsClusterKind(absl::string_view kind) {
  return kind == kClusterRoleKind || kind == kClusterRoleBindingKind;
}

bool IsBuiltIn(absl::string_view kind, absl::string_view ns,
               absl::string_view name) {
  if (!ns.empty()) return false;
  if (kind == kClusterRoleKind) {
    return name == "cluster-admin" || name == "admin" || name == "edit" ||
           name == "view";
  }
  return kind == kClusterRoleBindingKind && name == "cluster-admin";
}

struct Identity {
  absl::string_view kind;
  absl::string_view ns;
  absl::string_view name;
};

Identity IdentityOf(const api::RbacObject& object) {
  if (object.has_role()) {
    const api::Role& r = object.role();
    return {r.kind(), r.metadata().namespace_(), r.metadata().name()};
  }
  const api::RoleBinding& b = object.binding();
  return {b.kind(), b.metadata().namespace_(), b.metadata().name()};
}

// ---- Built-in ClusterRoles ----

api::PolicyRule Rule(absl::Span<const absl::string_view> verbs,
                     absl::Span<const absl::string_view> groups,
                     absl::Span<const absl::string_view> resources) {
  api::PolicyRule rule;
  for (absl::string_view v : verbs) rule.add_verbs(std::string(v));
  for (absl::string_view g : groups) rule.add_api_groups(std::string(g));
  for (absl::string_view r : resources) rule.add_resources(std::string(r));
  return rule;
}

constexpr absl::string_view kRead[] = {"get", "list", "watch"};
constexpr absl::string_view kWrite[] = {"create", "update", "patch", "delete",
                                        "deletecollection"};
constexpr absl::string_view kReadWrite[] = {
    "get",    "list",  "watch",  "create",
    "update", "patch", "delete", "deletecollection"};

api::RbacObject BuiltInClusterRole(absl::string_view name,
                                   std::vector<api::PolicyRule> rules) {
  api::RbacObject object;
  api::Role* role = object.mutable_role();
  role->set_api_version(std::string(kApiVersion));
  role->set_kind(std::string(kClusterRoleKind));
  role->mutable_metadata()->set_name(std::string(name));
  (*role->mutable_metadata()
        ->mutable_labels())[std::string(kBootstrappingLabel)] =
      std::string(kBootstrappingValue);
  (*role->mutable_metadata()
        ->mutable_annotations())[std::string(kAutoupdateAnnotation)] = "true";
  for (api::PolicyRule& rule : rules) *role->add_rules() = std::move(rule);
  return object;
}

}  // namespace

std::string ApiGroupOf(absl::string_view resource) {
  const ResourceInfo* info = FindResource(resource);
  return info == nullptr ? std::string() : std::string(info->group);
}

bool IsClusterScoped(absl::string_view resource) {
  const ResourceInfo* info = FindResource(resource);
  return info != nullptr && info->cluster_scoped;
}

std::string ForbiddenMessage(const UserInfo& user, const Attributes& attrs) {
  // apierrors.NewForbidden(GroupResource, name, forbiddenMessage(attrs)).
  std::string out = attrs.resource;
  if (!attrs.api_group.empty()) absl::StrAppend(&out, ".", attrs.api_group);
  if (!attrs.name.empty()) {
    out.push_back(' ');
    AppendQuoted(&out, attrs.name);
  }
  out.append(" is forbidden: User ");
  AppendQuoted(&out, user.name);
  absl::StrAppend(&out, " cannot ", attrs.verb, " resource ");
  AppendQuoted(&out,
               attrs.subresource.empty()
                   ? attrs.resource
                   : absl::StrCat(attrs.resource, "/", attrs.subresource));
  out.append(" in API group ");
  AppendQuoted(&out, attrs.api_group);
  if (attrs.namespace_.empty()) {
    out.append(" at the cluster scope");
  } else {
    out.append(" in the namespace ");
    AppendQuoted(&out, attrs.namespace_);
  }
  return out;
}

std::vector<api::RbacObject> BuiltInObjects() {
  std::vector<api::PolicyRule> view = {
      Rule(kRead, {kJobSetGroup}, {"jobsets"}),
      Rule(kRead, {"batch"}, {"jobs"}),
      Rule(kRead, {""}, {"pods", "pods/log", "events"}),
      // As in Kubernetes, view reads ConfigMaps but not Secrets.
      Rule(kRead, {""}, {"configmaps"}),
      // As in Kubernetes, every built-in role below cluster-admin reads
      // Namespaces and none writes them.
      Rule(kRead, {""}, {"namespaces"}),
  };
  // edit: view, plus writes on jobsets, configmaps and secrets (which it
  // may also read: as in Kubernetes, edit is not meant to be safe from
  // escalation through what a workload can reach).
  std::vector<api::PolicyRule> edit = view;
  edit.push_back(Rule(kWrite, {kJobSetGroup}, {"jobsets"}));
  edit.push_back(Rule(kReadWrite, {""}, {"secrets"}));
  edit.push_back(Rule(kWrite, {""}, {"configmaps"}));
  // admin: edit, plus Roles and RoleBindings (in the namespace it is bound
  // in: a RoleBinding confines it there).
  std::vector<api::PolicyRule> admin = edit;
  admin.push_back(Rule(kReadWrite, {kRbacGroup}, {"roles", "rolebindings"}));

  api::PolicyRule all_urls;
  all_urls.add_verbs("*");
  all_urls.add_non_resource_urls("*");

  std::vector<api::RbacObject> objects;
  objects.push_back(BuiltInClusterRole(
      "cluster-admin", {Rule({"*"}, {"*"}, {"*"}), std::move(all_urls)}));
  objects.push_back(BuiltInClusterRole("admin", std::move(admin)));
  objects.push_back(BuiltInClusterRole("edit", std::move(edit)));
  objects.push_back(BuiltInClusterRole("view", std::move(view)));

  api::RbacObject masters;
  api::RoleBinding* binding = masters.mutable_binding();
  binding->set_api_version(std::string(kApiVersion));
  binding->set_kind(std::string(kClusterRoleBindingKind));
  binding->mutable_metadata()->set_name("cluster-admin");
  (*binding->mutable_metadata()
        ->mutable_labels())[std::string(kBootstrappingLabel)] =
      std::string(kBootstrappingValue);
  (*binding->mutable_metadata()
        ->mutable_annotations())[std::string(kAutoupdateAnnotation)] = "true";
  api::Subject* subject = binding->add_subjects();
  subject->set_kind(std::string(kGroupKind));
  subject->set_api_group(std::string(kRbacGroup));
  subject->set_name(std::string(kMastersGroup));
  binding->mutable_role_ref()->set_api_group(std::string(kRbacGroup));
  binding->mutable_role_ref()->set_kind(std::string(kClusterRoleKind));
  binding->mutable_role_ref()->set_name("cluster-admin");
  objects.push_back(std::move(masters));
  return objects;
}

absl::Status ValidateRbacObject(const api::RbacObject& object) {
  Problems problems;
  if (!object.has_role() && !object.has_binding()) {
    problems.Required("object", "one of role or binding");
    return problems.ToStatus("RBAC object");
  }
  const Identity id = IdentityOf(object);
  const absl::string_view api_version = object.has_role()
                                            ? object.role().api_version()
                                            : object.binding().api_version();
  if (api_version.empty()) {
    problems.Required("apiVersion");
  } else if (api_version != kApiVersion) {
    problems.NotSupported("apiVersion", api_version, {kApiVersion});
  }
  absl::string_view label_kind = id.kind;
  if (object.has_role()) {
    if (id.kind != kRoleKind && id.kind != kClusterRoleKind) {
      problems.NotSupported("kind", id.kind, {kRoleKind, kClusterRoleKind});
      label_kind = "";
    } else {
      CheckRole(object.role(), &problems);
    }
  } else {
    if (id.kind != kRoleBindingKind && id.kind != kClusterRoleBindingKind) {
      problems.NotSupported("kind", id.kind,
                            {kRoleBindingKind, kClusterRoleBindingKind});
      label_kind = "";
    } else {
      CheckBinding(object.binding(), &problems);
    }
  }
  // A hostile name is bounded before it is repeated in the message.
  return problems.ToStatus(
      ObjectLabel(label_kind, id.name.substr(0, kMaxStringBytes)));
}

RbacPolicy::RbacPolicy() {
  for (api::RbacObject& object : BuiltInObjects()) {
    const Identity id = IdentityOf(object);
    std::string key = Key(id.kind, id.ns, id.name);
    objects_.emplace(std::move(key), std::move(object));
  }
}

absl::Status RbacPolicy::Put(const api::RbacObject& object) {
  if (absl::Status s = ValidateRbacObject(object); !s.ok()) return s;
  const Identity id = IdentityOf(object);
  if (IsBuiltIn(id.kind, id.ns, id.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        id.kind, " ", Quoted(id.name), " is built in and cannot be changed"));
  }
  objects_[Key(id.kind, id.ns, id.name)] = object;
  return absl::OkStatus();
}

absl::StatusOr<api::RbacObject> RbacPolicy::Remove(
    const api::RbacObjectRef& ref) {
  const absl::string_view resource = ResourceOfKind(ref.kind());
  if (resource.empty()) {
    Problems problems;
    problems.NotSupported("kind", ref.kind(),
                          {kRoleKind, kClusterRoleKind, kRoleBindingKind,
                           kClusterRoleBindingKind});
    return problems.ToStatus("RBAC object reference");
  }
  // Kubernetes ignores a namespace given for a cluster-scoped kind.
  const absl::string_view ns = IsClusterKind(ref.kind())
                                   ? absl::string_view()
                                   : absl::string_view(ref.namespace_());
  if (ns.empty() && !IsClusterKind(ref.kind())) {
    return absl::InvalidArgumentError(absl::StrCat(
        ref.kind(), " ", Quoted(ref.name()), ": namespace: Required value"));
  }
  if (IsBuiltIn(ref.kind(), ns, ref.name())) {
    return absl::InvalidArgumentError(
        absl::StrCat(ref.kind(), " ", Quoted(ref.name()),
                     " is built in and cannot be changed"));
  }
  auto it = objects_.find(Key(ref.kind(), ns, ref.name()));
  if (it == objects_.end()) {
    // Kubernetes' NotFound wording.
    return absl::NotFoundError(absl::StrCat(resource, ".", kRbacGroup, " ",
                                            Quoted(ref.name()), " not found"));
  }
  api::RbacObject removed = std::move(it->second);
  objects_.erase(it);
  return removed;
}

std::vector<api::RbacObject> RbacPolicy::List(
    absl::string_view kind, absl::string_view namespace_) const {
  std::vector<api::RbacObject> out;
  if (kind.empty()) {
    for (absl::string_view k : {kClusterRoleKind, kClusterRoleBindingKind,
                                kRoleKind, kRoleBindingKind}) {
      std::vector<api::RbacObject> of_kind = List(k, namespace_);
      for (api::RbacObject& o : of_kind) out.push_back(std::move(o));
    }
    return out;
  }
  if (ResourceOfKind(kind).empty()) return out;
  std::string prefix = absl::StrCat(kind, "/");
  if (IsClusterKind(kind)) {
    prefix.push_back('/');
  } else if (!namespace_.empty()) {
    absl::StrAppend(&prefix, namespace_, "/");
  }
  for (auto it = objects_.lower_bound(prefix);
       it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    out.push_back(it->second);
  }
  return out;
}

bool RbacPolicy::Allows(const UserInfo& user, const Attributes& attrs,
                        std::string* reason) const {
  // A request on a cluster-scoped resource has no namespace, whatever the
  // caller passed: no RoleBinding reaches nodes or tokens.
  const absl::string_view ns = IsClusterScoped(attrs.resource)
                                   ? absl::string_view()
                                   : absl::string_view(attrs.namespace_);
  return AllowsIn(objects_, user, attrs, ns, reason);
}

absl::Status RbacPolicy::CheckCanGrant(
    const UserInfo& user, absl::string_view namespace_,
    const std::vector<api::PolicyRule>& rules, absl::string_view verb) const {
  // Kubernetes' EscalationAllowed: system:masters may grant anything.
  if (InGroup(user, kMastersGroup)) return absl::OkStatus();
  if (!verb.empty()) {
    // "escalate" on roles (a Role in namespace_) or clusterroles (a
    // ClusterRole), "bind" likewise for bindings. This call does not know
    // the name of the role, so a rule limited to resourceNames does not
    // count; and a RoleBinding may refer to a Role or a ClusterRole, so in a
    // namespace "bind" must be held on both.
    Attributes attrs;
    attrs.verb = std::string(verb);
    attrs.api_group = std::string(kRbacGroup);
    attrs.namespace_ = std::string(namespace_);
    attrs.resource = namespace_.empty() ? "clusterroles" : "roles";
    // Kubernetes asks about clusterroles in the binding's namespace here, so
    // RoleBindings in it count (unlike for a request on clusterroles).
    bool allowed = AllowsIn(objects_, user, attrs, namespace_, nullptr);
    if (allowed && verb == "bind" && !namespace_.empty()) {
      attrs.resource = "clusterroles";
      allowed = AllowsIn(objects_, user, attrs, namespace_, nullptr);
    }
    if (allowed) return absl::OkStatus();
  }

  std::vector<const api::PolicyRule*> owner;
  VisitRulesFor(objects_, user, namespace_,
                [&](const api::RoleBinding&, const api::Subject&,
                    const api::PolicyRule& rule) {
                  owner.push_back(&rule);
                  return true;
                });
  // A rule one owner rule covers whole is not broken down; the others are,
  // within a budget (each combination costs a scan of the owner rules).
  int64_t budget = kMaxGrantCombinations;
  std::optional<Permission> missing;
  for (const api::PolicyRule& rule : rules) {
    bool whole = false;
    for (const api::PolicyRule* o : owner) {
      if (CoversWhole(*o, rule)) {
        whole = true;
        break;
      }
    }
    if (whole) continue;
    budget -= CombinationsOf(rule);
    if (budget < 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the rules expand to more than ", kMaxGrantCombinations,
          " (apiGroup, resource, verb, resourceName) combinations to check"));
    }
    missing = FirstNotHeld(owner, rule);
    if (missing.has_value()) break;
  }
  if (!missing.has_value()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "user ", Quoted(user.name), " (groups=", QuotedList(user.groups),
      ") is attempting to grant RBAC permissions not currently held:\n",
      DescribePermission(*missing)));
}

std::vector<api::PolicyRule> RbacPolicy::RulesOf(
    const api::RoleRef& ref, absl::string_view namespace_) const {
  std::string key;
  const api::Role* role = FindRole(objects_, ref, namespace_, &key);
  if (role == nullptr) return {};
  return {role->rules().begin(), role->rules().end()};
}

}  // namespace jobset::auth
