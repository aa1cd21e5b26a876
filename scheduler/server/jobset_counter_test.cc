#include "scheduler/server/jobset_counter.h"

#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

void Put(store::Store& store, const std::string& ns, const std::string& name) {
  ASSERT_THAT(
      store.Commit(store::Batch().Put(store::keys::JobSetKey(ns, name), "x"))
          .status(),
      IsOk());
}

void Remove(store::Store& store, const std::string& ns,
            const std::string& name) {
  ASSERT_THAT(
      store.Commit(store::Batch().Delete(store::keys::JobSetKey(ns, name)))
          .status(),
      IsOk());
}

TEST(JobSetCounterTest, CountsWhatIsStoredAndFollowsChanges) {
  store::MemoryStore store;
  Put(store, "a", "one");
  Put(store, "a", "two");
  Put(store, "b", "one");
  JobSetCounter counter(&store, 10, 100);
  EXPECT_THAT(counter.Count("a"), IsOkAndHolds(2));
  EXPECT_THAT(counter.Count(""), IsOkAndHolds(3));
  Put(store, "a", "three");
  Put(store, "a", "three");  // An update is no new JobSet.
  Remove(store, "b", "one");
  ASSERT_THAT(store.Commit(store::Batch().Put("pods/a/x/y", "z")).status(),
              IsOk());
  EXPECT_THAT(counter.Count("a"), IsOkAndHolds(3));
  EXPECT_THAT(counter.Count("b"), IsOkAndHolds(0));
  EXPECT_THAT(counter.Count(""), IsOkAndHolds(3));
}

TEST(JobSetCounterTest, RefusesPastEitherLimitNamingIt) {
  store::MemoryStore store;
  JobSetCounter counter(&store, 2, 3);
  Put(store, "a", "one");
  Put(store, "a", "two");
  EXPECT_THAT(counter.Reserve("a"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("namespace \"a\" has 2 JobSets"),
                             HasSubstr("--max_jobsets_per_namespace"))));
  ASSERT_THAT(counter.Reserve("b"), IsOk());
  // The reservation holds room until it is released.
  EXPECT_THAT(counter.Reserve("c"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("holds 3 JobSets"),
                             HasSubstr("--max_jobsets"))));
  counter.Release("b");
  ASSERT_THAT(counter.Reserve("c"), IsOk());
  counter.Release("c");
  Remove(store, "a", "one");
  EXPECT_THAT(counter.Reserve("a"), IsOk());
  counter.Release("a");
}

// Reserve reads the history only when the revisions since the counts were
// current could hold enough creates to reach a limit; far from the limits
// it skips the read, and near them it still counts every JobSet stored
// since (created behind its back, as another API replica would).
TEST(JobSetCounterTest, SkipsTheHistoryOnlyFarFromTheLimits) {
  store::MemoryStore store;
  JobSetCounter counter(&store, 5, 100);
  ASSERT_THAT(counter.Reserve("a"), IsOk());  // Counts: none.
  counter.Release("a");
  for (int i = 0; i < 4; ++i) Put(store, "a", absl::StrCat("js-", i));
  // Four unseen revisions and none counted: 0 + 4 < 5 leaves room.
  ASSERT_THAT(counter.Reserve("a"), IsOk());
  counter.Release("a");
  Put(store, "a", "js-4");
  // Five may be unseen: the counts catch up and find the namespace full.
  EXPECT_THAT(counter.Reserve("a"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("namespace \"a\" has 5 JobSets")));
  Remove(store, "a", "js-0");
  ASSERT_THAT(counter.Reserve("a"), IsOk());
  counter.Release("a");
  // Another namespace is held to the total the same way.
  for (int i = 0; i < 96; ++i) Put(store, absl::StrCat("n", i), "js");
  EXPECT_THAT(counter.Reserve("b"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("holds 100 JobSets")));
}

TEST(JobSetCounterTest, CountsAgainWhenTheHistoryMovedOn) {
  store::MemoryStore store(/*history_events=*/2);
  JobSetCounter counter(&store, 100, 100);
  EXPECT_THAT(counter.Count(""), IsOkAndHolds(0));
  for (int i = 0; i < 5; ++i) Put(store, "a", absl::StrCat("js-", i));
  Remove(store, "a", "js-0");
  EXPECT_THAT(counter.Count("a"), IsOkAndHolds(4));
}

// Runs `hook` once, after the first Scan: a change while a scan pages.
class ScanHookStore : public store::ForwardingStore {
 public:
  ScanHookStore(store::Store* inner, std::function<void()> hook)
      : ForwardingStore(inner), hook_(std::move(hook)) {}
  absl::StatusOr<store::ScanResult> Scan(absl::string_view prefix,
                                         absl::string_view start_after,
                                         size_t limit) override {
    absl::StatusOr<store::ScanResult> page =
        ForwardingStore::Scan(prefix, start_after, limit);
    if (hook_) std::exchange(hook_, nullptr)();
    return page;
  }

 private:
  std::function<void()> hook_;
};

// A scan of more than one page reads each page at its own revision; changes
// after the first page's revision are applied only where a page did not see
// them.
TEST(JobSetCounterTest, ChangesDuringAPagedScanAreCountedOnce) {
  store::MemoryStore memory;
  for (int i = 0; i < 2500; ++i) {
    Put(memory, "a", absl::StrCat("js-", 10000 + i));
  }
  ScanHookStore store(&memory, [&] {
    Put(memory, "a", "js-0");         // Before the first page's end: an event.
    Put(memory, "a", "js-2");         // In the last page: seen by the scan.
    Remove(memory, "a", "js-10000");  // In the first page: an event.
    Remove(memory, "a", "js-12499");  // In the last page: not seen.
  });
  JobSetCounter counter(&store, 1'000'000, 1'000'000);
  EXPECT_THAT(counter.Count("a"), IsOkAndHolds(2500));
  Put(memory, "a", "js-3");
  EXPECT_THAT(counter.Count("a"), IsOkAndHolds(2501));
}

}  // namespace
}  // namespace jobset::scheduler
