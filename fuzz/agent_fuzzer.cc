// Scheduler-to-agent messages handed to an Agent over the FakeRuntime, as its
// stream would hand them, with a FakeClock and no stream (what the agent
// sends back goes nowhere). The input is a sequence of steps (steps.h):
//   op % 3 == 0  a SchedulerMessage (the payload)
//   op % 3 == 1  a pod exits: the payload's first byte picks it, the second
//                is its exit code
//   op % 3 == 2  time passes (first byte, seconds) and the agent ticks
// A pod uid "#<byte>" in a message names a pod the runtime has: the byte
// picks one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/fake_runtime.h"
#include "common/clock.h"
#include "fuzz/steps.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// Reaches the Agent's message handler and tick, which its threads call.
class AgentFuzzPeer {
 public:
  static void Handle(Agent& agent, const api::SchedulerMessage& msg) {
    agent.Handle(msg);
  }
  static void Tick(Agent& agent) { agent.Tick(); }
};

namespace {

std::vector<std::string> Uids(FakeRuntime& runtime) {
  std::vector<std::string> uids;
  for (const PodState& pod : runtime.List()) uids.push_back(pod.uid);
  return uids;
}

void ResolveAll(FakeRuntime& runtime, api::SchedulerMessage* msg) {
  const std::vector<std::string> known = Uids(runtime);
  if (known.empty()) return;
  switch (msg->kind_case()) {
    case api::SchedulerMessage::kWelcome:
      for (api::PodAssignment& a : *msg->mutable_welcome()->mutable_pods())
        fuzz::ResolvePodUid(known,
                            a.mutable_pod()->mutable_metadata()->mutable_uid());
      break;
    case api::SchedulerMessage::kRun:
      fuzz::ResolvePodUid(
          known,
          msg->mutable_run()->mutable_pod()->mutable_metadata()->mutable_uid());
      break;
    case api::SchedulerMessage::kStop:
      fuzz::ResolvePodUid(known, msg->mutable_stop()->mutable_pod_uid());
      break;
    case api::SchedulerMessage::kRelease:
      fuzz::ResolvePodUid(known, msg->mutable_release()->mutable_pod_uid());
      break;
    case api::SchedulerMessage::kLogRequest:
      fuzz::ResolvePodUid(known, msg->mutable_log_request()->mutable_pod_uid());
      break;
    default:
      break;
  }
}

}  // namespace
}  // namespace jobset::agent

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using jobset::agent::AgentFuzzPeer;
  jobset::FakeClock clock;
  jobset::agent::FakeRuntime runtime;
  jobset::agent::Agent::Options options;
  options.scheduler = "127.0.0.1:1";  // Never dialled: Start is not called.
  options.registration.set_name("node-a");
  options.registration.set_address("10.0.0.1");
  (*options.registration.mutable_capacity())["cpu"] = "8";
  (*options.registration.mutable_capacity())["nvidia.com/gpu"] = "4";
  options.lease = absl::Seconds(5);
  jobset::agent::Agent agent(options, &runtime, &clock);

  jobset::fuzz::StepReader steps(data, size);
  jobset::fuzz::Step step;
  while (steps.Next(&step)) {
    switch (step.op % 3) {
      case 0: {
        jobset::api::SchedulerMessage msg;
        if (!msg.ParseFromArray(step.payload.data(),
                                static_cast<int>(step.payload.size())))
          break;
        jobset::agent::ResolveAll(runtime, &msg);
        AgentFuzzPeer::Handle(agent, msg);
        break;
      }
      case 1: {
        const std::vector<std::string> uids = jobset::agent::Uids(runtime);
        if (uids.empty()) break;
        const uint8_t code =
            step.payload.size() > 1 ? static_cast<uint8_t>(step.payload[1]) : 0;
        runtime.Exit(uids[jobset::fuzz::FirstByte(step.payload) % uids.size()],
                     code);
        break;
      }
      case 2:
        clock.Advance(absl::Seconds(jobset::fuzz::FirstByte(step.payload)));
        AgentFuzzPeer::Tick(agent);
        break;
    }
  }
  return 0;
}
