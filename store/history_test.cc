#include "store/history.h"

#include <thread>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::store {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::IsEmpty;
using ::testing::SizeIs;

Event Put(const std::string& key, int64_t revision) {
  return {Event::Type::kPut, {key, "v", revision, revision}};
}

TEST(HistoryTest, StartsAtTheOpeningRevision) {
  History history(/*start_revision=*/7, /*max_events=*/10);
  EXPECT_EQ(history.revision(), 7);
  EXPECT_THAT(history.Wait("", 6, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
  auto none = history.Wait("", 7, absl::InfinitePast(), 10);
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(HistoryTest, DropsOldestEventsBeyondTheBound) {
  History history(0, /*max_events=*/2);
  history.Append(1, {Put("a", 1)});
  history.Append(2, {Put("b", 2)});
  history.Append(3, {Put("c", 3)});
  EXPECT_THAT(history.Wait("", 0, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
  auto events = history.Wait("", 1, absl::InfinitePast(), 10);
  ASSERT_TRUE(events.ok());
  EXPECT_THAT(*events, SizeIs(2));
}

TEST(HistoryTest, TruncateSendsOlderWatchersToListAgain) {
  History history(0, 10);
  history.Append(1, {Put("a", 1)});
  std::thread truncate([&] {
    absl::SleepFor(absl::Milliseconds(20));
    history.Truncate(5);
  });
  // A watcher waiting from revision 1 learns that 2..5 are gone.
  EXPECT_THAT(
      history.Wait("", 1, absl::Now() + absl::Seconds(30), 10).status(),
      StatusIs(absl::StatusCode::kOutOfRange, ::testing::HasSubstr("5")));
  truncate.join();
  EXPECT_EQ(history.revision(), 5);
  history.Append(6, {Put("b", 6)});
  auto events = history.Wait("", 5, absl::InfinitePast(), 10);
  ASSERT_TRUE(events.ok());
  EXPECT_THAT(*events, SizeIs(1));
}

TEST(HistoryTest, SkipsRevisionsOfOtherPrefixes) {
  History history(0, 10);
  history.Append(1, {Put("x/a", 1)});
  history.Append(2, {Put("y/a", 2)});
  auto events = history.Wait("y/", 0, absl::InfinitePast(), 10);
  ASSERT_TRUE(events.ok());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_EQ((*events)[0].kv.key, "y/a");
}

TEST(HistoryTest, AStalledWatcherOvertakenByCompactionIsTold) {
  History history(0, 1);
  history.Append(1, {Put("x/a", 1)});
  history.Append(2, {Put("x/b", 2)});
  // Resuming after 0 needs revision 1, which is gone.
  EXPECT_THAT(history.Wait("x/", 0, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
}

Event PutValue(const std::string& key, size_t value_bytes, int64_t revision) {
  return {Event::Type::kPut,
          {key, std::string(value_bytes, 'v'), revision, revision}};
}

// Issue 19: the history was bounded in events only, so 10,000 events of 3 MiB
// values could hold 30 GiB.
TEST(HistoryTest, DropsOldestEventsBeyondTheByteBound) {
  const size_t one = History::EventBytes(PutValue("k", 1000, 1));
  History history(0, /*max_events=*/100, /*max_bytes=*/2 * one);
  history.Append(1, {PutValue("k", 1000, 1)});
  history.Append(2, {PutValue("k", 1000, 2)});
  auto both = history.Wait("", 0, absl::InfinitePast(), 10);
  ASSERT_TRUE(both.ok());
  EXPECT_THAT(*both, SizeIs(2));
  history.Append(3, {PutValue("k", 1000, 3)});
  EXPECT_THAT(history.Wait("", 0, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
  auto kept = history.Wait("", 1, absl::InfinitePast(), 10);
  ASSERT_TRUE(kept.ok());
  EXPECT_THAT(*kept, SizeIs(2));
  // One value larger than the whole bound is not kept at all: a watcher
  // from before it lists again.
  history.Append(4, {PutValue("k", 3 * one, 4)});
  EXPECT_THAT(history.Wait("", 3, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
  auto after = history.Wait("", 4, absl::InfinitePast(), 10);
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(*after, IsEmpty());
}

}  // namespace
}  // namespace jobset::store
