#include "scheduler/queues/jobset_workload.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/field_errors.h"
#include "api/quantity.h"
#include "common/quote.h"

namespace jobset::scheduler::queues {
namespace {

// Kueue's name of the kind and group, hashed into the Workload's name.
constexpr absl::string_view kKind = "JobSet";
constexpr absl::string_view kGroup = "jobset.x-k8s.io";
constexpr int kHashLength = 5;
// 253 (a DNS-1123 subdomain) less "-" and the hash.
constexpr size_t kMaxPrefixLength = 253 - 1 - kHashLength;

// Quantities in thousandths of a unit, by resource; std::less<> so that a
// string_view finds a key.
using MilliMap = std::map<std::string, int64_t, std::less<>>;

absl::Status Invalid(absl::string_view path, absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", detail));
}

// One container's requests, each missing one filled by its limit
// (UseLimitsAsMissingRequestsInPod), in thousandths of a unit.
absl::StatusOr<MilliMap> ContainerRequests(const api::Container& container,
                                           absl::string_view path) {
  MilliMap out;
  const api::ResourceRequirements& resources = container.resources();
  // Sorted, so that the first error reported does not depend on hashing.
  const std::map<std::string, std::string> requests(
      resources.requests().begin(), resources.requests().end());
  const std::map<std::string, std::string> limits(resources.limits().begin(),
                                                  resources.limits().end());
  auto add = [&](const std::map<std::string, std::string>& list,
                 absl::string_view field) -> absl::Status {
    for (const auto& [name, text] : list) {
      const std::string field_path =
          api::Key(absl::StrCat(path, ".resources.", field), name);
      absl::StatusOr<api::Quantity> quantity = api::ParseQuantity(text);
      if (!quantity.ok()) {
        return Invalid(field_path, quantity.status().message());
      }
      if (quantity->MilliValue() < 0) {
        return Invalid(field_path, "must be greater than or equal to 0");
      }
      out.try_emplace(name, quantity->MilliValue());  // a request wins
    }
    return absl::OkStatus();
  };
  if (absl::Status s = add(requests, "requests"); !s.ok()) return s;
  if (absl::Status s = add(limits, "limits"); !s.ok()) return s;
  return out;
}

// Kubernetes' PodRequests without sidecars or overhead (the proto has
// neither): per resource, max(sum over containers, max over init
// containers).
absl::StatusOr<MilliMap> PodRequestsMilli(const api::PodSpec& spec,
                                          absl::string_view path) {
  MilliMap sum;
  for (int i = 0; i < spec.containers_size(); ++i) {
    absl::StatusOr<MilliMap> one = ContainerRequests(
        spec.containers(i), api::Index(api::Child(path, "containers"), i));
    if (!one.ok()) return one.status();
    for (const auto& [name, milli] : *one) {
      if (__builtin_add_overflow(sum[name], milli, &sum[name])) {
        return Invalid(api::Child(path, "containers"),
                       absl::StrCat("the total request of ", name,
                                    " does not fit in 64 bits"));
      }
    }
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    absl::StatusOr<MilliMap> one =
        ContainerRequests(spec.init_containers(i),
                          api::Index(api::Child(path, "initContainers"), i));
    if (!one.ok()) return one.status();
    for (const auto& [name, milli] : *one) {
      int64_t& slot = sum[name];
      slot = std::max(slot, milli);
    }
  }
  return sum;
}

// Kueue's ResourceValue: cpu in milli-units, anything else in whole units
// rounded up.
ResourceQuantities ToModelUnits(const MilliMap& milli) {
  ResourceQuantities out;
  for (const auto& [name, value] : milli) {
    out[name] = name == kCpu ? value : api::Quantity::FromMilli(value).Value();
  }
  return out;
}

absl::StatusOr<Toleration> ConvertToleration(const api::Toleration& in,
                                             absl::string_view path) {
  Toleration out;
  out.key = in.key();
  out.value = in.value();
  if (in.operator_().empty() || in.operator_() == "Equal") {
    out.op = TolerationOperator::kEqual;
  } else if (in.operator_() == "Exists") {
    out.op = TolerationOperator::kExists;
  } else {
    return Invalid(api::Child(path, "operator"),
                   absl::StrCat("Unsupported value: ", Quote(in.operator_()),
                                ": supported values: \"Equal\", \"Exists\""));
  }
  const std::string& effect = in.effect();
  if (effect == "NoSchedule") {
    out.effect = TaintEffect::kNoSchedule;
  } else if (effect == "PreferNoSchedule") {
    out.effect = TaintEffect::kPreferNoSchedule;
  } else if (effect == "NoExecute") {
    out.effect = TaintEffect::kNoExecute;
  } else if (!effect.empty()) {
    return Invalid(api::Child(path, "effect"),
                   absl::StrCat("Unsupported value: ", Quote(effect),
                                ": supported values: \"NoExecute\", "
                                "\"NoSchedule\", \"PreferNoSchedule\""));
  }
  return out;
}

absl::StatusOr<SelectorOperator> ConvertOperator(absl::string_view op,
                                                 absl::string_view path) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (op == "Gt") return SelectorOperator::kGt;
  if (op == "Lt") return SelectorOperator::kLt;
  return Invalid(path, absl::StrCat("Unsupported value: ", Quote(op),
                                    ": supported values: \"DoesNotExist\", "
                                    "\"Exists\", \"Gt\", \"In\", \"Lt\", "
                                    "\"NotIn\""));
}

// What flavor selection reads from the pod template (FA flavorSelector and
// the taint check).
absl::StatusOr<PodPlacement> PlacementFor(const api::PodSpec& spec,
                                          absl::string_view path) {
  PodPlacement out;
  out.node_selector.insert(spec.node_selector().begin(),
                           spec.node_selector().end());
  const api::NodeAffinity& affinity = spec.affinity().node_affinity();
  if (affinity.has_required_during_scheduling_ignored_during_execution()) {
    const std::string terms_path = api::Child(
        path,
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms");
    const auto& terms =
        affinity.required_during_scheduling_ignored_during_execution()
            .node_selector_terms();
    for (int i = 0; i < terms.size(); ++i) {
      NodeSelectorTerm term;
      for (int j = 0; j < terms[i].match_expressions_size(); ++j) {
        const api::NodeSelectorRequirement& in = terms[i].match_expressions(j);
        absl::StatusOr<SelectorOperator> op = ConvertOperator(
            in.operator_(),
            api::Child(api::Index(api::Child(api::Index(terms_path, i),
                                             "matchExpressions"),
                                  j),
                       "operator"));
        if (!op.ok()) return op.status();
        term.push_back(SelectorRequirement{
            in.key(), *op, {in.values().begin(), in.values().end()}});
      }
      out.required_affinity.push_back(std::move(term));
    }
  }
  for (int i = 0; i < spec.tolerations_size(); ++i) {
    absl::StatusOr<Toleration> toleration = ConvertToleration(
        spec.tolerations(i), api::Index(api::Child(path, "tolerations"), i));
    if (!toleration.ok()) return toleration.status();
    out.tolerations.push_back(*std::move(toleration));
  }
  return out;
}

// Go's strconv.ParseInt(text, 10, 32).
std::optional<int32_t> ParseInt32(absl::string_view text) {
  absl::string_view digits = text;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    digits.remove_prefix(1);
  }
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    return std::nullopt;
  }
  int32_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

}  // namespace

std::string QueueName(const api::JobSet& jobset) {
  const auto& labels = jobset.metadata().labels();
  auto it = labels.find(std::string(kQueueNameLabel));
  return it == labels.end() ? "" : it->second;
}

bool IsManaged(const api::JobSet& jobset, bool manage_jobs_without_queue_name) {
  return manage_jobs_without_queue_name || !QueueName(jobset).empty();
}

std::string WorkloadName(const api::JobSet& jobset) {
  const std::string& name = jobset.metadata().name();
  const std::string input = absl::StrCat(kKind, "\n", kGroup, "\n", name, "\n",
                                         jobset.metadata().uid());
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
       digest);
  const std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
  std::string prefix = absl::StrCat(absl::AsciiStrToLower(kKind), "-", name);
  if (prefix.size() > kMaxPrefixLength) prefix.resize(kMaxPrefixLength);
  return absl::StrCat(prefix, "-", hex.substr(0, kHashLength));
}

int64_t PodsPerJob(const api::ReplicatedJob& rjob) {
  const api::JobSpec& job = rjob.template_().spec();
  const int64_t parallelism = job.has_parallelism() ? job.parallelism() : 1;
  const int64_t completions =
      job.has_completions() ? job.completions() : parallelism;
  return std::min(parallelism, completions);
}

absl::StatusOr<std::vector<PodSet>> PodSetsFor(const api::JobSet& jobset) {
  std::vector<PodSet> out;
  const auto& rjobs = jobset.spec().replicated_jobs();
  for (int i = 0; i < rjobs.size(); ++i) {
    const api::ReplicatedJob& rjob = rjobs[i];
    const std::string path = api::Index("spec.replicatedJobs", i);
    const std::string pod_path =
        api::Child(path, "template.spec.template.spec");
    const int64_t replicas = rjob.has_replicas() ? rjob.replicas() : 1;
    const int64_t count = replicas * PodsPerJob(rjob);
    if (count < 0 || count > std::numeric_limits<int32_t>::max()) {
      return Invalid(path,
                     absl::StrCat("replicas x min(parallelism, completions) = ",
                                  count, " is outside 0..2147483647"));
    }
    const api::PodSpec& spec = rjob.template_().spec().template_().spec();
    absl::StatusOr<MilliMap> requests = PodRequestsMilli(spec, pod_path);
    if (!requests.ok()) return requests.status();
    absl::StatusOr<PodPlacement> placement = PlacementFor(spec, pod_path);
    if (!placement.ok()) return placement.status();

    PodSet pod_set;
    pod_set.name = absl::AsciiStrToLower(rjob.name());
    pod_set.count = static_cast<int32_t>(count);
    pod_set.requests = ToModelUnits(*requests);
    pod_set.placement = *std::move(placement);
    out.push_back(std::move(pod_set));
  }
  return out;
}

absl::StatusOr<Workload> WorkloadFor(
    const api::JobSet& jobset, absl::string_view cluster_queue,
    WorkloadPriorityClassLookup priority_classes) {
  const api::ObjectMeta& meta = jobset.metadata();
  const int rjobs = jobset.spec().replicated_jobs_size();
  if (rjobs > kMaxPodSets) {
    return Invalid(
        "spec.replicatedJobs",
        absl::StrCat("Too many: ", rjobs, ": must have at most ", kMaxPodSets,
                     " items when queued by Kueue (one Workload "
                     "podSet each)"));
  }

  Workload wl;
  wl.namespace_name = meta.namespace_();
  wl.name = WorkloadName(jobset);
  wl.uid = meta.uid();
  wl.job_uid = meta.uid();
  wl.queue_name = QueueName(jobset);
  wl.cluster_queue = std::string(cluster_queue);

  auto label = meta.labels().find(std::string(kPriorityClassLabel));
  if (label != meta.labels().end() && !label->second.empty()) {
    std::optional<int32_t> value = priority_classes(label->second);
    if (!value.has_value()) {
      return absl::NotFoundError(absl::StrCat(
          "WorkloadPriorityClass ", Quote(label->second), " not found"));
    }
    wl.priority = *value;
    wl.priority_class = label->second;
  }

  auto max_exec = meta.labels().find(std::string(kMaxExecTimeSecondsLabel));
  if (max_exec != meta.labels().end()) {
    std::optional<int32_t> seconds = ParseInt32(max_exec->second);
    if (seconds.has_value() && *seconds > 0) {
      wl.maximum_execution_time_seconds = *seconds;
    }
  }

  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(jobset);
  if (!pod_sets.ok()) return pod_sets.status();
  wl.pod_sets = *std::move(pod_sets);

  wl.times.queue_order = meta.has_creation_timestamp()
                             ? ToTime(meta.creation_timestamp())
                             : absl::UnixEpoch();
  return wl;
}

}  // namespace jobset::scheduler::queues
