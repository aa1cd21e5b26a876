#include "agent/progress_tracker.h"

#include <algorithm>

namespace jobset::agent {
namespace {

// A bound on the readings kept, whatever the read interval.
constexpr size_t kMaxReadings = 1024;

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

}  // namespace

ProgressReject ProgressTracker::Observe(const ProgressInput& input,
                                        absl::Time now) {
  if (input.reject == ProgressReject::kNone && input.line.empty()) {
    return ProgressReject::kNone;  // No file yet, or no complete line.
  }
  if (input.reject == last_reject_ && input.line == last_line_) {
    return ProgressReject::kNone;  // Read again, unchanged.
  }
  last_reject_ = input.reject;
  last_line_ = input.line;
  ProgressReject reject = input.reject;
  if (reject == ProgressReject::kNone && step_.has_value() &&
      (input.step < *step_ || (input.checkpoint_step != 0 &&
                               input.checkpoint_step < checkpoint_step_))) {
    reject = ProgressReject::kDecreasing;
  }
  if (reject != ProgressReject::kNone) {
    ++rejected_;
    ++version_;
    return reject;
  }
  // A line without a checkpoint keeps the last one: a checkpoint taken does
  // not go away.
  const int64_t checkpoint = input.checkpoint_step != 0
                                 ? input.checkpoint_step
                                 : std::min(checkpoint_step_, input.step);
  if (checkpoint != checkpoint_step_) {
    checkpoint_step_ = checkpoint;
    ++version_;
  }
  if (!step_.has_value() || input.step > *step_) {
    step_ = input.step;
    advanced_at_ = now;
    readings_.push_back({now, input.step});
    // Kept: the readings within the window of this one, and the latest
    // before it (the rate's base when the steps are slower than the window).
    while (readings_.size() > kMaxReadings ||
           (readings_.size() >= 2 && readings_[1].at <= now - kRateWindow)) {
      readings_.pop_front();
    }
    ++version_;
  }
  return ProgressReject::kNone;
}

void ProgressTracker::NewInstance() {
  step_.reset();
  checkpoint_step_ = 0;
  advanced_at_ = absl::InfinitePast();
  readings_.clear();
  ++version_;
}

api::PodProgress ProgressTracker::Progress(absl::Time now) const {
  api::PodProgress out;
  out.set_rejected_lines(rejected_);
  if (!step_.has_value()) return out;
  out.set_step(*step_);
  out.set_checkpoint_step(checkpoint_step_);
  SetDuration(std::max(now - advanced_at_, absl::ZeroDuration()),
              out.mutable_since_last_advance());
  if (readings_.size() >= 2) {
    const Reading& base = readings_.front();
    const Reading& latest = readings_.back();
    const double seconds = absl::ToDoubleSeconds(latest.at - base.at);
    if (seconds > 0) {
      out.set_steps_per_second(static_cast<double>(latest.step - base.step) /
                               seconds);
    }
  }
  return out;
}

}  // namespace jobset::agent
