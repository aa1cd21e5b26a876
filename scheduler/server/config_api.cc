#include "scheduler/server/config_api.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/config_objects.h"
#include "api/defaults.h"
#include "api/label_selector.h"
#include "api/names.h"
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

template <typename V>
bool SameMap(const google::protobuf::Map<std::string, V>& a,
             const google::protobuf::Map<std::string, V>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

bool SameMeta(const api::ObjectMeta& a, const api::ObjectMeta& b) {
  return SameMap(a.labels(), b.labels()) &&
         SameMap(a.annotations(), b.annotations());
}

std::string NamespaceOr(absl::string_view ns) {
  return ns.empty() ? std::string(api::kDefaultNamespace) : std::string(ns);
}

// What differs between Secrets and ConfigMaps, for ConfigObjects below.
struct SecretKind {
  using Object = api::Secret;
  using ApplyRequest = api::ApplySecretRequest;
  using ApplyResponse = api::ApplySecretResponse;
  using ListResponse = api::ListSecretsResponse;
  static constexpr absl::string_view kKind = "Secret";
  static constexpr absl::string_view kResource = "secrets";
  static std::string Key(absl::string_view ns, absl::string_view name) {
    return store::keys::SecretKey(ns, name);
  }
  static std::string Prefix(absl::string_view ns) {
    return store::keys::SecretPrefix(ns);
  }
  static const Object& Given(const ApplyRequest& r) { return r.secret(); }
  static Object* Answer(ApplyResponse* r) { return r->mutable_secret(); }
  static Object Normalize(Object o) { return api::NormalizeSecret(o); }
  static absl::Status Validate(const Object& o) {
    return api::ValidateSecret(o);
  }
  static absl::Status ValidateUpdate(const Object& o, const Object& old) {
    return api::ValidateSecretUpdate(o, old);
  }
  static bool SameContent(const Object& a, const Object& b) {
    return SameMeta(a.metadata(), b.metadata()) &&
           SameMap(a.data(), b.data()) && a.type() == b.type() &&
           a.has_immutable() == b.has_immutable() &&
           a.immutable() == b.immutable();
  }
  // Copies what Apply owns from `from` onto `to`.
  static void CopyContent(const Object& from, Object* to) {
    *to->mutable_metadata()->mutable_labels() = from.metadata().labels();
    *to->mutable_metadata()->mutable_annotations() =
        from.metadata().annotations();
    *to->mutable_data() = from.data();
    to->set_type(from.type());
    if (from.has_immutable()) {
      to->set_immutable(from.immutable());
    } else {
      to->clear_immutable();
    }
  }
  // Only Get and List show a Secret's values.
  static void Redact(Object* o) { o->clear_data(); }
};

struct ConfigMapKind {
  using Object = api::ConfigMap;
  using ApplyRequest = api::ApplyConfigMapRequest;
  using ApplyResponse = api::ApplyConfigMapResponse;
  using ListResponse = api::ListConfigMapsResponse;
  static constexpr absl::string_view kKind = "ConfigMap";
  static constexpr absl::string_view kResource = "configmaps";
  static std::string Key(absl::string_view ns, absl::string_view name) {
    return store::keys::ConfigMapKey(ns, name);
  }
  static std::string Prefix(absl::string_view ns) {
    return store::keys::ConfigMapPrefix(ns);
  }
  static const Object& Given(const ApplyRequest& r) { return r.config_map(); }
  static Object* Answer(ApplyResponse* r) { return r->mutable_config_map(); }
  static Object Normalize(Object o) { return o; }
  static absl::Status Validate(const Object& o) {
    return api::ValidateConfigMap(o);
  }
  static absl::Status ValidateUpdate(const Object& o, const Object& old) {
    return api::ValidateConfigMapUpdate(o, old);
  }
  static bool SameContent(const Object& a, const Object& b) {
    return SameMeta(a.metadata(), b.metadata()) &&
           SameMap(a.data(), b.data()) &&
           SameMap(a.binary_data(), b.binary_data()) &&
           a.has_immutable() == b.has_immutable() &&
           a.immutable() == b.immutable();
  }
  static void CopyContent(const Object& from, Object* to) {
    *to->mutable_metadata()->mutable_labels() = from.metadata().labels();
    *to->mutable_metadata()->mutable_annotations() =
        from.metadata().annotations();
    *to->mutable_data() = from.data();
    *to->mutable_binary_data() = from.binary_data();
    if (from.has_immutable()) {
      to->set_immutable(from.immutable());
    } else {
      to->clear_immutable();
    }
  }
  static void Redact(Object*) {}
};

// The verbs of one kind over the store; SecretApi and ConfigMapApi are
// these for their kinds.
template <typename Kind>
class ConfigObjects {
 public:
  using Object = typename Kind::Object;

  ConfigObjects(store::Store* store, Clock* clock)
      : store_(store), clock_(clock) {}

  absl::StatusOr<typename Kind::ApplyResponse> Apply(
      const typename Kind::ApplyRequest& request) {
    Object given = Kind::Normalize(Kind::Given(request));
    given.mutable_metadata()->set_namespace_(
        NamespaceOr(given.metadata().namespace_()));
    JOBSET_RETURN_IF_ERROR(Kind::Validate(given));
    const std::string& ns = given.metadata().namespace_();
    const std::string& name = given.metadata().name();
    const std::string key = Kind::Key(ns, name);
    for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
      JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> existing,
                              store_->Get(key));
      typename Kind::ApplyResponse response;
      Object* object = Kind::Answer(&response);
      store::Batch batch;
      if (existing.has_value()) {
        if (request.create_only()) {
          return absl::AlreadyExistsError(
              absl::StrCat(Kind::kResource, " \"", name, "\" already exists"));
        }
        JOBSET_ASSIGN_OR_RETURN(*object, Decode(*existing));
        if (Kind::SameContent(*object, given)) {
          response.set_unchanged(true);
          Kind::Redact(object);
          return response;
        }
        // Checked against the stored object (type, immutable), with what
        // the stored one keeps (uid, creation time) on the given.
        JOBSET_RETURN_IF_ERROR(Kind::ValidateUpdate(given, *object));
        Kind::CopyContent(given, object);
      } else {
        // Of the metadata, jobsetd keeps what a Namespace keeps.
        *object = given;
        api::ObjectMeta* meta = object->mutable_metadata();
        meta->Clear();
        meta->set_name(name);
        meta->set_namespace_(ns);
        *meta->mutable_labels() = given.metadata().labels();
        *meta->mutable_annotations() = given.metadata().annotations();
        meta->set_uid(NewUid());
        meta->mutable_creation_timestamp()->set_seconds(
            absl::ToUnixSeconds(clock_->Now()));
        response.set_created(true);
      }
      const std::string value = Encode(*object);
      JOBSET_RETURN_IF_ERROR(CheckBounds(
          ns, name, value.size(), existing.has_value() ? key : std::string()));
      if (existing.has_value()) {
        batch.Update(key, value, existing->mod_revision);
      } else {
        batch.Create(key, value);
      }
      object->set_api_version("v1");
      object->set_kind(std::string(Kind::kKind));
      Kind::Redact(object);
      if (request.dry_run()) return response;
      absl::StatusOr<int64_t> revision = store_->Commit(batch);
      if (revision.ok()) {
        object->mutable_metadata()->set_resource_version(
            absl::StrCat(*revision));
        return response;
      }
      // A concurrent write of the same object: read it again.
      if (revision.status().code() != absl::StatusCode::kAborted) {
        return revision.status();
      }
    }
    return absl::AbortedError(absl::StrCat("applying ", Kind::kKind, " \"",
                                           name,
                                           "\" kept conflicting; try "
                                           "again"));
  }

  absl::StatusOr<Object> Get(absl::string_view ns_given,
                             absl::string_view name) {
    const std::string ns = NamespaceOr(ns_given);
    JOBSET_RETURN_IF_ERROR(CheckName(ns, name));
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                            store_->Get(Kind::Key(ns, name)));
    if (!kv.has_value()) return NotFound(name);
    return Decode(*kv);
  }

  template <typename Request>
  absl::StatusOr<typename Kind::ListResponse> List(const Request& request) {
    const std::string ns = NamespaceOr(request.namespace_());
    if (std::vector<std::string> bad = api::IsDns1123Label(ns); !bad.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "namespace \"", ns.substr(0, 64), "\": ", absl::StrJoin(bad, "; ")));
    }
    JOBSET_ASSIGN_OR_RETURN(
        api::LabelSelector selector,
        api::LabelSelector::Parse(request.label_selector()));
    typename Kind::ListResponse response;
    JOBSET_ASSIGN_OR_RETURN(
        const int64_t revision,
        store::ScanAllWithRevision(
            *store_, Kind::Prefix(ns),
            [&](const store::KeyValue& kv) -> absl::Status {
              JOBSET_ASSIGN_OR_RETURN(Object object, Decode(kv));
              if (selector.Matches(object.metadata().labels())) {
                *response.add_items() = std::move(object);
              }
              return absl::OkStatus();
            }));
    response.set_resource_version(absl::StrCat(revision));
    return response;
  }

  absl::StatusOr<Object> Delete(absl::string_view ns_given,
                                absl::string_view name) {
    const std::string ns = NamespaceOr(ns_given);
    JOBSET_RETURN_IF_ERROR(CheckName(ns, name));
    const std::string key = Kind::Key(ns, name);
    for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
      JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                              store_->Get(key));
      if (!kv.has_value()) return NotFound(name);
      JOBSET_ASSIGN_OR_RETURN(Object object, Decode(*kv));
      absl::StatusOr<int64_t> revision =
          store_->Commit(store::Batch().DeleteAt(key, kv->mod_revision));
      if (revision.ok()) {
        object.mutable_metadata()->set_resource_version(
            absl::StrCat(*revision));
        Kind::Redact(&object);
        return object;
      }
      if (revision.status().code() != absl::StatusCode::kAborted) {
        return revision.status();
      }
    }
    return absl::AbortedError(absl::StrCat("deleting ", Kind::kKind, " \"",
                                           name,
                                           "\" kept conflicting; try "
                                           "again"));
  }

 private:
  static absl::Status NotFound(absl::string_view name) {
    return absl::NotFoundError(
        absl::StrCat(Kind::kResource, " \"", name, "\" not found"));
  }

  // Checks a namespace and name from a request before they become part of
  // a key.
  static absl::Status CheckName(absl::string_view ns, absl::string_view name) {
    Object object;
    object.mutable_metadata()->set_namespace_(std::string(ns));
    object.mutable_metadata()->set_name(std::string(name));
    return Kind::Validate(Kind::Normalize(object));
  }

  static absl::StatusOr<Object> Decode(const store::KeyValue& kv) {
    JOBSET_ASSIGN_OR_RETURN(Object object, store::DecodeValue<Object>(kv));
    object.set_api_version("v1");
    object.set_kind(std::string(Kind::kKind));
    object.mutable_metadata()->set_resource_version(
        absl::StrCat(kv.mod_revision));
    return object;
  }

  // What is stored: no apiVersion, kind or resourceVersion (it is the
  // key's revision).
  static std::string Encode(Object object) {
    object.clear_api_version();
    object.clear_kind();
    object.mutable_metadata()->clear_resource_version();
    return object.SerializeAsString();
  }

  // Checks the bounds of config_api.h for writing `bytes` at `name` of `ns`
  // (replacing the object at `replaced`, when not empty).
  absl::Status CheckBounds(const std::string& ns, const std::string& name,
                           size_t bytes, const std::string& replaced) {
    const std::string what = absl::StrCat(Kind::kResource, " \"", name, "\": ");
    if (static_cast<int64_t>(bytes) > kMaxConfigObjectBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          Kind::kKind, " \"", name, "\" is invalid: Too long: the ",
          Kind::kKind, " would take ", bytes, " bytes stored, more than ",
          kMaxConfigObjectBytes, " (jobsetd's limit for one ", Kind::kKind,
          ")"));
    }
    int count = 0;
    int64_t total = static_cast<int64_t>(bytes);
    JOBSET_RETURN_IF_ERROR(store::ScanAll(
        *store_, Kind::Prefix(ns), [&](const store::KeyValue& kv) {
          if (kv.key == replaced) return absl::OkStatus();
          ++count;
          total += static_cast<int64_t>(kv.value.size());
          return absl::OkStatus();
        }));
    if (replaced.empty() && count >= kMaxConfigObjectsPerNamespace) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, "namespace \"", ns, "\" has ", count, " ", Kind::kKind,
          " objects, the most jobsetd keeps per namespace (",
          kMaxConfigObjectsPerNamespace, ")"));
    }
    if (total > kMaxConfigBytesPerNamespace) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what, "the ", Kind::kKind, " objects of namespace \"",
                       ns, "\" would take ", total,
                       " bytes, more than jobsetd keeps per namespace (",
                       kMaxConfigBytesPerNamespace, ")"));
    }
    return absl::OkStatus();
  }

  store::Store* const store_;
  Clock* const clock_;
};

}  // namespace

absl::StatusOr<api::ApplySecretResponse> SecretApi::Apply(
    const api::ApplySecretRequest& request) {
  return ConfigObjects<SecretKind>(store_, clock_).Apply(request);
}

absl::StatusOr<api::Secret> SecretApi::Get(absl::string_view ns,
                                           absl::string_view name) {
  return ConfigObjects<SecretKind>(store_, clock_).Get(ns, name);
}

absl::StatusOr<api::ListSecretsResponse> SecretApi::List(
    const api::ListSecretsRequest& request) {
  return ConfigObjects<SecretKind>(store_, clock_).List(request);
}

absl::StatusOr<api::Secret> SecretApi::Delete(absl::string_view ns,
                                              absl::string_view name) {
  return ConfigObjects<SecretKind>(store_, clock_).Delete(ns, name);
}

absl::StatusOr<api::ApplyConfigMapResponse> ConfigMapApi::Apply(
    const api::ApplyConfigMapRequest& request) {
  return ConfigObjects<ConfigMapKind>(store_, clock_).Apply(request);
}

absl::StatusOr<api::ConfigMap> ConfigMapApi::Get(absl::string_view ns,
                                                 absl::string_view name) {
  return ConfigObjects<ConfigMapKind>(store_, clock_).Get(ns, name);
}

absl::StatusOr<api::ListConfigMapsResponse> ConfigMapApi::List(
    const api::ListConfigMapsRequest& request) {
  return ConfigObjects<ConfigMapKind>(store_, clock_).List(request);
}

absl::StatusOr<api::ConfigMap> ConfigMapApi::Delete(absl::string_view ns,
                                                    absl::string_view name) {
  return ConfigObjects<ConfigMapKind>(store_, clock_).Delete(ns, name);
}

}  // namespace jobset::scheduler
