#ifndef JOBSET_CLI_CMD_CLOCK_H_
#define JOBSET_CLI_CMD_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

// jobsetctl's source of time, with common/clock.h's interface. //common:clock
// is not visible to //cli yet; once common/BUILD lists //cli:__pkg__ there,
// this file gives way to `using ::jobset::Clock;` (and RealClock, FakeClock).
namespace jobset::cli {

// Where commands read the time: only RealClock reads the real time, so tests
// drive it with FakeClock instead of sleeping. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the current time.
  virtual absl::Time Now() const = 0;

  // Blocks until Now() >= deadline.
  virtual void SleepUntil(absl::Time deadline) = 0;
};

// The wall clock. Thread-safe.
class RealClock final : public Clock {
 public:
  // Returns a process-wide instance; never destroyed.
  static RealClock* Get() {
    static RealClock* const clock = new RealClock();
    return clock;
  }

  absl::Time Now() const override { return absl::Now(); }
  void SleepUntil(absl::Time deadline) override {
    const absl::Duration left = deadline - absl::Now();
    if (left > absl::ZeroDuration()) absl::SleepFor(left);
  }
};

// A clock that moves only when told to; threads blocked in SleepUntil wake
// when Advance moves the time past their deadline. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void SleepUntil(absl::Time deadline) override {
    absl::MutexLock lock(&mu_);
    auto reached = [this, deadline]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return now_ >= deadline;
    };
    mu_.Await(absl::Condition(&reached));
  }

  // Moves time forward by `d` (which must not be negative).
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_CLOCK_H_
