#ifndef JOBSET_SCHEDULER_HA_LEADER_ELECTION_H_
#define JOBSET_SCHEDULER_HA_LEADER_ELECTION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/lease_store.h"

namespace jobset::scheduler {

// One leader among the jobsetd replicas that share an etcd, as etcd's own
// concurrency.Election does it, with a fence:
//
// - each replica grants a lease (Options::lease) and writes its key
//   "<prefix><lease id>" attached to it, its API address as the value; the
//   key with the lowest create_revision leads, and that revision is the
//   leader's epoch;
// - the leader fences every commit on its key's create_revision
//   (LeaseStore::SetFence): once its key is gone (its lease expired or was
//   revoked) no write of its lands, whatever its own clock says;
// - it renews the lease every lease / 3 and holds itself deposed once
//   `lease - margin` (margin: a fifth of the lease) has passed since it sent
//   the last renewal that etcd answered: etcd cannot have expired the lease
//   before then, so the old leader has stopped before any successor can be
//   elected. A watchdog thread enforces this even while a renewal hangs.
//
// Losing the lease, before or after winning, calls `on_lost` once (from an
// election thread); jobsetd exits there and its supervisor restarts it as a
// candidate (as kube-controller-manager does), so no thread goes on acting
// as leader. Thread-safe.
class LeaderElection {
 public:
  struct Options {
    // The lease's time to live: how long the cluster waits for a leader
    // that died without resigning (--leader_lease).
    absl::Duration lease = absl::Seconds(5);
    // This replica's API address ("HOST:PORT"), which followers redirect
    // clients to while it leads.
    std::string address;
    // Where the candidates' keys live, under the store's prefix.
    std::string prefix = "leader/";
  };

  // Grants the lease, writes this replica's key and starts the election's
  // threads. kInvalidArgument for bad options (naming the field), or the
  // store's error.
  static absl::StatusOr<std::unique_ptr<LeaderElection>> Campaign(
      store::LeaseStore* store, const Options& options,
      std::function<void(const absl::Status&)> on_lost);

  // Resigns (revokes the lease, so a successor need not wait for it to
  // expire) and stops the threads.
  ~LeaderElection();

  // Waits until this replica leads (true), `deadline` passes or the
  // election ended (false).
  bool AwaitLeadership(absl::Time deadline);

  bool leading() const;
  // This replica's epoch once it leads (the create_revision of its key), 0
  // before.
  int64_t epoch() const;
  // The address of the leader as last seen: this replica's own once it
  // leads; empty while none is known.
  std::string leader() const;

 private:
  LeaderElection(store::LeaseStore* store, const Options& options,
                 std::function<void(const absl::Status&)> on_lost,
                 int64_t lease, int64_t created,
                 std::chrono::steady_clock::time_point granted);

  // Renews the lease and, until it leads, watches who does.
  void RenewLoop();
  // Holds the leader deposed once its last answered renewal is too old.
  void WatchdogLoop();
  // Reads the candidates; takes the leadership when its key is the oldest.
  absl::Status Observe();
  void Lose(const absl::Status& why);

  store::LeaseStore* const store_;
  const Options options_;
  const std::function<void(const absl::Status&)> on_lost_;
  const int64_t lease_;
  const std::string key_;
  const int64_t created_;  // Its key's create_revision: the epoch, if it wins.
  const absl::Duration margin_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  std::string leader_ ABSL_GUARDED_BY(mu_);
  // When the last renewal etcd answered was sent, on the monotonic clock.
  std::chrono::steady_clock::time_point renewed_sent_ ABSL_GUARDED_BY(mu_);
  std::thread renewer_;
  std::thread watchdog_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_HA_LEADER_ELECTION_H_
