// Agent-to-scheduler messages through the AgentHub into a ControllerCore over
// a MemoryStore, as jobsetd wires them, with a FakeClock. The input is a
// sequence of steps (steps.h):
//   op % 6 == 0  an AgentMessage (payload after its first byte, which picks
//                the node's session) on that node's stream
//   op % 6 == 1  a Hello (payload after its first byte): a node (re)connects
//   op % 6 == 2  the stream of node (first byte) ends
//   op % 6 == 3  time passes (first byte, seconds) and liveness is checked
//   op % 6 == 4  the JobSet is deleted through the API
//   op % 6 == 5  an admin edits node (first byte, bit 0) with a
//                LabelNodeRequest (bit 1 clear) or a TaintNodeRequest (set),
//                the payload after that byte (jobsetctl label|taint node);
//                bit 2 set keeps the request's own node name
// After every step what the hub told the controller is delivered, a pass
// runs (an error is what makes jobsetd exit, so it is a finding), and every
// stream's queue is drained. A pod uid "#<byte>" (in a report or a Hello)
// names a current pod: the byte picks one.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "fuzz/fixtures.h"
#include "fuzz/steps.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/controller/controller_core.h"
#include "scheduler/controller/node_sink.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::fuzz {
namespace {

using scheduler::AgentHub;
using scheduler::ControllerCore;

constexpr char kNamespace[] = "default";
constexpr char kJobSet[] = "train";
const char* const kNodes[] = {"node-a", "node-b"};

// Queues what the hub says, for the test thread to hand to the core between
// steps (the Controller does the same on its own thread). Thread-safe, as a
// NodeSink must be (this harness runs no liveness thread).
class QueueSink final : public scheduler::NodeSink {
 public:
  void SetNode(scheduler::NodeInfo node) override {
    Add([node = std::move(node)](ControllerCore& core) mutable {
      core.SetNode(std::move(node));
    });
  }
  void ReportPod(scheduler::PodReport report) override {
    Add([report = std::move(report)](ControllerCore& core) {
      core.OnPodReport(report);
    });
  }
  void LoseNode(std::string name, std::string reason,
                std::string message) override {
    Add([=](ControllerCore& core) { core.LoseNode(name, reason, message); });
  }
  // Hands everything queued to `core`.
  void Deliver(ControllerCore& core) {
    std::vector<std::function<void(ControllerCore&)>> calls;
    {
      absl::MutexLock lock(&mu_);
      calls.swap(calls_);
    }
    for (auto& call : calls) call(core);
  }

 private:
  void Add(std::function<void(ControllerCore&)> call) {
    absl::MutexLock lock(&mu_);
    calls_.push_back(std::move(call));
  }
  absl::Mutex mu_;
  std::vector<std::function<void(ControllerCore&)>> calls_ ABSL_GUARDED_BY(mu_);
};

api::Hello HelloFrom(const std::string& node) {
  api::Hello hello;
  hello.mutable_node()->set_name(node);
  hello.mutable_node()->set_address(node == kNodes[0] ? "10.0.0.1"
                                                      : "10.0.0.2");
  (*hello.mutable_node()->mutable_capacity())["cpu"] = "8";
  (*hello.mutable_node()->mutable_capacity())["memory"] = "32Gi";
  return hello;
}

void Trap(const absl::Status& status, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  __builtin_trap();
}

// A hub telling `sink`, with no liveness thread: steps call CheckLiveness.
std::unique_ptr<AgentHub> NewHub(store::Store* store, FakeClock* clock,
                                 QueueSink* sink) {
  absl::StatusOr<std::unique_ptr<AgentHub>> hub = AgentHub::Create(
      store, AgentHub::Options{.node_lost_timeout = absl::Seconds(10),
                               .heartbeat_interval = absl::Seconds(1),
                               .restart_grace = absl::ZeroDuration(),
                               .clock = clock,
                               .sink = sink,
                               .liveness_thread = false});
  if (!hub.ok()) Trap(hub.status(), "hub Create");
  return *std::move(hub);
}

class Harness {
 public:
  Harness()
      : hub_(NewHub(&store_, &clock_, &sink_)),
        core_(&store_, hub_.get(), &clock_,
              {.features = {.restart_job = true}}) {
    if (absl::Status s = core_.Load().status(); !s.ok()) Trap(s, "core Load");
    const api::JobSet js = TwoPodJobSet(kJobSet);
    const std::string key = store::keys::JobSetKey(kNamespace, kJobSet);
    absl::StatusOr<int64_t> rev =
        store_.Commit(store::Batch().Put(key, js.SerializeAsString()));
    if (!rev.ok()) Trap(rev.status(), "submit");
    Notify(key);
    for (const char* node : kNodes) Connect(HelloFrom(node));
    Settle();
  }

  ~Harness() {
    // JOBSET_FUZZ_VERBOSE=1 prints where an input left the JobSet (for
    // writing seeds).
    if (std::getenv("JOBSET_FUZZ_VERBOSE") != nullptr) {
      const api::JobSet* js = core_.FindJobSet(kNamespace, kJobSet);
      std::fprintf(
          stderr, "jobset: %s\n",
          js == nullptr ? "gone" : js->status().ShortDebugString().c_str());
      for (const api::Pod& pod : core_.Pods(kNamespace, kJobSet)) {
        std::fprintf(
            stderr, "pod %s on %s: %s\n", pod.metadata().name().c_str(),
            pod.spec().node_name().c_str(), pod.status().phase().c_str());
      }
    }
    hub_->CloseAll();
  }

  void Run(const Step& step) {
    const std::string node = kNodes[FirstByte(step.payload) % 2];
    const absl::string_view body =
        step.payload.empty() ? step.payload : step.payload.substr(1);
    switch (step.op % 6) {
      case 0: {
        api::AgentMessage msg;
        if (!msg.ParseFromArray(body.data(), static_cast<int>(body.size())))
          return;
        const std::vector<std::string> known = PodUids();
        if (msg.has_pod_update())
          ResolvePodUid(known, msg.mutable_pod_update()->mutable_pod_uid());
        if (msg.has_hello()) {
          for (api::PodReport& r : *msg.mutable_hello()->mutable_pods())
            ResolvePodUid(known, r.mutable_pod_uid());
        }
        auto it = sessions_.find(node);
        if (it == sessions_.end()) return;
        if (!hub_->OnMessage(it->second.get(), msg).ok()) {
          hub_->Disconnect(it->second.get());
          sessions_.erase(it);
        }
        break;
      }
      case 1: {
        api::Hello hello;
        if (!hello.ParseFromArray(body.data(), static_cast<int>(body.size())))
          return;
        const std::vector<std::string> known = PodUids();
        for (api::PodReport& r : *hello.mutable_pods())
          ResolvePodUid(known, r.mutable_pod_uid());
        if (hello.node().name().starts_with("#"))
          hello.mutable_node()->set_name(node);
        Connect(hello);
        break;
      }
      case 2:
        if (auto it = sessions_.find(node); it != sessions_.end()) {
          hub_->Disconnect(it->second.get());
          sessions_.erase(it);
        }
        break;
      case 3:
        clock_.Advance(absl::Seconds(FirstByte(step.payload)));
        hub_->CheckLiveness();
        break;
      case 4: {
        const std::string key = store::keys::JobSetKey(kNamespace, kJobSet);
        if (!store_.Commit(store::Batch().Delete(key)).ok()) return;
        Notify(key);
        break;
      }
      case 5: {
        // What the admin sets must hold whatever the node says after, and
        // no edit, however malformed, may break a pass.
        const uint8_t bits = FirstByte(step.payload);
        if (bits & 2) {
          api::TaintNodeRequest request;
          if (!request.ParseFromArray(body.data(),
                                      static_cast<int>(body.size())))
            return;
          if (!(bits & 4)) request.set_name(node);
          Expect(request.name(), hub_->TaintNode(request));
        } else {
          api::LabelNodeRequest request;
          if (!request.ParseFromArray(body.data(),
                                      static_cast<int>(body.size())))
            return;
          if (!(bits & 4)) request.set_name(node);
          Expect(request.name(), hub_->LabelNode(request));
        }
        break;
      }
    }
    Settle();
    CheckNodeRestriction();
  }

 private:
  // A node's labels under the restricted prefixes, and its taints (less
  // those jobsetd adds for a cordon or a loss), as `get nodes` shows them.
  static std::map<std::string, std::string> Restricted(const api::Node& n) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : n.metadata().labels()) {
      if (key.starts_with("node-restriction.kubernetes.io/") ||
          key.starts_with("jobsetd.io/")) {
        out[key] = value;
      }
    }
    return out;
  }
  static std::vector<std::string> Taints(const api::Node& n) {
    std::vector<std::string> out;
    for (const api::Taint& t : n.spec().taints()) {
      if (t.key() == "node.kubernetes.io/unschedulable" ||
          t.key() == "node.kubernetes.io/unreachable") {
        continue;
      }
      out.push_back(t.ShortDebugString());
    }
    return out;
  }

  // Remembers what an admin's edit of `name` left.
  void Expect(const std::string& name, const absl::StatusOr<api::Node>& node) {
    if (!node.ok()) return;
    admin_labels_[name] = Restricted(*node);
    admin_taints_[name] = Taints(*node);
  }

  // NodeRestriction: whatever the nodes said, their restricted labels and
  // taints are what the admin's last edit left (none, before any).
  void CheckNodeRestriction() {
    for (const char* name : kNodes) {
      absl::StatusOr<api::Node> node = hub_->GetNode(name);
      if (!node.ok()) continue;
      if (Restricted(*node) != admin_labels_[name]) {
        Trap(absl::InternalError(node->ShortDebugString()),
             "a node changed its restricted labels");
      }
      if (Taints(*node) != admin_taints_[name]) {
        Trap(absl::InternalError(node->ShortDebugString()),
             "a node changed its taints");
      }
    }
  }

  void Connect(const api::Hello& hello) {
    absl::StatusOr<std::shared_ptr<AgentHub::Session>> s =
        hub_->Connect(hello, [] {});
    if (s.ok()) sessions_[hello.node().name()] = *std::move(s);
  }

  void Notify(const std::string& key) {
    absl::StatusOr<std::optional<store::KeyValue>> kv = store_.Get(key);
    if (!kv.ok()) Trap(kv.status(), "get");
    store::Event e;
    if (kv->has_value()) {
      e.kv = **kv;
    } else {
      e.type = store::Event::Type::kDelete;
      e.kv.key = key;
    }
    core_.OnJobSetEvent(e);
  }

  // Delivers what the hub said, runs a pass, drains every stream.
  void Settle() {
    sink_.Deliver(core_);
    // The Controller survives a failed pass (it reloads), but over a
    // MemoryStore nothing should fail one: what the agents send is bounded
    // before it reaches a record, so a failure here is a bug.
    if (absl::Status s = core_.Pass(); !s.ok()) Trap(s, "Pass");
    for (auto& [name, session] : sessions_) {
      api::SchedulerMessage msg;
      while (session->Pop(&msg, absl::ZeroDuration())) {
      }
    }
  }

  std::vector<std::string> PodUids() const {
    std::vector<std::string> uids;
    for (const api::Pod& pod : core_.Pods(kNamespace, kJobSet))
      uids.push_back(pod.metadata().uid());
    return uids;
  }

  store::MemoryStore store_;
  FakeClock clock_;
  QueueSink sink_;
  std::unique_ptr<AgentHub> hub_;
  ControllerCore core_;
  std::map<std::string, std::shared_ptr<AgentHub::Session>> sessions_;
  std::map<std::string, std::map<std::string, std::string>> admin_labels_;
  std::map<std::string, std::vector<std::string>> admin_taints_;
};

}  // namespace
}  // namespace jobset::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  jobset::fuzz::Harness harness;
  jobset::fuzz::StepReader steps(data, size);
  jobset::fuzz::Step step;
  while (steps.Next(&step)) harness.Run(step);
  return 0;
}
