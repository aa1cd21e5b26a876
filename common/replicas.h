#ifndef JOBSET_COMMON_REPLICAS_H_
#define JOBSET_COMMON_REPLICAS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

namespace jobset {

// The addresses of a jobsetd cluster's replicas, for a client (jobsetctl,
// jobset-agent) that must find the one that leads: it dials current(); after
// a call fails it says how (After), and current() is then the leader the
// answer named (a follower's redirect, common/leader_redirect.h), or the next
// address when the one dialled could not be reached. One address behaves as
// before: it is always current. Thread-safe.
class Replicas {
 public:
  // "HOST:PORT[,HOST:PORT...]"; kInvalidArgument naming `flag` and the bad
  // entry.
  static absl::StatusOr<Replicas> Parse(absl::string_view flag,
                                        absl::string_view list);

  Replicas(const Replicas& other);
  Replicas& operator=(const Replicas& other);

  std::string current() const;
  // Every address, as given ("a,b,c"), for messages.
  std::string all() const;
  size_t size() const { return addresses_.size(); }

  // Tells how a call to current() ended (`context` is its context): true
  // when the next call should go at once, false when it should back off
  // first. A redirect moves to the leader it names (at once); UNAVAILABLE or
  // DEADLINE_EXCEEDED moves to the next address (at once until every
  // address failed in a row, then after a backoff: one backoff per round,
  // not per address); anything else keeps current() (back off).
  bool After(const grpc::ClientContext& context, const grpc::Status& status);
  // Redirects are followed at once a few times in a row (size() + 1); past
  // that (replicas that disagree on who leads, for a moment) After answers
  // false so the caller backs off. Reached() says a call was answered by the
  // leader and starts both counts again.
  void Reached();
  // The same, given the leader the answer named (RedirectedLeader). A name
  // that is not HOST:PORT is not followed: the next address is tried.
  bool After(const grpc::Status& status, std::optional<std::string> leader);

  // At most this many addresses, each at most kMaxAddressLength bytes.
  static constexpr size_t kMaxAddresses = 16;
  static constexpr size_t kMaxAddressLength = 261;  // A DNS name and a port.

 private:
  explicit Replicas(std::vector<std::string> addresses)
      : addresses_(std::move(addresses)) {}

  // Where the list stands, copied whole with the list.
  struct State {
    size_t next = 0;         // The address tried after a failure.
    std::string current;     // Empty: addresses_[0].
    size_t redirects = 0;    // In a row, since Reached().
    size_t unreachable = 0;  // In a row, since a backoff or Reached().
  };

  std::vector<std::string> addresses_;
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset

#endif  // JOBSET_COMMON_REPLICAS_H_
