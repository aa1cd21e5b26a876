#include "api/validation.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "api/resilience_annotations.h"
#include "api/template_validation.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;

constexpr int32_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr int kMaxDependsOn = 5;
constexpr int kMaxManagedByLength = 63;
constexpr int kMaxRuleNameLength = 128;
// RestartJob keeps per-Job counters in lists of at most this many items.
constexpr int kMaxReplicasForRestartJob = 1024;
// Kubernetes' generateName keeps at most this much of the prefix before
// appending 5 random characters.
constexpr size_t kMaxGenerateNamePrefix = 63 - 5;

constexpr absl::string_view kImmutable = "field is immutable";
constexpr absl::string_view kMustBeNonNegative =
    "must be greater than or equal to 0";

// Upstream's replacements for IsDns1035Label's "must be no more than 63
// characters" (pkg/webhooks/jobset_webhook.go).
constexpr absl::string_view kDns1035TooLong =
    "must be no more than 63 characters";
constexpr absl::string_view kGroupNameTooLong =
    ".spec.replicatedJob[].groupName is too long, must be less than 63 "
    "characters";
constexpr absl::string_view kJobNameTooLong =
    "JobSet name is too long, job names generated for this JobSet will exceed "
    "63 characters";
constexpr absl::string_view kPodNameTooLong =
    "JobSet name is too long, pod names generated for this JobSet will exceed "
    "63 characters";
constexpr absl::string_view kSubdomainTooLong =
    ".spec.network.subdomain is too long, must be less than 63 characters";

constexpr absl::string_view kIndexed = "Indexed";
constexpr absl::string_view kInOrder = "InOrder";
constexpr absl::string_view kInPlaceRestart = "InPlaceRestart";
constexpr absl::string_view kCoordinatorKey = "jobset.sigs.k8s.io/coordinator";

constexpr absl::string_view kOperators[] = {"All", "Any"};
constexpr absl::string_view kStartupOrders[] = {"AnyOrder", "InOrder"};
constexpr absl::string_view kDependsOnStatuses[] = {"Ready", "Complete"};
constexpr absl::string_view kRestartStrategies[] = {
    "Recreate", "BlockingRecreate", "InPlaceRestart"};
constexpr absl::string_view kActions[] = {
    "FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts",
    "RestartJob", "RestartJobAndIgnoreMaxRestarts"};
constexpr absl::string_view kRestartJobActions[] = {
    "RestartJob", "RestartJobAndIgnoreMaxRestarts"};
// The reasons batch/v1 gives a failed Job.
constexpr absl::string_view kJobFailureReasons[] = {
    "BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes",
    "MaxFailedIndexesExceeded", "PodFailurePolicy"};

// Returns the replicas of `rjob`, 1 when unset as the CRD defaults it.
int64_t Replicas(const ReplicatedJob& rjob) {
  return rjob.has_replicas() ? rjob.replicas() : 1;
}

// Returns whether `values` holds `value`.
bool Contains(absl::Span<const absl::string_view> values,
              absl::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Reports `path: Invalid value: null: detail`, Kubernetes' wording for an
// unset pointer.
void InvalidNull(absl::string_view path, absl::string_view detail,
                 FieldErrors* errors) {
  errors->Add(path, absl::StrCat("Invalid value: null: ", detail));
}

// Reports an empty `value` as required, or one outside `supported`.
void ValidateEnum(absl::string_view path, absl::string_view value,
                  absl::Span<const absl::string_view> supported,
                  FieldErrors* errors) {
  if (value.empty()) {
    errors->Required(path);
  } else if (!Contains(supported, value)) {
    errors->NotSupported(path, value, supported);
  }
}

// Returns the name that the JobSet's children will be named after: the name,
// or for generateName the name Kubernetes would generate (the prefix cut to
// 58 characters plus 5 random ones, here a fixed stand-in).
std::string NameForValidation(const ObjectMeta& meta) {
  if (!meta.name().empty()) return meta.name();
  if (meta.generate_name().empty()) return "";
  return absl::StrCat(
      absl::string_view(meta.generate_name()).substr(0, kMaxGenerateNamePrefix),
      "abcde");
}

// Validates a namespaced object's metadata on create, as ValidateObjectMeta.
void ValidateObjectMeta(const ObjectMeta& meta, const Limits& limits,
                        FieldErrors* errors) {
  if (!meta.generate_name().empty()) {
    // A prefix may end in '-': Kubernetes validates it with that dash masked.
    std::string prefix = meta.generate_name();
    if (prefix.size() > 1 && prefix.back() == '-') prefix.back() = 'a';
    for (const std::string& error : IsDns1123Subdomain(prefix)) {
      errors->Invalid("metadata.generateName", meta.generate_name(), error);
    }
  }
  if (meta.name().empty()) {
    if (meta.generate_name().empty()) {
      errors->Required("metadata.name", "name or generateName is required");
    }
  } else {
    for (const std::string& error : IsDns1123Subdomain(meta.name())) {
      errors->Invalid("metadata.name", meta.name(), error);
    }
  }
  if (meta.namespace_().empty()) {
    errors->Required("metadata.namespace");
  } else {
    for (const std::string& error : IsDns1123Label(meta.namespace_())) {
      errors->Invalid("metadata.namespace", meta.namespace_(), error);
    }
  }
  ValidateLabels(meta.labels(), "metadata.labels", errors,
                 limits.max_label_bytes);
  ValidateAnnotations(meta.annotations(), "metadata.annotations", errors,
                      limits.max_annotation_bytes);
  // jobsetd's addition: the resilience annotations' values.
  ValidateResilienceAnnotations(meta.annotations(), "metadata.annotations",
                                errors);
}

// Validates apiVersion and kind when set (SetJobSetDefaults fills them in).
void ValidateTypeMeta(const JobSet& jobset, FieldErrors* errors) {
  constexpr absl::string_view kApiVersions[] = {"jobset.x-k8s.io/v1alpha2"};
  constexpr absl::string_view kKinds[] = {"JobSet"};
  if (!jobset.api_version().empty() &&
      !Contains(kApiVersions, jobset.api_version())) {
    errors->NotSupported("apiVersion", jobset.api_version(), kApiVersions);
  }
  if (!jobset.kind().empty() && !Contains(kKinds, jobset.kind())) {
    errors->NotSupported("kind", jobset.kind(), kKinds);
  }
}

// Reports each problem IsDns1035Label finds with `value`, its too-long
// message replaced by `too_long` as upstream does.
void ValidateDns1035Label(absl::string_view path, absl::string_view value,
                          absl::string_view too_long, FieldErrors* errors) {
  for (const std::string& error : IsDns1035Label(value)) {
    errors->Invalid(path, value, error == kDns1035TooLong ? too_long : error);
  }
}

// Validates spec.network: the subdomain names the headless Service, so it
// must be both a DNS-1123 subdomain and a DNS-1035 label.
void ValidateNetwork(const JobSetSpec& spec, FieldErrors* errors) {
  const std::string& subdomain = spec.network().subdomain();
  if (subdomain.empty()) return;
  constexpr absl::string_view kPath = "spec.network.subdomain";
  for (const std::string& error : IsDns1123Subdomain(subdomain)) {
    errors->Invalid(kPath, subdomain, error);
  }
  ValidateDns1035Label(kPath, subdomain, kSubdomainTooLong, errors);
}

// Validates spec.managedBy.
void ValidateManagedBy(const JobSetSpec& spec, FieldErrors* errors) {
  if (!spec.has_managed_by()) return;
  constexpr absl::string_view kPath = "spec.managedBy";
  const std::string& manager = spec.managed_by();
  if (manager.empty()) {
    errors->Required(kPath);
    return;
  }
  for (const std::string& error : IsDomainPrefixedPath(manager)) {
    errors->Invalid(kPath, manager, error);
  }
  if (manager.size() > kMaxManagedByLength) {
    errors->TooLong(kPath, kMaxManagedByLength);
  }
}

// Validates the dependsOn list of the ReplicatedJob at `index`. `earlier`
// holds the names of the ReplicatedJobs up to and including this one: as
// upstream, a ReplicatedJob other than the first may name itself.
void ValidateDependsOn(const ReplicatedJob& rjob, int index,
                       const std::set<std::string>& earlier,
                       absl::string_view rjob_path, FieldErrors* errors) {
  if (rjob.depends_on().empty()) return;
  const std::string path = Child(rjob_path, "dependsOn");
  if (index == 0) {
    errors->Forbidden(path,
                      "DependsOn can't be set for the first ReplicatedJob");
  }
  if (rjob.depends_on_size() > kMaxDependsOn) {
    errors->TooMany(path, rjob.depends_on_size(), kMaxDependsOn);
  }
  std::set<std::string> seen;
  for (int i = 0; i < rjob.depends_on_size(); ++i) {
    const DependsOn& dependency = rjob.depends_on(i);
    const std::string item_path = Index(path, i);
    const std::string name_path = Child(item_path, "name");
    if (dependency.name().empty()) {
      errors->Required(name_path);
    } else if (!seen.insert(dependency.name()).second) {
      errors->Duplicate(name_path, dependency.name());
    } else if (!earlier.contains(dependency.name())) {
      errors->Invalid(name_path, dependency.name(),
                      absl::StrFormat("replicatedJob: %s cannot depend on "
                                      "replicatedJob: %s",
                                      rjob.name(), dependency.name()));
    }
    ValidateEnum(Child(item_path, "status"), dependency.status(),
                 kDependsOnStatuses, errors);
  }
}

// Validates what the InPlaceRestart strategy needs of a Job template: Jobs
// that never fail on their own and whose pods all run at once.
void ValidateInPlaceRestartJob(const ReplicatedJob& rjob,
                               absl::string_view rjob_path,
                               FieldErrors* errors) {
  const JobSpec& job = rjob.template_().spec();
  const std::string job_path = Child(rjob_path, "template.spec");
  if (!job.has_backoff_limit() || job.backoff_limit() != kMaxInt32) {
    const std::string path = Child(job_path, "backoffLimit");
    const std::string detail = absl::StrFormat(
        "replicatedJob %s: must be set to %d (MaxInt32) when in-place restart "
        "is enabled",
        rjob.name(), kMaxInt32);
    if (job.has_backoff_limit()) {
      errors->Invalid(path, job.backoff_limit(), detail);
    } else {
      InvalidNull(path, detail, errors);
    }
  }
  if (!job.has_completions() || !job.has_parallelism() ||
      job.completions() != job.parallelism()) {
    const std::string path = Child(job_path, "completions");
    const std::string detail = absl::StrFormat(
        "replicatedJob %s: completions and parallelism must be set and equal "
        "to each other when in-place restart is enabled",
        rjob.name());
    if (job.has_completions()) {
      errors->Invalid(path, job.completions(), detail);
    } else {
      InvalidNull(path, detail, errors);
    }
  }
}

// Returns the Jobs and the pods of one attempt of `spec`.
std::pair<int64_t, int64_t> AttemptSize(const JobSetSpec& spec) {
  int64_t jobs = 0;
  int64_t pods = 0;
  for (const ReplicatedJob& rjob : spec.replicated_jobs()) {
    const int64_t replicas = std::max<int64_t>(Replicas(rjob), 0);
    const JobSpec& job = rjob.template_().spec();
    jobs += replicas;
    pods += replicas *
            std::max<int64_t>(job.has_parallelism() ? job.parallelism() : 1, 0);
  }
  return {jobs, pods};
}

// Validates the size of one attempt against `limits`: the Jobs (replicas)
// and pods (replicas x parallelism) summed over the replicatedJobs. Each
// total is reported once, at the replicas of the ReplicatedJob where it
// crosses its limit.
void ValidateAttemptSize(const JobSetSpec& spec, const Limits& limits,
                         FieldErrors* errors) {
  int64_t jobs = 0;
  int64_t pods = 0;
  bool jobs_reported = false;
  bool pods_reported = false;
  for (int i = 0; i < spec.replicated_jobs_size(); ++i) {
    const ReplicatedJob& rjob = spec.replicated_jobs(i);
    const int64_t replicas = std::max<int64_t>(Replicas(rjob), 0);
    const JobSpec& job = rjob.template_().spec();
    const int64_t parallelism =
        std::max<int64_t>(job.has_parallelism() ? job.parallelism() : 1, 0);
    // Both are int32s: neither the product nor the sums overflow.
    jobs += replicas;
    pods += replicas * parallelism;
    const std::string path = Child(Index("spec.replicatedJobs", i), "replicas");
    if (!jobs_reported && jobs > limits.max_jobs_per_jobset) {
      jobs_reported = true;
      errors->Invalid(
          path, replicas,
          absl::StrFormat("the JobSet would have %d Jobs per attempt "
                          "(replicas summed over replicatedJobs); the limit "
                          "is %d (jobsetd --max_jobs_per_jobset)",
                          jobs, limits.max_jobs_per_jobset));
    }
    if (!pods_reported && pods > limits.max_pods_per_jobset) {
      pods_reported = true;
      errors->Invalid(
          path, replicas,
          absl::StrFormat("the JobSet would have %d pods per attempt "
                          "(replicas x parallelism summed over "
                          "replicatedJobs); the limit is %d (jobsetd "
                          "--max_pods_per_jobset)",
                          pods, limits.max_pods_per_jobset));
    }
  }
}

// Validates each ReplicatedJob and returns their names.
std::set<std::string> ValidateReplicatedJobs(const JobSet& jobset,
                                             absl::string_view jobset_name,
                                             const Features& features,
                                             const Limits& limits,
                                             FieldErrors* errors) {
  const JobSetSpec& spec = jobset.spec();
  const bool in_place_restart =
      features.in_place_restart &&
      spec.failure_policy().restart_strategy() == kInPlaceRestart;
  std::set<std::string> names;
  for (int i = 0; i < spec.replicated_jobs_size(); ++i) {
    const ReplicatedJob& rjob = spec.replicated_jobs(i);
    const std::string path = Index("spec.replicatedJobs", i);
    const std::string name_path = Child(path, "name");
    if (rjob.name().empty()) {
      errors->Required(name_path);
    } else if (!names.insert(rjob.name()).second) {
      errors->Duplicate(name_path, rjob.name());
    }

    const int64_t replicas = Replicas(rjob);
    if (replicas < 0) {
      errors->Invalid(Child(path, "replicas"), replicas, kMustBeNonNegative);
    }
    const JobSpec& job = rjob.template_().spec();
    const int64_t parallelism = job.has_parallelism() ? job.parallelism() : 1;
    if (parallelism * replicas > kMaxInt32) {
      errors->Invalid(
          Child(path, "replicas"), replicas,
          absl::StrFormat("the product of replicas and parallelism must not "
                          "exceed %d for replicatedJob '%s'",
                          kMaxInt32, rjob.name()));
    }

    ValidateDns1035Label(Child(path, "groupName"), rjob.group_name(),
                         kGroupNameTooLong, errors);
    // The last Job and, for Indexed Jobs, its last pod get the longest names.
    const std::string longest_job_name =
        JobName(jobset_name, rjob.name(), replicas - 1);
    ValidateDns1035Label(name_path, longest_job_name, kJobNameTooLong, errors);
    if (job.completion_mode() == kIndexed && job.has_completions()) {
      const std::string longest_pod_name =
          absl::StrCat(PodHostname(jobset_name, rjob.name(), replicas - 1,
                                   int64_t{job.completions()} - 1),
                       "-abcde");
      // A pod name breaks the DNS-1035 format exactly when its Job name
      // does, and Kubernetes drops that duplicate error from the message, so
      // only the length is left to report. Upstream reports the Job name as
      // the invalid value here too.
      if (longest_pod_name.size() > kMaxLabelLength) {
        errors->Invalid(name_path, longest_job_name, kPodNameTooLong);
      }
    }

    // `names` now includes this ReplicatedJob, as upstream's check does.
    ValidateDependsOn(rjob, i, names, path, errors);
    if (in_place_restart) ValidateInPlaceRestartJob(rjob, path, errors);

    if (rjob.has_template_()) {
      ValidateJobTemplate(rjob.template_(), Child(path, "template"), limits,
                          errors);
    } else {
      errors->Required(Child(path, "template"));
    }
  }
  return names;
}

// Validates spec.startupPolicy, including the CEL rule that InOrder startup
// and dependsOn exclude each other.
void ValidateStartupPolicy(const JobSetSpec& spec, FieldErrors* errors) {
  if (!spec.has_startup_policy()) return;
  const std::string& order = spec.startup_policy().startup_policy_order();
  ValidateEnum("spec.startupPolicy.startupPolicyOrder", order, kStartupOrders,
               errors);
  if (order != kInOrder) return;
  for (const ReplicatedJob& rjob : spec.replicated_jobs()) {
    if (!rjob.depends_on().empty()) {
      errors->Invalid(
          "spec", "object",
          "StartupPolicy and DependsOn APIs are mutually exclusive");
      return;
    }
  }
}

// Validates spec.successPolicy.
void ValidateSuccessPolicy(const JobSetSpec& spec,
                           const std::set<std::string>& rjob_names,
                           FieldErrors* errors) {
  if (!spec.has_success_policy()) return;
  const SuccessPolicy& policy = spec.success_policy();
  ValidateEnum("spec.successPolicy.operator", policy.operator_(), kOperators,
               errors);
  for (int i = 0; i < policy.target_replicated_jobs_size(); ++i) {
    const std::string& target = policy.target_replicated_jobs(i);
    if (!rjob_names.contains(target)) {
      errors->Invalid(
          Index("spec.successPolicy.targetReplicatedJobs", i), target,
          absl::StrFormat("invalid replicatedJob name '%s' does not appear in "
                          ".spec.ReplicatedJobs",
                          target));
    }
  }
}

// Reports each repeated value of `values` at `path`[i].
void ValidateUnique(
    const google::protobuf::RepeatedPtrField<std::string>& values,
    absl::string_view path, FieldErrors* errors) {
  std::set<absl::string_view> seen;
  for (int i = 0; i < values.size(); ++i) {
    if (!seen.insert(values[i]).second) {
      errors->Duplicate(Index(path, i), values[i]);
    }
  }
}

// Returns whether `name` matches ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$.
bool IsValidRuleName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(name.front())) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != ',' && c != ':') {
      return false;
    }
  }
  return absl::ascii_isalnum(name.back()) || name.back() == '_';
}

// Validates the webhook's rules for the RestartJob actions. Returns false
// when the feature gate is off: upstream then skips the remaining rule
// checks.
bool ValidateRestartJobActions(const JobSetSpec& spec, const Features& features,
                               FieldErrors* errors) {
  const FailurePolicy& policy = spec.failure_policy();
  int first = -1;
  for (int i = 0; i < policy.rules_size() && first < 0; ++i) {
    if (Contains(kRestartJobActions, policy.rules(i).action())) first = i;
  }
  if (first < 0) return true;
  if (!features.restart_job) {
    errors->Forbidden(
        Child(Index("spec.failurePolicy.rules", first), "action"),
        "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions "
        "are not allowed when RestartJob feature gate is disabled");
    return false;
  }
  for (int i = 0; i < spec.replicated_jobs_size(); ++i) {
    const ReplicatedJob& rjob = spec.replicated_jobs(i);
    if (Replicas(rjob) > kMaxReplicasForRestartJob) {
      errors->Invalid(
          Child(Index("spec.replicatedJobs", i), "replicas"), Replicas(rjob),
          absl::StrFormat("JobSet cannot have a failure policy rule with "
                          "RestartJob or RestartJobAndIgnoreMaxRestarts action "
                          "and a replicated job with replicas > %d",
                          kMaxReplicasForRestartJob));
      break;
    }
  }
  return true;
}

// Validates a failure-policy rule's name, targets and reasons (the webhook's
// checks; uniqueness is checked across rules by the caller).
void ValidateRule(const FailurePolicyRule& rule, absl::string_view path,
                  const std::set<std::string>& rjob_names,
                  FieldErrors* errors) {
  const std::string name_path = Child(path, "name");
  if (rule.name().empty()) {
    errors->Required(name_path);
  } else {
    if (rule.name().size() > kMaxRuleNameLength) {
      errors->Invalid(
          name_path, rule.name(),
          absl::StrFormat("invalid failure policy rule name of length %d, the "
                          "rule name must be at least %d characters long and "
                          "at most %d characters long",
                          rule.name().size(), 1, kMaxRuleNameLength));
    }
    if (!IsValidRuleName(rule.name())) {
      errors->Invalid(
          name_path, rule.name(),
          absl::StrFormat(
              "invalid failure policy rule name '%s', a failure policy rule "
              "name must start with an alphabetic character, optionally "
              "followed by a string of alphanumeric characters or '_,:', and "
              "must end with an alphanumeric character or '_'",
              rule.name()));
    }
  }
  for (int i = 0; i < rule.target_replicated_jobs_size(); ++i) {
    const std::string& target = rule.target_replicated_jobs(i);
    if (!rjob_names.contains(target)) {
      errors->Invalid(
          Index(Child(path, "targetReplicatedJobs"), i), target,
          absl::StrFormat("invalid replicatedJob name '%s' in failure policy "
                          "does not appear in .spec.ReplicatedJobs",
                          target));
    }
  }
  for (int i = 0; i < rule.on_job_failure_reasons_size(); ++i) {
    const std::string& reason = rule.on_job_failure_reasons(i);
    if (!Contains(kJobFailureReasons, reason)) {
      errors->Invalid(
          Index(Child(path, "onJobFailureReasons"), i), reason,
          absl::StrFormat("invalid job failure reason '%s' in failure policy "
                          "is not a recognized job failure reason",
                          reason));
    }
  }
}

// Validates spec.failurePolicy.
void ValidateFailurePolicy(const JobSetSpec& spec,
                           const std::set<std::string>& rjob_names,
                           const Features& features, FieldErrors* errors) {
  if (!spec.has_failure_policy()) return;
  const FailurePolicy& policy = spec.failure_policy();
  constexpr absl::string_view kStrategyPath =
      "spec.failurePolicy.restartStrategy";
  if (!policy.restart_strategy().empty() &&
      !Contains(kRestartStrategies, policy.restart_strategy())) {
    errors->NotSupported(kStrategyPath, policy.restart_strategy(),
                         kRestartStrategies);
  }
  if (policy.restart_strategy() == kInPlaceRestart &&
      !features.in_place_restart) {
    errors->Forbidden(kStrategyPath,
                      "InPlaceRestart restart strategy cannot be set when "
                      "InPlaceRestart feature gate is disabled");
  }
  if (policy.max_restarts() < 0) {
    errors->Invalid("spec.failurePolicy.maxRestarts", policy.max_restarts(),
                    kMustBeNonNegative);
  }

  // Schema checks.
  for (int i = 0; i < policy.rules_size(); ++i) {
    const FailurePolicyRule& rule = policy.rules(i);
    const std::string path = Index("spec.failurePolicy.rules", i);
    ValidateEnum(Child(path, "action"), rule.action(), kActions, errors);
    ValidateUnique(rule.on_job_failure_reasons(),
                   Child(path, "onJobFailureReasons"), errors);
    ValidateUnique(rule.on_job_failure_message_patterns(),
                   Child(path, "onJobFailureMessagePatterns"), errors);
  }

  // Webhook checks.
  if (!ValidateRestartJobActions(spec, features, errors)) return;
  std::set<std::string> rule_names;
  for (int i = 0; i < policy.rules_size(); ++i) {
    const FailurePolicyRule& rule = policy.rules(i);
    const std::string path = Index("spec.failurePolicy.rules", i);
    ValidateRule(rule, path, rjob_names, errors);
    if (!rule.name().empty() && !rule_names.insert(rule.name()).second) {
      errors->Duplicate(Child(path, "name"), rule.name());
    }
  }
}

// Returns the ReplicatedJob named `name`, or null.
const ReplicatedJob* FindReplicatedJob(const JobSetSpec& spec,
                                       absl::string_view name) {
  for (const ReplicatedJob& rjob : spec.replicated_jobs()) {
    if (rjob.name() == name) return &rjob;
  }
  return nullptr;
}

// Validates that spec.coordinator names an existing pod (reporting the first
// problem only, as upstream).
void ValidateCoordinatorPod(const JobSetSpec& spec, FieldErrors* errors) {
  const Coordinator& coordinator = spec.coordinator();
  const ReplicatedJob* rjob =
      FindReplicatedJob(spec, coordinator.replicated_job());
  if (rjob == nullptr) {
    errors->Invalid("spec.coordinator.replicatedJob",
                    coordinator.replicated_job(),
                    absl::StrFormat("coordinator replicatedJob %s does not "
                                    "exist",
                                    coordinator.replicated_job()));
    return;
  }
  if (coordinator.job_index() < 0 ||
      coordinator.job_index() >= Replicas(*rjob)) {
    errors->Invalid("spec.coordinator.jobIndex", coordinator.job_index(),
                    absl::StrFormat("coordinator job index %d is invalid for "
                                    "replicatedJob %s",
                                    coordinator.job_index(), rjob->name()));
    return;
  }
  const JobSpec& job = rjob->template_().spec();
  if (job.completion_mode() != kIndexed || !job.has_completions()) {
    errors->Invalid("spec.coordinator.replicatedJob",
                    coordinator.replicated_job(),
                    "job for coordinator pod must be indexed completion mode, "
                    "and completions number must be set");
    return;
  }
  if (coordinator.pod_index() < 0 ||
      coordinator.pod_index() >= job.completions()) {
    errors->Invalid(
        "spec.coordinator.podIndex", coordinator.pod_index(),
        absl::StrFormat("coordinator pod index %d is invalid for "
                        "replicatedJob %s job index %d",
                        coordinator.pod_index(), coordinator.replicated_job(),
                        coordinator.job_index()));
  }
}

// Validates spec.coordinator: the pod exists and its endpoint fits in a
// label value.
void ValidateCoordinator(const JobSetSpec& spec, absl::string_view jobset_name,
                         FieldErrors* errors) {
  if (!spec.has_coordinator()) return;
  const Coordinator& coordinator = spec.coordinator();
  if (coordinator.replicated_job().empty()) {
    errors->Required("spec.coordinator.replicatedJob");
    return;
  }
  ValidateCoordinatorPod(spec, errors);
  const absl::string_view subdomain = spec.network().subdomain().empty()
                                          ? jobset_name
                                          : spec.network().subdomain();
  const std::string endpoint = CoordinatorEndpoint(
      jobset_name, coordinator.replicated_job(), coordinator.job_index(),
      coordinator.pod_index(), subdomain);
  std::vector<std::string> label_errors = IsValidLabelValue(endpoint);
  if (!label_errors.empty()) {
    errors->Invalid(
        "spec.coordinator", endpoint,
        absl::StrFormat("spec will lead to invalid label value \"%s\" for "
                        "coordinator label \"%s\" (long JobSet / ReplicatedJob "
                        "/ SubDomain name?): %s",
                        endpoint, kCoordinatorKey,
                        absl::StrJoin(label_errors, ", ")));
  }
}

// Reports a negative spec.ttlSecondsAfterFinished.
void ValidateTtl(const JobSetSpec& spec, FieldErrors* errors) {
  if (spec.has_ttl_seconds_after_finished() &&
      spec.ttl_seconds_after_finished() < 0) {
    errors->Invalid("spec.ttlSecondsAfterFinished",
                    spec.ttl_seconds_after_finished(), kMustBeNonNegative);
  }
}

// Returns `JobSet "<name>"` for status messages.
std::string ObjectName(const ObjectMeta& meta) {
  return absl::StrCat("JobSet \"",
                      meta.name().empty() ? meta.generate_name() : meta.name(),
                      "\"");
}

// Returns whether two optional messages are equal, presence included.
template <typename Message>
bool OptionalEquals(bool has_a, const Message& a, bool has_b,
                    const Message& b) {
  return has_a == has_b && (!has_a || MessageDifferencer::Equals(a, b));
}

// Returns whether two repeated message fields are equal, order included.
template <typename Message>
bool RepeatedEquals(const google::protobuf::RepeatedPtrField<Message>& a,
                    const google::protobuf::RepeatedPtrField<Message>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!MessageDifferencer::Equals(a[i], b[i])) return false;
  }
  return true;
}

// Returns whether the JobSet has finished, by its status.
bool IsFinished(const JobSetStatus& status) {
  if (!status.terminal_state().empty()) return true;
  for (const Condition& condition : status.conditions()) {
    if ((condition.type() == "Completed" || condition.type() == "Failed") &&
        condition.status() == "True") {
      return true;
    }
  }
  return false;
}

// Returns the ReplicatedJobs of `rjobs` by name.
std::map<std::string, int> IndexByName(
    const google::protobuf::RepeatedPtrField<ReplicatedJob>& rjobs) {
  std::map<std::string, int> index;
  for (int i = 0; i < rjobs.size(); ++i) index[rjobs[i].name()] = i;
  return index;
}

// Returns the Job spec of `rjob` for clearing fields in place, or null when
// it has none (so that no empty message is created, which would compare
// unequal to an absent one).
JobSpec* MutableJobSpecIfPresent(ReplicatedJob* rjob) {
  if (!rjob->has_template_() || !rjob->template_().has_spec()) return nullptr;
  return rjob->mutable_template_()->mutable_spec();
}

// Clears the pod-template fields Kueue may change while a JobSet is
// suspended: labels, annotations, nodeSelector and tolerations. Drops the
// pod template's metadata and spec when that leaves them empty, as absent and
// empty are the same to Kubernetes' value structs.
void ClearSuspendMutableFields(ReplicatedJob* rjob) {
  JobSpec* job = MutableJobSpecIfPresent(rjob);
  if (job == nullptr || !job->has_template_()) return;
  PodTemplateSpec* pod = job->mutable_template_();
  if (pod->has_metadata()) {
    pod->mutable_metadata()->clear_labels();
    pod->mutable_metadata()->clear_annotations();
    if (pod->metadata().ByteSizeLong() == 0) pod->clear_metadata();
  }
  if (pod->has_spec()) {
    pod->mutable_spec()->clear_node_selector();
    pod->mutable_spec()->clear_tolerations();
    if (pod->spec().ByteSizeLong() == 0) pod->clear_spec();
  }
}

// Clears parallelism and completions of `rjob`'s Job template.
void ClearElasticFields(ReplicatedJob* rjob) {
  JobSpec* job = MutableJobSpecIfPresent(rjob);
  if (job == nullptr) return;
  job->clear_parallelism();
  job->clear_completions();
}

// Validates an ElasticJobSet change of parallelism or completions of the
// Indexed ReplicatedJob at `index`.
void ValidateElasticChange(const ReplicatedJob& old_rjob,
                           const ReplicatedJob& new_rjob, int index,
                           bool finished, FieldErrors* errors) {
  const JobSpec& old_job = old_rjob.template_().spec();
  const JobSpec& new_job = new_rjob.template_().spec();
  const bool parallelism_changed =
      old_job.has_parallelism() != new_job.has_parallelism() ||
      old_job.parallelism() != new_job.parallelism();
  const bool completions_changed =
      old_job.has_completions() != new_job.has_completions() ||
      old_job.completions() != new_job.completions();
  if (!parallelism_changed && !completions_changed) return;
  const std::string path =
      Child(Index("spec.replicatedJobs", index), "template.spec");
  if (finished) {
    errors->Forbidden(path,
                      "Cannot mutate parallelism or completions when JobSet "
                      "is in a terminal state (Completed or Failed)");
    return;
  }
  if (parallelism_changed && new_job.has_parallelism() &&
      new_job.parallelism() < 1) {
    errors->Invalid(Child(path, "parallelism"), new_job.parallelism(),
                    "parallelism must be >= 1");
  }
  if (completions_changed && new_job.has_completions() &&
      new_job.completions() < 1) {
    errors->Invalid(Child(path, "completions"), new_job.completions(),
                    "completions must be >= 1");
  }
  if (new_job.has_parallelism() && new_job.has_completions() &&
      new_job.parallelism() != new_job.completions()) {
    errors->Invalid(Child(path, "completions"), new_job.completions(),
                    "completions must be equal to parallelism for Elastic "
                    "Indexed Jobs");
  }
}

// Validates the update of spec.replicatedJobs: the list is immutable but for
// the suspended-JobSet and ElasticJobSet carve-outs, which are compared
// away before the lists are.
void ValidateReplicatedJobsUpdate(const JobSet& old_jobset,
                                  const JobSet& new_jobset,
                                  const Features& features,
                                  FieldErrors* errors) {
  const auto& old_rjobs = old_jobset.spec().replicated_jobs();
  const auto& new_rjobs = new_jobset.spec().replicated_jobs();
  google::protobuf::RepeatedPtrField<ReplicatedJob> old_masked = old_rjobs;
  google::protobuf::RepeatedPtrField<ReplicatedJob> new_masked = new_rjobs;
  const std::map<std::string, int> old_by_name = IndexByName(old_rjobs);
  const bool suspended =
      old_jobset.spec().suspend() || new_jobset.spec().suspend();
  const bool finished = IsFinished(old_jobset.status());

  for (int i = 0; i < new_rjobs.size(); ++i) {
    const auto it = old_by_name.find(new_rjobs[i].name());
    if (it == old_by_name.end()) continue;
    const int j = it->second;
    // CEL `self == oldSelf` on dependsOn, items matched by name.
    if (!RepeatedEquals(old_rjobs[j].depends_on(), new_rjobs[i].depends_on())) {
      errors->Invalid(Child(Index("spec.replicatedJobs", i), "dependsOn"),
                      "array", kImmutable);
    }
    if (features.elastic_jobset &&
        new_rjobs[i].template_().spec().completion_mode() == kIndexed) {
      ValidateElasticChange(old_rjobs[j], new_rjobs[i], i, finished, errors);
      ClearElasticFields(&old_masked[j]);
      ClearElasticFields(&new_masked[i]);
    }
    if (suspended) {
      ClearSuspendMutableFields(&old_masked[j]);
      ClearSuspendMutableFields(&new_masked[i]);
    }
  }
  if (!RepeatedEquals(old_masked, new_masked)) {
    errors->Invalid("spec.replicatedJobs", "array", kImmutable);
  }
}

}  // namespace

FieldErrors ValidateJobSet(const JobSet& jobset, const Features& features,
                           const Limits& limits) {
  FieldErrors errors;
  ValidateTypeMeta(jobset, &errors);
  ValidateObjectMeta(jobset.metadata(), limits, &errors);

  const JobSetSpec& spec = jobset.spec();
  const std::string jobset_name = NameForValidation(jobset.metadata());
  ValidateNetwork(spec, &errors);
  ValidateManagedBy(spec, &errors);
  ValidateTtl(spec, &errors);
  const std::set<std::string> rjob_names =
      ValidateReplicatedJobs(jobset, jobset_name, features, limits, &errors);
  ValidateAttemptSize(spec, limits, &errors);
  ValidateStartupPolicy(spec, &errors);
  ValidateSuccessPolicy(spec, rjob_names, &errors);
  ValidateFailurePolicy(spec, rjob_names, features, &errors);
  ValidateCoordinator(spec, jobset_name, &errors);
  if (!spec.volume_claim_policies().empty()) {
    errors.Forbidden("spec.volumeClaimPolicies",
                     "volume claim policies are not supported by jobsetd; use "
                     "hostPath or emptyDir volumes");
  }
  return errors;
}

absl::Status ValidateJobSetCreate(const JobSet& jobset,
                                  const Features& features,
                                  const Limits& limits) {
  return ValidateJobSet(jobset, features, limits)
      .ToStatus(ObjectName(jobset.metadata()));
}

absl::Status ValidateJobSetUpdate(const JobSet& old_jobset,
                                  const JobSet& new_jobset,
                                  const Features& features,
                                  const Limits& limits) {
  FieldErrors errors;
  const ObjectMeta& old_meta = old_jobset.metadata();
  const ObjectMeta& new_meta = new_jobset.metadata();
  if (new_meta.name() != old_meta.name()) {
    errors.Invalid("metadata.name", new_meta.name(), kImmutable);
  }
  if (new_meta.namespace_() != old_meta.namespace_()) {
    errors.Invalid("metadata.namespace", new_meta.namespace_(), kImmutable);
  }
  if (!new_meta.uid().empty() && new_meta.uid() != old_meta.uid()) {
    errors.Invalid("metadata.uid", new_meta.uid(), kImmutable);
  }
  ValidateLabels(new_meta.labels(), "metadata.labels", &errors,
                 limits.max_label_bytes);
  ValidateAnnotations(new_meta.annotations(), "metadata.annotations", &errors,
                      limits.max_annotation_bytes);
  ValidateResilienceAnnotations(new_meta.annotations(), "metadata.annotations",
                                &errors);

  const JobSetSpec& old_spec = old_jobset.spec();
  const JobSetSpec& new_spec = new_jobset.spec();
  ValidateTtl(new_spec, &errors);
  if (new_spec.has_coordinator() &&
      new_spec.coordinator().replicated_job().empty()) {
    errors.Required("spec.coordinator.replicatedJob");
  }

  if (!OptionalEquals(old_spec.has_success_policy(), old_spec.success_policy(),
                      new_spec.has_success_policy(),
                      new_spec.success_policy())) {
    errors.Invalid("spec.successPolicy", "object", kImmutable);
  }
  if (!OptionalEquals(old_spec.has_failure_policy(), old_spec.failure_policy(),
                      new_spec.has_failure_policy(),
                      new_spec.failure_policy())) {
    errors.Invalid("spec.failurePolicy", "object", kImmutable);
  }
  if (!OptionalEquals(old_spec.has_startup_policy(), old_spec.startup_policy(),
                      new_spec.has_startup_policy(),
                      new_spec.startup_policy())) {
    errors.Invalid("spec.startupPolicy", "object", kImmutable);
  }
  if (!OptionalEquals(old_spec.has_network(), old_spec.network(),
                      new_spec.has_network(), new_spec.network())) {
    errors.Invalid("spec.network", "object", kImmutable);
  }
  if (!RepeatedEquals(old_spec.volume_claim_policies(),
                      new_spec.volume_claim_policies())) {
    errors.Invalid("spec.volumeClaimPolicies", "array", kImmutable);
  }
  if (old_spec.has_managed_by() != new_spec.has_managed_by() ||
      old_spec.managed_by() != new_spec.managed_by()) {
    if (new_spec.has_managed_by()) {
      errors.Invalid("spec.managedBy", new_spec.managed_by(), kImmutable);
    } else {
      InvalidNull("spec.managedBy", kImmutable, &errors);
    }
  }
  ValidateReplicatedJobsUpdate(old_jobset, new_jobset, features, &errors);
  // What the carve-outs above let change may cross jobsetd's limits; what
  // did not change stays as it was admitted (perhaps under other limits).
  if (!RepeatedEquals(old_spec.replicated_jobs(), new_spec.replicated_jobs())) {
    const auto [old_jobs, old_pods] = AttemptSize(old_spec);
    const auto [new_jobs, new_pods] = AttemptSize(new_spec);
    if (new_jobs > old_jobs || new_pods > old_pods) {
      ValidateAttemptSize(new_spec, limits, &errors);
    }
    const std::map<std::string, int> old_by_name =
        IndexByName(old_spec.replicated_jobs());
    for (int i = 0; i < new_spec.replicated_jobs_size(); ++i) {
      const ReplicatedJob& rjob = new_spec.replicated_jobs(i);
      const auto it = old_by_name.find(rjob.name());
      if (it != old_by_name.end() &&
          MessageDifferencer::Equals(
              old_spec.replicated_jobs(it->second).template_(),
              rjob.template_())) {
        continue;
      }
      ValidateJobTemplateMetadata(
          rjob.template_(), Child(Index("spec.replicatedJobs", i), "template"),
          limits, &errors);
    }
  }
  return errors.ToStatus(ObjectName(new_meta));
}

}  // namespace jobset::api
