#include "cli/cmd/kinds.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/defaults.h"
#include "api/kueue_manifest.h"
#include "cli/cmd/kind_calls.h"
#include "cli/kueue_output.h"

namespace jobset::cli {
namespace {

const std::vector<std::string> kNameAndNamespace = {"metadata.name",
                                                    "metadata.namespace"};
const std::vector<std::string> kName = {"metadata.name"};
constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";
// Field selectors on custom resources are metadata.name (and namespace).
constexpr char kKueueGroup[] = "kueue.x-k8s.io";
constexpr char kRbacVersion[] = "rbac.authorization.k8s.io/v1";

// get's columns (cli/output.h), per kind.
std::vector<Row> JobSetTable(const std::vector<Object>& o, absl::Time now,
                             bool) {
  return JobSetRows(MessagesAs<api::JobSet>(o), now);
}
std::vector<Row> JobTable(const std::vector<Object>& o, absl::Time now, bool) {
  return JobRows(MessagesAs<api::Job>(o), now);
}
std::vector<Row> PodTable(const std::vector<Object>& o, absl::Time now,
                          bool wide) {
  return PodRows(MessagesAs<api::Pod>(o), now, wide);
}
std::vector<Row> NodeTable(const std::vector<Object>& o, absl::Time now,
                           bool wide) {
  return NodeRows(MessagesAs<api::Node>(o), now, wide);
}
std::vector<Row> EventTable(const std::vector<Object>& o, absl::Time now,
                            bool) {
  return EventRows(MessagesAs<api::Event>(o), now);
}
std::vector<Row> NamespaceTable(const std::vector<Object>& o, absl::Time now,
                                bool) {
  return NamespaceRows(MessagesAs<api::Namespace>(o), now);
}
std::vector<Row> SecretTable(const std::vector<Object>& o, absl::Time now,
                             bool) {
  return SecretRows(MessagesAs<api::Secret>(o), now);
}
std::vector<Row> ConfigMapTable(const std::vector<Object>& o, absl::Time now,
                                bool) {
  return ConfigMapRows(MessagesAs<api::ConfigMap>(o), now);
}
std::vector<Row> ResourceFlavorTable(const std::vector<Object>& o,
                                     absl::Time now, bool) {
  return ResourceFlavorRows(MessagesAs<api::ResourceFlavor>(o), now);
}
std::vector<Row> ClusterQueueTable(const std::vector<Object>& o, absl::Time,
                                   bool wide) {
  return ClusterQueueRows(MessagesAs<api::ClusterQueue>(o), wide);
}
std::vector<Row> CohortTable(const std::vector<Object>& o, absl::Time now,
                             bool) {
  return CohortRows(MessagesAs<api::Cohort>(o), now);
}
std::vector<Row> LocalQueueTable(const std::vector<Object>& o, absl::Time,
                                 bool) {
  return LocalQueueRows(MessagesAs<api::LocalQueue>(o));
}
std::vector<Row> WorkloadPriorityClassTable(const std::vector<Object>& o,
                                            absl::Time, bool) {
  return WorkloadPriorityClassRows(MessagesAs<api::WorkloadPriorityClass>(o));
}
std::vector<Row> WorkloadTable(const std::vector<Object>& o, absl::Time now,
                               bool) {
  return WorkloadRows(MessagesAs<api::Workload>(o), now);
}
std::vector<Row> TokenTable(const std::vector<Object>& o, absl::Time now,
                            bool) {
  return TokenRows(MessagesAs<api::TokenInfo>(o), now);
}

// The table, in the order users see kinds listed (help, completion, errors).
// The aliases are exactly those jobsetctl accepted before the table.
std::vector<KindInfo> MakeKinds() {
  return {
      {.plural = "jobsets",
       .singular = "jobset",
       .aliases = {"js", "jobsets.jobset.x-k8s.io"},
       .group = "jobset.x-k8s.io",
       .api_version = api::kApiVersion,
       .kind = api::kKind,
       .get = {.fields = kNameAndNamespace},
       .calls = {.get = GetJobSet,
                 .list = ListJobSets,
                 .watch = WatchJobSets,
                 .apply = ApplyJobSet,
                 .remove = DeleteJobSet,
                 .describe = DescribeJobSetNamed},
       .rows = JobSetTable},
      {.plural = "jobs",
       .singular = "job",
       .group = "batch",
       .api_version = "batch/v1",
       .kind = "Job",
       .get = {.fields = {"metadata.name", "metadata.namespace",
                          "status.successful"},
               .by_jobset = true,
               .poll_watch = true},
       .calls = {.list = ListJobs},
       .rows = JobTable},
      {.plural = "pods",
       .singular = "pod",
       .aliases = {"po"},
       .api_version = "v1",
       .kind = "Pod",
       .get = {.fields = {"metadata.name", "metadata.namespace",
                          "spec.nodeName", "spec.restartPolicy", "status.phase",
                          "status.podIP"},
               .by_jobset = true,
               .poll_watch = true},
       .calls = {.list = ListPods},
       .rows = PodTable},
      {.plural = "nodes",
       .singular = "node",
       .aliases = {"no"},
       .namespaced = false,
       .api_version = "v1",
       .kind = "Node",
       .get = {.fields = {"metadata.name", "spec.unschedulable"},
               .poll_watch = true},
       .calls = {.get = GetNode,
                 .list = ListNodes,
                 .remove = DeleteNode,
                 .describe = DescribeNodeNamed},
       .rows = NodeTable},
      // Core events for -o name (event/NAME); the JSON is events.k8s.io's.
      {.plural = "events",
       .singular = "event",
       .aliases = {"ev"},
       .api_version = "events.k8s.io/v1",
       .kind = "Event",
       .get = {.fields = {"metadata.name", "metadata.namespace", "reason",
                          "type"},
               .by_name = false,
               .by_jobset = true,
               .poll_watch = true},
       .calls = {.list = ListEvents},
       .rows = EventTable},
      {.plural = "namespaces",
       .singular = "namespace",
       .aliases = {"ns"},
       .namespaced = false,
       .api_version = "v1",
       .kind = "Namespace",
       .calls = {.get = GetNamespace,
                 .list = ListNamespaces,
                 .apply = ApplyNamespace,
                 .remove = DeleteNamespace},
       .rows = NamespaceTable},
      {.plural = "secrets",
       .singular = "secret",
       .api_version = "v1",
       .kind = "Secret",
       .get = {.fields = {"metadata.name", "metadata.namespace", "type"},
               .all_namespaces = false},
       .calls = {.get = GetSecret,
                 .list = ListSecrets,
                 .apply = ApplySecret,
                 .remove = DeleteSecret,
                 .describe = DescribeSecretNamed},
       .rows = SecretTable},
      {.plural = "configmaps",
       .singular = "configmap",
       .aliases = {"cm"},
       .api_version = "v1",
       .kind = "ConfigMap",
       .get = {.fields = kNameAndNamespace, .all_namespaces = false},
       .calls = {.get = GetConfigMap,
                 .list = ListConfigMaps,
                 .apply = ApplyConfigMap,
                 .remove = DeleteConfigMap,
                 .describe = DescribeConfigMapNamed},
       .rows = ConfigMapTable},
      // Kueue's objects (KueueService), named as Kueue's CRDs name them.
      {.plural = "resourceflavors",
       .singular = "resourceflavor",
       .aliases = {"flavor", "flavors", "rf", "resourceflavors.kueue.x-k8s.io"},
       .namespaced = false,
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "ResourceFlavor",
       .get = {.fields = kName},
       .calls = KueueCalls("ResourceFlavor"),
       .rows = ResourceFlavorTable},
      {.plural = "clusterqueues",
       .singular = "clusterqueue",
       .aliases = {"cq", "clusterqueues.kueue.x-k8s.io"},
       .namespaced = false,
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "ClusterQueue",
       .get = {.fields = kName},
       .calls = KueueCalls("ClusterQueue"),
       .rows = ClusterQueueTable},
      {.plural = "cohorts",
       .singular = "cohort",
       .aliases = {"co", "cohorts.kueue.x-k8s.io"},
       .namespaced = false,
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "Cohort",
       .get = {.fields = kName},
       .calls = KueueCalls("Cohort"),
       .rows = CohortTable},
      {.plural = "localqueues",
       .singular = "localqueue",
       .aliases = {"queue", "queues", "lq", "localqueues.kueue.x-k8s.io"},
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "LocalQueue",
       .get = {.fields = kNameAndNamespace},
       .calls = KueueCalls("LocalQueue"),
       .rows = LocalQueueTable},
      {.plural = "workloadpriorityclasses",
       .singular = "workloadpriorityclass",
       .aliases = {"wpc", "workloadpriorityclasses.kueue.x-k8s.io"},
       .namespaced = false,
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "WorkloadPriorityClass",
       .get = {.fields = kName},
       .calls = KueueCalls("WorkloadPriorityClass"),
       .rows = WorkloadPriorityClassTable},
      {.plural = "workloads",
       .singular = "workload",
       .aliases = {"kwl", "kueueworkload", "kueueworkloads",
                   "workloads.kueue.x-k8s.io"},
       .group = kKueueGroup,
       .api_version = std::string(api::kKueueApiVersion),
       .kind = "Workload",
       .get = {.fields = kNameAndNamespace},
       .calls = KueueCalls("Workload"),
       .rows = WorkloadTable},
      // jobsetd's users' tokens: no Kubernetes shape (-o json: TokenInfo).
      {.plural = "tokens",
       .singular = "token",
       .namespaced = false,
       .get = {.selectors = false},
       .calls = {.list = ListTokens, .remove = DeleteToken},
       .rows = TokenTable},
      {.plural = "roles",
       .singular = "role",
       .aliases = {"roles.rbac.authorization.k8s.io"},
       .group = kRbacGroup,
       .api_version = kRbacVersion,
       .kind = "Role",
       .get = {.selectors = false},
       .calls = {.list = ListRoles,
                 .apply = ApplyRbacObject,
                 .remove = DeleteRole},
       .rows = RoleRows},
      {.plural = "rolebindings",
       .singular = "rolebinding",
       .aliases = {"rolebindings.rbac.authorization.k8s.io"},
       .group = kRbacGroup,
       .api_version = kRbacVersion,
       .kind = "RoleBinding",
       .get = {.selectors = false},
       .calls = {.list = ListRoleBindings,
                 .apply = ApplyRbacObject,
                 .remove = DeleteRoleBinding},
       .rows = RoleBindingRows},
      {.plural = "clusterroles",
       .singular = "clusterrole",
       .aliases = {"clusterroles.rbac.authorization.k8s.io"},
       .namespaced = false,
       .group = kRbacGroup,
       .api_version = kRbacVersion,
       .kind = "ClusterRole",
       .get = {.selectors = false},
       .calls = {.list = ListClusterRoles,
                 .apply = ApplyRbacObject,
                 .remove = DeleteClusterRole},
       .rows = RoleRows},
      {.plural = "clusterrolebindings",
       .singular = "clusterrolebinding",
       .aliases = {"clusterrolebindings.rbac.authorization.k8s.io"},
       .namespaced = false,
       .group = kRbacGroup,
       .api_version = kRbacVersion,
       .kind = "ClusterRoleBinding",
       .get = {.selectors = false},
       .calls = {.list = ListClusterRoleBindings,
                 .apply = ApplyRbacObject,
                 .remove = DeleteClusterRoleBinding},
       .rows = RoleBindingRows},
  };
}

}  // namespace

std::string KindInfo::Resource() const {
  return group.empty() ? singular : absl::StrCat(singular, ".", group);
}

std::string KindInfo::GroupResource() const {
  return group.empty() ? plural : absl::StrCat(plural, ".", group);
}

const std::vector<KindInfo>& Kinds() {
  static const std::vector<KindInfo>* const kinds =
      new std::vector<KindInfo>(MakeKinds());
  return *kinds;
}

const KindInfo* FindKind(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (const KindInfo& kind : Kinds()) {
    if (lower == kind.plural || lower == kind.singular) return &kind;
    for (const std::string& alias : kind.aliases) {
      if (lower == alias) return &kind;
    }
  }
  return nullptr;
}

const KindInfo* FindKindOfManifest(absl::string_view kind) {
  if (kind.empty()) return nullptr;
  for (const KindInfo& info : Kinds()) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

const KindInfo& KindNamed(absl::string_view plural) {
  const KindInfo* kind = FindKind(plural);
  if (kind == nullptr || kind->plural != plural) {
    // A verb names a kind the table lacks: a bug.
    std::fprintf(stderr, "jobsetctl: no kind \"%.*s\" in cli/cmd/kinds.cc\n",
                 static_cast<int>(plural.size()), plural.data());
    std::abort();
  }
  return *kind;
}

std::string KindList(const std::function<bool(const KindInfo&)>& has,
                     absl::string_view last) {
  std::vector<std::string> names;
  for (const KindInfo& kind : Kinds()) {
    if (has(kind)) names.push_back(kind.plural);
  }
  if (names.size() < 2) return absl::StrJoin(names, "");
  const std::string tail = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " ", last, " ", tail);
}

}  // namespace jobset::cli
