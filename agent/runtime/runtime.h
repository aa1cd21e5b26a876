#ifndef JOBSET_AGENT_RUNTIME_RUNTIME_H_
#define JOBSET_AGENT_RUNTIME_RUNTIME_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// What a runtime knows about one pod.
struct PodState {
  std::string uid;
  // phase Pending (starting, init containers), Running, Succeeded or Failed;
  // container statuses (state, exit code, signal, reason such as OOMKilled,
  // Error, Completed, StartError; restart count; ready); a Ready condition.
  api::PodStatus status;
};

// How long the logs of released pods are kept, and how much room the logs
// may take.
struct LogRetention {
  // A released pod's logs go once they were last written this long ago.
  absl::Duration retention = absl::Hours(24);
  // Beyond this many bytes of logs, released pods' logs go, oldest first
  // (a known pod's logs are never removed, only counted). <= 0: no limit.
  int64_t max_bytes = int64_t{10} << 30;
  // Bounds one sweep's work: pod log directories looked at, and removed.
  int max_scanned = 10000;
  int max_removed = 1000;
};

// The seam between the agent and how pods run. Implementations: the shim
// runtime in process or oci mode (each pod supervised by its own
// jobset-pod-shim process, which outlives the agent and keeps the pod's exit
// status on disk), and FakeRuntime for tests. Thread-safe.
class Runtime {
 public:
  virtual ~Runtime() = default;

  // Records the pod durably, then starts it, and returns (progress shows in
  // List). A pod the runtime cannot run (missing binary, bad working dir,
  // unknown image) is not an error here: it shows as Failed with a reason.
  // Errors: ALREADY_EXISTS for a uid already known (never a second launch),
  // or the agent's own failures (disk full).
  virtual absl::Status Start(const api::PodAssignment& assignment) = 0;

  // Stops the pod: SIGTERM to all of its processes, `grace`, then SIGKILL to
  // everything left. Returns at once; List shows the end. Idempotent;
  // NOT_FOUND for an unknown uid.
  virtual absl::Status Stop(const std::string& uid, absl::Duration grace) = 0;

  // Forgets a pod: kills whatever is left of it, removes its state and
  // cgroups, keeps its logs. Idempotent.
  virtual absl::Status Remove(const std::string& uid) = 0;

  // Every pod known, with its current status; after an agent restart, the
  // pods found on disk (re-attached).
  virtual std::vector<PodState> List() = 0;

  // The JobSet attempt's host table grew (pods placed after this one
  // started): the pod's /etc/hosts is rewritten to `hosts`. NOT_FOUND for an
  // unknown uid.
  virtual absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) = 0;

  // The agent's lease (zero: none). A runtime whose pods outlive the agent
  // (the shim runtime) stops every pod itself once the lease has not been
  // renewed for that long, so a frozen or dead agent's pods stop on time.
  virtual absl::Status SetLease(absl::Duration /*lease*/) {
    return absl::OkStatus();
  }
  // The agent heard from jobsetd: the lease starts over.
  virtual absl::Status RenewLease() { return absl::OkStatus(); }

  // Waits at most `timeout` for a pod's state to change (a supervisor wrote
  // a status), returning early when one may have: true when the runtime can
  // tell. false (the default): it cannot, and the caller polls List.
  virtual bool WaitForChange(absl::Duration /*timeout*/) { return false; }

  // Applies `retention` to the logs of released pods, reading the time as
  // `now`; returns how many pods' logs were removed. A runtime that keeps no
  // logs removes none.
  virtual absl::StatusOr<int> PruneLogs(absl::Time /*now*/,
                                        const LogRetention& /*retention*/) {
    return 0;
  }

  // What happened to pods since the last call (kubelet's events: image
  // pulls), by pod uid, oldest first, at most kMaxEventsPerPod each (older
  // ones dropped). The agent sends them once, with each pod's next report.
  static constexpr int kMaxEventsPerPod = 16;
  virtual std::map<std::string, std::vector<api::PodEvent>> TakeEvents() {
    return {};
  }

  // Whether the files LogPath names are in the CRI log format (lines of
  // "<RFC3339Nano time> <stdout|stderr> <P|F> <text>"), which readers decode
  // (agent/runtime/cri/cri_log.h); false: raw output.
  virtual bool CriLogFormat() const { return false; }

  // The host directory where pod `uid`'s containers write their progress
  // (docs/agent.md, "Progress heartbeats": $JOBSET_PROGRESS_FILE names a
  // file in it as they see it): "" if the runtime gives pods none or the
  // uid is not valid. The pod may write anything there; its reader trusts
  // nothing of it and follows no link (agent/progress_file.h).
  virtual std::string ProgressDir(const std::string& /*uid*/) const {
    return "";
  }

  // Where container `container` of pod `uid` writes its output: "" if the
  // runtime keeps none, the uid or the name is not valid, the container is
  // not one of the pod's, or no log was written.
  virtual std::string LogPath(const std::string& uid,
                              const std::string& container) const = 0;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_RUNTIME_H_
