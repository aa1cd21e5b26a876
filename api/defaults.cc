#include "api/defaults.h"

#include "absl/strings/str_cat.h"
#include "api/image_reference.h"

namespace jobset::api {

void SetJobSetDefaults(JobSet* jobset) {
  if (jobset->api_version().empty()) jobset->set_api_version(kApiVersion);
  if (jobset->kind().empty()) jobset->set_kind(kKind);
  if (jobset->metadata().namespace_().empty()) {
    jobset->mutable_metadata()->set_namespace_(kDefaultNamespace);
  }

  JobSetSpec* spec = jobset->mutable_spec();
  if (!spec->has_success_policy()) {
    spec->mutable_success_policy()->set_operator_("All");
  }
  if (!spec->has_startup_policy()) {
    spec->mutable_startup_policy()->set_startup_policy_order("AnyOrder");
  }

  for (ReplicatedJob& rjob : *spec->mutable_replicated_jobs()) {
    if (!rjob.has_replicas()) rjob.set_replicas(1);
    if (rjob.group_name().empty()) rjob.set_group_name(kDefaultGroupName);
    JobSpec* job = rjob.mutable_template_()->mutable_spec();
    if (job->completion_mode().empty()) job->set_completion_mode("Indexed");
    PodSpec* pod = job->mutable_template_()->mutable_spec();
    if (pod->restart_policy().empty()) pod->set_restart_policy("OnFailure");
    for (auto* containers :
         {pod->mutable_init_containers(), pod->mutable_containers()}) {
      for (Container& c : *containers) {
        if (c.image_pull_policy().empty()) {
          c.set_image_pull_policy(std::string(DefaultPullPolicy(c.image())));
        }
      }
    }
  }

  Network* network = spec->mutable_network();
  if (!network->has_enable_dns_hostnames()) {
    network->set_enable_dns_hostnames(true);
  }
  if (!network->has_publish_not_ready_addresses()) {
    network->set_publish_not_ready_addresses(true);
  }

  if (spec->has_failure_policy()) {
    FailurePolicy* policy = spec->mutable_failure_policy();
    if (policy->restart_strategy().empty()) {
      policy->set_restart_strategy("Recreate");
    }
    for (int i = 0; i < policy->rules_size(); ++i) {
      FailurePolicyRule* rule = policy->mutable_rules(i);
      if (rule->name().empty()) {
        rule->set_name(absl::StrCat("failurePolicyRule", i));
      }
    }
  }

  for (VolumeClaimPolicy& policy : *spec->mutable_volume_claim_policies()) {
    VolumeRetentionPolicy* retention = policy.mutable_retention_policy();
    if (retention->when_deleted().empty())
      retention->set_when_deleted("Delete");
  }
}

}  // namespace jobset::api
