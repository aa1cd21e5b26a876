#ifndef JOBSET_AGENT_PROGRESS_TRACKER_H_
#define JOBSET_AGENT_PROGRESS_TRACKER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/progress_file.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// One pod's progress as the agent has read it (docs/agent.md, "Progress
// heartbeats"): the inputs of its file, in the order read, at the agent's
// own (monotonic) times. Keeps the latest step and checkpoint step, the
// readings of the last kRateWindow for the step rate, when the step last
// advanced, and how many inputs were ignored: refused by the parser, or a
// step below the last one of the same pod instance. Pure: time is given.
// Thread-compatible.
class ProgressTracker {
 public:
  // The step rate is taken over the readings of this long up to the latest
  // advance.
  static constexpr absl::Duration kRateWindow = absl::Seconds(30);

  // Takes what the file said at `now`. Returns the input's reject (kNone
  // when it was taken, or when it was no input: nothing new, no line). An
  // input equal to the one before (the same line, or the same refusal of
  // the same bytes) is nothing new: read again, it is not counted again.
  ProgressReject Observe(const ProgressInput& input, absl::Time now);

  // The pod runs anew (a restart in place, a container restarted): its
  // step may start lower. The readings go; the rejected count stays, and the
  // file's input as it is now stays seen (a step left by the last instance
  // is not taken as the new one's first).
  void NewInstance();

  // Whether a step was taken (since the last NewInstance).
  bool has_step() const { return step_.has_value(); }
  int64_t rejected() const { return rejected_; }
  // Changes with every taken advance, checkpoint and rejection: what a
  // report says changed when this did.
  int64_t version() const { return version_; }

  // The progress as of `now`: step (if any), checkpoint step, the rate over
  // the readings within kRateWindow of the latest advance, the time since
  // it, the rejected count.
  api::PodProgress Progress(absl::Time now) const;

 private:
  struct Reading {
    absl::Time at;
    int64_t step = 0;
  };

  std::optional<int64_t> step_;
  int64_t checkpoint_step_ = 0;
  absl::Time advanced_at_ = absl::InfinitePast();
  // Oldest first; the last is the latest advance. At most one per read.
  std::deque<Reading> readings_;
  int64_t rejected_ = 0;
  int64_t version_ = 0;
  // The last input, to tell a new one from it.
  ProgressReject last_reject_ = ProgressReject::kNone;
  std::string last_line_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_PROGRESS_TRACKER_H_
