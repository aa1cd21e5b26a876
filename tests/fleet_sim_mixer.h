#ifndef JOBSET_TESTS_FLEET_SIM_MIXER_H_
#define JOBSET_TESTS_FLEET_SIM_MIXER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "proto/agent.pb.h"

namespace jobset::testing::fleet {

// What a link that replays and reorders does to a simulated agent's pod
// reports (fleet_sim --duplicate_reports, --reorder_reports; reliability
// plan I1). The agent protocol's reports carry no sequence number or report
// id (proto/agent.proto: level-based, each names its pod uid and says the
// pod's whole status), so any order is one the protocol allows:
//
// - duplicates: each report is also sent `duplicates` more times, each copy
//   at its own random time up to `max_delay` after the report (a copy may
//   land after the pod's next report, after its release, or after its
//   JobSet restarted);
// - reorder: reports and copies wait in a window that is sent, shuffled,
//   once it holds `window_messages` or `window` after its first message
//   (a report may overtake others, of its own pod or of others).
//
// Only pod reports pass through it; Hello, heartbeats and log chunks keep
// their order. Seeded: the same seed, stream and calls give the same
// output. Thread-compatible (the agent's lock guards it).
class ReportMixer {
 public:
  struct Options {
    int duplicates = 0;
    bool reorder = false;
    uint64_t seed = 1;
    absl::Duration window = absl::Milliseconds(50);
    int window_messages = 16;
    absl::Duration max_delay = absl::Seconds(2);
  };
  // What to do after a call.
  struct Out {
    // Write now, in this order.
    std::vector<api::AgentMessage> send;
    // Copies to hand back to Copy() at their time.
    std::vector<std::pair<absl::Time, api::AgentMessage>> later;
    // A window opened: call Flush(window) at that time.
    std::optional<std::pair<absl::Time, int64_t>> flush;
  };
  // How much mixing happened.
  struct Counts {
    int64_t reports = 0;    // reports given to Report()
    int64_t copies = 0;     // copies given to Copy()
    int64_t displaced = 0;  // messages a window sent out of their order
  };

  // `stream` (e.g. the agent's index) is mixed into the seed, so that
  // agents of one fleet shuffle differently.
  ReportMixer(const Options& options, uint64_t stream);

  // Whether it changes anything (duplicates or reordering on).
  bool active() const { return options_.duplicates > 0 || options_.reorder; }

  // Takes a report the agent sends at `now`.
  Out Report(api::AgentMessage msg, absl::Time now);
  // Takes a copy whose time has come.
  Out Copy(api::AgentMessage msg, absl::Time now);
  // Window `window`'s time is up: its messages, shuffled (nothing if it
  // was already sent for being full).
  std::vector<api::AgentMessage> Flush(int64_t window);
  // Drops what the window holds (its stream ended).
  void Clear() { held_.clear(); }

  const Counts& counts() const { return counts_; }

 private:
  Out Admit(api::AgentMessage msg, absl::Time now);
  std::vector<api::AgentMessage> Shuffled();

  const Options options_;
  std::mt19937_64 rng_;
  std::vector<api::AgentMessage> held_;
  int64_t window_ = 0;  // the open window's id while held_ is not empty
  Counts counts_;
};

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_MIXER_H_
