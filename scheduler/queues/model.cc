#include "scheduler/queues/model.h"

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jobset::scheduler::queues {
namespace {

// Divides `value` by `base` while it divides evenly; returns how often.
int RemoveFactors(int64_t& value, int64_t base) {
  int times = 0;
  while (value != 0 && value % base == 0) {
    value /= base;
    ++times;
  }
  return times;
}

// Kubernetes' DecimalSI canonical form of mantissa × 10^exponent: the
// exponent becomes a multiple of 3 that keeps the mantissa whole.
std::string DecimalSi(int64_t mantissa, int exponent) {
  if (mantissa == 0) return "0";
  exponent += RemoveFactors(mantissa, 10);
  int rem = exponent % 3;
  if (rem < 0) rem += 3;
  // Too large to scale without overflow (near int64 limits): exponent form.
  if (rem > 0 && (mantissa > INT64_MAX / 100 || mantissa < INT64_MIN / 100)) {
    return absl::StrCat(mantissa, "e", exponent);
  }
  for (; rem > 0; --rem) {  // two multiplications by 10 at most
    mantissa *= 10;
    --exponent;
  }
  absl::string_view suffix;
  switch (exponent) {
    case -9:
      suffix = "n";
      break;
    case -6:
      suffix = "u";
      break;
    case -3:
      suffix = "m";
      break;
    case 0:
      suffix = "";
      break;
    case 3:
      suffix = "k";
      break;
    case 6:
      suffix = "M";
      break;
    case 9:
      suffix = "G";
      break;
    case 12:
      suffix = "T";
      break;
    case 15:
      suffix = "P";
      break;
    case 18:
      suffix = "E";
      break;
    default:
      return absl::StrCat(mantissa, "e", exponent);
  }
  return absl::StrCat(mantissa, suffix);
}

bool IsBinaryFormatted(absl::string_view resource) {
  return resource == kMemory || resource == "ephemeral-storage" ||
         absl::StartsWith(resource, "hugepages-");
}

absl::string_view EffectName(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "";
}

}  // namespace

std::string WorkloadKey(const Workload& workload) {
  return absl::StrCat(workload.namespace_name, "/", workload.name);
}

FlavorResourceQuantities AdmittedUsage(const Workload& workload) {
  FlavorResourceQuantities usage;
  if (!workload.admission.has_value()) return usage;
  for (const PodSetAssignment& psa : workload.admission->pod_set_assignments) {
    int32_t reclaimable = 0;
    for (const PodSet& ps : workload.pod_sets) {
      if (ps.name == psa.name) reclaimable = ps.reclaimable;
    }
    for (const auto& [resource, total] : psa.resource_usage) {
      auto flavor = psa.flavors.find(resource);
      if (flavor == psa.flavors.end()) continue;
      int64_t value = total;
      // resource_usage is count × per-pod; drop the reclaimable pods' share.
      if (reclaimable > 0 && psa.count > 0) {
        const int32_t kept =
            reclaimable >= psa.count ? 0 : psa.count - reclaimable;
        value = total / psa.count * kept;
      }
      usage[FlavorResource{flavor->second, resource}] += value;
    }
  }
  return usage;
}

std::string FormatQuantity(absl::string_view resource, int64_t value) {
  if (resource == kCpu) return DecimalSi(value, -3);
  if (IsBinaryFormatted(resource) && (value <= -1024 || value >= 1024)) {
    int64_t mantissa = value;
    const int times = RemoveFactors(mantissa, 1024);
    // Without a binary suffix Kubernetes re-reads the number as DecimalSI.
    if (times > 0) {
      static constexpr absl::string_view kSuffixes[] = {"",   "Ki", "Mi", "Gi",
                                                        "Ti", "Pi", "Ei"};
      return absl::StrCat(mantissa, kSuffixes[times]);
    }
  }
  return DecimalSi(value, 0);
}

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect.has_value() && *toleration.effect != taint.effect) {
    return false;
  }
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op == TolerationOperator::kExists) return true;
  return toleration.value == taint.value;
}

std::string TaintString(const Taint& taint) {
  return absl::StrCat("{", taint.key, " ", taint.value, " ",
                      EffectName(taint.effect), " <nil>}");
}

}  // namespace jobset::scheduler::queues
