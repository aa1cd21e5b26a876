#include "scheduler/agents/desired_sets.h"

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/placement/requirements.h"

namespace jobset::scheduler {

const Assignment& DesiredSets::Run(Assignment order) {
  pod_nodes_[order.uid()] = order.node();
  Assignment& desired = sets_[order.node()][order.uid()];
  desired = std::move(order);
  desired.stop = false;
  return desired;
}

bool DesiredSets::Stop(const std::string& node, const std::string& pod_uid) {
  auto pods = sets_.find(node);
  if (pods == sets_.end()) return false;
  auto pod = pods->second.find(pod_uid);
  if (pod == pods->second.end()) return false;
  pod->second.stop = true;
  return true;
}

void DesiredSets::Release(const std::string& node, const std::string& pod_uid) {
  auto pods = sets_.find(node);
  if (pods != sets_.end()) {
    pods->second.erase(pod_uid);
    if (pods->second.empty()) sets_.erase(pods);
  }
  if (auto bound = pod_nodes_.find(pod_uid);
      bound != pod_nodes_.end() && bound->second == node) {
    pod_nodes_.erase(bound);
  }
}

std::vector<Assignment> DesiredSets::Of(const std::string& node) const {
  std::vector<Assignment> out;
  auto pods = sets_.find(node);
  if (pods == sets_.end()) return out;
  out.reserve(pods->second.size());
  for (const auto& [uid, desired] : pods->second) out.push_back(desired);
  return out;
}

const Assignment* DesiredSets::Find(const std::string& node,
                                    const std::string& pod_uid) const {
  auto pods = sets_.find(node);
  if (pods == sets_.end()) return nullptr;
  auto pod = pods->second.find(pod_uid);
  return pod == pods->second.end() ? nullptr : &pod->second;
}

DesiredSets::Fence DesiredSets::Check(const std::string& node,
                                      const std::string& pod_uid) const {
  if (Find(node, pod_uid) != nullptr) return Fence::kDesired;
  return ForeignPod(node, pod_uid).ok() ? Fence::kFenced : Fence::kForeign;
}

absl::Status DesiredSets::ForeignPod(const std::string& node,
                                     const std::string& pod_uid) const {
  auto bound = pod_nodes_.find(pod_uid);
  if (bound == pod_nodes_.end() || bound->second == node) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("node \"", node, "\" may only report pods bound to it (pod ",
                   pod_uid, " is not)"));
}

NodeLoad DesiredSets::Load(const std::string& node) const {
  NodeLoad load;
  auto pods = sets_.find(node);
  if (pods == sets_.end()) return load;
  for (const auto& [uid, d] : pods->second) {
    if (d.stop) continue;
    ++load.pods;
    // What a pod requests is its Job's template's.
    absl::StatusOr<placement::PodRequirements> req =
        placement::RequirementsFromPodSpec(d.job->spec().template_().spec());
    if (!req.ok()) continue;
    load.allocated.cpu_millis += req->resources.cpu_millis;
    load.allocated.memory_bytes += req->resources.memory_bytes;
    for (const auto& [name, n] : req->resources.extended)
      load.allocated.extended[name] += n;
  }
  return load;
}

}  // namespace jobset::scheduler
