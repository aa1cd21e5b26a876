#ifndef JOBSET_SCHEDULER_SERVER_KUEUE_API_H_
#define JOBSET_SCHEDULER_SERVER_KUEUE_API_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/kueue_kinds.h"
#include "api/label_selector.h"
#include "common/clock.h"
#include "proto/kueue.pb.h"
#include "proto/kueue_service.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// The kinds (KueueKind, FindKueueKind, KueueKindNamed) and the metadata of
// whichever object a KueueObject holds (KueueObjectMeta) are
// api/kueue_kinds.h's.

// The store key of `object` (store/keys.h KueueKey; a cluster-scoped kind's
// namespace is not part of it); `object` must hold an object.
std::string KueueObjectKey(const api::KueueObject& object);

// Reads a stored value of a key under store::keys::kKueue: kDataLoss naming
// the key and revision when it is not a KueueObject of the kind, namespace
// and name its key says. Stamps apiVersion, kind and resourceVersion (the
// key's mod_revision).
absl::StatusOr<api::KueueObject> DecodeKueueObject(const store::KeyValue& kv);
// The stored form of `object`: without apiVersion, kind and resourceVersion.
std::string EncodeKueueObject(api::KueueObject object);

// jobsetd's bounds on Kueue's objects, so that a List of one kind fits one
// reply (the server's default --grpc_max_send_bytes is 16 MiB): how many of
// a kind one namespace (a namespaced kind) or the cluster (a cluster-scoped
// kind) may hold, their stored bytes together, and one object's.
struct KueueLimits {
  int max_objects_per_scope = 1000;
  int64_t max_bytes_per_scope = 8 << 20;
  int64_t max_object_bytes = 1536 * 1024;
};

// Kueue's objects' verbs over the Store (keys kueue/<resource>/[<ns>/]<name>,
// store/keys.h), without gRPC or RBAC (KueueServiceImpl checks those first).
// Every verb names the kind as the request does (KueueKindNamed). A
// namespaced kind's empty namespace is "default"; a cluster-scoped kind's
// namespace is ignored (cleared in what is stored). Every mutation is one
// conditional Store commit. `status` is jobsetd's: Apply never writes it
// (the controller does, in its own commits, in the form EncodeKueueObject
// makes). Thread-safe.
class KueueApi {
 public:
  KueueApi(store::Store* store, Clock* clock,
           const KueueLimits& limits = KueueLimits())
      : store_(store), clock_(clock), limits_(limits) {}

  // Defaults (api/kueue_defaults.h) and validates (api/kueue_validation.h;
  // when the object exists, the kind's update rules against the stored
  // one), then creates the object or replaces its labels, annotations and
  // spec (a WorkloadPriorityClass's value and description). Of the
  // metadata only name, namespace, labels and annotations are taken; uid
  // and creationTimestamp are set at create, generation is 1 at create and
  // grows by one when the spec changes. A status in the request is ignored
  // and the stored one kept.
  //
  // `unchanged` when labels, annotations and spec are the stored ones
  // (nothing is written). ALREADY_EXISTS with `create_only` when it exists;
  // nothing is stored with `dry_run`. With metadata.resourceVersion set the
  // apply is conditional: ABORTED in Kubernetes' conflict words unless the
  // object is at that revision, NOT_FOUND when there is none. Without it,
  // a concurrent write of the same object is read again, up to 5 attempts,
  // then ABORTED. RESOURCE_EXHAUSTED past KueueLimits, naming the limit.
  absl::StatusOr<api::ApplyKueueObjectResponse> Apply(
      const api::ApplyKueueObjectRequest& request);

  // NOT_FOUND as Kubernetes says it: clusterqueues.kueue.x-k8s.io "cq" not
  // found.
  absl::StatusOr<api::KueueObject> Get(const api::KueueObjectRef& ref);

  // The objects of one kind (of the namespace, or of all namespaces) whose
  // labels match the selector, by namespace then name, and the revision they
  // were read at.
  absl::StatusOr<api::ListKueueObjectsResponse> List(
      const api::ListKueueObjectsRequest& request);

  // Deletes the object and returns its last state, with the delete's
  // revision as resourceVersion.
  absl::StatusOr<api::KueueObject> Delete(const api::KueueObjectRef& ref);

  // A watch in progress: Start it, then call Next until the caller is done.
  // Thread-compatible.
  class Watch {
   public:
    // Returns the changes after the last one returned (at first, after the
    // start revision) to objects of the kind and namespace that match the
    // selector, as ADDED, MODIFIED or DELETED (with the last state), waiting
    // until `deadline` for some (an empty result means none arrived).
    // OUT_OF_RANGE when the store no longer holds that history; DATA_LOSS
    // for a stored value that is not an object of the kind.
    absl::StatusOr<std::vector<api::KueueWatchEvent>> Next(absl::Time deadline);
    // The revision the watch resumes after: the last event returned (at
    // first, where it started).
    int64_t revision() const { return revision_; }
    // The store keys it watches start with this.
    const std::string& prefix() const { return prefix_; }

   private:
    friend class KueueApi;
    Watch(store::Store* store, std::string prefix, api::LabelSelector selector,
          int64_t revision)
        : store_(store),
          prefix_(std::move(prefix)),
          selector_(std::move(selector)),
          revision_(revision) {}

    store::Store* store_;
    std::string prefix_;
    api::LabelSelector selector_;
    int64_t revision_;
  };
  // Starts a watch from the request's resource_version (a store revision a
  // List returned), or from the current revision when it is empty.
  absl::StatusOr<Watch> StartWatch(
      const api::WatchKueueObjectsRequest& request);

 private:
  // Checks KueueLimits for writing `bytes` at `key` of `kind` in `ns`
  // (`replacing` the stored object there, or creating one).
  absl::Status CheckBounds(const api::KueueKind& kind, absl::string_view ns,
                           absl::string_view name, const std::string& key,
                           size_t bytes, bool replacing);

  store::Store* const store_;
  Clock* const clock_;
  const KueueLimits limits_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_KUEUE_API_H_
