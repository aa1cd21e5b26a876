#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/pod_phase.h"
#include "common/quote.h"
#include "common/uid.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

constexpr size_t kUidBytes = sizeof(UidBytes);

// Whether `pod` is exactly what NewPodRecord and BindPod make of its uid,
// index, node, address and two times, so that its BoundPods entry restores
// it. `name` is scratch space.
bool OnlyBound(const api::PodRecord& pod, absl::string_view job_name,
               std::string* name) {
  if (pod.completion_index() < -1 || pod.node_name().empty() ||
      !pod.has_scheduled_seconds() || !pod.has_creation_timestamp() ||
      pod.creation_timestamp().nanos() != 0 || pod.has_deletion_timestamp() ||
      pod.has_in_place_restart_attempt() || pod.in_place_stopped() ||
      pod.waiting_for_config()) {
    return false;
  }
  const api::PodStatus& s = pod.status();
  if (s.phase() != api::kPodPending || !s.reason().empty() ||
      !s.message().empty() || !s.pod_ip().empty() || s.has_start_time() ||
      s.conditions_size() != 0 || s.container_statuses_size() != 0 ||
      s.init_container_statuses_size() != 0) {
    return false;
  }
  name->clear();
  AppendPodName(job_name, pod.completion_index(), pod.uid(), name);
  return pod.name() == *name;
}

size_t LengthDelimitedSize(size_t size) {
  return 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) +
         size;
}

// The tag and length of length-delimited field `field` of `size` bytes.
uint8_t* WriteHeader(int field, size_t size, uint8_t* p) {
  p = WireFormatLite::WriteTagToArray(
      field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, p);
  return CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size),
                                                 p);
}

uint8_t* WriteLengthDelimited(int field, absl::string_view bytes, uint8_t* p) {
  p = WriteHeader(field, bytes.size(), p);
  return CodedOutputStream::WriteRawToArray(bytes.data(),
                                            static_cast<int>(bytes.size()), p);
}

// The two times of `pod` if it can go into the columns (OnlyBound, with a
// uid that parses), and its uid.
std::optional<std::pair<std::pair<int64_t, int64_t>, UidBytes>> BoundForm(
    const api::PodRecord& pod, absl::string_view job_name, std::string* name) {
  if (!OnlyBound(pod, job_name, name)) return std::nullopt;
  std::optional<UidBytes> uid = ParseUid(pod.uid());
  if (!uid.has_value()) return std::nullopt;
  return std::make_pair(std::make_pair(pod.creation_timestamp().seconds(),
                                       pod.scheduled_seconds()),
                        *uid);
}

// Serializes `pods` (in name order) as one JobPods message.
std::string EncodePods(absl::string_view job_name,
                       const std::vector<const api::PodRecord*>& pods) {
  // Which pods go into the columns: those only bound, at the first such
  // pod's two times.
  std::vector<const api::PodRecord*> whole;
  std::vector<std::pair<const api::PodRecord*, UidBytes>> bound;
  std::optional<std::pair<int64_t, int64_t>> times;
  std::string name;
  for (const api::PodRecord* pod : pods) {
    if (auto form = BoundForm(*pod, job_name, &name)) {
      if (!times.has_value()) times = form->first;
      if (*times == form->first) {
        bound.emplace_back(pod, form->second);
        continue;
      }
    }
    whole.push_back(pod);
  }

  // Sizes first, then one buffer.
  size_t total = 0;
  for (const api::PodRecord* pod : whole) {
    total += LengthDelimitedSize(pod->ByteSizeLong());  // Caches the size.
  }
  size_t columns = 0, indexes = 0;
  if (!bound.empty()) {
    for (const int64_t seconds : {times->first, times->second}) {
      if (seconds != 0) {
        columns +=
            1 + CodedOutputStream::VarintSize64(static_cast<uint64_t>(seconds));
      }
    }
    columns += LengthDelimitedSize(kUidBytes * bound.size());
    for (const auto& [pod, uid] : bound) {
      indexes += CodedOutputStream::VarintSize32(
          WireFormatLite::ZigZagEncode32(pod->completion_index()));
      columns += LengthDelimitedSize(pod->node_name().size()) +
                 LengthDelimitedSize(pod->status().host_ip().size());
    }
    columns += LengthDelimitedSize(indexes);
    total += LengthDelimitedSize(columns);
  }
  std::string out(total, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  for (const api::PodRecord* pod : whole) {
    p = WriteHeader(api::JobPods::kPodsFieldNumber, pod->GetCachedSize(), p);
    p = pod->SerializeWithCachedSizesToArray(p);
  }
  if (bound.empty()) return out;
  p = WriteHeader(api::JobPods::kBoundFieldNumber, columns, p);
  if (times->first != 0) {
    p = WireFormatLite::WriteInt64ToArray(
        api::BoundPods::kCreatedSecondsFieldNumber, times->first, p);
  }
  if (times->second != 0) {
    p = WireFormatLite::WriteInt64ToArray(
        api::BoundPods::kScheduledSecondsFieldNumber, times->second, p);
  }
  p = WriteHeader(api::BoundPods::kUidsFieldNumber, kUidBytes * bound.size(),
                  p);
  for (const auto& [pod, uid] : bound) {
    p = CodedOutputStream::WriteRawToArray(uid.data(), kUidBytes, p);
  }
  p = WriteHeader(api::BoundPods::kCompletionIndexesFieldNumber, indexes, p);
  for (const auto& [pod, uid] : bound) {
    p = CodedOutputStream::WriteVarint32ToArray(
        WireFormatLite::ZigZagEncode32(pod->completion_index()), p);
  }
  for (const auto& [pod, uid] : bound) {
    p = WriteLengthDelimited(api::BoundPods::kNodeNamesFieldNumber,
                             pod->node_name(), p);
  }
  for (const auto& [pod, uid] : bound) {
    p = WriteLengthDelimited(api::BoundPods::kHostIpsFieldNumber,
                             pod->status().host_ip(), p);
  }
  return out;
}

}  // namespace

std::string EncodeJobPods(absl::string_view job_name,
                          const std::map<std::string, api::PodRecord>& pods) {
  std::vector<const api::PodRecord*> all;
  all.reserve(pods.size());
  for (const auto& [unused, pod] : pods) all.push_back(&pod);
  return EncodePods(job_name, all);
}

std::vector<std::string> EncodeJobPodsChunks(
    absl::string_view job_name,
    const std::map<std::string, api::PodRecord>& pods, size_t max_bytes) {
  // What a chunk holds besides its pods: the columns' headers and times.
  constexpr size_t kChunkOverhead = 64;
  const size_t budget = max_bytes > 2 * kChunkOverhead
                            ? max_bytes - kChunkOverhead
                            : max_bytes / 2;
  std::vector<std::string> out;
  std::vector<const api::PodRecord*> chunk;
  size_t bytes = 0;
  // The columns' times in this chunk, as EncodePods will choose them (a
  // flag and a pair rather than an optional: GCC's -O1 thinks the optional
  // read uninitialized).
  bool have_times = false;
  std::pair<int64_t, int64_t> times = {0, 0};
  std::string name;
  for (const auto& entry : pods) {
    // Not a structured binding: clang 14's lambdas cannot capture one.
    const api::PodRecord& pod = entry.second;
    const auto form = BoundForm(pod, job_name, &name);
    // What the pod adds to the chunk (an upper bound for a bound pod:
    // columns' headers are counted in the overhead).
    auto size_in = [&](bool fresh) {
      if (form.has_value() && (fresh || !have_times || times == form->first)) {
        return kUidBytes + 5 + LengthDelimitedSize(pod.node_name().size()) +
               LengthDelimitedSize(pod.status().host_ip().size());
      }
      return LengthDelimitedSize(pod.ByteSizeLong());
    };
    size_t size = size_in(false);
    if (!chunk.empty() && bytes + size > budget) {
      out.push_back(EncodePods(job_name, chunk));
      chunk.clear();
      bytes = 0;
      have_times = false;
      size = size_in(true);
    }
    if (form.has_value() && !have_times) {
      times = form->first;
      have_times = true;
    }
    chunk.push_back(&pod);
    bytes += size;
  }
  if (!chunk.empty() || out.empty()) out.push_back(EncodePods(job_name, chunk));
  return out;
}

std::string JobPodsChunkKey(absl::string_view ns, absl::string_view jobset,
                            absl::string_view job, int chunk) {
  std::string key = store::keys::JobPodsKey(ns, jobset, job);
  if (chunk > 0) absl::StrAppend(&key, "/", chunk);
  return key;
}

std::optional<JobPodsKeyParts> ParseJobPodsKey(absl::string_view key) {
  if (!absl::ConsumePrefix(&key, store::keys::kPods)) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(key, '/');
  if (parts.size() != 3 && parts.size() != 4) return std::nullopt;
  JobPodsKeyParts out{std::string(parts[0]), std::string(parts[1]),
                      std::string(parts[2])};
  if (out.ns.empty() || out.jobset.empty() || out.job.empty())
    return std::nullopt;
  if (parts.size() == 4 &&
      (!absl::SimpleAtoi(parts[3], &out.chunk) || out.chunk <= 0 ||
       parts[3] != absl::StrCat(out.chunk))) {
    return std::nullopt;
  }
  return out;
}

absl::StatusOr<std::vector<api::PodRecord>> DecodeJobPods(
    const store::KeyValue& kv) {
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("stored value at ", Quote(kv.key),
                                            " (revision ", kv.mod_revision,
                                            "): ", why));
  };
  const std::optional<JobPodsKeyParts> key = ParseJobPodsKey(kv.key);
  if (!key.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quote(kv.key), " is not the key of a Job's pods"));
  }
  absl::StatusOr<api::JobPods> stored = store::DecodeValue<api::JobPods>(kv);
  if (!stored.ok()) return stored.status();
  const absl::string_view job_name = key->job;
  const api::BoundPods& b = stored->bound();
  const int n = b.completion_indexes_size();
  if (b.node_names_size() != n || b.host_ips_size() != n ||
      b.uids().size() != kUidBytes * n) {
    return corrupt(absl::StrCat(
        "bound pods: ", n, " completion indexes, ", b.node_names_size(),
        " node names, ", b.host_ips_size(), " host addresses and ",
        b.uids().size(), " bytes of uids (", kUidBytes, " a pod)"));
  }
  std::vector<api::PodRecord> out;
  out.reserve(stored->pods_size() + n);
  for (api::PodRecord& pod : *stored->mutable_pods()) {
    out.push_back(std::move(pod));
  }
  const absl::Time created = absl::FromUnixSeconds(b.created_seconds());
  const absl::Time scheduled = absl::FromUnixSeconds(b.scheduled_seconds());
  for (int i = 0; i < n; ++i) {
    const int index = b.completion_indexes(i);
    if (index < -1) {
      return corrupt(absl::StrCat("bound pod ", i, " has completion index ",
                                  index, " (at least -1)"));
    }
    UidBytes bytes;
    std::copy_n(b.uids().data() + kUidBytes * i, kUidBytes, bytes.begin());
    std::string uid = FormatUid(bytes);
    std::string name = PodName(job_name, index, uid);
    api::PodRecord& pod = out.emplace_back(
        NewPodRecord(std::move(name), std::move(uid), index, created));
    BindPod(b.node_names(i), b.host_ips(i), scheduled, &pod);
  }
  std::sort(out.begin(), out.end(),
            [](const api::PodRecord& a, const api::PodRecord& b) {
              return a.name() < b.name();
            });
  return out;
}

}  // namespace jobset::scheduler
