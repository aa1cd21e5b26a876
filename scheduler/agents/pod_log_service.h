#ifndef JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_
#define JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "proto/agent.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/records/attempt_pods.h"
#include "scheduler/server/stream_limiter.h"
#include "store/store.h"

namespace jobset::scheduler {

// Pods' output (jobsetctl logs): finds the pod in the store and reads its
// container's log from the pod's agent through the hub, chunk by chunk;
// with follow, polls until the pod has finished and everything is sent.
// With `attempt` (or `previous`), reads a pod of an earlier restart attempt
// of the pod's JobSet from the records the controller keeps of the last
// `attempt_history` attempts (scheduler/records/attempt_pods.h): the
// current pod's Job and completion index select it, or its own name does.
// Thread-safe (gRPC calls it from its threads).
class PodLogServiceImpl final : public api::PodLogService::Service {
 public:
  // Each call needs "get" on "pods/log" in the pod's namespace; a follow
  // also takes one of its user's `streams` (none: no limit). `clock` times
  // the polls while following. `attempt_history` is jobsetd's
  // --attempt_history (what the controller keeps).
  PodLogServiceImpl(store::Store* store, AgentHub* hub, const RequestAuth* auth,
                    StreamLimiter* streams = nullptr,
                    Clock* clock = RealClock::Get(),
                    int attempt_history = kDefaultAttemptHistory)
      : store_(store),
        hub_(hub),
        auth_(auth),
        streams_(streams),
        clock_(clock),
        attempt_history_(attempt_history) {}

  grpc::Status GetPodLogs(grpc::ServerContext* context,
                          const api::GetPodLogsRequest* request,
                          grpc::ServerWriter<api::PodLogs>* writer) override;

  // The pod an attempt's log is read from (see GetPodLogsRequest.attempt).
  struct EarlierPod {
    AttemptPod pod;
    int32_t attempt = 0;
    std::string jobset;  // "<namespace>/<name>"
    // Its ReplicatedJob's template's containers, init containers first
    // (empty when the ReplicatedJob is gone from the spec).
    std::vector<std::string> containers;
    std::string default_container;
  };

 private:
  // Sends `pod`'s log (it has ended: no follow).
  grpc::Status ReadEarlier(grpc::ServerContext* context, const Caller& caller,
                           const api::GetPodLogsRequest& request,
                           const EarlierPod& pod,
                           grpc::ServerWriter<api::PodLogs>* writer);

  store::Store* const store_;
  AgentHub* const hub_;
  const RequestAuth* const auth_;
  StreamLimiter* const streams_;
  Clock* const clock_;
  const int attempt_history_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_POD_LOG_SERVICE_H_
