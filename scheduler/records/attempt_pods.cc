#include "scheduler/records/attempt_pods.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

constexpr size_t kUidBytes = sizeof(UidBytes);
// Upper bounds of what protobuf spends: a length-delimited field's tag and
// length, and a varint (non-negative int32, sint32) with its tag.
constexpr size_t kHeaderBytes = 1 + 5;
constexpr size_t kVarint32Bytes = 5;
// A pod: its uid, completion index and node index (packed columns).
constexpr size_t kPodBytes = kUidBytes + 2 * kVarint32Bytes;

}  // namespace

AttemptRange KeptAttempts(int32_t restarts, int history) {
  const int32_t last = std::max(restarts, 0);
  const int32_t first = std::max(0, last - std::max(history, 1) + 1);
  return {first, last};
}

AttemptPodsBuilder::AttemptPodsBuilder(absl::string_view jobset_uid,
                                       int32_t attempt, size_t max_bytes)
    : max_bytes_(max_bytes),
      // The uid, the attempt and pods_dropped (a 10-byte varint at most).
      bytes_(kHeaderBytes + jobset_uid.size() + 1 + kVarint32Bytes + 1 + 10) {
  record_.set_jobset_uid(std::string(jobset_uid));
  record_.set_attempt(std::max(attempt, 0));
}

bool AttemptPodsBuilder::Add(absl::string_view job,
                             absl::string_view replicated_job,
                             const api::PodRecord& pod) {
  const std::optional<UidBytes> uid = ParseUid(pod.uid());
  size_t more = kPodBytes;
  auto job_it = job_index_.find(job);
  if (job_it == job_index_.end()) {
    // Its header, name, ReplicatedJob and three column headers.
    more += 6 * kHeaderBytes + job.size() + replicated_job.size();
  }
  auto node_it = node_index_.find(pod.node_name());
  if (node_it == node_index_.end())
    more += kHeaderBytes + pod.node_name().size();
  if (!uid.has_value() || pod.node_name().empty() ||
      bytes_ + more > max_bytes_) {
    record_.set_pods_dropped(record_.pods_dropped() + 1);
    return false;
  }
  bytes_ += more;
  if (job_it == job_index_.end()) {
    api::AttemptJob* j = record_.add_jobs();
    j->set_name(std::string(job));
    j->set_replicated_job(std::string(replicated_job));
    job_it = job_index_.emplace(j->name(), record_.jobs_size() - 1).first;
  }
  if (node_it == node_index_.end()) {
    const std::string& node = *record_.add_nodes() = pod.node_name();
    node_it = node_index_.emplace(node, record_.nodes_size() - 1).first;
  }
  api::AttemptJob* j = record_.mutable_jobs(job_it->second);
  j->mutable_uids()->append(uid->data(), kUidBytes);
  j->add_completion_indexes(std::max(pod.completion_index(), -1));
  j->add_node_indexes(node_it->second);
  ++pods_;
  return true;
}

api::AttemptPods AttemptPodsBuilder::Build() {
  node_index_.clear();
  job_index_.clear();
  pods_ = 0;
  return std::exchange(record_, api::AttemptPods());
}

absl::StatusOr<std::vector<AttemptPod>> ExpandAttemptPods(
    const api::AttemptPods& record, absl::string_view key) {
  std::vector<AttemptPod> pods;
  for (const api::AttemptJob& job : record.jobs()) {
    const int n = job.completion_indexes_size();
    if (job.uids().size() != kUidBytes * static_cast<size_t>(n) ||
        job.node_indexes_size() != n) {
      return absl::DataLossError(absl::StrCat(
          "stored value at ", Quote(key), ": Job ", Quote(job.name()), " has ",
          n, " completion indexes, ", job.node_indexes_size(),
          " node indexes and ", job.uids().size(), " bytes of uids (",
          kUidBytes, " a pod)"));
    }
    for (int i = 0; i < n; ++i) {
      const int32_t node = job.node_indexes(i);
      if (node < 0 || node >= record.nodes_size()) {
        return absl::DataLossError(
            absl::StrCat("stored value at ", Quote(key), ": Job ",
                         Quote(job.name()), " pod ", i, " has node index ",
                         node, " of ", record.nodes_size(), " nodes"));
      }
      UidBytes bytes;
      std::copy_n(job.uids().data() + kUidBytes * i, kUidBytes, bytes.begin());
      AttemptPod& pod = pods.emplace_back();
      pod.uid = FormatUid(bytes);
      pod.completion_index = std::max(job.completion_indexes(i), -1);
      pod.name = PodName(job.name(), pod.completion_index, pod.uid);
      pod.node = record.nodes(node);
      pod.job = job.name();
      pod.replicated_job = job.replicated_job();
    }
  }
  return pods;
}

absl::StatusOr<std::vector<StoredAttempt>> ReadAttemptPods(
    store::Store* store, absl::string_view ns, absl::string_view name,
    absl::string_view jobset_uid, int32_t attempt) {
  const std::string prefix = store::keys::AttemptPodsPrefix(ns, name);
  // (attempt, part) -> the part's pods and dropped count.
  std::vector<std::tuple<int32_t, int32_t, std::vector<AttemptPod>, int64_t>>
      parts;
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      *store, store::keys::AttemptPodsPrefix(ns, name, attempt),
      [&](const store::KeyValue& kv) -> absl::Status {
        // <attempt>/<part>
        absl::string_view tail = kv.key;
        if (!absl::ConsumePrefix(&tail, prefix)) return absl::OkStatus();
        std::vector<absl::string_view> fields = absl::StrSplit(tail, '/');
        int32_t a = 0, part = 0;
        if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &a) ||
            !absl::SimpleAtoi(fields[1], &part)) {
          return absl::OkStatus();  // Not a part's key.
        }
        JOBSET_ASSIGN_OR_RETURN(api::AttemptPods record,
                                store::DecodeValue<api::AttemptPods>(kv));
        if (record.jobset_uid() != jobset_uid || record.attempt() != a)
          return absl::OkStatus();
        JOBSET_ASSIGN_OR_RETURN(std::vector<AttemptPod> pods,
                                ExpandAttemptPods(record, kv.key));
        parts.emplace_back(a, part, std::move(pods), record.pods_dropped());
        return absl::OkStatus();
      }));
  // Parts sort by their number, not their key ("10" before "2").
  std::sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) {
    return std::tie(std::get<0>(x), std::get<1>(x)) <
           std::tie(std::get<0>(y), std::get<1>(y));
  });
  std::vector<StoredAttempt> out;
  for (auto& [a, part, pods, dropped] : parts) {
    if (out.empty() || out.back().attempt != a) out.push_back({.attempt = a});
    StoredAttempt& s = out.back();
    s.pods.insert(s.pods.end(), std::make_move_iterator(pods.begin()),
                  std::make_move_iterator(pods.end()));
    s.pods_dropped += dropped;
  }
  return out;
}

absl::StatusOr<AttemptPod> SelectAttemptPod(const std::vector<AttemptPod>& pods,
                                            absl::string_view name,
                                            absl::string_view job,
                                            int32_t index) {
  for (const AttemptPod& pod : pods) {
    if (pod.name == name) return pod;
  }
  if (!job.empty()) {
    std::vector<const AttemptPod*> matches;
    for (const AttemptPod& pod : pods) {
      if (pod.job == job && pod.completion_index == index)
        matches.push_back(&pod);
    }
    if (matches.size() > 1 && index < 0) {
      std::vector<std::string> names;
      for (const AttemptPod* pod : matches) names.push_back(pod->name);
      return absl::FailedPreconditionError(absl::StrCat(
          "Job ", Quote(job), " is NonIndexed and had ", matches.size(),
          " pods: name one of ", absl::StrJoin(names, ", ")));
    }
    if (!matches.empty()) return *matches.back();
  }
  return absl::NotFoundError(absl::StrCat("pod ", Quote(name), " is not kept"));
}

}  // namespace jobset::scheduler
