#include "scheduler/agents/pod_log_service.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr int32_t kChunkBytes = 256 << 10;
constexpr absl::Duration kAgentTimeout = absl::Seconds(5);
constexpr absl::Duration kFollowPoll = absl::Milliseconds(300);

bool Finished(const api::Pod& pod) {
  return pod.status().phase() == "Succeeded" ||
         pod.status().phase() == "Failed";
}

// Finds pod `name` in namespace `ns` (its key holds its JobSet's name too).
absl::StatusOr<api::Pod> FindPod(store::Store* store, const std::string& ns,
                                 const std::string& name) {
  const std::string prefix = absl::StrCat(store::keys::kPods, ns, "/");
  const std::string suffix = absl::StrCat("/", name);
  std::string after;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(store::ScanResult page,
                            store->Scan(prefix, after, 1000));
    for (const store::KeyValue& kv : page.kvs) {
      if (absl::EndsWith(kv.key, suffix)) {
        return store::DecodeValue<api::Pod>(kv);
      }
      after = kv.key;
    }
    more = page.more;
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
  absl::StatusOr<api::Pod> pod = FindPod(store_, ns, request->pod());
  if (!pod.ok()) return ToGrpcStatus(pod.status());
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
    absl::StatusOr<api::Pod> now = FindPod(store_, ns, request->pod());
    // Gone (its JobSet was deleted) or finished: one last read.
    finished = !now.ok() || Finished(*now);
  }
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler
