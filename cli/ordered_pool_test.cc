#include "cli/ordered_pool.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;

// Counts the items running at once and remembers the highest count.
class InFlight {
 public:
  void Enter() {
    absl::MutexLock lock(&mu_);
    ++now_;
    if (now_ > peak_) peak_ = now_;
  }
  void Leave() {
    absl::MutexLock lock(&mu_);
    --now_;
  }
  // Waits (up to `timeout`) until `n` items have run at once.
  bool WaitFor(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return peak_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }
  int peak() {
    absl::MutexLock lock(&mu_);
    return peak_;
  }

 private:
  absl::Mutex mu_;
  int now_ ABSL_GUARDED_BY(mu_) = 0;
  int peak_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(RunOrderedTest, DoneRunsInIndexOrderWhileWorkOverlaps) {
  InFlight in_flight;
  std::vector<int> order;
  RunOrdered(
      20, 4,
      [&](int i) {
        in_flight.Enter();
        // The first four wait for each other, so they must overlap: a
        // sequential pool times out here and the peak stays 1.
        if (i < 4) in_flight.WaitFor(4, absl::Seconds(5));
        in_flight.Leave();
      },
      [&](int i) { order.push_back(i); });
  EXPECT_EQ(in_flight.peak(), 4);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(RunOrderedTest, NeverMoreThanMaxInFlight) {
  InFlight in_flight;
  std::atomic<int> ran{0};
  RunOrdered(
      200, 3,
      [&](int) {
        in_flight.Enter();
        in_flight.WaitFor(3, absl::Milliseconds(2));
        ++ran;
        in_flight.Leave();
      },
      [](int) {});
  EXPECT_EQ(ran.load(), 200);
  EXPECT_LE(in_flight.peak(), 3);
}

TEST(RunOrderedTest, AnEarlySlowItemHoldsBackOnlyTheOutput) {
  // Item 0 finishes last; done(0) still comes first and done(1..) after it.
  absl::Notification others_done;
  std::atomic<int> finished{0};
  std::vector<std::string> log;
  RunOrdered(
      5, 5,
      [&](int i) {
        if (i == 0) {
          others_done.WaitForNotificationWithTimeout(absl::Seconds(5));
        } else if (++finished == 4) {
          others_done.Notify();
        }
      },
      [&](int i) {
        log.push_back(std::to_string(i) +
                      (others_done.HasBeenNotified() ? " after" : " before"));
      });
  EXPECT_THAT(
      log, ElementsAre("0 after", "1 after", "2 after", "3 after", "4 after"));
}

TEST(RunOrderedTest, NothingToDoAndOneThread) {
  int calls = 0;
  RunOrdered(
      0, 8, [&](int) { ++calls; }, [&](int) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::vector<int> order;
  RunOrdered(
      3, 0, [&](int i) { order.push_back(i * 10); },
      [&](int i) { order.push_back(i); });
  EXPECT_THAT(order, ElementsAre(0, 0, 10, 1, 20, 2));
}

}  // namespace
}  // namespace jobset::cli
