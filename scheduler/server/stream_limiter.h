#ifndef JOBSET_SCHEDULER_SERVER_STREAM_LIMITER_H_
#define JOBSET_SCHEDULER_SERVER_STREAM_LIMITER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace jobset::scheduler {

// Caps the long-lived streams (JobSet watches, `logs -f`) one user holds
// open at once, so that a reader cannot hold thousands of server threads
// (each stream holds one for as long as it lasts). A stream takes a Slot
// after it is authorized and gives it back when the Slot is destroyed:
//
//   JOBSET_ASSIGN_OR_RETURN(StreamLimiter::Slot slot,
//                           streams->Acquire(caller.user.name));
//
// Thread-safe.
class StreamLimiter {
 public:
  // The limit jobsetd starts with (--max_streams_per_user).
  static constexpr int kDefaultMaxPerUser = 64;

  // At most `max_per_user` streams per user; 0 or less: no limit.
  explicit StreamLimiter(int max_per_user) : max_per_user_(max_per_user) {}

  StreamLimiter(const StreamLimiter&) = delete;
  StreamLimiter& operator=(const StreamLimiter&) = delete;

  // One stream of one user; gives it back when destroyed. Movable.
  class Slot {
   public:
    Slot(Slot&& other) noexcept
        : limiter_(other.limiter_), user_(std::move(other.user_)) {
      other.limiter_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot();

   private:
    friend class StreamLimiter;
    Slot(StreamLimiter* limiter, std::string user)
        : limiter_(limiter), user_(std::move(user)) {}
    StreamLimiter* limiter_;
    std::string user_;
  };

  // Takes a slot for `user`, or kResourceExhausted naming the user and the
  // limit when the user already holds max_per_user streams:
  //   user "alice" has 64 streams open (watches and logs -f), the limit
  //   (--max_streams_per_user=64); end one first
  absl::StatusOr<Slot> Acquire(absl::string_view user);

  // The streams `user` holds now.
  int Open(absl::string_view user) const;

 private:
  void Release(const std::string& user);

  const int max_per_user_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_STREAM_LIMITER_H_
