#include "common/clock.h"

#include "absl/time/clock.h"
#include "common/log.h"

namespace jobset {

RealClock* RealClock::Get() {
  static RealClock* const clock = new RealClock();
  return clock;
}

absl::Time RealClock::Now() const { return absl::Now(); }

void RealClock::SleepUntil(absl::Time deadline) {
  absl::Duration left = deadline - absl::Now();
  if (left > absl::ZeroDuration()) absl::SleepFor(left);
}

absl::Time RealDeadline(absl::Duration timeout) {
  return absl::Now() + timeout;
}

Stopwatch::Stopwatch() : start_(absl::Now()) {}

absl::Duration Stopwatch::Elapsed() const { return absl::Now() - start_; }

FakeClock::FakeClock(absl::Time start) : now_(start) {}

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::SleepUntil(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return now_ >= deadline;
  };
  mu_.Await(absl::Condition(&reached));
}

void FakeClock::Advance(absl::Duration d) {
  JOBSET_CHECK(d >= absl::ZeroDuration()) << "FakeClock cannot go backwards";
  absl::MutexLock lock(&mu_);
  now_ += d;
}

void FakeClock::SetTime(absl::Time t) {
  absl::MutexLock lock(&mu_);
  JOBSET_CHECK(t >= now_) << "FakeClock cannot go backwards";
  now_ = t;
}

}  // namespace jobset
