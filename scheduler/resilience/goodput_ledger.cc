#include "scheduler/resilience/goodput_ledger.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"
#include "scheduler/resilience/proto_time.h"

namespace jobset::scheduler::resilience {
namespace {

constexpr GoodputPhase kPhases[] = {
    GoodputPhase::kQueued,     GoodputPhase::kStarting,
    GoodputPhase::kProductive, GoodputPhase::kStalled,
    GoodputPhase::kRestarting, GoodputPhase::kFinished};

bool Finite(absl::Time t) {
  return t != absl::InfinitePast() && t != absl::InfiniteFuture();
}

// Adds without overflowing: lost work saturates at int64's maximum.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  return a > kMax - b ? kMax : a + b;
}

// Appends the distinct nonzero codes of `codes` to `out`, up to
// kMaxExitCodes in all.
void AddExitCodes(const std::vector<int32_t>& codes,
                  std::vector<int32_t>* out) {
  for (int32_t code : codes) {
    if (out->size() >= static_cast<size_t>(kMaxExitCodes)) return;
    if (code != 0 && std::find(out->begin(), out->end(), code) == out->end()) {
      out->push_back(code);
    }
  }
}

absl::Status Invalid(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

// Reads the required time `field` of a record.
absl::StatusOr<absl::Time> RequiredTime(bool has,
                                        const google::protobuf::Timestamp& ts,
                                        absl::string_view path) {
  std::optional<absl::Time> t;
  if (has) t = FromProtoTime(ts);
  if (!t.has_value()) return Invalid(path, "missing or out of range");
  return *t;
}

absl::StatusOr<absl::Duration> PhaseDuration(
    bool has, const google::protobuf::Duration& d, absl::string_view path) {
  if (!has) return absl::ZeroDuration();
  std::optional<absl::Duration> out = FromProtoDuration(d);
  if (!out.has_value() || *out < absl::ZeroDuration()) {
    return Invalid(path, "negative or out of range");
  }
  return *out;
}

api::AttemptRecord AttemptToProto(const AttemptRecord& a) {
  api::AttemptRecord out;
  out.set_index(a.index);
  *out.mutable_start() = ToProtoTime(a.start);
  if (a.end != absl::InfiniteFuture()) *out.mutable_end() = ToProtoTime(a.end);
  out.set_reason(a.reason);
  out.set_first_failed_pod(a.first_failed_pod);
  out.set_first_failed_node(a.first_failed_node);
  for (int32_t code : a.exit_codes) out.add_exit_codes(code);
  if (a.last_step.has_value()) out.set_last_step(*a.last_step);
  return out;
}

absl::StatusOr<AttemptRecord> AttemptFromProto(const api::AttemptRecord& in,
                                               const std::string& path) {
  AttemptRecord a;
  if (in.index() < 0) return Invalid(path + ".index", "negative");
  a.index = in.index();
  absl::StatusOr<absl::Time> start =
      RequiredTime(in.has_start(), in.start(), path + ".start");
  if (!start.ok()) return start.status();
  a.start = *start;
  if (in.has_end()) {
    absl::StatusOr<absl::Time> end =
        RequiredTime(true, in.end(), path + ".end");
    if (!end.ok()) return end.status();
    if (*end < a.start) return Invalid(path + ".end", "before start");
    a.end = *end;
  }
  a.reason = in.reason();
  a.first_failed_pod = in.first_failed_pod();
  a.first_failed_node = in.first_failed_node();
  AddExitCodes({in.exit_codes().begin(), in.exit_codes().end()}, &a.exit_codes);
  if (in.has_last_step()) {
    if (in.last_step() < 0) return Invalid(path + ".lastStep", "negative");
    a.last_step = in.last_step();
  }
  return a;
}

}  // namespace

absl::string_view GoodputPhaseName(GoodputPhase phase) {
  switch (phase) {
    case GoodputPhase::kQueued:
      return "Queued";
    case GoodputPhase::kStarting:
      return "Starting";
    case GoodputPhase::kProductive:
      return "Productive";
    case GoodputPhase::kStalled:
      return "Stalled";
    case GoodputPhase::kRestarting:
      return "Restarting";
    case GoodputPhase::kFinished:
      return "Finished";
  }
  return "";
}

absl::Duration* PhaseTimes::Of(GoodputPhase phase) {
  switch (phase) {
    case GoodputPhase::kQueued:
      return &queued;
    case GoodputPhase::kStarting:
      return &starting;
    case GoodputPhase::kProductive:
      return &productive;
    case GoodputPhase::kStalled:
      return &stalled;
    case GoodputPhase::kRestarting:
      return &restarting;
    case GoodputPhase::kFinished:
      return nullptr;
  }
  return nullptr;
}

GoodputLedger::GoodputLedger(absl::Time submitted, int max_attempts)
    : max_attempts_(std::max(max_attempts, 1)),
      submitted_(submitted),
      phase_since_(submitted) {}

void GoodputLedger::Accrue(absl::Time until, std::optional<GoodputPhase> as) {
  if (absl::Duration* bucket = times_.Of(as.value_or(phase_))) {
    *bucket += until - phase_since_;
  }
  phase_since_ = until;
}

void GoodputLedger::BeginAttempt(int32_t index, absl::Time start) {
  all_running_ = false;
  progressed_ = false;
  AttemptRecord record;
  record.index = std::max(index, 0);
  record.start = start;
  attempts_.push_back(std::move(record));
  while (attempts_.size() > static_cast<size_t>(max_attempts_)) {
    attempts_.pop_front();
  }
}

void GoodputLedger::EndAttempt(const GoodputTransition& t, absl::Time end) {
  if (attempts_.empty() || attempts_.back().end != absl::InfiniteFuture()) {
    return;
  }
  AttemptRecord& a = attempts_.back();
  a.end = end;
  a.reason = t.reason;
  a.first_failed_pod = t.pod;
  a.first_failed_node = t.node;
  AddExitCodes(t.exit_codes, &a.exit_codes);
  // The steps this attempt reached are redone by the next one, unless it
  // never advanced (then the last attempt that did is still owed).
  if (progressed_ && a.last_step.has_value()) pending_last_step_ = a.last_step;
}

void GoodputLedger::Advance(const GoodputTransition& t, absl::Time time) {
  if (phase_ == GoodputPhase::kStalled) {
    Accrue(time);
  } else if (!progressed_) {
    // Up to the first step the attempt was starting up, all pods running
    // or not.
    Accrue(time, StartupPhase());
  }
  if (!progressed_ && pending_last_step_.has_value()) {
    const int64_t resumed_from =
        t.checkpoint_step.value_or(checkpoint_step_.value_or(0));
    lost_steps_ = SaturatingAdd(
        lost_steps_, std::max<int64_t>(*pending_last_step_ - resumed_from, 0));
    pending_last_step_.reset();
  }
  // While productive, the segment goes on: a later stall may take part of
  // it back.
  progressed_ = true;
  all_running_ = true;
  phase_ = GoodputPhase::kProductive;
  if (t.checkpoint_step.has_value()) checkpoint_step_ = t.checkpoint_step;
  if (!attempts_.empty() && attempts_.back().end == absl::InfiniteFuture()) {
    std::optional<int64_t>& last = attempts_.back().last_step;
    last = std::max(last.value_or(t.step), t.step);
  }
}

bool GoodputLedger::Apply(const GoodputTransition& t) {
  if (phase_ == GoodputPhase::kFinished || !Finite(t.time)) return false;
  const absl::Time time = std::max(t.time, phase_since_);
  const bool running = phase_ != GoodputPhase::kQueued;
  switch (t.event) {
    case GoodputEvent::kAdmitted:
      if (running) return false;
      Accrue(time);
      phase_ = GoodputPhase::kStarting;
      restarted_ = false;
      BeginAttempt(t.attempt, time);
      return true;
    case GoodputEvent::kAllRunning:
      if (phase_ != GoodputPhase::kStarting &&
          phase_ != GoodputPhase::kRestarting) {
        return false;
      }
      Accrue(time);
      all_running_ = true;
      phase_ = GoodputPhase::kProductive;
      return true;
    case GoodputEvent::kProgressAdvanced:
      if (!running || t.step < 0 ||
          (t.checkpoint_step.has_value() && *t.checkpoint_step < 0)) {
        return false;
      }
      Advance(t, time);
      return true;
    case GoodputEvent::kProgressStalled: {
      if (phase_ != GoodputPhase::kProductive) return false;
      // The time since the last progress was not productive after all.
      Accrue(std::clamp(t.last_progress, phase_since_, time));
      Accrue(time, GoodputPhase::kStalled);
      phase_ = GoodputPhase::kStalled;
      return true;
    }
    case GoodputEvent::kAttemptFailed:
      if (!running) return false;
      Accrue(time);
      EndAttempt(t, time);
      phase_ = GoodputPhase::kRestarting;
      restarted_ = true;
      BeginAttempt(t.attempt, time);
      return true;
    case GoodputEvent::kSuspended:
      if (!running) return false;
      Accrue(time);
      EndAttempt(t, time);
      phase_ = GoodputPhase::kQueued;
      restarted_ = false;
      all_running_ = false;
      progressed_ = false;
      return true;
    case GoodputEvent::kFinished:
      Accrue(time);
      EndAttempt(t, time);
      phase_ = GoodputPhase::kFinished;
      finished_ = time;
      return true;
  }
  return false;
}

GoodputReport GoodputLedger::Report(absl::Time now) const {
  GoodputReport report;
  report.phase = phase_;
  report.times = times_;
  report.lost_steps = lost_steps_;
  const absl::Time end =
      finished_.has_value()
          ? *finished_
          : (Finite(now) ? std::max(now, phase_since_) : phase_since_);
  if (absl::Duration* current = report.times.Of(phase_)) {
    *current += end - phase_since_;
  }
  report.wall = end - submitted_;
  if (report.wall > absl::ZeroDuration()) {
    report.goodput = absl::FDivDuration(report.times.productive, report.wall);
  }
  return report;
}

api::GoodputStatus GoodputLedger::ToProto() const {
  api::GoodputStatus out;
  *out.mutable_submitted() = ToProtoTime(submitted_);
  if (finished_.has_value()) *out.mutable_finished() = ToProtoTime(*finished_);
  out.set_phase(std::string(GoodputPhaseName(phase_)));
  *out.mutable_phase_since() = ToProtoTime(phase_since_);
  *out.mutable_queued() = ToProtoDuration(times_.queued);
  *out.mutable_starting() = ToProtoDuration(times_.starting);
  *out.mutable_productive() = ToProtoDuration(times_.productive);
  *out.mutable_stalled() = ToProtoDuration(times_.stalled);
  *out.mutable_restarting() = ToProtoDuration(times_.restarting);
  out.set_lost_steps(lost_steps_);
  for (const AttemptRecord& a : attempts_) {
    *out.add_attempts() = AttemptToProto(a);
  }
  out.set_all_running(all_running_);
  out.set_progressed(progressed_);
  out.set_restarted(restarted_);
  if (checkpoint_step_.has_value()) out.set_checkpoint_step(*checkpoint_step_);
  if (pending_last_step_.has_value()) {
    out.set_pending_last_step(*pending_last_step_);
  }
  return out;
}

absl::StatusOr<GoodputLedger> GoodputLedger::FromProto(
    const api::GoodputStatus& in, int max_attempts) {
  absl::StatusOr<absl::Time> submitted =
      RequiredTime(in.has_submitted(), in.submitted(), "submitted");
  if (!submitted.ok()) return submitted.status();
  GoodputLedger ledger(*submitted, max_attempts);
  absl::StatusOr<absl::Time> since =
      RequiredTime(in.has_phase_since(), in.phase_since(), "phaseSince");
  if (!since.ok()) return since.status();
  if (*since < *submitted) return Invalid("phaseSince", "before submitted");
  ledger.phase_since_ = *since;

  const GoodputPhase* phase = std::find_if(
      std::begin(kPhases), std::end(kPhases),
      [&](GoodputPhase p) { return GoodputPhaseName(p) == in.phase(); });
  if (phase == std::end(kPhases)) {
    return Invalid("phase", absl::StrCat("unknown phase ", Quote(in.phase())));
  }
  ledger.phase_ = *phase;
  if (in.has_finished() != (ledger.phase_ == GoodputPhase::kFinished)) {
    return Invalid("finished", "set if and only if the phase is Finished");
  }
  if (in.has_finished()) {
    absl::StatusOr<absl::Time> finished =
        RequiredTime(true, in.finished(), "finished");
    if (!finished.ok()) return finished.status();
    if (*finished != *since) return Invalid("finished", "not phaseSince");
    ledger.finished_ = *finished;
  }

  struct Field {
    bool has;
    const google::protobuf::Duration& value;
    const char* path;
    absl::Duration* out;
  };
  PhaseTimes& times = ledger.times_;
  for (const Field& f : {
           Field{in.has_queued(), in.queued(), "queued", &times.queued},
           Field{in.has_starting(), in.starting(), "starting", &times.starting},
           Field{in.has_productive(), in.productive(), "productive",
                 &times.productive},
           Field{in.has_stalled(), in.stalled(), "stalled", &times.stalled},
           Field{in.has_restarting(), in.restarting(), "restarting",
                 &times.restarting},
       }) {
    absl::StatusOr<absl::Duration> d = PhaseDuration(f.has, f.value, f.path);
    if (!d.ok()) return d.status();
    *f.out = *d;
  }
  if (times.Sum() != *since - *submitted) {
    return Invalid("phase durations",
                   "do not add up to phaseSince - submitted");
  }
  if (in.lost_steps() < 0) return Invalid("lostSteps", "negative");
  ledger.lost_steps_ = in.lost_steps();
  for (int i = 0; i < in.attempts_size(); ++i) {
    absl::StatusOr<AttemptRecord> a =
        AttemptFromProto(in.attempts(i), absl::StrCat("attempts[", i, "]"));
    if (!a.ok()) return a.status();
    ledger.attempts_.push_back(*std::move(a));
  }
  while (ledger.attempts_.size() > static_cast<size_t>(ledger.max_attempts_)) {
    ledger.attempts_.pop_front();
  }
  ledger.all_running_ = in.all_running();
  ledger.progressed_ = in.progressed();
  ledger.restarted_ = in.restarted();
  if (in.has_checkpoint_step()) {
    if (in.checkpoint_step() < 0) return Invalid("checkpointStep", "negative");
    ledger.checkpoint_step_ = in.checkpoint_step();
  }
  if (in.has_pending_last_step()) {
    if (in.pending_last_step() < 0) {
      return Invalid("pendingLastStep", "negative");
    }
    ledger.pending_last_step_ = in.pending_last_step();
  }
  return ledger;
}

}  // namespace jobset::scheduler::resilience
