#include "scheduler/server/jobset_api.h"

#include <optional>
#include <type_traits>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/defaults.h"
#include "api/names.h"
#include "common/failpoint.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "google/protobuf/util/message_differencer.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/jobset_update_rules.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/queues/podset_injection.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "scheduler/server/namespace_api.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

using ::google::protobuf::util::MessageDifferencer;

constexpr size_t kScanChunk = 500;
constexpr size_t kWatchBatch = 500;
// How often a conflicting write is retried where the API retries for the
// caller (Create racing itself, Suspend/Resume).
constexpr int kMaxRetries = 10;
constexpr absl::string_view kContinueVersion = "v2";

// Kubernetes' generateName suffix: 5 characters without vowels or look-alikes.
std::string NameSuffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  thread_local absl::BitGen gen;
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix.push_back(
        kAlphabet[absl::Uniform<size_t>(gen, 0, sizeof(kAlphabet) - 1)]);
  }
  return suffix;
}

std::string Namespaced(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

absl::Status Conflict(absl::string_view name) {
  return absl::AbortedError(absl::StrCat(
      "Operation cannot be fulfilled on jobsets.jobset.x-k8s.io ", Quote(name),
      ": the object has been modified; please apply your changes to the "
      "latest version and try again"));
}

absl::Status CheckSize(const api::JobSet& jobset) {
  const size_t size = jobset.ByteSizeLong();
  if (size <= JobSetApi::kMaxJobSetBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "JobSet \"", jobset.metadata().name(), "\" is ", size,
      " bytes; the limit is ", JobSetApi::kMaxJobSetBytes, " bytes (1.5 MiB)"));
}

// Returns `ns`, or "default" when empty; kInvalidArgument if it is not a
// DNS-1123 label (which also keeps it from reaching into other keys).
absl::StatusOr<std::string> Namespace(absl::string_view ns) {
  if (ns.empty()) return std::string(api::kDefaultNamespace);
  std::vector<std::string> errors = api::IsDns1123Label(ns);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata.namespace: Invalid value: ", Quote(ns), ": ", errors[0]));
  }
  return std::string(ns);
}

absl::Status CheckName(absl::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("metadata.name: Required value");
  }
  std::vector<std::string> errors = api::IsDns1123Subdomain(name);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata.name: Invalid value: ", Quote(name), ": ", errors[0]));
  }
  return absl::OkStatus();
}

// Returns the prefix of the children of kind `kind` (keys::kJobs, kPods or
// kEvents) that `request` asks for: its namespace's and, if it names one,
// its JobSet's.
template <typename Request>
absl::StatusOr<std::string> ChildPrefix(absl::string_view kind,
                                        const Request& request) {
  JOBSET_ASSIGN_OR_RETURN(std::string ns, Namespace(request.namespace_()));
  std::string prefix = absl::StrCat(kind, ns, "/");
  if (!request.jobset().empty()) {
    JOBSET_RETURN_IF_ERROR(CheckName(request.jobset()));
    absl::StrAppend(&prefix, request.jobset(), "/");
  }
  return prefix;
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

std::string Encode(api::JobSet jobset) {
  // The revision is the store's; it is not kept inside the value.
  jobset.mutable_metadata()->clear_resource_version();
  return jobset.SerializeAsString();
}

// Where a paged list continues: after item `item` of the value at `key`
// (after the whole value when `item` is empty), for a list read from
// `revision` on.
struct Cursor {
  int64_t revision = -1;
  std::string key;
  std::string item;
};

// A continue token: "v2", the revision, the key and the item, each on a line
// (keys and names hold no newline), web-safe base64 encoded. Opaque to
// clients.
std::string ContinueToken(const Cursor& cursor) {
  return absl::WebSafeBase64Escape(absl::StrCat(kContinueVersion, "\n",
                                                cursor.revision, "\n",
                                                cursor.key, "\n", cursor.item));
}

absl::StatusOr<Cursor> ParseContinueToken(absl::string_view token,
                                          absl::string_view prefix) {
  std::string text;
  Cursor cursor;
  std::vector<std::string> parts;
  if (absl::WebSafeBase64Unescape(token, &text)) {
    parts = absl::StrSplit(text, '\n');
  }
  if (parts.size() != 4 || parts[0] != kContinueVersion ||
      !absl::SimpleAtoi(parts[1], &cursor.revision) || cursor.revision < 0 ||
      !absl::StartsWith(parts[2], prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "continue: Invalid value: ", Quote(token),
        ": not a continue token of this list (pass back the continue of the "
        "previous page, with the same namespace, JobSet and kind)"));
  }
  cursor.key = std::move(parts[2]);
  cursor.item = std::move(parts[3]);
  return cursor;
}

// Returns `limit`, kDefaultListLimit for 0; kInvalidArgument outside
// [0, kMaxListLimit].
absl::StatusOr<int> PageLimit(int32_t limit) {
  if (limit < 0 || limit > JobSetApi::kMaxListLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "limit: Invalid value: ", limit, ": must be between 0 (meaning ",
        JobSetApi::kDefaultListLimit, ") and ", JobSetApi::kMaxListLimit));
  }
  return limit == 0 ? JobSetApi::kDefaultListLimit : limit;
}

// Adds the one item a value holds, decoded by `decode` (nullopt: it does not
// match the list's selector), to `items`.
template <typename Item>
absl::StatusOr<JobSetApi::PageItems> AddOne(
    absl::StatusOr<std::optional<Item>> decoded, size_t max_bytes,
    bool page_empty, google::protobuf::RepeatedPtrField<Item>* items) {
  if (!decoded.ok()) return decoded.status();
  JobSetApi::PageItems added;
  if (!decoded->has_value()) return added;
  const size_t bytes = (*decoded)->ByteSizeLong();
  if (!page_empty && bytes > max_bytes) {
    added.stop = true;
    return added;
  }
  added.items = 1;
  added.bytes = bytes;
  added.last = (*decoded)->metadata().name();
  *items->Add() = **std::move(decoded);
  return added;
}

// Whether any replicatedJob's pod template differs (or one was added or
// removed).
bool PodTemplatesChanged(const api::JobSet& old, const api::JobSet& updated) {
  const auto& a = old.spec().replicated_jobs();
  const auto& b = updated.spec().replicated_jobs();
  if (a.size() != b.size()) return true;
  for (int i = 0; i < a.size(); ++i) {
    if (!MessageDifferencer::Equals(a[i].template_().spec().template_(),
                                    b[i].template_().spec().template_())) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<api::JobSet> DecodeJobSet(const store::KeyValue& kv) {
  JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset,
                          store::DecodeValue<api::JobSet>(kv));
  jobset.mutable_metadata()->set_resource_version(
      absl::StrCat(kv.mod_revision));
  return jobset;
}

JobSetApi::JobSetApi(store::Store* store, Clock* clock, api::Features features,
                     const Limits& limits)
    : store_(store),
      clock_(clock),
      features_(features),
      limits_(limits),
      counter_(store, limits.max_jobsets_per_namespace, limits.max_jobsets) {}

absl::Status JobSetApi::ListPage(absl::string_view prefix, int32_t limit,
                                 absl::string_view continue_token,
                                 const AddItems& add, std::string* next,
                                 std::string* resource_version) {
  JOBSET_ASSIGN_OR_RETURN(const int max_items, PageLimit(limit));
  Cursor cursor;
  if (!continue_token.empty()) {
    JOBSET_ASSIGN_OR_RETURN(cursor, ParseContinueToken(continue_token, prefix));
    // Kubernetes answers a continue whose resourceVersion is compacted with
    // 410 Gone: a watch from the list's resourceVersion would miss changes.
    absl::StatusOr<std::vector<store::Event>> since =
        store_->WaitForEvents(prefix, cursor.revision, absl::InfinitePast(), 1);
    if (since.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::OutOfRangeError(absl::StrCat(
          "The provided continue parameter is too old to display a "
          "consistent list result (resourceVersion ",
          cursor.revision,
          " is older than the watch history). You can start a new list "
          "without the continue parameter."));
    }
    if (!since.ok()) return since.status();
  }
  int items = 0;
  size_t bytes = 0;
  next->clear();
  // Offers `kv` to the page; returns false once the page is full, with
  // `*next` set.
  auto offer = [&](const store::KeyValue& kv,
                   absl::string_view after) -> absl::StatusOr<bool> {
    if (items >= max_items) {
      *next = ContinueToken({cursor.revision, cursor.key, cursor.item});
      return false;
    }
    JOBSET_ASSIGN_OR_RETURN(
        PageItems added,
        add(kv, after, max_items - items,
            bytes >= kMaxPageBytes ? 0 : kMaxPageBytes - bytes, items == 0));
    items += added.items;
    bytes += added.bytes;
    if (!added.last.empty()) {
      cursor.key = kv.key;
      cursor.item = added.last;
    }
    if (added.stop) {
      *next = ContinueToken({cursor.revision, cursor.key, cursor.item});
      return false;
    }
    // The whole value is on the page: continue after it.
    cursor.key = kv.key;
    cursor.item.clear();
    return true;
  };

  std::string after_key = cursor.key;
  if (!cursor.item.empty()) {
    // The last page ended inside this value: the rest of it first.
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                            store_->Get(cursor.key));
    if (kv.has_value()) {
      const std::string item = cursor.item;
      JOBSET_ASSIGN_OR_RETURN(bool room, offer(*kv, item));
      if (!room) {
        *resource_version = absl::StrCat(cursor.revision);
        return absl::OkStatus();
      }
    }
  }
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(store::ScanResult page,
                            store_->Scan(prefix, after_key, kScanChunk));
    // Pages may be read at different revisions; the first is the oldest, so
    // a watch from it misses nothing (it may replay a change, harmlessly).
    if (cursor.revision < 0) cursor.revision = page.revision;
    more = page.more;
    for (const store::KeyValue& kv : page.kvs) {
      JOBSET_ASSIGN_OR_RETURN(bool room, offer(kv, ""));
      if (!room) {
        *resource_version = absl::StrCat(cursor.revision);
        return absl::OkStatus();
      }
      after_key = kv.key;
    }
  }
  *resource_version = absl::StrCat(cursor.revision);
  return absl::OkStatus();
}

absl::StatusOr<std::pair<api::JobSet, int64_t>> JobSetApi::Read(
    absl::string_view ns, absl::string_view name) {
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store_->Get(store::keys::JobSetKey(ns, name)));
  if (!kv.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("jobsets.jobset.x-k8s.io ", Quote(name),
                     " not found in namespace ", Quote(ns)));
  }
  JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, DecodeJobSet(*kv));
  return std::make_pair(std::move(jobset), kv->mod_revision);
}

absl::StatusOr<std::vector<std::string>> JobSetApi::AdmitPodSecurity(
    api::JobSet* jobset) {
  JOBSET_ASSIGN_OR_RETURN(
      api::NamespacePodSecurity policy,
      ReadNamespacePodSecurity(store_, jobset->metadata().namespace_()));
  const api::PodSecurityConfig& config = limits_.pod_security;
  const api::PodSecurityLevel level = policy.enforce.value_or(config.enforce);
  JOBSET_RETURN_IF_ERROR(
      api::CheckJobSetPodSecurity(*jobset, level, config.allowed_host_paths));
  (*jobset->mutable_metadata()->mutable_annotations())[kPodSecurityLevelKey] =
      std::string(api::PodSecurityLevelName(level));
  if (!policy.warn.has_value()) return std::vector<std::string>();
  return api::PodSecurityWarnings(*jobset, *policy.warn,
                                  config.allowed_host_paths);
}

absl::StatusOr<JobSetApi::CreateResult> JobSetApi::Create(api::JobSet jobset,
                                                          bool dry_run) {
  JOBSET_RETURN_IF_ERROR(CheckSize(jobset));
  api::SetJobSetDefaults(&jobset);
  // Server-owned fields: whatever the client sent is replaced.
  api::ObjectMeta* meta = jobset.mutable_metadata();
  meta->clear_uid();
  meta->clear_resource_version();
  meta->clear_generation();
  meta->clear_creation_timestamp();
  meta->clear_deletion_timestamp();
  jobset.clear_status();
  const bool generated = meta->name().empty() && !meta->generate_name().empty();
  if (generated)
    meta->set_name(absl::StrCat(meta->generate_name(), NameSuffix()));
  JOBSET_RETURN_IF_ERROR(
      api::ValidateJobSetCreate(jobset, features_, limits_.spec));
  // Kueue's LocalQueueDefaulting (on by default): an unlabelled JobSet in a
  // namespace with a LocalQueue named "default" is queued there.
  if (queues::QueueName(jobset).empty()) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> default_queue,
                            store_->Get(store::keys::KueueKey(
                                "localqueues", meta->namespace_(), "default")));
    if (default_queue.has_value()) {
      (*meta->mutable_labels())[std::string(queues::kQueueNameLabel)] =
          "default";
    }
  }
  JOBSET_RETURN_IF_ERROR(queues::ValidateKueueJobSetCreate(
      jobset, {.manage_jobs_without_queue_name =
                   features_.manage_jobs_without_queue_name}));
  // Kueue's webhook: a JobSet it manages is created suspended; the
  // controller starts it when its Workload is admitted
  // (scheduler/controller/queue_admission.h).
  if (queues::IsManaged(jobset, features_.manage_jobs_without_queue_name))
    jobset.mutable_spec()->set_suspend(true);
  JOBSET_ASSIGN_OR_RETURN(std::vector<std::string> warnings,
                          AdmitPodSecurity(&jobset));
  meta->set_uid(NewUid());
  meta->set_generation(1);
  meta->mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(clock_->Now()));
  if (dry_run)
    return CreateResult{std::move(jobset), true, std::move(warnings)};
  // Validated and admitted; nothing written yet (docs/failpoints.md).
  JOBSET_FAILPOINT("server.create.after_validate");

  // Optimistic: the commit's condition (the key is absent) is the check, so
  // a new name costs one store round trip (on etcd, a Get is a quorum read
  // too); only a taken name is read.
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    const std::string key =
        store::keys::JobSetKey(meta->namespace_(), meta->name());
    // At a limit, a repeated create of a JobSet that is there still
    // answers "unchanged": the name is read before the limit is reported.
    const absl::Status reserved = counter_.Reserve(meta->namespace_());
    if (!reserved.ok() && !absl::IsResourceExhausted(reserved)) return reserved;
    if (reserved.ok()) {
      absl::StatusOr<int64_t> revision =
          store_->Commit(store::Batch().Create(key, Encode(jobset)));
      counter_.Release(meta->namespace_());
      if (revision.ok()) {
        // Durable; the client has no answer yet.
        JOBSET_FAILPOINT("server.create.after_commit");
        meta->set_resource_version(absl::StrCat(*revision));
        return CreateResult{std::move(jobset), true, std::move(warnings)};
      }
      if (revision.status().code() != absl::StatusCode::kAborted) {
        return revision.status();
      }
    }
    // The name is taken (by the same JobSet: a repeated create; by another),
    // or the namespace is full.
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> existing,
                            store_->Get(key));
    if (!existing.has_value()) {
      if (!reserved.ok()) return reserved;
      continue;  // Deleted since: try again.
    }
    if (generated) {
      meta->set_name(absl::StrCat(meta->generate_name(), NameSuffix()));
      continue;
    }
    JOBSET_ASSIGN_OR_RETURN(api::JobSet stored, DecodeJobSet(*existing));
    if (MessageDifferencer::Equals(stored.spec(), jobset.spec())) {
      return CreateResult{std::move(stored), false, std::move(warnings)};
    }
    return absl::AlreadyExistsError(
        absl::StrCat("jobsets.jobset.x-k8s.io ", Quote(meta->name()),
                     " already exists in namespace ", Quote(meta->namespace_()),
                     " with a different spec (delete it first, or update it)"));
  }
  return absl::AbortedError(absl::StrCat(
      "creating JobSet \"", Namespaced(meta->namespace_(), meta->name()),
      "\" kept conflicting; try again"));
}

absl::StatusOr<api::JobSet> JobSetApi::Get(absl::string_view ns,
                                           absl::string_view name) {
  JOBSET_ASSIGN_OR_RETURN(std::string valid_ns, Namespace(ns));
  JOBSET_RETURN_IF_ERROR(CheckName(name));
  JOBSET_ASSIGN_OR_RETURN(auto found, Read(valid_ns, name));
  return std::move(found.first);
}

absl::StatusOr<api::ListJobSetsResponse> JobSetApi::List(
    const api::ListJobSetsRequest& request) {
  std::string prefix(store::keys::kJobSets);
  if (!request.all_namespaces()) {
    JOBSET_ASSIGN_OR_RETURN(std::string ns, Namespace(request.namespace_()));
    prefix = store::keys::JobSetPrefix(ns);
  }
  JOBSET_ASSIGN_OR_RETURN(api::LabelSelector selector,
                          api::LabelSelector::Parse(request.label_selector()));
  api::ListJobSetsResponse response;
  auto add = [&](const store::KeyValue& kv, absl::string_view, int,
                 size_t max_bytes, bool page_empty) {
    auto decode = [&]() -> absl::StatusOr<std::optional<api::JobSet>> {
      JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, DecodeJobSet(kv));
      if (!selector.Matches(jobset.metadata().labels())) return std::nullopt;
      return jobset;
    };
    return AddOne(decode(), max_bytes, page_empty, response.mutable_items());
  };
  JOBSET_RETURN_IF_ERROR(ListPage(prefix, request.limit(), request.continue_(),
                                  add, response.mutable_continue_(),
                                  response.mutable_resource_version()));
  return response;
}

absl::Status JobSetApi::KeepKueueFields(const api::JobSet& old,
                                        api::JobSet* updated) {
  if (!queues::IsManaged(old, features_.manage_jobs_without_queue_name))
    return absl::OkStatus();
  updated->mutable_spec()->set_suspend(old.spec().suspend());
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store_->Get(store::keys::KueueKey(
                              "workloads", old.metadata().namespace_(),
                              queues::WorkloadName(old))));
  if (!kv.has_value()) return absl::OkStatus();
  absl::StatusOr<api::KueueObject> workload =
      store::DecodeValue<api::KueueObject>(*kv);
  if (!workload.ok()) return absl::OkStatus();  // the controller reports it
  // What the templates were before Kueue injected its flavors.
  api::JobSet restored = old;
  queues::Restore(queues::SavedTemplatesOf(workload->workload()), &restored);
  auto* rjobs = updated->mutable_spec()->mutable_replicated_jobs();
  for (int i = 0; i < rjobs->size() && i < old.spec().replicated_jobs_size();
       ++i) {
    const api::PodTemplateSpec& before =
        restored.spec().replicated_jobs(i).template_().spec().template_();
    api::PodTemplateSpec* sent = rjobs->Mutable(i)
                                     ->mutable_template_()
                                     ->mutable_spec()
                                     ->mutable_template_();
    if (MessageDifferencer::Equals(*sent, before)) {
      *sent = old.spec().replicated_jobs(i).template_().spec().template_();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<api::JobSet> JobSetApi::Update(const api::JobSet& request,
                                              bool dry_run) {
  JOBSET_RETURN_IF_ERROR(CheckSize(request));
  JOBSET_ASSIGN_OR_RETURN(std::string ns,
                          Namespace(request.metadata().namespace_()));
  const std::string& name = request.metadata().name();
  JOBSET_RETURN_IF_ERROR(CheckName(name));
  JOBSET_ASSIGN_OR_RETURN(auto found, Read(ns, name));
  auto& [old, revision] = found;
  if (!request.metadata().resource_version().empty()) {
    JOBSET_ASSIGN_OR_RETURN(
        int64_t expected,
        ParseResourceVersion(request.metadata().resource_version()));
    if (expected != revision) return Conflict(name);
  }

  api::JobSet updated = old;
  api::ObjectMeta* meta = updated.mutable_metadata();
  *meta->mutable_labels() = request.metadata().labels();
  *meta->mutable_annotations() = request.metadata().annotations();
  // Server-owned: the level the pod templates were admitted at stays until
  // they are admitted again below.
  if (auto it = old.metadata().annotations().find(kPodSecurityLevelKey);
      it != old.metadata().annotations().end()) {
    (*meta->mutable_annotations())[kPodSecurityLevelKey] = it->second;
  } else {
    meta->mutable_annotations()->erase(kPodSecurityLevelKey);
  }
  if (!request.metadata().uid().empty())
    meta->set_uid(request.metadata().uid());
  *updated.mutable_spec() = request.spec();
  api::SetJobSetDefaults(&updated);
  JOBSET_RETURN_IF_ERROR(KeepKueueFields(old, &updated));
  JOBSET_RETURN_IF_ERROR(
      api::ValidateJobSetUpdate(old, updated, features_, limits_.spec));
  // Read only where Kueue's rules look at it: the queue-name label removed.
  bool default_queue = false;
  if (!queues::QueueName(old).empty() && queues::QueueName(updated).empty()) {
    JOBSET_ASSIGN_OR_RETURN(
        std::optional<store::KeyValue> kv,
        store_->Get(store::keys::KueueKey("localqueues", ns, "default")));
    default_queue = kv.has_value();
  }
  JOBSET_RETURN_IF_ERROR(queues::ValidateKueueJobSetUpdate(
      old, updated,
      {.manage_jobs_without_queue_name =
           features_.manage_jobs_without_queue_name,
       .default_local_queue_exists = default_queue}));
  if (MessageDifferencer::Equals(old, updated)) return old;  // A no-op.
  // As Kubernetes re-checks a pod only when its spec changes, an update that
  // leaves every pod template as it was (suspend, labels, ...) is not
  // re-admitted, so a stricter namespace label does not strand old JobSets.
  if (PodTemplatesChanged(old, updated)) {
    JOBSET_RETURN_IF_ERROR(AdmitPodSecurity(&updated).status());
  }
  if (!MessageDifferencer::Equals(old.spec(), updated.spec())) {
    meta->set_generation(old.metadata().generation() + 1);
  }
  if (dry_run) return updated;
  // Validated and admitted; nothing written yet (docs/failpoints.md).
  JOBSET_FAILPOINT("server.update.after_validate");

  absl::StatusOr<int64_t> committed = store_->Commit(store::Batch().Update(
      store::keys::JobSetKey(ns, name), Encode(updated), revision));
  if (!committed.ok()) {
    if (committed.status().code() == absl::StatusCode::kAborted) {
      return Conflict(name);
    }
    return committed.status();
  }
  // Durable; the client has no answer yet.
  JOBSET_FAILPOINT("server.update.after_commit");
  meta->set_resource_version(absl::StrCat(*committed));
  return updated;
}

absl::StatusOr<api::JobSet> JobSetApi::SetSuspend(absl::string_view ns,
                                                  absl::string_view name,
                                                  bool suspend) {
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, Get(ns, name));
    jobset.mutable_spec()->set_suspend(suspend);
    absl::StatusOr<api::JobSet> updated = Update(jobset, /*dry_run=*/false);
    if (updated.status().code() != absl::StatusCode::kAborted) return updated;
  }
  return Conflict(name);
}

absl::StatusOr<api::JobSet> JobSetApi::Delete(
    absl::string_view ns, absl::string_view name,
    absl::string_view resource_version) {
  JOBSET_ASSIGN_OR_RETURN(std::string valid_ns, Namespace(ns));
  JOBSET_RETURN_IF_ERROR(CheckName(name));
  JOBSET_ASSIGN_OR_RETURN(auto found, Read(valid_ns, name));
  auto& [jobset, revision] = found;
  if (!resource_version.empty()) {
    JOBSET_ASSIGN_OR_RETURN(int64_t expected,
                            ParseResourceVersion(resource_version));
    if (expected != revision) return Conflict(name);
  }
  absl::StatusOr<int64_t> committed = store_->Commit(store::Batch().DeleteAt(
      store::keys::JobSetKey(valid_ns, name), revision));
  if (!committed.ok()) {
    if (committed.status().code() == absl::StatusCode::kAborted) {
      return Conflict(name);
    }
    return committed.status();
  }
  jobset.mutable_metadata()->set_resource_version(absl::StrCat(*committed));
  return std::move(jobset);
}

template <typename Response, typename Request>
absl::StatusOr<Response> JobSetApi::ListChildren(absl::string_view kind,
                                                 const Request& request) {
  JOBSET_ASSIGN_OR_RETURN(const std::string prefix, ChildPrefix(kind, request));
  Response response;
  using Item = typename std::decay_t<decltype(response.items())>::value_type;
  auto add = [&](const store::KeyValue& kv, absl::string_view, int,
                 size_t max_bytes, bool page_empty) {
    auto decode = [&]() -> absl::StatusOr<std::optional<Item>> {
      JOBSET_ASSIGN_OR_RETURN(Item item, store::DecodeValue<Item>(kv));
      if constexpr (std::is_same_v<Item, api::Job>) {
        ExpandJob(&item);  // Stored compact: clients see upstream's Jobs.
      }
      return item;
    };
    return AddOne(decode(), max_bytes, page_empty, response.mutable_items());
  };
  JOBSET_RETURN_IF_ERROR(ListPage(prefix, request.limit(), request.continue_(),
                                  add, response.mutable_continue_(),
                                  response.mutable_resource_version()));
  return response;
}

absl::StatusOr<api::ListJobsResponse> JobSetApi::ListJobs(
    const api::ListJobsRequest& request) {
  return ListChildren<api::ListJobsResponse>(store::keys::kJobs, request);
}

absl::StatusOr<api::ListPodsResponse> JobSetApi::ListPods(
    const api::ListPodsRequest& request) {
  // Pods are stored as records, one or more chunks per Job, and built from
  // their Job (as ReadStoredPods builds them); a page may end inside a
  // chunk, whose records come by name (the token names the chunk's key).
  JOBSET_ASSIGN_OR_RETURN(const std::string prefix,
                          ChildPrefix(store::keys::kPods, request));
  api::ListPodsResponse response;
  auto add = [&](const store::KeyValue& kv, absl::string_view after,
                 int max_items, size_t max_bytes,
                 bool page_empty) -> absl::StatusOr<PageItems> {
    PageItems added;
    JOBSET_ASSIGN_OR_RETURN(std::optional<StoredJobPods> stored,
                            ReadJobPodsRecord(store_, kv));
    if (!stored.has_value()) return added;  // Deleted since.
    const api::Job& job = stored->job;
    const std::vector<api::PodRecord>& records = stored->records;
    for (const api::PodRecord& record : records) {
      if (!after.empty() && record.name() <= after) continue;
      if (added.items >= max_items) {
        added.stop = true;
        break;
      }
      api::Pod pod = ClientPod(job, record);  // Kubernetes' form.
      const size_t bytes = pod.ByteSizeLong();
      if (!(page_empty && added.items == 0) &&
          added.bytes + bytes > max_bytes) {
        added.stop = true;
        break;
      }
      ++added.items;
      added.bytes += bytes;
      added.last = record.name();
      *response.add_items() = std::move(pod);
    }
    return added;
  };
  JOBSET_RETURN_IF_ERROR(ListPage(prefix, request.limit(), request.continue_(),
                                  add, response.mutable_continue_(),
                                  response.mutable_resource_version()));
  return response;
}

absl::StatusOr<api::ListEventsResponse> JobSetApi::ListEvents(
    const api::ListEventsRequest& request) {
  return ListChildren<api::ListEventsResponse>(store::keys::kEvents, request);
}

absl::StatusOr<JobSetApi::Watch> JobSetApi::StartWatch(
    const api::WatchJobSetsRequest& request) {
  JOBSET_ASSIGN_OR_RETURN(api::LabelSelector selector,
                          api::LabelSelector::Parse(request.label_selector()));
  std::string prefix(store::keys::kJobSets);
  if (!request.all_namespaces()) {
    JOBSET_ASSIGN_OR_RETURN(std::string ns, Namespace(request.namespace_()));
    prefix = store::keys::JobSetPrefix(ns);
  }
  Watch watch(store_, prefix, std::move(selector));
  if (!request.resource_version().empty()) {
    JOBSET_ASSIGN_OR_RETURN(watch.revision_,
                            ParseResourceVersion(request.resource_version()));
    return watch;
  }
  // No resourceVersion: the current state first, as ADDED events.
  api::ListJobSetsRequest list;
  list.set_namespace_(request.namespace_());
  list.set_all_namespaces(request.all_namespaces());
  list.set_label_selector(request.label_selector());
  list.set_limit(kMaxListLimit);
  do {
    JOBSET_ASSIGN_OR_RETURN(api::ListJobSetsResponse listed, List(list));
    for (api::JobSet& jobset : *listed.mutable_items()) {
      api::WatchEvent& event = watch.initial_.emplace_back();
      event.set_type("ADDED");
      *event.mutable_object() = std::move(jobset);
    }
    JOBSET_ASSIGN_OR_RETURN(watch.revision_,
                            ParseResourceVersion(listed.resource_version()));
    list.set_continue_(listed.continue_());
  } while (!list.continue_().empty());
  return watch;
}

absl::StatusOr<std::vector<api::WatchEvent>> JobSetApi::Watch::Next(
    absl::Time deadline) {
  if (!initial_.empty()) return std::exchange(initial_, {});
  JOBSET_ASSIGN_OR_RETURN(
      std::vector<store::Event> events,
      store_->WaitForEvents(prefix_, revision_, deadline, kWatchBatch));
  std::vector<api::WatchEvent> out;
  for (const store::Event& event : events) {
    revision_ = event.kv.mod_revision;
    JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, DecodeJobSet(event.kv));
    if (!selector_.Matches(jobset.metadata().labels())) continue;
    api::WatchEvent& out_event = out.emplace_back();
    out_event.set_type(store::WatchEventType(event));
    *out_event.mutable_object() = std::move(jobset);
  }
  return out;
}

}  // namespace jobset::scheduler
