#ifndef JOBSET_SCHEDULER_SERVER_JOBSET_API_H_
#define JOBSET_SCHEDULER_SERVER_JOBSET_API_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/label_selector.h"
#include "api/pod_security.h"
#include "api/validation.h"
#include "api/validation_limits.h"
#include "common/clock.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.pb.h"
#include "scheduler/server/jobset_counter.h"
#include "store/store.h"

namespace jobset::scheduler {

// jobsetd's limits at the API edge (JobSetApi), set from its flags
// (scheduler/README.md has the table).
struct ApiLimits {
  // What one JobSet may ask for, checked by Create and Update.
  api::Limits spec;
  // JobSets stored, checked by Create: RESOURCE_EXHAUSTED beyond
  // (--max_jobsets_per_namespace, --max_jobsets).
  int64_t max_jobsets_per_namespace = 10'000;
  int64_t max_jobsets = 100'000;
  // Pod Security admission where a namespace's labels say nothing
  // (--pod_security, --allowed_host_paths), checked by Create and by an
  // Update that changes a pod template.
  api::PodSecurityConfig pod_security;
};

// The JobSet API's verbs over the Store, without gRPC: what JobSetService
// calls after converting a request. Create and Update default and validate
// with upstream's rules; every mutation is one Store commit (durable when it
// returns); updates and deletes compare resourceVersions. The controller
// (which owns status) learns of changes from the store's events. Thread-safe.
class JobSetApi {
 public:
  // A JobSet's serialized size is limited as upstream's manifest size.
  static constexpr size_t kMaxJobSetBytes = 1536 * 1024;
  // List page sizes: `limit` 0 means kDefaultListLimit; above kMaxListLimit
  // is INVALID_ARGUMENT. A page also ends once its items pass
  // kMaxPageBytes (it always holds at least one), so that every page fits
  // in a client's default 4 MiB receive limit.
  static constexpr int kDefaultListLimit = 500;
  static constexpr int kMaxListLimit = 10'000;
  static constexpr size_t kMaxPageBytes = 2 << 20;

  using Limits = ApiLimits;

  JobSetApi(store::Store* store, Clock* clock, api::Features features,
            const Limits& limits = Limits());

  struct CreateResult {
    api::JobSet jobset;
    bool created = false;  // False when an identical JobSet existed.
    // The violations of the namespace's pod-security warn level.
    std::vector<std::string> warnings;
  };
  // Defaults, validates, admits (Pod Security: PERMISSION_DENIED with
  // Kubernetes' message) and stores `jobset` (nothing is stored when
  // `dry_run`).
  absl::StatusOr<CreateResult> Create(api::JobSet jobset, bool dry_run);

  absl::StatusOr<api::JobSet> Get(absl::string_view ns, absl::string_view name);

  absl::StatusOr<api::ListJobSetsResponse> List(
      const api::ListJobSetsRequest& request);

  // Replaces labels, annotations and spec of the stored JobSet; see
  // JobSetService.UpdateJobSet.
  absl::StatusOr<api::JobSet> Update(const api::JobSet& jobset, bool dry_run);

  // Sets spec.suspend, retrying on conflicting writes.
  absl::StatusOr<api::JobSet> SetSuspend(absl::string_view ns,
                                         absl::string_view name, bool suspend);

  absl::StatusOr<api::JobSet> Delete(absl::string_view ns,
                                     absl::string_view name,
                                     absl::string_view resource_version);

  // Return the child Jobs, pods and events the controller stored for the
  // JobSets of a namespace, or of one JobSet when `request.jobset` is set
  // (an unknown JobSet has none). Jobs come in key order (JobSet, then
  // name), pods by Job in that order and then as their Job lists them,
  // events oldest first per JobSet. Each list is read at one store revision
  // per page of the scan, as List is; pods are built from their Job, read
  // with each Job's pods (scheduler/controller/stored_pods.h).
  absl::StatusOr<api::ListJobsResponse> ListJobs(
      const api::ListJobsRequest& request);
  absl::StatusOr<api::ListPodsResponse> ListPods(
      const api::ListPodsRequest& request);
  absl::StatusOr<api::ListEventsResponse> ListEvents(
      const api::ListEventsRequest& request);

  // Where a paged list stands, for the pager below.
  struct PageItems {
    int items = 0;      // Items added to the page from one stored value.
    size_t bytes = 0;   // Their serialized size.
    std::string last;   // The name of the last one added ("" if none).
    bool stop = false;  // The page is full: nothing after `last` was added.
  };

  // A watch in progress: Start it, then call Next until the caller is done.
  // Thread-compatible.
  class Watch {
   public:
    // Returns the next events: on the first call after Start without a
    // resourceVersion, the current JobSets as ADDED; then changes, waiting
    // until `deadline` for some (an empty result means none arrived).
    absl::StatusOr<std::vector<api::WatchEvent>> Next(absl::Time deadline);
    // The revision the watch resumes after: the last event returned (at
    // first, where it started).
    int64_t revision() const { return revision_; }
    // The store keys it watches start with this.
    const std::string& prefix() const { return prefix_; }

   private:
    friend class JobSetApi;
    Watch(store::Store* store, std::string prefix, api::LabelSelector selector)
        : store_(store),
          prefix_(std::move(prefix)),
          selector_(std::move(selector)) {}

    store::Store* store_;
    std::string prefix_;
    api::LabelSelector selector_;
    int64_t revision_ = 0;
    std::vector<api::WatchEvent> initial_;
  };
  absl::StatusOr<Watch> StartWatch(const api::WatchJobSetsRequest& request);

 private:
  // Adds the items of one stored value to a page: those after item `after`
  // ("" for all), at most `max_items`, and while their bytes stay within
  // `max_bytes` unless `page_empty` (a page holds at least one item).
  using AddItems = std::function<absl::StatusOr<PageItems>(
      const store::KeyValue& kv, absl::string_view after, int max_items,
      size_t max_bytes, bool page_empty)>;

  // Reads one page of the values under `prefix`, from `continue_token`, up
  // to `limit` items (0: kDefaultListLimit), handing each value to `add`.
  // Returns the page's continue token ("" at the end) in `*next` and the
  // list's resourceVersion (its first page's revision) in
  // `*resource_version`.
  absl::Status ListPage(absl::string_view prefix, int32_t limit,
                        absl::string_view continue_token, const AddItems& add,
                        std::string* next, std::string* resource_version);

  // Lists one page of the items stored under the child prefix `kind`
  // (keys::kJobs or kEvents) of the request's namespace and, if set,
  // JobSet: one item per key.
  template <typename Response, typename Request>
  absl::StatusOr<Response> ListChildren(absl::string_view kind,
                                        const Request& request);

  // Applies Pod Security admission to `jobset` at its namespace's level (its
  // Namespace's enforce label, else limits_.pod_security) and records that
  // level in its kPodSecurityLevelKey annotation: returns the warnings of the
  // namespace's warn level, or PERMISSION_DENIED.
  absl::StatusOr<std::vector<std::string>> AdmitPodSecurity(
      api::JobSet* jobset);

  // Reads the JobSet at `key` with its resourceVersion; kNotFound naming it.
  absl::StatusOr<std::pair<api::JobSet, int64_t>> Read(absl::string_view ns,
                                                       absl::string_view name);

  store::Store* const store_;
  Clock* const clock_;
  // For a JobSet Kueue manages, what Kueue owns stays as stored in
  // `updated` (as kubectl apply's merge keeps fields a manifest does not
  // set): spec.suspend, and each pod template the request sends as it was
  // before Kueue injected its admission's flavors (the Workload's copy).
  absl::Status KeepKueueFields(const api::JobSet& old, api::JobSet* updated);

  const api::Features features_;
  const Limits limits_;
  JobSetCounter counter_;
};

// Decodes a stored JobSet and stamps its resourceVersion: kDataLoss naming
// the key when the bytes are not a JobSet.
absl::StatusOr<api::JobSet> DecodeJobSet(const store::KeyValue& kv);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_JOBSET_API_H_
