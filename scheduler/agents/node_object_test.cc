#include "scheduler/agents/node_object.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

api::NodeRecord Record() {
  api::NodeRecord record;
  api::NodeRegistration* r = record.mutable_registration();
  r->set_name("gpu-7");
  r->set_address("10.0.0.7");
  (*r->mutable_labels())["cloud.google.com/gke-nodepool"] = "slice-a";
  (*r->mutable_labels())["kubernetes.io/arch"] = "arm64";
  (*r->mutable_capacity())["cpu"] = "16";
  (*r->mutable_capacity())["nvidia.com/gpu"] = "8";
  r->add_accelerators("H100");
  r->add_accelerators("H100");
  r->set_agent_version("jobset-agent 0.1");
  record.mutable_creation_timestamp()->set_seconds(1'700'000'000);
  return record;
}

NodeLiveness Live() {
  NodeLiveness live;
  live.ready = true;
  live.connected = true;
  live.last_heartbeat = absl::FromUnixSeconds(1'700'000'100);
  live.last_transition = absl::FromUnixSeconds(1'700'000'010);
  live.allocated = {{"cpu", "4"}, {"nvidia.com/gpu", "2"}};
  live.pods = 2;
  return live;
}

std::string TaintText(const api::Taint& t) {
  return t.key() + "=" + t.value() + ":" + t.effect();
}

TEST(NodeObjectTest, AReadyNodeHasEveryField) {
  const api::Node node = ToNodeObject(Record(), Live());
  EXPECT_EQ(node.api_version(), "v1");
  EXPECT_EQ(node.kind(), "Node");
  EXPECT_EQ(node.metadata().name(), "gpu-7");
  EXPECT_THAT(
      node.metadata().labels(),
      UnorderedElementsAre(Pair("cloud.google.com/gke-nodepool", "slice-a"),
                           Pair("kubernetes.io/arch", "arm64"),
                           Pair("kubernetes.io/hostname", "gpu-7"),
                           Pair("kubernetes.io/os", "linux")));
  EXPECT_THAT(node.metadata().annotations(),
              UnorderedElementsAre(
                  Pair("jobsetd.x-k8s.io/connected", "true"),
                  Pair("jobsetd.x-k8s.io/pods", "2"),
                  Pair("jobsetd.x-k8s.io/allocated", "cpu=4,nvidia.com/gpu=2"),
                  Pair("jobsetd.x-k8s.io/accelerators", "H100,H100")));
  EXPECT_EQ(node.metadata().creation_timestamp().seconds(), 1'700'000'000);
  EXPECT_TRUE(node.metadata().namespace_().empty());

  EXPECT_FALSE(node.spec().unschedulable());
  EXPECT_THAT(node.spec().taints(), IsEmpty());

  EXPECT_THAT(
      node.status().capacity(),
      UnorderedElementsAre(Pair("cpu", "16"), Pair("nvidia.com/gpu", "8")));
  EXPECT_THAT(
      node.status().allocatable(),
      UnorderedElementsAre(Pair("cpu", "16"), Pair("nvidia.com/gpu", "8")));
  ASSERT_EQ(node.status().conditions_size(), 1);
  const api::NodeCondition& ready = node.status().conditions(0);
  EXPECT_EQ(ready.type(), "Ready");
  EXPECT_EQ(ready.status(), "True");
  EXPECT_EQ(ready.reason(), "KubeletReady");
  EXPECT_EQ(ready.message(), "jobset-agent is posting ready status");
  EXPECT_EQ(ready.last_heartbeat_time().seconds(), 1'700'000'100);
  EXPECT_EQ(ready.last_transition_time().seconds(), 1'700'000'010);
  ASSERT_EQ(node.status().addresses_size(), 2);
  EXPECT_EQ(node.status().addresses(0).type(), "InternalIP");
  EXPECT_EQ(node.status().addresses(0).address(), "10.0.0.7");
  EXPECT_EQ(node.status().addresses(1).type(), "Hostname");
  EXPECT_EQ(node.status().addresses(1).address(), "gpu-7");
  const api::NodeSystemInfo& info = node.status().node_info();
  EXPECT_EQ(info.kubelet_version(), "jobset-agent 0.1");
  EXPECT_EQ(info.operating_system(), "linux");
  EXPECT_EQ(info.architecture(), "arm64");
  EXPECT_TRUE(info.machine_id().empty());
}

TEST(NodeObjectTest, ACordonedNodeIsUnschedulableWithKubernetesTaint) {
  api::NodeRecord record = Record();
  record.set_cordoned(true);
  api::Taint* own = record.mutable_registration()->add_taints();
  own->set_key("dedicated");
  own->set_value("training");
  own->set_effect("NoSchedule");
  const api::Node node = ToNodeObject(record, Live());
  EXPECT_TRUE(node.spec().unschedulable());
  std::vector<std::string> taints;
  for (const api::Taint& t : node.spec().taints())
    taints.push_back(TaintText(t));
  EXPECT_THAT(taints,
              ElementsAre("dedicated=training:NoSchedule",
                          "node.kubernetes.io/unschedulable=:NoSchedule"));
  // Still Ready: cordoning stops placement, not the node.
  EXPECT_EQ(node.status().conditions(0).status(), "True");
}

TEST(NodeObjectTest, ATaintTheAgentSetIsNotRepeated) {
  api::NodeRecord record = Record();
  record.set_cordoned(true);
  api::Taint* own = record.mutable_registration()->add_taints();
  own->set_key("node.kubernetes.io/unschedulable");
  own->set_effect("NoSchedule");
  const api::Node node = ToNodeObject(record, Live());
  EXPECT_EQ(node.spec().taints_size(), 1);
}

TEST(NodeObjectTest, ALostNodeIsUnknownAndUnreachable) {
  NodeLiveness live = Live();
  live.ready = false;
  live.connected = false;
  live.pods = 0;
  live.allocated.clear();
  const api::Node node = ToNodeObject(Record(), live);
  const api::NodeCondition& ready = node.status().conditions(0);
  EXPECT_EQ(ready.status(), "Unknown");
  EXPECT_EQ(ready.reason(), "NodeStatusUnknown");
  EXPECT_EQ(ready.message(), "jobset-agent stopped posting node status.");
  EXPECT_EQ(ready.last_heartbeat_time().seconds(), 1'700'000'100);
  std::vector<std::string> taints;
  for (const api::Taint& t : node.spec().taints())
    taints.push_back(TaintText(t));
  EXPECT_THAT(taints, ElementsAre("node.kubernetes.io/unreachable=:NoSchedule",
                                  "node.kubernetes.io/unreachable=:NoExecute"));
  EXPECT_FALSE(node.spec().unschedulable());
  EXPECT_THAT(
      node.metadata().annotations(),
      UnorderedElementsAre(Pair("jobsetd.x-k8s.io/connected", "false"),
                           Pair("jobsetd.x-k8s.io/pods", "0"),
                           Pair("jobsetd.x-k8s.io/accelerators", "H100,H100")));
}

TEST(NodeObjectTest, ADisconnectedNodeStaysReadyUntilTheTimeout) {
  NodeLiveness live = Live();
  live.connected = false;
  const api::Node node = ToNodeObject(Record(), live);
  EXPECT_EQ(node.status().conditions(0).status(), "True");
  EXPECT_THAT(node.status().conditions(0).message(),
              ::testing::HasSubstr("not connected"));
  EXPECT_EQ(node.metadata().annotations().at("jobsetd.x-k8s.io/connected"),
            "false");
}

TEST(NodeObjectTest, WhatIsUnknownIsLeftOut) {
  api::NodeRecord record;
  record.mutable_registration()->set_name("bare");
  NodeLiveness live;
  live.ready = true;
  const api::Node node = ToNodeObject(record, live);
  EXPECT_FALSE(node.metadata().has_creation_timestamp());
  EXPECT_FALSE(node.status().conditions(0).has_last_heartbeat_time());
  EXPECT_FALSE(node.status().conditions(0).has_last_transition_time());
  // No address: only the hostname.
  ASSERT_EQ(node.status().addresses_size(), 1);
  EXPECT_EQ(node.status().addresses(0).type(), "Hostname");
  EXPECT_TRUE(node.status().node_info().architecture().empty());
  EXPECT_THAT(node.status().capacity(), IsEmpty());
  EXPECT_EQ(node.metadata().annotations().count("jobsetd.x-k8s.io/allocated"),
            0);
}

TEST(NodeObjectTest, TheAgentsHostnameLabelIsKept) {
  api::NodeRecord record = Record();
  (*record.mutable_registration()->mutable_labels())["kubernetes.io/hostname"] =
      "host-7.example";
  const api::Node node = ToNodeObject(record, Live());
  EXPECT_EQ(node.metadata().labels().at("kubernetes.io/hostname"),
            "host-7.example");
}

}  // namespace
}  // namespace jobset::scheduler
