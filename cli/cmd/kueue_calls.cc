// The Client calls behind Kueue's six kinds in the kinds table (kinds.cc):
// KueueService, one set of verbs named by Kind.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/kueue_manifest.h"
#include "cli/cmd/kind_calls.h"
#include "cli/describe.h"
#include "cli/kueue_output.h"

namespace jobset::cli {
namespace {

// One of Kueue's kinds, as KueueService names it.
struct KueueKindInfo {
  const char* kind;
  bool namespaced;
};

constexpr KueueKindInfo kResourceFlavor{"ResourceFlavor", false};
constexpr KueueKindInfo kClusterQueue{"ClusterQueue", false};
constexpr KueueKindInfo kCohort{"Cohort", false};
constexpr KueueKindInfo kLocalQueue{"LocalQueue", true};
constexpr KueueKindInfo kWorkloadPriorityClass{"WorkloadPriorityClass", false};
constexpr KueueKindInfo kWorkload{"Workload", true};

// The object `object` holds, as the Object of its kind.
absl::StatusOr<Object> ToObject(api::KueueObject object) {
  switch (object.object_case()) {
    case api::KueueObject::kResourceFlavor:
      return MakeObject(std::move(*object.mutable_resource_flavor()));
    case api::KueueObject::kClusterQueue:
      return MakeObject(std::move(*object.mutable_cluster_queue()));
    case api::KueueObject::kCohort:
      return MakeObject(std::move(*object.mutable_cohort()));
    case api::KueueObject::kLocalQueue:
      return MakeObject(std::move(*object.mutable_local_queue()));
    case api::KueueObject::kWorkloadPriorityClass:
      return MakeObject(std::move(*object.mutable_workload_priority_class()));
    case api::KueueObject::kWorkload:
      return MakeObject(std::move(*object.mutable_workload()));
    case api::KueueObject::OBJECT_NOT_SET:
      break;
  }
  return absl::InternalError(
      "jobsetd sent a Kueue object of no kind this jobsetctl knows (a newer "
      "jobsetd?)");
}

template <const KueueKindInfo& K>
api::KueueObjectRef Ref(const std::string& ns, const std::string& name) {
  api::KueueObjectRef ref;
  ref.set_kind(K.kind);
  if (K.namespaced) ref.set_namespace_(ns);
  ref.set_name(name);
  return ref;
}

template <const KueueKindInfo& K>
absl::StatusOr<Object> GetKueue(Client& client, const std::string& ns,
                                const std::string& name) {
  absl::StatusOr<api::KueueObject> got =
      client.GetKueueObject(Ref<K>(ns, name));
  if (!got.ok()) return got.status();
  return ToObject(*std::move(got));
}

template <const KueueKindInfo& K>
absl::StatusOr<ListResult> ListKueue(Client& client,
                                     const ListOptions& options) {
  api::ListKueueObjectsRequest request;
  request.set_kind(K.kind);
  if (K.namespaced) {
    request.set_namespace_(options.namespace_);
    request.set_all_namespaces(options.all_namespaces);
  }
  request.set_label_selector(options.label_selector);
  absl::StatusOr<api::ListKueueObjectsResponse> list =
      client.ListKueueObjects(request);
  if (!list.ok()) return list.status();
  ListResult result;
  result.resource_version = list->resource_version();
  for (api::KueueObject& item : *list->mutable_items()) {
    absl::StatusOr<Object> object = ToObject(std::move(item));
    if (!object.ok()) return object.status();
    result.items.push_back(*std::move(object));
  }
  return result;
}

// KueueService's watch without a resourceVersion starts from now: the
// current objects are listed first (as ADDED), as WatchJobSets sends them,
// and watched from the list's revision.
template <const KueueKindInfo& K>
absl::Status WatchKueue(
    Client& client, const ListOptions& options,
    const std::string& resource_version, absl::Time deadline,
    const std::function<bool(const std::string&, const Object&)>& on_event) {
  std::string from = resource_version;
  if (from.empty()) {
    absl::StatusOr<ListResult> listed = ListKueue<K>(client, options);
    if (!listed.ok()) return listed.status();
    for (const Object& object : listed->items) {
      if (!on_event("ADDED", object)) return absl::OkStatus();
    }
    from = listed->resource_version;
  }
  api::WatchKueueObjectsRequest request;
  request.set_kind(K.kind);
  if (K.namespaced) {
    request.set_namespace_(options.namespace_);
    request.set_all_namespaces(options.all_namespaces);
  }
  request.set_label_selector(options.label_selector);
  request.set_resource_version(from);
  return client.WatchKueueObjects(
      request, deadline, [&](const api::KueueWatchEvent& event) {
        absl::StatusOr<Object> object = ToObject(event.object());
        // An object of a kind this jobsetctl does not know is passed over.
        return !object.ok() || on_event(event.type(), *object);
      });
}

template <const KueueKindInfo& K>
absl::Status DeleteKueue(Client& client, const std::string& ns,
                         const std::string& name) {
  return client.DeleteKueueObject(Ref<K>(ns, name)).status();
}

// The object with its events: those of its namespace ("default" for a
// cluster-scoped one, where Kubernetes records them) regarding it. Events
// that cannot be listed leave the section out, as kubectl does. A Workload
// waiting for quota gets its positions in its queues.
template <const KueueKindInfo& K>
absl::StatusOr<std::string> DescribeKueue(Client& client, const std::string& ns,
                                          const std::string& name,
                                          absl::Time now) {
  absl::StatusOr<api::KueueObject> got =
      client.GetKueueObject(Ref<K>(ns, name));
  if (!got.ok()) return got.status();
  const google::protobuf::Message* message = KueueMessage(*got);
  if (message == nullptr) {
    return absl::InternalError(absl::StrCat("jobsetd answered GetKueueObject ",
                                            K.kind, " ", name,
                                            " with no object"));
  }
  api::ListEventsRequest request;
  request.set_namespace_(K.namespaced ? ns : "default");
  absl::StatusOr<api::ListEventsResponse> listed = client.ListEvents(request);
  std::vector<api::Event> events;
  const std::string regarding = absl::StrCat(K.kind, "/", name);
  if (listed.ok()) {
    for (const api::Event& event : listed->items()) {
      if (event.regarding() == regarding) events.push_back(event);
    }
  }
  // A Workload's place in its queues follows its status.
  std::vector<std::string> position;
  if (got->has_workload()) {
    position = PendingPositionLines(
        got->workload(), FindPendingPosition(client, got->workload()));
  }
  return DescribeResource(*message, api::kKueueApiVersion, K.kind,
                          listed.ok() ? &events : nullptr, now, position);
}

template <const KueueKindInfo& K>
KindCalls CallsOf() {
  return {.get = GetKueue<K>,
          .list = ListKueue<K>,
          .watch = WatchKueue<K>,
          .apply = ApplyKueueObject,
          .remove = DeleteKueue<K>,
          .describe = DescribeKueue<K>};
}

}  // namespace

absl::StatusOr<Applied> ApplyKueueObject(
    Client& client, const google::protobuf::Message& message,
    const ApplyOptions& options) {
  api::ApplyKueueObjectRequest request;
  *request.mutable_object() = static_cast<const api::KueueObject&>(message);
  request.set_create_only(options.create_only);
  request.set_dry_run(options.dry_run);
  api::ObjectMeta* meta = MutableKueueMetadata(request.mutable_object());
  if (meta == nullptr) {
    return absl::InvalidArgumentError("no Kueue object to apply");
  }
  const std::string kind = KueueKind(request.object());
  for (const KueueKindInfo* k :
       {&kResourceFlavor, &kClusterQueue, &kCohort, &kWorkloadPriorityClass}) {
    // Cluster-scoped: a manifest's namespace is dropped, as the API server
    // drops it.
    if (kind == k->kind) meta->clear_namespace_();
  }
  return AppliedOf(client.ApplyKueueObject(request), meta->name());
}

KindCalls KueueCalls(absl::string_view kind) {
  if (kind == kResourceFlavor.kind) return CallsOf<kResourceFlavor>();
  if (kind == kClusterQueue.kind) return CallsOf<kClusterQueue>();
  if (kind == kCohort.kind) return CallsOf<kCohort>();
  if (kind == kLocalQueue.kind) return CallsOf<kLocalQueue>();
  if (kind == kWorkloadPriorityClass.kind) {
    return CallsOf<kWorkloadPriorityClass>();
  }
  if (kind == kWorkload.kind) return CallsOf<kWorkload>();
  return {};
}

}  // namespace jobset::cli
