#include "scheduler/server/namespace_api.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/label_selector.h"
#include "api/namespace_manifest.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "google/protobuf/map.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

// Attempts of a read-modify-write before giving up with ABORTED.
constexpr int kMaxRetries = 5;

absl::Status NotFound(absl::string_view name) {
  return absl::NotFoundError(
      absl::StrCat("namespaces \"", name, "\" not found"));
}

// Checks a name from a Get or Delete, before it becomes part of a key.
absl::Status CheckName(absl::string_view name) {
  api::Namespace ns;
  ns.mutable_metadata()->set_name(std::string(name));
  return api::ValidateNamespace(ns);
}

absl::StatusOr<api::Namespace> Decode(const store::KeyValue& kv) {
  JOBSET_ASSIGN_OR_RETURN(api::Namespace ns,
                          store::DecodeValue<api::Namespace>(kv));
  ns.set_api_version("v1");
  ns.set_kind("Namespace");
  ns.mutable_metadata()->set_resource_version(absl::StrCat(kv.mod_revision));
  return ns;
}

// What is stored: the metadata jobsetd keeps, resourceVersion left empty
// (it is the key's revision).
std::string Encode(api::Namespace ns) {
  ns.clear_api_version();
  ns.clear_kind();
  ns.mutable_metadata()->clear_resource_version();
  return ns.SerializeAsString();
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

int64_t MetadataBytes(const api::ObjectMeta& meta) {
  int64_t bytes = 0;
  for (const auto& [k, v] : meta.labels()) bytes += k.size() + v.size();
  for (const auto& [k, v] : meta.annotations()) bytes += k.size() + v.size();
  return bytes;
}

absl::StatusOr<int> CountNamespaces(store::Store* store) {
  int count = 0;
  JOBSET_RETURN_IF_ERROR(store::ScanAll(*store, store::keys::kNamespaces,
                                        [&](const store::KeyValue&) {
                                          ++count;
                                          return absl::OkStatus();
                                        }));
  return count;
}

}  // namespace

absl::StatusOr<api::ApplyNamespaceResponse> NamespaceApi::Apply(
    const api::ApplyNamespaceRequest& request) {
  const api::Namespace& given = request.namespace_();
  JOBSET_RETURN_IF_ERROR(api::ValidateNamespace(given));
  const std::string& name = given.metadata().name();
  if (const int64_t bytes = MetadataBytes(given.metadata());
      bytes > kMaxMetadataBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Namespace \"", name,
                     "\" is invalid: metadata: Too long: labels and "
                     "annotations may not be more than ",
                     kMaxMetadataBytes, " bytes (", bytes,
                     " bytes; jobsetd's limit for Namespace objects)"));
  }
  const std::string key = store::keys::NamespaceKey(name);
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> existing,
                            store_->Get(key));
    api::ApplyNamespaceResponse response;
    api::Namespace* ns = response.mutable_namespace_();
    store::Batch batch;
    if (existing.has_value()) {
      if (request.create_only()) {
        return absl::AlreadyExistsError(
            absl::StrCat("namespaces \"", name, "\" already exists"));
      }
      JOBSET_ASSIGN_OR_RETURN(*ns, Decode(*existing));
      api::ObjectMeta* meta = ns->mutable_metadata();
      if (SameMap(meta->labels(), given.metadata().labels()) &&
          SameMap(meta->annotations(), given.metadata().annotations())) {
        response.set_unchanged(true);
        return response;
      }
      *meta->mutable_labels() = given.metadata().labels();
      *meta->mutable_annotations() = given.metadata().annotations();
      batch.Update(key, Encode(*ns), existing->mod_revision);
    } else {
      JOBSET_ASSIGN_OR_RETURN(const int count, CountNamespaces(store_));
      if (count >= kMaxNamespaces) {
        return absl::ResourceExhaustedError(
            absl::StrCat("namespaces \"", name, "\": ", count,
                         " Namespace objects exist, the most jobsetd keeps (",
                         kMaxNamespaces, ")"));
      }
      api::ObjectMeta* meta = ns->mutable_metadata();
      meta->set_name(name);
      *meta->mutable_labels() = given.metadata().labels();
      *meta->mutable_annotations() = given.metadata().annotations();
      meta->set_uid(NewUid());
      meta->mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(clock_->Now()));
      ns->set_api_version("v1");
      ns->set_kind("Namespace");
      response.set_created(true);
      batch.Create(key, Encode(*ns));
    }
    if (request.dry_run()) return response;
    absl::StatusOr<int64_t> revision = store_->Commit(batch);
    if (revision.ok()) {
      ns->mutable_metadata()->set_resource_version(absl::StrCat(*revision));
      return response;
    }
    // A concurrent write of the same Namespace: read it again.
    if (revision.status().code() != absl::StatusCode::kAborted) {
      return revision.status();
    }
  }
  return absl::AbortedError(absl::StrCat("applying Namespace \"", name,
                                         "\" kept conflicting; try again"));
}

absl::StatusOr<api::Namespace> NamespaceApi::Get(absl::string_view name) {
  JOBSET_RETURN_IF_ERROR(CheckName(name));
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store_->Get(store::keys::NamespaceKey(name)));
  if (!kv.has_value()) return NotFound(name);
  return Decode(*kv);
}

absl::StatusOr<api::ListNamespacesResponse> NamespaceApi::List(
    const api::ListNamespacesRequest& request) {
  JOBSET_ASSIGN_OR_RETURN(api::LabelSelector selector,
                          api::LabelSelector::Parse(request.label_selector()));
  api::ListNamespacesResponse response;
  JOBSET_ASSIGN_OR_RETURN(const int64_t revision,
                          store::ScanAllWithRevision(
                              *store_, store::keys::kNamespaces,
                              [&](const store::KeyValue& kv) -> absl::Status {
                                JOBSET_ASSIGN_OR_RETURN(api::Namespace ns,
                                                        Decode(kv));
                                if (selector.Matches(ns.metadata().labels())) {
                                  *response.add_items() = std::move(ns);
                                }
                                return absl::OkStatus();
                              }));
  response.set_resource_version(absl::StrCat(revision));
  return response;
}

absl::StatusOr<api::Namespace> NamespaceApi::Delete(absl::string_view name) {
  JOBSET_RETURN_IF_ERROR(CheckName(name));
  const std::string key = store::keys::NamespaceKey(name);
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                            store_->Get(key));
    if (!kv.has_value()) return NotFound(name);
    JOBSET_ASSIGN_OR_RETURN(api::Namespace ns, Decode(*kv));
    absl::StatusOr<int64_t> revision =
        store_->Commit(store::Batch().DeleteAt(key, kv->mod_revision));
    if (revision.ok()) {
      ns.mutable_metadata()->set_resource_version(absl::StrCat(*revision));
      return ns;
    }
    if (revision.status().code() != absl::StatusCode::kAborted) {
      return revision.status();
    }
  }
  return absl::AbortedError(absl::StrCat("deleting Namespace \"", name,
                                         "\" kept conflicting; try again"));
}

absl::StatusOr<api::NamespacePodSecurity> ReadNamespacePodSecurity(
    store::Store* store, absl::string_view ns) {
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store->Get(store::keys::NamespaceKey(ns)));
  if (!kv.has_value()) return api::NamespacePodSecurity();
  JOBSET_ASSIGN_OR_RETURN(api::Namespace stored, Decode(*kv));
  absl::StatusOr<api::NamespacePodSecurity> parsed =
      api::ParseNamespacePodSecurity(stored.metadata().labels());
  if (!parsed.ok()) {
    // Apply validated the labels: a stored object that fails is corrupt.
    return absl::DataLossError(absl::StrCat("stored Namespace \"", ns,
                                            "\": ", parsed.status().message()));
  }
  return parsed;
}

}  // namespace jobset::scheduler
