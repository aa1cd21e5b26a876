#ifndef JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_
#define JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/stream_limiter.h"
#include "scheduler/server/stream_ticker.h"

namespace jobset::scheduler {

// How long a stream that must end (revoked, stopping, fallen out of the
// store's history) waits for its reader to take the write in flight before
// the call is cancelled: a reader that stopped reading is cut, not kept.
inline constexpr absl::Duration kStalledWrite = absl::Seconds(5);

// A stream refused before it started: finishes with `status` at once.
template <typename Event>
class RefusedStream final : public grpc::ServerWriteReactor<Event> {
 public:
  explicit RefusedStream(grpc::Status status) {
    this->Finish(std::move(status));
    absl::MutexLock lock(&mu_);
    finish_returned_ = true;
  }
  void OnDone() override {
    {
      // gRPC may run OnDone before Finish has returned: not deleted under it.
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&finish_returned_));
    }
    delete this;
  }

 private:
  absl::Mutex mu_;
  bool finish_returned_ ABSL_GUARDED_BY(mu_) = false;
};

// One watch stream (WatchJobSets, WatchKueueObjects) on gRPC's callback API:
// memory and no thread while it is idle. `W` is a JobSetApi::Watch or
// KueueApi::Watch: `absl::StatusOr<std::vector<Event>> Next(absl::Time)`,
// `int64_t revision()`, `const std::string& prefix()`.
//
// It takes what the watch has ready without waiting (Next(InfinitePast)),
// writes it one event at a time (one write in flight), and takes more as the
// last write completes; idle, it waits for the ticker (stream_ticker.h) to
// tick it after a commit. So one watch holds at most one batch (kWatchBatch
// events) as before, and a slow reader slows only itself: it falls behind
// in the store's history and, once the history no longer holds where it
// stands, ends with the watch's OUT_OF_RANGE. Every poll it checks the
// caller's credential (UNAUTHENTICATED) and `stopping` (OK). A stream that
// must end with a write in flight for kStalledWrite is cancelled.
//
// Whoever holds `busy_` (a pull, or a write until its OnWriteDone) alone
// touches `watch_`, `batch_` and `out_`. gRPC is never called under `mu_`
// (it may run a reaction inline), and Finish only with nothing in flight.
// Thread-safe; owned by a shared_ptr held by itself (until OnDone) and the
// ticker.
template <typename Event, typename W>
class WatchStream final
    : public grpc::ServerWriteReactor<Event>,
      public StreamTicker::Stream,
      public std::enable_shared_from_this<WatchStream<Event, W>> {
 public:
  WatchStream(grpc::CallbackServerContext* context, const RequestAuth* auth,
              Caller caller, std::optional<StreamLimiter::Slot> slot,
              const std::atomic<bool>* stopping, StreamTicker* ticker, W watch)
      : context_(context),
        auth_(auth),
        caller_(std::move(caller)),
        slot_(std::move(slot)),
        stopping_(stopping),
        ticker_(ticker),
        watch_(std::move(watch)),
        prefix_(watch_.prefix()),
        resume_revision_(watch_.revision()) {}

  // Registers with the ticker and starts writing what is ready.
  void Begin() {
    {
      absl::MutexLock lock(&mu_);
      self_ = this->shared_from_this();
    }
    ticker_->Add(this->shared_from_this());
    // The first pull too is the ticker's: this is one of gRPC's threads.
    ticker_->Request(this->shared_from_this());
  }

  void Tick(bool committed, bool poll) override {
    if (poll) Poll();
    if (committed || poll) Drive();
  }

  void OnWriteDone(bool ok) override {
    bool go_on;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      // Not ok: the client went away (as a failed Write: OK).
      if (!ok && !finish_.has_value()) finish_ = grpc::Status::OK;
      go_on = !finish_.has_value();
      if (!go_on) busy_ = false;
    }
    if (go_on) {
      Continue(/*may_pull=*/false);
    } else {
      MaybeFinish();
    }
  }

  void OnCancel() override {
    {
      absl::MutexLock lock(&mu_);
      if (!finish_.has_value()) finish_ = grpc::Status::CANCELLED;
    }
    MaybeFinish();
  }

  void OnDone() override {
    ticker_->Remove(this);
    std::shared_ptr<WatchStream> self;
    {
      absl::MutexLock lock(&mu_);
      // gRPC may run OnDone before Finish has returned: not freed under it.
      mu_.Await(absl::Condition(&finish_returned_));
      done_ = true;
      slot_.reset();  // The caller's stream is given back now.
      self = std::move(self_);
    }
    // `self` may be the last owner: nothing is touched after this.
  }

 private:
  // Starts taking and writing events unless someone does already.
  void Drive() {
    {
      absl::MutexLock lock(&mu_);
      if (busy_) {
        wanted_ = true;  // The holder looks again before it lets go.
        return;
      }
      if (finish_.has_value() || finished_) return;
      busy_ = true;
      wanted_ = false;
    }
    Continue(/*may_pull=*/true);
  }

  // The holder of busy_: writes the next event, taking more when the batch
  // is written (`may_pull`: on the ticker's thread; on gRPC's, whose threads
  // also serve the agents' streams, a pull may wait for etcd to echo this
  // replica's writes, so the next pull is asked of the ticker); lets busy_
  // go when nothing is ready.
  void Continue(bool may_pull) {
    while (true) {
      if (next_ < batch_.size()) {
        out_ = std::move(batch_[next_++]);
        {
          absl::MutexLock lock(&mu_);
          if (finish_.has_value()) {
            busy_ = false;
            break;
          }
          writing_ = true;
          write_started_ = ticker_->clock()->Now();
        }
        this->StartWrite(&out_);
        return;
      }
      batch_.clear();
      next_ = 0;
      if (!may_pull) {
        {
          absl::MutexLock lock(&mu_);
          busy_ = false;
          if (finish_.has_value()) break;
        }
        ticker_->Request(this->shared_from_this());
        return;
      }
      absl::StatusOr<std::vector<Event>> events =
          watch_.Next(absl::InfinitePast());
      absl::MutexLock lock(&mu_);
      resume_revision_ = watch_.revision();
      if (!events.ok() && !finish_.has_value()) {
        finish_ = ToGrpcStatus(events.status());
      }
      if (finish_.has_value()) {
        busy_ = false;
        break;
      }
      if (events->empty()) {
        if (wanted_) {
          wanted_ = false;
          continue;
        }
        busy_ = false;
        break;
      }
      batch_ = *std::move(events);
    }
    MaybeFinish();
  }

  // Every poll: ends the stream when the server stops (OK) or the caller's
  // credential no longer stands; checks a write in flight since the last
  // poll against the store's history; cancels a stalled stream.
  void Poll() {
    std::optional<grpc::Status> end;
    if (stopping_ != nullptr && stopping_->load()) {
      end = grpc::Status::OK;
    } else if (absl::Status valid = auth_->StillValid(caller_); !valid.ok()) {
      end = ToGrpcStatus(valid);
    }
    const absl::Time now = ticker_->clock()->Now();
    std::optional<int64_t> behind;
    bool cancel = false;
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      if (end.has_value() && !finish_.has_value()) finish_ = std::move(end);
      if (writing_ && now - write_started_ >= ticker_->poll()) {
        if (!finish_.has_value()) behind = resume_revision_;
        if (finish_.has_value() && now - write_started_ >= kStalledWrite) {
          cancel = cancelling_ = true;
        }
      }
    }
    if (behind.has_value()) {
      // A reader this slow may have fallen out of the history: then it
      // could never catch up, and ends as its next pull would.
      absl::Status held =
          ticker_->store()
              ->WaitForEvents(prefix_, *behind, absl::InfinitePast(), 1)
              .status();
      if (!held.ok()) {
        absl::MutexLock lock(&mu_);
        if (!finish_.has_value()) finish_ = ToGrpcStatus(held);
      }
    }
    if (cancel) {
      // Not finished (so not done): the context is alive.
      context_->TryCancel();
      absl::MutexLock lock(&mu_);
      cancelling_ = false;
    }
    MaybeFinish();
  }

  // Finishes once there is a status to finish with and nothing in flight.
  void MaybeFinish() {
    grpc::Status status;
    {
      absl::MutexLock lock(&mu_);
      if (!finish_.has_value() || busy_ || finished_ || cancelling_) return;
      finished_ = true;
      status = *finish_;
    }
    this->Finish(std::move(status));
    absl::MutexLock lock(&mu_);
    finish_returned_ = true;
  }

  grpc::CallbackServerContext* const context_;
  const RequestAuth* const auth_;
  const Caller caller_;
  std::optional<StreamLimiter::Slot> slot_ ABSL_GUARDED_BY(mu_);
  const std::atomic<bool>* const stopping_;
  StreamTicker* const ticker_;
  // The holder of busy_'s.
  W watch_;
  std::vector<Event> batch_;
  size_t next_ = 0;
  Event out_;
  const std::string prefix_;

  absl::Mutex mu_;
  std::shared_ptr<WatchStream> self_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time write_started_ ABSL_GUARDED_BY(mu_);
  int64_t resume_revision_ ABSL_GUARDED_BY(mu_);
  bool cancelling_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_returned_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> finish_ ABSL_GUARDED_BY(mu_);
};

// Serves one watch stream of an authorized `caller`: takes a slot of the
// caller's stream limit from `streams` (null: no limit) for as long as the
// stream lasts, starts the watch with `start` (returning absl::StatusOr<W>),
// then streams it as WatchStream does. A refusal finishes at once.
template <typename Event, typename Start>
grpc::ServerWriteReactor<Event>* ServeWatch(
    grpc::CallbackServerContext* context, const RequestAuth& auth,
    const Caller& caller, StreamLimiter* streams,
    const std::atomic<bool>& stopping, StreamTicker* ticker, Start start) {
  std::optional<StreamLimiter::Slot> slot;
  if (streams != nullptr) {
    absl::StatusOr<StreamLimiter::Slot> taken =
        streams->Acquire(caller.user.name);
    if (!taken.ok()) {
      return new RefusedStream<Event>(ToGrpcStatus(taken.status()));
    }
    slot.emplace(*std::move(taken));
  }
  auto watch = start();
  if (!watch.ok())
    return new RefusedStream<Event>(ToGrpcStatus(watch.status()));
  using W = typename decltype(watch)::value_type;
  auto stream = std::make_shared<WatchStream<Event, W>>(
      context, &auth, caller, std::move(slot), &stopping, ticker,
      *std::move(watch));
  stream->Begin();
  return stream.get();
}

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_
