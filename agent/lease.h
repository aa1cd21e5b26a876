#ifndef JOBSET_AGENT_LEASE_H_
#define JOBSET_AGENT_LEASE_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/runtime.h"
#include "common/clock.h"

namespace jobset::agent {

// How long a pod gets to stop once the lease ran out (SIGTERM, then SIGKILL).
inline constexpr absl::Duration kLeaseGrace = absl::Seconds(1);

// The agent's lease (jobset-agent --lease): once jobsetd has not been heard
// from for that long, every pod is stopped (SIGTERM, then SIGKILL after
// kLeaseGrace), so that with lease + 1 s below jobsetd's node-lost timeout
// an old attempt never overlaps the new one. A runtime whose pods outlive
// the agent (the shim) enforces the lease itself too, from what Heard
// renews. A zero lease is off. Thread-safe.
class SchedulerLease {
 public:
  // Counts from the clock's time now; `runtime` and `clock` must outlive it.
  SchedulerLease(absl::Duration lease, Runtime* runtime, Clock* clock);

  absl::Duration lease() const { return lease_; }

  // Hands the lease to the runtime (Runtime::SetLease; zero removes it).
  absl::Status Install();
  // A stream to jobsetd opened: its first message renews the runtime's lease.
  void StreamOpened();
  // jobsetd was heard from at `now`; renews the runtime's lease at most
  // every 100 ms.
  void Heard(absl::Time now);
  // Once the lease has run out at `now` (and not since jobsetd was heard
  // from): stops every unfinished pod of `pods`. Returns whether it did.
  bool Enforce(absl::Time now, const std::vector<PodState>& pods);
  // jobsetd welcomed the agent: a lease that ran out is counted again.
  void Welcomed();

 private:
  const absl::Duration lease_;
  Runtime* const runtime_;

  absl::Mutex mu_;
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_);
  absl::Time renewed_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool fired_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_LEASE_H_
