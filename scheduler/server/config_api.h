#ifndef JOBSET_SCHEDULER_SERVER_CONFIG_API_H_
#define JOBSET_SCHEDULER_SERVER_CONFIG_API_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "proto/jobset_service.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// jobsetd's bounds on the v1 Secret and ConfigMap objects of one namespace
// (each kind on its own), so that a List of them fits one reply (the
// server's default --grpc_max_send_bytes is 16 MiB): how many may exist,
// and their stored bytes together. And the stored bytes of one (Kubernetes
// bounds its values to 1 MiB, api::kMaxConfigDataBytes; etcd one request
// to 1.5 MiB).
inline constexpr int kMaxConfigObjectsPerNamespace = 1000;
inline constexpr int64_t kMaxConfigBytesPerNamespace = 8 << 20;
inline constexpr int64_t kMaxConfigObjectBytes = 1536 * 1024;

// The v1 Secret objects' verbs over the Store (key secrets/<ns>/<name>),
// without gRPC or RBAC (the service checks those first). Apply normalizes
// (stringData folded into data, type "Opaque" by default) and validates as
// Kubernetes does (api/config_objects.h), then creates the Secret or
// replaces its labels, annotations, data and immutable (the type may not
// change). Only Get and List return data; Apply and Delete answer without
// it. Nothing here logs or quotes a value. An empty namespace means
// "default". Every mutation is one Store commit. Thread-safe.
class SecretApi {
 public:
  SecretApi(store::Store* store, Clock* clock) : store_(store), clock_(clock) {}

  // ALREADY_EXISTS with `create_only` when it exists; nothing is stored with
  // `dry_run`. RESOURCE_EXHAUSTED past the bounds above.
  absl::StatusOr<api::ApplySecretResponse> Apply(
      const api::ApplySecretRequest& request);
  absl::StatusOr<api::Secret> Get(absl::string_view ns, absl::string_view name);
  // The namespace's Secrets, by name, whose labels match the selector.
  absl::StatusOr<api::ListSecretsResponse> List(
      const api::ListSecretsRequest& request);
  absl::StatusOr<api::Secret> Delete(absl::string_view ns,
                                     absl::string_view name);

 private:
  store::Store* const store_;
  Clock* const clock_;
};

// The v1 ConfigMap objects' verbs, as SecretApi's (key
// configmaps/<ns>/<name>); Apply replaces labels, annotations, data,
// binaryData and immutable, and every verb returns the data. Thread-safe.
class ConfigMapApi {
 public:
  ConfigMapApi(store::Store* store, Clock* clock)
      : store_(store), clock_(clock) {}

  absl::StatusOr<api::ApplyConfigMapResponse> Apply(
      const api::ApplyConfigMapRequest& request);
  absl::StatusOr<api::ConfigMap> Get(absl::string_view ns,
                                     absl::string_view name);
  absl::StatusOr<api::ListConfigMapsResponse> List(
      const api::ListConfigMapsRequest& request);
  absl::StatusOr<api::ConfigMap> Delete(absl::string_view ns,
                                        absl::string_view name);

 private:
  store::Store* const store_;
  Clock* const clock_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_CONFIG_API_H_
