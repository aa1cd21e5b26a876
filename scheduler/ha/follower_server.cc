#include "scheduler/ha/follower_server.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/leader_redirect.h"

namespace jobset::scheduler {
namespace {

// One call, from its arrival to its answer.
struct Call {
  explicit Call() : stream(&context) {}
  grpc::GenericServerContext context;
  grpc::GenericServerAsyncReaderWriter stream;
  bool answered = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FollowerServer>> FollowerServer::Start(
    Options options) {
  auto server = absl::WrapUnique(new FollowerServer(std::move(options)));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(server->options_.listen,
                           server->options_.credentials, &port);
  // As the leader's server: never share the port with another process.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterAsyncGenericService(&server->service_);
  server->queue_ = builder.AddCompletionQueue();
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", server->options_.listen,
                     " (is the address valid and the port free?)"));
  }
  const std::string& listen = server->options_.listen;
  server->address_ =
      absl::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

FollowerServer::~FollowerServer() {
  if (server_ != nullptr) {
    {
      // gRPC aborts on a call requested after its queue is shut down: no
      // request starts once this is set.
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    server_->Shutdown(absl::ToChronoTime(RealDeadline(absl::ZeroDuration())));
    queue_->Shutdown();
  }
  if (thread_.joinable()) thread_.join();
}

void FollowerServer::RequestNext() {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  auto* next = new Call();
  service_.RequestCall(&next->context, &next->stream, queue_.get(),
                       queue_.get(), next);
}

void FollowerServer::Serve() {
  RequestNext();
  void* tag = nullptr;
  bool ok = false;
  while (queue_->Next(&tag, &ok)) {
    auto* call = static_cast<Call*>(tag);
    if (call->answered || !ok) {
      // Answered (or never started, at shutdown): done with it.
      delete call;
      continue;
    }
    // A new call: take the next one, and answer this.
    RequestNext();
    const std::string leader = options_.leader ? options_.leader() : "";
    if (!leader.empty())
      call->context.AddTrailingMetadata(kLeaderMetadataKey, leader);
    call->answered = true;
    call->stream.Finish(
        grpc::Status(grpc::StatusCode::UNAVAILABLE,
                     leader.empty()
                         ? "jobsetd: this replica is a follower and no "
                           "leader is elected yet; try again shortly"
                         : absl::StrCat("jobsetd: this replica is a follower; "
                                        "the leader is at ",
                                        leader)),
        call);
  }
}

}  // namespace jobset::scheduler
