#ifndef JOBSET_API_JOBSET_BUILDER_H_
#define JOBSET_API_JOBSET_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/jobset.pb.h"

namespace jobset::api::testing {

// Builds JobSets for tests, starting from a valid, realistic one:
//
//   JobSet js = JobSetBuilder("train")
//                   .Replicated("driver", 1)
//                   .Replicated("workers", 4, /*parallelism=*/2,
//                               /*completions=*/2)
//                   .DependsOn("workers", "driver", "Ready")
//                   .FailurePolicy(3)
//                   .Rule("FailJobSet", {"PodFailurePolicy"})
//                   .Build();
//
// The result is what a user would write, not yet defaulted: apiVersion, kind,
// metadata.name and namespace "default" are set, and each ReplicatedJob's pod
// template has one container "main" (image "busybox", a short command).
// Apply api::SetJobSetDefaults before validating or reconciling it. Methods
// that take a ReplicatedJob name CHECK that it was added. Anything without a
// method is reachable through Mutable(). Thread-compatible.
class JobSetBuilder {
 public:
  explicit JobSetBuilder(absl::string_view name);

  // Sets metadata.namespace.
  JobSetBuilder& Namespace(absl::string_view ns);
  // Sets metadata.generateName and clears metadata.name.
  JobSetBuilder& GenerateName(absl::string_view prefix);
  // Sets spec.suspend.
  JobSetBuilder& Suspend(bool suspend = true);
  // Sets a metadata label.
  JobSetBuilder& Label(absl::string_view key, absl::string_view value);
  // Sets a metadata annotation.
  JobSetBuilder& Annotation(absl::string_view key, absl::string_view value);

  // Appends a ReplicatedJob of `replicas` Jobs, each with the given
  // parallelism and completions.
  JobSetBuilder& Replicated(absl::string_view name, int32_t replicas,
                            int32_t parallelism = 1, int32_t completions = 1);
  // Sets the groupName of ReplicatedJob `rjob`.
  JobSetBuilder& GroupName(absl::string_view rjob, absl::string_view group);
  // Sets the Job completionMode ("Indexed" or "NonIndexed") of `rjob`.
  JobSetBuilder& CompletionMode(absl::string_view rjob, absl::string_view mode);
  // Sets the pod restartPolicy of `rjob`.
  JobSetBuilder& RestartPolicy(absl::string_view rjob,
                               absl::string_view policy);
  // Sets the command of `rjob`'s first container (and clears its args).
  JobSetBuilder& Command(absl::string_view rjob,
                         std::vector<std::string> command);
  // Sets the Job backoffLimit of `rjob`.
  JobSetBuilder& BackoffLimit(absl::string_view rjob, int32_t limit);
  // Sets resources.requests[resource] of `rjob`'s first container.
  JobSetBuilder& Request(absl::string_view rjob, absl::string_view resource,
                         absl::string_view quantity);
  // Appends {name: dependency, status: status} to the dependsOn of `rjob`.
  JobSetBuilder& DependsOn(absl::string_view rjob, absl::string_view dependency,
                           absl::string_view status);

  // Sets spec.successPolicy.
  JobSetBuilder& SuccessPolicy(absl::string_view op,
                               const std::vector<std::string>& targets = {});
  // Sets spec.startupPolicy.startupPolicyOrder.
  JobSetBuilder& StartupPolicy(absl::string_view order);
  // Creates spec.failurePolicy if needed and sets its maxRestarts.
  JobSetBuilder& FailurePolicy(int32_t max_restarts);
  // Creates spec.failurePolicy if needed and sets its restartStrategy.
  JobSetBuilder& RestartStrategy(absl::string_view strategy);
  // Creates spec.failurePolicy if needed and appends a rule. An empty name
  // is left for defaulting to fill in.
  JobSetBuilder& Rule(
      absl::string_view action,
      const std::vector<std::string>& on_job_failure_reasons = {},
      const std::vector<std::string>& targets = {},
      absl::string_view name = "");

  // Sets spec.coordinator.
  JobSetBuilder& Coordinator(absl::string_view rjob, int32_t job_index,
                             int32_t pod_index);
  // Sets spec.network.subdomain.
  JobSetBuilder& Subdomain(absl::string_view subdomain);
  // Sets spec.network.enableDNSHostnames.
  JobSetBuilder& EnableDnsHostnames(bool enable);
  // Sets spec.managedBy.
  JobSetBuilder& ManagedBy(absl::string_view manager);
  // Sets spec.ttlSecondsAfterFinished.
  JobSetBuilder& TtlSecondsAfterFinished(int32_t seconds);

  // Returns the JobSet under construction, for changes without a method.
  JobSet* Mutable() { return &jobset_; }
  // Returns a copy of the JobSet built so far.
  JobSet Build() const { return jobset_; }

 private:
  ReplicatedJob* FindReplicatedJob(absl::string_view name);

  JobSet jobset_;
};

}  // namespace jobset::api::testing

#endif  // JOBSET_API_JOBSET_BUILDER_H_
