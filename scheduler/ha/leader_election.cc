#include "scheduler/ha/leader_election.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace jobset::scheduler {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How often a follower looks at who leads, and a failed renewal is tried
// again.
constexpr absl::Duration kObserveInterval = absl::Milliseconds(250);
// How often the watchdog looks at the last renewal.
constexpr absl::Duration kWatchdogInterval = absl::Milliseconds(50);

SteadyClock::duration Chrono(absl::Duration d) {
  return std::chrono::duration_cast<SteadyClock::duration>(
      absl::ToChronoNanoseconds(d));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LeaderElection>> LeaderElection::Campaign(
    store::LeaseStore* store, const Options& options,
    std::function<void(const absl::Status&)> on_lost) {
  if (options.lease < absl::Seconds(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "leader election: lease ", absl::FormatDuration(options.lease),
        " is under 2s (etcd counts leases in whole seconds, and the leader "
        "stops a fifth of the lease before it ends)"));
  }
  if (options.address.empty()) {
    return absl::InvalidArgumentError(
        "leader election: address: the replica's API address is required");
  }
  if (options.prefix.empty() || options.prefix.back() != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "leader election: prefix \"", options.prefix, "\" must end in '/'"));
  }
  const SteadyClock::time_point sent = SteadyClock::now();
  JOBSET_ASSIGN_OR_RETURN(const int64_t lease,
                          store->GrantLease(options.lease));
  const std::string key =
      absl::StrCat(options.prefix, absl::Hex(lease, absl::kZeroPad16));
  absl::StatusOr<store::KeyValue> mine =
      store->CreateWithLease(key, options.address, lease);
  if (!mine.ok()) {
    (void)store->RevokeLease(lease);
    return mine.status();
  }
  auto election = absl::WrapUnique(new LeaderElection(
      store, options, std::move(on_lost), lease, mine->create_revision, sent));
  // Who leads is known before anyone asks (a follower's first redirect).
  if (absl::Status s = election->Observe(); !s.ok()) {
    JOBSET_LOG(WARNING) << "leader election: reading the candidates failed "
                           "(trying again): "
                        << s;
  }
  election->renewer_ = std::thread([e = election.get()] { e->RenewLoop(); });
  election->watchdog_ =
      std::thread([e = election.get()] { e->WatchdogLoop(); });
  return election;
}

LeaderElection::LeaderElection(store::LeaseStore* store, const Options& options,
                               std::function<void(const absl::Status&)> on_lost,
                               int64_t lease, int64_t created,
                               SteadyClock::time_point granted)
    : store_(store),
      options_(options),
      on_lost_(std::move(on_lost)),
      lease_(lease),
      key_(absl::StrCat(options.prefix, absl::Hex(lease, absl::kZeroPad16))),
      created_(created),
      margin_(options.lease / 5),
      renewed_sent_(granted) {}

LeaderElection::~LeaderElection() {
  bool lost;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    lost = lost_;
  }
  if (renewer_.joinable()) renewer_.join();
  if (watchdog_.joinable()) watchdog_.join();
  if (!lost) {
    // Resign: the key goes with the lease, and the next candidate leads.
    if (absl::Status s = store_->RevokeLease(lease_); !s.ok()) {
      JOBSET_LOG(WARNING) << "leader election: resigning failed (the lease "
                             "expires by itself): "
                          << s;
    }
  }
}

bool LeaderElection::AwaitLeadership(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return leading_ || lost_ || stopping_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&done), deadline);
  return leading_;
}

bool LeaderElection::leading() const {
  absl::MutexLock lock(&mu_);
  return leading_;
}

int64_t LeaderElection::epoch() const {
  absl::MutexLock lock(&mu_);
  return leading_ ? created_ : 0;
}

std::string LeaderElection::leader() const {
  absl::MutexLock lock(&mu_);
  return leader_;
}

void LeaderElection::RenewLoop() {
  SteadyClock::time_point next_renewal = SteadyClock::now();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), kObserveInterval) ||
          lost_) {
        return;
      }
    }
    if (SteadyClock::now() >= next_renewal) {
      const SteadyClock::time_point sent = SteadyClock::now();
      // A fifth of the lease per member asked: a renewal stuck in a member
      // while etcd elects its leader is given up and sent again.
      absl::StatusOr<absl::Duration> ttl =
          store_->KeepAliveLease(lease_, options_.lease / 5);
      if (ttl.ok()) {
        absl::MutexLock lock(&mu_);
        renewed_sent_ = std::max(renewed_sent_, sent);
        next_renewal = sent + Chrono(options_.lease / 3);
      } else if (ttl.status().code() == absl::StatusCode::kNotFound) {
        Lose(ttl.status());
        return;
      } else {
        JOBSET_LOG(WARNING) << "leader election: renewing the lease failed "
                               "(trying again): "
                            << ttl.status();
      }
    }
    if (!leading()) {
      if (absl::Status s = Observe(); !s.ok()) {
        if (s.code() == absl::StatusCode::kNotFound) {
          Lose(s);
          return;
        }
        JOBSET_LOG(WARNING) << "leader election: reading the candidates "
                               "failed (trying again): "
                            << s;
      }
    }
  }
}

absl::Status LeaderElection::Observe() {
  JOBSET_ASSIGN_OR_RETURN(store::ScanResult candidates,
                          store_->Scan(options_.prefix, "", 1000));
  const store::KeyValue* oldest = nullptr;
  bool mine = false;
  for (const store::KeyValue& kv : candidates.kvs) {
    if (kv.key == key_) mine = true;
    if (oldest == nullptr || kv.create_revision < oldest->create_revision)
      oldest = &kv;
  }
  if (!mine) {
    return absl::NotFoundError(
        absl::StrCat("leader election: this replica's key ", key_,
                     " is gone (its lease expired)"));
  }
  if (oldest->key != key_) {
    absl::MutexLock lock(&mu_);
    leader_ = oldest->value;
    return absl::OkStatus();
  }
  // Every commit from here on carries the fence.
  store_->SetFence(key_, created_,
                   [this](const absl::Status& why) { Lose(why); });
  absl::MutexLock lock(&mu_);
  if (lost_ || stopping_) return absl::OkStatus();
  leading_ = true;
  leader_ = options_.address;
  JOBSET_LOG(INFO) << "leader election: leading as " << options_.address
                   << " (epoch " << created_ << ", lease "
                   << absl::FormatDuration(options_.lease) << ")";
  return absl::OkStatus();
}

void LeaderElection::WatchdogLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_ && !lost_) {
    if (leading_ && SteadyClock::now() >= renewed_sent_ +
                                              Chrono(options_.lease) -
                                              Chrono(margin_)) {
      const auto since = SteadyClock::now() - renewed_sent_;
      mu_.Unlock();
      Lose(absl::UnavailableError(absl::StrCat(
          "leader election: the lease was last renewed ",
          absl::FormatDuration(absl::FromChrono(since)),
          " ago; etcd may expire it within ", absl::FormatDuration(margin_))));
      mu_.Lock();
      return;
    }
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), kWatchdogInterval);
  }
}

void LeaderElection::Lose(const absl::Status& why) {
  {
    absl::MutexLock lock(&mu_);
    if (lost_ || stopping_) return;
    lost_ = true;
    leading_ = false;
    leader_.clear();
  }
  JOBSET_LOG(ERROR) << "leader election: leadership lost: " << why;
  if (on_lost_) on_lost_(why);
}

}  // namespace jobset::scheduler
