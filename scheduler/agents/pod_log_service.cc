#include "scheduler/agents/pod_log_service.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_phase.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
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
  absl::StatusOr<FoundPod> found = FindPod(
      store_, absl::StrCat(store::keys::kPods, ns, "/"), ns, request->pod());
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

}  // namespace jobset::scheduler
