#include <algorithm>
#include <map>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/env_expansion.h"
#include "api/host_table.h"
#include "api/pod_phase.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/container_status.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {
namespace {

std::string Label(const api::Pod& pod, const char* key) {
  auto it = pod.metadata().labels().find(key);
  return it == pod.metadata().labels().end() ? "" : it->second;
}

// Resolves one downward-API field path against the pod (`pod` null: only
// checks that the path is supported).
absl::StatusOr<std::string> ResolveField(const api::Pod* pod,
                                         absl::string_view path) {
  static const api::Pod* const kEmpty = new api::Pod();
  const api::Pod& p = pod == nullptr ? *kEmpty : *pod;
  const api::ObjectMeta& meta = p.metadata();
  if (path == "metadata.name") return meta.name();
  if (path == "metadata.namespace") return meta.namespace_();
  if (path == "metadata.uid") return meta.uid();
  if (path == "spec.nodeName") return p.spec().node_name();
  if (path == "spec.serviceAccountName") return std::string();
  if (path == "status.hostIP" || path == "status.podIP") {
    // Pods share their node's network: the pod IP is the host's.
    return p.status().host_ip();
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
  return absl::InvalidArgumentError(
      absl::StrCat("fieldRef.fieldPath \"", path, "\" is not supported"));
}

// Resolves `container`'s environment: jobsetd's variables (`extra`) unless
// the container has its own of the name, then (with `config`) envFrom's,
// unless env has the name (Kubernetes' order: env wins), then env, with
// fieldRefs resolved and (with `config`) secretKeyRef/configMapKeyRef
// replaced by their values. Without `config` (clients) those stay
// references and envFrom stays as it is: no secret value is shown.
void ResolveEnv(const api::Pod& pod,
                const std::vector<std::pair<std::string, std::string>>& extra,
                const api::PodConfig* config, api::Container* container) {
  static const api::ContainerConfigEnv* const kNone =
      new api::ContainerConfigEnv();
  const api::ContainerConfigEnv* from = kNone;
  if (config != nullptr) {
    auto it = config->env.find(container->name());
    if (it != config->env.end()) from = &it->second;
  }
  std::vector<api::EnvVar> resolved;
  std::map<std::string, bool> own;
  for (const api::EnvVar& var : container->env()) own[var.name()] = true;
  std::map<std::string, bool> own_or_from = own;
  for (const auto& [name, value] : from->from) own_or_from[name] = true;
  for (const auto& [name, value] : extra) {
    if (own_or_from.contains(name)) continue;
    api::EnvVar& var = resolved.emplace_back();
    var.set_name(name);
    var.set_value(value);
  }
  for (const auto& [name, value] : from->from) {
    if (own.contains(name)) continue;
    api::EnvVar& var = resolved.emplace_back();
    var.set_name(name);
    var.set_value(value);
  }
  // What an env value's $(NAME) sees (kubelet's): the variables before it.
  std::map<std::string, std::string, std::less<>> defined;
  for (const api::EnvVar& var : resolved) defined[var.name()] = var.value();
  const api::EnvLookup lookup =
      [&defined](absl::string_view name) -> std::optional<std::string> {
    auto it = defined.find(name);
    if (it == defined.end()) return std::nullopt;
    return it->second;
  };
  for (int i = 0; i < container->env_size(); ++i) {
    const api::EnvVar& var = container->env(i);
    const api::EnvVarSource& source = var.value_from();
    if (source.has_secret_key_ref() || source.has_config_map_key_ref()) {
      if (config == nullptr) {
        resolved.push_back(var);  // The reference, for clients.
        continue;
      }
      auto value = from->values.find(i);
      // Optional and missing: left out.
      if (value == from->values.end() || !value->second.has_value()) continue;
      api::EnvVar& out = resolved.emplace_back();
      out.set_name(var.name());
      out.set_value(*value->second);
      defined[out.name()] = out.value();
      continue;
    }
    api::EnvVar& out = resolved.emplace_back();
    out.set_name(var.name());
    if (source.has_field_ref()) {
      // CheckPodEnv kept unsupported paths from being bound.
      absl::StatusOr<std::string> field =
          ResolveField(&pod, source.field_ref().field_path());
      out.set_value(field.ok() ? *field : "");
    } else if (config != nullptr && !var.value().empty()) {
      // For the agent, as kubelet: a value's $(NAME) is expanded. Clients
      // see the spec as written.
      out.set_value(api::ExpandEnvReferences(var.value(), lookup));
    } else {
      out.set_value(var.value());
    }
    defined[out.name()] = out.value();
  }
  container->clear_env();
  for (api::EnvVar& var : resolved) *container->add_env() = std::move(var);
  if (config != nullptr) container->clear_env_from();
}

}  // namespace

std::string PodName(absl::string_view job, int index, absl::string_view uid) {
  std::string name;
  AppendPodName(job, index, uid, &name);
  return name;
}

void AppendPodName(absl::string_view job, int index, absl::string_view uid,
                   std::string* out) {
  const absl::string_view suffix = uid.substr(0, 5);
  if (index >= 0) {
    absl::StrAppend(out, job, "-", index, "-", suffix);
  } else {
    absl::StrAppend(out, job, "-", suffix);
  }
}

api::PodRecord NewPodRecord(std::string name, std::string uid, int index,
                            absl::Time now) {
  api::PodRecord r;
  r.set_name(std::move(name));
  r.set_uid(std::move(uid));
  r.set_completion_index(index);
  r.mutable_creation_timestamp()->set_seconds(absl::ToUnixSeconds(now));
  r.mutable_status()->set_phase(api::kPodPending);
  return r;
}

AssignedPod AssignedPodOf(const api::PodRecord& record) {
  return {record.name(),
          record.uid(),
          record.completion_index(),
          record.node_name(),
          record.status().host_ip(),
          absl::FromUnixSeconds(record.creation_timestamp().seconds()) +
              absl::Nanoseconds(record.creation_timestamp().nanos()),
          record.has_in_place_restart_attempt()
              ? std::optional<int32_t>(record.in_place_restart_attempt())
              : std::nullopt};
}

api::Pod ExpandPod(const api::Job& job, const AssignedPod& pod,
                   const api::PodConfig* config) {
  api::PodRecord record;
  record.set_name(pod.name);
  record.set_uid(pod.uid);
  record.set_completion_index(pod.completion_index);
  record.set_node_name(pod.node);
  record.mutable_status()->set_host_ip(pod.host_ip);
  const absl::Duration since_epoch = pod.created - absl::UnixEpoch();
  record.mutable_creation_timestamp()->set_seconds(
      absl::ToInt64Seconds(since_epoch));
  record.mutable_creation_timestamp()->set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(since_epoch % absl::Seconds(1))));
  if (pod.in_place_attempt.has_value())
    record.set_in_place_restart_attempt(*pod.in_place_attempt);
  return ExpandPod(job, record, config);
}

std::string PodHostname(const api::Job& job, int index) {
  return index < 0 ? "" : absl::StrCat(job.metadata().name(), "-", index);
}

api::Pod ExpandPod(const api::Job& job, const api::PodRecord& record,
                   const api::PodConfig* config) {
  api::Pod pod;
  const api::PodTemplateSpec& tmpl = job.spec().template_();
  *pod.mutable_metadata() = tmpl.metadata();
  *pod.mutable_spec() = tmpl.spec();
  api::ObjectMeta* meta = pod.mutable_metadata();
  AddJobSetMetadata(job.metadata(), meta);
  meta->set_name(record.name());
  meta->set_namespace_(job.metadata().namespace_());
  meta->set_uid(record.uid());
  if (record.has_creation_timestamp())
    *meta->mutable_creation_timestamp() = record.creation_timestamp();
  if (record.has_deletion_timestamp()) {
    *meta->mutable_deletion_timestamp() = record.deletion_timestamp();
  } else if (job.metadata().has_deletion_timestamp()) {
    // Its Job is being deleted (foreground): so is the pod.
    *meta->mutable_deletion_timestamp() = job.metadata().deletion_timestamp();
  }
  (*meta->mutable_labels())[kBatchJobNameKey] = job.metadata().name();
  (*meta->mutable_labels())["batch.kubernetes.io/controller-uid"] =
      job.metadata().uid();
  const int index = record.completion_index();
  if (index >= 0) {
    (*meta->mutable_labels())[kCompletionIndexKey] = absl::StrCat(index);
    (*meta->mutable_annotations())[kCompletionIndexKey] = absl::StrCat(index);
    pod.mutable_spec()->set_hostname(PodHostname(job, index));
  }
  if (record.has_in_place_restart_attempt()) {
    (*meta->mutable_annotations())[kInPlaceRestartAttemptKey] =
        absl::StrCat(record.in_place_restart_attempt());
    // The controller restarts the whole JobSet in place on any failure; a
    // container restarted alone by its node would leave the gang split.
    pod.mutable_spec()->set_restart_policy("Never");
  }
  *pod.mutable_status() = record.status();
  if (record.has_scheduled_seconds() &&
      FindCondition(pod.status().conditions(), kPodScheduled) == nullptr) {
    auto* conditions = pod.mutable_status()->mutable_conditions();
    api::Condition* scheduled = conditions->Add();
    scheduled->set_type(kPodScheduled);
    scheduled->set_status("True");
    scheduled->mutable_last_transition_time()->set_seconds(
        record.scheduled_seconds());
    // First, where the kubelet's conditions have it.
    std::rotate(conditions->begin(), conditions->end() - 1, conditions->end());
  }
  if (record.node_name().empty()) return pod;

  pod.mutable_spec()->set_node_name(record.node_name());
  pod.mutable_status()->set_pod_ip(record.status().host_ip());
  std::vector<std::pair<std::string, std::string>> extra = {
      {kEnvJobSetName, Label(pod, kJobSetNameKey)},
      {kEnvJobSetNamespace, pod.metadata().namespace_()},
      {kEnvReplicatedJob, Label(pod, kReplicatedJobNameKey)},
      {kEnvJobIndex, Label(pod, kJobIndexKey)},
      {kEnvJobGlobalIndex, Label(pod, kJobGlobalIndexKey)},
      {kEnvRestartAttempt, Label(pod, kRestartAttemptKey)},
  };
  if (const std::string coordinator = Label(pod, kCoordinatorKey);
      !coordinator.empty()) {
    extra.emplace_back(kEnvCoordinator, coordinator);
  }
  if (!pod.spec().hostname().empty()) {
    extra.emplace_back(kEnvPodHostname, pod.spec().hostname());
  }
  if (index >= 0) extra.emplace_back(kEnvCompletionIndex, absl::StrCat(index));
  if (record.has_in_place_restart_attempt()) {
    extra.emplace_back(kEnvInPlaceRestartAttempt,
                       absl::StrCat(record.in_place_restart_attempt()));
  }
  for (api::Container& c : *pod.mutable_spec()->mutable_init_containers())
    ResolveEnv(pod, extra, config, &c);
  for (api::Container& c : *pod.mutable_spec()->mutable_containers())
    ResolveEnv(pod, extra, config, &c);
  return pod;
}

api::Pod ClientPod(const api::Job& job, const api::PodRecord& record) {
  api::Pod pod = ExpandPod(job, record);
  ToKubernetesPodStatus(pod.spec(), pod.mutable_status());
  return pod;
}

absl::Status CheckPodEnv(const api::Job& job) {
  const api::PodSpec& spec = job.spec().template_().spec();
  for (const auto* containers : {&spec.init_containers(), &spec.containers()}) {
    for (const api::Container& c : *containers) {
      for (const api::EnvVar& var : c.env()) {
        if (!var.value_from().has_field_ref()) continue;
        absl::StatusOr<std::string> value =
            ResolveField(nullptr, var.value_from().field_ref().field_path());
        if (!value.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("container ", c.name(), " env ", var.name(), ": ",
                           value.status().message()));
        }
      }
    }
  }
  return absl::OkStatus();
}

void BindPod(const std::string& node, const std::string& host_ip,
             absl::Time now, api::PodRecord* record) {
  record->set_node_name(node);
  record->mutable_status()->set_host_ip(host_ip);
  record->set_scheduled_seconds(absl::ToUnixSeconds(now));
  // PodScheduled=False from an attempt that found no room: ExpandPod puts
  // PodScheduled=True in its place.
  auto* conditions = record->mutable_status()->mutable_conditions();
  conditions->erase(std::remove_if(conditions->begin(), conditions->end(),
                                   [](const api::Condition& c) {
                                     return c.type() == kPodScheduled;
                                   }),
                    conditions->end());
}

std::vector<HostEntry> HostTable(
    const std::vector<std::pair<const api::Job*, const api::PodRecord*>>&
        pods) {
  std::vector<HostEntry> table;
  table.reserve(pods.size());
  for (const auto& [job, pod] : pods) {
    const std::string hostname = PodHostname(*job, pod->completion_index());
    if (hostname.empty() || pod->status().host_ip().empty()) continue;
    HostEntry& entry = table.emplace_back();
    entry.address = pod->status().host_ip();
    entry.names.push_back(hostname);
    const std::string& subdomain = job->spec().template_().spec().subdomain();
    if (!subdomain.empty())
      entry.names.push_back(absl::StrCat(hostname, ".", subdomain));
  }
  return table;
}

const std::string& SharedHostTable::Encoded() const {
  std::call_once(encoded_once_, [this] {
    if (entries_.empty()) return;
    api::HostTable table;
    table.mutable_hosts()->Reserve(entries_.size());
    for (const HostEntry& h : entries_) {
      api::HostEntry* e = table.add_hosts();
      e->set_address(h.address);
      for (const std::string& n : h.names) e->add_names(n);
    }
    encoded_ = api::EncodeHostTable(table);
  });
  return encoded_;
}

}  // namespace jobset::scheduler
