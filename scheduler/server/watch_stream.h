#ifndef JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_
#define JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_

#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/grpc_status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/sync_stream.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/stream_limiter.h"

namespace jobset::scheduler {

// How often a watch looks up from waiting to notice cancellation, shutdown
// or a credential that no longer stands.
inline constexpr absl::Duration kWatchPoll = absl::Milliseconds(200);

// Serves one watch stream of an authorized `caller` (WatchJobSets,
// WatchKueueObjects): takes a slot of the caller's stream limit from
// `streams` (null: no limit) for as long as the stream lasts, starts the
// watch with `start` (returning absl::StatusOr<W>, where W has
// `absl::StatusOr<std::vector<Event>> Next(absl::Time deadline)`), then
// writes what it returns until the client goes or `stopping` is set (OK),
// the caller's token or certificate no longer stands (UNAUTHENTICATED,
// within a poll), or the watch fails (its status).
template <typename Event, typename Start>
grpc::Status ServeWatch(grpc::ServerContext* context, const RequestAuth& auth,
                        const Caller& caller, StreamLimiter* streams,
                        const std::atomic<bool>& stopping, Start start,
                        grpc::ServerWriter<Event>* writer) {
  // Per user, a bounded number of streams at once (each holds a thread).
  std::optional<StreamLimiter::Slot> slot;
  if (streams != nullptr) {
    absl::StatusOr<StreamLimiter::Slot> taken =
        streams->Acquire(caller.user.name);
    if (!taken.ok()) return ToGrpcStatus(taken.status());
    slot.emplace(*std::move(taken));
  }
  auto watch = start();
  if (!watch.ok()) return ToGrpcStatus(watch.status());
  while (!context->IsCancelled() && !stopping) {
    // A deleted or expired token (or node) ends the watch within a poll.
    if (absl::Status valid = auth.StillValid(caller); !valid.ok()) {
      return ToGrpcStatus(valid);
    }
    absl::StatusOr<std::vector<Event>> events =
        watch->Next(RealDeadline(kWatchPoll));
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const Event& event : *events) {
      if (!writer->Write(event)) return grpc::Status::OK;  // Client went away.
    }
  }
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_WATCH_STREAM_H_
