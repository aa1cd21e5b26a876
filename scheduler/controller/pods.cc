#include "scheduler/controller/pods.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "scheduler/controller/conditions.h"
#include "scheduler/controller/constants.h"

namespace jobset::scheduler {
namespace {

std::string Label(const api::Pod& pod, const char* key) {
  auto it = pod.metadata().labels().find(key);
  return it == pod.metadata().labels().end() ? "" : it->second;
}

// Resolves one downward-API field path against the bound pod.
absl::StatusOr<std::string> ResolveField(const api::Pod& pod,
                                         absl::string_view path) {
  const api::ObjectMeta& meta = pod.metadata();
  if (path == "metadata.name") return meta.name();
  if (path == "metadata.namespace") return meta.namespace_();
  if (path == "metadata.uid") return meta.uid();
  if (path == "spec.nodeName") return pod.spec().node_name();
  if (path == "spec.serviceAccountName") return std::string();
  if (path == "status.hostIP" || path == "status.podIP") {
    // Pods share their node's network: the pod IP is the host's.
    return pod.status().host_ip();
  }
  for (auto [prefix, map] :
       {std::make_pair("metadata.labels['", &meta.labels()),
        std::make_pair("metadata.annotations['", &meta.annotations())}) {
    absl::string_view key = path;
    if (absl::ConsumePrefix(&key, prefix) && absl::ConsumeSuffix(&key, "']")) {
      auto it = map->find(std::string(key));
      return it == map->end() ? "" : it->second;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("pod ", meta.name(),
                                                 ": fieldRef.fieldPath \"",
                                                 path, "\" is not supported"));
}

absl::Status ResolveEnv(
    const api::Pod& pod,
    const std::vector<std::pair<std::string, std::string>>& extra,
    api::Container* container) {
  std::vector<api::EnvVar> resolved;
  std::map<std::string, bool> own;
  for (const api::EnvVar& var : container->env()) own[var.name()] = true;
  for (const auto& [name, value] : extra) {
    if (own.contains(name)) continue;
    api::EnvVar& var = resolved.emplace_back();
    var.set_name(name);
    var.set_value(value);
  }
  for (const api::EnvVar& var : container->env()) {
    api::EnvVar& out = resolved.emplace_back();
    out.set_name(var.name());
    if (var.value_from().has_field_ref()) {
      absl::StatusOr<std::string> value =
          ResolveField(pod, var.value_from().field_ref().field_path());
      if (!value.ok()) return value.status();
      out.set_value(*value);
    } else {
      out.set_value(var.value());
    }
  }
  container->clear_env();
  for (api::EnvVar& var : resolved) *container->add_env() = std::move(var);
  return absl::OkStatus();
}

}  // namespace

api::Pod ConstructPod(const api::Job& job, int index, const std::string& name,
                      const std::string& uid) {
  api::Pod pod;
  const api::PodTemplateSpec& tmpl = job.spec().template_();
  *pod.mutable_metadata() = tmpl.metadata();
  *pod.mutable_spec() = tmpl.spec();
  api::ObjectMeta* meta = pod.mutable_metadata();
  meta->set_name(name);
  meta->set_namespace_(job.metadata().namespace_());
  meta->set_uid(uid);
  (*meta->mutable_labels())["batch.kubernetes.io/job-name"] =
      job.metadata().name();
  (*meta->mutable_labels())["batch.kubernetes.io/controller-uid"] =
      job.metadata().uid();
  if (index >= 0) {
    (*meta->mutable_labels())[kCompletionIndexKey] = absl::StrCat(index);
    (*meta->mutable_annotations())[kCompletionIndexKey] = absl::StrCat(index);
    pod.mutable_spec()->set_hostname(
        absl::StrCat(job.metadata().name(), "-", index));
  }
  pod.mutable_status()->set_phase("Pending");
  return pod;
}

absl::Status BindPod(const std::string& node, const std::string& host_ip,
                     absl::Time now, api::Pod* pod) {
  pod->mutable_spec()->set_node_name(node);
  pod->mutable_status()->set_host_ip(host_ip);
  pod->mutable_status()->set_pod_ip(host_ip);
  std::vector<std::pair<std::string, std::string>> extra = {
      {kEnvJobSetName, Label(*pod, kJobSetNameKey)},
      {kEnvJobSetNamespace, pod->metadata().namespace_()},
      {kEnvReplicatedJob, Label(*pod, kReplicatedJobNameKey)},
      {kEnvJobIndex, Label(*pod, kJobIndexKey)},
      {kEnvJobGlobalIndex, Label(*pod, kJobGlobalIndexKey)},
      {kEnvRestartAttempt, Label(*pod, kRestartAttemptKey)},
  };
  if (const std::string coordinator = Label(*pod, kCoordinatorKey);
      !coordinator.empty()) {
    extra.emplace_back(kEnvCoordinator, coordinator);
  }
  if (!pod->spec().hostname().empty()) {
    extra.emplace_back(kEnvPodHostname, pod->spec().hostname());
  }
  if (const std::string index = Label(*pod, kCompletionIndexKey);
      !index.empty()) {
    extra.emplace_back(kEnvCompletionIndex, index);
  }
  for (api::Container& c : *pod->mutable_spec()->mutable_init_containers()) {
    if (absl::Status s = ResolveEnv(*pod, extra, &c); !s.ok()) return s;
  }
  for (api::Container& c : *pod->mutable_spec()->mutable_containers()) {
    if (absl::Status s = ResolveEnv(*pod, extra, &c); !s.ok()) return s;
  }
  SetCondition(pod->mutable_status()->mutable_conditions(), "PodScheduled",
               true, "", "", now);
  return absl::OkStatus();
}

std::vector<HostEntry> HostTable(const std::vector<const api::Pod*>& pods) {
  std::vector<HostEntry> table;
  for (const api::Pod* pod : pods) {
    if (pod->spec().hostname().empty() || pod->status().host_ip().empty())
      continue;
    HostEntry& entry = table.emplace_back();
    entry.address = pod->status().host_ip();
    entry.names.push_back(pod->spec().hostname());
    if (!pod->spec().subdomain().empty()) {
      entry.names.push_back(
          absl::StrCat(pod->spec().hostname(), ".", pod->spec().subdomain()));
    }
  }
  return table;
}

}  // namespace jobset::scheduler
