#include "store/fault_workload.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace jobset::store {
namespace {

std::string CounterKey(int w) { return absl::StrFormat("counter/%02d", w); }
std::string ItemPrefix(int w) { return absl::StrFormat("items/%02d/", w); }
std::string ItemKey(int w, int64_t i) {
  return absl::StrFormat("items/%02d/%08d", w, i);
}

// SplitMix64: a well-mixed stream from any seed.
uint64_t Mix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

FaultWorkload::FaultWorkload(int writers, uint64_t seed)
    : seed_(seed), writers_(writers) {}

std::string FaultWorkload::Value(uint64_t seed, int writer, int64_t index) {
  uint64_t state = seed * 0x100000001b3ULL +
                   static_cast<uint64_t>(writer) * 0x10001ULL +
                   static_cast<uint64_t>(index);
  std::string value(16 + Mix(state) % 1200, '\0');
  for (char& c : value) c = static_cast<char>(Mix(state));
  return value;
}

FaultWorkload::RunResult FaultWorkload::Run(Store& store, int64_t max_commits) {
  std::atomic<int64_t> acknowledged{0};
  // Orders the commits' starts and returns: a commit that began after
  // another had returned an error must not be acknowledged.
  std::atomic<int64_t> clock{0};
  std::atomic<int64_t> first_error{std::numeric_limits<int64_t>::max()};
  std::mutex mu;  // Guards `result` while the writers run.
  RunResult result;
  struct Ack {
    int writer;
    int64_t index;
    int64_t began;
  };
  std::vector<std::vector<Ack>> acks(writers_.size());
  std::vector<std::thread> threads;
  for (size_t w = 0; w < writers_.size(); ++w) {
    threads.emplace_back([&, w] {
      Writer& writer = writers_[w];
      if (writer.failed.has_value()) return;  // Verify comes first.
      while (acknowledged.load() < max_commits) {
        const int64_t index = static_cast<int64_t>(writer.revisions.size()) + 1;
        Batch batch;
        if (writer.counter_revision == 0) {
          batch.Create(CounterKey(w), absl::StrCat(index));
        } else {
          batch.Update(CounterKey(w), absl::StrCat(index),
                       writer.counter_revision);
        }
        batch.Create(ItemKey(w, index), Value(seed_, w, index));
        const int64_t began = clock.fetch_add(1);
        absl::StatusOr<int64_t> revision = store.Commit(batch);
        const int64_t returned = clock.fetch_add(1);
        if (!revision.ok()) {
          writer.failed = index;
          int64_t first = first_error.load();
          while (returned < first &&
                 !first_error.compare_exchange_weak(first, returned)) {
          }
          std::lock_guard<std::mutex> lock(mu);
          result.errors.push_back(revision.status());
          return;
        }
        writer.revisions.push_back(*revision);
        writer.counter_revision = *revision;
        acks[w].push_back({static_cast<int>(w), index, began});
        acknowledged.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  result.acknowledged = acknowledged.load();
  for (const std::vector<Ack>& list : acks) {
    for (const Ack& ack : list) {
      if (ack.began > first_error.load()) {
        result.acknowledged_after_error.push_back(absl::StrCat(
            "writer ", ack.writer, "'s commit ", ack.index, " began at ",
            ack.began, ", after an error returned at ", first_error.load()));
      }
    }
  }
  return result;
}

absl::Status FaultWorkload::VerifyWriter(Store& store, int w) {
  Writer& writer = writers_[w];
  const int64_t acked = static_cast<int64_t>(writer.revisions.size());
  absl::StatusOr<std::optional<KeyValue>> counter = store.Get(CounterKey(w));
  if (!counter.ok()) return counter.status();
  // The index the store holds: the last acknowledged, or the failed one.
  int64_t held = 0;
  if (counter->has_value()) {
    if (!absl::SimpleAtoi((*counter)->value, &held)) {
      return absl::DataLossError(absl::StrCat(
          CounterKey(w), " holds ", (*counter)->value, ", not a number"));
    }
  }
  const bool failed_is_held =
      writer.failed.has_value() && held == *writer.failed && held == acked + 1;
  if (held != acked && !failed_is_held) {
    return absl::DataLossError(absl::StrCat(
        CounterKey(w), " holds ", held, " after ", acked,
        " acknowledged commits",
        writer.failed ? absl::StrCat(" and failed commit ", *writer.failed)
                      : ""));
  }
  if (failed_is_held) {
    // Written, not acknowledged (its sync or a later step failed): present
    // whole, at the counter's revision, it is durable now.
    writer.revisions.push_back((*counter)->mod_revision);
  } else if (acked > 0 && (*counter)->mod_revision != writer.revisions.back()) {
    return absl::DataLossError(absl::StrCat(
        CounterKey(w), " has mod_revision ", (*counter)->mod_revision,
        "; its last acknowledged commit was at ", writer.revisions.back()));
  }
  writer.failed.reset();
  writer.counter_revision = held > 0 ? (*counter)->mod_revision : 0;

  int64_t seen = 0;
  absl::Status problem;
  absl::StatusOr<int64_t> read = store.ReadAll(
      ItemPrefix(w), [](int64_t) { return absl::OkStatus(); },
      [&](const KeyValue& kv) -> absl::Status {
        ++seen;
        const int64_t index = seen;
        if (index > static_cast<int64_t>(writer.revisions.size()) ||
            kv.key != ItemKey(w, index)) {
          return absl::DataLossError(absl::StrCat("unexpected key ", kv.key,
                                                  " (expected ",
                                                  ItemKey(w, index), ")"));
        }
        const int64_t revision = writer.revisions[index - 1];
        if (kv.value != Value(seed_, w, index)) {
          return absl::DataLossError(
              absl::StrCat(kv.key, " holds ", kv.value.size(),
                           " bytes that differ from the acknowledged value"));
        }
        if (kv.create_revision != revision || kv.mod_revision != revision) {
          return absl::DataLossError(
              absl::StrCat(kv.key, " has revisions ", kv.create_revision, "/",
                           kv.mod_revision, ", acknowledged at ", revision));
        }
        return absl::OkStatus();
      });
  if (!read.ok()) return read.status();
  if (seen != static_cast<int64_t>(writer.revisions.size())) {
    return absl::DataLossError(absl::StrCat("writer ", w, ": ",
                                            writer.revisions.size(),
                                            " commits acknowledged, ", seen,
                                            " items stored; first "
                                            "missing: ",
                                            ItemKey(w, seen + 1)));
  }
  return absl::OkStatus();
}

absl::Status FaultWorkload::Verify(Store& store) {
  for (size_t w = 0; w < writers_.size(); ++w) {
    absl::Status s = VerifyWriter(store, static_cast<int>(w));
    if (!s.ok()) return s;
  }
  const int64_t current = store.CurrentRevision();
  if (current < LastAcknowledgedRevision()) {
    return absl::DataLossError(absl::StrCat("the store's revision is ", current,
                                            ", below the last acknowledged, ",
                                            LastAcknowledgedRevision()));
  }
  return absl::OkStatus();
}

int64_t FaultWorkload::LastAcknowledgedRevision() const {
  int64_t last = 0;
  for (const Writer& w : writers_) {
    if (!w.revisions.empty()) last = std::max(last, w.revisions.back());
  }
  return last;
}

int64_t FaultWorkload::Acknowledged() const {
  int64_t n = 0;
  for (const Writer& w : writers_)
    n += static_cast<int64_t>(w.revisions.size());
  return n;
}

}  // namespace jobset::store
