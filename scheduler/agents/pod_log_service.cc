#include "scheduler/agents/pod_log_service.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "api/pod_phase.h"
#include "common/grpc_status.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "scheduler/records/attempt_pods.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr int32_t kChunkBytes = 256 << 10;
constexpr absl::Duration kAgentTimeout = absl::Seconds(5);
constexpr absl::Duration kFollowPoll = absl::Milliseconds(300);

bool Finished(const api::Pod& pod) {
  return pod.status().phase() == api::kPodSucceeded ||
         pod.status().phase() == api::kPodFailed;
}

// Pod `name` as stored under `prefix`, and the revision it was read at.
struct FoundPod {
  api::Pod pod;
  int64_t revision = 0;
};

// Finds pod `name` among the pods under `prefix` (a namespace's, or one
// Job's: see JobPodsPrefix).
absl::StatusOr<FoundPod> FindPod(store::Store* store, absl::string_view prefix,
                                 const std::string& ns,
                                 const std::string& name) {
  JOBSET_ASSIGN_OR_RETURN(StoredPods stored, ReadStoredPods(store, prefix));
  for (api::Pod& pod : stored.pods) {
    if (pod.metadata().name() == name)
      return FoundPod{.pod = std::move(pod), .revision = stored.revision};
  }
  return absl::NotFoundError(
      absl::StrCat("pod \"", name, "\" not found in namespace \"", ns, "\""));
}

// The prefix of pod `pod`'s Job's records (every chunk's key starts with
// it; so may another Job's whose name extends it, which FindPod filters
// out), or the namespace's when the pod's labels do not name its Job.
std::string JobPodsPrefix(const std::string& ns, const api::Pod& pod) {
  const auto& labels = pod.metadata().labels();
  auto jobset = labels.find(kJobSetNameKey);
  auto job = labels.find(kBatchJobNameKey);
  if (jobset == labels.end() || job == labels.end())
    return absl::StrCat(store::keys::kPods, ns, "/");
  return store::keys::JobPodsKey(ns, jobset->second, job->second);
}

std::string Label(const api::Pod& pod, absl::string_view key) {
  auto it = pod.metadata().labels().find(std::string(key));
  return it == pod.metadata().labels().end() ? "" : it->second;
}

// JobSet `ns`/`name` as stored, or nullopt.
absl::StatusOr<std::optional<api::JobSet>> ReadJobSet(store::Store* store,
                                                      absl::string_view ns,
                                                      absl::string_view name) {
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                          store->Get(store::keys::JobSetKey(ns, name)));
  if (!kv.has_value()) return std::nullopt;
  JOBSET_ASSIGN_OR_RETURN(api::JobSet js, store::DecodeValue<api::JobSet>(*kv));
  return js;
}

// What a request for an attempt resolves to: the current pod (its attempt
// is the one asked for) or an earlier attempt's.
struct AttemptTarget {
  std::optional<FoundPod> current;
  std::optional<PodLogServiceImpl::EarlierPod> earlier;
};

// The pod of attempt `request.attempt` (or the one before the current,
// with `previous`) of pod `request.pod`'s JobSet in `ns`, keeping the last
// `history` attempts.
absl::StatusOr<AttemptTarget> FindAttemptPod(
    store::Store* store, const std::string& ns,
    const api::GetPodLogsRequest& request, int history) {
  const std::string& name = request.pod();
  if (request.has_attempt() && request.previous()) {
    return absl::InvalidArgumentError(
        "attempt and previous: give one, not both (previous is the attempt "
        "before the current one)");
  }
  if (request.has_attempt() && request.attempt() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attempt: ", request.attempt(),
        " is negative; attempts count from 0 (status.restarts while they "
        "ran)"));
  }
  // The pod: one of the current attempt's, or an earlier attempt's by its
  // own name.
  std::string jobset_name, job;
  int32_t index = -1;
  std::optional<FoundPod> current;
  std::optional<api::JobSet> jobset;
  std::vector<StoredAttempt> stored;  // Read while looking, if at all.
  absl::StatusOr<FoundPod> found =
      FindPod(store, absl::StrCat(store::keys::kPods, ns, "/"), ns, name);
  if (found.ok()) {
    jobset_name = Label(found->pod, kJobSetNameKey);
    job = Label(found->pod, kBatchJobNameKey);
    if (!absl::SimpleAtoi(Label(found->pod, kCompletionIndexKey), &index))
      index = -1;
    if (jobset_name.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("pod ", Quote(name),
                       " belongs to no JobSet: only a JobSet's pods have "
                       "restart attempts"));
    }
    JOBSET_ASSIGN_OR_RETURN(jobset, ReadJobSet(store, ns, jobset_name));
    current = *std::move(found);
  } else if (found.status().code() != absl::StatusCode::kNotFound) {
    return found.status();
  } else {
    // Its JobSet's name begins its name ("<jobset>-<rjob>-<i>-..."): each
    // prefix before a '-' may be it, the longest first.
    for (size_t dash = name.rfind('-'); dash != std::string::npos && dash > 0;
         dash = name.rfind('-', dash - 1)) {
      const std::string candidate = name.substr(0, dash);
      JOBSET_ASSIGN_OR_RETURN(std::optional<api::JobSet> js,
                              ReadJobSet(store, ns, candidate));
      if (!js.has_value()) continue;
      JOBSET_ASSIGN_OR_RETURN(
          std::vector<StoredAttempt> attempts,
          ReadAttemptPods(store, ns, candidate, js->metadata().uid()));
      for (const StoredAttempt& a : attempts) {
        for (const AttemptPod& pod : a.pods) {
          if (pod.name != name) continue;
          jobset_name = candidate;
          job = pod.job;
          index = pod.completion_index;
        }
      }
      if (jobset_name.empty()) continue;
      jobset = std::move(js);
      stored = std::move(attempts);
      break;
    }
    if (jobset_name.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "pod ", Quote(name), " not found in namespace ", Quote(ns),
          ", neither among the current pods nor among the kept attempts of "
          "its JobSet"));
    }
  }
  const std::string jobset_ref = absl::StrCat(ns, "/", jobset_name);
  if (!jobset.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("JobSet ", jobset_ref, " of pod ", Quote(name),
                     " is gone, and its attempts with it"));
  }
  const int32_t restarts = jobset->status().restarts();
  if (request.previous() && restarts == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "JobSet ", jobset_ref,
        " has no earlier attempt: status.restarts is 0 (a restart in place "
        "keeps its pods: read them without --previous)"));
  }
  const int32_t attempt = request.previous() ? restarts - 1 : request.attempt();
  const AttemptRange kept = KeptAttempts(restarts, history);
  if (attempt > restarts) {
    return absl::OutOfRangeError(
        absl::StrCat("attempt ", attempt, " of JobSet ", jobset_ref,
                     " has not run; its current attempt is ", restarts));
  }
  if (!kept.Contains(attempt)) {
    return absl::OutOfRangeError(
        absl::StrCat("attempt ", attempt, " of JobSet ", jobset_ref,
                     " is no longer kept; kept: ", kept.first, "-", kept.last,
                     " (jobsetd --attempt_history=", history, ")"));
  }
  if (current.has_value() &&
      Label(current->pod, kRestartAttemptKey) == absl::StrCat(attempt)) {
    return AttemptTarget{.current = std::move(current), .earlier = {}};
  }
  if (stored.empty()) {
    JOBSET_ASSIGN_OR_RETURN(stored,
                            ReadAttemptPods(store, ns, jobset_name,
                                            jobset->metadata().uid(), attempt));
  }
  const StoredAttempt* a = nullptr;
  for (const StoredAttempt& s : stored) {
    if (s.attempt == attempt) a = &s;
  }
  if (a == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "attempt ", attempt, " of JobSet ", jobset_ref,
        " left no record of its pods (none reached a node, or none was "
        "erased: a restart in place keeps its pods)"));
  }
  absl::StatusOr<AttemptPod> pod = SelectAttemptPod(a->pods, name, job, index);
  if (absl::IsNotFound(pod.status())) {
    std::string why = absl::StrCat("pod ", Quote(name));
    if (!job.empty() && current.has_value()) {
      absl::StrAppend(&why, " (Job ", Quote(job), ", completion index ", index,
                      ")");
    }
    absl::StrAppend(&why, " has no pod in attempt ", attempt, " of JobSet ",
                    jobset_ref);
    if (a->pods_dropped > 0) {
      absl::StrAppend(&why, "; ", a->pods_dropped,
                      " of that attempt's pods were not kept (its record "
                      "holds at most ",
                      kMaxAttemptPodsBytes >> 20, " MiB)");
    }
    return absl::NotFoundError(why);
  }
  if (!pod.ok()) return pod.status();
  PodLogServiceImpl::EarlierPod out{.pod = *std::move(pod),
                                    .attempt = attempt,
                                    .jobset = jobset_ref,
                                    .containers = {},
                                    .default_container = ""};
  for (const api::ReplicatedJob& rjob : jobset->spec().replicated_jobs()) {
    if (rjob.name() != out.pod.replicated_job) continue;
    const api::PodSpec& spec = rjob.template_().spec().template_().spec();
    for (const api::Container& c : spec.init_containers())
      out.containers.push_back(c.name());
    for (const api::Container& c : spec.containers())
      out.containers.push_back(c.name());
    if (spec.containers_size() > 0)
      out.default_container = spec.containers(0).name();
  }
  return AttemptTarget{.current = {}, .earlier = std::move(out)};
}
}  // namespace

grpc::Status PodLogServiceImpl::GetPodLogs(
    grpc::ServerContext* context, const api::GetPodLogsRequest* request,
    grpc::ServerWriter<api::PodLogs>* writer) {
  const std::string ns =
      request->namespace_().empty() ? "default" : request->namespace_();
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, {.verb = "get",
                                 .resource = "pods",
                                 .subresource = "log",
                                 .namespace_ = ns,
                                 .name = request->pod()});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  std::optional<StreamLimiter::Slot> slot;
  if (request->follow() && streams_ != nullptr) {
    absl::StatusOr<StreamLimiter::Slot> taken =
        streams_->Acquire(caller->user.name);
    if (!taken.ok()) return ToGrpcStatus(taken.status());
    slot.emplace(*std::move(taken));
  }
  absl::StatusOr<FoundPod> found;
  if (request->has_attempt() || request->previous()) {
    absl::StatusOr<AttemptTarget> target =
        FindAttemptPod(store_, ns, *request, attempt_history_);
    if (!target.ok()) return ToGrpcStatus(target.status());
    if (target->earlier.has_value()) {
      return ReadEarlier(context, *caller, *request, *target->earlier, writer);
    }
    found = *std::move(target->current);  // The attempt asked for runs.
  } else {
    found = FindPod(store_, absl::StrCat(store::keys::kPods, ns, "/"), ns,
                    request->pod());
  }
  if (!found.ok()) return ToGrpcStatus(found.status());
  const api::Pod* pod = &found->pod;
  // Following, the pod is read again only when its Job's records change:
  // the namespace is scanned once, never per poll.
  const std::string job_prefix = JobPodsPrefix(ns, *pod);
  int64_t revision = found->revision;
  std::vector<std::string> names;
  for (const api::Container& c : pod->spec().init_containers())
    names.push_back(c.name());
  for (const api::Container& c : pod->spec().containers())
    names.push_back(c.name());
  std::string container = request->container();
  if (container.empty() && pod->spec().containers_size() > 0) {
    container = pod->spec().containers(0).name();
  }
  if (std::find(names.begin(), names.end(), container) == names.end()) {
    return ToGrpcStatus(absl::NotFoundError(absl::StrCat(
        "container \"", container, "\" is not in pod \"", request->pod(),
        "\"; its containers: ", absl::StrJoin(names, ", "))));
  }
  if (pod->spec().node_name().empty()) {
    return ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
        "pod \"", request->pod(), "\" has not been placed on a node yet")));
  }
  int64_t offset = request->limit_bytes() > 0 ? -request->limit_bytes() : 0;
  bool finished = Finished(*pod);
  while (!context->IsCancelled()) {
    // A deleted or expired token ends `logs -f` within a poll.
    if (absl::Status valid = auth_->StillValid(*caller); !valid.ok()) {
      return ToGrpcStatus(valid);
    }
    absl::StatusOr<api::LogChunk> chunk =
        hub_->ReadLog(pod->spec().node_name(), pod->metadata().uid(), container,
                      offset, kChunkBytes, kAgentTimeout);
    if (!chunk.ok()) return ToGrpcStatus(chunk.status());
    if (!chunk->error().empty()) {
      return ToGrpcStatus(absl::NotFoundError(chunk->error()));
    }
    offset = chunk->next_offset();
    if (!chunk->data().empty()) {
      api::PodLogs out;
      out.set_data(chunk->data());
      if (!writer->Write(out)) return grpc::Status::OK;
      continue;
    }
    // Everything so far is sent.
    if (!request->follow() || finished) return grpc::Status::OK;
    // The agent is asked again after kFollowPoll; meanwhile the store says
    // whether the pod may have finished.
    absl::StatusOr<std::vector<store::Event>> changed = store_->WaitForEvents(
        job_prefix, revision, clock_->Now() + kFollowPoll, 1);
    if (changed.ok() && changed->empty()) continue;
    // Changed (or the history moved past `revision`): read the Job's pods.
    absl::StatusOr<FoundPod> now =
        FindPod(store_, job_prefix, ns, request->pod());
    // Gone (its JobSet was deleted) or finished: one last read.
    finished = !now.ok() || Finished(now->pod);
    revision = now.ok() ? now->revision : store_->CurrentRevision();
  }
  return grpc::Status::OK;
}

grpc::Status PodLogServiceImpl::ReadEarlier(
    grpc::ServerContext* context, const Caller& caller,
    const api::GetPodLogsRequest& request, const EarlierPod& earlier,
    grpc::ServerWriter<api::PodLogs>* writer) {
  const AttemptPod& pod = earlier.pod;
  const std::string what =
      absl::StrCat("pod ", Quote(pod.name), " of attempt ", earlier.attempt,
                   " of JobSet ", earlier.jobset);
  std::string container = request.container();
  if (container.empty()) container = earlier.default_container;
  if (container.empty()) {
    return ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
        "the containers of ", what, " are unknown (its ReplicatedJob ",
        Quote(pod.replicated_job), " is no longer in the spec): name one")));
  }
  if (!earlier.containers.empty() &&
      std::find(earlier.containers.begin(), earlier.containers.end(),
                container) == earlier.containers.end()) {
    return ToGrpcStatus(absl::NotFoundError(absl::StrCat(
        "container ", Quote(container), " is not in ", what,
        "; its containers: ", absl::StrJoin(earlier.containers, ", "))));
  }
  // It has ended: what its agent kept is all there is (a follow ends too).
  int64_t offset = request.limit_bytes() > 0 ? -request.limit_bytes() : 0;
  while (!context->IsCancelled()) {
    if (absl::Status valid = auth_->StillValid(caller); !valid.ok()) {
      return ToGrpcStatus(valid);
    }
    absl::StatusOr<api::LogChunk> chunk = hub_->ReadLog(
        pod.node, pod.uid, container, offset, kChunkBytes, kAgentTimeout);
    if (!chunk.ok()) {
      return ToGrpcStatus(absl::Status(
          chunk.status().code(), absl::StrCat(what, " ran on node ", pod.node,
                                              ": ", chunk.status().message())));
    }
    if (!chunk->error().empty()) {
      return ToGrpcStatus(absl::NotFoundError(absl::StrCat(
          "the log of ", what, " is gone from node ", pod.node,
          " (agents keep a released pod's logs for their --log_retention, "
          "24h by default): ",
          chunk->error())));
    }
    offset = chunk->next_offset();
    if (chunk->data().empty()) return grpc::Status::OK;
    api::PodLogs out;
    out.set_data(chunk->data());
    if (!writer->Write(out)) return grpc::Status::OK;
  }
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler
