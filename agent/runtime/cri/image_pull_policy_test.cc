#include "agent/runtime/cri/image_pull_policy.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using Action = ImageStep::Action;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// "Type/Reason" of each event.
std::vector<std::string> Events(const ImageStep& step) {
  std::vector<std::string> out;
  for (const api::PodEvent& e : step.events) {
    out.push_back(e.type() + "/" + e.reason());
  }
  return out;
}

TEST(PullPolicyOfTest, GivenOrKubernetesDefault) {
  struct Case {
    std::string policy, image;
    PullPolicy want;
  };
  const Case cases[] = {
      {"Always", "busybox:1.36", PullPolicy::kAlways},
      {"IfNotPresent", "busybox:latest", PullPolicy::kIfNotPresent},
      {"Never", "busybox", PullPolicy::kNever},
      // The default: Always for :latest, or no tag and no digest.
      {"", "busybox", PullPolicy::kAlways},
      {"", "busybox:latest", PullPolicy::kAlways},
      {"", "127.0.0.1:5000/test/bb", PullPolicy::kAlways},
      {"", "busybox:1.36", PullPolicy::kIfNotPresent},
      {"", "127.0.0.1:5000/test/bb:1", PullPolicy::kIfNotPresent},
      {"", "busybox@sha256:" + std::string(64, 'a'), PullPolicy::kIfNotPresent},
      // An image that does not parse: IfNotPresent, as upstream's default.
      {"", "Not/Valid", PullPolicy::kIfNotPresent},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PullPolicyOf(c.policy, c.image), c.want)
        << "policy \"" << c.policy << "\" image " << c.image;
  }
}

TEST(ImagePullStateTest, PolicyAndPresence) {
  struct Case {
    PullPolicy policy;
    std::optional<bool> present;
    Action want;
    std::string reason;
    std::vector<std::string> events;
  };
  const Case cases[] = {
      // Always pulls without looking.
      {PullPolicy::kAlways,
       std::nullopt,
       Action::kPull,
       "",
       {"Normal/Pulling"}},
      {PullPolicy::kIfNotPresent, true, Action::kReady, "", {"Normal/Pulled"}},
      {PullPolicy::kIfNotPresent, false, Action::kPull, "", {"Normal/Pulling"}},
      {PullPolicy::kNever, true, Action::kReady, "", {"Normal/Pulled"}},
      {PullPolicy::kNever,
       false,
       Action::kWait,
       "ErrImageNeverPull",
       {"Warning/ErrImageNeverPull", "Warning/Failed"}},
  };
  for (const Case& c : cases) {
    ImagePullState state("busybox:1.36", c.policy, absl::Seconds(10),
                         absl::Minutes(5));
    EXPECT_EQ(state.ChecksPresence(), c.policy != PullPolicy::kAlways);
    const ImageStep step = state.Decide(c.present, kT0);
    EXPECT_EQ(step.action, c.want) << static_cast<int>(c.policy);
    EXPECT_EQ(step.reason, c.reason) << static_cast<int>(c.policy);
    EXPECT_THAT(Events(step), ElementsAreArray(c.events))
        << static_cast<int>(c.policy);
  }
}

TEST(ImagePullStateTest, MessagesAreKubelets) {
  ImagePullState state("busybox:1.36", PullPolicy::kNever, absl::Seconds(10),
                       absl::Minutes(5));
  ImageStep step = state.Decide(true, kT0);
  ASSERT_THAT(step.events, testing::SizeIs(1));
  EXPECT_EQ(step.events[0].message(),
            "Container image \"busybox:1.36\" already present on machine");

  step = state.Decide(false, kT0);
  EXPECT_EQ(step.message,
            "Container image \"busybox:1.36\" is not present with pull policy "
            "of Never");
  ASSERT_THAT(step.events, testing::SizeIs(2));
  EXPECT_EQ(step.events[0].message(), step.message);
  EXPECT_EQ(step.events[1].message(), "Error: ErrImageNeverPull");

  ImagePullState bad("Bad:Name", PullPolicy::kIfNotPresent, absl::Seconds(10),
                     absl::Minutes(5));
  step = bad.InvalidName("invalid reference format");
  EXPECT_EQ(step.action, Action::kWait);
  EXPECT_EQ(step.reason, "InvalidImageName");
  EXPECT_EQ(step.message,
            "Failed to apply default image tag \"Bad:Name\": couldn't parse "
            "image name \"Bad:Name\": invalid reference format");
  EXPECT_THAT(Events(step),
              ElementsAre("Warning/InspectFailed", "Warning/Failed"));
  EXPECT_EQ(step.events[1].message(), "Error: InvalidImageName");
  // Once per change.
  EXPECT_THAT(bad.InvalidName("invalid reference format").events, IsEmpty());

  step = state.InspectFailed("ImageStatus: unavailable");
  EXPECT_EQ(step.action, Action::kWait);
  EXPECT_EQ(step.reason, "ImageInspectError");
  EXPECT_EQ(step.message, "ImageStatus: unavailable");
  EXPECT_THAT(step.events, IsEmpty());

  ImagePullState pulled("busybox", PullPolicy::kAlways, absl::Seconds(10),
                        absl::Minutes(5));
  step = pulled.PullFailed("not found", kT0);
  EXPECT_EQ(step.message, "Failed to pull image \"busybox\": not found");
  EXPECT_EQ(step.events[0].message(), step.message);
  EXPECT_EQ(step.events[1].message(), "Error: ErrImagePull");
  step = pulled.Decide(std::nullopt, kT0 + absl::Seconds(1));
  EXPECT_EQ(step.message,
            "Back-off pulling image \"busybox\": ErrImagePull: not found");
  EXPECT_EQ(step.events[0].message(), "Back-off pulling image \"busybox\"");
  EXPECT_EQ(step.events[1].message(), "Error: ImagePullBackOff");
  step = pulled.Pulled(absl::Microseconds(1'234'567));
  EXPECT_EQ(step.action, Action::kReady);
  EXPECT_THAT(Events(step), ElementsAre("Normal/Pulled"));
  EXPECT_EQ(step.events[0].message(),
            "Successfully pulled image \"busybox\" in 1.234s");
  step = pulled.MissingAfterPull();
  EXPECT_EQ(step.reason, "ErrImagePull");
  EXPECT_EQ(step.message, "image \"busybox\" is not present after its pull");
  EXPECT_THAT(step.events, IsEmpty());
}

// The back-off as a function of now: after one failed pull at kT0 with a
// 10 s start, a pull may start again at kT0 + 10 s, not before.
TEST(ImagePullStateTest, BackOffIsADecisionOfNow) {
  struct Case {
    absl::Duration since_failure;
    Action want;
    std::string reason;
  };
  const Case cases[] = {
      {absl::ZeroDuration(), Action::kWait, "ImagePullBackOff"},
      {absl::Seconds(1), Action::kWait, "ImagePullBackOff"},
      {absl::Seconds(10) - absl::Nanoseconds(1), Action::kWait,
       "ImagePullBackOff"},
      {absl::Seconds(10), Action::kPull, ""},
      {absl::Hours(1), Action::kPull, ""},
  };
  for (PullPolicy policy : {PullPolicy::kAlways, PullPolicy::kIfNotPresent}) {
    for (const Case& c : cases) {
      ImagePullState state("busybox", policy, absl::Seconds(10),
                           absl::Minutes(5));
      state.PullFailed("unreachable", kT0);
      const std::optional<bool> present =
          state.ChecksPresence() ? std::optional<bool>(false) : std::nullopt;
      const ImageStep step = state.Decide(present, kT0 + c.since_failure);
      EXPECT_EQ(step.action, c.want) << c.since_failure;
      EXPECT_EQ(step.reason, c.reason) << c.since_failure;
    }
  }
}

// A pod's image over time: the back-off doubles from 10 s to its cap (40 s
// here) with each failed pull in a row; a pull that works resets it. Events
// are told once per change of reason, a failed pull's every time.
TEST(ImagePullStateTest, BackOffDoublesToItsCapAndResets) {
  enum What { kDecide, kFail, kPulled };
  struct Step {
    What what;
    int at_s;
    Action want;
    std::string reason;
    std::vector<std::string> events;
    int next_pull_s;  // -1: none (InfinitePast)
  };
  const std::vector<std::string> pulling = {"Normal/Pulling"};
  const std::vector<std::string> failed = {"Warning/Failed", "Warning/Failed"};
  const std::vector<std::string> backoff = {"Normal/BackOff", "Warning/Failed"};
  const Step steps[] = {
      {kDecide, 0, Action::kPull, "", pulling, -1},
      {kFail, 1, Action::kWait, "ErrImagePull", failed, 11},
      {kDecide, 5, Action::kWait, "ImagePullBackOff", backoff, 11},
      {kDecide, 10, Action::kWait, "ImagePullBackOff", {}, 11},
      {kDecide, 11, Action::kPull, "", pulling, 11},
      {kFail, 12, Action::kWait, "ErrImagePull", failed, 32},
      {kDecide, 31, Action::kWait, "ImagePullBackOff", backoff, 32},
      {kDecide, 32, Action::kPull, "", pulling, 32},
      {kFail, 32, Action::kWait, "ErrImagePull", failed, 72},
      {kDecide, 72, Action::kPull, "", pulling, 72},
      // 80 s would pass the cap.
      {kFail, 72, Action::kWait, "ErrImagePull", failed, 112},
      {kDecide, 111, Action::kWait, "ImagePullBackOff", backoff, 112},
      {kDecide, 112, Action::kPull, "", pulling, 112},
      {kPulled, 113, Action::kReady, "", {"Normal/Pulled"}, -1},
      // Starts over from 10 s.
      {kDecide, 200, Action::kPull, "", pulling, -1},
      {kFail, 200, Action::kWait, "ErrImagePull", failed, 210},
  };
  ImagePullState state("busybox", PullPolicy::kAlways, absl::Seconds(10),
                       absl::Seconds(40));
  for (const Step& s : steps) {
    const absl::Time now = kT0 + absl::Seconds(s.at_s);
    ImageStep step;
    switch (s.what) {
      case kDecide:
        step = state.Decide(std::nullopt, now);
        break;
      case kFail:
        step = state.PullFailed("unreachable", now);
        break;
      case kPulled:
        step = state.Pulled(absl::Seconds(1));
        break;
    }
    EXPECT_EQ(step.action, s.want) << "at " << s.at_s;
    EXPECT_EQ(step.reason, s.reason) << "at " << s.at_s;
    EXPECT_THAT(Events(step), ElementsAreArray(s.events)) << "at " << s.at_s;
    EXPECT_EQ(state.next_pull(), s.next_pull_s < 0
                                     ? absl::InfinitePast()
                                     : kT0 + absl::Seconds(s.next_pull_s))
        << "at " << s.at_s;
  }
}

TEST(ImagePullStateTest, PresentEventOncePerChange) {
  ImagePullState state("busybox:1.36", PullPolicy::kIfNotPresent,
                       absl::Seconds(10), absl::Minutes(5));
  EXPECT_THAT(Events(state.Decide(true, kT0)), ElementsAre("Normal/Pulled"));
  EXPECT_THAT(Events(state.Decide(true, kT0)), IsEmpty());
  // Gone from the store, and its pull fails: told again once it is back.
  EXPECT_THAT(Events(state.Decide(false, kT0)), ElementsAre("Normal/Pulling"));
  state.PullFailed("unreachable", kT0);
  EXPECT_THAT(Events(state.Decide(true, kT0)), ElementsAre("Normal/Pulled"));
}

}  // namespace
}  // namespace jobset::agent::cri
