#ifndef JOBSET_AGENT_RUNTIME_CONTAINER_LIFECYCLE_H_
#define JOBSET_AGENT_RUNTIME_CONTAINER_LIFECYCLE_H_

// The container and pod lifecycle rules of jobset-pod-shim, as pure
// functions of (state, event, now): how an exit is classified, whether a
// container runs again (restartPolicy, the CrashLoopBackOff back-off), the
// pod's phase and readiness. No I/O, no clock; see agent/runtime/README.md
// for the semantics. Thread-compatible.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

inline constexpr absl::Duration kBackoffStart = absl::Seconds(1);
inline constexpr absl::Duration kBackoffCap = absl::Seconds(30);
// The exit code a container that could not start reports.
inline constexpr int kStartErrorExitCode = 128;

enum class ContainerState { kWaiting, kRunning, kTerminated };
// Returns the API's name of `state`: "waiting", "running", "terminated".
absl::string_view ContainerStateName(ContainerState state);

enum class RestartPolicy { kNever, kOnFailure, kAlways };
// Parses spec.restartPolicy ("" is Never); InvalidArgument names the field.
absl::StatusOr<RestartPolicy> ParseRestartPolicy(absl::string_view policy);

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed };
// Returns the API's name of `phase`: "Pending", "Running", ...
absl::string_view PodPhaseName(PodPhase phase);

// When a container waiting to (re)start may start, and the next back-off.
struct Backoff {
  absl::Time next_start = absl::InfinitePast();
  absl::Duration delay = kBackoffStart;
};

// What the shim knows of one container's lifecycle: the fields of its
// api::ContainerStatus, and what decides its next start. A time of
// InfinitePast is unset.
struct ContainerRecord {
  bool init = false;
  ContainerState state = ContainerState::kWaiting;
  std::string reason;
  std::string message;
  int exit_code = 0;  // the last exit's, kept while restarting
  int signal = 0;
  int restart_count = 0;
  absl::Time started_at = absl::InfinitePast();
  absl::Time finished_at = absl::InfinitePast();
  bool ever_started = false;
  bool done = false;  // terminated for good
  Backoff backoff;
};

// Returns a container that has not run yet (reason PodInitializing for an
// init container, ContainerCreating otherwise).
ContainerRecord NewContainer(bool init);

// Returns `c` started at `now`: running, reason and message cleared, the
// last exit code kept.
ContainerRecord Started(ContainerRecord c, absl::Time now);

// Returns `c` after a failed start (missing binary, bad workingDir, unknown
// image, runc failing before the process ran): terminated for good with
// reason StartError, `message`, exit code 128. Whatever the restart policy,
// it does not run again.
ContainerRecord StartFailed(ContainerRecord c, absl::string_view message,
                            absl::Time now);

// Returns `c` when its config could not be made (runAsNonRoot refused its
// user): waiting for good with reason CreateContainerConfigError and
// `message`, as kubelet shows it; it never runs.
ContainerRecord ConfigFailed(ContainerRecord c, absl::string_view message);

// What the shim saw of a container process's end.
struct ExitFacts {
  int wait_status = 0;
  // The process was `runc run` (which exits 128+n when the container's
  // process died of signal n).
  bool oci = false;
  // runc's last error line ("" if runc reported none): it failed before the
  // container ran.
  std::string runc_error;
  bool memory_limit = false;
  // Whether the container cgroup's OOM kill count grew, where it is known
  // (process mode with cgroups); nullopt elsewhere.
  std::optional<bool> oom_count_grew;
  bool signalled_by_us = false;  // the shim sent it a signal (stopping)
};

// How an exit reads in the API.
struct ContainerExit {
  int exit_code = 0;  // 128+n for a death by signal n
  int signal = 0;
  std::string reason;  // Completed, Error, OOMKilled or StartError
  std::string message;
};

// Classifies an exit. An OOM kill is a SIGKILL with a memory limit that the
// OOM count shows, or, where the count is not known (runc removes the cgroup
// with its count), a SIGKILL the shim did not send.
ContainerExit ClassifyExit(const ExitFacts& facts);

// Returns `c` after it exited as `exit` at `now`. While the pod is ending
// (`pod_ending`) it is done. Otherwise by `policy`: a failure restarts under
// OnFailure and Always (a StartError never does), a success restarts under
// Always (init containers never). A restart waits the back-off (1s, doubling
// to a 30s cap): state waiting, reason CrashLoopBackOff, restart_count +1,
// the exit code kept.
ContainerRecord Exited(ContainerRecord c, const ContainerExit& exit,
                       RestartPolicy policy, bool pod_ending, absl::Time now);

// The pod's own part of its status (its phase and why), apart from its
// containers'. Not api::PodRecord, the controller's record of a pod.
struct PodOutcome {
  PodPhase phase = PodPhase::kPending;
  std::string reason;
  std::string message;
  bool finished = false;  // phase is final; its processes may still go
};

// Returns `pod` failed with `reason` and `message`, unless it already ended.
PodOutcome PodFailed(PodOutcome pod, absl::string_view reason,
                     absl::string_view message);

// Returns the phase of a pod whose init containers are done and that is not
// stopping, from its containers: Pending until every one has started,
// Running, then Succeeded when all are done with exit code 0 (else Failed).
PodPhase RunningPhase(PodPhase current,
                      const std::vector<const ContainerRecord*>& containers);

// Returns the phase of a pod whose stop has completed: Succeeded if every
// init container completed (`inits_complete`) and every container
// terminated with exit code 0, else Failed.
PodPhase StoppedPhase(bool inits_complete,
                      const std::vector<const ContainerRecord*>& containers);

// A readiness probe's settings with the API's defaults applied (period 10s,
// timeout 1s, success threshold 1, failure threshold 3).
struct ProbeSettings {
  absl::Duration initial_delay = absl::ZeroDuration();
  absl::Duration period = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(1);
  int success_threshold = 1;
  int failure_threshold = 3;
};
ProbeSettings ProbeSettingsOf(const api::Probe& probe);

// The consecutive results of a container's readiness probe.
struct ProbeRecord {
  bool ready = false;
  int successes = 0;
  int failures = 0;
};

// Returns `r` after one probe result: ready after success_threshold
// successes in a row, not ready after failure_threshold failures in a row.
ProbeRecord Probed(ProbeRecord r, const ProbeSettings& settings, bool ok);

// Returns whether a container is ready: running, and its probe (if any)
// says so. An init container is ready once it completed.
bool ContainerReady(const ContainerRecord& c, bool has_probe, bool probe_ready);

// Returns whether the pod is Ready: not ending, its init containers complete,
// and every container ready.
bool PodReady(bool ending, bool inits_complete,
              const std::vector<bool>& containers_ready);

// The kubelet's pod conditions, each with when it last changed: a pod's
// timeline as clients read it (with jobsetd's PodScheduled).
// - Initialized: every init container completed (at once when none).
// - ContainersReady: every container ready (ContainerReady), not ending.
// - Ready: the same (jobsetd has no readiness gates).
class PodConditions {
 public:
  // The pod at `start`: not initialized, not ready.
  void Reset(absl::Time start) {
    initialized_ = {false, start};
    ready_ = {false, start};
  }
  // The pod as of `now`.
  void Update(bool initialized, bool ready, absl::Time now);
  bool ready() const { return ready_.value; }
  // Appends Initialized, Ready and ContainersReady (kubelet's order) to
  // `status`; `finished`: the pod has ended (their reason PodCompleted).
  void AppendTo(bool finished, api::PodStatus* status) const;

 private:
  struct Since {
    bool value = false;
    absl::Time since;
  };
  Since initialized_;
  Since ready_;
};

// Sets `out` to `t`.
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out);

// Returns the api::ContainerStatus of container `name`: the one place a
// ContainerRecord becomes the API's strings.
api::ContainerStatus ToContainerStatus(absl::string_view name,
                                       const ContainerRecord& c, bool ready);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CONTAINER_LIFECYCLE_H_
