#include "scheduler/agents/pod_log_service.h"

#include <algorithm>
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

// Finds pod `name` in namespace `ns`, among the pods of JobSet `jobset`
// when it is known (not empty).
absl::StatusOr<api::Pod> FindPod(store::Store* store, const std::string& ns,
                                 const std::string& jobset,
                                 const std::string& name) {
  std::string prefix = absl::StrCat(store::keys::kPods, ns, "/");
  if (!jobset.empty()) absl::StrAppend(&prefix, jobset, "/");
  JOBSET_ASSIGN_OR_RETURN(StoredPods stored, ReadStoredPods(store, prefix));
  for (api::Pod& pod : stored.pods) {
    if (pod.metadata().name() == name) return std::move(pod);
  }
  return absl::NotFoundError(
      absl::StrCat("pod \"", name, "\" not found in namespace \"", ns, "\""));
}

}  // namespace

grpc::Status PodLogServiceImpl::GetPodLogs(
    grpc::ServerContext* context, const api::GetPodLogsRequest* request,
    grpc::ServerWriter<api::PodLogs>* writer) {
  const std::string ns =
      request->namespace_().empty() ? "default" : request->namespace_();
  absl::StatusOr<api::Pod> pod = FindPod(store_, ns, "", request->pod());
  if (!pod.ok()) return ToGrpcStatus(pod.status());
  // Following, the pod is looked for again among its JobSet's pods only:
  // building every pod of the namespace on each poll would be wasted work.
  std::string jobset;
  if (auto it = pod->metadata().labels().find(kJobSetNameKey);
      it != pod->metadata().labels().end()) {
    jobset = it->second;
  }
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
    absl::SleepFor(kFollowPoll);
    absl::StatusOr<api::Pod> now = FindPod(store_, ns, jobset, request->pod());
    // Gone (its JobSet was deleted) or finished: one last read.
    finished = !now.ok() || Finished(*now);
  }
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler
