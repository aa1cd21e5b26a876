#include "auth/rbac_escalation.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/quote.h"

namespace jobset::auth {
namespace {

using ::google::protobuf::RepeatedPtrField;

constexpr absl::string_view kAll = "*";
// The most bytes of missing permissions a refusal lists; the rest are
// counted. A status message travels in gRPC trailers, which are small.
constexpr size_t kMaxListedBytes = 4096;
// An object's name is bounded before it is repeated in a refusal (it is not
// validated yet: the check comes first).
constexpr size_t kMaxNameBytes = 253;

// Whether `entry` is "*/<subresource>".
bool IsAnyWith(absl::string_view entry, absl::string_view subresource) {
  return absl::ConsumePrefix(&entry, "*/") && entry == subresource;
}

// One (group, resource, verb, name) or (nonResourceURL, verb) combination:
// one rule of Kubernetes' BreakdownRule.
struct Permission {
  absl::string_view group;
  absl::string_view resource;
  absl::string_view verb;
  absl::string_view name;  // empty: any name
  absl::string_view url;   // set only for a non-resource permission
};

bool ResourceCovers(const RepeatedPtrField<std::string>& owner,
                    absl::string_view resource) {
  if (ListHas(owner, kAll) || ListHas(owner, resource)) return true;
  const size_t slash = resource.find('/');
  if (slash == absl::string_view::npos) return false;
  for (const std::string& entry : owner) {
    if (IsAnyWith(entry, resource.substr(slash + 1))) return true;
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
  if (!ListHasOrAll(owner.verbs(), p.verb)) return false;
  if (!owner.resource_names().empty() &&
      (p.name.empty() || !ListHas(owner.resource_names(), p.name))) {
    return false;
  }
  if (!p.url.empty()) return UrlCovers(owner.non_resource_urls(), p.url);
  return ListHasOrAll(owner.api_groups(), p.group) &&
         ResourceCovers(owner.resources(), p.resource);
}

bool HasAllOrAll(const RepeatedPtrField<std::string>& owner,
                 const RepeatedPtrField<std::string>& wanted) {
  if (ListHas(owner, kAll)) return true;
  for (const std::string& w : wanted) {
    if (!ListHas(owner, w)) return false;
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
      if (!ListHas(owner.resource_names(), name)) return false;
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

int64_t CombinationsOf(const api::PolicyRule& rule) {
  // Each factor is at most 256 in a validated rule; clamp anyway so that an
  // unvalidated one cannot overflow.
  auto clamp = [](int n) {
    return static_cast<int64_t>(n > 1 << 12 ? 1 << 12 : n);
  };
  const int64_t names =
      rule.resource_names().empty() ? 1 : clamp(rule.resource_names_size());
  return clamp(rule.verbs_size()) *
         (clamp(rule.api_groups_size()) * clamp(rule.resources_size()) * names +
          clamp(rule.non_resource_urls_size()));
}

// Appends every combination of `rule` that no owner rule covers, in
// Kubernetes' BreakdownRule order (group, resource, verb, name; then
// non-resource URLs by verb).
void AppendNotHeld(const std::vector<const api::PolicyRule*>& owner,
                   const api::PolicyRule& rule,
                   std::vector<Permission>* missing) {
  auto check = [&](const Permission& p) {
    for (const api::PolicyRule* o : owner) {
      if (Covers(*o, p)) return;
    }
    missing->push_back(p);
  };
  for (const std::string& group : rule.api_groups()) {
    for (const std::string& resource : rule.resources()) {
      for (const std::string& verb : rule.verbs()) {
        if (rule.resource_names().empty()) {
          check({group, resource, verb, "", ""});
          continue;
        }
        for (const std::string& name : rule.resource_names()) {
          check({group, resource, verb, name, ""});
        }
      }
    }
  }
  for (const std::string& url : rule.non_resource_urls()) {
    for (const std::string& verb : rule.verbs()) {
      check({"", "", verb, "", url});
    }
  }
}

// Kubernetes' CompactRules over broken-down permissions, then CompactString
// of each: the verbs of one (group, resource, name) gather on one line, in
// the order they were found (repeats kept, as Kubernetes keeps them); each
// non-resource permission is a line of its own. Returns the lines sorted and
// without repeats (Kubernetes' sets.String).
std::set<std::string> DescribeMissing(const std::vector<Permission>& missing) {
  using Key =
      std::tuple<absl::string_view, absl::string_view, absl::string_view>;
  std::map<Key, std::vector<absl::string_view>> verbs;
  std::set<std::string> lines;
  for (const Permission& p : missing) {
    if (!p.url.empty()) {
      std::string line = "{NonResourceURLs:[";
      AppendQuoted(&line, p.url);
      line.append("], Verbs:[");
      AppendQuoted(&line, p.verb);
      line.append("]}");
      lines.insert(std::move(line));
      continue;
    }
    verbs[Key(p.group, p.resource, p.name)].push_back(p.verb);
  }
  for (const auto& [key, key_verbs] : verbs) {
    const auto& [group, resource, name] = key;
    std::string line = "{APIGroups:[";
    AppendQuoted(&line, group);
    line.append("], Resources:[");
    AppendQuoted(&line, resource);
    line.append("]");
    if (!name.empty()) {
      line.append(", ResourceNames:[");
      AppendQuoted(&line, name);
      line.append("]");
    }
    absl::StrAppend(&line, ", Verbs:", QuoteList(key_verbs), "}");
    lines.insert(std::move(line));
  }
  return lines;
}

// The refusal's list: as many lines as fit kMaxListedBytes, then how many
// more there are.
std::string ListMissing(const std::set<std::string>& lines) {
  std::string out;
  size_t shown = 0;
  for (const std::string& line : lines) {
    if (out.size() + line.size() + 1 > kMaxListedBytes) break;
    if (shown > 0) out.push_back('\n');
    out.append(line);
    ++shown;
  }
  if (shown < lines.size()) {
    absl::StrAppend(&out, shown > 0 ? "\n" : "", "... and ",
                    lines.size() - shown, " more not shown");
  }
  return out;
}

bool InGroup(const UserInfo& user, absl::string_view group) {
  for (const std::string& g : user.groups) {
    if (g == group) return true;
  }
  return false;
}

// Whether `user` may `verb` roles in `namespace_` (see CheckCanGrant).
bool MayEscalateOrBind(const RbacObjects& objects, const UserInfo& user,
                       absl::string_view namespace_, absl::string_view verb) {
  Attributes attrs;
  attrs.verb = std::string(verb);
  attrs.api_group = std::string(kRbacGroup);
  // Kubernetes asks about clusterroles in the binding's namespace here, so
  // RoleBindings in it count (unlike for a request on clusterroles).
  attrs.namespace_ = std::string(namespace_);
  attrs.resource = namespace_.empty() ? "clusterroles" : "roles";
  if (!Authorize(objects, user, attrs)) return false;
  if (verb != "bind" || namespace_.empty()) return true;
  attrs.resource = "clusterroles";
  return Authorize(objects, user, attrs);
}

}  // namespace

absl::Status ConfirmNoEscalation(const RbacObjects& objects,
                                 const UserInfo& user,
                                 absl::string_view namespace_,
                                 absl::Span<const api::PolicyRule> rules) {
  std::vector<const api::PolicyRule*> owner;
  VisitRulesFor(objects, user, namespace_,
                [&](const api::RoleBinding&, const api::Subject&,
                    const api::PolicyRule& rule) {
                  owner.push_back(&rule);
                  return true;
                });
  // A rule one owner rule covers whole is not broken down; the others are,
  // within a budget (each combination costs a scan of the owner rules).
  int64_t budget = kMaxGrantCombinations;
  std::vector<Permission> missing;
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
    AppendNotHeld(owner, rule, &missing);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "user ", Quote(user.name), " (groups=", QuoteList(user.groups),
      ") is attempting to grant RBAC permissions not currently held:\n",
      ListMissing(DescribeMissing(missing))));
}

bool EscalationAllowed(const UserInfo& user) {
  return InGroup(user, kMastersGroup);
}

absl::Status CheckCanGrant(const RbacObjects& objects, const UserInfo& user,
                           absl::string_view namespace_,
                           absl::Span<const api::PolicyRule> rules,
                           absl::string_view verb) {
  if (EscalationAllowed(user)) return absl::OkStatus();
  if (!verb.empty() && MayEscalateOrBind(objects, user, namespace_, verb)) {
    return absl::OkStatus();
  }
  return ConfirmNoEscalation(objects, user, namespace_, rules);
}

absl::Status CheckCanApply(const RbacObjects& objects, const UserInfo& user,
                           const api::RbacObject& object) {
  const bool is_role = object.has_role();
  if (!is_role && !object.has_binding()) return absl::OkStatus();
  const absl::string_view kind =
      is_role ? object.role().kind() : object.binding().kind();
  const api::ObjectMeta& meta =
      is_role ? object.role().metadata() : object.binding().metadata();
  const absl::string_view ns = IsClusterRbacKind(kind)
                                   ? absl::string_view()
                                   : absl::string_view(meta.namespace_());
  std::vector<api::PolicyRule> rules;
  if (is_role) {
    rules.assign(object.role().rules().begin(), object.role().rules().end());
  } else if (const api::Role* role =
                 FindRole(objects, object.binding().role_ref(), ns);
             role != nullptr) {
    rules.assign(role->rules().begin(), role->rules().end());
  }
  absl::Status s =
      CheckCanGrant(objects, user, ns, rules, is_role ? "escalate" : "bind");
  if (s.code() != absl::StatusCode::kPermissionDenied) return s;
  // apierrors.NewForbidden(GroupResource, name, err).
  const absl::string_view resource = ResourceOfRbacKind(kind);
  std::string prefix;
  if (resource.empty()) {
    prefix = "forbidden: ";
  } else {
    absl::StrAppend(&prefix, resource, ".", kRbacGroup);
    if (!meta.name().empty()) {
      prefix.push_back(' ');
      AppendQuoted(&prefix,
                   absl::string_view(meta.name()).substr(0, kMaxNameBytes));
    }
    prefix.append(" is forbidden: ");
  }
  return absl::PermissionDeniedError(absl::StrCat(prefix, s.message()));
}

}  // namespace jobset::auth
