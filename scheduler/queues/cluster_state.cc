#include "scheduler/queues/cluster_state.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {

absl::StatusOr<ClusterState> ClusterState::Build(
    absl::Span<const ResourceFlavor> flavors, absl::Span<const Cohort> cohorts,
    absl::Span<const ClusterQueue> cluster_queues,
    absl::Span<const Workload> admitted) {
  absl::StatusOr<ClusterState> state = Build(flavors, cohorts, cluster_queues);
  if (!state.ok()) return state.status();
  for (const Workload& w : admitted) state->AddAdmitted(w);
  return state;
}

absl::StatusOr<ClusterState> ClusterState::Build(
    absl::Span<const ResourceFlavor> flavors, absl::Span<const Cohort> cohorts,
    absl::Span<const ClusterQueue> cluster_queues) {
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(cohorts, cluster_queues);
  if (!tree.ok()) return tree.status();
  ClusterState state(*std::move(tree));
  for (const ResourceFlavor& flavor : flavors) {
    if (!state.flavors_.emplace(flavor.name, flavor).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resourceFlavors: duplicate name \"", flavor.name, "\""));
    }
  }
  for (const ClusterQueue& cq : cluster_queues) {
    state.cluster_queues_[cq.name] = &cq;
  }
  return state;
}

void ClusterState::AddAdmitted(const Workload& w) {
  if (!w.admission.has_value()) return;
  const std::string& cq = w.admission->cluster_queue;
  AdmittedWorkload a{&w, tree_.ClusterQueueNode(cq), AdmittedUsage(w)};
  if (a.cq == QuotaTree::kNoNode) return;
  AddUsage(a);
  AdmittedQueue& q = admitted_[cq];
  // Behind workloads whose entries are not made yet, it waits with them.
  if (q.unmade.empty()) {
    q.made.push_back(std::move(a));
  } else {
    q.unmade.push_back(&w);
  }
}

void ClusterState::AddAdmitted(
    absl::string_view cq,
    absl::Span<const std::shared_ptr<const Workload>> admitted,
    const FlavorResourceQuantities& usage) {
  const QuotaTree::NodeId node = tree_.ClusterQueueNode(cq);
  if (node == QuotaTree::kNoNode || admitted.empty()) return;
  // What each would add at `node` sums; what passes to the cohorts above
  // depends on that sum only.
  tree_.AddUsage(node, usage);
  AdmittedQueue& q = admitted_[cq];
  q.unmade.reserve(q.unmade.size() + admitted.size());
  for (const std::shared_ptr<const Workload>& w : admitted)
    q.unmade.push_back(w.get());
}

const ClusterQueue* ClusterState::FindClusterQueue(
    absl::string_view name) const {
  auto it = cluster_queues_.find(name);
  return it == cluster_queues_.end() ? nullptr : it->second;
}

const std::vector<AdmittedWorkload>& ClusterState::Admitted(
    absl::string_view name) const {
  static const std::vector<AdmittedWorkload>* const kNone =
      new std::vector<AdmittedWorkload>();
  auto it = admitted_.find(name);
  if (it == admitted_.end()) return *kNone;
  AdmittedQueue& q = it->second;
  if (!q.unmade.empty()) {
    const QuotaTree::NodeId node = tree_.ClusterQueueNode(name);
    q.made.reserve(q.made.size() + q.unmade.size());
    for (const Workload* w : q.unmade)
      q.made.push_back(AdmittedWorkload{w, node, AdmittedUsage(*w)});
    q.unmade.clear();
  }
  return q.made;
}

}  // namespace jobset::scheduler::queues
