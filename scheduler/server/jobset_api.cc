#include "scheduler/server/jobset_api.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/defaults.h"
#include "api/names.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "google/protobuf/util/message_differencer.h"
#include "scheduler/records/records.h"
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
constexpr absl::string_view kContinuePrefix = "v1:";

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
      "Operation cannot be fulfilled on jobsets.jobset.x-k8s.io \"", name,
      "\": the object has been modified; please apply your changes to the "
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
        "metadata.namespace: Invalid value: \"", ns, "\": ", errors[0]));
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
        "metadata.name: Invalid value: \"", name, "\": ", errors[0]));
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
        absl::StrCat("metadata.resourceVersion: Invalid value: \"", rv,
                     "\": must be a resourceVersion returned by jobsetd"));
  }
  return v;
}

std::string Encode(api::JobSet jobset) {
  // The revision is the store's; it is not kept inside the value.
  jobset.mutable_metadata()->clear_resource_version();
  return jobset.SerializeAsString();
}

std::string ContinueToken(absl::string_view key) {
  return absl::WebSafeBase64Escape(absl::StrCat(kContinuePrefix, key));
}

absl::StatusOr<std::string> ParseContinueToken(absl::string_view token,
                                               absl::string_view prefix) {
  std::string key;
  if (!absl::WebSafeBase64Unescape(token, &key) ||
      !absl::StartsWith(key, kContinuePrefix) ||
      !absl::StartsWith(absl::string_view(key).substr(kContinuePrefix.size()),
                        prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "continue: Invalid value: \"", token,
        "\": not a continue token of this list (pass back the continue of the "
        "previous page, with the same namespace)"));
  }
  return key.substr(kContinuePrefix.size());
}

}  // namespace

absl::StatusOr<api::JobSet> DecodeJobSet(const store::KeyValue& kv) {
  JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset,
                          store::DecodeValue<api::JobSet>(kv));
  jobset.mutable_metadata()->set_resource_version(
      absl::StrCat(kv.mod_revision));
  return jobset;
}

JobSetApi::JobSetApi(store::Store* store, Clock* clock, api::Features features)
    : store_(store), clock_(clock), features_(features) {}

absl::StatusOr<std::pair<api::JobSet, int64_t>> JobSetApi::Read(
    absl::string_view ns, absl::string_view name) {
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store_->Get(store::keys::JobSetKey(ns, name)));
  if (!kv.has_value()) {
    return absl::NotFoundError(absl::StrCat("jobsets.jobset.x-k8s.io \"", name,
                                            "\" not found in namespace \"", ns,
                                            "\""));
  }
  JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, DecodeJobSet(*kv));
  return std::make_pair(std::move(jobset), kv->mod_revision);
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
  JOBSET_RETURN_IF_ERROR(api::ValidateJobSetCreate(jobset, features_));
  meta->set_uid(NewUid());
  meta->set_generation(1);
  meta->mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(clock_->Now()));
  if (dry_run) return CreateResult{std::move(jobset), true};

  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    const std::string key =
        store::keys::JobSetKey(meta->namespace_(), meta->name());
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> existing,
                            store_->Get(key));
    if (existing.has_value()) {
      if (generated) {
        meta->set_name(absl::StrCat(meta->generate_name(), NameSuffix()));
        continue;
      }
      JOBSET_ASSIGN_OR_RETURN(api::JobSet stored, DecodeJobSet(*existing));
      if (MessageDifferencer::Equals(stored.spec(), jobset.spec())) {
        return CreateResult{std::move(stored), false};
      }
      return absl::AlreadyExistsError(absl::StrCat(
          "jobsets.jobset.x-k8s.io \"", meta->name(),
          "\" already exists in namespace \"", meta->namespace_(),
          "\" with a different spec (delete it first, or update it)"));
    }
    absl::StatusOr<int64_t> revision =
        store_->Commit(store::Batch().Create(key, Encode(jobset)));
    if (revision.ok()) {
      meta->set_resource_version(absl::StrCat(*revision));
      return CreateResult{std::move(jobset), true};
    }
    // Another Create of the same name won the race: look again.
    if (revision.status().code() != absl::StatusCode::kAborted) {
      return revision.status();
    }
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
  if (request.limit() < 0 || request.limit() > kMaxListLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit: Invalid value: ", request.limit(),
                     ": must be between 0 (no limit) and ", kMaxListLimit));
  }
  const size_t limit =
      request.limit() == 0 ? SIZE_MAX : static_cast<size_t>(request.limit());
  std::string after;
  if (!request.continue_().empty()) {
    JOBSET_ASSIGN_OR_RETURN(after,
                            ParseContinueToken(request.continue_(), prefix));
  }

  api::ListJobSetsResponse response;
  int64_t revision = -1;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(store::ScanResult page,
                            store_->Scan(prefix, after, kScanChunk));
    // Pages may be read at different revisions; the first is the oldest, so a
    // watch from it misses nothing (it may replay a change, harmlessly).
    if (revision < 0) revision = page.revision;
    more = page.more;
    for (const store::KeyValue& kv : page.kvs) {
      JOBSET_ASSIGN_OR_RETURN(api::JobSet jobset, DecodeJobSet(kv));
      if (!selector.Matches(jobset.metadata().labels())) {
        after = kv.key;
        continue;
      }
      if (static_cast<size_t>(response.items_size()) == limit) {
        response.set_continue_(ContinueToken(after));
        more = false;
        break;
      }
      *response.add_items() = std::move(jobset);
      after = kv.key;
    }
  }
  response.set_resource_version(absl::StrCat(revision));
  return response;
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
  if (!request.metadata().uid().empty())
    meta->set_uid(request.metadata().uid());
  *updated.mutable_spec() = request.spec();
  api::SetJobSetDefaults(&updated);
  JOBSET_RETURN_IF_ERROR(api::ValidateJobSetUpdate(old, updated, features_));
  if (MessageDifferencer::Equals(old, updated)) return old;  // A no-op.
  if (!MessageDifferencer::Equals(old.spec(), updated.spec())) {
    meta->set_generation(old.metadata().generation() + 1);
  }
  if (dry_run) return updated;

  absl::StatusOr<int64_t> committed = store_->Commit(store::Batch().Update(
      store::keys::JobSetKey(ns, name), Encode(updated), revision));
  if (!committed.ok()) {
    if (committed.status().code() == absl::StatusCode::kAborted) {
      return Conflict(name);
    }
    return committed.status();
  }
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
  auto add_item = [&](const store::KeyValue& kv) -> absl::Status {
    JOBSET_ASSIGN_OR_RETURN(*response.add_items(),
                            store::DecodeValue<Item>(kv));
    return absl::OkStatus();
  };
  JOBSET_ASSIGN_OR_RETURN(
      const int64_t revision,
      store::ScanAllWithRevision(*store_, prefix, add_item, kScanChunk));
  response.set_resource_version(absl::StrCat(revision));
  return response;
}

absl::StatusOr<api::ListJobsResponse> JobSetApi::ListJobs(
    const api::ListJobsRequest& request) {
  JOBSET_ASSIGN_OR_RETURN(
      api::ListJobsResponse response,
      ListChildren<api::ListJobsResponse>(store::keys::kJobs, request));
  // Stored compact: clients see upstream's Jobs.
  for (api::Job& job : *response.mutable_items()) ExpandJob(&job);
  return response;
}

absl::StatusOr<api::ListPodsResponse> JobSetApi::ListPods(
    const api::ListPodsRequest& request) {
  // Pods are stored as records, one group per Job, and built from their Job.
  JOBSET_ASSIGN_OR_RETURN(const std::string prefix,
                          ChildPrefix(store::keys::kPods, request));
  JOBSET_ASSIGN_OR_RETURN(StoredPods stored, ReadStoredPods(store_, prefix));
  api::ListPodsResponse response;
  response.mutable_items()->Reserve(stored.pods.size());
  for (api::Pod& pod : stored.pods) *response.add_items() = std::move(pod);
  response.set_resource_version(absl::StrCat(stored.revision));
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
  JOBSET_ASSIGN_OR_RETURN(api::ListJobSetsResponse listed, List(list));
  for (api::JobSet& jobset : *listed.mutable_items()) {
    api::WatchEvent& event = watch.initial_.emplace_back();
    event.set_type("ADDED");
    *event.mutable_object() = std::move(jobset);
  }
  JOBSET_ASSIGN_OR_RETURN(watch.revision_,
                          ParseResourceVersion(listed.resource_version()));
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
    if (event.type == store::Event::Type::kDelete) {
      out_event.set_type("DELETED");
    } else if (event.kv.create_revision == event.kv.mod_revision) {
      out_event.set_type("ADDED");
    } else {
      out_event.set_type("MODIFIED");
    }
    *out_event.mutable_object() = std::move(jobset);
  }
  return out;
}

}  // namespace jobset::scheduler
