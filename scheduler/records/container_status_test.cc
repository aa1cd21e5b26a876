#include "scheduler/records/container_status.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/cluster.pb.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {
namespace {

std::string Json(const google::protobuf::Message& m) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &json).ok());
  return json;
}

void At(int64_t seconds, google::protobuf::Timestamp* t) {
  t->set_seconds(seconds);
}

// Statuses in the flat form agents report, as
// agent/runtime/container_lifecycle.cc ToContainerStatus writes them.
api::ContainerStatus Creating() {
  api::ContainerStatus c;
  c.set_name("main");
  c.set_flat_state("waiting");
  c.set_reason("ContainerCreating");
  return c;
}

api::ContainerStatus Running() {
  api::ContainerStatus c;
  c.set_name("main");
  c.set_flat_state("running");
  c.set_ready(true);
  At(100, c.mutable_started_at());
  return c;
}

api::ContainerStatus Terminated() {
  api::ContainerStatus c;
  c.set_name("main");
  c.set_flat_state("terminated");
  c.set_exit_code(137);
  c.set_signal(9);
  c.set_reason("OOMKilled");
  c.set_message("out of memory");
  At(100, c.mutable_started_at());
  At(160, c.mutable_finished_at());
  return c;
}

api::ContainerStatus Succeeded() {
  api::ContainerStatus c = Terminated();
  c.set_exit_code(0);
  c.set_signal(0);
  c.set_reason("Completed");
  c.clear_message();
  return c;
}

// Exited 1 and waits to run again (agent: Exited under OnFailure).
api::ContainerStatus BackingOff() {
  api::ContainerStatus c = Terminated();
  c.set_flat_state("waiting");
  c.set_exit_code(1);
  c.set_signal(0);
  c.set_restart_count(1);
  c.set_reason("CrashLoopBackOff");
  c.set_message(
      "back-off 10s restarting container (last exit: Error, exit code 1)");
  return c;
}

// Running again after that (agent: Started keeps the exit code).
api::ContainerStatus RunningAgain() {
  api::ContainerStatus c = Running();
  c.set_exit_code(1);
  c.set_restart_count(1);
  At(170, c.mutable_started_at());
  return c;
}

TEST(KubernetesContainerStatusTest, Table) {
  struct Case {
    const char* name;
    api::ContainerStatus reported;
    std::string json;
  };
  const Case cases[] = {
      {"waiting", Creating(),
       R"j({"name":"main","ready":false,"restartCount":0,)j"
       R"j("state":{"waiting":{"reason":"ContainerCreating"}},"lastState":{},)j"
       R"j("image":"train:1","imageID":"","started":false})j"},
      {"running", Running(),
       R"j({"name":"main","ready":true,"restartCount":0,)j"
       R"j("state":{"running":{"startedAt":"1970-01-01T00:01:40Z"}},)j"
       R"j("lastState":{},"image":"train:1","imageID":"","started":true})j"},
      {"terminated", Terminated(),
       R"j({"name":"main","ready":false,"restartCount":0,)j"
       R"j("state":{"terminated":{"exitCode":137,"signal":9,)j"
       R"j("reason":"OOMKilled","message":"out of memory",)j"
       R"j("startedAt":"1970-01-01T00:01:40Z",)j"
       R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
       R"j("lastState":{},"image":"train:1","imageID":"","started":false})j"},
      // exitCode 0 is printed, as Kubernetes prints it.
      {"succeeded", Succeeded(),
       R"j({"name":"main","ready":false,"restartCount":0,)j"
       R"j("state":{"terminated":{"exitCode":0,"reason":"Completed",)j"
       R"j("startedAt":"1970-01-01T00:01:40Z",)j"
       R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
       R"j("lastState":{},"image":"train:1","imageID":"","started":false})j"},
      {"backing off: lastState", BackingOff(),
       R"j({"name":"main","ready":false,"restartCount":1,)j"
       R"j("state":{"waiting":{"reason":"CrashLoopBackOff","message":)j"
       R"j("back-off 10s restarting container (last exit: Error, exit code 1)"}},)j"
       R"j("lastState":{"terminated":{"exitCode":1,"reason":"Error",)j"
       R"j("startedAt":"1970-01-01T00:01:40Z",)j"
       R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
       R"j("image":"train:1","imageID":"","started":false})j"},
      {"running again: lastState without times", RunningAgain(),
       R"j({"name":"main","ready":true,"restartCount":1,)j"
       R"j("state":{"running":{"startedAt":"1970-01-01T00:02:50Z"}},)j"
       R"j("lastState":{"terminated":{"exitCode":1,"reason":"Error"}},)j"
       R"j("image":"train:1","imageID":"","started":true})j"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Json(KubernetesContainerStatus(c.reported, "train:1")), c.json)
        << c.name;
  }
}

TEST(KubernetesContainerStatusTest, KeepsWhatTheRuntimeReports) {
  api::ContainerStatus reported = Terminated();
  reported.set_container_id("containerd://abc");
  reported.set_image_id("registry/train@sha256:01");
  const api::ContainerStatus s = KubernetesContainerStatus(reported, "train:1");
  EXPECT_EQ(s.container_id(), "containerd://abc");
  EXPECT_EQ(s.state().terminated().container_id(), "containerd://abc");
  EXPECT_EQ(s.image_id(), "registry/train@sha256:01");
}

TEST(KubernetesContainerStatusTest, ReplacesAReportedStructuredState) {
  api::ContainerStatus reported = Running();
  reported.mutable_state()->mutable_waiting()->set_reason("Bogus");
  reported.mutable_last_state()->mutable_running();
  const api::ContainerStatus s = KubernetesContainerStatus(reported, "");
  EXPECT_TRUE(s.state().has_running());
  EXPECT_EQ(s.last_state().state_case(), api::ContainerState::STATE_NOT_SET);
}

TEST(KubernetesContainerStatusTest, AWaitWithoutAFinishHasNoLastState) {
  // jobsetd holding a restarted pod for its Secret keeps only the count.
  api::ContainerStatus reported = Creating();
  reported.set_restart_count(2);
  reported.set_reason("CreateContainerConfigError");
  const api::ContainerStatus s = KubernetesContainerStatus(reported, "");
  EXPECT_EQ(s.last_state().state_case(), api::ContainerState::STATE_NOT_SET);
  EXPECT_EQ(s.restart_count(), 2);
}

// Issue 39: the API served the flat form; a pod as ListPods serves it
// carries Kubernetes' fields and JSON names only.
TEST(ClientPodTest, ServesContainerStatusesInKubernetesShape) {
  api::Job job;
  job.mutable_metadata()->set_name("train-workers-0");
  job.mutable_metadata()->set_namespace_("default");
  api::PodSpec* spec = job.mutable_spec()->mutable_template_()->mutable_spec();
  api::Container* init = spec->add_init_containers();
  init->set_name("fetch");
  init->set_image("busybox:1");
  for (const char* name : {"creating", "trainer", "oom", "flaky"}) {
    api::Container* c = spec->add_containers();
    c->set_name(name);
    c->set_image("train:1");
  }
  api::PodRecord record;
  record.set_name("train-workers-0-0-abcde");
  record.set_uid("abcde");
  record.set_completion_index(0);
  record.set_node_name("node-1");
  api::PodStatus* status = record.mutable_status();
  status->set_phase("Running");
  status->set_host_ip("10.0.0.1");
  api::ContainerStatus fetched = Succeeded();
  fetched.set_name("fetch");
  *status->add_init_container_statuses() = fetched;
  api::ContainerStatus creating = Creating();
  creating.set_name("creating");
  api::ContainerStatus trainer = Running();
  trainer.set_name("trainer");
  api::ContainerStatus oom = Terminated();
  oom.set_name("oom");
  api::ContainerStatus flaky = BackingOff();
  flaky.set_name("flaky");
  for (const api::ContainerStatus* c : {&creating, &trainer, &oom, &flaky})
    *status->add_container_statuses() = *c;

  const api::Pod pod = ClientPod(job, record);
  EXPECT_EQ(
      Json(pod.status()),
      R"j({"phase":"Running","hostIP":"10.0.0.1","podIP":"10.0.0.1",)j"
      R"j("containerStatuses":[)j"
      R"j({"name":"creating","ready":false,"restartCount":0,)j"
      R"j("state":{"waiting":{"reason":"ContainerCreating"}},"lastState":{},)j"
      R"j("image":"train:1","imageID":"","started":false},)j"
      R"j({"name":"trainer","ready":true,"restartCount":0,)j"
      R"j("state":{"running":{"startedAt":"1970-01-01T00:01:40Z"}},)j"
      R"j("lastState":{},"image":"train:1","imageID":"","started":true},)j"
      R"j({"name":"oom","ready":false,"restartCount":0,)j"
      R"j("state":{"terminated":{"exitCode":137,"signal":9,)j"
      R"j("reason":"OOMKilled","message":"out of memory",)j"
      R"j("startedAt":"1970-01-01T00:01:40Z",)j"
      R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
      R"j("lastState":{},"image":"train:1","imageID":"","started":false},)j"
      R"j({"name":"flaky","ready":false,"restartCount":1,)j"
      R"j("state":{"waiting":{"reason":"CrashLoopBackOff","message":)j"
      R"j("back-off 10s restarting container (last exit: Error, exit code 1)"}},)j"
      R"j("lastState":{"terminated":{"exitCode":1,"reason":"Error",)j"
      R"j("startedAt":"1970-01-01T00:01:40Z",)j"
      R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
      R"j("image":"train:1","imageID":"","started":false}],)j"
      R"j("initContainerStatuses":[)j"
      R"j({"name":"fetch","ready":false,"restartCount":0,)j"
      R"j("state":{"terminated":{"exitCode":0,"reason":"Completed",)j"
      R"j("startedAt":"1970-01-01T00:01:40Z",)j"
      R"j("finishedAt":"1970-01-01T00:02:40Z"}},)j"
      R"j("lastState":{},"image":"busybox:1","imageID":"","started":false}],)j"
      R"j("hostIPs":[{"ip":"10.0.0.1"}],"podIPs":[{"ip":"10.0.0.1"}]})j");
  // What the controller and agents read stays flat: ExpandPod is unchanged.
  EXPECT_EQ(ExpandPod(job, record).status().container_statuses(1).flat_state(),
            "running");
}

}  // namespace
}  // namespace jobset::scheduler
