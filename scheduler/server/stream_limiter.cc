#include "scheduler/server/stream_limiter.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"

namespace jobset::scheduler {

StreamLimiter::Slot::~Slot() {
  if (limiter_ != nullptr) limiter_->Release(user_);
}

absl::StatusOr<StreamLimiter::Slot> StreamLimiter::Acquire(
    absl::string_view user) {
  absl::MutexLock lock(&mu_);
  int& open = open_[user];
  if (max_per_user_ > 0 && open >= max_per_user_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("user ", Quote(user), " has ", open,
                     " streams open (watches and logs -f), the limit "
                     "(--max_streams_per_user=",
                     max_per_user_, "); end one first"));
  }
  ++open;
  return Slot(this, std::string(user));
}

int StreamLimiter::Open(absl::string_view user) const {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(user);
  return it == open_.end() ? 0 : it->second;
}

void StreamLimiter::Release(const std::string& user) {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(user);
  if (it == open_.end()) return;
  if (--it->second <= 0) open_.erase(it);
}

}  // namespace jobset::scheduler
