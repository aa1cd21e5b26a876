#include "api/config_objects.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/field_errors.h"
#include "api/manifest.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "common/quote.h"
#include "google/protobuf/map.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace jobset::api {
namespace {

constexpr char kImmutableWhenSet[] =
    "field is immutable when `immutable` is set";
// Kubernetes' placeholder for a value it will not quote.
constexpr char kRedacted[] = "<secret contents redacted>";
constexpr int kMaxConfigKeyLength = 253;
// Bounds on what one refusal quotes, so that a hostile object cannot make a
// huge message: invalid keys reported per map, and bytes of a long key or
// name shown.
constexpr int kMaxKeyErrors = 10;
constexpr size_t kShownBytes = 64;

// `s`, or its first kShownBytes and "..." when it is over 253 bytes.
std::string Shown(absl::string_view s) {
  if (s.size() <= kMaxConfigKeyLength) return std::string(s);
  return absl::StrCat(s.substr(0, kShownBytes), "...");
}

template <typename V>
std::vector<std::string> SortedKeys(
    const google::protobuf::Map<std::string, V>& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& [k, v] : map) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

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

// Reads one document of `kind` into `message`, checking kind and apiVersion.
template <typename T>
absl::StatusOr<T> ParseDocument(absl::string_view text,
                                absl::string_view kind) {
  if (text.size() > kMaxManifestBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("document is larger than ", kMaxManifestBytes, " bytes"));
  }
  T object;
  if (absl::Status s = ParseManifestDocument(text, &object, nullptr); !s.ok()) {
    return s;
  }
  if (object.kind() != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "document: kind: Unsupported value: ", Quote(object.kind()),
        ": supported values: \"", kind, "\""));
  }
  if (object.api_version() != "v1") {
    return absl::InvalidArgumentError(
        absl::StrCat("document: apiVersion: Unsupported value: \"",
                     object.api_version(), "\": supported values: \"v1\""));
  }
  return object;
}

// ValidateObjectMeta for a namespaced object named as a DNS subdomain.
void ValidateMeta(const ObjectMeta& meta, FieldErrors* errors) {
  if (meta.name().empty()) {
    errors->Required("metadata.name", "name or generateName is required");
  } else if (std::vector<std::string> bad = IsDns1123Subdomain(meta.name());
             !bad.empty()) {
    errors->Invalid("metadata.name", Shown(meta.name()),
                    absl::StrJoin(bad, "; "));
  }
  if (!meta.generate_name().empty()) {
    errors->Forbidden("metadata.generateName",
                      "jobsetd needs the name of a Secret or ConfigMap");
  }
  if (meta.namespace_().empty()) {
    errors->Required("metadata.namespace");
  } else if (std::vector<std::string> bad = IsDns1123Label(meta.namespace_());
             !bad.empty()) {
    errors->Invalid("metadata.namespace", Shown(meta.namespace_()),
                    absl::StrJoin(bad, "; "));
  }
  ValidateLabels(meta.labels(), "metadata.labels", errors);
  ValidateAnnotations(meta.annotations(), "metadata.annotations", errors);
}

// Checks the keys of `map` (at `path`) and adds its values' bytes to
// `*total`.
template <typename V>
void ValidateKeys(const google::protobuf::Map<std::string, V>& map,
                  absl::string_view path, FieldErrors* errors, int64_t* total) {
  int invalid = 0;
  for (const std::string& key : SortedKeys(map)) {
    std::vector<std::string> problems = IsConfigKey(key);
    if (!problems.empty() && ++invalid <= kMaxKeyErrors) {
      const std::string shown = Shown(key);
      for (const std::string& problem : problems) {
        errors->Invalid(Key(path, shown), shown, problem);
      }
    }
    *total += static_cast<int64_t>(map.at(key).size());
  }
  if (invalid > kMaxKeyErrors) {
    errors->Add(path, absl::StrCat("Invalid value: ", invalid - kMaxKeyErrors,
                                   " more invalid keys"));
  }
}

void CheckTotal(int64_t total, absl::string_view path, FieldErrors* errors) {
  if (total > kMaxConfigDataBytes) {
    // Kubernetes' TooLong wording of recent releases.
    errors->Add(path, absl::StrCat("Too long: must have at most ",
                                   kMaxConfigDataBytes, " bytes"));
  }
}

// Whether `bytes` is a JSON object; with `auths`, one whose "auths" is an
// object too.
bool IsJsonObject(const std::string& bytes, bool auths) {
  google::protobuf::Struct parsed;
  if (!google::protobuf::util::JsonStringToMessage(bytes, &parsed).ok()) {
    return false;
  }
  if (!auths) return true;
  auto it = parsed.fields().find("auths");
  return it != parsed.fields().end() && it->second.has_struct_value();
}

void ValidateSecretType(const Secret& secret, FieldErrors* errors) {
  const auto& data = secret.data();
  const std::string& type = secret.type();
  auto required = [&](absl::string_view key) {
    errors->Required(Key("data", key));
  };
  if (type == "kubernetes.io/service-account-token") {
    auto it = secret.metadata().annotations().find(
        "kubernetes.io/service-account.name");
    if (it == secret.metadata().annotations().end() || it->second.empty()) {
      errors->Required(
          Key("metadata.annotations", "kubernetes.io/service-account.name"));
    }
  } else if (type == kSecretTypeDockercfg ||
             type == kSecretTypeDockerConfigJson) {
    const bool json = type == kSecretTypeDockerConfigJson;
    const char* key = json ? kDockerConfigJsonKey : kDockercfgKey;
    auto it = data.find(key);
    if (it == data.end()) {
      required(key);
    } else if (!IsJsonObject(it->second, json)) {
      errors->Invalid(Key("data", key), kRedacted,
                      json ? "must be a JSON object with an \"auths\" object"
                           : "must be a JSON object");
    }
  } else if (type == "kubernetes.io/basic-auth") {
    // Either may be empty, but one must be there.
    if (!data.contains("username") && !data.contains("password")) {
      required("username");
      required("password");
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    auto it = data.find("ssh-privatekey");
    if (it == data.end() || it->second.empty()) required("ssh-privatekey");
  } else if (type == "kubernetes.io/tls") {
    if (!data.contains("tls.crt")) required("tls.crt");
    if (!data.contains("tls.key")) required("tls.key");
  }
}

void ValidateSecretInto(const Secret& secret, FieldErrors* errors) {
  ValidateMeta(secret.metadata(), errors);
  int64_t total = 0;
  ValidateKeys(secret.data(), "data", errors, &total);
  CheckTotal(total, "data", errors);
  if (!secret.string_data().empty()) {
    // NormalizeSecret folds it into data before validation.
    errors->Forbidden("stringData", "must be folded into data first");
  }
  ValidateSecretType(secret, errors);
}

void ValidateConfigMapInto(const ConfigMap& config_map, FieldErrors* errors) {
  ValidateMeta(config_map.metadata(), errors);
  int64_t total = 0;
  ValidateKeys(config_map.data(), "data", errors, &total);
  for (const std::string& key : SortedKeys(config_map.data())) {
    if (config_map.binary_data().contains(key)) {
      errors->Invalid(Key("data", Shown(key)), Shown(key),
                      "duplicate of key present in binaryData");
    }
  }
  ValidateKeys(config_map.binary_data(), "binaryData", errors, &total);
  // Kubernetes names no field (the whole object); jobsetd says "data".
  CheckTotal(total, "data", errors);
}

std::string Object(absl::string_view kind, const ObjectMeta& meta) {
  return absl::StrCat(kind, " \"", meta.name(), "\"");
}

}  // namespace

bool IsSecretKind(absl::string_view api_version, absl::string_view kind) {
  return api_version == "v1" && kind == "Secret";
}

bool IsConfigMapKind(absl::string_view api_version, absl::string_view kind) {
  return api_version == "v1" && kind == "ConfigMap";
}

absl::StatusOr<Secret> ParseSecretDocument(absl::string_view text) {
  return ParseDocument<Secret>(text, "Secret");
}

absl::StatusOr<ConfigMap> ParseConfigMapDocument(absl::string_view text) {
  return ParseDocument<ConfigMap>(text, "ConfigMap");
}

Secret NormalizeSecret(Secret secret) {
  for (auto& [key, value] : *secret.mutable_string_data()) {
    (*secret.mutable_data())[key] = std::move(value);
  }
  secret.clear_string_data();
  if (secret.type().empty()) secret.set_type(kSecretTypeOpaque);
  return secret;
}

std::vector<std::string> IsConfigKey(absl::string_view key) {
  std::vector<std::string> problems;
  if (key.size() > kMaxConfigKeyLength) {
    problems.push_back(absl::StrCat("must be no more than ",
                                    kMaxConfigKeyLength, " characters"));
  }
  const bool matches =
      !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
      });
  if (!matches) {
    problems.push_back(
        "a valid config key must consist of alphanumeric characters, '-', "
        "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
        "used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    problems.push_back("must not be '.'");
  } else if (key == "..") {
    problems.push_back("must not be '..'");
  } else if (key.substr(0, 2) == "..") {
    problems.push_back("must not start with '..'");
  }
  return problems;
}

absl::Status ValidateSecret(const Secret& secret) {
  FieldErrors errors;
  ValidateSecretInto(secret, &errors);
  return errors.ToStatus(Object("Secret", secret.metadata()));
}

absl::Status ValidateSecretUpdate(const Secret& updated, const Secret& old) {
  FieldErrors errors;
  if (updated.type() != old.type()) {
    errors.Invalid("type", updated.type(), "field is immutable");
  }
  if (old.has_immutable() && old.immutable()) {
    if (!updated.has_immutable() || !updated.immutable()) {
      errors.Forbidden("immutable", kImmutableWhenSet);
    }
    if (!SameMap(updated.data(), old.data())) {
      errors.Forbidden("data", kImmutableWhenSet);
    }
  }
  ValidateSecretInto(updated, &errors);
  return errors.ToStatus(Object("Secret", updated.metadata()));
}

absl::Status ValidateConfigMap(const ConfigMap& config_map) {
  FieldErrors errors;
  ValidateConfigMapInto(config_map, &errors);
  return errors.ToStatus(Object("ConfigMap", config_map.metadata()));
}

absl::Status ValidateConfigMapUpdate(const ConfigMap& updated,
                                     const ConfigMap& old) {
  FieldErrors errors;
  if (old.has_immutable() && old.immutable()) {
    if (!updated.has_immutable() || !updated.immutable()) {
      errors.Forbidden("immutable", kImmutableWhenSet);
    }
    if (!SameMap(updated.data(), old.data())) {
      errors.Forbidden("data", kImmutableWhenSet);
    }
    if (!SameMap(updated.binary_data(), old.binary_data())) {
      errors.Forbidden("binaryData", kImmutableWhenSet);
    }
  }
  ValidateConfigMapInto(updated, &errors);
  return errors.ToStatus(Object("ConfigMap", updated.metadata()));
}

}  // namespace jobset::api
