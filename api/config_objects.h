#ifndef JOBSET_API_CONFIG_OBJECTS_H_
#define JOBSET_API_CONFIG_OBJECTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/jobset_service.pb.h"

// v1 Secret and ConfigMap objects: reading their documents, Kubernetes'
// normalization and its validation (k8s.io/kubernetes pkg/apis/core/
// validation ValidateSecret, ValidateConfigMap and their Update forms), in
// its messages and field paths. Pure functions.
namespace jobset::api {

// Kubernetes' bound on the bytes of a Secret's or ConfigMap's values
// (core.MaxSecretSize, 1 MiB).
inline constexpr int64_t kMaxConfigDataBytes = 1 << 20;

// Secret types whose keys Kubernetes checks, and those keys.
inline constexpr char kSecretTypeOpaque[] = "Opaque";
inline constexpr char kSecretTypeDockerConfigJson[] =
    "kubernetes.io/dockerconfigjson";
inline constexpr char kDockerConfigJsonKey[] = ".dockerconfigjson";
inline constexpr char kSecretTypeDockercfg[] = "kubernetes.io/dockercfg";
inline constexpr char kDockercfgKey[] = ".dockercfg";

// Whether a document's apiVersion and kind are v1 Secret / v1 ConfigMap.
bool IsSecretKind(absl::string_view api_version, absl::string_view kind);
bool IsConfigMapKind(absl::string_view api_version, absl::string_view kind);

// Read one v1 Secret / ConfigMap document (YAML or JSON, Kubernetes' field
// names; `data` of a Secret and `binaryData` of a ConfigMap are base64) as
// api/manifest.h reads JobSets: unknown fields, wrong types, bad base64 and
// a wrong kind or apiVersion are kInvalidArgument naming the field. Only the
// shape is checked.
absl::StatusOr<Secret> ParseSecretDocument(absl::string_view text);
absl::StatusOr<ConfigMap> ParseConfigMapDocument(absl::string_view text);

// Returns `secret` as Kubernetes stores it: each stringData entry written
// into data (replacing a data entry of the same key), stringData cleared,
// and type "Opaque" when empty.
Secret NormalizeSecret(Secret secret);

// Checks a config key as Kubernetes' IsConfigMapKey: at most 253 characters
// of [-._a-zA-Z0-9], neither "." nor "..", not starting with "..". Returns
// the problems, empty when valid.
std::vector<std::string> IsConfigKey(absl::string_view key);

// Checks a normalized Secret (see NormalizeSecret) as Kubernetes does: name
// a DNS-1123 subdomain, namespace a DNS-1123 label, labels, annotations,
// keys, values at most kMaxConfigDataBytes together, and the keys its type
// needs (kubernetes.io/dockerconfigjson: `.dockerconfigjson` holding a JSON
// object with an "auths" object, stricter than Kubernetes, which wants any
// JSON object; kubernetes.io/dockercfg: `.dockercfg` a JSON object;
// kubernetes.io/basic-auth: `username` or `password`;
// kubernetes.io/ssh-auth: a non-empty `ssh-privatekey`; kubernetes.io/tls:
// `tls.crt` and `tls.key`; kubernetes.io/service-account-token: the
// `kubernetes.io/service-account.name` annotation). kInvalidArgument
// `Secret "x" is invalid: data[bad/key]: Invalid value: ...`. No message
// quotes a value.
absl::Status ValidateSecret(const Secret& secret);

// ValidateSecret, and what Kubernetes' ValidateSecretUpdate adds: the type
// may not change, and an immutable Secret keeps its data and stays
// immutable (`data: Forbidden: field is immutable when `immutable` is
// set`).
absl::Status ValidateSecretUpdate(const Secret& updated, const Secret& old);

// Checks a ConfigMap as Kubernetes does: metadata as for a Secret, keys of
// data and binaryData, no key in both, and values (data and binaryData
// together) at most kMaxConfigDataBytes.
absl::Status ValidateConfigMap(const ConfigMap& config_map);

// ValidateConfigMap, and an immutable ConfigMap keeps data and binaryData
// and stays immutable.
absl::Status ValidateConfigMapUpdate(const ConfigMap& updated,
                                     const ConfigMap& old);

}  // namespace jobset::api

#endif  // JOBSET_API_CONFIG_OBJECTS_H_
