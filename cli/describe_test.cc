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
      events, kNow);
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
  const std::string text = DescribeJobSet(js, {}, {}, kNow);
  EXPECT_THAT(text, HasSubstr("Conditions:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Pods:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Events:\n  <none>\n"));
  EXPECT_THAT(text, Not(HasSubstr("Pending:")));
}

}  // namespace
}  // namespace jobset::cli
