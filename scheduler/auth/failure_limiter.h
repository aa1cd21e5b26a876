#ifndef JOBSET_SCHEDULER_AUTH_FAILURE_LIMITER_H_
#define JOBSET_SCHEDULER_AUTH_FAILURE_LIMITER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace jobset::scheduler {

// Slows down guessing: a key (RequestAuth's: an address, or an address and
// the token id it guesses the secret of) whose failed authentications (bad
// or expired tokens, bad join tokens) reach `max_failures` within a window
// of `window` is refused with RESOURCE_EXHAUSTED until the window ends;
// other keys are unaffected. At most `max_addresses` are tracked: beyond, the
// oldest windows are dropped (an attacker with that many addresses is not
// stopped here). Thread-safe.
class FailureLimiter {
 public:
  struct Options {
    int max_failures = 100;
    absl::Duration window = absl::Minutes(1);
    size_t max_addresses = 100'000;
  };
  FailureLimiter() : FailureLimiter(Options()) {}
  explicit FailureLimiter(Options options) : options_(options) {}

  // kResourceExhausted naming the address and when to retry, if it is
  // being refused at `now`.
  absl::Status Check(absl::string_view address, absl::Time now) const;
  // Counts one failed authentication from `address`.
  void Failed(absl::string_view address, absl::Time now);

 private:
  struct Window {
    absl::Time start;
    int failures = 0;
  };

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_FAILURE_LIMITER_H_
