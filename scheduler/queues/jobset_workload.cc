#include "scheduler/queues/jobset_workload.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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
#include "common/quote.h"
#include "scheduler/queues/api_objects.h"

namespace jobset::scheduler::queues {
namespace {

// Kueue's name of the kind and group, hashed into the Workload's name.
constexpr absl::string_view kKind = "JobSet";
constexpr absl::string_view kGroup = "jobset.x-k8s.io";
constexpr int kHashLength = 5;
// 253 (a DNS-1123 subdomain) less "-" and the hash.
constexpr size_t kMaxPrefixLength = 253 - 1 - kHashLength;

absl::Status Invalid(absl::string_view path, absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", detail));
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

std::vector<api::ReclaimablePod> ReclaimablePods(const api::JobSet& jobset) {
  std::vector<api::ReclaimablePod> out;
  for (const api::ReplicatedJob& rjob : jobset.spec().replicated_jobs()) {
    for (const api::ReplicatedJobStatus& status :
         jobset.status().replicated_jobs_status()) {
      if (status.name() != rjob.name()) continue;
      const int64_t replicas = rjob.has_replicas() ? rjob.replicas() : 1;
      if (status.succeeded() <= 0 || status.succeeded() > replicas) break;
      api::ReclaimablePod pod;
      pod.set_name(absl::AsciiStrToLower(rjob.name()));
      pod.set_count(static_cast<int32_t>(
          std::min<int64_t>(status.succeeded() * PodsPerJob(rjob),
                            std::numeric_limits<int32_t>::max())));
      out.push_back(std::move(pod));
      break;
    }
  }
  return out;
}

absl::StatusOr<std::vector<PodSet>> PodSetsFor(const api::JobSet& jobset) {
  std::vector<PodSet> out;
  const auto& rjobs = jobset.spec().replicated_jobs();
  for (int i = 0; i < rjobs.size(); ++i) {
    const api::ReplicatedJob& rjob = rjobs[i];
    const std::string path = api::Index("spec.replicatedJobs", i);
    const int64_t replicas = rjob.has_replicas() ? rjob.replicas() : 1;
    const int64_t count = replicas * PodsPerJob(rjob);
    if (count < 0 || count > std::numeric_limits<int32_t>::max()) {
      return Invalid(path,
                     absl::StrCat("replicas x min(parallelism, completions) = ",
                                  count, " is outside 0..2147483647"));
    }
    absl::StatusOr<PodSet> pod_set = PodSetFromTemplate(
        absl::AsciiStrToLower(rjob.name()), static_cast<int32_t>(count),
        rjob.template_().spec().template_(),
        api::Child(path, "template.spec.template"));
    if (!pod_set.ok()) return pod_set.status();
    out.push_back(*std::move(pod_set));
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
