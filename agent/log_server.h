#ifndef JOBSET_AGENT_LOG_SERVER_H_
#define JOBSET_AGENT_LOG_SERVER_H_

#include <cstdint>

#include "absl/time/time.h"
#include "agent/runtime/runtime.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// The largest LogChunk.data an agent sends (well below gRPC's 4 MiB message
// limit), and the most a negative LogRequest.offset may reach back.
inline constexpr int32_t kMaxLogChunkBytes = 1 << 20;
inline constexpr int64_t kMaxLogTailBytes = int64_t{64} << 20;

// Answers `request` from the log `runtime` keeps: at most kMaxLogChunkBytes
// from offset (a negative offset: that many bytes before the end, at most
// kMaxLogTailBytes). The uid and container name are checked before any path
// is built; an invalid or unknown one is an error naming it ("not found"),
// never a file read.
api::LogChunk ReadLogChunk(const Runtime& runtime,
                           const api::LogRequest& request);

// Released pods' logs: removes those past `retention` (Runtime::PruneLogs)
// at most once every `every` by the caller's clock, the first time at once.
// Thread-compatible (the agent's tick thread calls it).
class LogSweeper {
 public:
  LogSweeper(LogRetention retention, absl::Duration every)
      : retention_(retention), every_(every) {}

  // Sweeps if `every` has passed at `now` since the last sweep; returns
  // whether it swept (failures are logged).
  bool MaybeSweep(Runtime& runtime, absl::Time now);

 private:
  const LogRetention retention_;
  const absl::Duration every_;
  absl::Time last_ = absl::InfinitePast();
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_LOG_SERVER_H_
