#ifndef JOBSET_CLI_RETRY_H_
#define JOBSET_CLI_RETRY_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "grpcpp/support/status.h"

// How jobsetctl's Client repeats a call that found no leader (a failover:
// the leader killed, the next one not yet elected), as client-go does and
// as python/jobset/client.py does: again at once after a follower's
// redirect or at the next replica, and once every replica failed in a row,
// after a jittered back-off, until the call's --request-timeout.
namespace jobset::cli {

// How one failed attempt of a call ended.
enum class Failure {
  kFinal,      // Not a failover (or OK): not repeated.
  kRedirect,   // A follower named the leader: it did nothing.
  kNotSent,    // No connection, or a follower that knows no leader yet.
  kTls,        // The TLS handshake failed: a setup problem, not a failover.
  kMaybeSent,  // UNAVAILABLE once the request may have reached jobsetd.
};

// Classifies `status` (`redirected`: its trailers named a leader) by gRPC's
// and the follower's words (scheduler/ha/follower_server.cc).
Failure ClassifyFailure(const grpc::Status& status, bool redirected);

// Whether a request that may have reached jobsetd may be sent again.
enum class Repeat {
  kSafe,    // Reads, updates, applies, a named create (jobsetd answers a
            // repeat of the same JobSet "created: false").
  kUnsafe,  // Deletes, a generateName create, tokens, create-only objects.
};

// The waits between rounds of replicas: 100 ms doubling to 2 s, each drawn
// uniformly from [d/2, d] (jitter, so that the clients of a failed-over
// cluster do not come back in step). Thread-compatible.
class Backoff {
 public:
  static constexpr absl::Duration kInitial = absl::Milliseconds(100);
  static constexpr absl::Duration kMax = absl::Seconds(2);

  // `uniform` returns a number in [0, 1); the default draws from a
  // process-wide generator.
  explicit Backoff(std::function<double()> uniform = nullptr);

  // Returns the next wait.
  absl::Duration Next();

 private:
  std::function<double()> uniform_;
  absl::Duration next_ = kInitial;
};

// One call's attempts: its time budget (read on `clock`, which the back-off
// waits sleep on; gRPC's own deadlines are real time), and after each failed
// attempt whether and when to send it again. Says in the final error what
// it tried. Thread-compatible (one call's).
class Attempts {
 public:
  Attempts(Clock* clock, absl::Duration timeout, Repeat repeat,
           Backoff backoff = Backoff());

  // The time left of the budget (zero once spent).
  absl::Duration Remaining() const;
  // The real-time deadline for an attempt that may use the rest.
  absl::Time GrpcDeadline() const;

  // After an attempt to `address` failed with `status` (`failure` its
  // class; `at_once`: Replicas::After's answer; `replicas`: how many there
  // are): the wait before the next attempt (zero: at once), or nullopt when
  // the call ends with `status`. Does not wait.
  std::optional<absl::Duration> After(const grpc::Status& status,
                                      Failure failure, bool at_once,
                                      size_t replicas,
                                      const std::string& address);
  // After() and, when it says so, the wait on the clock: whether to send
  // the call again.
  bool AfterAndWait(const grpc::Status& status, Failure failure, bool at_once,
                    size_t replicas, const std::string& address);

  // Whether an attempt failed after the request may have reached jobsetd
  // and the call was sent again: an AlreadyExists (or "created: false")
  // answer may then be this call's own doing.
  bool repeated_after_maybe_sent() const { return repeated_maybe_sent_; }

  // What the error of the call, ended by `status` (`method`), should add:
  // " (replicas tried a,b: 7 attempts in 12.3s, the next past the 30s
  // timeout; before: UNAVAILABLE: ...)", or "" for one plain attempt.
  std::string Note(const grpc::Status& status, absl::string_view method,
                   size_t replicas) const;

 private:
  Clock* clock_;
  absl::Duration timeout_;
  Repeat repeat_;
  Backoff backoff_;
  absl::Time start_;
  absl::Time end_;
  int failed_ = 0;
  int tls_failures_ = 0;
  std::vector<std::string> tried_;    // In the order first tried.
  std::optional<grpc::Status> last_;  // The last failover failure.
  bool maybe_sent_ = false;           // An attempt may have reached it.
  bool repeated_maybe_sent_ = false;  // ... and the call went again.
  bool unsafe_ = false;               // Stopped: maybe sent, kUnsafe.
  bool out_of_time_ = false;          // Stopped: no time left to wait.
};

}  // namespace jobset::cli

#endif  // JOBSET_CLI_RETRY_H_
