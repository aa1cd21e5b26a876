#ifndef JOBSET_AGENT_DEVICE_LEDGER_H_
#define JOBSET_AGENT_DEVICE_LEDGER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::agent {

// Which GPUs (device indices) each pod on this node holds, and the rule that
// hands them out: kubelet's device manager's. A pod keeps its devices until
// jobsetd releases it, but once it has finished (its containers are gone)
// they are free for another pod's admission, as kubelet frees a terminated
// pod's devices before it admits the next. So a queued GPU pod that jobsetd
// places the moment the pods before it finish is admitted even when their
// Release has not arrived yet.
//
// The ledger is saved in the agent's state dir (Serialize, Parse) so that a
// restarted agent never gives a device out twice. Thread-compatible.
class DeviceLedger {
 public:
  // Gives pod `uid` `count` of the node's `total` devices, lowest indices
  // first, none held by a pod outside `finished`. Fails with
  // kResourceExhausted ("asks for 4 devices; 0 of 8 are free") when too few
  // are free, and with kAlreadyExists when `uid` holds devices already.
  absl::StatusOr<std::vector<int>> Allocate(
      const std::string& uid, int count, int total,
      const std::set<std::string>& finished);

  // Whether pod `uid` holds an entry (possibly of no devices).
  bool Contains(const std::string& uid) const;
  // Pod `uid`'s devices (empty when none).
  std::vector<int> Of(const std::string& uid) const;
  // Whether one of pod `uid`'s devices is held by another pod outside
  // `finished` (given out while `uid` had finished).
  bool Contested(const std::string& uid,
                 const std::set<std::string>& finished) const;
  // Forgets pod `uid`; returns whether it held an entry.
  bool Erase(const std::string& uid);

  // One line per pod: "UID 0,1" ("UID -" for none).
  std::string Serialize() const;
  // Reads Serialize's text, keeping only the pods in `live`; a malformed
  // line, or index, is skipped.
  static DeviceLedger Parse(absl::string_view text,
                            const std::set<std::string>& live);

 private:
  std::map<std::string, std::vector<int>> by_pod_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_DEVICE_LEDGER_H_
