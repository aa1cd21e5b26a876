// Table tests of the lifecycle rules: no processes, no sleeping, a fixed
// time.

#include "agent/runtime/container_lifecycle.h"

#include <signal.h>
#include <sys/wait.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

int Exit(int code) { return W_EXITCODE(code, 0); }
int Killed(int sig) { return W_EXITCODE(0, sig); }

TEST(ContainerLifecycleTest, NamesAreTheApis) {
  EXPECT_EQ(ContainerStateName(ContainerState::kWaiting), "waiting");
  EXPECT_EQ(ContainerStateName(ContainerState::kRunning), "running");
  EXPECT_EQ(ContainerStateName(ContainerState::kTerminated), "terminated");
  EXPECT_EQ(PodPhaseName(PodPhase::kPending), "Pending");
  EXPECT_EQ(PodPhaseName(PodPhase::kRunning), "Running");
  EXPECT_EQ(PodPhaseName(PodPhase::kSucceeded), "Succeeded");
  EXPECT_EQ(PodPhaseName(PodPhase::kFailed), "Failed");
}

TEST(ContainerLifecycleTest, ParseRestartPolicy) {
  EXPECT_EQ(*ParseRestartPolicy(""), RestartPolicy::kNever);
  EXPECT_EQ(*ParseRestartPolicy("Never"), RestartPolicy::kNever);
  EXPECT_EQ(*ParseRestartPolicy("OnFailure"), RestartPolicy::kOnFailure);
  EXPECT_EQ(*ParseRestartPolicy("Always"), RestartPolicy::kAlways);
  EXPECT_THAT(ParseRestartPolicy("Sometimes").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.restartPolicy")));
}

// Builds ExitFacts: Facts(Killed(SIGKILL)).Limit().Oom(true).
struct Facts {
  explicit Facts(int wait_status) { facts.wait_status = wait_status; }
  Facts& Oci() {
    facts.oci = true;
    return *this;
  }
  Facts& Limit() {
    facts.memory_limit = true;
    return *this;
  }
  Facts& Oom(bool grew) {
    facts.oom_count_grew = grew;
    return *this;
  }
  Facts& ByUs() {
    facts.signalled_by_us = true;
    return *this;
  }
  Facts& RuncError(const std::string& line) {
    facts.runc_error = line;
    return *this;
  }
  ExitFacts facts;
};

struct ClassifyCase {
  std::string name;
  Facts facts;
  int exit_code;
  int signal;
  std::string reason;
};

TEST(ContainerLifecycleTest, ClassifyExit) {
  const std::string runc_error = "{\"level\":\"error\",\"msg\":\"no file\"}";
  const std::vector<ClassifyCase> cases = {
      {"success", Facts(Exit(0)), 0, 0, "Completed"},
      {"failure", Facts(Exit(3)), 3, 0, "Error"},
      {"sigterm", Facts(Killed(SIGTERM)), 143, SIGTERM, "Error"},
      {"sigkill without limit", Facts(Killed(SIGKILL)), 137, SIGKILL, "Error"},
      {"oom counted", Facts(Killed(SIGKILL)).Limit().Oom(true), 137, SIGKILL,
       "OOMKilled"},
      {"sigkill with limit, count unchanged",
       Facts(Killed(SIGKILL)).Limit().Oom(false), 137, SIGKILL, "Error"},
      {"oom counted, sent by us too",
       Facts(Killed(SIGKILL)).Limit().Oom(true).ByUs(), 137, SIGKILL,
       "OOMKilled"},
      {"count unknown, not sent by us", Facts(Killed(SIGKILL)).Limit(), 137,
       SIGKILL, "OOMKilled"},
      {"count unknown, sent by us", Facts(Killed(SIGKILL)).Limit().ByUs(), 137,
       SIGKILL, "Error"},
      {"oom of another signal", Facts(Killed(SIGTERM)).Limit(), 143, SIGTERM,
       "Error"},
      {"runc reports a signal death", Facts(Exit(128 + SIGTERM)).Oci(), 143,
       SIGTERM, "Error"},
      {"runc oom", Facts(Exit(137)).Oci().Limit(), 137, SIGKILL, "OOMKilled"},
      {"runc passes an exit code on", Facts(Exit(7)).Oci(), 7, 0, "Error"},
      {"a process exiting 143 is no signal", Facts(Exit(143)), 143, 0, "Error"},
      {"runc failed before the container ran",
       Facts(Exit(1)).Oci().RuncError(runc_error), 1, 0, "StartError"},
      {"a runc error line after success is ignored",
       Facts(Exit(0)).Oci().RuncError(runc_error), 0, 0, "Completed"},
  };
  for (const ClassifyCase& c : cases) {
    SCOPED_TRACE(c.name);
    const ContainerExit exit = ClassifyExit(c.facts.facts);
    EXPECT_EQ(exit.exit_code, c.exit_code);
    EXPECT_EQ(exit.signal, c.signal);
    EXPECT_EQ(exit.reason, c.reason);
  }
  EXPECT_EQ(
      ClassifyExit(Facts(Exit(1)).Oci().RuncError(runc_error).facts).message,
      "runc: " + runc_error);
  EXPECT_EQ(ClassifyExit(Facts(Exit(1)).facts).message, "");
}

TEST(ContainerLifecycleTest, StartedAndStartFailed) {
  ContainerRecord c = NewContainer(/*init=*/false);
  EXPECT_EQ(c.state, ContainerState::kWaiting);
  EXPECT_EQ(c.reason, "ContainerCreating");
  EXPECT_EQ(NewContainer(/*init=*/true).reason, "PodInitializing");

  c.exit_code = 3;  // An earlier attempt's.
  c.finished_at = kNow - absl::Seconds(1);
  c.reason = "CrashLoopBackOff";
  c.message = "back-off";
  const ContainerRecord started = Started(c, kNow);
  EXPECT_EQ(started.state, ContainerState::kRunning);
  EXPECT_TRUE(started.ever_started);
  EXPECT_EQ(started.started_at, kNow);
  EXPECT_EQ(started.finished_at, absl::InfinitePast());
  EXPECT_EQ(started.reason, "");
  EXPECT_EQ(started.message, "");
  EXPECT_EQ(started.exit_code, 3);

  const ContainerRecord failed =
      StartFailed(NewContainer(false), "no such binary", kNow);
  EXPECT_EQ(failed.state, ContainerState::kTerminated);
  EXPECT_EQ(failed.reason, "StartError");
  EXPECT_EQ(failed.message, "no such binary");
  EXPECT_EQ(failed.exit_code, 128);
  EXPECT_EQ(failed.finished_at, kNow);
  EXPECT_TRUE(failed.done);
}

struct RestartCase {
  std::string name;
  RestartPolicy policy;
  bool init;
  int exit_code;
  std::string reason;
  bool pod_ending;
  bool restarts;
};

TEST(ContainerLifecycleTest, RestartByPolicy) {
  const std::vector<RestartCase> cases = {
      {"never, failed", RestartPolicy::kNever, false, 1, "Error", false, false},
      {"never, ok", RestartPolicy::kNever, false, 0, "Completed", false, false},
      {"on failure, failed", RestartPolicy::kOnFailure, false, 1, "Error",
       false, true},
      {"on failure, ok", RestartPolicy::kOnFailure, false, 0, "Completed",
       false, false},
      {"on failure, oom", RestartPolicy::kOnFailure, false, 137, "OOMKilled",
       false, true},
      {"on failure, runc start error", RestartPolicy::kOnFailure, false, 1,
       "StartError", false, false},
      {"always, ok", RestartPolicy::kAlways, false, 0, "Completed", false,
       true},
      {"always, failed", RestartPolicy::kAlways, false, 1, "Error", false,
       true},
      {"always, init ok", RestartPolicy::kAlways, true, 0, "Completed", false,
       false},
      {"always, init failed", RestartPolicy::kAlways, true, 1, "Error", false,
       true},
      {"on failure, init failed", RestartPolicy::kOnFailure, true, 2, "Error",
       false, true},
      {"always, pod ending", RestartPolicy::kAlways, false, 143, "Error", true,
       false},
  };
  for (const RestartCase& c : cases) {
    SCOPED_TRACE(c.name);
    ContainerRecord record = Started(NewContainer(c.init), kNow);
    const ContainerExit exit = {c.exit_code, 0, c.reason, ""};
    const ContainerRecord after =
        Exited(record, exit, c.policy, c.pod_ending, kNow + absl::Seconds(5));
    EXPECT_EQ(after.exit_code, c.exit_code);
    EXPECT_EQ(after.finished_at, kNow + absl::Seconds(5));
    if (c.restarts) {
      EXPECT_FALSE(after.done);
      EXPECT_EQ(after.state, ContainerState::kWaiting);
      EXPECT_EQ(after.reason, "CrashLoopBackOff");
      EXPECT_EQ(after.restart_count, 1);
      EXPECT_EQ(after.backoff.next_start, kNow + absl::Seconds(6));
      EXPECT_THAT(after.message, HasSubstr(c.reason));
    } else {
      EXPECT_TRUE(after.done);
      EXPECT_EQ(after.state, ContainerState::kTerminated);
      EXPECT_EQ(after.reason, c.reason);
      EXPECT_EQ(after.restart_count, 0);
    }
  }
}

TEST(ContainerLifecycleTest, BackoffDoublesToTheCap) {
  ContainerRecord c = NewContainer(false);
  absl::Time now = kNow;
  const std::vector<int> waits = {1, 2, 4, 8, 16, 30, 30};
  for (size_t i = 0; i < waits.size(); ++i) {
    SCOPED_TRACE(i);
    c = Started(c, now);
    c = Exited(c, {1, 0, "Error", ""}, RestartPolicy::kOnFailure, false, now);
    EXPECT_EQ(c.backoff.next_start - now, absl::Seconds(waits[i]));
    EXPECT_EQ(c.restart_count, static_cast<int>(i) + 1);
    EXPECT_EQ(c.exit_code, 1);
    EXPECT_EQ(c.message,
              "back-off " + absl::FormatDuration(absl::Seconds(waits[i])) +
                  " restarting container (last exit: Error, exit code 1)");
    now = c.backoff.next_start;
  }
}

ContainerRecord Record(ContainerState state, bool started, bool done,
                       int exit_code) {
  ContainerRecord c;
  c.state = state;
  c.ever_started = started;
  c.done = done;
  c.exit_code = exit_code;
  return c;
}

TEST(ContainerLifecycleTest, RunningPhase) {
  const ContainerRecord waiting =
      Record(ContainerState::kWaiting, false, false, 0);
  const ContainerRecord running =
      Record(ContainerState::kRunning, true, false, 0);
  const ContainerRecord ok = Record(ContainerState::kTerminated, true, true, 0);
  const ContainerRecord failed =
      Record(ContainerState::kTerminated, true, true, 1);
  const ContainerRecord backing_off =
      Record(ContainerState::kWaiting, true, false, 1);
  struct Case {
    std::string name;
    PodPhase current;
    std::vector<const ContainerRecord*> containers;
    PodPhase want;
  };
  const std::vector<Case> cases = {
      {"one not started",
       PodPhase::kPending,
       {&running, &waiting},
       PodPhase::kPending},
      {"all started",
       PodPhase::kPending,
       {&running, &running},
       PodPhase::kRunning},
      {"started and done",
       PodPhase::kPending,
       {&running, &ok},
       PodPhase::kRunning},
      {"back-off keeps running",
       PodPhase::kRunning,
       {&backing_off},
       PodPhase::kRunning},
      {"all ok", PodPhase::kRunning, {&ok, &ok}, PodPhase::kSucceeded},
      {"one failed", PodPhase::kRunning, {&ok, &failed}, PodPhase::kFailed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RunningPhase(c.current, c.containers), c.want);
  }
}

TEST(ContainerLifecycleTest, StoppedPhase) {
  const ContainerRecord ok = Record(ContainerState::kTerminated, true, true, 0);
  const ContainerRecord killed =
      Record(ContainerState::kTerminated, true, true, 137);
  const ContainerRecord waiting =
      Record(ContainerState::kWaiting, false, true, 0);
  EXPECT_EQ(StoppedPhase(true, {&ok, &ok}), PodPhase::kSucceeded);
  EXPECT_EQ(StoppedPhase(false, {&ok}), PodPhase::kFailed);
  EXPECT_EQ(StoppedPhase(true, {&ok, &killed}), PodPhase::kFailed);
  EXPECT_EQ(StoppedPhase(true, {&waiting}), PodPhase::kFailed);
}

TEST(ContainerLifecycleTest, PodFailedKeepsTheFirstEnd) {
  PodOutcome pod = PodFailed(PodOutcome(), "StartError", "container a: gone");
  EXPECT_EQ(pod.phase, PodPhase::kFailed);
  EXPECT_TRUE(pod.finished);
  pod = PodFailed(pod, "InitContainerFailed", "later");
  EXPECT_EQ(pod.reason, "StartError");
  EXPECT_EQ(pod.message, "container a: gone");
}

TEST(ContainerLifecycleTest, ProbeSettingsDefaults) {
  const ProbeSettings d = ProbeSettingsOf(api::Probe());
  EXPECT_EQ(d.initial_delay, absl::ZeroDuration());
  EXPECT_EQ(d.period, absl::Seconds(10));
  EXPECT_EQ(d.timeout, absl::Seconds(1));
  EXPECT_EQ(d.success_threshold, 1);
  EXPECT_EQ(d.failure_threshold, 3);
  api::Probe p;
  p.set_initial_delay_seconds(2);
  p.set_period_seconds(5);
  p.set_timeout_seconds(3);
  p.set_success_threshold(2);
  p.set_failure_threshold(1);
  const ProbeSettings s = ProbeSettingsOf(p);
  EXPECT_EQ(s.initial_delay, absl::Seconds(2));
  EXPECT_EQ(s.period, absl::Seconds(5));
  EXPECT_EQ(s.timeout, absl::Seconds(3));
  EXPECT_EQ(s.success_threshold, 2);
  EXPECT_EQ(s.failure_threshold, 1);
}

TEST(ContainerLifecycleTest, ProbeThresholds) {
  ProbeSettings s;
  s.success_threshold = 2;
  s.failure_threshold = 3;
  // Each row: a result, whether the container is ready after it.
  const std::vector<std::pair<bool, bool>> steps = {
      {true, false}, {true, true},   {false, true}, {false, true},
      {true, true},  {false, true},  {false, true}, {false, false},
      {true, false}, {false, false}, {true, false}, {true, true},
  };
  ProbeRecord r;
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(i);
    r = Probed(r, s, steps[i].first);
    EXPECT_EQ(r.ready, steps[i].second);
  }
}

TEST(ContainerLifecycleTest, Readiness) {
  const ContainerRecord running =
      Record(ContainerState::kRunning, true, false, 0);
  const ContainerRecord ended =
      Record(ContainerState::kTerminated, true, true, 0);
  EXPECT_TRUE(ContainerReady(running, false, false));
  EXPECT_FALSE(ContainerReady(running, true, false));
  EXPECT_TRUE(ContainerReady(running, true, true));
  EXPECT_FALSE(ContainerReady(ended, false, false));
  ContainerRecord init = ended;
  init.init = true;
  EXPECT_TRUE(ContainerReady(init, false, false));
  init.exit_code = 1;
  EXPECT_FALSE(ContainerReady(init, false, false));

  EXPECT_TRUE(PodReady(false, true, {true, true}));
  EXPECT_FALSE(PodReady(false, true, {true, false}));
  EXPECT_FALSE(PodReady(true, true, {true}));
  EXPECT_FALSE(PodReady(false, false, {true}));
  EXPECT_FALSE(PodReady(false, true, {}));
}

TEST(ContainerLifecycleTest, ToContainerStatus) {
  ContainerRecord c = Started(NewContainer(false), kNow);
  c = Exited(c, {137, SIGKILL, "OOMKilled", ""}, RestartPolicy::kNever, false,
             kNow + absl::Milliseconds(1500));
  const api::ContainerStatus s = ToContainerStatus("main", c, false);
  EXPECT_EQ(s.name(), "main");
  EXPECT_EQ(s.flat_state(), "terminated");
  EXPECT_EQ(s.exit_code(), 137);
  EXPECT_EQ(s.signal(), SIGKILL);
  EXPECT_EQ(s.reason(), "OOMKilled");
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.started_at().seconds(), 1'700'000'000);
  EXPECT_EQ(s.finished_at().seconds(), 1'700'000'001);
  EXPECT_EQ(s.finished_at().nanos(), 500'000'000);
  const api::ContainerStatus waiting =
      ToContainerStatus("w", NewContainer(false), false);
  EXPECT_EQ(waiting.flat_state(), "waiting");
  EXPECT_FALSE(waiting.has_started_at());
  EXPECT_FALSE(waiting.has_finished_at());
}

TEST(PodConditionsTest, EachConditionKeepsWhenItChanged) {
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  PodConditions conditions;
  conditions.Reset(t0);
  conditions.Update(false, false, t0 + absl::Milliseconds(1));
  conditions.Update(true, false, t0 + absl::Milliseconds(5));
  conditions.Update(true, true, t0 + absl::Milliseconds(9));
  conditions.Update(true, true, t0 + absl::Milliseconds(20));
  EXPECT_TRUE(conditions.ready());
  api::PodStatus status;
  conditions.AppendTo(false, &status);
  ASSERT_EQ(status.conditions_size(), 3);
  const int64_t base = absl::ToUnixMillis(t0);
  auto at = [&](int i) {
    const auto& t = status.conditions(i).last_transition_time();
    return t.seconds() * 1000 + t.nanos() / 1'000'000 - base;
  };
  EXPECT_EQ(status.conditions(0).type(), "Initialized");
  EXPECT_EQ(at(0), 5);
  EXPECT_EQ(status.conditions(1).type(), "Ready");
  EXPECT_EQ(at(1), 9);
  EXPECT_EQ(status.conditions(2).type(), "ContainersReady");
  EXPECT_EQ(at(2), 9);
  for (const api::Condition& c : status.conditions()) {
    EXPECT_EQ(c.status(), "True");
    EXPECT_EQ(c.reason(), "");
  }

  conditions.Update(true, false, t0 + absl::Milliseconds(30));
  status.Clear();
  conditions.AppendTo(true, &status);
  EXPECT_EQ(status.conditions(1).status(), "False");
  EXPECT_EQ(status.conditions(1).reason(), "PodCompleted");
  EXPECT_EQ(at(1), 30);
  EXPECT_EQ(status.conditions(0).status(), "True");
}

TEST(PodConditionsTest, NotYetInitializedSaysWhy) {
  PodConditions conditions;
  conditions.Reset(absl::FromUnixSeconds(1'700'000'000));
  api::PodStatus status;
  conditions.AppendTo(false, &status);
  EXPECT_EQ(status.conditions(0).status(), "False");
  EXPECT_EQ(status.conditions(0).reason(), "ContainersNotInitialized");
  EXPECT_EQ(status.conditions(2).reason(), "ContainersNotReady");
  EXPECT_EQ(status.conditions(0).last_transition_time().seconds(),
            1'700'000'000);
}

}  // namespace
}  // namespace jobset::agent
