#include "api/jobset_builder.h"

#include "common/log.h"

namespace jobset::api::testing {

JobSetBuilder::JobSetBuilder(absl::string_view name) {
  jobset_.set_api_version("jobset.x-k8s.io/v1alpha2");
  jobset_.set_kind("JobSet");
  jobset_.mutable_metadata()->set_name(std::string(name));
  jobset_.mutable_metadata()->set_namespace_("default");
}

JobSetBuilder& JobSetBuilder::Namespace(absl::string_view ns) {
  jobset_.mutable_metadata()->set_namespace_(std::string(ns));
  return *this;
}

JobSetBuilder& JobSetBuilder::GenerateName(absl::string_view prefix) {
  jobset_.mutable_metadata()->clear_name();
  jobset_.mutable_metadata()->set_generate_name(std::string(prefix));
  return *this;
}

JobSetBuilder& JobSetBuilder::Suspend(bool suspend) {
  jobset_.mutable_spec()->set_suspend(suspend);
  return *this;
}

JobSetBuilder& JobSetBuilder::Label(absl::string_view key,
                                    absl::string_view value) {
  (*jobset_.mutable_metadata()->mutable_labels())[std::string(key)] =
      std::string(value);
  return *this;
}

JobSetBuilder& JobSetBuilder::Annotation(absl::string_view key,
                                         absl::string_view value) {
  (*jobset_.mutable_metadata()->mutable_annotations())[std::string(key)] =
      std::string(value);
  return *this;
}

JobSetBuilder& JobSetBuilder::Replicated(absl::string_view name,
                                         int32_t replicas, int32_t parallelism,
                                         int32_t completions) {
  ReplicatedJob* rjob = jobset_.mutable_spec()->add_replicated_jobs();
  rjob->set_name(std::string(name));
  rjob->set_replicas(replicas);
  JobSpec* job = rjob->mutable_template_()->mutable_spec();
  job->set_parallelism(parallelism);
  job->set_completions(completions);
  Container* container =
      job->mutable_template_()->mutable_spec()->add_containers();
  container->set_name("main");
  container->set_image("busybox");
  container->add_command("sh");
  container->add_command("-c");
  container->add_command("echo hello from $HOSTNAME");
  return *this;
}

JobSetBuilder& JobSetBuilder::GroupName(absl::string_view rjob,
                                        absl::string_view group) {
  FindReplicatedJob(rjob)->set_group_name(std::string(group));
  return *this;
}

JobSetBuilder& JobSetBuilder::CompletionMode(absl::string_view rjob,
                                             absl::string_view mode) {
  FindReplicatedJob(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->set_completion_mode(std::string(mode));
  return *this;
}

JobSetBuilder& JobSetBuilder::RestartPolicy(absl::string_view rjob,
                                            absl::string_view policy) {
  FindReplicatedJob(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_template_()
      ->mutable_spec()
      ->set_restart_policy(std::string(policy));
  return *this;
}

JobSetBuilder& JobSetBuilder::Command(absl::string_view rjob,
                                      std::vector<std::string> command) {
  api::Container* c = FindReplicatedJob(rjob)
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_containers(0);
  c->clear_args();
  c->mutable_command()->Assign(command.begin(), command.end());
  return *this;
}

JobSetBuilder& JobSetBuilder::BackoffLimit(absl::string_view rjob,
                                           int32_t limit) {
  FindReplicatedJob(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->set_backoff_limit(limit);
  return *this;
}

JobSetBuilder& JobSetBuilder::Request(absl::string_view rjob,
                                      absl::string_view resource,
                                      absl::string_view quantity) {
  (*FindReplicatedJob(rjob)
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_containers(0)
        ->mutable_resources()
        ->mutable_requests())[std::string(resource)] = std::string(quantity);
  return *this;
}

JobSetBuilder& JobSetBuilder::DependsOn(absl::string_view rjob,
                                        absl::string_view dependency,
                                        absl::string_view status) {
  api::DependsOn* depends_on = FindReplicatedJob(rjob)->add_depends_on();
  depends_on->set_name(std::string(dependency));
  depends_on->set_status(std::string(status));
  return *this;
}

JobSetBuilder& JobSetBuilder::SuccessPolicy(
    absl::string_view op, const std::vector<std::string>& targets) {
  api::SuccessPolicy* policy = jobset_.mutable_spec()->mutable_success_policy();
  policy->set_operator_(std::string(op));
  policy->mutable_target_replicated_jobs()->Assign(targets.begin(),
                                                   targets.end());
  return *this;
}

JobSetBuilder& JobSetBuilder::StartupPolicy(absl::string_view order) {
  jobset_.mutable_spec()->mutable_startup_policy()->set_startup_policy_order(
      std::string(order));
  return *this;
}

JobSetBuilder& JobSetBuilder::FailurePolicy(int32_t max_restarts) {
  jobset_.mutable_spec()->mutable_failure_policy()->set_max_restarts(
      max_restarts);
  return *this;
}

JobSetBuilder& JobSetBuilder::RestartStrategy(absl::string_view strategy) {
  jobset_.mutable_spec()->mutable_failure_policy()->set_restart_strategy(
      std::string(strategy));
  return *this;
}

JobSetBuilder& JobSetBuilder::Rule(
    absl::string_view action,
    const std::vector<std::string>& on_job_failure_reasons,
    const std::vector<std::string>& targets, absl::string_view name) {
  FailurePolicyRule* rule =
      jobset_.mutable_spec()->mutable_failure_policy()->add_rules();
  rule->set_name(std::string(name));
  rule->set_action(std::string(action));
  rule->mutable_on_job_failure_reasons()->Assign(on_job_failure_reasons.begin(),
                                                 on_job_failure_reasons.end());
  rule->mutable_target_replicated_jobs()->Assign(targets.begin(),
                                                 targets.end());
  return *this;
}

JobSetBuilder& JobSetBuilder::Coordinator(absl::string_view rjob,
                                          int32_t job_index,
                                          int32_t pod_index) {
  api::Coordinator* coordinator = jobset_.mutable_spec()->mutable_coordinator();
  coordinator->set_replicated_job(std::string(rjob));
  coordinator->set_job_index(job_index);
  coordinator->set_pod_index(pod_index);
  return *this;
}

JobSetBuilder& JobSetBuilder::Subdomain(absl::string_view subdomain) {
  jobset_.mutable_spec()->mutable_network()->set_subdomain(
      std::string(subdomain));
  return *this;
}

JobSetBuilder& JobSetBuilder::EnableDnsHostnames(bool enable) {
  jobset_.mutable_spec()->mutable_network()->set_enable_dns_hostnames(enable);
  return *this;
}

JobSetBuilder& JobSetBuilder::ManagedBy(absl::string_view manager) {
  jobset_.mutable_spec()->set_managed_by(std::string(manager));
  return *this;
}

JobSetBuilder& JobSetBuilder::TtlSecondsAfterFinished(int32_t seconds) {
  jobset_.mutable_spec()->set_ttl_seconds_after_finished(seconds);
  return *this;
}

ReplicatedJob* JobSetBuilder::FindReplicatedJob(absl::string_view name) {
  for (ReplicatedJob& rjob :
       *jobset_.mutable_spec()->mutable_replicated_jobs()) {
    if (rjob.name() == name) return &rjob;
  }
  JOBSET_LOG(FATAL) << "JobSetBuilder: no ReplicatedJob named \"" << name
                    << "\"";
  return nullptr;
}

}  // namespace jobset::api::testing
