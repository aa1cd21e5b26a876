#ifndef JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_
#define JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_

#include "common/clock.h"
#include "proto/agent.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/stream_limiter.h"
#include "store/store.h"

namespace jobset::scheduler {

// Pods' output (jobsetctl logs): finds the pod in the store and reads its
// container's log from the pod's agent through the hub, chunk by chunk;
// with follow, polls until the pod has finished and everything is sent.
// Thread-safe (gRPC calls it from its threads).
class PodLogServiceImpl final : public api::PodLogService::Service {
 public:
  // Each call needs "get" on "pods/log" in the pod's namespace; a follow
  // also takes one of its user's `streams` (none: no limit). `clock` times
  // the polls while following.
  PodLogServiceImpl(store::Store* store, AgentHub* hub, const RequestAuth* auth,
                    StreamLimiter* streams = nullptr,
                    Clock* clock = RealClock::Get())
      : store_(store),
        hub_(hub),
        auth_(auth),
        streams_(streams),
        clock_(clock) {}

  grpc::Status GetPodLogs(grpc::ServerContext* context,
                          const api::GetPodLogsRequest* request,
                          grpc::ServerWriter<api::PodLogs>* writer) override;

 private:
  store::Store* const store_;
  AgentHub* const hub_;
  const RequestAuth* const auth_;
  StreamLimiter* const streams_;
  Clock* const clock_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_
