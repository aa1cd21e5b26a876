#include "scheduler/agents/node_object.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/timestamp.pb.h"
#include "scheduler/agents/node_admin.h"

namespace jobset::scheduler {
namespace {

constexpr char kHostnameLabel[] = "kubernetes.io/hostname";
constexpr char kOsLabel[] = "kubernetes.io/os";
constexpr char kArchLabel[] = "kubernetes.io/arch";
constexpr char kUnschedulableTaint[] = "node.kubernetes.io/unschedulable";
constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";

void SetTime(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t seconds = absl::ToUnixSeconds(t);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
}

bool HasTaint(const api::NodeSpec& spec, absl::string_view key,
              absl::string_view effect) {
  for (const api::Taint& t : spec.taints()) {
    if (t.key() == key && t.effect() == effect) return true;
  }
  return false;
}

void AddTaint(absl::string_view key, absl::string_view effect,
              api::NodeSpec* spec) {
  if (HasTaint(*spec, key, effect)) return;
  api::Taint* t = spec->add_taints();
  t->set_key(std::string(key));
  t->set_effect(std::string(effect));
}

}  // namespace

api::Node ToNodeObject(const api::NodeRecord& record,
                       const NodeLiveness& liveness) {
  // Labels and taints as an admin left them over the node's own.
  const api::NodeRegistration r = EffectiveRegistration(record);
  api::Node node;
  node.set_api_version("v1");
  node.set_kind("Node");

  api::ObjectMeta* meta = node.mutable_metadata();
  meta->set_name(r.name());
  auto& labels = *meta->mutable_labels();
  labels.insert(r.labels().begin(), r.labels().end());
  labels.insert({kHostnameLabel, r.name()});  // Kept if the agent set one.
  labels.insert({kOsLabel, "linux"});
  if (record.has_creation_timestamp()) {
    *meta->mutable_creation_timestamp() = record.creation_timestamp();
  }
  auto& annotations = *meta->mutable_annotations();
  annotations[kConnectedAnnotation] = liveness.connected ? "true" : "false";
  annotations[kPodsAnnotation] = absl::StrCat(liveness.pods);
  if (!liveness.allocated.empty()) {
    annotations[kAllocatedAnnotation] =
        absl::StrJoin(liveness.allocated, ",", absl::PairFormatter("="));
  }
  if (r.accelerators_size() > 0) {
    annotations[kAcceleratorsAnnotation] = absl::StrJoin(r.accelerators(), ",");
  }

  api::NodeSpec* spec = node.mutable_spec();
  spec->set_unschedulable(record.cordoned());
  *spec->mutable_taints() = r.taints();
  if (record.cordoned()) AddTaint(kUnschedulableTaint, "NoSchedule", spec);
  if (!liveness.ready) {
    AddTaint(kUnreachableTaint, "NoSchedule", spec);
    AddTaint(kUnreachableTaint, "NoExecute", spec);
  }

  api::NodeStatus* status = node.mutable_status();
  status->mutable_capacity()->insert(r.capacity().begin(), r.capacity().end());
  status->mutable_allocatable()->insert(r.capacity().begin(),
                                        r.capacity().end());
  api::NodeCondition* ready = status->add_conditions();
  ready->set_type("Ready");
  if (!liveness.ready) {
    ready->set_status("Unknown");
    ready->set_reason("NodeStatusUnknown");
    ready->set_message("jobset-agent stopped posting node status.");
  } else {
    ready->set_status("True");
    ready->set_reason("KubeletReady");
    ready->set_message(liveness.connected
                           ? "jobset-agent is posting ready status"
                           : "jobset-agent is not connected; the node stays "
                             "ready until the node-lost timeout");
  }
  if (liveness.last_heartbeat != absl::InfinitePast()) {
    SetTime(liveness.last_heartbeat, ready->mutable_last_heartbeat_time());
  }
  if (liveness.last_transition != absl::InfinitePast()) {
    SetTime(liveness.last_transition, ready->mutable_last_transition_time());
  }
  if (!r.address().empty()) {
    api::NodeAddress* internal = status->add_addresses();
    internal->set_type("InternalIP");
    internal->set_address(r.address());
  }
  api::NodeAddress* hostname = status->add_addresses();
  hostname->set_type("Hostname");
  hostname->set_address(r.name());

  api::NodeSystemInfo* info = status->mutable_node_info();
  info->set_kubelet_version(r.agent_version());
  info->set_operating_system(labels.at(kOsLabel));
  if (auto arch = r.labels().find(kArchLabel); arch != r.labels().end()) {
    info->set_architecture(arch->second);
  }
  return node;
}

}  // namespace jobset::scheduler
