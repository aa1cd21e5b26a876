#ifndef JOBSET_AGENT_RUNTIME_STATUS_FILES_H_
#define JOBSET_AGENT_RUNTIME_STATUS_FILES_H_

// The pod-dir files jobset-pod-shim writes and watches (see pod_files.h for
// the contract): status.pb, shim.pid, stop, and the agent's lease.
// Thread-compatible.

#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// <pod_dir>/status.pb, rewritten atomically when it changes.
class StatusFile {
 public:
  explicit StatusFile(std::string path) : path_(std::move(path)) {}

  // Writes `status` if it differs from what was last written (or `force`).
  // A failure is logged; the next write tries again. Only a final status
  // (Succeeded, Failed) is fsync'd (Durability).
  void Write(const api::PodStatus& status, bool force);

 private:
  const std::string path_;
  std::string last_written_;
};

// Writes <pod_dir>/shim.pid for the calling process (not fsync'd: no shim
// outlives its host).
absl::Status WriteShimPid(const std::string& pod_dir);

// Returns whether <pod_dir>/stop exists (Stop ran, maybe before the shim).
bool StopRequested(const std::string& pod_dir);
// Returns the grace period <pod_dir>/stop asks for, if it holds one.
std::optional<absl::Duration> StopGrace(const std::string& pod_dir);

// The agent's lease file (see ShimRuntime::RenewLease): the lease in ms, its
// mtime the last renewal. Checked every 100 ms.
class LeaseWatch {
 public:
  // "" means no lease.
  explicit LeaseWatch(std::string path) : path_(std::move(path)) {}

  // Returns whether a check is due at `now` (and schedules the next one).
  bool Due(absl::Time now);
  // Returns why the lease has run out at `now`, or nullopt (no file, no
  // lease in it, or renewed in time).
  std::optional<std::string> Expired(absl::Time now) const;
  // When the next check is due (InfiniteFuture without a lease).
  absl::Time next_check() const;

 private:
  const std::string path_;
  absl::Time next_check_ = absl::InfinitePast();
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_STATUS_FILES_H_
