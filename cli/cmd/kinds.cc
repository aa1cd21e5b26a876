#include "cli/cmd/kinds.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/defaults.h"
#include "cli/describe.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::cli {
namespace {

template <typename T>
std::vector<Object> Objects(
    const google::protobuf::RepeatedPtrField<T>& items) {
  std::vector<Object> objects;
  objects.reserve(items.size());
  for (const T& item : items) objects.push_back(MakeObject(item));
  return objects;
}

// From a Client call's answer to an Object.
template <typename T>
absl::StatusOr<Object> ToObject(absl::StatusOr<T> item) {
  if (!item.ok()) return item.status();
  return MakeObject(*std::move(item));
}

// Whether a Client call that answered `status` reached no jobsetd.
bool Unreachable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

// ---- JobSets (JobSetService) ----

// Whether two JobSets agree on what apply owns: labels, annotations and spec
// (the controller may have written status in between).
bool SameApplied(const api::JobSet& a, const api::JobSet& b) {
  auto owned = [](const api::JobSet& js) {
    api::JobSet out;
    *out.mutable_metadata()->mutable_labels() = js.metadata().labels();
    *out.mutable_metadata()->mutable_annotations() =
        js.metadata().annotations();
    *out.mutable_spec() = js.spec();
    return out;
  };
  return google::protobuf::util::MessageDifferencer::Equals(owned(a), owned(b));
}

absl::StatusOr<Object> GetJobSet(Client& client, const std::string& ns,
                                 const std::string& name) {
  api::GetJobSetRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return ToObject(client.Get(request));
}

absl::StatusOr<ListResult> ListJobSets(Client& client,
                                       const ListOptions& options) {
  api::ListJobSetsRequest request;
  request.set_namespace_(options.namespace_);
  request.set_all_namespaces(options.all_namespaces);
  request.set_label_selector(options.label_selector);
  absl::StatusOr<api::ListJobSetsResponse> list = client.List(request);
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), list->resource_version()};
}

absl::Status WatchJobSets(
    Client& client, const ListOptions& options,
    const std::string& resource_version, absl::Time deadline,
    const std::function<bool(const std::string&, const Object&)>& on_event) {
  api::WatchJobSetsRequest request;
  request.set_namespace_(options.namespace_);
  request.set_all_namespaces(options.all_namespaces);
  request.set_label_selector(options.label_selector);
  request.set_resource_version(resource_version);
  return client.Watch(request, deadline, [&](const api::WatchEvent& event) {
    return on_event(event.type(), MakeObject(event.object()));
  });
}

// Applies (create_only: creates) one JobSet: a JobSet that exists gets
// labels, annotations and spec replaced (apply's "configure").
absl::StatusOr<Applied> ApplyJobSet(Client& client,
                                    const google::protobuf::Message& message,
                                    const ApplyOptions& options) {
  const auto& jobset = static_cast<const api::JobSet&>(message);
  const api::ObjectMeta& meta = jobset.metadata();
  if (!options.create_only && !meta.name().empty()) {
    api::GetJobSetRequest get;
    get.set_namespace_(meta.namespace_());
    get.set_name(meta.name());
    absl::StatusOr<api::JobSet> existing = client.Get(get);
    if (!existing.ok() &&
        existing.status().code() != absl::StatusCode::kNotFound) {
      return existing.status();
    }
    if (existing.ok()) {
      api::UpdateJobSetRequest update;
      *update.mutable_jobset() = jobset;
      update.set_dry_run(options.dry_run);
      absl::StatusOr<api::JobSet> updated = client.Update(update);
      if (!updated.ok()) return updated.status();
      Applied applied;
      applied.outcome = SameApplied(*updated, *existing) ? Applied::kUnchanged
                                                         : Applied::kConfigured;
      applied.name = updated->metadata().name();
      return applied;
    }
  }
  api::CreateJobSetRequest create;
  *create.mutable_jobset() = jobset;
  create.set_dry_run(options.dry_run);
  absl::StatusOr<api::CreateJobSetResponse> created = client.Create(create);
  if (!created.ok()) return created.status();
  Applied applied;
  applied.outcome = created->created()    ? Applied::kCreated
                    : options.create_only ? Applied::kAlreadyExists
                                          : Applied::kUnchanged;
  applied.name = created->jobset().metadata().name();
  applied.warnings.assign(created->warnings().begin(),
                          created->warnings().end());
  return applied;
}

absl::Status DeleteJobSet(Client& client, const std::string& ns,
                          const std::string& name) {
  api::DeleteJobSetRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return client.Delete(request).status();
}

absl::StatusOr<std::string> DescribeJobSetNamed(Client& client,
                                                const std::string& ns,
                                                const std::string& name,
                                                absl::Time now) {
  api::GetJobSetRequest get;
  get.set_namespace_(ns);
  get.set_name(name);
  absl::StatusOr<api::JobSet> jobset = client.Get(get);
  if (!jobset.ok()) return jobset.status();
  api::ListPodsRequest pods_request;
  pods_request.set_namespace_(ns);
  pods_request.set_jobset(name);
  absl::StatusOr<api::ListPodsResponse> pods = client.ListPods(pods_request);
  if (!pods.ok()) return pods.status();
  api::ListEventsRequest events_request;
  events_request.set_namespace_(ns);
  events_request.set_jobset(name);
  absl::StatusOr<api::ListEventsResponse> events =
      client.ListEvents(events_request);
  if (!events.ok()) return events.status();
  return DescribeJobSet(
      *jobset,
      std::vector<api::Pod>(pods->items().begin(), pods->items().end()),
      std::vector<api::Event>(events->items().begin(), events->items().end()),
      now);
}

// ---- a JobSet's jobs, pods and events ----

// Lists with `list` in options' namespace, or with all_namespaces in each
// namespace that holds a JobSet (jobs, pods and events exist only under
// JobSets; jobsetd lists them per namespace).
template <typename Request, typename Response,
          absl::StatusOr<Response> (Client::*kList)(const Request&)>
absl::StatusOr<ListResult> ListChildren(Client& client,
                                        const ListOptions& options) {
  std::vector<std::string> namespaces = {options.namespace_};
  if (options.all_namespaces) {
    api::ListJobSetsRequest request;
    request.set_all_namespaces(true);
    absl::StatusOr<api::ListJobSetsResponse> list = client.List(request);
    if (!list.ok()) return list.status();
    std::set<std::string> found;
    for (const api::JobSet& jobset : list->items()) {
      found.insert(jobset.metadata().namespace_());
    }
    namespaces.assign(found.begin(), found.end());
  }
  ListResult result;
  for (const std::string& ns : namespaces) {
    Request request;
    request.set_namespace_(ns);
    request.set_jobset(options.jobset);
    absl::StatusOr<Response> listed = (client.*kList)(request);
    if (!listed.ok()) return listed.status();
    for (const auto& item : listed->items()) {
      result.items.push_back(MakeObject(item));
    }
  }
  return result;
}

// ---- nodes (NodeService) ----

absl::StatusOr<ListResult> ListNodes(Client& client, const ListOptions&) {
  absl::StatusOr<api::ListNodesResponse> list = client.ListNodes();
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), ""};
}

// ---- v1 Namespace, Secret and ConfigMap objects ----

// A created/unchanged answer as an Applied.
template <typename Response>
absl::StatusOr<Applied> AppliedOf(const absl::StatusOr<Response>& response,
                                  const std::string& name) {
  if (!response.ok()) return response.status();
  Applied applied;
  applied.outcome = response->created()     ? Applied::kCreated
                    : response->unchanged() ? Applied::kUnchanged
                                            : Applied::kConfigured;
  applied.name = name;
  return applied;
}

absl::StatusOr<ListResult> ListNamespaces(Client& client,
                                          const ListOptions& options) {
  api::ListNamespacesRequest request;
  request.set_label_selector(options.label_selector);
  absl::StatusOr<api::ListNamespacesResponse> list =
      client.ListNamespaces(request);
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), ""};
}

absl::StatusOr<Applied> ApplyNamespace(Client& client,
                                       const google::protobuf::Message& message,
                                       const ApplyOptions& options) {
  api::ApplyNamespaceRequest request;
  *request.mutable_namespace_() = static_cast<const api::Namespace&>(message);
  request.set_create_only(options.create_only);
  request.set_dry_run(options.dry_run);
  return AppliedOf(client.ApplyNamespace(request),
                   request.namespace_().metadata().name());
}

absl::StatusOr<ListResult> ListSecrets(Client& client,
                                       const ListOptions& options) {
  api::ListSecretsRequest request;
  request.set_namespace_(options.namespace_);
  request.set_label_selector(options.label_selector);
  absl::StatusOr<api::ListSecretsResponse> list = client.ListSecrets(request);
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), ""};
}

absl::StatusOr<Applied> ApplySecret(Client& client,
                                    const google::protobuf::Message& message,
                                    const ApplyOptions& options) {
  api::ApplySecretRequest request;
  *request.mutable_secret() = static_cast<const api::Secret&>(message);
  request.set_create_only(options.create_only);
  request.set_dry_run(options.dry_run);
  return AppliedOf(client.ApplySecret(request),
                   request.secret().metadata().name());
}

absl::StatusOr<ListResult> ListConfigMaps(Client& client,
                                          const ListOptions& options) {
  api::ListConfigMapsRequest request;
  request.set_namespace_(options.namespace_);
  request.set_label_selector(options.label_selector);
  absl::StatusOr<api::ListConfigMapsResponse> list =
      client.ListConfigMaps(request);
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), ""};
}

absl::StatusOr<Applied> ApplyConfigMap(Client& client,
                                       const google::protobuf::Message& message,
                                       const ApplyOptions& options) {
  api::ApplyConfigMapRequest request;
  *request.mutable_config_map() = static_cast<const api::ConfigMap&>(message);
  request.set_create_only(options.create_only);
  request.set_dry_run(options.dry_run);
  return AppliedOf(client.ApplyConfigMap(request),
                   request.config_map().metadata().name());
}

// ---- users' tokens and RBAC objects (AccessService) ----

absl::StatusOr<ListResult> ListTokens(Client& client, const ListOptions&) {
  absl::StatusOr<api::ListTokensResponse> list = client.ListTokens();
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->tokens()), ""};
}

// One of Role, ClusterRole, RoleBinding, ClusterRoleBinding.
struct RbacKind {
  const char* kind;
  bool namespaced;
  bool binding;
};
constexpr RbacKind kRole{"Role", true, false};
constexpr RbacKind kClusterRole{"ClusterRole", false, false};
constexpr RbacKind kRoleBinding{"RoleBinding", true, true};
constexpr RbacKind kClusterRoleBinding{"ClusterRoleBinding", false, true};

const api::ObjectMeta& RbacMeta(const api::RbacObject& object) {
  return object.has_role() ? object.role().metadata()
                           : object.binding().metadata();
}

template <const RbacKind& K>
absl::StatusOr<ListResult> ListRbac(Client& client,
                                    const ListOptions& options) {
  api::ListRbacRequest request;
  request.set_kind(K.kind);
  if (K.namespaced && !options.all_namespaces) {
    request.set_namespace_(options.namespace_);
  }
  absl::StatusOr<api::ListRbacResponse> list = client.ListRbac(request);
  if (!list.ok()) return list.status();
  ListResult result;
  for (const api::RbacObject& o : list->objects()) {
    result.items.push_back(K.binding ? MakeObject(o.binding())
                                     : MakeObject(o.role()));
  }
  return result;
}

template <const RbacKind& K>
absl::Status DeleteRbac(Client& client, const std::string& ns,
                        const std::string& name) {
  api::RbacObjectRef ref;
  ref.set_kind(K.kind);
  if (K.namespaced) ref.set_namespace_(ns);
  ref.set_name(name);
  return client.DeleteRbac(ref).status();
}

// Applies (create_only: creates) one RBAC object. AccessService has no
// server-side dry run: a dry run only reads whether it exists.
absl::StatusOr<Applied> ApplyRbacObject(
    Client& client, const google::protobuf::Message& message,
    const ApplyOptions& options) {
  const auto& object = static_cast<const api::RbacObject&>(message);
  const api::ObjectMeta& meta = RbacMeta(object);
  const std::string& kind =
      object.has_role() ? object.role().kind() : object.binding().kind();
  const KindInfo* info = FindKindOfManifest(kind);
  // Whether it exists decides created/configured (and create's refusal).
  bool exists = false;
  api::ListRbacRequest list;
  list.set_kind(kind);
  if (info != nullptr && info->namespaced) {
    list.set_namespace_(meta.namespace_());
  }
  absl::StatusOr<api::ListRbacResponse> listed = client.ListRbac(list);
  if (listed.ok()) {
    for (const api::RbacObject& o : listed->objects()) {
      if (RbacMeta(o).name() == meta.name()) exists = true;
    }
  } else if (Unreachable(listed.status())) {
    return listed.status();
  }
  Applied applied;
  applied.name = meta.name();
  applied.outcome = exists ? Applied::kConfigured : Applied::kCreated;
  if (options.create_only && exists) {
    applied.outcome = Applied::kAlreadyExists;
    return applied;
  }
  if (options.dry_run) {
    applied.sent = false;
    return applied;
  }
  absl::StatusOr<api::RbacObject> sent = client.ApplyRbac(object);
  if (!sent.ok()) return sent.status();
  return applied;
}

template <typename T>
std::vector<Row> RbacRowsOf(const std::vector<Object>& objects, absl::Time now,
                            bool) {
  std::vector<api::RbacObject> rbac;
  for (const Object& o : objects) {
    if constexpr (std::is_same_v<T, api::Role>) {
      *rbac.emplace_back().mutable_role() =
          static_cast<const api::Role&>(*o.message);
    } else {
      *rbac.emplace_back().mutable_binding() =
          static_cast<const api::RoleBinding&>(*o.message);
    }
  }
  return RbacRows(rbac, /*namespaces=*/false, now);
}

// ---- the table ----

const std::vector<std::string> kNameAndNamespace = {"metadata.name",
                                                    "metadata.namespace"};
constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";
constexpr char kRbacVersion[] = "rbac.authorization.k8s.io/v1";

std::vector<KindInfo> MakeKinds() {
  std::vector<KindInfo> kinds;
  kinds.push_back({
      .plural = "jobsets",
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
      .rows = [](const std::vector<Object>& o, absl::Time now,
                 bool) { return JobSetRows(MessagesAs<api::JobSet>(o), now); },
  });
  kinds.push_back({
      .plural = "jobs",
      .singular = "job",
      .group = "batch",
      .api_version = "batch/v1",
      .kind = "Job",
      .get = {.fields = {"metadata.name", "metadata.namespace",
                         "status.successful"},
              .by_jobset = true,
              .poll_watch = true},
      .calls = {.list = ListChildren<api::ListJobsRequest,
                                     api::ListJobsResponse, &Client::ListJobs>},
      .rows = [](const std::vector<Object>& o, absl::Time now,
                 bool) { return JobRows(MessagesAs<api::Job>(o), now); },
  });
  kinds.push_back({
      .plural = "pods",
      .singular = "pod",
      .aliases = {"po"},
      .api_version = "v1",
      .kind = "Pod",
      .get = {.fields = {"metadata.name", "metadata.namespace", "spec.nodeName",
                         "spec.restartPolicy", "status.phase", "status.podIP"},
              .by_jobset = true,
              .poll_watch = true},
      .calls = {.list = ListChildren<api::ListPodsRequest,
                                     api::ListPodsResponse, &Client::ListPods>},
      .rows =
          [](const std::vector<Object>& o, absl::Time now, bool wide) {
            return PodRows(MessagesAs<api::Pod>(o), now, wide);
          },
  });
  kinds.push_back({
      .plural = "nodes",
      .singular = "node",
      .aliases = {"no"},
      .namespaced = false,
      .api_version = "v1",
      .kind = "Node",
      .get = {.fields = {"metadata.name", "spec.unschedulable"},
              .poll_watch = true},
      .calls = {
          .get =
              [](Client& client, const std::string&, const std::string& name) {
                return ToObject(client.GetNode(name));
              },
          .list = ListNodes,
          .remove =
              [](Client& client, const std::string&, const std::string& name) {
                return client.DeleteNode(name).status();
              },
          .describe = [](Client& client, const std::string&,
                         const std::string& name,
                         absl::Time now) -> absl::StatusOr<std::string> {
            absl::StatusOr<api::Node> node = client.GetNode(name);
            if (!node.ok()) return node.status();
            return DescribeNode(*node, now);
          }},
      .rows =
          [](const std::vector<Object>& o, absl::Time now, bool wide) {
            return NodeRows(MessagesAs<api::Node>(o), now, wide);
          },
  });
  // Core events: `-o name` prints event/NAME, the JSON is events.k8s.io's.
  kinds.push_back({
      .plural = "events",
      .singular = "event",
      .aliases = {"ev"},
      .api_version = "events.k8s.io/v1",
      .kind = "Event",
      .get = {.fields = {"metadata.name", "metadata.namespace", "reason",
                         "type"},
              .by_name = false,
              .by_jobset = true,
              .poll_watch = true},
      .calls = {.list =
                    ListChildren<api::ListEventsRequest,
                                 api::ListEventsResponse, &Client::ListEvents>},
      .rows = [](const std::vector<Object>& o, absl::Time now,
                 bool) { return EventRows(MessagesAs<api::Event>(o), now); },
  });
  kinds.push_back({
      .plural = "namespaces",
      .singular = "namespace",
      .aliases = {"ns"},
      .namespaced = false,
      .api_version = "v1",
      .kind = "Namespace",
      .calls = {
          .get =
              [](Client& client, const std::string&, const std::string& name) {
                return ToObject(client.GetNamespace(name));
              },
          .list = ListNamespaces,
          .apply = ApplyNamespace,
          .remove =
              [](Client& client, const std::string&, const std::string& name) {
                return client.DeleteNamespace(name).status();
              }},
      .rows =
          [](const std::vector<Object>& o, absl::Time now, bool) {
            return NamespaceRows(MessagesAs<api::Namespace>(o), now);
          },
  });
  kinds.push_back({
      .plural = "secrets",
      .singular = "secret",
      .api_version = "v1",
      .kind = "Secret",
      .get = {.fields = {"metadata.name", "metadata.namespace", "type"},
              .all_namespaces = false},
      .calls = {.get =
                    [](Client& client, const std::string& ns,
                       const std::string& name) {
                      return ToObject(client.GetSecret(ns, name));
                    },
                .list = ListSecrets,
                .apply = ApplySecret,
                .remove =
                    [](Client& client, const std::string& ns,
                       const std::string& name) {
                      return client.DeleteSecret(ns, name).status();
                    },
                .describe = [](Client& client, const std::string& ns,
                               const std::string& name,
                               absl::Time) -> absl::StatusOr<std::string> {
                  absl::StatusOr<api::Secret> secret =
                      client.GetSecret(ns, name);
                  if (!secret.ok()) return secret.status();
                  return DescribeSecret(*secret);
                }},
      .rows = [](const std::vector<Object>& o, absl::Time now,
                 bool) { return SecretRows(MessagesAs<api::Secret>(o), now); },
  });
  kinds.push_back({
      .plural = "configmaps",
      .singular = "configmap",
      .aliases = {"cm"},
      .api_version = "v1",
      .kind = "ConfigMap",
      .get = {.fields = kNameAndNamespace, .all_namespaces = false},
      .calls = {.get =
                    [](Client& client, const std::string& ns,
                       const std::string& name) {
                      return ToObject(client.GetConfigMap(ns, name));
                    },
                .list = ListConfigMaps,
                .apply = ApplyConfigMap,
                .remove =
                    [](Client& client, const std::string& ns,
                       const std::string& name) {
                      return client.DeleteConfigMap(ns, name).status();
                    },
                .describe = [](Client& client, const std::string& ns,
                               const std::string& name,
                               absl::Time) -> absl::StatusOr<std::string> {
                  absl::StatusOr<api::ConfigMap> config_map =
                      client.GetConfigMap(ns, name);
                  if (!config_map.ok()) return config_map.status();
                  return DescribeConfigMap(*config_map);
                }},
      .rows =
          [](const std::vector<Object>& o, absl::Time now, bool) {
            return ConfigMapRows(MessagesAs<api::ConfigMap>(o), now);
          },
  });
  // jobsetd's users' tokens: no Kubernetes shape (-o json prints TokenInfo).
  kinds.push_back({
      .plural = "tokens",
      .singular = "token",
      .namespaced = false,
      .get = {.selectors = false},
      .calls = {.list = ListTokens,
                .remove =
                    [](Client& client, const std::string&,
                       const std::string& name) {
                      return client.DeleteToken(name).status();
                    }},
      .rows =
          [](const std::vector<Object>& o, absl::Time now, bool) {
            return TokenRows(MessagesAs<api::TokenInfo>(o), now);
          },
  });
  kinds.push_back({
      .plural = "roles",
      .singular = "role",
      .aliases = {"roles.rbac.authorization.k8s.io"},
      .group = kRbacGroup,
      .api_version = kRbacVersion,
      .kind = kRole.kind,
      .get = {.selectors = false},
      .calls = {.list = ListRbac<kRole>,
                .apply = ApplyRbacObject,
                .remove = DeleteRbac<kRole>},
      .rows = RbacRowsOf<api::Role>,
  });
  kinds.push_back({
      .plural = "rolebindings",
      .singular = "rolebinding",
      .aliases = {"rolebindings.rbac.authorization.k8s.io"},
      .group = kRbacGroup,
      .api_version = kRbacVersion,
      .kind = kRoleBinding.kind,
      .get = {.selectors = false},
      .calls = {.list = ListRbac<kRoleBinding>,
                .apply = ApplyRbacObject,
                .remove = DeleteRbac<kRoleBinding>},
      .rows = RbacRowsOf<api::RoleBinding>,
  });
  kinds.push_back({
      .plural = "clusterroles",
      .singular = "clusterrole",
      .aliases = {"clusterroles.rbac.authorization.k8s.io"},
      .namespaced = false,
      .group = kRbacGroup,
      .api_version = kRbacVersion,
      .kind = kClusterRole.kind,
      .get = {.selectors = false},
      .calls = {.list = ListRbac<kClusterRole>,
                .apply = ApplyRbacObject,
                .remove = DeleteRbac<kClusterRole>},
      .rows = RbacRowsOf<api::Role>,
  });
  kinds.push_back({
      .plural = "clusterrolebindings",
      .singular = "clusterrolebinding",
      .aliases = {"clusterrolebindings.rbac.authorization.k8s.io"},
      .namespaced = false,
      .group = kRbacGroup,
      .api_version = kRbacVersion,
      .kind = kClusterRoleBinding.kind,
      .get = {.selectors = false},
      .calls = {.list = ListRbac<kClusterRoleBinding>,
                .apply = ApplyRbacObject,
                .remove = DeleteRbac<kClusterRoleBinding>},
      .rows = RbacRowsOf<api::RoleBinding>,
  });
  return kinds;
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
