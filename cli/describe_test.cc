#include "cli/describe.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

api::Pod PendingPod(const std::string& name, const std::string& message) {
  api::Pod pod;
  pod.mutable_metadata()->set_name(name);
  (*pod.mutable_metadata()
        ->mutable_labels())["jobset.sigs.k8s.io/replicatedjob-name"] =
      "workers";
  pod.mutable_status()->set_phase("Pending");
  api::Condition* c = pod.mutable_status()->add_conditions();
  c->set_type("PodScheduled");
  c->set_status("False");
  c->set_reason("Unschedulable");
  c->set_message(message);
  return pod;
}

TEST(DescribeJobSetTest, ShowsCountsPodsPendingReasonsAndEvents) {
  api::JobSet js;
  js.mutable_metadata()->set_name("train");
  js.mutable_metadata()->set_namespace_("default");
  js.mutable_spec()->mutable_failure_policy()->set_max_restarts(3);
  api::ReplicatedJob* rjob = js.mutable_spec()->add_replicated_jobs();
  rjob->set_name("workers");
  rjob->set_replicas(2);
  api::ReplicatedJobStatus* counts =
      js.mutable_status()->add_replicated_jobs_status();
  counts->set_name("workers");
  counts->set_active(1);
  counts->set_succeeded(1);
  js.mutable_status()->set_restarts(1);
  js.mutable_status()->set_restarts_count_towards_max(1);
  api::Condition* c = js.mutable_status()->add_conditions();
  c->set_type("StartupPolicyCompleted");
  c->set_status("True");
  c->set_reason("AllReplicatedJobsStarted");

  api::Pod running;
  running.mutable_metadata()->set_name("train-workers-0-0");
  running.mutable_spec()->set_node_name("host-1");
  running.mutable_status()->set_phase("Running");
  std::vector<api::Event> events(25);
  for (int i = 0; i < 25; ++i) {
    events[i].set_type("Normal");
    events[i].set_reason(absl::StrCat("Reason", i));
    events[i].set_regarding("JobSet/train");
  }

  const std::string text = DescribeJobSet(
      js,
      {running,
       PendingPod("train-workers-1-0", "0/4 nodes: 4 insufficient gpu"),
       PendingPod("train-workers-1-1", "0/4 nodes: 4 insufficient gpu")},
      events, "", kNow);
  EXPECT_THAT(text, HasSubstr("Name:           train\n"));
  EXPECT_THAT(text, HasSubstr("Restarts:       1 (1 of maxRestarts 3)"));
  EXPECT_THAT(text, HasSubstr("StartupPolicyCompleted   True"));
  EXPECT_THAT(text,
              HasSubstr("workers   2          0       1        1           0"));
  EXPECT_THAT(text, HasSubstr("train-workers-1-0   workers"));
  EXPECT_THAT(text, HasSubstr("host-1"));
  EXPECT_THAT(text, HasSubstr("Pending:\n  2 pods: Unschedulable: 0/4 nodes: "
                              "4 insufficient gpu\n"));
  // The last 20 events only.
  EXPECT_THAT(text, HasSubstr("Reason24"));
  EXPECT_THAT(text, HasSubstr("Reason5 "));
  EXPECT_THAT(text, Not(HasSubstr("Reason4 ")));
}

TEST(DescribeJobSetTest, EmptySectionsSayNone) {
  api::JobSet js;
  js.mutable_metadata()->set_name("empty");
  const std::string text = DescribeJobSet(js, {}, {}, "", kNow);
  EXPECT_THAT(text, HasSubstr("Conditions:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Pods:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Events:\n  <none>\n"));
  EXPECT_THAT(text, Not(HasSubstr("Pending:")));
}

// jobsetd's goodput: the current phase gets the time since phase_since,
// and each attempt says why it ended.
TEST(DescribeJobSetTest, GoodputAndAttempts) {
  api::JobSet js;
  js.mutable_metadata()->set_name("train");
  api::GoodputStatus* g = js.mutable_status()->mutable_goodput();
  g->mutable_submitted()->set_seconds(1'700'000'000 - 100);
  g->set_phase("Productive");
  g->mutable_phase_since()->set_seconds(1'700'000'000 - 40);
  g->mutable_queued()->set_seconds(10);
  g->mutable_starting()->set_seconds(10);
  g->mutable_productive()->set_seconds(20);
  g->mutable_stalled()->set_seconds(15);
  g->mutable_restarting()->set_seconds(5);
  g->set_lost_steps(12);
  api::AttemptRecord* a = g->add_attempts();
  a->mutable_start()->set_seconds(1'700'000'000 - 90);
  a->mutable_end()->set_seconds(1'700'000'000 - 60);
  a->set_reason("ProgressStalled");
  a->set_first_failed_pod("train-workers-1-0");
  a->set_first_failed_node("node-b");
  a->add_exit_codes(137);
  a->set_last_step(40);
  a = g->add_attempts();
  a->set_index(1);
  a->mutable_start()->set_seconds(1'700'000'000 - 60);
  const std::string text = DescribeJobSet(js, {}, {}, "", kNow);
  // Productive 20 s stored + 40 s since: 60 of 100 s.
  EXPECT_THAT(text, HasSubstr("Goodput:        60.0% of 100s (Productive; "
                              "queued 10s, starting 10s, productive 60s, "
                              "stalled 15s, restarting 5s); 12 steps redone"));
  EXPECT_THAT(text, HasSubstr("ProgressStalled"));
  EXPECT_THAT(text, HasSubstr("train-workers-1-0"));
  EXPECT_THAT(text, HasSubstr("<running>"));
  EXPECT_THAT(DescribeJobSet(api::JobSet(), {}, {}, "", kNow),
              Not(HasSubstr("Goodput")));
}

TEST(DescribeNodeTest, KubectlsSections) {
  api::Node node;
  node.mutable_metadata()->set_name("host-1");
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] =
      "host-1";
  (*node.mutable_metadata()->mutable_annotations())["jobsetd.x-k8s.io/pods"] =
      "2";
  (*node.mutable_metadata()
        ->mutable_annotations())["jobsetd.x-k8s.io/allocated"] =
      "cpu=4,nvidia.com/gpu=2";
  node.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
      1'700'000'000 - 3600);
  node.mutable_spec()->set_unschedulable(true);
  api::Taint* t = node.mutable_spec()->add_taints();
  t->set_key("node.kubernetes.io/unschedulable");
  t->set_effect("NoSchedule");
  (*node.mutable_status()->mutable_capacity())["cpu"] = "8";
  api::NodeCondition* c = node.mutable_status()->add_conditions();
  c->set_type("Ready");
  c->set_status("True");
  c->set_reason("KubeletReady");
  c->mutable_last_heartbeat_time()->set_seconds(1'700'000'000);
  api::NodeAddress* a = node.mutable_status()->add_addresses();
  a->set_type("InternalIP");
  a->set_address("10.0.0.1");
  node.mutable_status()->mutable_node_info()->set_kubelet_version(
      "jobset-agent 0.1");
  const std::string out = DescribeNode(node, kNow);
  EXPECT_THAT(out, HasSubstr("Name:           host-1\n"));
  EXPECT_THAT(out, HasSubstr("Roles:          <none>\n"));
  EXPECT_THAT(
      out, HasSubstr(
               "CreationTimestamp: Tue, 14 Nov 2023 21:13:20 +0000 (60m ago)"));
  EXPECT_THAT(out, HasSubstr("Taints:         "
                             "node.kubernetes.io/unschedulable:NoSchedule\n"));
  EXPECT_THAT(out, HasSubstr("Unschedulable:  true\n"));
  EXPECT_THAT(
      out, HasSubstr(
               "Ready   True     Tue, 14 Nov 2023 22:13:20 +0000   <unknown>"));
  EXPECT_THAT(out, HasSubstr("KubeletReady"));
  EXPECT_THAT(out, HasSubstr("  InternalIP:  10.0.0.1\n"));
  EXPECT_THAT(out, HasSubstr("Capacity:\n  cpu:"));
  EXPECT_THAT(out, HasSubstr("Allocatable:\n  <none>\n"));
  EXPECT_THAT(out, HasSubstr("Kubelet Version:     jobset-agent 0.1\n"));
  EXPECT_THAT(out, HasSubstr("Architecture:        <unknown>\n"));
  EXPECT_THAT(out, HasSubstr("Pods:           2\n"));
  EXPECT_THAT(out, HasSubstr("  nvidia.com/gpu:"));
}

TEST(DescribeSecretTest, ShowsKeysAndSizesNeverValues) {
  api::Secret secret;
  secret.mutable_metadata()->set_name("db");
  secret.mutable_metadata()->set_namespace_("team-a");
  (*secret.mutable_metadata()->mutable_labels())["app"] = "x";
  secret.set_type("Opaque");
  (*secret.mutable_data())["password"] = "hunter";
  (*secret.mutable_data())["user"] = "admin";
  const std::string out = DescribeSecret(secret);
  EXPECT_EQ(out,
            "Name:           db\n"
            "Namespace:      team-a\n"
            "Labels:         app=x\n"
            "Annotations:    <none>\n"
            "\n"
            "Type:  Opaque\n"
            "\n"
            "Data\n"
            "====\n"
            "password:  6 bytes\n"
            "user:      5 bytes\n");
  EXPECT_THAT(out, Not(HasSubstr("hunter")));
}

TEST(DescribeConfigMapTest, ShowsDataAndBinarySizes) {
  api::ConfigMap config_map;
  config_map.mutable_metadata()->set_name("settings");
  config_map.mutable_metadata()->set_namespace_("default");
  (*config_map.mutable_data())["mode"] = "fast";
  (*config_map.mutable_binary_data())["blob"] = std::string("\0\1\2", 3);
  EXPECT_EQ(DescribeConfigMap(config_map),
            "Name:           settings\n"
            "Namespace:      default\n"
            "Labels:         <none>\n"
            "Annotations:    <none>\n"
            "\n"
            "Data\n"
            "====\n"
            "mode:\n"
            "----\n"
            "fast\n"
            "\n"
            "\n"
            "BinaryData\n"
            "====\n"
            "blob:  3 bytes\n");
}

}  // namespace
}  // namespace jobset::cli
