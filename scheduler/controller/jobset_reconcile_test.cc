// Behavioural scenarios of jobset-semantics.md section 5 (groups E-J),
// driven the way upstream's integration tests drive them: the test plays the
// Job layer, setting child Job status directly, and applies each reconcile's
// actions to its own list of Jobs.
#include "scheduler/controller/jobset_reconcile.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/test_util.h"
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
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// The standard fixture T: rj-a (1 replica, restartPolicy Never) and rj-b (3).
JobSetBuilder T() {
  JobSetBuilder b("test-js");
  b.Replicated("replicated-job-a", 1)
      .RestartPolicy("replicated-job-a", "Never")
      .Replicated("replicated-job-b", 3);
  return b;
}

// A JobSet and its children, reconciled until nothing changes.
class Cluster {
 public:
  explicit Cluster(JobSet jobset,
                   api::Features features = {.restart_job = true})
      : features_(features) {
    api::SetJobSetDefaults(&jobset);
    jobset.mutable_metadata()->set_uid("js-uid");
    jobset_ = std::move(jobset);
  }

  // Reconciles until a pass changes nothing (at most 10 passes).
  void Settle() {
    for (int pass = 0; pass < 10; ++pass) {
      std::vector<api::Job> jobs = Jobs();
      std::vector<const api::Job*> ptrs;
      for (const api::Job& job : jobs) ptrs.push_back(&job);
      auto actions = ReconcileJobSet(jobset_, ptrs, now_, features_);
      ASSERT_TRUE(actions.ok()) << actions.status();
      bool changed = actions->status_changed || !actions->create.empty() ||
                     !actions->remove.empty() || !actions->update.empty();
      *jobset_.mutable_status() = actions->status;
      for (const JobSetEvent& e : actions->events) events_.push_back(e);
      for (const std::string& name : actions->remove) {
        if (held_.contains(name)) {
          jobs_[name]
              .mutable_metadata()
              ->mutable_deletion_timestamp()
              ->set_seconds(1);
        } else {
          jobs_.erase(name);
        }
      }
      for (api::Job& job : actions->create) {
        ASSERT_FALSE(jobs_.contains(job.metadata().name()));
        jobs_[job.metadata().name()] = job;
      }
      for (api::Job& job : actions->update) jobs_[job.metadata().name()] = job;
      deleted_ = deleted_ || actions->delete_jobset;
      requeue_at_ = actions->requeue_at;
      if (!changed) return;
      now_ += absl::Seconds(1);
    }
    FAIL() << "no fixed point after 10 passes";
  }

  std::vector<api::Job> Jobs() const {
    std::vector<api::Job> out;
    for (const auto& [name, job] : jobs_) out.push_back(job);
    return out;
  }
  api::Job& Job(const std::string& name) {
    EXPECT_TRUE(jobs_.contains(name)) << name;
    return jobs_[name];
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& [name, job] : jobs_) out.push_back(name);
    return out;
  }
  // Restart-attempt label -> number of Jobs.
  std::map<std::string, int> Attempts() const {
    std::map<std::string, int> out;
    for (const auto& [name, job] : jobs_) {
      ++out[job.metadata().labels().at(kRestartAttemptKey)];
    }
    return out;
  }
  void ReadyAll(const std::string& rjob) {
    for (auto& [name, job] : jobs_) {
      if (job.metadata().labels().at(kReplicatedJobNameKey) == rjob)
        ReadyJob(&job);
    }
  }
  void CompleteAll(const std::string& rjob = "") {
    for (auto& [name, job] : jobs_) {
      if (rjob.empty() ||
          job.metadata().labels().at(kReplicatedJobNameKey) == rjob) {
        CompleteJob(&job, now_);
      }
    }
  }
  // Keeps `name` (with a deletionTimestamp) when the controller deletes it.
  void HoldDeletion(const std::string& name) { held_.insert(name); }
  void Release(const std::string& name) {
    held_.erase(name);
    if (jobs_.contains(name) &&
        jobs_[name].metadata().has_deletion_timestamp()) {
      jobs_.erase(name);
    }
  }

  const api::Condition* Condition(const char* type) const {
    return FindCondition(jobset_.status().conditions(), type);
  }
  bool ConditionTrue(const char* type) const {
    return IsConditionTrue(jobset_.status().conditions(), type);
  }
  const api::ReplicatedJobStatus& RJob(int i) const {
    return jobset_.status().replicated_jobs_status(i);
  }

  JobSet jobset_;
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  std::vector<JobSetEvent> events_;
  bool deleted_ = false;
  std::optional<absl::Time> requeue_at_;

 private:
  api::Features features_;
  std::map<std::string, api::Job> jobs_;
  std::set<std::string> held_;
};

TEST(CreationTest, CreatesEveryJobOnce) {
  Cluster c(T().Build());
  c.Settle();
  EXPECT_THAT(
      c.Names(),
      ElementsAre("test-js-replicated-job-a-0", "test-js-replicated-job-b-0",
                  "test-js-replicated-job-b-1", "test-js-replicated-job-b-2"));
  ASSERT_EQ(c.jobset_.status().replicated_jobs_status_size(), 2);
  EXPECT_EQ(c.RJob(0).name(), "replicated-job-a");
  // 77: never suspended, so no Suspended condition at all.
  EXPECT_EQ(c.Condition(kConditionSuspended), nullptr);
  EXPECT_EQ(c.jobset_.status().terminal_state(), "");
}

// 41, 42.
TEST(SuccessTest, CompletesWhenAllJobsSucceed) {
  Cluster c(T().Build());
  c.Settle();
  CompleteJob(&c.Job("test-js-replicated-job-a-0"), c.now_);
  CompleteJob(&c.Job("test-js-replicated-job-b-0"), c.now_);
  CompleteJob(&c.Job("test-js-replicated-job-b-1"), c.now_);
  ReadyJob(&c.Job("test-js-replicated-job-b-2"));
  c.Settle();
  EXPECT_FALSE(c.ConditionTrue(kConditionCompleted));
  EXPECT_EQ(c.RJob(1).succeeded(), 2);
  EXPECT_EQ(c.RJob(1).ready(), 1);
  EXPECT_EQ(c.RJob(1).active(), 1);
  CompleteJob(&c.Job("test-js-replicated-job-b-2"), c.now_);
  c.Settle();
  const api::Condition* completed = c.Condition(kConditionCompleted);
  ASSERT_NE(completed, nullptr);
  EXPECT_EQ(completed->reason(), "AllJobsCompleted");
  EXPECT_EQ(completed->message(), "jobset completed successfully");
  EXPECT_EQ(c.jobset_.status().terminal_state(), "Completed");
  EXPECT_EQ(c.RJob(0).succeeded(), 1);
  EXPECT_EQ(c.RJob(1).succeeded(), 3);
  EXPECT_THAT(c.events_,
              Contains(JobSetEvent{"Normal", "AllJobsCompleted",
                                   "jobset completed successfully"}));
}

// 45, 47.
TEST(SuccessTest, AnyWithTargetsCompletesAndTearsDownTheRest) {
  Cluster c(T().SuccessPolicy("Any", {"replicated-job-b"}).Build());
  c.Settle();
  CompleteJob(&c.Job("test-js-replicated-job-b-1"), c.now_);
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionCompleted));
  EXPECT_THAT(c.Names(), ElementsAre("test-js-replicated-job-b-1"));
}

// 49.
TEST(FailureTest, WithoutPolicyTheFirstFailureFailsTheJobSet) {
  Cluster c(T().Build());
  c.Settle();
  FailJob(&c.Job("test-js-replicated-job-b-1"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  const api::Condition* failed = c.Condition(kConditionFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason(), "FailedJobs");
  EXPECT_THAT(failed->message(),
              HasSubstr("(first failed job: test-js-replicated-job-b-1)"));
  EXPECT_EQ(c.jobset_.status().terminal_state(), "Failed");
  // The active Jobs are deleted; the failed one stays.
  EXPECT_THAT(c.Names(), ElementsAre("test-js-replicated-job-b-1"));
}

// 50, 57.
TEST(FailureTest, RestartsUpToMaxRestartsThenFails) {
  Cluster c(T().FailurePolicy(1).Build());
  c.Settle();
  FailJob(&c.Job("test-js-replicated-job-a-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_EQ(c.jobset_.status().restarts(), 1);
  EXPECT_EQ(c.jobset_.status().restarts_count_towards_max(), 1);
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("1", 4)));
  const api::Condition* restarting = c.Condition(kConditionRestartingJobSet);
  ASSERT_NE(restarting, nullptr);
  EXPECT_EQ(restarting->status(), "True");
  EXPECT_EQ(restarting->reason(), "DefaultFailurePolicy");
  EXPECT_THAT(c.events_, Contains(Field(&JobSetEvent::reason,
                                        "RestartJobSetFailurePolicyAction")));
  c.ReadyAll("replicated-job-a");
  c.ReadyAll("replicated-job-b");
  c.Settle();
  EXPECT_EQ(c.Condition(kConditionRestartingJobSet)->status(), "False");
  EXPECT_EQ(c.Condition(kConditionRestartingJobSet)->reason(), "JobsReady");

  FailJob(&c.Job("test-js-replicated-job-b-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_EQ(c.Condition(kConditionFailed)->reason(), "ReachedMaxRestarts");
  EXPECT_EQ(c.Condition(kConditionRestartingJobSet)->reason(), "JobSetFailed");
}

// 51.
TEST(FailureTest, AFailureDiscardsASimultaneousSuccess) {
  Cluster c(T().FailurePolicy(1).Build());
  c.Settle();
  CompleteJob(&c.Job("test-js-replicated-job-a-0"), c.now_);
  FailJob(&c.Job("test-js-replicated-job-b-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_EQ(c.jobset_.status().restarts(), 1);
  EXPECT_EQ(c.Names().size(), 4u);
  c.CompleteAll();
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionCompleted));
}

// 58.
TEST(FailureTest, IgnoreMaxRestartsNeverCounts) {
  Cluster c(T().FailurePolicy(1)
                .Rule("RestartJobSetAndIgnoreMaxRestarts", {"PodFailurePolicy"})
                .Rule("FailJobSet")
                .Build());
  c.Settle();
  for (int i = 1; i <= 3; ++i) {
    FailJob(&c.Job("test-js-replicated-job-a-0"), "PodFailurePolicy", "",
            c.now_);
    c.Settle();
    EXPECT_EQ(c.jobset_.status().restarts(), i);
    EXPECT_EQ(c.jobset_.status().restarts_count_towards_max(), 0);
  }
  FailJob(&c.Job("test-js-replicated-job-b-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_EQ(c.Condition(kConditionFailed)->reason(),
            "FailJobSetFailurePolicyAction");
  EXPECT_EQ(c.jobset_.status().restarts(), 3);
}

// 64: Recreate replaces each old Job as soon as it is gone.
TEST(RestartTest, RecreateDoesNotWaitForOtherOldJobs) {
  Cluster c(T().FailurePolicy(1).Build());
  c.Settle();
  c.HoldDeletion("test-js-replicated-job-b-2");
  FailJob(&c.Job("test-js-replicated-job-a-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("0", 1),
                          std::pair<const std::string, int>("1", 3)));
  c.Release("test-js-replicated-job-b-2");
  c.Settle();
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("1", 4)));
}

// 65: BlockingRecreate creates nothing while an old Job lingers.
TEST(RestartTest, BlockingRecreateWaitsForEveryOldJob) {
  Cluster c(T().FailurePolicy(1).RestartStrategy("BlockingRecreate").Build());
  c.Settle();
  c.HoldDeletion("test-js-replicated-job-b-2");
  FailJob(&c.Job("test-js-replicated-job-a-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("0", 1)));
  c.Release("test-js-replicated-job-b-2");
  c.Settle();
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("1", 4)));
}

// 66, 67.
TEST(RestartTest, RestartJobRecreatesOnlyThatJob) {
  Cluster c(T().FailurePolicy(3)
                .Rule("RestartJob", {"PodFailurePolicy"})
                .Rule("FailJobSet")
                .Build());
  c.Settle();
  const std::string b1_uid = "keep";
  c.Job("test-js-replicated-job-b-1").mutable_metadata()->set_uid(b1_uid);
  FailJob(&c.Job("test-js-replicated-job-a-0"), "PodFailurePolicy", "", c.now_);
  c.Settle();
  EXPECT_EQ(c.jobset_.status().restarts(), 0);
  EXPECT_EQ(c.jobset_.status().restarts_count_towards_max(), 0);
  EXPECT_THAT(c.RJob(0).job_restarts(), ElementsAre(1));
  EXPECT_THAT(c.RJob(0).job_restarts_count_towards_max(), ElementsAre(1));
  EXPECT_THAT(c.RJob(1).job_restarts(), IsEmpty());
  const api::Job& a0 = c.Job("test-js-replicated-job-a-0");
  EXPECT_EQ(a0.metadata().labels().at(kJobRestartAttemptKey), "1");
  EXPECT_FALSE(JobFinished(a0));
  EXPECT_EQ(c.Job("test-js-replicated-job-b-1").metadata().uid(), b1_uid);
}

TEST(RestartTest, RestartJobAndIgnoreMaxRestartsCountsNothing) {
  Cluster c(
      T().FailurePolicy(0).Rule("RestartJobAndIgnoreMaxRestarts").Build());
  c.Settle();
  FailJob(&c.Job("test-js-replicated-job-b-2"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_THAT(c.RJob(1).job_restarts(), ElementsAre(0, 0, 1));
  EXPECT_THAT(c.RJob(1).job_restarts_count_towards_max(), IsEmpty());
  EXPECT_FALSE(c.ConditionTrue(kConditionFailed));
}

// 71.
TEST(RestartTest, InOrderSequenceStartsOverAfterARestart) {
  Cluster c(T().StartupPolicy("InOrder").FailurePolicy(1).Build());
  c.Settle();
  EXPECT_EQ(c.Names().size(), 1u);
  c.ReadyAll("replicated-job-a");
  c.Settle();
  c.ReadyAll("replicated-job-b");
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionStartupPolicyCompleted));
  FailJob(&c.Job("test-js-replicated-job-b-1"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  EXPECT_THAT(c.Names(), ElementsAre("test-js-replicated-job-a-0"));
  EXPECT_TRUE(c.ConditionTrue(kConditionStartupPolicyInProgress));
  EXPECT_FALSE(c.ConditionTrue(kConditionStartupPolicyCompleted));
  c.ReadyAll("replicated-job-a");
  c.Settle();
  c.ReadyAll("replicated-job-b");
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionStartupPolicyCompleted));
  EXPECT_THAT(c.Attempts(),
              ElementsAre(std::pair<const std::string, int>("1", 4)));
}

// 72, 73.
TEST(SuspendTest, CreatedSuspendedThenResumedWithMergedTemplate) {
  Cluster c(T().Suspend().Build());
  c.Settle();
  EXPECT_EQ(c.Names().size(), 4u);
  for (const api::Job& job : c.Jobs()) EXPECT_TRUE(job.spec().suspend());
  EXPECT_EQ(c.Condition(kConditionSuspended)->reason(), "SuspendedJobs");
  EXPECT_EQ(c.RJob(0).suspended(), 1);
  EXPECT_EQ(c.RJob(1).suspended(), 3);

  api::PodTemplateSpec* tmpl = c.jobset_.mutable_spec()
                                   ->mutable_replicated_jobs(1)
                                   ->mutable_template_()
                                   ->mutable_spec()
                                   ->mutable_template_();
  (*tmpl->mutable_metadata()->mutable_labels())["queue"] = "gold";
  (*tmpl->mutable_spec()->mutable_node_selector())["pool"] = "a100";
  c.jobset_.mutable_spec()->set_suspend(false);
  c.Settle();
  for (const api::Job& job : c.Jobs()) EXPECT_FALSE(job.spec().suspend());
  api::Job b0 = c.Job("test-js-replicated-job-b-0");
  ExpandJob(&b0);
  EXPECT_EQ(b0.spec().template_().metadata().labels().at("queue"), "gold");
  // Merged, not replaced: the controller's labels are still there.
  EXPECT_EQ(b0.spec().template_().metadata().labels().at(kJobIndexKey), "0");
  EXPECT_EQ(b0.spec().template_().spec().node_selector().at("pool"), "a100");
  EXPECT_EQ(c.Condition(kConditionSuspended)->status(), "False");
  EXPECT_EQ(c.Condition(kConditionSuspended)->reason(), "ResumeJobs");
  c.CompleteAll();
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionCompleted));
}

// 74.
TEST(SuspendTest, SuspendingARunningJobSetSuspendsEveryJob) {
  Cluster c(T().Build());
  c.Settle();
  c.jobset_.mutable_spec()->set_suspend(true);
  c.Settle();
  for (const api::Job& job : c.Jobs()) EXPECT_TRUE(job.spec().suspend());
  EXPECT_TRUE(c.ConditionTrue(kConditionSuspended));
}

// 80.
TEST(StartupTest, InOrderResumeUnsuspendsOneReplicatedJobAtATime) {
  Cluster c(T().StartupPolicy("InOrder").Suspend().Build());
  c.Settle();
  EXPECT_EQ(c.Names().size(), 4u);  // 78: all created while suspended.
  c.jobset_.mutable_spec()->set_suspend(false);
  c.Settle();
  EXPECT_FALSE(c.Job("test-js-replicated-job-a-0").spec().suspend());
  EXPECT_TRUE(c.Job("test-js-replicated-job-b-0").spec().suspend());
  EXPECT_TRUE(c.ConditionTrue(kConditionSuspended));  // Until the last one.
  c.ReadyAll("replicated-job-a");
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionStartupPolicyInProgress));
  EXPECT_FALSE(c.Job("test-js-replicated-job-b-0").spec().suspend());
  c.ReadyAll("replicated-job-b");
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionStartupPolicyCompleted));
  EXPECT_FALSE(c.ConditionTrue(kConditionSuspended));
  EXPECT_EQ(c.RJob(1).ready(), 3);
  EXPECT_EQ(c.RJob(1).suspended(), 0);
}

// 83.
TEST(StartupTest, DependsOnChain) {
  Cluster c(JobSetBuilder("chain")
                .Replicated("a", 1)
                .Replicated("b", 1)
                .Replicated("c", 3)
                .DependsOn("b", "a", "Complete")
                .DependsOn("c", "b", "Ready")
                .Build());
  c.Settle();
  EXPECT_EQ(c.Names().size(), 1u);
  c.CompleteAll("a");
  c.Settle();
  EXPECT_EQ(c.Names().size(), 2u);
  c.ReadyAll("b");
  c.Settle();
  EXPECT_EQ(c.Names().size(), 5u);
  c.CompleteAll();
  c.Settle();
  EXPECT_TRUE(c.ConditionTrue(kConditionCompleted));
  EXPECT_EQ(c.RJob(2).succeeded(), 3);
}

// 86.
TEST(StartupTest, DependsOnWhileSuspended) {
  Cluster c(JobSetBuilder("dep")
                .Replicated("rjob-a", 1)
                .Replicated("rjob-b", 3)
                .DependsOn("rjob-b", "rjob-a", "Ready")
                .Suspend()
                .Build());
  c.Settle();
  EXPECT_THAT(c.Names(), ElementsAre("dep-rjob-a-0"));
  c.jobset_.mutable_spec()->set_suspend(false);
  c.Settle();
  EXPECT_FALSE(c.Job("dep-rjob-a-0").spec().suspend());
  EXPECT_EQ(c.Names().size(), 1u);
  c.ReadyAll("rjob-a");
  c.Settle();
  EXPECT_EQ(c.Names().size(), 4u);
  EXPECT_FALSE(c.Job("dep-rjob-b-2").spec().suspend());
}

// 88.
TEST(ManagedByTest, AnotherControllerIsLeftAlone) {
  JobSet js = T().ManagedBy("example.com/other-controller").Build();
  js.mutable_status()->set_restarts(1);
  Cluster c(js);
  c.Settle();
  EXPECT_THAT(c.Names(), IsEmpty());
  EXPECT_EQ(c.jobset_.status().restarts(), 1);
}

// 89.
TEST(TtlTest, DeletesTheJobSetTtlAfterItFinished) {
  Cluster c(T().TtlSecondsAfterFinished(30).Build());
  c.Settle();
  FailJob(&c.Job("test-js-replicated-job-a-0"), "BackoffLimitExceeded", "",
          c.now_);
  c.Settle();
  ASSERT_TRUE(c.ConditionTrue(kConditionFailed));
  EXPECT_FALSE(c.deleted_);
  ASSERT_TRUE(c.requeue_at_.has_value());
  c.now_ = *c.requeue_at_;
  c.Settle();
  EXPECT_TRUE(c.deleted_);
}

}  // namespace
}  // namespace jobset::scheduler
