// The Client calls behind the kinds table (kinds.cc), by kind.
#include "cli/cmd/kind_calls.h"

#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "api/defaults.h"
#include "cli/describe.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
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

// Whether `stored` (a CreateJobSet's answer) is byte for byte the JobSet
// `sent`, as jobsetd stores it: name, namespace, labels, annotations and
// the spec with jobsetd's defaults (serialized deterministically).
bool SameAsSent(const api::JobSet& sent, const api::JobSet& stored) {
  auto owned = [](const api::JobSet& js) {
    api::JobSet out;
    api::ObjectMeta* meta = out.mutable_metadata();
    meta->set_name(js.metadata().name());
    meta->set_namespace_(js.metadata().namespace_());
    *meta->mutable_labels() = js.metadata().labels();
    *meta->mutable_annotations() = js.metadata().annotations();
    *out.mutable_spec() = js.spec();
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    out.SerializeToCodedStream(&coded);
    coded.Trim();
    return bytes;
  };
  api::JobSet defaulted = sent;
  api::SetJobSetDefaults(&defaulted);
  return owned(defaulted) == owned(stored);
}

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

}  // namespace

// ---- JobSets (JobSetService) ----

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
  // A named create is sent again after a failure that may have followed
  // its commit (a failover): then the JobSet found may be this call's own.
  // kubectl reports AlreadyExists for a JobSet that was there; so does
  // create here, unless it was repeated and the JobSet found is the one
  // sent, byte for byte: that one it created.
  bool repeated = false;
  absl::StatusOr<api::CreateJobSetResponse> created =
      client.Create(create, &repeated);
  if (!created.ok()) return created.status();
  const bool own =
      created->created() || (repeated && SameAsSent(jobset, created->jobset()));
  Applied applied;
  applied.outcome = own                   ? Applied::kCreated
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
      DescribeKueueSection(LookUpKueue(client, *jobset)), now);
}

// ---- nodes (NodeService) ----

absl::StatusOr<ListResult> ListNodes(Client& client, const ListOptions&) {
  absl::StatusOr<api::ListNodesResponse> list = client.ListNodes();
  if (!list.ok()) return list.status();
  return ListResult{Objects(list->items()), ""};
}

// ---- v1 Namespace, Secret and ConfigMap objects ----

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

// ---- named instances of the templates, and the one-line calls ----

absl::StatusOr<ListResult> ListJobs(Client& client,
                                    const ListOptions& options) {
  return ListChildren<api::ListJobsRequest, api::ListJobsResponse,
                      &Client::ListJobs>(client, options);
}

absl::StatusOr<ListResult> ListPods(Client& client,
                                    const ListOptions& options) {
  return ListChildren<api::ListPodsRequest, api::ListPodsResponse,
                      &Client::ListPods>(client, options);
}

absl::StatusOr<ListResult> ListEvents(Client& client,
                                      const ListOptions& options) {
  return ListChildren<api::ListEventsRequest, api::ListEventsResponse,
                      &Client::ListEvents>(client, options);
}

absl::StatusOr<Object> GetNode(Client& client, const std::string&,
                               const std::string& name) {
  return ToObject(client.GetNode(name));
}

absl::Status DeleteNode(Client& client, const std::string&,
                        const std::string& name) {
  return client.DeleteNode(name).status();
}

absl::StatusOr<std::string> DescribeNodeNamed(Client& client,
                                              const std::string&,
                                              const std::string& name,
                                              absl::Time now) {
  absl::StatusOr<api::Node> node = client.GetNode(name);
  if (!node.ok()) return node.status();
  return DescribeNode(*node, now);
}

absl::StatusOr<Object> GetNamespace(Client& client, const std::string&,
                                    const std::string& name) {
  return ToObject(client.GetNamespace(name));
}

absl::Status DeleteNamespace(Client& client, const std::string&,
                             const std::string& name) {
  return client.DeleteNamespace(name).status();
}

absl::StatusOr<Object> GetSecret(Client& client, const std::string& ns,
                                 const std::string& name) {
  return ToObject(client.GetSecret(ns, name));
}

absl::Status DeleteSecret(Client& client, const std::string& ns,
                          const std::string& name) {
  return client.DeleteSecret(ns, name).status();
}

absl::StatusOr<std::string> DescribeSecretNamed(Client& client,
                                                const std::string& ns,
                                                const std::string& name,
                                                absl::Time) {
  absl::StatusOr<api::Secret> secret = client.GetSecret(ns, name);
  if (!secret.ok()) return secret.status();
  return DescribeSecret(*secret);
}

absl::StatusOr<Object> GetConfigMap(Client& client, const std::string& ns,
                                    const std::string& name) {
  return ToObject(client.GetConfigMap(ns, name));
}

absl::Status DeleteConfigMap(Client& client, const std::string& ns,
                             const std::string& name) {
  return client.DeleteConfigMap(ns, name).status();
}

absl::StatusOr<std::string> DescribeConfigMapNamed(Client& client,
                                                   const std::string& ns,
                                                   const std::string& name,
                                                   absl::Time) {
  absl::StatusOr<api::ConfigMap> config_map = client.GetConfigMap(ns, name);
  if (!config_map.ok()) return config_map.status();
  return DescribeConfigMap(*config_map);
}

absl::Status DeleteToken(Client& client, const std::string&,
                         const std::string& name) {
  return client.DeleteToken(name).status();
}

absl::StatusOr<ListResult> ListRoles(Client& client,
                                     const ListOptions& options) {
  return ListRbac<kRole>(client, options);
}
absl::StatusOr<ListResult> ListClusterRoles(Client& client,
                                            const ListOptions& options) {
  return ListRbac<kClusterRole>(client, options);
}
absl::StatusOr<ListResult> ListRoleBindings(Client& client,
                                            const ListOptions& options) {
  return ListRbac<kRoleBinding>(client, options);
}
absl::StatusOr<ListResult> ListClusterRoleBindings(Client& client,
                                                   const ListOptions& options) {
  return ListRbac<kClusterRoleBinding>(client, options);
}

absl::Status DeleteRole(Client& client, const std::string& ns,
                        const std::string& name) {
  return DeleteRbac<kRole>(client, ns, name);
}
absl::Status DeleteClusterRole(Client& client, const std::string& ns,
                               const std::string& name) {
  return DeleteRbac<kClusterRole>(client, ns, name);
}
absl::Status DeleteRoleBinding(Client& client, const std::string& ns,
                               const std::string& name) {
  return DeleteRbac<kRoleBinding>(client, ns, name);
}
absl::Status DeleteClusterRoleBinding(Client& client, const std::string& ns,
                                      const std::string& name) {
  return DeleteRbac<kClusterRoleBinding>(client, ns, name);
}

std::vector<Row> RoleRows(const std::vector<Object>& objects, absl::Time now,
                          bool wide) {
  return RbacRowsOf<api::Role>(objects, now, wide);
}
std::vector<Row> RoleBindingRows(const std::vector<Object>& objects,
                                 absl::Time now, bool wide) {
  return RbacRowsOf<api::RoleBinding>(objects, now, wide);
}

}  // namespace jobset::cli
