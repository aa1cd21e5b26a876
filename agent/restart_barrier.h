#ifndef JOBSET_AGENT_RESTART_BARRIER_H_
#define JOBSET_AGENT_RESTART_BARRIER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/runtime.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// The annotation jobsetd sets on a pod of restartStrategy InPlaceRestart.
inline constexpr char kInPlaceRestartAttemptKey[] =
    "jobset.sigs.k8s.io/in-place-restart-attempt";

// The restart in place attempt `pod` is to run at: nullopt when it has none,
// kInvalidArgument when the annotation is not a non-negative 32-bit integer.
absl::StatusOr<std::optional<int32_t>> InPlaceAttemptOf(const api::Pod& pod);

// Whether a pod's status is final (Succeeded or Failed).
bool PodFinished(const api::PodStatus& status);

// restartStrategy InPlaceRestart on this node: which attempt each pod runs
// at (the attempt ledger), and the restarts that wait for their pod's old
// attempt to stop before the pod starts again under its uid. The ledger is
// saved in the agent's state dir (Serialize, Parse) so that a restarted
// agent neither loses an exit nor runs an attempt twice. Thread-compatible.
//
//   if (barrier.IsLater(uid, attempt)) barrier.Hold(assignment);  // + Stop
//   for (uid : barrier.Ready(runtime.List())) start barrier.Take(uid)
class RestartBarrier {
 public:
  // The attempt pod `uid` runs at: 0 when none is recorded (a pod is started
  // at attempt 0; its entry is written before any later attempt starts).
  int32_t Running(const std::string& uid) const;
  // Records that pod `uid` was started at `attempt`.
  void SetRunning(const std::string& uid, int32_t attempt);
  // Every pod's recorded attempt (those absent run at 0).
  const std::map<std::string, int32_t>& attempts() const { return attempts_; }
  // Whether `attempt` is later than the one pod `uid` runs at.
  bool IsLater(const std::string& uid, int32_t attempt) const;

  // Holds `order` (a later attempt of its pod) until the old attempt stopped.
  void Hold(const api::PodAssignment& order);
  // Takes pod `uid`'s held restart; nullopt when none waits.
  std::optional<api::PodAssignment> Take(const std::string& uid);
  // The pods of `pods` whose restart waits and whose old attempt finished.
  std::vector<std::string> Ready(const std::vector<PodState>& pods) const;
  // `finished` less the pods whose restart waits (they keep their devices).
  std::set<std::string> Unrestarted(std::set<std::string> finished) const;

  // Forgets pod `uid` (released); returns whether the ledger changed.
  bool Erase(const std::string& uid);

  // The attempt ledger, one line per pod: "UID ATTEMPT".
  std::string Serialize() const;
  // Reads Serialize's text, keeping only the pods in `live`; a malformed
  // entry is skipped. No restart waits in the result.
  static RestartBarrier Parse(absl::string_view text,
                              const std::set<std::string>& live);

 private:
  std::map<std::string, int32_t> attempts_;
  std::map<std::string, api::PodAssignment> restarts_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RESTART_BARRIER_H_
