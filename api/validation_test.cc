#include "api/validation.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int32_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Returns the JobSet of `builder` after defaulting and then `mutate`.
JobSet Defaulted(JobSetBuilder builder,
                 const std::function<void(JobSet*)>& mutate = nullptr) {
  JobSet jobset = builder.Build();
  SetJobSetDefaults(&jobset);
  if (mutate) mutate(&jobset);
  return jobset;
}

// Upstream's standard fixture T: "test-js" with replicated-job-a (1 replica,
// restartPolicy Never) and replicated-job-b (3 replicas).
JobSetBuilder Standard() {
  return JobSetBuilder("test-js")
      .Replicated("replicated-job-a", 1)
      .RestartPolicy("replicated-job-a", "Never")
      .Replicated("replicated-job-b", 3);
}

// Returns the Job template spec of the ReplicatedJob at index `rjob`.
JobSpec* MutableJob(JobSet* jobset, int rjob) {
  return jobset->mutable_spec()
      ->mutable_replicated_jobs(rjob)
      ->mutable_template_()
      ->mutable_spec();
}

// Returns the pod template of the ReplicatedJob at index `rjob`.
PodTemplateSpec* MutablePod(JobSet* jobset, int rjob) {
  return MutableJob(jobset, rjob)->mutable_template_();
}

// ---------------------------------------------------------------------------
// Create.

// A JobSet to create and the outcome: accepted when `error` is empty,
// otherwise kInvalidArgument with `error` in the message.
struct CreateCase {
  CreateCase(std::string name, JobSet jobset, std::string error,
             Features features = {})
      : name(std::move(name)),
        jobset(std::move(jobset)),
        error(std::move(error)),
        features(features) {}

  std::string name;
  JobSet jobset;
  std::string error;
  Features features;
};

// Prints a case by name in test failure messages.
void PrintTo(const CreateCase& c, std::ostream* os) { *os << c.name; }

// Returns the create cases: upstream scenarios 5.C 21-36 and the schema and
// metadata rules, each accepted and rejected.
std::vector<CreateCase> CreateCases() {
  const Features restart_job{.restart_job = true};
  const Features in_place{.in_place_restart = true};
  // A ReplicatedJob that the InPlaceRestart strategy accepts.
  const auto in_place_ready = [](JobSet* js) {
    js->mutable_spec()->mutable_failure_policy()->set_restart_strategy(
        "InPlaceRestart");
    MutableJob(js, 0)->set_backoff_limit(kMaxInt32);
  };
  return {
      // Accepted shapes.
      {"Standard", Defaulted(Standard()), ""},
      {"Minimal", Defaulted(JobSetBuilder("train").Replicated("workers", 4)),
       ""},
      {"NoReplicatedJobs", Defaulted(JobSetBuilder("empty")), ""},
      {"ZeroReplicas", Defaulted(Standard().Replicated("none", 0)), ""},
      {"GenerateName",
       Defaulted(JobSetBuilder("x").GenerateName("train-").Replicated("w", 2)),
       ""},

      // Metadata.
      {"NameMissing",
       Defaulted(Standard(),
                 [](JobSet* js) { js->mutable_metadata()->clear_name(); }),
       "metadata.name: Required value: name or generateName is required"},
      {"NameNotSubdomain", Defaulted(JobSetBuilder("Bad_Name")),
       "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
       "subdomain"},
      // A valid object name whose dots still make child Job names invalid.
      {"NameWithDots", Defaulted(JobSetBuilder("my.js").Replicated("rj", 1)),
       "spec.replicatedJobs[0].name: Invalid value: \"my.js-rj-0\": a "
       "DNS-1035 label"},
      {"GenerateNameInvalid",
       Defaulted(JobSetBuilder("x").GenerateName("Bad-")),
       "metadata.generateName: Invalid value: \"Bad-\""},
      {"NamespaceInvalid", Defaulted(Standard().Namespace("Team_A")),
       "metadata.namespace: Invalid value: \"Team_A\""},
      {"LabelKeyInvalid", Defaulted(Standard().Label("bad key", "v")),
       "metadata.labels[bad key]: Invalid value: \"bad key\": name part must "
       "consist"},
      {"LabelValueInvalid", Defaulted(Standard().Label("team", "-a")),
       "metadata.labels[team]: Invalid value: \"-a\": a valid label must be"},
      {"LabelsValid",
       Defaulted(Standard().Label("example.com/team", "ml").Label("tier", "")),
       ""},
      {"AnnotationKeyInvalid", Defaulted(Standard().Annotation("a/b/c", "v")),
       "metadata.annotations[a/b/c]: Invalid value: \"a/b/c\": a qualified "
       "name"},
      {"AnnotationKeyUppercaseValid",
       Defaulted(Standard().Annotation("Example.com/Note", "anything at all")),
       ""},
      {"AnnotationsTooLarge",
       Defaulted(Standard().Annotation("big", std::string(256 * 1024, 'x'))),
       "metadata.annotations: Too long: may not be more than 262144 bytes"},
      {"ApiVersionWrong",
       Defaulted(Standard(),
                 [](JobSet* js) { js->set_api_version("jobset.x-k8s.io/v1"); }),
       "apiVersion: Unsupported value: \"jobset.x-k8s.io/v1\""},

      // 21: success policy.
      {"SuccessTargetMissing",
       Defaulted(Standard().SuccessPolicy("All", {"does-not-exist"})),
       "spec.successPolicy.targetReplicatedJobs[0]: Invalid value: "
       "\"does-not-exist\": invalid replicatedJob name 'does-not-exist' does "
       "not appear in .spec.ReplicatedJobs"},
      {"SuccessTargetExists",
       Defaulted(Standard().SuccessPolicy("Any", {"replicated-job-b"})), ""},
      {"SuccessOperatorUnsupported",
       Defaulted(Standard().SuccessPolicy("Some")),
       "spec.successPolicy.operator: Unsupported value: \"Some\": supported "
       "values: \"All\", \"Any\""},
      {"SuccessOperatorMissing", Defaulted(Standard().SuccessPolicy("")),
       "spec.successPolicy.operator: Required value"},

      // 22, 5: replicas; 34: replicas x parallelism.
      {"ReplicasNegative", Defaulted(Standard().Replicated("neg", -1)),
       "spec.replicatedJobs[2].replicas: Invalid value: -1: must be greater "
       "than or equal to 0"},
      {"ReplicasTimesParallelismOverflows",
       Defaulted(JobSetBuilder("js").Replicated("rj", kMaxInt32, kMaxInt32,
                                                kMaxInt32)),
       "spec.replicatedJobs[0].replicas: Invalid value: 2147483647: the "
       "product of replicas and parallelism must not exceed 2147483647 for "
       "replicatedJob 'rj'"},
      {"ReplicasTimesUnsetParallelismFits",
       Defaulted(JobSetBuilder("js").Replicated("rj", 1),
                 [](JobSet* js) {
                   js->mutable_spec()->mutable_replicated_jobs(0)->set_replicas(
                       kMaxInt32);
                   MutableJob(js, 0)->clear_parallelism();
                   MutableJob(js, 0)->clear_completions();
                   MutableJob(js, 0)->set_completion_mode("NonIndexed");
                 }),
       ""},

      // ReplicatedJob names.
      {"ReplicatedJobNameMissing", Defaulted(Standard().Replicated("", 1)),
       "spec.replicatedJobs[2].name: Required value"},
      {"ReplicatedJobNameDuplicate",
       Defaulted(Standard().Replicated("replicated-job-a", 1)),
       "spec.replicatedJobs[2].name: Duplicate value: \"replicated-job-a\""},
      // 26.
      {"ReplicatedJobNameNotDns1035",
       Defaulted(JobSetBuilder("js").Replicated("username.llama65b", 1)),
       "spec.replicatedJobs[0].name: Invalid value: "
       "\"js-username.llama65b-0\": a DNS-1035 label must consist of lower "
       "case alphanumeric characters"},
      {"TemplateMissing",
       Defaulted(
           Standard(),
           [](JobSet* js) {
             js->mutable_spec()->mutable_replicated_jobs(1)->clear_template_();
           }),
       "spec.replicatedJobs[1].template: Required value"},
      {"TemplateValidated",
       Defaulted(Standard(),
                 [](JobSet* js) {
                   MutablePod(js, 1)
                       ->mutable_spec()
                       ->mutable_containers(0)
                       ->clear_image();
                 }),
       "spec.replicatedJobs[1].template.spec.template.spec.containers[0]."
       "image: Required value"},

      // 23, 24, 25, 7, 8: generated names.
      {"JobNameTooLong",
       Defaulted(JobSetBuilder(std::string(62, 'a')).Replicated("rj", 101)),
       "spec.replicatedJobs[0].name: Invalid value: \"" + std::string(62, 'a') +
           "-rj-100\": JobSet name is too long, job names generated for this "
           "JobSet will exceed 63 characters"},
      {"JobNameLongestFits",
       Defaulted(JobSetBuilder(std::string(58, 'a')).Replicated("rj", 10),
                 [](JobSet* js) {
                   MutableJob(js, 0)->set_completion_mode("NonIndexed");
                 }),
       ""},
      {"PodNameTooLong",
       Defaulted(JobSetBuilder(std::string(56, 'a')).Replicated("rj", 1)),
       "JobSet name is too long, pod names generated for this JobSet will "
       "exceed 63 characters"},
      {"PodNameLongestFits",
       Defaulted(JobSetBuilder(std::string(49, 'a')).Replicated("rj", 1)), ""},
      {"PodNameUncheckedForNonIndexed",
       Defaulted(JobSetBuilder(std::string(56, 'a')).Replicated("rj", 1),
                 [](JobSet* js) {
                   MutableJob(js, 0)->set_completion_mode("NonIndexed");
                 }),
       ""},
      {"GenerateNameJobNameTooLong",
       Defaulted(JobSetBuilder("x")
                     .GenerateName(std::string(49, 'a') + "-")
                     .Replicated("worker", 1)),
       "JobSet name is too long, job names generated for this JobSet will "
       "exceed 63 characters"},

      // 27, 6: group names.
      {"GroupNameTooLong",
       Defaulted(
           Standard().GroupName("replicated-job-b", std::string(64, 'g'))),
       "spec.replicatedJobs[1].groupName: Invalid value: \"" +
           std::string(64, 'g') +
           "\": .spec.replicatedJob[].groupName is too long, must be less than "
           "63 characters"},
      {"GroupNameNotDns1035",
       Defaulted(Standard().GroupName("replicated-job-b", "Group_B")),
       "spec.replicatedJobs[1].groupName: Invalid value: \"Group_B\": a "
       "DNS-1035 label"},
      {"GroupNameValid",
       Defaulted(Standard().GroupName("replicated-job-b", "group-b")), ""},

      // 28, 3: subdomain.
      {"SubdomainInvalid", Defaulted(Standard().Subdomain("bad_subdomain")),
       "spec.network.subdomain: Invalid value: \"bad_subdomain\": a lowercase "
       "RFC 1123 subdomain"},
      {"SubdomainWithDots", Defaulted(Standard().Subdomain("a.b")),
       "spec.network.subdomain: Invalid value: \"a.b\": a DNS-1035 label"},
      {"SubdomainTooLong",
       Defaulted(Standard().Subdomain(std::string(64, 's'))),
       ".spec.network.subdomain is too long, must be less than 63 characters"},
      {"SubdomainValid", Defaulted(Standard().Subdomain("network-subdomain")),
       ""},

      // 29, 4: managedBy.
      {"ManagedByNotDomainPrefixed", Defaulted(Standard().ManagedBy("foo")),
       "spec.managedBy: Invalid value: \"foo\": must be a domain-prefixed "
       "path (such as \"acme.io/foo\")"},
      {"ManagedByTooLong",
       Defaulted(Standard().ManagedBy("example.com/" + std::string(60, 'f'))),
       "spec.managedBy: Too long: may not be more than 63 bytes"},
      {"ManagedByEmpty", Defaulted(Standard().ManagedBy("")),
       "spec.managedBy: Required value"},
      {"ManagedByValid", Defaulted(Standard().ManagedBy("example.com/foo")),
       ""},

      // TTL.
      {"TtlNegative", Defaulted(Standard().TtlSecondsAfterFinished(-1)),
       "spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than "
       "or equal to 0"},
      {"TtlZero", Defaulted(Standard().TtlSecondsAfterFinished(0)), ""},

      // 30, 12: failure policy.
      {"FailurePolicyValid",
       Defaulted(Standard()
                     .FailurePolicy(3)
                     .RestartStrategy("BlockingRecreate")
                     .Rule("FailJobSet",
                           {"PodFailurePolicy", "DeadlineExceeded"},
                           {"replicated-job-a"}, "fatal_errors:x,y")
                     .Rule("RestartJobSetAndIgnoreMaxRestarts")),
       ""},
      {"FailureReasonUnknown",
       Defaulted(Standard().FailurePolicy(1).Rule("FailJobSet",
                                                  {"PodFailurePolicy_Custom"})),
       "spec.failurePolicy.rules[0].onJobFailureReasons[0]: Invalid value: "
       "\"PodFailurePolicy_Custom\": invalid job failure reason "
       "'PodFailurePolicy_Custom' in failure policy is not a recognized job "
       "failure reason"},
      {"FailureReasonDuplicate",
       Defaulted(Standard().FailurePolicy(1).Rule(
           "FailJobSet", {"PodFailurePolicy", "PodFailurePolicy"})),
       "spec.failurePolicy.rules[0].onJobFailureReasons[1]: Duplicate value"},
      {"FailureTargetUnknown",
       Defaulted(Standard().FailurePolicy(1).Rule("FailJobSet", {}, {"nope"})),
       "spec.failurePolicy.rules[0].targetReplicatedJobs[0]: Invalid value: "
       "\"nope\": invalid replicatedJob name 'nope' in failure policy does not "
       "appear in .spec.ReplicatedJobs"},
      {"FailureRuleNameTooLong",
       Defaulted(Standard().FailurePolicy(1).Rule("FailJobSet", {}, {},
                                                  std::string(129, 'r'))),
       "invalid failure policy rule name of length 129, the rule name must be "
       "at least 1 characters long and at most 128 characters long"},
      {"FailureRuleNameLongestFits",
       Defaulted(Standard().FailurePolicy(1).Rule("FailJobSet", {}, {},
                                                  std::string(128, 'r'))),
       ""},
      {"FailureRuleNameDuplicate",
       Defaulted(Standard()
                     .FailurePolicy(1)
                     .Rule("FailJobSet", {}, {}, "same")
                     .Rule("RestartJobSet", {}, {}, "same")),
       "spec.failurePolicy.rules[1].name: Duplicate value: \"same\""},
      {"FailureRuleNameStartsWithDigit",
       Defaulted(
           Standard().FailurePolicy(1).Rule("FailJobSet", {}, {}, "1rule")),
       "spec.failurePolicy.rules[0].name: Invalid value: \"1rule\": invalid "
       "failure policy rule name '1rule'"},
      {"FailureRuleNameEndsWithColon",
       Defaulted(
           Standard().FailurePolicy(1).Rule("FailJobSet", {}, {}, "rule:")),
       "spec.failurePolicy.rules[0].name: Invalid value: \"rule:\""},
      {"FailureRuleNameMissing",
       Defaulted(Standard().FailurePolicy(1).Rule("FailJobSet"),
                 [](JobSet* js) {
                   js->mutable_spec()
                       ->mutable_failure_policy()
                       ->mutable_rules(0)
                       ->clear_name();
                 }),
       "spec.failurePolicy.rules[0].name: Required value"},
      {"FailureActionUnsupported",
       Defaulted(Standard().FailurePolicy(1).Rule("Explode")),
       "spec.failurePolicy.rules[0].action: Unsupported value: \"Explode\""},
      {"FailureActionMissing", Defaulted(Standard().FailurePolicy(1).Rule("")),
       "spec.failurePolicy.rules[0].action: Required value"},
      {"FailureRestartStrategyUnsupported",
       Defaulted(Standard().RestartStrategy("Sometimes")),
       "spec.failurePolicy.restartStrategy: Unsupported value: \"Sometimes\""},
      {"FailureMaxRestartsNegative", Defaulted(Standard().FailurePolicy(-1)),
       "spec.failurePolicy.maxRestarts: Invalid value: -1: must be greater "
       "than or equal to 0"},

      // 31: RestartJob actions.
      {"RestartJobGateOff",
       Defaulted(Standard().FailurePolicy(1).Rule("RestartJob")),
       "spec.failurePolicy.rules[0].action: Forbidden: RestartJob and "
       "RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed "
       "when RestartJob feature gate is disabled"},
      {"RestartJobAndIgnoreMaxRestartsGateOff",
       Defaulted(Standard()
                     .FailurePolicy(1)
                     .Rule("FailJobSet")
                     .Rule("RestartJobAndIgnoreMaxRestarts")),
       "spec.failurePolicy.rules[1].action: Forbidden"},
      {"RestartJobGateOn",
       Defaulted(Standard()
                     .Replicated("big", 1024)
                     .FailurePolicy(1)
                     .Rule("RestartJob")),
       "", restart_job},
      {"RestartJobTooManyReplicas",
       Defaulted(Standard()
                     .Replicated("big", 1025)
                     .FailurePolicy(1)
                     .Rule("RestartJobAndIgnoreMaxRestarts")),
       "spec.replicatedJobs[2].replicas: Invalid value: 1025: JobSet cannot "
       "have a failure policy rule with RestartJob or "
       "RestartJobAndIgnoreMaxRestarts action and a replicated job with "
       "replicas > 1024",
       restart_job},

      // 36, 10, 1: in-place restart.
      {"InPlaceRestartGateOff",
       Defaulted(Standard().RestartStrategy("InPlaceRestart")),
       "spec.failurePolicy.restartStrategy: Forbidden: InPlaceRestart restart "
       "strategy cannot be set when InPlaceRestart feature gate is disabled"},
      {"InPlaceRestartValid",
       Defaulted(JobSetBuilder("js").Replicated("rj", 2, 4, 4), in_place_ready),
       "", in_place},
      {"InPlaceRestartBackoffLimitNotMax",
       Defaulted(JobSetBuilder("js").Replicated("rj", 2, 4, 4),
                 [&](JobSet* js) {
                   in_place_ready(js);
                   MutableJob(js, 0)->set_backoff_limit(6);
                 }),
       "spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: 6: "
       "replicatedJob rj: must be set to 2147483647 (MaxInt32) when in-place "
       "restart is enabled",
       in_place},
      {"InPlaceRestartBackoffLimitUnset",
       Defaulted(JobSetBuilder("js").Replicated("rj", 2, 4, 4),
                 [&](JobSet* js) {
                   in_place_ready(js);
                   MutableJob(js, 0)->clear_backoff_limit();
                 }),
       "spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: "
       "null",
       in_place},
      {"InPlaceRestartCompletionsNotParallelism",
       Defaulted(JobSetBuilder("js").Replicated("rj", 2, 4, 2), in_place_ready),
       "spec.replicatedJobs[0].template.spec.completions: Invalid value: 2: "
       "replicatedJob rj: completions and parallelism must be set and equal to "
       "each other when in-place restart is enabled",
       in_place},
      {"InPlaceRestartCompletionsUnset",
       Defaulted(JobSetBuilder("js").Replicated("rj", 2, 4, 4),
                 [&](JobSet* js) {
                   in_place_ready(js);
                   MutableJob(js, 0)->clear_completions();
                   MutableJob(js, 0)->set_completion_mode("NonIndexed");
                 }),
       "spec.replicatedJobs[0].template.spec.completions: Invalid value: null",
       in_place},

      // Startup policy; 33: dependsOn.
      {"StartupOrderUnsupported", Defaulted(Standard().StartupPolicy("Random")),
       "spec.startupPolicy.startupPolicyOrder: Unsupported value: \"Random\""},
      {"InOrderValid", Defaulted(Standard().StartupPolicy("InOrder")), ""},
      {"InOrderWithDependsOn",
       Defaulted(Standard().StartupPolicy("InOrder").DependsOn(
           "replicated-job-b", "replicated-job-a", "Ready")),
       "spec: Invalid value: \"object\": StartupPolicy and DependsOn APIs are "
       "mutually exclusive"},
      {"AnyOrderWithDependsOn",
       Defaulted(
           Standard()
               .StartupPolicy("AnyOrder")
               .DependsOn("replicated-job-b", "replicated-job-a", "Ready")),
       ""},
      {"DependsOnFirst",
       Defaulted(Standard().DependsOn("replicated-job-a", "replicated-job-a",
                                      "Ready")),
       "spec.replicatedJobs[0].dependsOn: Forbidden: DependsOn can't be set "
       "for the first ReplicatedJob"},
      {"DependsOnForward",
       Defaulted(JobSetBuilder("js")
                     .Replicated("job-1", 1)
                     .Replicated("job-2", 1)
                     .Replicated("job-3", 1)
                     .DependsOn("job-2", "job-3", "Complete")),
       "spec.replicatedJobs[1].dependsOn[0].name: Invalid value: \"job-3\": "
       "replicatedJob: job-2 cannot depend on replicatedJob: job-3"},
      {"DependsOnMultipleEarlier",
       Defaulted(JobSetBuilder("js")
                     .Replicated("job-1", 1)
                     .Replicated("job-2", 1)
                     .Replicated("job-3", 1)
                     .DependsOn("job-3", "job-1", "Complete")
                     .DependsOn("job-3", "job-2", "Ready")),
       ""},
      // Upstream quirk, kept: a later ReplicatedJob may name itself.
      {"DependsOnSelf",
       Defaulted(JobSetBuilder("js")
                     .Replicated("job-1", 1)
                     .Replicated("job-2", 1)
                     .DependsOn("job-2", "job-2", "Ready")),
       ""},
      {"DependsOnStatusUnsupported",
       Defaulted(Standard().DependsOn("replicated-job-b", "replicated-job-a",
                                      "Failed")),
       "spec.replicatedJobs[1].dependsOn[0].status: Unsupported value: "
       "\"Failed\": supported values: \"Ready\", \"Complete\""},
      {"DependsOnNameDuplicate",
       Defaulted(
           Standard()
               .DependsOn("replicated-job-b", "replicated-job-a", "Ready")
               .DependsOn("replicated-job-b", "replicated-job-a", "Complete")),
       "spec.replicatedJobs[1].dependsOn[1].name: Duplicate value: "
       "\"replicated-job-a\""},
      {"DependsOnTooMany",
       Defaulted(JobSetBuilder("js")
                     .Replicated("a", 1)
                     .Replicated("b", 1)
                     .Replicated("c", 1)
                     .Replicated("d", 1)
                     .Replicated("e", 1)
                     .Replicated("f", 1)
                     .Replicated("g", 1)
                     .DependsOn("g", "a", "Ready")
                     .DependsOn("g", "b", "Ready")
                     .DependsOn("g", "c", "Ready")
                     .DependsOn("g", "d", "Ready")
                     .DependsOn("g", "e", "Ready")
                     .DependsOn("g", "f", "Ready")),
       "spec.replicatedJobs[6].dependsOn: Too many: 6: must have at most 5 "
       "items"},

      // 32, 13: coordinator.
      {"CoordinatorValid",
       Defaulted(Standard().Coordinator("replicated-job-b", 2, 0)), ""},
      {"CoordinatorUnknownReplicatedJob",
       Defaulted(Standard().Coordinator("nope", 0, 0)),
       "spec.coordinator.replicatedJob: Invalid value: \"nope\": coordinator "
       "replicatedJob nope does not exist"},
      {"CoordinatorReplicatedJobMissing",
       Defaulted(Standard().Coordinator("", 0, 0)),
       "spec.coordinator.replicatedJob: Required value"},
      {"CoordinatorJobIndexTooLarge",
       Defaulted(Standard().Coordinator("replicated-job-b", 3, 0)),
       "spec.coordinator.jobIndex: Invalid value: 3: coordinator job index 3 "
       "is invalid for replicatedJob replicated-job-b"},
      {"CoordinatorJobIndexNegative",
       Defaulted(Standard().Coordinator("replicated-job-b", -1, 0)),
       "spec.coordinator.jobIndex: Invalid value: -1"},
      {"CoordinatorWithoutCompletions",
       Defaulted(Standard().Coordinator("replicated-job-b", 0, 0),
                 [](JobSet* js) {
                   MutableJob(js, 1)->clear_completions();
                   MutableJob(js, 1)->clear_parallelism();
                 }),
       "spec.coordinator.replicatedJob: Invalid value: \"replicated-job-b\": "
       "job for coordinator pod must be indexed completion mode, and "
       "completions number must be set"},
      {"CoordinatorNonIndexed",
       Defaulted(Standard()
                     .CompletionMode("replicated-job-b", "NonIndexed")
                     .Coordinator("replicated-job-b", 0, 0)),
       "job for coordinator pod must be indexed completion mode"},
      {"CoordinatorPodIndexTooLarge",
       Defaulted(Standard().Coordinator("replicated-job-b", 0, 1)),
       "spec.coordinator.podIndex: Invalid value: 1: coordinator pod index 1 "
       "is invalid for replicatedJob replicated-job-b job index 0"},
      {"CoordinatorLongJobSetName",
       Defaulted(JobSetBuilder(std::string(60, 'a'))
                     .Replicated("rj", 1)
                     .Coordinator("rj", 0, 0)),
       "spec.coordinator: Invalid value: \"" + std::string(60, 'a') +
           "-rj-0-0." + std::string(60, 'a') +
           "\": spec will lead to invalid label value"},
      {"CoordinatorLongReplicatedJobName",
       Defaulted(JobSetBuilder("js")
                     .Replicated(std::string(55, 'r'), 1)
                     .Subdomain("sub")
                     .Coordinator(std::string(55, 'r'), 0, 0)),
       "spec.coordinator: Invalid value"},
      {"CoordinatorLongSubdomain",
       Defaulted(Standard()
                     .Subdomain(std::string(40, 's'))
                     .Coordinator("replicated-job-a", 0, 0)),
       "for coordinator label \"jobset.sigs.k8s.io/coordinator\" (long JobSet "
       "/ ReplicatedJob / SubDomain name?): must be no more than 63 "
       "characters"},

      // 35: volume claim policies.
      {"VolumeClaimPoliciesUnsupported",
       Defaulted(
           Standard(),
           [](JobSet* js) {
             js->mutable_spec()->add_volume_claim_policies()->add_templates();
           }),
       "spec.volumeClaimPolicies: Forbidden: volume claim policies are not "
       "supported by jobsetd; use hostPath or emptyDir volumes"},
  };
}

class ValidateJobSetCreateTest : public ::testing::TestWithParam<CreateCase> {};

TEST_P(ValidateJobSetCreateTest, Outcome) {
  const CreateCase& c = GetParam();
  // Upstream's rules alone: jobsetd's attempt-size limits (ValidateLimitsTest)
  // would refuse the int32 edge cases first.
  Limits unbounded;
  unbounded.max_jobs_per_jobset = std::numeric_limits<int64_t>::max();
  unbounded.max_pods_per_jobset = std::numeric_limits<int64_t>::max();
  const absl::Status status =
      ValidateJobSetCreate(c.jobset, c.features, unbounded);
  if (c.error.empty()) {
    EXPECT_THAT(status, IsOk());
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.error)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ValidateJobSetCreateTest,
                         ::testing::ValuesIn(CreateCases()),
                         [](const ::testing::TestParamInfo<CreateCase>& info) {
                           return info.param.name;
                         });

TEST(ValidateJobSetTest, ReportsEveryErrorTogether) {
  JobSet jobset = Defaulted(Standard()
                                .Replicated("replicated-job-a", -1)
                                .SuccessPolicy("Some", {"nope"})
                                .Subdomain("Bad")
                                .TtlSecondsAfterFinished(-5)
                                .FailurePolicy(1)
                                .Rule("FailJobSet", {}, {}, "9"));
  const FieldErrors errors = ValidateJobSet(jobset);
  const auto has_path = [](absl::string_view path) {
    return Contains(Field(&FieldError::path, path));
  };
  EXPECT_THAT(errors.errors(), has_path("spec.replicatedJobs[2].name"));
  EXPECT_THAT(errors.errors(), has_path("spec.replicatedJobs[2].replicas"));
  EXPECT_THAT(errors.errors(), has_path("spec.successPolicy.operator"));
  EXPECT_THAT(errors.errors(),
              has_path("spec.successPolicy.targetReplicatedJobs[0]"));
  EXPECT_THAT(errors.errors(), has_path("spec.network.subdomain"));
  EXPECT_THAT(errors.errors(), has_path("spec.ttlSecondsAfterFinished"));
  EXPECT_THAT(errors.errors(), has_path("spec.failurePolicy.rules[0].name"));

  EXPECT_THAT(
      ValidateJobSetCreate(jobset),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("JobSet \"test-js\" is invalid: "),
                     HasSubstr("; spec.successPolicy.operator: Unsupported "
                               "value: \"Some\""),
                     HasSubstr("; spec.ttlSecondsAfterFinished: Invalid "
                               "value: -5"))));
}

TEST(ValidateJobSetTest, StatusNamesGenerateName) {
  JobSet jobset = Defaulted(JobSetBuilder("x")
                                .GenerateName("train-")
                                .Replicated("w", 1)
                                .TtlSecondsAfterFinished(-1));
  EXPECT_THAT(ValidateJobSetCreate(jobset),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("JobSet \"train-\" is invalid: ")));
}

TEST(ValidateJobSetTest, NeverCrashesWithoutDefaults) {
  EXPECT_THAT(ValidateJobSet(JobSet()).errors(),
              Contains(Field(&FieldError::path, "metadata.name")));

  JobSet odd = JobSetBuilder("js")
                   .Replicated("a", std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::min(), 0)
                   .Coordinator("a", kMaxInt32, kMaxInt32)
                   .Build();
  odd.mutable_spec()->add_replicated_jobs()->add_depends_on();
  odd.mutable_spec()->mutable_failure_policy()->add_rules();
  EXPECT_FALSE(ValidateJobSet(odd).empty());
}

TEST(ValidateJobSetTest, DefaultedBuilderJobSetIsValid) {
  JobSet jobset = JobSetBuilder("train").Replicated("workers", 4).Build();
  SetJobSetDefaults(&jobset);
  EXPECT_TRUE(ValidateJobSet(jobset).empty())
      << ValidateJobSet(jobset).ToStatus("JobSet");
}

// ---------------------------------------------------------------------------
// Update.

// An update from `old_jobset` to `new_jobset` and the outcome, as CreateCase.
struct UpdateCase {
  UpdateCase(std::string name, JobSet old_jobset, JobSet new_jobset,
             std::string error, Features features = {})
      : name(std::move(name)),
        old_jobset(std::move(old_jobset)),
        new_jobset(std::move(new_jobset)),
        error(std::move(error)),
        features(features) {}

  std::string name;
  JobSet old_jobset;
  JobSet new_jobset;
  std::string error;
  Features features;
};

// Prints a case by name in test failure messages.
void PrintTo(const UpdateCase& c, std::ostream* os) { *os << c.name; }

// Returns `base` after `mutate`.
JobSet Changed(const JobSet& base, const std::function<void(JobSet*)>& mutate) {
  JobSet jobset = base;
  mutate(&jobset);
  return jobset;
}

// Returns the update cases: upstream scenarios 5.D 37-40 and the metadata
// rules.
std::vector<UpdateCase> UpdateCases() {
  const JobSet running = Defaulted(
      Standard()
          .Label("team", "ml")
          .SuccessPolicy("All", {"replicated-job-b"})
          .FailurePolicy(3)
          .Rule("RestartJobSet")
          .ManagedBy("example.com/foo")
          .DependsOn("replicated-job-b", "replicated-job-a", "Ready"));
  const JobSet suspended = Changed(
      running, [](JobSet* js) { js->mutable_spec()->set_suspend(true); });
  const Features elastic{.elastic_jobset = true};
  const auto scale_b = [](int32_t parallelism, int32_t completions) {
    return [=](JobSet* js) {
      MutableJob(js, 1)->set_parallelism(parallelism);
      MutableJob(js, 1)->set_completions(completions);
    };
  };
  const auto add_pod_label = [](JobSet* js) {
    (*MutablePod(js, 1)->mutable_metadata()->mutable_labels())["kueue"] = "q";
  };
  const auto node_selector = [](JobSet* js) {
    (*MutablePod(js, 1)->mutable_spec()->mutable_node_selector())["pool"] = "a";
  };
  const auto add_toleration = [](JobSet* js) {
    Toleration* toleration =
        MutablePod(js, 1)->mutable_spec()->add_tolerations();
    toleration->set_key("gpu");
    toleration->set_operator_("Exists");
  };
  const auto pod_annotation = [](JobSet* js) {
    (*MutablePod(js, 0)->mutable_metadata()->mutable_annotations())["a"] = "b";
  };
  return {
      // 37.
      {"Unchanged", running, running, ""},
      {"Suspend", running, suspended, ""},
      {"Resume", suspended, running, ""},
      {"ChangeLabels", running,
       Changed(running,
               [](JobSet* js) {
                 (*js->mutable_metadata()->mutable_labels())["team"] = "infra";
                 (*js->mutable_metadata()->mutable_annotations())["note"] = "x";
               }),
       ""},
      {"ChangeTtl", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->set_ttl_seconds_after_finished(60);
               }),
       ""},
      {"ChangeCoordinator", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_coordinator()->set_replicated_job(
                     "replicated-job-b");
               }),
       ""},
      {"InvalidLabel", running,
       Changed(running,
               [](JobSet* js) {
                 (*js->mutable_metadata()->mutable_labels())["team"] = "-x";
               }),
       "metadata.labels[team]: Invalid value: \"-x\""},
      {"NegativeTtl", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->set_ttl_seconds_after_finished(-1);
               }),
       "spec.ttlSecondsAfterFinished: Invalid value: -1"},

      // Metadata.
      {"ChangeName", running,
       Changed(running,
               [](JobSet* js) { js->mutable_metadata()->set_name("other"); }),
       "metadata.name: Invalid value: \"other\": field is immutable"},
      {"ChangeNamespace", running,
       Changed(
           running,
           [](JobSet* js) { js->mutable_metadata()->set_namespace_("other"); }),
       "metadata.namespace: Invalid value: \"other\": field is immutable"},
      {"ChangeUid",
       Changed(running,
               [](JobSet* js) { js->mutable_metadata()->set_uid("u1"); }),
       Changed(running,
               [](JobSet* js) { js->mutable_metadata()->set_uid("u2"); }),
       "metadata.uid: Invalid value: \"u2\": field is immutable"},
      {"UidOmitted",
       Changed(running,
               [](JobSet* js) { js->mutable_metadata()->set_uid("u1"); }),
       running, ""},

      // 38.
      {"ChangeSuccessPolicy", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()
                     ->mutable_success_policy()
                     ->clear_target_replicated_jobs();
               }),
       "spec.successPolicy: Invalid value: \"object\": field is immutable"},
      {"ChangeFailurePolicy", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_failure_policy()->set_max_restarts(
                     21);
               }),
       "spec.failurePolicy: Invalid value: \"object\": field is immutable"},
      {"AddFailurePolicy",
       Changed(running,
               [](JobSet* js) { js->mutable_spec()->clear_failure_policy(); }),
       running, "spec.failurePolicy: Invalid value"},
      {"ChangeStartupPolicy", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()
                     ->mutable_startup_policy()
                     ->set_startup_policy_order("InOrder");
               }),
       "spec.startupPolicy: Invalid value: \"object\": field is immutable"},
      {"ChangeNetwork", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_network()->set_subdomain("net");
               }),
       "spec.network: Invalid value: \"object\": field is immutable"},
      {"ChangeVolumeClaimPolicies", running,
       Changed(
           running,
           [](JobSet* js) { js->mutable_spec()->add_volume_claim_policies(); }),
       "spec.volumeClaimPolicies: Invalid value: \"array\": field is "
       "immutable"},
      {"ChangeManagedBy", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->set_managed_by("example.com/bar");
               }),
       "spec.managedBy: Invalid value: \"example.com/bar\": field is "
       "immutable"},
      {"RemoveManagedBy", running,
       Changed(running,
               [](JobSet* js) { js->mutable_spec()->clear_managed_by(); }),
       "spec.managedBy: Invalid value: null: field is immutable"},
      {"ChangeDependsOnStatus", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 js->mutable_spec()
                     ->mutable_replicated_jobs(1)
                     ->mutable_depends_on(0)
                     ->set_status("Complete");
               }),
       "spec.replicatedJobs[1].dependsOn: Invalid value: \"array\": field is "
       "immutable"},

      // 39.
      {"RunningNodeSelector", running, Changed(running, node_selector),
       "spec.replicatedJobs: Invalid value: \"array\": field is immutable"},
      {"RunningPodAnnotations", running, Changed(running, pod_annotation),
       "spec.replicatedJobs: Invalid value: \"array\": field is immutable"},
      {"RunningReplicas", running,
       Changed(running,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_replicated_jobs(1)->set_replicas(
                     4);
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedPodLabels", suspended, Changed(suspended, add_pod_label), ""},
      {"SuspendedPodAnnotations", suspended, Changed(suspended, pod_annotation),
       ""},
      {"SuspendedNodeSelector", suspended, Changed(suspended, node_selector),
       ""},
      {"SuspendedTolerations", suspended, Changed(suspended, add_toleration),
       ""},
      {"SuspendingWithSchedulingChanges", running,
       Changed(suspended,
               [&](JobSet* js) {
                 add_pod_label(js);
                 node_selector(js);
                 add_toleration(js);
               }),
       ""},
      {"ResumingWithSchedulingChanges", suspended,
       Changed(running, node_selector), ""},
      {"SuspendedRemoveSchedulingFields",
       Changed(suspended,
               [&](JobSet* js) {
                 add_pod_label(js);
                 node_selector(js);
               }),
       suspended, ""},
      {"SuspendedHostname", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 MutablePod(js, 1)->mutable_spec()->set_hostname("h");
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedSubdomain", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 MutablePod(js, 1)->mutable_spec()->set_subdomain("s");
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedImage", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 MutablePod(js, 1)
                     ->mutable_spec()
                     ->mutable_containers(0)
                     ->set_image("busybox:2");
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedJobTemplateLabels", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 (*js->mutable_spec()
                       ->mutable_replicated_jobs(1)
                       ->mutable_template_()
                       ->mutable_metadata()
                       ->mutable_labels())["x"] = "y";
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedAddReplicatedJob", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 *js->mutable_spec()->add_replicated_jobs() =
                     js->spec().replicated_jobs(0);
                 js->mutable_spec()->mutable_replicated_jobs(2)->set_name("c");
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedRenameReplicatedJob", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_replicated_jobs(0)->set_name("c");
               }),
       "spec.replicatedJobs: Invalid value"},
      {"SuspendedReorderReplicatedJobs", suspended,
       Changed(suspended,
               [](JobSet* js) {
                 js->mutable_spec()->mutable_replicated_jobs()->SwapElements(0,
                                                                             1);
               }),
       "spec.replicatedJobs: Invalid value"},

      // 40.
      {"ElasticScaleUp", running, Changed(running, scale_b(4, 4)), "", elastic},
      {"ElasticScaleDown", Changed(running, scale_b(4, 4)),
       Changed(running, scale_b(2, 2)), "", elastic},
      {"ElasticGateOff", running, Changed(running, scale_b(4, 4)),
       "spec.replicatedJobs: Invalid value: \"array\": field is immutable"},
      {"ElasticUnequal", running, Changed(running, scale_b(4, 2)),
       "spec.replicatedJobs[1].template.spec.completions: Invalid value: 2: "
       "completions must be equal to parallelism for Elastic Indexed Jobs",
       elastic},
      {"ElasticZero", running, Changed(running, scale_b(0, 0)),
       "spec.replicatedJobs[1].template.spec.parallelism: Invalid value: 0: "
       "parallelism must be >= 1",
       elastic},
      {"ElasticNonIndexed",
       Changed(running,
               [](JobSet* js) {
                 MutableJob(js, 1)->set_completion_mode("NonIndexed");
               }),
       Changed(running,
               [&](JobSet* js) {
                 MutableJob(js, 1)->set_completion_mode("NonIndexed");
                 scale_b(4, 4)(js);
               }),
       "spec.replicatedJobs: Invalid value", elastic},
      {"ElasticCompleted",
       Changed(running,
               [](JobSet* js) {
                 Condition* condition = js->mutable_status()->add_conditions();
                 condition->set_type("Completed");
                 condition->set_status("True");
               }),
       Changed(running, scale_b(4, 4)),
       "spec.replicatedJobs[1].template.spec: Forbidden: Cannot mutate "
       "parallelism or completions when JobSet is in a terminal state "
       "(Completed or Failed)",
       elastic},
      {"ElasticFailed",
       Changed(running,
               [](JobSet* js) {
                 js->mutable_status()->set_terminal_state("Failed");
               }),
       Changed(running, scale_b(4, 4)),
       "spec.replicatedJobs[1].template.spec: Forbidden", elastic},
      {"ElasticOtherFieldStillImmutable", running,
       Changed(running,
               [&](JobSet* js) {
                 scale_b(4, 4)(js);
                 MutableJob(js, 1)->set_backoff_limit(1);
               }),
       "spec.replicatedJobs: Invalid value", elastic},
  };
}

class ValidateJobSetUpdateTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(ValidateJobSetUpdateTest, Outcome) {
  const UpdateCase& c = GetParam();
  const absl::Status status =
      ValidateJobSetUpdate(c.old_jobset, c.new_jobset, c.features);
  if (c.error.empty()) {
    EXPECT_THAT(status, IsOk());
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.error)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ValidateJobSetUpdateTest,
                         ::testing::ValuesIn(UpdateCases()),
                         [](const ::testing::TestParamInfo<UpdateCase>& info) {
                           return info.param.name;
                         });

TEST(ValidateJobSetUpdateTest, ReportsEveryErrorTogether) {
  const JobSet old_jobset = Defaulted(Standard().FailurePolicy(1));
  JobSet new_jobset = old_jobset;
  new_jobset.mutable_metadata()->set_name("renamed");
  new_jobset.mutable_spec()->mutable_failure_policy()->set_max_restarts(2);
  new_jobset.mutable_spec()->mutable_success_policy()->set_operator_("Any");
  new_jobset.mutable_spec()->mutable_replicated_jobs(0)->set_replicas(2);
  EXPECT_THAT(
      ValidateJobSetUpdate(old_jobset, new_jobset),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("JobSet \"renamed\" is invalid: metadata.name"),
                     HasSubstr("; spec.successPolicy: "),
                     HasSubstr("; spec.failurePolicy: "),
                     HasSubstr("; spec.replicatedJobs: "))));
}

TEST(ValidateJobSetUpdateTest, IgnoresMapOrder) {
  JobSet old_jobset = Defaulted(Standard());
  JobSet new_jobset = old_jobset;
  auto* old_labels = old_jobset.mutable_spec()
                         ->mutable_replicated_jobs(1)
                         ->mutable_template_()
                         ->mutable_metadata()
                         ->mutable_labels();
  auto* new_labels = new_jobset.mutable_spec()
                         ->mutable_replicated_jobs(1)
                         ->mutable_template_()
                         ->mutable_metadata()
                         ->mutable_labels();
  for (int i = 0; i < 50; ++i) {
    (*old_labels)[absl::StrCat("key-", i)] = "v";
    (*new_labels)[absl::StrCat("key-", 49 - i)] = "v";
  }
  EXPECT_THAT(ValidateJobSetUpdate(old_jobset, new_jobset), IsOk());
  (*new_labels)["key-0"] = "changed";
  EXPECT_THAT(ValidateJobSetUpdate(old_jobset, new_jobset),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.replicatedJobs: Invalid value")));
}

TEST(ValidateJobSetUpdateTest, DoesNotRerunCreateRules) {
  // Already-stored objects are not re-judged by create-time rules that may
  // have changed since.
  JobSet stored =
      Defaulted(JobSetBuilder(std::string(62, 'a')).Replicated("rj", 101));
  ASSERT_THAT(ValidateJobSetCreate(stored), Not(IsOk()));
  JobSet suspended = stored;
  suspended.mutable_spec()->set_suspend(true);
  EXPECT_THAT(ValidateJobSetUpdate(stored, suspended), IsOk());
}

// Finding 3 of issue 19: `replicas: 2000000000` passed validation (the
// product fits in an int32) and the controller ran out of memory expanding
// it.
TEST(ValidateLimitsTest, TwoBillionReplicasAreRefusedNamingThePodLimit) {
  JobSet jobset = JobSetBuilder("huge").Replicated("workers", 1).Build();
  jobset.mutable_spec()->mutable_replicated_jobs(0)->set_replicas(2000000000);
  SetJobSetDefaults(&jobset);
  EXPECT_THAT(
      ValidateJobSetCreate(jobset, Features(), Limits()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("spec.replicatedJobs[0].replicas: Invalid "
                               "value: 2000000000"),
                     HasSubstr("2000000000 pods per attempt"),
                     HasSubstr("the limit is 100000 (jobsetd "
                               "--max_pods_per_jobset)"),
                     HasSubstr("the limit is 20000 (jobsetd "
                               "--max_jobs_per_jobset)"))));
}

TEST(ValidateLimitsTest, PodsAreSummedOverReplicatedJobs) {
  Limits limits;
  limits.max_pods_per_jobset = 100;
  // 4 x 10 + 6 x 10 = 100 pods: at the limit.
  JobSet at = JobSetBuilder("train")
                  .Replicated("a", 4, /*parallelism=*/10, /*completions=*/10)
                  .Replicated("b", 6, 10, 10)
                  .Build();
  SetJobSetDefaults(&at);
  EXPECT_THAT(ValidateJobSetCreate(at, Features(), limits), IsOk());
  // 4 x 10 + 7 x 10 = 110: reported at the ReplicatedJob that crosses it.
  JobSet over = JobSetBuilder("train")
                    .Replicated("a", 4, 10, 10)
                    .Replicated("b", 7, 10, 10)
                    .Build();
  SetJobSetDefaults(&over);
  EXPECT_THAT(ValidateJobSetCreate(over, Features(), limits),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("spec.replicatedJobs[1].replicas: "
                                       "Invalid value: 7: the JobSet would "
                                       "have 110 pods per attempt"),
                             HasSubstr("the limit is 100"))));
}

TEST(ValidateLimitsTest, JobsAreSummedOverReplicatedJobs) {
  Limits limits;
  limits.max_jobs_per_jobset = 10;
  JobSet at = JobSetBuilder("train")
                  .Replicated("a", 4, /*parallelism=*/0, /*completions=*/0)
                  .Replicated("b", 6)
                  .Build();
  SetJobSetDefaults(&at);
  EXPECT_THAT(ValidateJobSetCreate(at, Features(), limits), IsOk());
  JobSet over = JobSetBuilder("train")
                    .Replicated("a", 4, 0, 0)
                    .Replicated("b", 7)
                    .Build();
  SetJobSetDefaults(&over);
  EXPECT_THAT(
      ValidateJobSetCreate(over, Features(), limits),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("spec.replicatedJobs[1].replicas: Invalid value: 7: "
                         "the JobSet would have 11 Jobs per attempt")));
}

TEST(ValidateLimitsTest, MetadataLabelAndAnnotationBytes) {
  Limits limits;
  limits.max_label_bytes = 10;
  limits.max_annotation_bytes = 10;
  JobSet jobset = JobSetBuilder("train")
                      .Label("team", "research")
                      .Annotation("note", "a long note")
                      .Build();
  SetJobSetDefaults(&jobset);
  EXPECT_THAT(
      ValidateJobSetCreate(jobset, Features(), limits),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("metadata.labels: Too long: may not be more "
                               "than 10 bytes (12 bytes; jobsetd "
                               "--max_label_bytes)"),
                     HasSubstr("metadata.annotations: Too long: may not be "
                               "more than 10 bytes (15 bytes; jobsetd "
                               "--max_annotation_bytes)"))));
  EXPECT_THAT(ValidateJobSetCreate(jobset), IsOk());
  // An update is held to them too.
  JobSet old = JobSetBuilder("train").Build();
  SetJobSetDefaults(&old);
  EXPECT_THAT(ValidateJobSetUpdate(old, jobset, Features(), limits),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.labels: Too long")));
}

// With ElasticJobSet an update may grow parallelism: the pod limit holds.
TEST(ValidateLimitsTest, ElasticUpdateCannotGrowPastThePodLimit) {
  Limits limits;
  limits.max_pods_per_jobset = 8;
  Features features;
  features.elastic_jobset = true;
  JobSet old = JobSetBuilder("train").Replicated("w", 2, 4, 4).Build();
  SetJobSetDefaults(&old);
  JobSet grown = old;
  JobSpec* job = grown.mutable_spec()
                     ->mutable_replicated_jobs(0)
                     ->mutable_template_()
                     ->mutable_spec();
  job->set_parallelism(5);
  job->set_completions(5);
  EXPECT_THAT(ValidateJobSetUpdate(old, grown, features, limits),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("10 pods per attempt")));
  // Shrinking is fine, and so is an update that leaves an over-limit JobSet
  // (admitted under a higher limit) as large as it was.
  job->set_parallelism(3);
  job->set_completions(3);
  EXPECT_THAT(ValidateJobSetUpdate(old, grown, features, limits), IsOk());
  limits.max_pods_per_jobset = 4;
  JobSet suspended = old;
  suspended.mutable_spec()->set_suspend(true);
  EXPECT_THAT(ValidateJobSetUpdate(old, suspended, features, limits), IsOk());
}

}  // namespace
}  // namespace jobset::api
