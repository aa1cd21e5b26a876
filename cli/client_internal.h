// Client's templates that more than one of its .cc files instantiate: a
// unary call through a failover, and a server stream opened the same way.
// Included by client.cc and client_kueue.cc only.
#ifndef JOBSET_CLI_CLIENT_INTERNAL_H_
#define JOBSET_CLI_CLIENT_INTERNAL_H_

#include <algorithm>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/retry.h"
#include "common/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "grpcpp/support/sync_stream.h"

namespace jobset::cli {

template <typename Response, typename Call>
absl::StatusOr<Response> Client::Unary(absl::string_view method, Call call,
                                       Repeat repeat, bool* repeated) {
  if (!replicas_.ok()) return replicas_.status();
  // One deadline for the call, whichever replicas it takes to answer.
  Attempts attempts(clock_, timeout_, repeat);
  while (true) {
    std::shared_ptr<const Stubs> stubs = CurrentStubs();
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(attempts.GrpcDeadline()));
    Response response;
    grpc::Status status = call(*stubs, &context, &response);
    if (TryAgain(context, status, stubs->address, &attempts)) continue;
    if (repeated != nullptr) *repeated = attempts.repeated_after_maybe_sent();
    if (!status.ok()) {
      return Convert(status, method, stubs->address,
                     attempts.Note(status, method, replicas_->size()));
    }
    return response;
  }
}

template <typename Item, typename Open, typename OnItem>
grpc::Status Client::ReadStream(absl::string_view method, absl::Time deadline,
                                Open open, OnItem on_item, std::string* address,
                                std::string* note) {
  // Opening is retried within the call's timeout (or the stream's deadline,
  // when sooner); the stream itself runs to its deadline.
  // gRPC deadlines are real time: read through RealClock.
  Attempts attempts(clock_,
                    std::min(timeout_, deadline - RealClock::Get()->Now()),
                    Repeat::kSafe);
  while (true) {
    std::shared_ptr<const Stubs> stubs = CurrentStubs();
    *address = stubs->address;
    grpc::ClientContext context;
    if (deadline != absl::InfiniteFuture()) {
      context.set_deadline(absl::ToChronoTime(deadline));
    }
    std::unique_ptr<grpc::ClientReader<Item>> reader = open(*stubs, &context);
    Item item;
    bool delivered = false;
    while (reader->Read(&item)) {
      delivered = true;
      if (!on_item(item)) {
        context.TryCancel();
        (void)reader->Finish();
        return grpc::Status::OK;
      }
    }
    grpc::Status status = reader->Finish();
    // What was delivered is not delivered twice: only a stream that gave
    // nothing is opened again elsewhere.
    if (!delivered && TryAgain(context, status, stubs->address, &attempts)) {
      continue;
    }
    if (!delivered) *note = attempts.Note(status, method, replicas_->size());
    return status;
  }
}

template <typename Event, typename Open, typename OnEvent>
absl::Status Client::WatchStream(absl::string_view method, absl::Time deadline,
                                 Open open, OnEvent on_event) {
  if (!replicas_.ok()) return replicas_.status();
  std::string address;
  std::string note;
  const grpc::Status status =
      ReadStream<Event>(method, deadline, open, on_event, &address, &note);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError("watch deadline passed");
  }
  return Convert(status, method, address, note);
}

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CLIENT_INTERNAL_H_
