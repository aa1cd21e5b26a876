#include "scheduler/server/kueue_api.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/defaults.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/kueue_validation.h"
#include "api/names.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "google/protobuf/map.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/message_differencer.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::util::MessageDifferencer;
using ::jobset::api::FindKueueKind;
using ::jobset::api::FindKueueKindByResource;
using ::jobset::api::kKueueApiGroup;
using ::jobset::api::KueueKind;
using ::jobset::api::KueueKindNamed;
using ::jobset::api::KueueObjectMeta;
using ::jobset::api::MutableKueueObjectMeta;

// Attempts of a read-modify-write before giving up with ABORTED.
constexpr int kMaxAttempts = 5;
// Events a watch asks the store for at once.
constexpr size_t kWatchBatch = 500;

// The message the oneof holds, or null.
const Message* Held(const api::KueueObject& object) {
  const FieldDescriptor* field =
      object.GetReflection()->GetOneofFieldDescriptor(
          object, object.GetDescriptor()->oneof_decl(0));
  if (field == nullptr) return nullptr;
  return &object.GetReflection()->GetMessage(object, field);
}

Message* MutableHeld(api::KueueObject* object) {
  const FieldDescriptor* field =
      object->GetReflection()->GetOneofFieldDescriptor(
          *object, object->GetDescriptor()->oneof_decl(0));
  if (field == nullptr) return nullptr;
  return object->GetReflection()->MutableMessage(object, field);
}

// The field `name` of every kind's message that has one (all six have
// api_version, kind and metadata; ResourceFlavor and WorkloadPriorityClass
// have no status).
const FieldDescriptor* FieldOf(const Message& message, absl::string_view name) {
  return message.GetDescriptor()->FindFieldByName(std::string(name));
}

void ClearField(Message* message, absl::string_view name) {
  if (const FieldDescriptor* field = FieldOf(*message, name)) {
    message->GetReflection()->ClearField(message, field);
  }
}

// Sets apiVersion and kind as jobsetd serves them.
void Stamp(const KueueKind& kind, api::KueueObject* object) {
  Message* held = MutableHeld(object);
  held->GetReflection()->SetString(held, FieldOf(*held, "api_version"),
                                   std::string(api::kKueueApiVersion));
  held->GetReflection()->SetString(held, FieldOf(*held, "kind"),
                                   std::string(kind.kind));
}

// Gives `to` the status of `from` (an object of the same kind): none when
// `from` has none.
void KeepStatus(const api::KueueObject& from, api::KueueObject* to) {
  Message* held = MutableHeld(to);
  const FieldDescriptor* status = FieldOf(*held, "status");
  if (status == nullptr) return;
  const Message& from_held = *Held(from);
  if (from_held.GetReflection()->HasField(from_held, status)) {
    held->GetReflection()
        ->MutableMessage(held, status)
        ->CopyFrom(from_held.GetReflection()->GetMessage(from_held, status));
  } else {
    held->GetReflection()->ClearField(held, status);
  }
}

// Whether what Apply replaces besides labels and annotations is the same:
// every field but apiVersion, kind, metadata and status (a
// WorkloadPriorityClass's value and description, every other kind's spec).
bool SameSpec(const api::KueueObject& a, const api::KueueObject& b) {
  api::KueueObject x = a;
  api::KueueObject y = b;
  for (api::KueueObject* object : {&x, &y}) {
    Message* held = MutableHeld(object);
    for (absl::string_view field :
         {"api_version", "kind", "metadata", "status"}) {
      ClearField(held, field);
    }
  }
  return MessageDifferencer::Equals(x, y);
}

bool SameMap(const google::protobuf::Map<std::string, std::string>& a,
             const google::protobuf::Map<std::string, std::string>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

absl::Status Validate(const api::KueueObject& o) {
  switch (o.object_case()) {
    case api::KueueObject::kResourceFlavor:
      return api::ValidateResourceFlavor(o.resource_flavor());
    case api::KueueObject::kClusterQueue:
      return api::ValidateClusterQueue(o.cluster_queue());
    case api::KueueObject::kCohort:
      return api::ValidateCohort(o.cohort());
    case api::KueueObject::kLocalQueue:
      return api::ValidateLocalQueue(o.local_queue());
    case api::KueueObject::kWorkloadPriorityClass:
      return api::ValidateWorkloadPriorityClass(o.workload_priority_class());
    case api::KueueObject::kWorkload:
      return api::ValidateWorkload(o.workload());
    case api::KueueObject::OBJECT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("object: Required value");
}

absl::Status ValidateUpdate(const api::KueueObject& old,
                            const api::KueueObject& o) {
  switch (o.object_case()) {
    case api::KueueObject::kResourceFlavor:
      return api::ValidateResourceFlavorUpdate(old.resource_flavor(),
                                               o.resource_flavor());
    case api::KueueObject::kClusterQueue:
      return api::ValidateClusterQueueUpdate(old.cluster_queue(),
                                             o.cluster_queue());
    case api::KueueObject::kCohort:
      return api::ValidateCohortUpdate(old.cohort(), o.cohort());
    case api::KueueObject::kLocalQueue:
      return api::ValidateLocalQueueUpdate(old.local_queue(), o.local_queue());
    case api::KueueObject::kWorkloadPriorityClass:
      return api::ValidateWorkloadPriorityClassUpdate(
          old.workload_priority_class(), o.workload_priority_class());
    case api::KueueObject::kWorkload:
      return api::ValidateWorkloadUpdate(old.workload(), o.workload());
    case api::KueueObject::OBJECT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("object: Required value");
}

// "clusterqueues.kueue.x-k8s.io \"cq\"", as Kubernetes names an object in
// its errors.
std::string Named(const KueueKind& kind, absl::string_view name) {
  return absl::StrCat(kind.resource, ".", kKueueApiGroup, " ", Quote(name));
}

absl::Status NotFound(const KueueKind& kind, absl::string_view name) {
  return absl::NotFoundError(absl::StrCat(Named(kind, name), " not found"));
}

absl::Status Conflict(const KueueKind& kind, absl::string_view name) {
  return absl::AbortedError(absl::StrCat(
      "Operation cannot be fulfilled on ", Named(kind, name),
      ": the object has been modified; please apply your changes to the "
      "latest version and try again"));
}

absl::Status KeptConflicting(absl::string_view verb, const KueueKind& kind,
                             absl::string_view name) {
  return absl::AbortedError(absl::StrCat(verb, " ", kind.kind, " ", Quote(name),
                                         " kept conflicting; try again"));
}

absl::StatusOr<int64_t> ParseResourceVersion(absl::string_view rv) {
  int64_t v;
  if (!absl::SimpleAtoi(rv, &v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.resourceVersion: Invalid value: ", Quote(rv),
                     ": must be a resourceVersion returned by jobsetd"));
  }
  return v;
}

// A request's namespace for `kind`: none for a cluster-scoped kind, else
// the given one or "default".
std::string NamespaceFor(const KueueKind& kind, absl::string_view ns) {
  if (!kind.namespaced) return "";
  return ns.empty() ? std::string(api::kDefaultNamespace) : std::string(ns);
}

// Checks a namespace from a request before it becomes part of a key.
absl::Status CheckNamespace(absl::string_view ns) {
  if (std::vector<std::string> bad = api::IsDns1123Label(ns); !bad.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "namespace ", Quote(ns.substr(0, 64)), ": ", absl::StrJoin(bad, "; ")));
  }
  return absl::OkStatus();
}

// Checks a name from a request before it becomes part of a key.
absl::Status CheckName(const KueueKind& kind, absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("resource name may not be empty");
  }
  if (std::vector<std::string> bad = api::IsDns1123Subdomain(name);
      !bad.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kind.kind, " ", Quote(name.substr(0, 64)),
        " is invalid: metadata.name: Invalid value: ",
        Quote(name.substr(0, 64)), ": ", absl::StrJoin(bad, "; ")));
  }
  return absl::OkStatus();
}

// The kind and key of an object a request names.
absl::StatusOr<std::pair<const KueueKind*, std::string>> RefKey(
    const api::KueueObjectRef& ref) {
  JOBSET_ASSIGN_OR_RETURN(const KueueKind* kind, KueueKindNamed(ref.kind()));
  const std::string ns = NamespaceFor(*kind, ref.namespace_());
  if (kind->namespaced) JOBSET_RETURN_IF_ERROR(CheckNamespace(ns));
  JOBSET_RETURN_IF_ERROR(CheckName(*kind, ref.name()));
  return std::make_pair(kind,
                        store::keys::KueueKey(kind->resource, ns, ref.name()));
}

// The prefix a List or Watch of `kind` reads: one namespace's or every
// namespace's objects of a namespaced kind, all of a cluster-scoped one.
absl::StatusOr<std::string> ScopePrefix(const KueueKind& kind,
                                        absl::string_view ns_given,
                                        bool all_namespaces) {
  if (!kind.namespaced || all_namespaces) {
    return store::keys::KueuePrefix(kind.resource, "");
  }
  const std::string ns = NamespaceFor(kind, ns_given);
  JOBSET_RETURN_IF_ERROR(CheckNamespace(ns));
  return store::keys::KueuePrefix(kind.resource, ns);
}

}  // namespace

std::string KueueObjectKey(const api::KueueObject& object) {
  const KueueKind* kind = FindKueueKind(object.object_case());
  JOBSET_CHECK(kind != nullptr) << "a KueueObject that holds no object";
  const api::ObjectMeta& meta = KueueObjectMeta(object);
  return store::keys::KueueKey(
      kind->resource, kind->namespaced ? meta.namespace_() : "", meta.name());
}

absl::StatusOr<api::KueueObject> DecodeKueueObject(const store::KeyValue& kv) {
  JOBSET_ASSIGN_OR_RETURN(api::KueueObject object,
                          store::DecodeValue<api::KueueObject>(kv));
  // The key says what the value must be: kueue/<resource>/[<ns>/]<name>.
  absl::string_view rest = kv.key;
  const KueueKind* kind = nullptr;
  absl::string_view ns, name;
  if (absl::ConsumePrefix(&rest, store::keys::kKueue)) {
    const size_t slash = rest.find('/');
    if (slash != absl::string_view::npos) {
      kind = FindKueueKindByResource(rest.substr(0, slash));
      rest.remove_prefix(slash + 1);
    }
  }
  if (kind != nullptr && kind->namespaced) {
    const size_t slash = rest.find('/');
    if (slash == absl::string_view::npos) {
      kind = nullptr;
    } else {
      ns = rest.substr(0, slash);
      rest.remove_prefix(slash + 1);
    }
  }
  name = rest;
  const api::ObjectMeta& meta = KueueObjectMeta(object);
  if (kind == nullptr || object.object_case() != kind->object_case ||
      meta.name() != name || meta.namespace_() != ns) {
    return absl::DataLossError(absl::StrCat(
        "stored value at ", Quote(kv.key), " (revision ", kv.mod_revision,
        ") is not the ", kind == nullptr ? "Kueue object" : kind->kind,
        " its key names"));
  }
  Stamp(*kind, &object);
  MutableKueueObjectMeta(&object)->set_resource_version(
      absl::StrCat(kv.mod_revision));
  return object;
}

std::string EncodeKueueObject(api::KueueObject object) {
  if (Message* held = MutableHeld(&object)) {
    ClearField(held, "api_version");
    ClearField(held, "kind");
    MutableKueueObjectMeta(&object)->clear_resource_version();
  }
  return object.SerializeAsString();
}

absl::StatusOr<api::ApplyKueueObjectResponse> KueueApi::Apply(
    const api::ApplyKueueObjectRequest& request) {
  api::KueueObject given = request.object();
  const KueueKind* kind = FindKueueKind(given.object_case());
  if (kind == nullptr) {
    std::vector<std::string> kinds;
    for (const KueueKind& k : api::KueueKinds()) {
      kinds.push_back(std::string(k.kind));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "object: Required value: one of ", absl::StrJoin(kinds, ", ")));
  }
  api::SetKueueDefaults(&given);  // Clears a cluster-scoped one's namespace.
  api::ObjectMeta* given_meta = MutableKueueObjectMeta(&given);
  if (kind->namespaced && given_meta->namespace_().empty()) {
    given_meta->set_namespace_(std::string(api::kDefaultNamespace));
  }
  if (given_meta->name().empty() && !given_meta->generate_name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kind->kind, " ", Quote(given_meta->generate_name()),
        " is invalid: metadata.name: Required value: jobsetd applies objects "
        "by name (generateName is not supported)"));
  }
  // The status subresource's rule: what a client sends as status is not
  // taken.
  ClearField(MutableHeld(&given), "status");
  JOBSET_RETURN_IF_ERROR(Validate(given));
  std::optional<int64_t> precondition;
  if (!given_meta->resource_version().empty()) {
    JOBSET_ASSIGN_OR_RETURN(
        precondition, ParseResourceVersion(given_meta->resource_version()));
  }
  const std::string& name = given_meta->name();
  const std::string& ns = given_meta->namespace_();
  const std::string key = store::keys::KueueKey(kind->resource, ns, name);

  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> existing,
                            store_->Get(key));
    api::ApplyKueueObjectResponse response;
    api::KueueObject& object = *response.mutable_object();
    object = given;
    api::ObjectMeta* meta = MutableKueueObjectMeta(&object);
    // Of the metadata, Apply takes name, namespace, labels and annotations
    // (and a uid, to be checked against the stored one).
    meta->Clear();
    meta->set_name(name);
    meta->set_namespace_(ns);
    *meta->mutable_labels() = given_meta->labels();
    *meta->mutable_annotations() = given_meta->annotations();
    if (existing.has_value()) {
      if (request.create_only()) {
        return absl::AlreadyExistsError(
            absl::StrCat(Named(*kind, name), " already exists"));
      }
      if (precondition.has_value() && *precondition != existing->mod_revision) {
        return Conflict(*kind, name);
      }
      JOBSET_ASSIGN_OR_RETURN(api::KueueObject stored,
                              DecodeKueueObject(*existing));
      const api::ObjectMeta& stored_meta = KueueObjectMeta(stored);
      KeepStatus(stored, &object);
      const bool same_spec = SameSpec(stored, object);
      if (same_spec && SameMap(stored_meta.labels(), meta->labels()) &&
          SameMap(stored_meta.annotations(), meta->annotations()) &&
          (given_meta->uid().empty() ||
           given_meta->uid() == stored_meta.uid())) {
        *response.mutable_object() = std::move(stored);
        response.set_unchanged(true);
        return response;
      }
      meta->set_uid(given_meta->uid());
      JOBSET_RETURN_IF_ERROR(ValidateUpdate(stored, object));
      meta->set_uid(stored_meta.uid());
      *meta->mutable_creation_timestamp() = stored_meta.creation_timestamp();
      meta->set_generation(stored_meta.generation() + (same_spec ? 0 : 1));
    } else {
      if (precondition.has_value()) return NotFound(*kind, name);
      meta->set_uid(NewUid());
      meta->mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(clock_->Now()));
      meta->set_generation(1);
      response.set_created(true);
    }
    const std::string value = EncodeKueueObject(object);
    JOBSET_RETURN_IF_ERROR(
        CheckBounds(*kind, ns, name, key, value.size(), existing.has_value()));
    Stamp(*kind, &object);
    if (request.dry_run()) {
      if (existing.has_value()) {
        meta->set_resource_version(absl::StrCat(existing->mod_revision));
      }
      return response;
    }
    store::Batch batch;
    if (existing.has_value()) {
      batch.Update(key, value, existing->mod_revision);
    } else {
      batch.Create(key, value);
    }
    absl::StatusOr<int64_t> revision = store_->Commit(batch);
    if (revision.ok()) {
      meta->set_resource_version(absl::StrCat(*revision));
      return response;
    }
    if (revision.status().code() != absl::StatusCode::kAborted) {
      return revision.status();
    }
    // A concurrent write of the same object: the caller's precondition no
    // longer holds, or read it again.
    if (precondition.has_value()) return Conflict(*kind, name);
  }
  return KeptConflicting("applying", *kind, name);
}

absl::StatusOr<api::KueueObject> KueueApi::Get(const api::KueueObjectRef& ref) {
  JOBSET_ASSIGN_OR_RETURN(auto kind_key, RefKey(ref));
  const auto& [kind, key] = kind_key;
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv, store_->Get(key));
  if (!kv.has_value()) return NotFound(*kind, ref.name());
  return DecodeKueueObject(*kv);
}

absl::StatusOr<api::ListKueueObjectsResponse> KueueApi::List(
    const api::ListKueueObjectsRequest& request) {
  JOBSET_ASSIGN_OR_RETURN(const KueueKind* kind,
                          KueueKindNamed(request.kind()));
  JOBSET_ASSIGN_OR_RETURN(
      const std::string prefix,
      ScopePrefix(*kind, request.namespace_(), request.all_namespaces()));
  JOBSET_ASSIGN_OR_RETURN(api::LabelSelector selector,
                          api::LabelSelector::Parse(request.label_selector()));
  api::ListKueueObjectsResponse response;
  JOBSET_ASSIGN_OR_RETURN(
      const int64_t revision,
      store::ScanAllWithRevision(
          *store_, prefix, [&](const store::KeyValue& kv) -> absl::Status {
            JOBSET_ASSIGN_OR_RETURN(api::KueueObject object,
                                    DecodeKueueObject(kv));
            if (selector.Matches(KueueObjectMeta(object).labels())) {
              *response.add_items() = std::move(object);
            }
            return absl::OkStatus();
          }));
  // Keys sort "a-b/x" before "a/x" ('-' < '/'): across namespaces the key
  // order is not the namespace order.
  auto* items = response.mutable_items();
  std::stable_sort(items->begin(), items->end(),
                   [](const api::KueueObject& a, const api::KueueObject& b) {
                     const api::ObjectMeta& x = KueueObjectMeta(a);
                     const api::ObjectMeta& y = KueueObjectMeta(b);
                     return std::tie(x.namespace_(), x.name()) <
                            std::tie(y.namespace_(), y.name());
                   });
  response.set_resource_version(absl::StrCat(revision));
  return response;
}

absl::StatusOr<api::KueueObject> KueueApi::Delete(
    const api::KueueObjectRef& ref) {
  JOBSET_ASSIGN_OR_RETURN(auto kind_key, RefKey(ref));
  const auto& [kind, key] = kind_key;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                            store_->Get(key));
    if (!kv.has_value()) return NotFound(*kind, ref.name());
    JOBSET_ASSIGN_OR_RETURN(api::KueueObject object, DecodeKueueObject(*kv));
    absl::StatusOr<int64_t> revision =
        store_->Commit(store::Batch().DeleteAt(key, kv->mod_revision));
    if (revision.ok()) {
      MutableKueueObjectMeta(&object)->set_resource_version(
          absl::StrCat(*revision));
      return object;
    }
    if (revision.status().code() != absl::StatusCode::kAborted) {
      return revision.status();
    }
  }
  return KeptConflicting("deleting", *kind, ref.name());
}

absl::StatusOr<KueueApi::Watch> KueueApi::StartWatch(
    const api::WatchKueueObjectsRequest& request) {
  JOBSET_ASSIGN_OR_RETURN(const KueueKind* kind,
                          KueueKindNamed(request.kind()));
  JOBSET_ASSIGN_OR_RETURN(
      std::string prefix,
      ScopePrefix(*kind, request.namespace_(), request.all_namespaces()));
  JOBSET_ASSIGN_OR_RETURN(api::LabelSelector selector,
                          api::LabelSelector::Parse(request.label_selector()));
  int64_t revision = 0;
  if (request.resource_version().empty()) {
    revision = store_->CurrentRevision();
  } else {
    JOBSET_ASSIGN_OR_RETURN(revision,
                            ParseResourceVersion(request.resource_version()));
  }
  return Watch(store_, std::move(prefix), std::move(selector), revision);
}

absl::StatusOr<std::vector<api::KueueWatchEvent>> KueueApi::Watch::Next(
    absl::Time deadline) {
  JOBSET_ASSIGN_OR_RETURN(
      std::vector<store::Event> events,
      store_->WaitForEvents(prefix_, revision_, deadline, kWatchBatch));
  std::vector<api::KueueWatchEvent> out;
  for (const store::Event& event : events) {
    revision_ = event.kv.mod_revision;
    JOBSET_ASSIGN_OR_RETURN(api::KueueObject object,
                            DecodeKueueObject(event.kv));
    if (!selector_.Matches(KueueObjectMeta(object).labels())) continue;
    api::KueueWatchEvent& out_event = out.emplace_back();
    out_event.set_type(store::WatchEventType(event));
    *out_event.mutable_object() = std::move(object);
  }
  return out;
}

absl::Status KueueApi::CheckBounds(const KueueKind& kind, absl::string_view ns,
                                   absl::string_view name,
                                   const std::string& key, size_t bytes,
                                   bool replacing) {
  const std::string what = absl::StrCat(Named(kind, name), ": ");
  const absl::string_view per = kind.namespaced ? "namespace" : "cluster";
  const std::string scope = kind.namespaced
                                ? absl::StrCat("namespace ", Quote(ns))
                                : std::string("the cluster");
  if (static_cast<int64_t>(bytes) > limits_.max_object_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, "the ", kind.kind, " would take ", bytes,
        " bytes stored, more than jobsetd keeps for one Kueue object (",
        limits_.max_object_bytes, ")"));
  }
  int count = 0;
  int64_t total = static_cast<int64_t>(bytes);
  JOBSET_RETURN_IF_ERROR(
      store::ScanAll(*store_, store::keys::KueuePrefix(kind.resource, ns),
                     [&](const store::KeyValue& kv) {
                       if (replacing && kv.key == key) return absl::OkStatus();
                       ++count;
                       total += static_cast<int64_t>(kv.value.size());
                       return absl::OkStatus();
                     }));
  if (!replacing && count >= limits_.max_objects_per_scope) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, scope, " has ", count, " ", kind.kind,
                     " objects, the most jobsetd keeps per ", per, " (",
                     limits_.max_objects_per_scope, ")"));
  }
  if (total > limits_.max_bytes_per_scope) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, "the ", kind.kind, " objects of ", scope, " would take ", total,
        " bytes, more than jobsetd keeps per ", per, " (",
        limits_.max_bytes_per_scope, ")"));
  }
  return absl::OkStatus();
}

}  // namespace jobset::scheduler
