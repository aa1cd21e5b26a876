#ifndef JOBSET_COMMON_CLOCK_H_
#define JOBSET_COMMON_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace jobset {

// The source of time for everything in jobsetd. Code that needs the time takes
// a Clock (or, when it is pure, an absl::Time); only RealClock reads the real
// time, so tests drive time with FakeClock instead of sleeping. Implementations
// are thread-safe.
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
  static RealClock* Get();

  absl::Time Now() const override;
  void SleepUntil(absl::Time deadline) override;
};

// A clock that moves only when told to. Threads blocked in SleepUntil wake when
// Advance or SetTime moves the time past their deadline. Thread-safe.
class FakeClock final : public Clock {
 public:
  // Starts at `start`; the default is a fixed, arbitrary instant so tests are
  // reproducible.
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000));

  absl::Time Now() const override;
  void SleepUntil(absl::Time deadline) override;

  // Moves time forward by `d` (which must not be negative).
  void Advance(absl::Duration d);
  // Sets the time to `t` (which must not be earlier than Now()).
  void SetTime(absl::Time t);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

// The real time `timeout` from now, for what waits in real time whatever a
// Clock says: gRPC deadlines, condition-variable waits, a store watch's
// Next. Never for a decision (those take a Clock). Thread-safe.
absl::Time RealDeadline(absl::Duration timeout);

// Measures real elapsed time, for a metric (how long placement or a store
// commit took), never for a decision. Thread-compatible.
class Stopwatch {
 public:
  Stopwatch();
  // The real time since construction.
  absl::Duration Elapsed() const;

 private:
  absl::Time start_;
};

}  // namespace jobset

#endif  // JOBSET_COMMON_CLOCK_H_
