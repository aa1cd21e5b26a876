#include "scheduler/queues/flavor_assigner.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

// FA's preemptionMode, worst first.
enum class PreemptionMode { kNoFit, kNoCandidates, kPreempt, kReclaim, kFit };

// FA's granularMode: how a flavor fits and how far it borrows.
struct GranularMode {
  PreemptionMode mode = PreemptionMode::kFit;
  int borrow = 0;
};

constexpr GranularMode kWorstMode{PreemptionMode::kNoFit, INT_MAX};
constexpr GranularMode kBestMode{PreemptionMode::kFit, 0};

// Returns whether `a` is better than `b` (isPreferred).
bool IsPreferred(GranularMode a, GranularMode b, const FlavorFungibility& f) {
  if (a.mode == PreemptionMode::kNoFit) return false;
  if (b.mode == PreemptionMode::kNoFit) return true;
  // No candidates cannot admit now: below every viable mode.
  const bool a_none = a.mode == PreemptionMode::kNoCandidates;
  const bool b_none = b.mode == PreemptionMode::kNoCandidates;
  if (a_none != b_none) return !a_none;
  if (f.preference == FungibilityPreference::kPreemptionOverBorrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.mode > b.mode;
  }
  if (a.mode != b.mode) return a.mode > b.mode;
  return a.borrow < b.borrow;
}

bool ShouldTryNextFlavor(GranularMode m, const FlavorFungibility& f) {
  if (m.mode == PreemptionMode::kNoFit ||
      m.mode == PreemptionMode::kNoCandidates) {
    return true;
  }
  const bool preempts =
      m.mode == PreemptionMode::kPreempt || m.mode == PreemptionMode::kReclaim;
  if (preempts && f.when_can_preempt == FungibilityPolicy::kTryNextFlavor) {
    return true;
  }
  return m.borrow != 0 &&
         f.when_can_borrow == FungibilityPolicy::kTryNextFlavor;
}

AssignmentMode ToAssignmentMode(PreemptionMode m) {
  switch (m) {
    case PreemptionMode::kNoFit:
      return AssignmentMode::kNoFit;
    case PreemptionMode::kFit:
      return AssignmentMode::kFit;
    default:
      return AssignmentMode::kPreempt;
  }
}

PreemptionMode FromPossibility(PreemptionPossibility p) {
  switch (p) {
    case PreemptionPossibility::kPreempt:
      return PreemptionMode::kPreempt;
    case PreemptionPossibility::kReclaim:
      return PreemptionMode::kReclaim;
    case PreemptionPossibility::kNoCandidates:
      break;
  }
  return PreemptionMode::kNoCandidates;
}

int Severity(absl::string_view reason) {
  if (reason == kReasonNoMatchingFlavor) return 4;
  if (reason == kReasonExceedsMaxQuota) return 3;
  if (reason == kReasonWaitingForQuota) return 2;
  return 0;
}

std::string MostSevere(std::string a, std::string b) {
  return Severity(a) >= Severity(b) ? a : b;
}

const ResourceGroup* GroupFor(const ClusterQueue& cq,
                              absl::string_view resource) {
  for (const ResourceGroup& group : cq.resource_groups) {
    if (absl::c_linear_search(group.covered_resources, resource)) return &group;
  }
  return nullptr;
}

// Reads a base-10 int64 as Go's strconv.ParseInt: an optional sign, then
// digits only.
std::optional<int64_t> ParseInt64(absl::string_view text) {
  absl::string_view digits = text;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    digits.remove_prefix(1);
  }
  if (digits.empty() || !absl::c_all_of(digits, absl::ascii_isdigit)) {
    return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

// Kubernetes' Gt/Lt: both sides integers, else no match.
bool CompareMatches(const SelectorRequirement& r, absl::string_view label) {
  if (r.values.size() != 1) return false;
  const std::optional<int64_t> bound = ParseInt64(r.values[0]);
  const std::optional<int64_t> value = ParseInt64(label);
  if (!bound.has_value() || !value.has_value()) return false;
  return r.op == SelectorOperator::kGt ? *value > *bound : *value < *bound;
}

bool RequirementMatches(const SelectorRequirement& r,
                        const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  switch (r.op) {
    case SelectorOperator::kIn:
      return it != labels.end() && absl::c_linear_search(r.values, it->second);
    case SelectorOperator::kNotIn:
      return it == labels.end() || !absl::c_linear_search(r.values, it->second);
    case SelectorOperator::kExists:
      return it != labels.end();
    case SelectorOperator::kDoesNotExist:
      return it == labels.end();
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      return it != labels.end() && CompareMatches(r, it->second);
  }
  return false;
}

// FA's flavorSelector: the pods' selector and required affinity, restricted
// to the keys the flavor defines, matched against the flavor's labels.
bool MatchesNodeAffinity(const PodPlacement& pods,
                         const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : pods.node_selector) {
    auto it = labels.find(key);
    if (it != labels.end() && it->second != value) return false;
  }
  bool any_term = false;
  for (const NodeSelectorTerm& term : pods.required_affinity) {
    bool matches = true;
    bool relevant = false;
    for (const SelectorRequirement& r : term) {
      if (!labels.contains(r.key)) continue;
      relevant = true;
      matches = matches && RequirementMatches(r, labels);
    }
    // A term left empty matches any flavor, and the terms are ORed.
    if (!relevant || matches) return true;
    any_term = true;
  }
  return !any_term;
}

// A flavor-assignment status: reasons, and the QuotaReserved reason the
// worst of them maps to.
struct Status {
  std::vector<std::string> reasons;
  std::string no_fit_reason;
};

// The flavors found for one resource group of one podSet.
struct GroupResult {
  std::map<std::string, FlavorChoice> flavors;  // empty: none found
  Status status;
  // The least severe reason among the flavors that did not fit: what would
  // have to change for the group to fit.
  std::string attempts_reason;
  bool any_attempt_failed = false;
};

class Assigner {
 public:
  Assigner(const ClusterQueue& cq, const FlavorIndex& flavors,
           const QuotaTree& tree, PreemptionOracle oracle, bool fair_sharing)
      : cq_(cq),
        flavors_(flavors),
        tree_(tree),
        oracle_(oracle),
        fair_sharing_(fair_sharing),
        node_(tree.ClusterQueueNode(cq.name)) {}

  Assignment Run(const Workload& workload) {
    Assignment out;
    if (node_ == QuotaTree::kNoNode) {
      out.no_fit_reason = std::string(kReasonNoMatchingFlavor);
      return out;
    }
    for (const PodSet& ps : workload.pod_sets) {
      PodSetFlavors psf;
      psf.name = ps.name;
      psf.count = ps.count;
      psf.requests = PodSetRequests(ps, cq_);
      std::optional<std::string> failed = AssignPodSet(ps, out.usage, psf);
      for (const auto& [resource, choice] : psf.flavors) {
        out.borrowing = std::max(out.borrowing, choice.borrow);
        out.usage[FlavorResource{choice.flavor, resource}] +=
            psf.requests[resource];
      }
      out.pod_sets.push_back(std::move(psf));
      if (failed.has_value()) {
        out.no_fit_reason = *std::move(failed);
        return out;
      }
    }
    return out;
  }

 private:
  // Fills psf.flavors and psf.reasons; returns the QuotaReserved reason if
  // some resource got no flavor.
  std::optional<std::string> AssignPodSet(const PodSet& ps,
                                          const FlavorResourceQuantities& used,
                                          PodSetFlavors& psf) {
    for (const auto& [resource, quantity] : psf.requests) {
      const ResourceGroup* group = GroupFor(cq_, resource);
      if (group == nullptr) {
        if (quantity == 0) continue;
        psf.flavors.clear();
        psf.reasons = {absl::StrCat("resource ", resource,
                                    " unavailable in ClusterQueue")};
        return std::string(kReasonNoMatchingFlavor);
      }
      if (psf.flavors.contains(resource)) continue;  // its group is done
      GroupResult result = FindFlavor(ps, psf.requests, *group, used);
      if (result.flavors.empty()) {
        psf.flavors.clear();
        psf.reasons = std::move(result.status.reasons);
        return result.any_attempt_failed
                   ? MostSevere(result.status.no_fit_reason,
                                result.attempts_reason)
                   : std::string(kReasonNoMatchingFlavor);
      }
      psf.flavors.merge(result.flavors);
      absl::c_move(result.status.reasons, std::back_inserter(psf.reasons));
    }
    return std::nullopt;
  }

  // findFlavorForPodSets: the flavor of `group` for this podSet.
  GroupResult FindFlavor(const PodSet& ps, const ResourceQuantities& requests,
                         const ResourceGroup& group,
                         const FlavorResourceQuantities& used) {
    GroupResult out;
    GranularMode best_mode = kWorstMode;
    auto attempt_failed = [&out](std::string reason) {
      out.attempts_reason =
          out.any_attempt_failed
              ? std::min(out.attempts_reason, reason,
                         [](const std::string& a, const std::string& b) {
                           return Severity(a) < Severity(b);
                         })
              : reason;
      out.any_attempt_failed = true;
    };
    for (const FlavorQuotas& fq : group.flavors) {
      const std::string& name = fq.name;
      auto flavor = flavors_.find(name);
      if (flavor == flavors_.end()) {
        out.status.reasons.push_back(
            absl::StrCat("flavor ", name, " not found"));
        attempt_failed(std::string(kReasonNoMatchingFlavor));
        continue;
      }
      if (std::optional<std::string> mismatch =
              FlavorMismatch(ps.placement, flavor->second)) {
        out.status.reasons.push_back(*std::move(mismatch));
        attempt_failed(std::string(kReasonNoMatchingFlavor));
        continue;
      }
      std::map<std::string, FlavorChoice> choices;
      GranularMode mode = kBestMode;
      std::string flavor_reason;
      for (const auto& [resource, val] : requests) {
        if (!absl::c_linear_search(group.covered_resources, resource)) continue;
        const FlavorResource fr{name, resource};
        auto prior = used.find(fr);
        Status s;
        const GranularMode m = FitsResourceQuota(
            fr, prior == used.end() ? 0 : prior->second, val, s);
        absl::c_copy(s.reasons, std::back_inserter(out.status.reasons));
        flavor_reason = MostSevere(flavor_reason, s.no_fit_reason);
        if (IsPreferred(mode, m, cq_.flavor_fungibility)) mode = m;
        if (mode.mode == PreemptionMode::kNoFit) break;
        choices[resource] =
            FlavorChoice{name, ToAssignmentMode(m.mode), m.borrow};
      }
      if (mode.mode == PreemptionMode::kNoFit) attempt_failed(flavor_reason);
      if (!ShouldTryNextFlavor(mode, cq_.flavor_fungibility)) {
        out.flavors = std::move(choices);
        best_mode = mode;
        break;
      }
      if (IsPreferred(mode, best_mode, cq_.flavor_fungibility)) {
        out.flavors = std::move(choices);
        best_mode = mode;
      }
    }
    if (best_mode.mode == PreemptionMode::kFit) out.status = Status{};
    return out;
  }

  // fitsResourceQuota: how `fr` can hold `assumed` (earlier podSets) plus
  // `request`.
  GranularMode FitsResourceQuota(const FlavorResource& fr, int64_t assumed,
                                 int64_t request, Status& status) {
    const int64_t available = tree_.Available(node_, fr);
    const int64_t max_capacity = tree_.PotentialAvailable(node_, fr);
    const int64_t val = assumed + request;
    if (val > max_capacity) {
      status.reasons.push_back(absl::StrCat(
          "insufficient quota for ", fr.resource, " in flavor ", fr.flavor,
          ", previously considered podsets requests (",
          FormatQuantity(fr.resource, assumed), ") + current podset request (",
          FormatQuantity(fr.resource, request), ") > maximum capacity (",
          FormatQuantity(fr.resource, max_capacity), ")"));
      status.no_fit_reason = std::string(kReasonExceedsMaxQuota);
      return GranularMode{PreemptionMode::kNoFit, 0};
    }
    const QuotaTree::SubtreeFit fit =
        tree_.LowestSubtreeThatFits(node_, fr, val);
    if (val <= available) return GranularMode{PreemptionMode::kFit, fit.height};
    status.reasons.push_back(absl::StrCat(
        "insufficient unused quota for ", fr.resource, " in flavor ", fr.flavor,
        ", ", FormatQuantity(fr.resource, val - available), " more needed"));
    status.no_fit_reason = std::string(kReasonWaitingForQuota);
    // canPreemptWhileBorrowing.
    const bool preempt_while_borrowing =
        cq_.preemption.borrow_within_cohort.policy !=
            BorrowWithinCohortPolicy::kNever ||
        (fair_sharing_ &&
         cq_.preemption.reclaim_within_cohort != PreemptionPolicy::kNever);
    if (tree_.Quota(node_, fr).nominal_quota >= val || fit.below_root ||
        preempt_while_borrowing) {
      const PreemptionSimulation sim = oracle_(fr, val);
      status.no_fit_reason.clear();
      return GranularMode{FromPossibility(sim.possibility), sim.borrow_after};
    }
    return GranularMode{PreemptionMode::kNoFit, fit.height};
  }

  const ClusterQueue& cq_;
  const FlavorIndex& flavors_;
  const QuotaTree& tree_;
  PreemptionOracle oracle_;
  const bool fair_sharing_;
  const QuotaTree::NodeId node_;
};

}  // namespace

AssignmentMode PodSetFlavors::Mode() const {
  if (reasons.empty()) return AssignmentMode::kFit;
  if (flavors.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const auto& [resource, choice] : flavors) {
    mode = std::min(mode, choice.mode);
  }
  return mode;
}

AssignmentMode Assignment::Mode() const {
  if (pod_sets.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const PodSetFlavors& ps : pod_sets) mode = std::min(mode, ps.Mode());
  return mode;
}

std::string Assignment::Message() const {
  std::vector<std::string> parts;
  for (const PodSetFlavors& ps : pod_sets) {
    if (ps.reasons.empty()) continue;
    std::vector<std::string> reasons = ps.reasons;
    std::sort(reasons.begin(), reasons.end());
    parts.push_back(absl::StrCat("couldn't assign flavors to pod set ", ps.name,
                                 ": ", absl::StrJoin(reasons, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

std::set<FlavorResource> Assignment::NeedPreemption() const {
  std::set<FlavorResource> out;
  for (const PodSetFlavors& ps : pod_sets) {
    for (const auto& [resource, choice] : ps.flavors) {
      if (choice.mode == AssignmentMode::kPreempt) {
        out.insert(FlavorResource{choice.flavor, resource});
      }
    }
  }
  return out;
}

Admission Assignment::ToAdmission(const std::string& cq) const {
  Admission admission;
  admission.cluster_queue = cq;
  for (const PodSetFlavors& ps : pod_sets) {
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.count = ps.count;
    for (const auto& [resource, choice] : ps.flavors) {
      psa.flavors[resource] = choice.flavor;
      auto it = ps.requests.find(resource);
      psa.resource_usage[resource] = it == ps.requests.end() ? 0 : it->second;
    }
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  return admission;
}

std::optional<std::string> FlavorMismatch(const PodPlacement& pods,
                                          const ResourceFlavor& flavor) {
  for (const Taint& taint : flavor.node_taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    auto tolerates = [&taint](const Toleration& t) {
      return Tolerates(t, taint);
    };
    if (absl::c_none_of(pods.tolerations, tolerates) &&
        absl::c_none_of(flavor.tolerations, tolerates)) {
      return absl::StrCat("untolerated taint ", TaintString(taint),
                          " in flavor ", flavor.name);
    }
  }
  if (!MatchesNodeAffinity(pods, flavor.node_labels)) {
    return absl::StrCat("flavor ", flavor.name, " doesn't match node affinity");
  }
  return std::nullopt;
}

ResourceQuantities PodSetRequests(const PodSet& pod_set,
                                  const ClusterQueue& cq) {
  ResourceQuantities out;
  for (const auto& [resource, per_pod] : pod_set.requests) {
    out[resource] = per_pod * pod_set.count;
  }
  if (GroupFor(cq, kPods) != nullptr) out[std::string(kPods)] = pod_set.count;
  return out;
}

Assignment AssignFlavors(const Workload& workload, const ClusterQueue& cq,
                         const FlavorIndex& flavors, const QuotaTree& tree,
                         PreemptionOracle oracle, bool fair_sharing) {
  return Assigner(cq, flavors, tree, oracle, fair_sharing).Run(workload);
}

}  // namespace jobset::scheduler::queues
