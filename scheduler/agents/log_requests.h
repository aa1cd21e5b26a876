#ifndef JOBSET_SCHEDULER_AGENTS_LOG_REQUESTS_H_
#define JOBSET_SCHEDULER_AGENTS_LOG_REQUESTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"

namespace jobset::scheduler {

class AgentHub;  // agent_hub.h

// The log reads in flight: each request sent to an agent gets an id, and the
// LogChunk that answers it is handed to the reader waiting for it. Only the
// node asked may answer. Thread-safe; its lock is taken after the hub's
// (OnMessage answers under it) and never held while calling out.
class LogRequests {
 public:
  // Returns the id of a new request to `node`; Wait for its answer.
  int64_t Start(const std::string& node);
  // Hands `chunk` (its request_id) from `node` to its reader. OK too when
  // nobody waits for it any more (answered too late). kPermissionDenied
  // when the request was sent to another node.
  absl::Status Answer(const std::string& node, const api::LogChunk& chunk);
  // Waits up to `timeout` for request `id`'s answer and forgets the
  // request; kUnavailable when none came.
  absl::StatusOr<api::LogChunk> Wait(int64_t id, absl::Duration timeout);

 private:
  friend class AgentHub;  // Names mu_ in its lock order.
  struct Pending {
    std::string node;  // The node asked.
    std::optional<api::LogChunk> chunk;
  };
  absl::Mutex mu_;
  std::map<int64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_LOG_REQUESTS_H_
