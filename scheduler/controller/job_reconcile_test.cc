// The Kubernetes Job semantics JobSet relies on (Appendix A), table by table.
#include "scheduler/controller/job_reconcile.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

api::Job MakeJob(int parallelism, int completions,
                 const std::string& restart_policy = "Never",
                 int backoff_limit = 6) {
  api::Job job;
  job.mutable_metadata()->set_name("js-w-0");
  job.mutable_metadata()->set_namespace_("default");
  job.mutable_spec()->set_parallelism(parallelism);
  job.mutable_spec()->set_completions(completions);
  job.mutable_spec()->set_completion_mode("Indexed");
  job.mutable_spec()->set_backoff_limit(backoff_limit);
  job.mutable_spec()->mutable_template_()->mutable_spec()->set_restart_policy(
      restart_policy);
  return job;
}

api::PodRecord MakePod(int index, const std::string& phase, int attempt = 0) {
  api::PodRecord pod;
  pod.set_name(absl::StrCat("js-w-0-", index, "-", attempt));
  pod.set_completion_index(index);
  pod.mutable_status()->set_phase(phase);
  return pod;
}

api::PodRecord Exited(int index, int code, int attempt = 0) {
  api::PodRecord pod =
      MakePod(index, code == 0 ? "Succeeded" : "Failed", attempt);
  api::ContainerStatus* c = pod.mutable_status()->add_container_statuses();
  c->set_name("main");
  c->set_flat_state("terminated");
  c->set_exit_code(code);
  return pod;
}

// Reconciles `job` against pods held by value.
JobActions Reconcile(const api::Job& job,
                     const std::vector<api::PodRecord>& pods, absl::Time now) {
  std::vector<const api::PodRecord*> ptrs;
  for (const api::PodRecord& pod : pods) ptrs.push_back(&pod);
  return ReconcileJob(job, ptrs, now);
}

api::PodRecord ReadyPod(int index) {
  api::PodRecord pod = MakePod(index, "Running");
  UpdateCondition(pod.mutable_status()->mutable_conditions(), "Ready", true, "",
                  "", kNow);
  return pod;
}

TEST(JobReconcileTest, StartsOnePodPerIndexUpToParallelism) {
  JobActions a = Reconcile(MakeJob(2, 4), {}, kNow);
  EXPECT_THAT(a.create, ElementsAre(0, 1));
  EXPECT_TRUE(a.status.has_start_time());
  EXPECT_EQ(a.status.active(), 2);  // The new pods count, as upstream's.
  a = Reconcile(MakeJob(2, 4), {Exited(0, 0), MakePod(1, "Running")}, kNow);
  EXPECT_THAT(a.create, ElementsAre(2));
  EXPECT_EQ(a.status.succeeded(), 1);
  EXPECT_EQ(a.status.active(), 2);
  EXPECT_EQ(a.status.completed_indexes(), "0");
}

TEST(JobReconcileTest, CountsReadyPods) {
  JobActions a =
      Reconcile(MakeJob(2, 2), {ReadyPod(0), MakePod(1, "Pending")}, kNow);
  EXPECT_EQ(a.status.active(), 2);
  EXPECT_EQ(a.status.ready(), 1);
  EXPECT_THAT(a.create, IsEmpty());
}

TEST(JobReconcileTest, CompletesWhenEveryIndexSucceeded) {
  JobActions a = Reconcile(MakeJob(2, 2), {Exited(0, 0), Exited(1, 0)}, kNow);
  EXPECT_TRUE(IsConditionTrue(a.status.conditions(), kJobComplete));
  EXPECT_EQ(a.status.completed_indexes(), "0-1");
  EXPECT_TRUE(a.status_changed);
}

TEST(JobReconcileTest, NeverReplacesAFailedPodUntilTheBackoffLimit) {
  api::Job job = MakeJob(1, 1, "Never", /*backoff_limit=*/1);
  JobActions a = Reconcile(job, {Exited(0, 1)}, kNow);
  EXPECT_THAT(a.create, ElementsAre(0));
  EXPECT_EQ(a.status.failed(), 1);
  a = Reconcile(job, {Exited(0, 1), Exited(0, 1, 1)}, kNow);
  EXPECT_THAT(a.create, IsEmpty());
  const api::Condition* failed =
      FindCondition(a.status.conditions(), kJobFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason(), "BackoffLimitExceeded");
  EXPECT_EQ(failed->message(), "Job has reached the specified backoff limit");
  EXPECT_TRUE(IsConditionTrue(a.status.conditions(), kJobFailureTarget));
}

TEST(JobReconcileTest, BackoffLimitZeroFailsOnTheFirstFailure) {
  JobActions a = Reconcile(MakeJob(2, 2, "Never", 0),
                           {Exited(0, 1), MakePod(1, "Running")}, kNow);
  EXPECT_TRUE(IsConditionTrue(a.status.conditions(), kJobFailed));
  EXPECT_THAT(a.remove, ElementsAre("js-w-0-1-0"));
}

TEST(JobReconcileTest, OnFailureContainerRestartsCountTowardTheLimit) {
  api::PodRecord pod = MakePod(0, "Running");
  api::ContainerStatus* c = pod.mutable_status()->add_container_statuses();
  c->set_name("main");
  c->set_restart_count(2);
  JobActions a = Reconcile(MakeJob(1, 1, "OnFailure", 2), {pod}, kNow);
  EXPECT_FALSE(IsConditionTrue(a.status.conditions(), kJobFailed));
  c->set_restart_count(3);
  a = Reconcile(MakeJob(1, 1, "OnFailure", 2), {pod}, kNow);
  EXPECT_EQ(FindCondition(a.status.conditions(), kJobFailed)->reason(),
            "BackoffLimitExceeded");
  EXPECT_THAT(a.remove, ElementsAre(pod.name()));
}

struct PolicyCase {
  std::string name;
  std::string action;
  std::string op;
  std::vector<int> values;
  int exit_code;
  PodFailureVerdict::Action want;
};

class PodFailurePolicyTest : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(PodFailurePolicyTest, ExitCodes) {
  const PolicyCase& p = GetParam();
  api::Job job = MakeJob(1, 1);
  api::PodFailurePolicyRule* rule =
      job.mutable_spec()->mutable_pod_failure_policy()->add_rules();
  rule->set_action(p.action);
  rule->mutable_on_exit_codes()->set_operator_(p.op);
  for (int v : p.values) rule->mutable_on_exit_codes()->add_values(v);
  EXPECT_EQ(EvaluatePodFailurePolicy(job, Exited(0, p.exit_code)).action,
            p.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodFailurePolicyTest,
    ::testing::Values(
        PolicyCase{"InMatches",
                   "FailJob",
                   "In",
                   {42},
                   42,
                   PodFailureVerdict::Action::kFailJob},
        PolicyCase{"InMisses",
                   "FailJob",
                   "In",
                   {42},
                   1,
                   PodFailureVerdict::Action::kCount},
        PolicyCase{"NotInMatches",
                   "FailJob",
                   "NotIn",
                   {1},
                   42,
                   PodFailureVerdict::Action::kFailJob},
        PolicyCase{"NotInMisses",
                   "Ignore",
                   "NotIn",
                   {42},
                   42,
                   PodFailureVerdict::Action::kCount},
        PolicyCase{"Ignore",
                   "Ignore",
                   "In",
                   {137},
                   137,
                   PodFailureVerdict::Action::kIgnore},
        PolicyCase{
            "Count", "Count", "In", {3}, 3, PodFailureVerdict::Action::kCount}),
    [](const auto& info) { return info.param.name; });

TEST(JobReconcileTest, FailJobRuleFailsWithUpstreamsMessage) {
  api::Job job = MakeJob(1, 1);
  api::PodFailurePolicyRule* rule =
      job.mutable_spec()->mutable_pod_failure_policy()->add_rules();
  rule->set_action("Ignore");
  rule->add_on_pod_conditions()->set_type("DisruptionTarget");
  rule = job.mutable_spec()->mutable_pod_failure_policy()->add_rules();
  rule->set_action("FailJob");
  rule->mutable_on_exit_codes()->set_container_name("main");
  rule->mutable_on_exit_codes()->set_operator_("In");
  rule->mutable_on_exit_codes()->add_values(42);
  JobActions a = Reconcile(job, {Exited(0, 42)}, kNow);
  const api::Condition* failed =
      FindCondition(a.status.conditions(), kJobFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason(), "PodFailurePolicy");
  EXPECT_EQ(
      failed->message(),
      "Container main for pod default/js-w-0-0-0 failed with exit code 42 "
      "matching FailJob rule at index 1");

  // A pod lost with its node is ignored by rule 0: replaced, not counted.
  api::PodRecord lost = MakePod(0, "Failed");
  UpdateCondition(lost.mutable_status()->mutable_conditions(),
                  "DisruptionTarget", true, "NodeLost", "", kNow);
  job.mutable_spec()->set_backoff_limit(0);
  a = Reconcile(job, {lost}, kNow);
  EXPECT_FALSE(IsConditionTrue(a.status.conditions(), kJobFailed));
  EXPECT_THAT(a.create, ElementsAre(0));
}

TEST(JobReconcileTest, DeadlineExceeded) {
  api::Job job = MakeJob(1, 1);
  job.mutable_spec()->set_active_deadline_seconds(60);
  job.mutable_status()->mutable_start_time()->set_seconds(
      absl::ToUnixSeconds(kNow));
  JobActions a =
      Reconcile(job, {MakePod(0, "Running")}, kNow + absl::Seconds(59));
  EXPECT_FALSE(IsConditionTrue(a.status.conditions(), kJobFailed));
  a = Reconcile(job, {MakePod(0, "Running")}, kNow + absl::Seconds(60));
  EXPECT_EQ(FindCondition(a.status.conditions(), kJobFailed)->reason(),
            "DeadlineExceeded");
  EXPECT_THAT(a.remove, ElementsAre("js-w-0-0-0"));
}

TEST(JobReconcileTest, SuspendRemovesActivePodsAndResumeRestartsThem) {
  api::Job job = MakeJob(2, 2);
  job.mutable_spec()->set_suspend(true);
  JobActions a = Reconcile(job, {MakePod(0, "Running"), Exited(1, 0)}, kNow);
  EXPECT_THAT(a.remove, ElementsAre("js-w-0-0-0"));
  EXPECT_THAT(a.create, IsEmpty());
  EXPECT_TRUE(IsConditionTrue(a.status.conditions(), kJobSuspended));
  job.mutable_spec()->set_suspend(false);
  *job.mutable_status() = a.status;
  a = Reconcile(job, {Exited(1, 0)}, kNow);
  EXPECT_THAT(a.create, ElementsAre(0));
  EXPECT_EQ(FindCondition(a.status.conditions(), kJobSuspended)->status(),
            "False");
}

TEST(JobReconcileTest, ATerminatingPodHoldsItsIndex) {
  api::PodRecord old = MakePod(0, "Running");
  old.mutable_deletion_timestamp()->set_seconds(1);
  JobActions a = Reconcile(MakeJob(1, 1), {old}, kNow);
  EXPECT_THAT(a.create, IsEmpty());
  EXPECT_EQ(a.status.active(), 0);
}

TEST(JobReconcileTest, NonIndexedRunsCompletionsPods) {
  api::Job job = MakeJob(2, 3);
  job.mutable_spec()->set_completion_mode("NonIndexed");
  JobActions a = Reconcile(job, {}, kNow);
  EXPECT_THAT(a.create, ElementsAre(-1, -1));
  api::PodRecord done = Exited(0, 0);
  done.set_completion_index(-1);
  a = Reconcile(job, {done, done, MakePod(0, "Running")}, kNow);
  EXPECT_THAT(a.create, IsEmpty());
  a = Reconcile(job, {done, done, done}, kNow);
  EXPECT_TRUE(IsConditionTrue(a.status.conditions(), kJobComplete));
}

TEST(FormatIndexesTest, Ranges) {
  EXPECT_EQ(FormatIndexes({}), "");
  EXPECT_EQ(FormatIndexes({1, 3, 4, 5, 7}), "1,3-5,7");
}

}  // namespace
}  // namespace jobset::scheduler
