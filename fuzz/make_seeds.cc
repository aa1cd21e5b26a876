// Writes the seed inputs of the fuzz targets that take serialized messages:
//   bazel run //fuzz:make_seeds -- "$PWD/fuzz/corpus"
// validation_fuzzer: every upstream example manifest (api/testdata/upstream,
// read from the workspace) as a serialized JobSet, defaulted and not;
// records_fuzzer: what a ControllerCore stores for a placed JobSet, with a
// node; agent_hub_fuzzer and agent_fuzzer: short conversations. The output
// is deterministic: rerunning it rewrites the same files.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "api/defaults.h"
#include "api/manifest.h"
#include "common/clock.h"
#include "fuzz/fixtures.h"
#include "fuzz/steps.h"
#include "proto/agent.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/controller_core.h"
#include "store/keys.h"
#include "store/memory_store.h"
#include "store/scan.h"

namespace jobset::fuzz {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& dir, const std::string& name,
           const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

void ValidationSeeds(const fs::path& manifests, const fs::path& out) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(manifests)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int written = 0;
  for (const fs::path& file : files) {
    auto objects = api::LoadManifest(Read(file));
    if (!objects.ok() || objects->empty()) continue;
    api::JobSet js = (*objects)[0].jobset;
    // Half as read, half defaulted, so that both halves of the rules run.
    if (written % 2 == 1) api::SetJobSetDefaults(&js);
    Write(out, file.stem().string() + ".pb", js.SerializeAsString());
    ++written;
  }
}

// records_fuzzer's op and first byte for a key its KeyFor makes.
bool RecordStep(const std::string& key, uint8_t* op, uint8_t* pick) {
  std::vector<std::string> parts = absl::StrSplit(key, '/');
  const uint8_t jobset = parts.size() > 2 && parts[2] == "b" ? 1 : 0;
  const uint8_t job = absl::EndsWith(key, "-1") ? 2 : 0;
  if (parts[0] == "jobsets")
    *op = 0, *pick = jobset;
  else if (parts[0] == "jobs")
    *op = 1, *pick = jobset | job;
  else if (parts[0] == "pods")
    *op = 2, *pick = jobset | job;
  else if (parts[0] == "nodes")
    *op = 3, *pick = 0;
  else if (parts[0] == "events")
    *op = 4, *pick = jobset;
  else
    return false;
  return true;
}

void RecordSeeds(const fs::path& out) {
  store::MemoryStore store;
  FakeClock clock;
  scheduler::NoAgentFleet fleet;
  scheduler::ControllerCore core(&store, &fleet, &clock,
                                 {.features = {.restart_job = true}});
  (void)core.Load();
  scheduler::NodeInfo node;
  node.name = "node-a";
  node.address = "10.0.0.1";
  node.allocatable.cpu_millis = 16'000;
  node.allocatable.memory_bytes = int64_t{64} << 30;
  core.SetNode(node);
  const api::JobSet js = TwoPodJobSet("a");
  const std::string key = store::keys::JobSetKey("default", "a");
  (void)store.Commit(store::Batch().Put(key, js.SerializeAsString()));
  store::Event event;
  event.kv = **store.Get(key);
  core.OnJobSetEvent(event);
  (void)core.Pass();
  api::NodeRecord stored_node;
  stored_node.mutable_registration()->set_name("node-a");
  stored_node.mutable_registration()->set_address("10.0.0.1");
  (*stored_node.mutable_registration()->mutable_capacity())["cpu"] = "16";
  std::string all;
  std::string pods_only;
  (void)store::ScanAll(store, "", [&](const store::KeyValue& kv) {
    uint8_t op = 0, pick = 0;
    if (RecordStep(kv.key, &op, &pick)) {
      const std::string payload = std::string(1, char(pick)) + kv.value;
      AppendStep(op, payload, &all);
      if (op == 2) AppendStep(op, payload, &pods_only);
    }
    return absl::OkStatus();
  });
  AppendStep(3, std::string(1, '\0') + stored_node.SerializeAsString(), &all);
  Write(out, "placed-jobset", all);
  Write(out, "pods-only", pods_only);
}

api::AgentMessage Report(const std::string& uid, const std::string& phase,
                         int exit_code) {
  api::AgentMessage msg;
  msg.mutable_pod_update()->set_pod_uid(uid);
  api::PodStatus* status = msg.mutable_pod_update()->mutable_status();
  status->set_phase(phase);
  api::ContainerStatus* c = status->add_container_statuses();
  c->set_name("main");
  c->set_flat_state(phase == "Running" ? "running" : "terminated");
  c->set_exit_code(exit_code);
  c->set_ready(phase == "Running");
  return msg;
}

// A hub step of AgentMessage `msg` from node `node` (0 or 1).
void HubMessage(int node, const api::AgentMessage& msg, std::string* out) {
  AppendStep(0, std::string(1, char(node)) + msg.SerializeAsString(), out);
}

void HubSeeds(const fs::path& out) {
  {  // Both pods (placed on node-a) run, then succeed.
    std::string s;
    for (char pod = 0; pod < 2; ++pod) {
      HubMessage(0, Report(std::string("#") + pod, "Running", 0), &s);
    }
    api::AgentMessage hb;
    hb.mutable_heartbeat()->set_seq(1);
    HubMessage(0, hb, &s);
    for (char pod = 0; pod < 2; ++pod) {
      HubMessage(0, Report(std::string("#") + pod, "Succeeded", 0), &s);
    }
    Write(out, "run-and-succeed", s);
  }
  {  // A pod fails: the JobSet restarts.
    std::string s;
    HubMessage(0, Report("#\x01", "Failed", 3), &s);
    Write(out, "fail-and-restart", s);
  }
  {  // A node goes silent and is lost; it comes back with its pods.
    std::string s;
    AppendStep(2, std::string(1, '\0'), &s);
    AppendStep(3, std::string(1, char(30)), &s);
    api::Hello hello;
    hello.mutable_node()->set_name("#");
    hello.mutable_node()->set_address("10.0.0.1");
    (*hello.mutable_node()->mutable_capacity())["cpu"] = "8";
    (*hello.mutable_node()->mutable_labels())["slice"] = "a";
    api::Taint* taint = hello.mutable_node()->add_taints();
    taint->set_key("dedicated");
    taint->set_value("gpu");
    taint->set_effect("NoSchedule");
    *hello.add_pods() = Report("#", "Running", 0).pod_update();
    AppendStep(1, std::string(1, '\0') + hello.SerializeAsString(), &s);
    Write(out, "lost-and-back", s);
  }
  {  // A report for no pod, a log chunk, then the JobSet is deleted.
    std::string s;
    HubMessage(1, Report("not-a-pod", "Running", 0), &s);
    api::AgentMessage chunk;
    chunk.mutable_log_chunk()->set_request_id(1);
    chunk.mutable_log_chunk()->set_data("hello\n");
    HubMessage(1, chunk, &s);
    AppendStep(4, "", &s);
    HubMessage(0, Report("#", "Succeeded", 0), &s);
    Write(out, "stray-and-delete", s);
  }
  {  // NodeRestriction: an admin labels node-a and taints node-b; node-b
     // says hello again without the taint, claiming the label, restricted
     // labels and too many GPUs, then with sane ones; the admin removes.
    std::string s;
    api::LabelNodeRequest label;
    (*label.mutable_labels())["jobsetd.io/pool"] = "secure";
    AppendStep(5, std::string(1, '\0') + label.SerializeAsString(), &s);
    api::TaintNodeRequest taint;
    api::Taint* t = taint.add_add();
    t->set_key("dedicated");
    t->set_value("team-a");
    t->set_effect("NoSchedule");
    AppendStep(5, std::string(1, '\3') + taint.SerializeAsString(), &s);
    api::Hello hello;
    hello.mutable_node()->set_name("#");
    hello.mutable_node()->set_address("10.0.0.2");
    (*hello.mutable_node()->mutable_capacity())["cpu"] = "8";
    (*hello.mutable_node()->mutable_capacity())["nvidia.com/gpu"] = "1000";
    (*hello.mutable_node()->mutable_labels())["jobsetd.io/pool"] = "secure";
    (*hello.mutable_node()
          ->mutable_labels())["node-restriction.kubernetes.io/x"] = "y";
    AppendStep(1, std::string(1, '\1') + hello.SerializeAsString(), &s);
    (*hello.mutable_node()->mutable_capacity())["nvidia.com/gpu"] = "4";
    AppendStep(1, std::string(1, '\1') + hello.SerializeAsString(), &s);
    label.clear_labels();
    label.add_remove("jobsetd.io/pool");
    AppendStep(5, std::string(1, '\0') + label.SerializeAsString(), &s);
    taint.clear_add();
    taint.add_remove()->set_key("dedicated");
    AppendStep(5, std::string(1, '\3') + taint.SerializeAsString(), &s);
    Write(out, "admin-labels-and-taints", s);
  }
}

api::PodAssignment Assignment(const std::string& uid, int index) {
  api::PodAssignment a;
  api::Pod* pod = a.mutable_pod();
  pod->mutable_metadata()->set_name(absl::StrCat("train-workers-0-", index));
  pod->mutable_metadata()->set_namespace_("default");
  pod->mutable_metadata()->set_uid(uid);
  pod->mutable_spec()->set_node_name("node-a");
  pod->mutable_spec()->set_hostname(absl::StrCat("train-workers-0-", index));
  pod->mutable_spec()->set_subdomain("train");
  api::Container* c = pod->mutable_spec()->add_containers();
  c->set_name("main");
  c->set_image("busybox");
  c->add_command("sleep");
  c->add_args("10");
  (*c->mutable_resources()->mutable_requests())["cpu"] = "1";
  (*c->mutable_resources()->mutable_limits())["nvidia.com/gpu"] = "1";
  api::HostEntry* host = a.add_hosts();
  host->set_address("10.0.0.1");
  host->add_names(absl::StrCat("train-workers-0-", index));
  host->add_names(absl::StrCat("train-workers-0-", index, ".train"));
  return a;
}

void AgentMessageStep(const api::SchedulerMessage& msg, std::string* out) {
  AppendStep(0, msg.SerializeAsString(), out);
}

void AgentSeeds(const fs::path& out) {
  {  // Welcomed with two pods; one exits, is released; ticks.
    std::string s;
    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
    *welcome.mutable_welcome()->add_pods() =
        Assignment("0123456789abcdef0123456789abcdef", 0);
    *welcome.mutable_welcome()->add_pods() =
        Assignment("fedcba9876543210fedcba9876543210", 1);
    AgentMessageStep(welcome, &s);
    AppendStep(2, std::string(1, char(1)), &s);
    AppendStep(1, std::string("\0\x01", 2), &s);
    AppendStep(2, std::string(1, char(1)), &s);
    api::SchedulerMessage release;
    release.mutable_release()->set_pod_uid("#");
    AgentMessageStep(release, &s);
    Write(out, "welcome-exit-release", s);
  }
  {  // Run, a host table update, stop, a log request, a heartbeat ack.
    std::string s;
    api::SchedulerMessage run;
    *run.mutable_run() = Assignment("00112233445566778899aabbccddeeff", 0);
    AgentMessageStep(run, &s);
    run.mutable_run()->mutable_pod()->mutable_metadata()->set_uid("#");
    run.mutable_run()->add_hosts()->set_address("10.0.0.2");
    AgentMessageStep(run, &s);
    AppendStep(2, std::string(1, char(2)), &s);
    api::SchedulerMessage log;
    log.mutable_log_request()->set_request_id(7);
    log.mutable_log_request()->set_pod_uid("#");
    log.mutable_log_request()->set_container("main");
    log.mutable_log_request()->set_offset(-100);
    log.mutable_log_request()->set_max_bytes(4096);
    AgentMessageStep(log, &s);
    api::SchedulerMessage stop;
    stop.mutable_stop()->set_pod_uid("#");
    AgentMessageStep(stop, &s);
    api::SchedulerMessage ack;
    ack.mutable_heartbeat_ack()->set_seq(1);
    AgentMessageStep(ack, &s);
    AppendStep(2, std::string(1, char(10)), &s);
    Write(out, "run-stop-log", s);
  }
}

}  // namespace
}  // namespace jobset::fuzz

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (argc != 2 || workspace == nullptr) {
    std::fprintf(stderr,
                 "usage: bazel run //fuzz:make_seeds -- <corpus dir>\n");
    return 2;
  }
  const fs::path out(argv[1]);
  jobset::fuzz::ValidationSeeds(fs::path(workspace) / "api/testdata/upstream",
                                out / "validation_fuzzer");
  jobset::fuzz::RecordSeeds(out / "records_fuzzer");
  jobset::fuzz::HubSeeds(out / "agent_hub_fuzzer");
  jobset::fuzz::AgentSeeds(out / "agent_fuzzer");
  return 0;
}
