// Table tests for each policy function of the JobSet layer.
#include <string>
#include <vector>

#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/failure_policy.h"
#include "scheduler/controller/replicated_job_status.h"
#include "scheduler/controller/startup_policy.h"
#include "scheduler/controller/success_policy.h"
#include "scheduler/controller/test_util.h"
#include "scheduler/controller/ttl.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::scheduler::testing::CompleteJob;
using ::jobset::scheduler::testing::FailJob;
using ::jobset::scheduler::testing::ReadyJob;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

std::vector<const api::Job*> Ptrs(const std::vector<api::Job>& jobs) {
  std::vector<const api::Job*> out;
  for (const api::Job& job : jobs) out.push_back(&job);
  return out;
}

JobSet Defaulted(JobSet js) {
  api::SetJobSetDefaults(&js);
  js.mutable_metadata()->set_uid("uid-1");
  return js;
}

TEST(ConditionsTest, FollowsUpstreamUpdateCondition) {
  Conditions conditions;
  // A False condition is never added.
  EXPECT_FALSE(
      UpdateCondition(&conditions, "Suspended", false, "R", "m", kNow));
  EXPECT_EQ(conditions.size(), 0);
  EXPECT_TRUE(UpdateCondition(&conditions, "Suspended", true, "R", "m", kNow));
  // Identical: no-op.
  EXPECT_FALSE(UpdateCondition(&conditions, "Suspended", true, "R", "m",
                               kNow + absl::Seconds(5)));
  // Same status, new reason: updated, transition time kept.
  EXPECT_TRUE(UpdateCondition(&conditions, "Suspended", true, "R2", "m",
                              kNow + absl::Seconds(5)));
  EXPECT_EQ(TransitionTime(conditions[0]), kNow);
  EXPECT_EQ(conditions[0].reason(), "R2");
  // Status change: transition time refreshed.
  EXPECT_TRUE(UpdateCondition(&conditions, "Suspended", false, "ResumeJobs",
                              "jobset is resumed", kNow + absl::Seconds(9)));
  EXPECT_EQ(conditions[0].status(), "False");
  EXPECT_EQ(TransitionTime(conditions[0]), kNow + absl::Seconds(9));
}

// upstream site/static/examples/simple/group.yaml.
TEST(ConstructJobTest, WritesUpstreamLabelsAndAnnotations) {
  JobSet js = Defaulted(JobSetBuilder("group")
                            .Replicated("rj-1", 1)
                            .Replicated("rj-2", 1)
                            .GroupName("rj-2", "group-b")
                            .Build());
  api::Job job = ConstructJob(js, 1, 0, {});
  EXPECT_EQ(job.metadata().name(), "group-rj-2-0");
  const auto& labels = job.metadata().labels();
  EXPECT_EQ(labels.at(kJobSetNameKey), "group");
  EXPECT_EQ(labels.at(kJobSetUidKey), "uid-1");
  EXPECT_EQ(labels.at(kReplicatedJobNameKey), "rj-2");
  EXPECT_EQ(labels.at(kReplicatedJobReplicasKey), "1");
  EXPECT_EQ(labels.at(kGlobalReplicasKey), "2");
  EXPECT_EQ(labels.at(kJobIndexKey), "0");
  EXPECT_EQ(labels.at(kJobGlobalIndexKey), "1");
  EXPECT_EQ(labels.at(kGroupNameKey), "group-b");
  EXPECT_EQ(labels.at(kGroupReplicasKey), "1");
  EXPECT_EQ(labels.at(kJobGroupIndexKey), "0");
  EXPECT_EQ(labels.at(kRestartAttemptKey), "0");
  EXPECT_EQ(labels.at(kJobKey), JobKeyHash("default", "group-rj-2-0"));
  EXPECT_EQ(labels.at(kJobKey).size(), 40u);
  EXPECT_FALSE(labels.contains(kJobRestartAttemptKey));  // Gate off.
  EXPECT_EQ(job.spec().template_().spec().subdomain(), "group");
  // Compact: the keys once. Upstream's Job has them as annotations too,
  // and on the pod template as both.
  EXPECT_TRUE(job.metadata().annotations().empty());
  EXPECT_TRUE(job.spec().template_().metadata().labels().empty());
  api::Job expanded = job;
  ExpandJob(&expanded);
  EXPECT_EQ(expanded.metadata().annotations().at(kJobKey), labels.at(kJobKey));
  EXPECT_EQ(expanded.metadata().annotations().size(), labels.size());
  const auto& pod_meta = expanded.spec().template_().metadata();
  EXPECT_EQ(pod_meta.labels().at(kJobGlobalIndexKey), "1");
  EXPECT_EQ(pod_meta.annotations().at(kJobIndexKey), "0");
  EXPECT_EQ(pod_meta.labels().size(), labels.size());
  // And compacting upstream's Job gives jobsetd's back.
  CompactJob(&expanded);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equivalent(expanded, job));
}

// The admitted Pod Security level reaches the Jobs (and from them the
// agents) from the JobSet, where jobsetd wrote it; a template cannot claim one.
TEST(ConstructJobTest, ThePodSecurityLevelComesFromTheJobSetOnly) {
  JobSet js = Defaulted(JobSetBuilder("lvl").Replicated("w", 1).Build());
  (*js.mutable_spec()
        ->mutable_replicated_jobs(0)
        ->mutable_template_()
        ->mutable_metadata()
        ->mutable_annotations())[kPodSecurityLevelKey] = "privileged";
  EXPECT_FALSE(ConstructJob(js, 0, 0, {})
                   .metadata()
                   .annotations()
                   .contains(kPodSecurityLevelKey));
  (*js.mutable_metadata()->mutable_annotations())[kPodSecurityLevelKey] =
      "baseline";
  EXPECT_EQ(ConstructJob(js, 0, 0, {})
                .metadata()
                .annotations()
                .at(kPodSecurityLevelKey),
            "baseline");
}

TEST(ConstructJobTest, AFactoryMakesEachIndexAsConstructJobDoes) {
  JobSet js = Defaulted(JobSetBuilder("f")
                            .Replicated("a", 2)
                            .Replicated("b", 3)
                            .GroupName("b", "g")
                            .Build());
  js.mutable_status()->set_restarts(2);
  api::ReplicatedJobStatus* b =
      js.mutable_status()->add_replicated_jobs_status();
  b->set_name("b");
  b->add_job_restarts(0);
  b->add_job_restarts(4);
  const api::Features features{.restart_job = true};
  ChildJobFactory factory(js, 1, features);
  for (int j = 0; j < 3; ++j) {
    api::Job made = factory.Make(j);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equivalent(
        made, ConstructJob(js, 1, j, features)));
    const auto& labels = made.metadata().labels();
    EXPECT_EQ(made.metadata().name(), absl::StrCat("f-b-", j));
    EXPECT_EQ(labels.at(kJobIndexKey), absl::StrCat(j));
    EXPECT_EQ(labels.at(kJobGlobalIndexKey), absl::StrCat(2 + j));
    EXPECT_EQ(labels.at(kJobGroupIndexKey), absl::StrCat(j));
    EXPECT_EQ(labels.at(kGroupReplicasKey), "3");
    EXPECT_EQ(labels.at(kRestartAttemptKey), "2");
    EXPECT_EQ(labels.at(kJobRestartAttemptKey), j == 1 ? "4" : "0");
    EXPECT_EQ(labels.at(kJobKey),
              JobKeyHash("default", absl::StrCat("f-b-", j)));
  }
}

TEST(ConstructJobTest, CompactKeepsWhatDiffersFromTheJobsOwn) {
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 1).Build());
  (*js.mutable_spec()
        ->mutable_replicated_jobs(0)
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_template_()
        ->mutable_metadata()
        ->mutable_labels())["team"] = "ml";
  api::Job job = ConstructJob(js, 0, 0, {});
  // A template label of the user's, and a JobSet key whose value differs
  // from the Job's, stay.
  (*job.mutable_spec()
        ->mutable_template_()
        ->mutable_metadata()
        ->mutable_labels())[kJobIndexKey] = "7";
  api::Job expanded = job;
  ExpandJob(&expanded);
  const auto& pod_labels = expanded.spec().template_().metadata().labels();
  EXPECT_EQ(pod_labels.at("team"), "ml");
  EXPECT_EQ(pod_labels.at(kJobIndexKey), "7");
  EXPECT_EQ(pod_labels.at(kJobSetNameKey), "t");
  CompactJob(&expanded);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equivalent(expanded, job));
}

TEST(ConstructJobTest, JobKeyIsTheSha1OfNamespaceAndName) {
  // printf 'default/test-js-replicated-job-a-0' | sha1sum
  EXPECT_EQ(JobKeyHash("default", "test-js-replicated-job-a-0"),
            "7b5f6b3e4003e1164d82a1d6fa5ed93212cd3c7f");
}

TEST(ConstructJobTest, CoordinatorExclusiveTopologyAndNodeSelectorStrategy) {
  JobSetBuilder b("train");
  b.Replicated("leader", 1)
      .Replicated("workers", 2)
      .Coordinator("leader", 0, 0);
  (*b.Mutable()
        ->mutable_metadata()
        ->mutable_annotations())[kExclusiveTopologyKey] =
      "cloud.google.com/gke-nodepool";
  (*b.Mutable()
        ->mutable_spec()
        ->mutable_replicated_jobs(1)
        ->mutable_template_()
        ->mutable_metadata()
        ->mutable_annotations())[kNodeSelectorStrategyKey] = "true";
  JobSet js = Defaulted(b.Build());
  api::Job leader = ConstructJob(js, 0, 0, {.restart_job = true});
  EXPECT_EQ(leader.metadata().labels().at(kCoordinatorKey),
            "train-leader-0-0.train");
  EXPECT_EQ(leader.metadata().annotations().at(kExclusiveTopologyKey),
            "cloud.google.com/gke-nodepool");
  EXPECT_EQ(leader.metadata().labels().at(kJobRestartAttemptKey), "0");
  EXPECT_TRUE(leader.spec().template_().spec().node_selector().empty());

  // The node-selector strategy keeps its annotation (placement treats it as
  // exclusive topology) but pins the Job to no pre-labelled nodes.
  api::Job worker = ConstructJob(js, 1, 1, {});
  EXPECT_EQ(worker.metadata().annotations().at(kNodeSelectorStrategyKey),
            "true");
  EXPECT_TRUE(worker.spec().template_().spec().node_selector().empty());
  EXPECT_EQ(worker.spec().template_().spec().tolerations_size(), 0);
}

TEST(ClassifyJobsTest, SortsByAttemptAndCondition) {
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 4).Build());
  std::vector<api::Job> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(ConstructJob(js, 0, i, {}));
  CompleteJob(&jobs[1], kNow);
  FailJob(&jobs[2], "BackoffLimitExceeded", "", kNow);
  js.mutable_status()->set_restarts(1);
  jobs.push_back(ConstructJob(js, 0, 3, {}));  // Attempt 1.
  jobs[3].mutable_metadata()->set_name("old");
  api::Job foreign = jobs[0];
  (*foreign.mutable_metadata()->mutable_labels())[kReplicatedJobNameKey] =
      "gone";
  jobs.push_back(foreign);

  auto children = ClassifyJobs(js, Ptrs(jobs), {});
  ASSERT_TRUE(children.ok());
  // Attempt-0 Jobs are all previous now; only the attempt-1 Job is current.
  EXPECT_EQ(children->previous.size(), 4u);
  EXPECT_EQ(children->active.size(), 1u);

  jobs[0].mutable_metadata()->mutable_labels()->at(kRestartAttemptKey) = "x";
  EXPECT_FALSE(ClassifyJobs(js, Ptrs(jobs), {}).ok());
}

TEST(ClassifyJobsTest, ParsesEachJobsLabelsOnce) {
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 2).Build());
  api::Job job = ConstructJob(js, 0, 1, {.restart_job = true});
  ChildJob child = ParseChildJob(job);
  EXPECT_EQ(child.job, &job);
  EXPECT_EQ(child.replicated_job, "a");
  EXPECT_EQ(child.index, 1);
  EXPECT_EQ(child.restart_attempt, 0);
  EXPECT_EQ(child.job_restart_attempt, 0);
  EXPECT_TRUE(child.job_restart_attempt_ok);

  // A Job-restart attempt that is not a number is refused with the gate on
  // (and ignored with it off, as the label means nothing then).
  (*job.mutable_metadata()->mutable_labels())[kJobRestartAttemptKey] = "x";
  child = ParseChildJob(job);
  EXPECT_FALSE(child.job_restart_attempt.has_value());
  EXPECT_FALSE(child.job_restart_attempt_ok);
  absl::StatusOr<ChildJobs> gated =
      ClassifyJobs(js, std::vector<ChildJob>{child}, {.restart_job = true});
  ASSERT_FALSE(gated.ok());
  EXPECT_THAT(gated.status().message(), HasSubstr(kJobRestartAttemptKey));
  EXPECT_TRUE(ClassifyJobs(js, std::vector<ChildJob>{child}, {}).ok());

  // Missing labels: no ReplicatedJob (ignored), no attempt (refused).
  job.mutable_metadata()->mutable_labels()->erase(kRestartAttemptKey);
  child = ParseChildJob(job);
  EXPECT_FALSE(child.restart_attempt.has_value());
  EXPECT_FALSE(ClassifyJobs(js, std::vector<ChildJob>{child}, {}).ok());
  job.mutable_metadata()->mutable_labels()->erase(kReplicatedJobNameKey);
  child = ParseChildJob(job);
  EXPECT_EQ(child.replicated_job, "");
  EXPECT_EQ(ReplicatedJobIndex(js, child), -1);
  absl::StatusOr<ChildJobs> ignored =
      ClassifyJobs(js, std::vector<ChildJob>{child}, {});
  ASSERT_TRUE(ignored.ok());
  EXPECT_TRUE(ignored->active.empty());
}

TEST(ReplicatedJobStatusTest, CountsAsUpstream) {
  JobSetBuilder b("t");
  b.Replicated("a", 4, /*parallelism=*/2, /*completions=*/2);
  JobSet js = Defaulted(b.Build());
  std::vector<api::Job> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(ConstructJob(js, 0, i, {}));
  ReadyJob(&jobs[0]);
  jobs[1].mutable_status()->set_active(2);  // Running, not ready.
  jobs[1].mutable_status()->set_ready(1);
  CompleteJob(&jobs[2], kNow);
  FailJob(&jobs[3], "BackoffLimitExceeded", "", kNow);
  auto children = ClassifyJobs(js, Ptrs(jobs), {});
  ASSERT_TRUE(children.ok());
  std::vector<api::ReplicatedJobStatus> s =
      ComputeReplicatedJobsStatus(js, *children);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ready(), 1);
  EXPECT_EQ(s[0].active(), 2);
  EXPECT_EQ(s[0].succeeded(), 1);
  EXPECT_EQ(s[0].failed(), 1);
  EXPECT_EQ(s[0].suspended(), 0);
}

struct FailureCase {
  std::string name;
  JobSet jobset;
  std::string reason;   // The failed Job's Failed reason.
  std::string message;  // ... and message.
  api::Features features;
  FailureDecision::Kind kind;
  std::string decision_reason;
  std::string decision_message;
};

class FailurePolicyTest : public ::testing::TestWithParam<FailureCase> {};

TEST_P(FailurePolicyTest, Decides) {
  const FailureCase& c = GetParam();
  JobSet js = Defaulted(c.jobset);
  api::Job job = ConstructJob(js, 0, 0, c.features);
  FailJob(&job, c.reason, c.message, kNow);
  FailureDecision d = DecideFailurePolicy(js, {&job}, c.features);
  EXPECT_EQ(d.kind, c.kind);
  EXPECT_EQ(d.reason, c.decision_reason);
  EXPECT_EQ(d.message, c.decision_message);
  EXPECT_EQ(d.job, &job);
}

JobSet WithStatus(JobSet js, int restarts, int counted) {
  js.mutable_status()->set_restarts(restarts);
  js.mutable_status()->set_restarts_count_towards_max(counted);
  return js;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FailurePolicyTest,
    ::testing::Values(
        FailureCase{
            "NoPolicyFails",
            JobSetBuilder("t").Replicated("a", 1).Build(),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kFailJobSet,
            "FailedJobs",
            "jobset failed due to one or more job failures (first failed "
            "job: t-a-0)"},
        FailureCase{
            "ZeroMaxRestartsFails",
            JobSetBuilder("t").Replicated("a", 1).FailurePolicy(0).Build(),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kFailJobSet,
            "ReachedMaxRestarts",
            "jobset failed due to reaching max number of restarts (first "
            "failed job: t-a-0)"},
        FailureCase{
            "DefaultRestart",
            JobSetBuilder("t").Replicated("a", 1).FailurePolicy(2).Build(),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kRestartJobSet,
            "DefaultFailurePolicy",
            "applying RestartJobSet failure policy action (first failed "
            "job: t-a-0)"},
        FailureCase{
            "LimitReached",
            WithStatus(
                JobSetBuilder("t").Replicated("a", 1).FailurePolicy(2).Build(),
                2, 2),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kFailJobSet,
            "ReachedMaxRestarts",
            "jobset failed due to reaching max number of restarts (first "
            "failed job: t-a-0)"},
        FailureCase{"IgnoreMaxRestartsKeepsRestarting",
                    WithStatus(JobSetBuilder("t")
                                   .Replicated("a", 1)
                                   .FailurePolicy(0)
                                   .Rule("RestartJobSetAndIgnoreMaxRestarts",
                                         {}, {}, "r")
                                   .Build(),
                               5, 0),
                    "BackoffLimitExceeded",
                    "",
                    {},
                    FailureDecision::Kind::kRestartJobSet,
                    "FailurePolicy_r",
                    "applying RestartJobSetAndIgnoreMaxRestarts failure policy "
                    "action (first failed job: t-a-0)"},
        FailureCase{
            "RuleOnReasonFailJobSet",
            JobSetBuilder("t")
                .Replicated("a", 1)
                .FailurePolicy(3)
                .Rule("FailJobSet", {"PodFailurePolicy"})
                .Build(),
            "PodFailurePolicy",
            "",
            {},
            FailureDecision::Kind::kFailJobSet,
            "FailJobSetFailurePolicyAction",
            "applying FailJobSet failure policy action (first failed job: "
            "t-a-0)"},
        FailureCase{
            "RuleOnOtherReasonFallsThrough",
            JobSetBuilder("t")
                .Replicated("a", 1)
                .FailurePolicy(3)
                .Rule("FailJobSet", {"PodFailurePolicy"})
                .Build(),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kRestartJobSet,
            "DefaultFailurePolicy",
            "applying RestartJobSet failure policy action (first failed "
            "job: t-a-0)"},
        FailureCase{
            "RuleTargetsOtherReplicatedJob",
            JobSetBuilder("t")
                .Replicated("a", 1)
                .Replicated("b", 1)
                .FailurePolicy(3)
                .Rule("FailJobSet", {}, {"b"})
                .Build(),
            "BackoffLimitExceeded",
            "",
            {},
            FailureDecision::Kind::kRestartJobSet,
            "DefaultFailurePolicy",
            "applying RestartJobSet failure policy action (first failed "
            "job: t-a-0)"},
        FailureCase{
            "RestartJobWithGate",
            JobSetBuilder("t")
                .Replicated("a", 1)
                .FailurePolicy(3)
                .Rule("RestartJob", {}, {}, "one")
                .Build(),
            "BackoffLimitExceeded",
            "",
            {.restart_job = true},
            FailureDecision::Kind::kRestartJob,
            "FailurePolicy_one",
            "applying RestartJob failure policy action (first failed job: "
            "t-a-0)"}),
    [](const ::testing::TestParamInfo<FailureCase>& info) {
      return info.param.name;
    });

TEST(FailurePolicyTest, MessagePatternsSearchAnywhere) {
  api::FailurePolicyRule rule;
  rule.add_on_job_failure_message_patterns("exit code 4[0-9]");
  rule.add_on_job_failure_message_patterns("(invalid");  // Skipped.
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 1).Build());
  api::Job job = ConstructJob(js, 0, 0, {});
  FailJob(&job, "PodFailurePolicy",
          "Container main for pod x failed with exit code 42 ...", kNow);
  EXPECT_TRUE(RuleApplies(rule, job, "a"));
  FailJob(&job, "PodFailurePolicy", "exit code 1", kNow);
  api::Job other = ConstructJob(js, 0, 0, {});
  FailJob(&other, "PodFailurePolicy", "exit code 1", kNow);
  EXPECT_FALSE(RuleApplies(rule, other, "a"));
}

TEST(FailurePolicyTest, FirstFailedJobIsTheEarliest) {
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 3).Build());
  api::Job j0 = ConstructJob(js, 0, 0, {}), j1 = ConstructJob(js, 0, 1, {}),
           j2 = ConstructJob(js, 0, 2, {});
  FailJob(&j0, "BackoffLimitExceeded", "", kNow + absl::Seconds(2));
  FailJob(&j1, "BackoffLimitExceeded", "", kNow);
  FailJob(&j2, "BackoffLimitExceeded", "", kNow + absl::Seconds(1));
  EXPECT_EQ(FirstFailedJob({&j0, &j1, &j2}), &j1);
}

TEST(SuccessPolicyTest, AllAndAnyWithTargets) {
  JobSet js = Defaulted(JobSetBuilder("t")
                            .Replicated("leader", 1)
                            .Replicated("workers", 2)
                            .Build());
  api::Job leader = ConstructJob(js, 0, 0, {});
  api::Job w0 = ConstructJob(js, 1, 0, {}), w1 = ConstructJob(js, 1, 1, {});
  EXPECT_FALSE(SuccessPolicySatisfied(js, {&w0, &w1}));
  EXPECT_TRUE(SuccessPolicySatisfied(js, {&leader, &w0, &w1}));
  js.mutable_spec()->mutable_success_policy()->add_target_replicated_jobs(
      "workers");
  EXPECT_TRUE(SuccessPolicySatisfied(js, {&w0, &w1}));
  js.mutable_spec()->mutable_success_policy()->set_operator_("Any");
  EXPECT_TRUE(SuccessPolicySatisfied(js, {&w1}));
  EXPECT_FALSE(SuccessPolicySatisfied(js, {&leader}));
}

std::vector<api::ReplicatedJobStatus> Statuses(
    std::vector<std::tuple<int, int, int>> ready_succeeded_failed) {
  std::vector<api::ReplicatedJobStatus> out;
  for (auto [r, s, f] : ready_succeeded_failed) {
    api::ReplicatedJobStatus& st = out.emplace_back();
    st.set_ready(r);
    st.set_succeeded(s);
    st.set_failed(f);
  }
  return out;
}

TEST(StartupPolicyTest, DependsOnReadyAndComplete) {
  JobSet js = Defaulted(JobSetBuilder("t")
                            .Replicated("a", 2)
                            .Replicated("b", 1)
                            .Replicated("c", 1)
                            .DependsOn("b", "a", "Ready")
                            .DependsOn("c", "b", "Complete")
                            .Build());
  StartupPlan plan =
      PlanCreation(js, Statuses({{1, 0, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, false, false}));
  // Failed Jobs count toward Ready, as upstream.
  plan = PlanCreation(js, Statuses({{1, 0, 1}, {1, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, true, false}));
  plan = PlanCreation(js, Statuses({{2, 0, 0}, {0, 1, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, true, true}));
  // Suspended: dependents are not created at all.
  js.mutable_spec()->set_suspend(true);
  plan = PlanCreation(js, Statuses({{2, 0, 0}, {0, 1, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, false, false}));
}

TEST(StartupPolicyTest, InOrderStopsAtTheFirstUnstarted) {
  JobSet js = Defaulted(JobSetBuilder("t")
                            .Replicated("a", 1)
                            .Replicated("b", 2)
                            .Replicated("c", 1)
                            .StartupPolicy("InOrder")
                            .Build());
  StartupPlan plan =
      PlanCreation(js, Statuses({{1, 0, 0}, {1, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, true, false}));
  EXPECT_TRUE(plan.in_progress);
  plan = PlanCreation(js, Statuses({{1, 0, 0}, {2, 0, 0}, {1, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, true, true}));
  EXPECT_FALSE(plan.in_progress);
  // While suspended, InOrder creates everything.
  js.mutable_spec()->set_suspend(true);
  plan = PlanCreation(js, Statuses({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(plan.allowed, (std::vector<bool>{true, true, true}));
}

TEST(TtlTest, ExpiresAfterTheTerminalTransition) {
  JobSet js = Defaulted(JobSetBuilder("t").Replicated("a", 1).Build());
  EXPECT_EQ(TtlExpiry(js), std::nullopt);
  js.mutable_spec()->set_ttl_seconds_after_finished(30);
  EXPECT_EQ(TtlExpiry(js), std::nullopt);  // Not finished.
  UpdateCondition(js.mutable_status()->mutable_conditions(), kConditionFailed,
                  true, "FailedJobs", "m", kNow);
  EXPECT_EQ(TtlExpiry(js), kNow + absl::Seconds(30));
}

}  // namespace
}  // namespace jobset::scheduler
