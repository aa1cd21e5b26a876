#ifndef JOBSET_SCHEDULER_SERVER_NAMESPACE_API_H_
#define JOBSET_SCHEDULER_SERVER_NAMESPACE_API_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/pod_security.h"
#include "common/clock.h"
#include "proto/jobset_service.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// The v1 Namespace objects' verbs over the Store (key namespaces/<name>),
// without gRPC. A Namespace is optional: JobSets may live in a namespace
// that has none. Every mutation is one Store commit. Thread-safe.
class NamespaceApi {
 public:
  // jobsetd's bounds on Namespace objects, so that a list fits in one reply:
  // how many may exist, and the bytes of one's labels and annotations
  // (keys and values together).
  static constexpr int kMaxNamespaces = 1000;
  static constexpr int64_t kMaxMetadataBytes = 2048;

  NamespaceApi(store::Store* store, Clock* clock)
      : store_(store), clock_(clock) {}

  // Validates (api::ValidateNamespace and the bounds above) and creates the
  // Namespace, or replaces its labels and annotations (ALREADY_EXISTS
  // instead with `create_only`). Nothing is stored with `dry_run`.
  absl::StatusOr<api::ApplyNamespaceResponse> Apply(
      const api::ApplyNamespaceRequest& request);

  absl::StatusOr<api::Namespace> Get(absl::string_view name);

  // Every Namespace, by name, whose labels match the request's selector.
  absl::StatusOr<api::ListNamespacesResponse> List(
      const api::ListNamespacesRequest& request);

  // Deletes the object only (the namespace's JobSets stay).
  absl::StatusOr<api::Namespace> Delete(absl::string_view name);

 private:
  store::Store* const store_;
  Clock* const clock_;
};

// Reads the Pod Security labels of namespace `ns` (none when it has no
// Namespace object). kDataLoss when the stored object cannot be read.
absl::StatusOr<api::NamespacePodSecurity> ReadNamespacePodSecurity(
    store::Store* store, absl::string_view ns);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_NAMESPACE_API_H_
