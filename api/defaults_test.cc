#include "api/defaults.h"

#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::api::testing::JobSetBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Returns `jobset` after defaulting.
JobSet Defaulted(JobSet jobset) {
  SetJobSetDefaults(&jobset);
  return jobset;
}

// Returns the Job template spec of the ReplicatedJob at index `rjob`.
const JobSpec& JobOf(const JobSet& jobset, int rjob) {
  return jobset.spec().replicated_jobs(rjob).template_().spec();
}

TEST(SetJobSetDefaultsTest, TypeMetaAndNamespace) {
  JobSet jobset = JobSetBuilder("train").Build();
  jobset.clear_api_version();
  jobset.clear_kind();
  jobset.mutable_metadata()->clear_namespace_();
  JobSet got = Defaulted(jobset);
  EXPECT_EQ(got.api_version(), "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(got.kind(), "JobSet");
  EXPECT_EQ(got.metadata().namespace_(), "default");

  EXPECT_EQ(Defaulted(JobSetBuilder("train").Namespace("team-a").Build())
                .metadata()
                .namespace_(),
            "team-a");
}

// Scenario 15.
TEST(SetJobSetDefaultsTest, CompletionModeIndexedUnlessSet) {
  JobSet got = Defaulted(JobSetBuilder("js")
                             .Replicated("a", 1)
                             .Replicated("b", 1)
                             .CompletionMode("b", "NonIndexed")
                             .Build());
  EXPECT_EQ(JobOf(got, 0).completion_mode(), "Indexed");
  EXPECT_EQ(JobOf(got, 1).completion_mode(), "NonIndexed");
}

// Scenario 16.
TEST(SetJobSetDefaultsTest, NetworkDnsHostnamesAndPublishNotReady) {
  JobSet got = Defaulted(JobSetBuilder("js").Replicated("a", 1).Build());
  ASSERT_TRUE(got.spec().has_network());
  EXPECT_TRUE(got.spec().network().has_enable_dns_hostnames());
  EXPECT_TRUE(got.spec().network().enable_dns_hostnames());
  EXPECT_TRUE(got.spec().network().has_publish_not_ready_addresses());
  EXPECT_TRUE(got.spec().network().publish_not_ready_addresses());
  // The subdomain is the controller's to resolve.
  EXPECT_THAT(got.spec().network().subdomain(), IsEmpty());

  JobSet explicit_false = JobSetBuilder("js").EnableDnsHostnames(false).Build();
  explicit_false.mutable_spec()
      ->mutable_network()
      ->set_publish_not_ready_addresses(false);
  got = Defaulted(explicit_false);
  EXPECT_FALSE(got.spec().network().enable_dns_hostnames());
  EXPECT_FALSE(got.spec().network().publish_not_ready_addresses());
}

// Scenario 17.
TEST(SetJobSetDefaultsTest, PodRestartPolicyOnFailureUnlessSet) {
  JobSet got = Defaulted(JobSetBuilder("js")
                             .Replicated("a", 1)
                             .Replicated("b", 1)
                             .RestartPolicy("b", "Never")
                             .Build());
  EXPECT_EQ(JobOf(got, 0).template_().spec().restart_policy(), "OnFailure");
  EXPECT_EQ(JobOf(got, 1).template_().spec().restart_policy(), "Never");
}

// Scenario 18.
TEST(SetJobSetDefaultsTest, SuccessAndStartupPolicies) {
  JobSet got = Defaulted(JobSetBuilder("js").Replicated("a", 1).Build());
  EXPECT_EQ(got.spec().success_policy().operator_(), "All");
  EXPECT_THAT(got.spec().success_policy().target_replicated_jobs(), IsEmpty());
  EXPECT_EQ(got.spec().startup_policy().startup_policy_order(), "AnyOrder");

  got = Defaulted(JobSetBuilder("js")
                      .Replicated("a", 1)
                      .SuccessPolicy("Any", {"a"})
                      .StartupPolicy("InOrder")
                      .Build());
  EXPECT_EQ(got.spec().success_policy().operator_(), "Any");
  EXPECT_THAT(got.spec().success_policy().target_replicated_jobs(),
              ElementsAre("a"));
  EXPECT_EQ(got.spec().startup_policy().startup_policy_order(), "InOrder");
}

// Scenario 19.
TEST(SetJobSetDefaultsTest, FailurePolicyRestartStrategyAndRuleNames) {
  JobSet empty_policy = JobSetBuilder("js").Replicated("a", 1).Build();
  empty_policy.mutable_spec()->mutable_failure_policy();
  EXPECT_EQ(Defaulted(empty_policy).spec().failure_policy().restart_strategy(),
            "Recreate");

  JobSet got = Defaulted(JobSetBuilder("js")
                             .Replicated("a", 1)
                             .RestartStrategy("BlockingRecreate")
                             .Rule("FailJobSet", {}, {}, "first")
                             .Rule("RestartJobSet")
                             .Rule("FailJobSet")
                             .Build());
  const FailurePolicy& policy = got.spec().failure_policy();
  EXPECT_EQ(policy.restart_strategy(), "BlockingRecreate");
  ASSERT_EQ(policy.rules_size(), 3);
  EXPECT_EQ(policy.rules(0).name(), "first");
  EXPECT_EQ(policy.rules(1).name(), "failurePolicyRule1");
  EXPECT_EQ(policy.rules(2).name(), "failurePolicyRule2");
}

TEST(SetJobSetDefaultsTest, NoFailurePolicyStaysAbsent) {
  EXPECT_FALSE(Defaulted(JobSetBuilder("js").Replicated("a", 1).Build())
                   .spec()
                   .has_failure_policy());
}

// Scenario 20.
TEST(SetJobSetDefaultsTest, VolumeClaimPolicyRetention) {
  JobSet jobset = JobSetBuilder("js").Replicated("a", 1).Build();
  jobset.mutable_spec()->add_volume_claim_policies();
  jobset.mutable_spec()
      ->add_volume_claim_policies()
      ->mutable_retention_policy()
      ->set_when_deleted("Retain");
  JobSet got = Defaulted(jobset);
  EXPECT_EQ(
      got.spec().volume_claim_policies(0).retention_policy().when_deleted(),
      "Delete");
  EXPECT_EQ(
      got.spec().volume_claim_policies(1).retention_policy().when_deleted(),
      "Retain");
}

// Scenario 20.
TEST(SetJobSetDefaultsTest, ReplicasAndGroupName) {
  JobSet jobset = JobSetBuilder("js")
                      .Replicated("a", 1)
                      .Replicated("b", 0)
                      .Replicated("c", 3)
                      .GroupName("c", "group-c")
                      .Build();
  jobset.mutable_spec()->mutable_replicated_jobs(0)->clear_replicas();
  JobSet got = Defaulted(jobset);
  EXPECT_EQ(got.spec().replicated_jobs(0).replicas(), 1);
  EXPECT_EQ(got.spec().replicated_jobs(1).replicas(), 0);
  EXPECT_EQ(got.spec().replicated_jobs(2).replicas(), 3);
  EXPECT_EQ(got.spec().replicated_jobs(0).group_name(), "default");
  EXPECT_EQ(got.spec().replicated_jobs(2).group_name(), "group-c");
}

// Scenario 20.
TEST(SetJobSetDefaultsTest, ManagedByStaysUnset) {
  EXPECT_FALSE(Defaulted(JobSetBuilder("js").Replicated("a", 1).Build())
                   .spec()
                   .has_managed_by());
}

TEST(SetJobSetDefaultsTest, LeavesJobLevelKubernetesDefaultsAlone) {
  JobSet jobset = JobSetBuilder("js").Replicated("a", 1).Build();
  JobSpec* job = jobset.mutable_spec()
                     ->mutable_replicated_jobs(0)
                     ->mutable_template_()
                     ->mutable_spec();
  job->clear_parallelism();
  job->clear_completions();
  JobSet got = Defaulted(jobset);
  EXPECT_FALSE(JobOf(got, 0).has_parallelism());
  EXPECT_FALSE(JobOf(got, 0).has_completions());
  EXPECT_FALSE(JobOf(got, 0).has_backoff_limit());
}

TEST(SetJobSetDefaultsTest, ImagePullPolicyFollowsTheTagAsKubernetes) {
  JobSet jobset = JobSetBuilder("js").Replicated("a", 1).Build();
  PodSpec* pod = jobset.mutable_spec()
                     ->mutable_replicated_jobs(0)
                     ->mutable_template_()
                     ->mutable_spec()
                     ->mutable_template_()
                     ->mutable_spec();
  pod->clear_containers();
  const auto add = [](auto* list, const char* image, const char* policy) {
    Container* c = list->Add();
    c->set_image(image);
    c->set_image_pull_policy(policy);
  };
  add(pod->mutable_containers(), "busybox", "");
  add(pod->mutable_containers(), "busybox:latest", "");
  add(pod->mutable_containers(), "python:3.11", "");
  add(pod->mutable_containers(), "busybox", "Never");
  add(pod->mutable_init_containers(), "127.0.0.1:5000/init:v1", "");
  const JobSet defaulted = Defaulted(jobset);
  const PodSpec& got = JobOf(defaulted, 0).template_().spec();
  EXPECT_EQ(got.containers(0).image_pull_policy(), "Always");
  EXPECT_EQ(got.containers(1).image_pull_policy(), "Always");
  EXPECT_EQ(got.containers(2).image_pull_policy(), "IfNotPresent");
  EXPECT_EQ(got.containers(3).image_pull_policy(), "Never");
  EXPECT_EQ(got.init_containers(0).image_pull_policy(), "IfNotPresent");
}

TEST(SetJobSetDefaultsTest, Idempotent) {
  JobSet jobset = JobSetBuilder("js")
                      .Replicated("a", 1)
                      .Replicated("b", 2)
                      .FailurePolicy(2)
                      .Rule("RestartJobSet")
                      .Rule("FailJobSet")
                      .Build();
  jobset.mutable_spec()->add_volume_claim_policies();
  JobSet once = Defaulted(jobset);
  JobSet twice = Defaulted(once);
  EXPECT_TRUE(MessageDifferencer::Equals(once, twice))
      << once.ShortDebugString() << "\nvs\n"
      << twice.ShortDebugString();
  EXPECT_FALSE(MessageDifferencer::Equals(jobset, once));
}

}  // namespace
}  // namespace jobset::api
