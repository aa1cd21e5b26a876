#include "scheduler/auth/failure_limiter.h"

#include "absl/strings/str_cat.h"

namespace jobset::scheduler {

absl::Status FailureLimiter::Check(absl::string_view address,
                                   absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = windows_.find(address);
  if (it == windows_.end() || it->second.failures < options_.max_failures ||
      now - it->second.start >= options_.window) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "too many failed authentications from ", address, "; try again in ",
      absl::FormatDuration(absl::Ceil(
          options_.window - (now - it->second.start), absl::Seconds(1)))));
}

void FailureLimiter::Failed(absl::string_view address, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (windows_.size() >= options_.max_addresses &&
      !windows_.contains(address)) {
    // Drop the windows that have ended; if none has, all of them.
    absl::erase_if(windows_, [&](const auto& entry) {
      return now - entry.second.start >= options_.window;
    });
    if (windows_.size() >= options_.max_addresses) windows_.clear();
  }
  Window& w = windows_[address];
  if (w.failures == 0 || now - w.start >= options_.window) {
    w = Window{.start = now, .failures = 0};
  }
  ++w.failures;
}

}  // namespace jobset::scheduler
