#ifndef JOBSET_SCHEDULER_RESILIENCE_GOODPUT_LEDGER_H_
#define JOBSET_SCHEDULER_RESILIENCE_GOODPUT_LEDGER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/resilience.pb.h"

// Goodput: where a JobSet's wall time went, fed by the transitions the
// controller sees, each with its time. Every moment from submission to now
// (or the end) is in exactly one phase, so the phases add up to the wall
// time exactly:
//   Queued       submitted (or suspended) until admitted;
//   Starting     admitted until the first step advances (pods placed,
//                started, the trainer loading); without progress reports,
//                until all pods run;
//   Productive   steps advancing; for a JobSet that reports no progress,
//                all pods running;
//   Stalled      from the last progress before a ProgressStalled verdict
//                until a step advances again (that time is taken back from
//                Productive);
//   Restarting   a failed attempt until the next one's first step (or all
//                pods running, without progress reports);
//   Finished     no time accrues.
// Lost work: for each restart (or suspension), the last step the ended
// attempt reached minus the checkpoint step the next one resumed from (the
// checkpoint step of its first progress, else the last one reported before,
// else 0), counted when the next attempt first advances.
//
// The ledger also keeps a record per restart attempt (at most
// max_attempts, the oldest dropped), for `jobsetctl describe jobset`.
//
// A transition that does not fit the phase (AllRunning while queued) is
// ignored; one stamped before the last accounted time counts at that time
// (jobsetd's clock went back: no phase gets a negative duration).

namespace jobset::scheduler::resilience {

enum class GoodputPhase {
  kQueued,
  kStarting,
  kProductive,
  kStalled,
  kRestarting,
  kFinished,
};

// Returns "Queued", "Starting", "Productive", "Stalled", "Restarting",
// "Finished".
absl::string_view GoodputPhaseName(GoodputPhase phase);

enum class GoodputEvent {
  kAdmitted,          // admitted (or resumed after a suspension)
  kAllRunning,        // every pod of the attempt runs
  kProgressAdvanced,  // a step advanced (HangVerdict::last_progress moved)
  kProgressStalled,   // the hang detector's verdict
  kAttemptFailed,     // the attempt failed; the next one begins (restart)
  kSuspended,         // suspended or evicted: back to the queue
  kFinished,          // the JobSet completed or failed for good
};

struct GoodputTransition {
  GoodputEvent event = GoodputEvent::kAdmitted;
  absl::Time time{};
  // kAdmitted, kAttemptFailed: the index of the attempt that begins
  // (status.restarts).
  int32_t attempt = 0;
  // kProgressAdvanced: the highest step of the gang, and the latest
  // checkpoint step reported, if any.
  int64_t step = 0;
  std::optional<int64_t> checkpoint_step{};
  // kProgressStalled: the last progress (HangVerdict::last_progress).
  absl::Time last_progress = absl::InfinitePast();
  // kAttemptFailed, kSuspended, kFinished: why the attempt ended (the
  // condition's reason), the first pod that failed, its node and the
  // failed containers' exit codes.
  std::string reason{};
  std::string pod{};
  std::string node{};
  std::vector<int32_t> exit_codes{};
};

// One restart attempt, for `jobsetctl describe jobset`.
struct AttemptRecord {
  int32_t index = 0;
  absl::Time start{};
  absl::Time end = absl::InfiniteFuture();  // InfiniteFuture: still running
  std::string reason{};
  std::string first_failed_pod{};
  std::string first_failed_node{};
  // Distinct nonzero exit codes, at most kMaxExitCodes.
  std::vector<int32_t> exit_codes{};
  std::optional<int64_t> last_step{};
  bool operator==(const AttemptRecord&) const = default;
};

inline constexpr int kMaxExitCodes = 8;
inline constexpr int kDefaultMaxAttempts = 10;

// Time per phase (Finished has none).
struct PhaseTimes {
  absl::Duration queued{};
  absl::Duration starting{};
  absl::Duration productive{};
  absl::Duration stalled{};
  absl::Duration restarting{};

  // Returns the duration of `phase`; nullptr for kFinished.
  absl::Duration* Of(GoodputPhase phase);
  absl::Duration Sum() const {
    return queued + starting + productive + stalled + restarting;
  }
  bool operator==(const PhaseTimes&) const = default;
};

// Where the wall time went, at a moment.
struct GoodputReport {
  GoodputPhase phase = GoodputPhase::kQueued;
  PhaseTimes times;
  // Submission to now (or to the end): times.Sum(), exactly.
  absl::Duration wall{};
  // times.productive / wall; 0 while wall is 0.
  double goodput = 0;
  int64_t lost_steps = 0;
};

// One JobSet's ledger. Thread-compatible; used only from the controller
// thread.
class GoodputLedger {
 public:
  // A JobSet submitted at `submitted`, queued.
  explicit GoodputLedger(absl::Time submitted,
                         int max_attempts = kDefaultMaxAttempts);

  // Returns the ledger `status` describes (as ToProto wrote it), or
  // kInvalidArgument naming what a stored record got wrong: a missing or
  // bad time, an unknown phase, a negative duration, durations that do not
  // add up to phase_since - submitted. Attempts beyond max_attempts are
  // dropped, oldest first.
  static absl::StatusOr<GoodputLedger> FromProto(
      const api::GoodputStatus& status, int max_attempts = kDefaultMaxAttempts);

  // Applies `t`. Returns false when it does not fit the phase (ignored).
  bool Apply(const GoodputTransition& t);

  // Returns where the time went up to `now` (the end, once finished; the
  // last accounted time, if `now` is before it).
  GoodputReport Report(absl::Time now) const;

  GoodputPhase phase() const { return phase_; }
  // Oldest first; the last one is the current attempt (end InfiniteFuture)
  // unless the JobSet is queued again or finished.
  const std::deque<AttemptRecord>& attempts() const { return attempts_; }

  // Returns the persisted form. Its durations hold the time up to
  // phase_since; the current phase's time since then is not in them (a
  // reader adds now - phase_since to the phase's duration).
  api::GoodputStatus ToProto() const;

 private:
  // Accounts [phase_since_, until] to the current phase, or to `as` when
  // given, and moves phase_since_ to `until`.
  void Accrue(absl::Time until, std::optional<GoodputPhase> as = {});
  // The phase an attempt's start-up is accounted to.
  GoodputPhase StartupPhase() const {
    return restarted_ ? GoodputPhase::kRestarting : GoodputPhase::kStarting;
  }
  void BeginAttempt(int32_t index, absl::Time start);
  void EndAttempt(const GoodputTransition& t, absl::Time end);
  void Advance(const GoodputTransition& t, absl::Time time);

  int max_attempts_;
  absl::Time submitted_;
  std::optional<absl::Time> finished_;
  GoodputPhase phase_ = GoodputPhase::kQueued;
  absl::Time phase_since_;
  PhaseTimes times_;
  int64_t lost_steps_ = 0;
  std::deque<AttemptRecord> attempts_;
  // The current attempt.
  bool all_running_ = false;
  bool progressed_ = false;
  bool restarted_ = false;
  std::optional<int64_t> checkpoint_step_;
  std::optional<int64_t> pending_last_step_;
};

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_GOODPUT_LEDGER_H_
