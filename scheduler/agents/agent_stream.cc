#include "scheduler/agents/agent_stream.h"

#include <atomic>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"

namespace jobset::scheduler {

// The stream's sending side, shared with the session's wake and cancel (and
// the pump tasks they post), so that none of them outlives what it uses:
// once the reactor is done, `stream_` is null and they do nothing.
class AgentStream::Outflow : public std::enable_shared_from_this<Outflow> {
 public:
  Outflow(AgentStream* stream, StreamPump* pump)
      : stream_(stream), pump_(pump) {}

  void SetSession(std::shared_ptr<AgentHub::Session> session) {
    absl::MutexLock lock(&mu_);
    session_ = std::move(session);
  }

  // Any thread: something was queued (or the session closed).
  void Wake() {
    if (scheduled_.exchange(true)) return;
    pump_->Post([self = shared_from_this()] {
      self->scheduled_ = false;
      self->Drive();
    });
  }

  // Any thread (the hub's, under its locks): finish with `status` once no
  // write is in flight.
  void Close(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!finish_.has_value()) finish_ = std::move(status);
    }
    pump_->Post([self = shared_from_this()] { self->MaybeFinish(); });
  }

  // A reaction: the same, at once.
  void Finish(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!finish_.has_value()) finish_ = std::move(status);
    }
    MaybeFinish();
  }

  // A pump thread or a write's reaction: starts the next write, if any and
  // none is in flight.
  void Drive() {
    std::shared_ptr<AgentHub::Session> session;
    AgentStream* stream;
    {
      absl::MutexLock lock(&mu_);
      if (writing_) {
        wanted_ = true;  // the writer looks again
        return;
      }
      if (stream_ == nullptr || finish_.has_value() || session_ == nullptr)
        return;
      writing_ = true;
      wanted_ = false;
      session = session_;
      // Not done while a write is in flight: it is finished only without.
      stream = stream_;
    }
    while (true) {
      // Only the holder of writing_ touches out_.
      const AgentSession::Next next = session->TryPop(&out_);
      if (next == AgentSession::Next::kMessage) {
        stream->StartWrite(&out_);
        return;
      }
      {
        absl::MutexLock lock(&mu_);
        if (next == AgentSession::Next::kEmpty && wanted_ &&
            !finish_.has_value()) {
          wanted_ = false;
          continue;
        }
        writing_ = false;
        if (next == AgentSession::Next::kClosed && !finish_.has_value())
          finish_ = grpc::Status::OK;
      }
      MaybeFinish();
      return;
    }
  }

  // OnWriteDone.
  void WriteDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok && !finish_.has_value()) finish_ = grpc::Status::CANCELLED;
    }
    if (ok) Drive();
    MaybeFinish();
  }

  // OnDone: nothing touches the reactor any more.
  void Done() {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
  }

 private:
  void MaybeFinish() {
    grpc::Status status;
    AgentStream* stream;
    {
      absl::MutexLock lock(&mu_);
      if (!finish_.has_value() || writing_ || finished_ || stream_ == nullptr)
        return;
      finished_ = true;
      status = *finish_;
      stream = stream_;
    }
    // The reactor may be done (and deleted) before this returns.
    stream->Finish(std::move(status));
  }

  absl::Mutex mu_;
  AgentStream* stream_ ABSL_GUARDED_BY(mu_);
  StreamPump* const pump_;
  std::shared_ptr<AgentHub::Session> session_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> finish_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> scheduled_{false};
  api::SchedulerMessage out_;
};

AgentStream::AgentStream(grpc::CallbackServerContext* context, AgentHub* hub,
                         const RequestAuth* auth, StreamPump* pump)
    : hub_(hub), outflow_(std::make_shared<Outflow>(this, pump)) {
  absl::StatusOr<Caller> caller =
      auth->AuthenticateNode(context, "the agent stream");
  if (!caller.ok()) {
    outflow_->Finish(ToGrpcStatus(caller.status()));
    return;
  }
  node_ = caller->node;
  StartRead(&in_);
}

grpc::Status AgentStream::Hello() {
  if (!in_.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message of a stream must be a hello");
  }
  // A node is its certificate, never the name it claims.
  if (!node_.empty() && in_.hello().node().name() != node_) {
    return grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        absl::StrCat("node \"", node_, "\" cannot register as node \"",
                     in_.hello().node().name(), "\""));
  }
  std::weak_ptr<Outflow> weak = outflow_;
  absl::StatusOr<std::shared_ptr<AgentHub::Session>> session =
      hub_->Connect(in_.hello(), [weak] {
        if (auto outflow = weak.lock()) {
          outflow->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                      "the stream was closed by jobsetd"));
        }
      });
  if (!session.ok()) return ToGrpcStatus(session.status());
  session_ = *std::move(session);
  outflow_->SetSession(session_);
  session_->SetWake([weak] {
    if (auto outflow = weak.lock()) outflow->Wake();
  });
  return grpc::Status::OK;
}

void AgentStream::OnReadDone(bool ok) {
  if (!ok) {  // the agent closed its side, or the call is over
    outflow_->Finish(grpc::Status::OK);
    return;
  }
  grpc::Status handled = grpc::Status::OK;
  if (session_ == nullptr) {
    handled = Hello();
  } else if (absl::Status s = hub_->OnMessage(session_.get(), in_); !s.ok()) {
    handled = ToGrpcStatus(s);
  }
  if (!handled.ok()) {
    outflow_->Finish(std::move(handled));
    return;
  }
  StartRead(&in_);
}

void AgentStream::OnWriteDone(bool ok) { outflow_->WriteDone(ok); }

void AgentStream::OnDone() {
  outflow_->Done();
  if (session_ != nullptr) hub_->Disconnect(session_.get());
  delete this;
}

}  // namespace jobset::scheduler
