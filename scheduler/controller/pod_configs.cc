#include "scheduler/controller/pod_configs.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_phase.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

const std::shared_ptr<const api::PodConfig>& EmptyConfig() {
  static const auto* const kEmpty = new std::shared_ptr<const api::PodConfig>(
      std::make_shared<const api::PodConfig>());
  return *kEmpty;
}

// Whether `pod` is one to send (bound, current, not stopping).
bool ToSend(const api::PodRecord& pod) {
  return OnNode(pod) && !pod.has_deletion_timestamp();
}

void SetWaiting(const std::string& name, const std::string& message,
                google::protobuf::RepeatedPtrField<api::ContainerStatus>* out) {
  api::ContainerStatus* status = nullptr;
  for (api::ContainerStatus& c : *out) {
    if (c.name() == name) status = &c;
  }
  if (status == nullptr) {
    status = out->Add();
    status->set_name(name);
  }
  const int32_t restarts = status->restart_count();
  status->Clear();
  status->set_name(name);
  status->set_restart_count(restarts);
  status->set_flat_state("waiting");
  status->set_reason(api::kReasonCreateContainerConfigError);
  status->set_message(message);
}

}  // namespace

bool HoldPod(const api::PodSpec& spec, const std::string& message,
             api::PodRecord* pod) {
  api::PodRecord before = *pod;
  pod->set_waiting_for_config(true);
  api::PodStatus* status = pod->mutable_status();
  status->set_phase(api::kPodPending);
  status->clear_reason();
  status->clear_message();
  // Only the spec's containers, each once (a stale one is dropped).
  google::protobuf::RepeatedPtrField<api::ContainerStatus> init, app;
  for (const api::Container& c : spec.init_containers()) {
    SetWaiting(c.name(), message, status->mutable_init_container_statuses());
    for (const api::ContainerStatus& s : status->init_container_statuses()) {
      if (s.name() == c.name()) *init.Add() = s;
    }
  }
  for (const api::Container& c : spec.containers()) {
    SetWaiting(c.name(), message, status->mutable_container_statuses());
    for (const api::ContainerStatus& s : status->container_statuses()) {
      if (s.name() == c.name()) *app.Add() = s;
    }
  }
  *status->mutable_init_container_statuses() = std::move(init);
  *status->mutable_container_statuses() = std::move(app);
  return before.SerializeAsString() != pod->SerializeAsString();
}

void ReleaseHeldPod(api::PodRecord* pod) {
  pod->set_waiting_for_config(false);
  api::PodStatus* status = pod->mutable_status();
  status->set_phase(api::kPodPending);
  status->clear_reason();
  status->clear_message();
  // The agent reports the containers once it has them.
  status->clear_container_statuses();
  status->clear_init_container_statuses();
}

absl::StatusOr<api::ConfigObjects> ConfigReader::Read(
    absl::string_view ns, const api::ConfigReferences& refs) {
  api::ConfigObjects out;
  for (const std::string& name : refs.secrets) {
    const std::string key = store::keys::SecretKey(ns, name);
    if (absent_.contains(key)) continue;
    auto cached = secrets_.find(key);
    if (cached == secrets_.end()) {
      absl::StatusOr<std::optional<store::KeyValue>> kv = store_->Get(key);
      if (!kv.ok()) return kv.status();
      if (!kv->has_value()) {
        absent_.insert(key);
        continue;
      }
      absl::StatusOr<api::Secret> secret =
          store::DecodeValue<api::Secret>(**kv);
      if (!secret.ok()) return secret.status();
      cached =
          secrets_
              .emplace(key,
                       std::make_shared<const api::Secret>(*std::move(secret)))
              .first;
    }
    out.secrets[name] = cached->second;
  }
  for (const std::string& name : refs.config_maps) {
    const std::string key = store::keys::ConfigMapKey(ns, name);
    if (absent_.contains(key)) continue;
    auto cached = config_maps_.find(key);
    if (cached == config_maps_.end()) {
      absl::StatusOr<std::optional<store::KeyValue>> kv = store_->Get(key);
      if (!kv.ok()) return kv.status();
      if (!kv->has_value()) {
        absent_.insert(key);
        continue;
      }
      absl::StatusOr<api::ConfigMap> config_map =
          store::DecodeValue<api::ConfigMap>(**kv);
      if (!config_map.ok()) return config_map.status();
      cached = config_maps_
                   .emplace(key, std::make_shared<const api::ConfigMap>(
                                     *std::move(config_map)))
                   .first;
    }
    out.config_maps[name] = cached->second;
  }
  return out;
}

void PodConfigs::Clear() {
  waiting_.clear();
  retry_.clear();
  last_retry_ = absl::InfinitePast();
}

void PodConfigs::ConfigChanged(absl::string_view ns) {
  const std::string prefix = absl::StrCat(ns, "/");
  for (auto it = waiting_.lower_bound(prefix);
       it != waiting_.end() && absl::StartsWith(*it, prefix); ++it) {
    retry_.insert(*it);
  }
}

void PodConfigs::RetryAll() { retry_.insert(waiting_.begin(), waiting_.end()); }

void PodConfigs::Waiting(const std::string& key) { waiting_.insert(key); }

void PodConfigs::ResolveJob(TrackedJobSet& t, JobState& job,
                            ConfigReader& reader) {
  if (job.config != nullptr && job.config_error.empty()) return;
  const api::PodSpec& spec = job.job.spec().template_().spec();
  const api::ConfigReferences refs = api::ReferencedConfigObjects(spec);
  job.config_error.clear();
  if (refs.empty()) {
    job.config = EmptyConfig();
    return;
  }
  const std::string& ns = t.jobset.metadata().namespace_();
  absl::StatusOr<api::ConfigObjects> objects = reader.Read(ns, refs);
  if (!objects.ok()) {
    // Retried like a missing object; the store's error names no value.
    job.config_error =
        absl::StrCat("reading the pod's Secrets and ConfigMaps: ",
                     objects.status().message());
    job.config = EmptyConfig();
    return;
  }
  absl::StatusOr<api::PodConfig> strict =
      api::ResolvePodConfig(ns, spec, *objects);
  if (strict.ok()) {
    job.config = std::make_shared<const api::PodConfig>(*std::move(strict));
    return;
  }
  job.config_error = std::string(strict.status().message());
  absl::StatusOr<api::PodConfig> lenient =
      api::ResolvePodConfig(ns, spec, *objects, /*best_effort=*/true);
  job.config = lenient.ok()
                   ? std::make_shared<const api::PodConfig>(*std::move(lenient))
                   : EmptyConfig();
}

void PodConfigs::Resolve(const std::set<std::string>& keys,
                         ControllerState& state, PassWrites& writes,
                         absl::Time now) {
  std::set<std::string> todo;
  for (const std::string& key : keys) {
    // Of JobSets a pass touched, those launched and those with pods
    // waiting.
    if (writes.launched().contains(key) || waiting_.contains(key))
      todo.insert(key);
  }
  todo.insert(writes.launched().begin(), writes.launched().end());
  todo.insert(retry_.begin(), retry_.end());
  retry_.clear();
  if (!waiting_.empty() && now - last_retry_ >= kRetryInterval) {
    todo.insert(waiting_.begin(), waiting_.end());
    last_retry_ = now;
  }
  if (todo.empty()) return;
  ConfigReader reader(store_);
  for (const std::string& key : todo) {
    TrackedJobSet* t = state.Find(key);
    if (t == nullptr) {
      waiting_.erase(key);
      continue;
    }
    bool launch = false;
    bool waits = false;
    for (auto& [name, job] : t->jobs) {
      if (job.deleting()) continue;
      std::vector<api::PodRecord*> pods;
      for (auto& [pod_name, pod] : job.pods) {
        if (ToSend(pod)) pods.push_back(&pod);
      }
      if (pods.empty()) continue;
      const bool resolved_before =
          job.config != nullptr && job.config_error.empty();
      ResolveJob(*t, job, reader);
      if (!resolved_before && job.config_error.empty() &&
          !job.config->warnings.empty()) {
        for (const std::string& w : job.config->warnings) {
          writes.Event(key, {"Warning", "FailedToRetrieveImagePullSecret",
                             absl::StrCat("Job ", name, ": ", w)});
        }
      }
      const api::PodSpec& spec = job.job.spec().template_().spec();
      std::vector<std::string> newly_held;
      bool changed = false;
      for (api::PodRecord* pod : pods) {
        if (job.config_error.empty()) {
          if (!pod->waiting_for_config()) continue;
          ReleaseHeldPod(pod);
          changed = launch = true;
          continue;
        }
        // Started already: it is not taken back.
        if (PodStarted(*pod) && !pod->waiting_for_config()) continue;
        waits = true;
        if (!pod->waiting_for_config()) newly_held.push_back(pod->name());
        changed |= HoldPod(spec, job.config_error, pod);
      }
      if (changed) writes.PodsChanged(*t, job);
      if (!newly_held.empty()) {
        // kubelet's event (reason Failed, "Error: ..."), once a pod starts
        // waiting. The message names objects and keys, never values.
        writes.Event(
            key,
            {"Warning", "Failed",
             absl::StrCat("pod ", newly_held[0], ": Error: ", job.config_error,
                          newly_held.size() > 1
                              ? absl::StrCat(" (and ", newly_held.size() - 1,
                                             " more pods of Job ", name, ")")
                              : "")});
      }
    }
    if (waits) {
      waiting_.insert(key);
    } else {
      waiting_.erase(key);
    }
    if (launch) writes.Launched(key);
  }
}

void PodConfigs::ResolveForAnnounce(ControllerState& state) {
  ConfigReader reader(store_);
  for (auto& [key, t] : state.jobsets()) {
    for (auto& [name, job] : t.jobs) {
      if (job.deleting()) continue;
      bool any = false;
      bool held = false;
      for (const auto& [pod_name, pod] : job.pods) {
        if (!ToSend(pod)) continue;
        any = true;
        held |= pod.waiting_for_config();
      }
      if (!any) continue;
      ResolveJob(t, job, reader);
      if (held || !job.config_error.empty()) {
        waiting_.insert(key);
        retry_.insert(key);
      }
    }
  }
}

std::optional<absl::Time> PodConfigs::NextWake() const {
  if (!retry_.empty()) return absl::InfinitePast();
  if (waiting_.empty()) return std::nullopt;
  return last_retry_ + kRetryInterval;
}

}  // namespace jobset::scheduler
