#include "agent/log_server.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/cri/cri_log.h"
#include "agent/runtime/pod_input.h"
#include "common/log.h"

namespace jobset::agent {

api::LogChunk ReadLogChunk(const Runtime& runtime,
                           const api::LogRequest& request) {
  api::LogChunk chunk;
  chunk.set_request_id(request.request_id());
  if (absl::Status s = CheckPodUid("logRequest.podUid", request.pod_uid());
      !s.ok()) {
    chunk.set_error(absl::StrCat("not found: ", s.message()));
    return chunk;
  }
  if (absl::Status s =
          CheckDnsLabel("logRequest.container", request.container());
      !s.ok()) {
    chunk.set_error(absl::StrCat("not found: ", s.message()));
    return chunk;
  }
  const std::string path =
      runtime.LogPath(request.pod_uid(), request.container());
  std::ifstream in;
  if (!path.empty()) in.open(path, std::ios::binary | std::ios::ate);
  if (path.empty() || !in) {
    chunk.set_error(absl::StrCat("not found: no log for container \"",
                                 request.container(), "\" of pod ",
                                 request.pod_uid(), " on this node"));
    return chunk;
  }
  const int64_t size = in.tellg();
  int64_t offset = request.offset();
  if (offset < 0) {
    // Capped before it is negated (no overflow at INT64_MIN).
    const int64_t back = -std::max(offset, -kMaxLogTailBytes);
    offset = std::max<int64_t>(0, size - back);
  }
  offset = std::min(offset, size);
  const int64_t n = std::min<int64_t>(
      size - offset, std::clamp(request.max_bytes(), 1, kMaxLogChunkBytes));
  std::string data(n, '\0');
  in.seekg(offset);
  in.read(data.data(), n);
  data.resize(in.gcount());
  if (!runtime.CriLogFormat()) {
    chunk.set_next_offset(offset + static_cast<int64_t>(data.size()));
    chunk.set_data(std::move(data));
    return chunk;
  }
  // A CRI log: whole lines decoded to the container's output; a tail starts
  // at the first whole line; offsets stay the file's.
  size_t skipped = 0;
  if (request.offset() < 0 && offset > 0) {
    const size_t nl = data.find('\n');
    skipped = nl == std::string::npos ? data.size() : nl + 1;
  }
  size_t consumed = 0;
  std::string decoded =
      cri::DecodeCriLog(absl::string_view(data).substr(skipped), &consumed);
  if (consumed == 0 && static_cast<int64_t>(data.size()) == n && n > 0 &&
      skipped == 0) {
    // One line longer than a chunk: passed on undecoded rather than stuck.
    consumed = data.size();
    decoded = data;
  }
  chunk.set_next_offset(offset + static_cast<int64_t>(skipped + consumed));
  chunk.set_data(std::move(decoded));
  return chunk;
}

bool LogSweeper::MaybeSweep(Runtime& runtime, absl::Time now) {
  if (now - last_ < every_) return false;
  last_ = now;
  absl::StatusOr<int> pruned = runtime.PruneLogs(now, retention_);
  if (!pruned.ok()) {
    JOBSET_LOG(WARNING) << "log retention: " << pruned.status().message();
  } else if (*pruned > 0) {
    JOBSET_LOG(INFO) << "log retention: removed the logs of " << *pruned
                     << " released pods";
  }
  return true;
}

}  // namespace jobset::agent
