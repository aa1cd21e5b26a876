#include "agent/host.h"

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(HostTest, ParsesKeyValuesAndNamesTheFlagOnError) {
  auto kv = ParseKeyValues("labels", "a=1,b=,c=x=y");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->at("a"), "1");
  EXPECT_EQ(kv->at("b"), "");
  EXPECT_EQ(kv->at("c"), "x=y");
  EXPECT_THAT(ParseKeyValues("capacity", "cpu").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--capacity: \"cpu\"")));
}

TEST(HostTest, ParsesTaints) {
  auto t = ParseTaints("gpu=true:NoSchedule,dedicated:PreferNoSchedule");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].key(), "gpu");
  EXPECT_EQ((*t)[0].value(), "true");
  EXPECT_EQ((*t)[0].effect(), "NoSchedule");
  EXPECT_EQ((*t)[1].key(), "dedicated");
  EXPECT_EQ((*t)[1].value(), "");
  EXPECT_THAT(ParseTaints("a=b:Never").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("effect \"Never\"")));
  EXPECT_THAT(ParseTaints("a=b").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HostTest, ParsesNvidiaSmiAndDescribesTheHost) {
  Accelerators a = ParseNvidiaSmi("NVIDIA H200\nNVIDIA H200\n\n");
  EXPECT_EQ(a.nvidia_gpus, 2);
  EXPECT_EQ(a.nvidia_model, "NVIDIA H200");
  api::NodeRegistration r;
  DescribeHost(a, {{"memory", "16Gi"}}, &r);
  EXPECT_EQ(r.capacity().at("nvidia.com/gpu"), "2");
  EXPECT_EQ(r.capacity().at("memory"), "16Gi");  // The flag wins.
  EXPECT_FALSE(r.capacity().at("cpu").empty());
  EXPECT_EQ(r.labels().at("nvidia.com/gpu.product"), "NVIDIA-H200");
  EXPECT_EQ(r.labels().at("nvidia.com/gpu.count"), "2");
}

TEST(HostTest, PicksTheLowestFreeDevices) {
  auto d = PickDevices(2, 4, {0, 2});
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(*d, ElementsAre(1, 3));
  EXPECT_THAT(PickDevices(3, 4, {0, 2}).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("2 of 4 are free")));
}

api::PodAssignment TpuPod(int index) {
  api::PodAssignment a;
  api::Pod* pod = a.mutable_pod();
  (*pod->mutable_metadata()->mutable_labels())["batch.kubernetes.io/job-name"] =
      "js-workers-0";
  (*pod->mutable_metadata()
        ->mutable_labels())["batch.kubernetes.io/job-completion-index"] =
      std::to_string(index);
  api::Container* c = pod->mutable_spec()->add_containers();
  (*c->mutable_resources()->mutable_limits())["google.com/tpu"] = "4";
  for (int i : {1, 0}) {
    api::HostEntry* e = a.add_hosts();
    e->add_names("js-workers-0-" + std::to_string(i));
    e->add_names("js-workers-0-" + std::to_string(i) + ".js");
  }
  api::HostEntry* other = a.add_hosts();
  other->add_names("js-leader-0-0");
  return a;
}

TEST(HostTest, AddsAcceleratorEnvironment) {
  api::PodAssignment a = TpuPod(1);
  AddAcceleratorEnv({2, 3}, &a);
  std::map<std::string, std::string> env;
  for (const api::EnvVar& v : a.pod().spec().containers(0).env())
    env[v.name()] = v.value();
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2,3");
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "2,3");
  EXPECT_EQ(env["TPU_WORKER_ID"], "1");
  EXPECT_EQ(env["TPU_WORKER_HOSTNAMES"], "js-workers-0-0,js-workers-0-1");
  EXPECT_EQ(ExtendedRequest(a.pod().spec(), "google.com/tpu"), 4);

  // The spec's own value wins.
  api::PodAssignment b = TpuPod(0);
  api::EnvVar* mine =
      b.mutable_pod()->mutable_spec()->mutable_containers(0)->add_env();
  mine->set_name("CUDA_VISIBLE_DEVICES");
  mine->set_value("7");
  AddAcceleratorEnv({0}, &b);
  int count = 0;
  for (const api::EnvVar& v : b.pod().spec().containers(0).env()) {
    if (v.name() == "CUDA_VISIBLE_DEVICES") {
      ++count;
      EXPECT_EQ(v.value(), "7");
    }
  }
  EXPECT_EQ(count, 1);
}

TEST(HostTest, PodDevicesAreTheAgentsChoiceOnly) {
  // jobsetd's (or anyone's) devices and the pod's NVIDIA_VISIBLE_DEVICES=all
  // choose nothing: the agent's pick replaces them.
  api::PodAssignment a = TpuPod(0);
  a.mutable_devices()->add_nvidia_gpus(5);
  api::EnvVar* all =
      a.mutable_pod()->mutable_spec()->mutable_containers(0)->add_env();
  all->set_name("NVIDIA_VISIBLE_DEVICES");
  all->set_value("all");
  SetPodDevices({1, 3}, &a);
  EXPECT_THAT(a.devices().nvidia_gpus(), ElementsAre(1, 3));
  EXPECT_TRUE(a.devices().tpus());

  api::PodAssignment b;
  b.mutable_pod()->mutable_spec()->add_containers()->set_name("main");
  b.mutable_devices()->add_nvidia_gpus(0);
  b.mutable_devices()->set_tpus(true);
  SetPodDevices({}, &b);
  EXPECT_THAT(b.devices().nvidia_gpus(), IsEmpty());
  EXPECT_FALSE(b.devices().tpus());
}

}  // namespace
}  // namespace jobset::agent
