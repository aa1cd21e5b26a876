#include "scheduler/controller/pod_events.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::PodEvent Event(const std::string& type, const std::string& reason,
                    const std::string& message) {
  api::PodEvent e;
  e.set_type(type);
  e.set_reason(reason);
  e.set_message(message);
  return e;
}

TEST(PendingPodEventsTest, EachEventNamesItsPodInReportOrder) {
  PendingPodEvents pending;
  pending.Hold("js-w-0-0", Event("Normal", "Pulling", "Pulling image \"a\""));
  pending.Hold("js-w-0-0",
               Event("Warning", "Failed", "Failed to pull image \"a\": x"));
  EXPECT_THAT(
      pending.Take(),
      ElementsAre(
          JobSetEvent{"Normal", "Pulling", "pod js-w-0-0: Pulling image \"a\""},
          JobSetEvent{"Warning", "Failed",
                      "pod js-w-0-0: Failed to pull image \"a\": x"}));
  EXPECT_TRUE(pending.empty());
  EXPECT_THAT(pending.Take(), IsEmpty());
}

TEST(PendingPodEventsTest, TheSameEventOfManyPodsIsOneCountingThem) {
  PendingPodEvents pending;
  for (const char* pod : {"p-0", "p-1", "p-1", "p-2"}) {
    pending.Hold(pod,
                 Event("Normal", "BackOff", "Back-off pulling image \"a\""));
  }
  pending.Hold("p-3",
               Event("Normal", "BackOff", "Back-off pulling image \"b\""));
  pending.Hold("p-4",
               Event("Warning", "BackOff", "Back-off pulling image \"a\""));
  EXPECT_THAT(
      pending.Take(),
      ElementsAre(JobSetEvent{"Normal", "BackOff",
                              "pod p-0: Back-off pulling image \"a\" (and 2 "
                              "more pods)"},
                  JobSetEvent{"Normal", "BackOff",
                              "pod p-3: Back-off pulling image \"b\""},
                  JobSetEvent{"Warning", "BackOff",
                              "pod p-4: Back-off pulling image \"a\""}));
}

TEST(PendingPodEventsTest, OneMorePodIsSingular) {
  PendingPodEvents pending;
  pending.Hold("p-0", Event("Normal", "Pulled", "m"));
  pending.Hold("p-1", Event("Normal", "Pulled", "m"));
  EXPECT_THAT(pending.Take(),
              ElementsAre(JobSetEvent{"Normal", "Pulled",
                                      "pod p-0: m (and 1 more pod)"}));
}

TEST(PendingPodEventsTest, BeyondTheBoundEventsAreCountedAndDropped) {
  PendingPodEvents pending;
  for (size_t i = 0; i < PendingPodEvents::kMaxHeld + 3; ++i) {
    pending.Hold("p", Event("Normal", "Pulling", std::to_string(i)));
  }
  std::vector<JobSetEvent> events = pending.Take();
  ASSERT_EQ(events.size(), PendingPodEvents::kMaxHeld + 1);
  EXPECT_EQ(events.back(),
            (JobSetEvent{"Warning", "EventsDropped",
                         "3 pod events were dropped: more than 256 between two "
                         "passes"}));
  EXPECT_TRUE(pending.empty());
}

}  // namespace
}  // namespace jobset::scheduler
