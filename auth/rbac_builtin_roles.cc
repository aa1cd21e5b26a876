#include "auth/rbac_builtin_roles.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "auth/rbac_authorizer.h"

namespace jobset::auth {
namespace {

// Kubernetes' labels and annotation on its bootstrap policy.
constexpr absl::string_view kBootstrappingLabel = "kubernetes.io/bootstrapping";
constexpr absl::string_view kBootstrappingValue = "rbac-defaults";
constexpr absl::string_view kAutoupdateAnnotation =
    "rbac.authorization.kubernetes.io/autoupdate";

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

void MarkBootstrap(api::ObjectMeta* meta) {
  (*meta->mutable_labels())[std::string(kBootstrappingLabel)] =
      std::string(kBootstrappingValue);
  (*meta->mutable_annotations())[std::string(kAutoupdateAnnotation)] = "true";
}

api::RbacObject BuiltInClusterRole(absl::string_view name,
                                   std::vector<api::PolicyRule> rules) {
  api::RbacObject object;
  api::Role* role = object.mutable_role();
  role->set_api_version(std::string(kRbacApiVersion));
  role->set_kind(std::string(kClusterRoleKind));
  role->mutable_metadata()->set_name(std::string(name));
  MarkBootstrap(role->mutable_metadata());
  for (api::PolicyRule& rule : rules) *role->add_rules() = std::move(rule);
  return object;
}

}  // namespace

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
      // Kueue's objects: every built-in role reads them all.
      Rule(kRead, {kKueueGroup},
           {"resourceflavors", "clusterqueues", "cohorts", "localqueues",
            "workloadpriorityclasses", "workloads"}),
      // And Kueue's visibility API: who waits, in what order (a
      // RoleBinding grants the LocalQueues' of its namespace only).
      Rule({"get"}, {kVisibilityGroup},
           {"clusterqueues/pendingworkloads", "localqueues/pendingworkloads"}),
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
  // And the LocalQueues of its namespace, which point its users at a
  // ClusterQueue. Quota (ClusterQueues, ResourceFlavors, Cohorts) and
  // priorities are the cluster's, Workloads jobsetd's: below cluster-admin
  // no built-in role writes them.
  admin.push_back(Rule(kWrite, {kKueueGroup}, {"localqueues"}));

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
  binding->set_api_version(std::string(kRbacApiVersion));
  binding->set_kind(std::string(kClusterRoleBindingKind));
  binding->mutable_metadata()->set_name("cluster-admin");
  MarkBootstrap(binding->mutable_metadata());
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

bool IsBuiltInObject(absl::string_view kind, absl::string_view namespace_,
                     absl::string_view name) {
  if (!namespace_.empty()) return false;
  if (kind == kClusterRoleKind) {
    return name == "cluster-admin" || name == "admin" || name == "edit" ||
           name == "view";
  }
  return kind == kClusterRoleBindingKind && name == "cluster-admin";
}

Attributes SaveSnapshotAttributes() {
  return {.verb = std::string(kSaveSnapshotVerb),
          .api_group = std::string(kJobSetGroup),
          .resource = "snapshots"};
}

}  // namespace jobset::auth
