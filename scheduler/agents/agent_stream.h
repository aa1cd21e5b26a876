#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_STREAM_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_STREAM_H_

#include <memory>

#include "grpcpp/grpcpp.h"
#include "grpcpp/support/server_callback.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/stream_pump.h"
#include "scheduler/auth/request_auth.h"

namespace jobset::scheduler {

// One agent's stream on gRPC's callback API: no thread of its own while it
// is idle. Reads are handled in their reactions (the Hello registers the
// node with the hub, every later message goes to AgentHub::OnMessage).
// Writes: the hub queues into the session (session.h), whose wake posts to
// `pump`, which builds the next message and starts its write; each finished
// write starts the next. One write at a time, in order.
//
// gRPC operations are started only from reactions or pump threads, never
// under a lock of ours or the hub's, and the stream is finished only with
// no write in flight. The hub closing the session (a newer stream of the
// node, the node removed, a full outbox, jobsetd stopping) finishes the
// stream through the pump; the agent's cancel or a failed read finishes it
// too. OnDone disconnects the session and deletes the reactor.
class AgentStream final
    : public grpc::ServerBidiReactor<api::AgentMessage, api::SchedulerMessage> {
 public:
  // Authenticates the node (a refusal finishes the stream at once) and
  // reads its Hello.
  AgentStream(grpc::CallbackServerContext* context, AgentHub* hub,
              const RequestAuth* auth, StreamPump* pump);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  class Outflow;

  // Handles the Hello in `in_`: an error to finish with, or OK.
  grpc::Status Hello();

  AgentHub* const hub_;
  std::string node_;  // the certificate's (empty in insecure mode)
  std::shared_ptr<Outflow> outflow_;
  std::shared_ptr<AgentHub::Session> session_;
  api::AgentMessage in_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_STREAM_H_
