// The checks jobsetd applies to what agents send: reports are cut or
// refused, registrations refused naming the field.
#include "scheduler/agents/agent_input.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

api::PodSpec Spec() {
  api::PodSpec spec;
  spec.add_containers()->set_name("main");
  spec.add_containers()->set_name("sidecar");
  spec.add_init_containers()->set_name("setup");
  return spec;
}

api::PodReport Report() {
  api::PodReport r;
  r.set_pod_uid("uid");
  r.mutable_status()->set_phase("Running");
  r.mutable_status()->add_container_statuses()->set_name("main");
  r.mutable_status()->add_init_container_statuses()->set_name("setup");
  api::Condition* c = r.mutable_status()->add_conditions();
  c->set_type("Ready");
  c->set_status("True");
  return r;
}

TEST(CutUtf8Test, CutsOnACharacterBoundary) {
  EXPECT_EQ(CutUtf8("abcdef", 4), "abcd");
  EXPECT_EQ(CutUtf8("abc", 4), "abc");
  // "é" is two bytes (C3 A9): a cut after its first byte drops it whole.
  EXPECT_EQ(CutUtf8("abcé", 4), "abc");
  EXPECT_EQ(CutUtf8("abcé", 5), "abcé");
  // "€" is three bytes.
  EXPECT_EQ(CutUtf8("€€", 4), "€");
  EXPECT_EQ(CutUtf8("€€", 2), "");
}

TEST(CheckPodReportTest, AcceptsAReportOfTheSpecsContainers) {
  api::PodReport r = Report();
  EXPECT_EQ(CheckPodReport(Spec(), r), std::nullopt);
}

TEST(CheckPodReportTest, AcceptsLaunchTimings) {
  api::PodReport r = Report();
  r.mutable_launch()->mutable_received_to_reported()->set_nanos(20'000'000);
  r.mutable_launch()->mutable_received_to_started()->set_nanos(5'000'000);
  EXPECT_FALSE(CheckPodReport(Spec(), r).has_value());
  r.mutable_launch()->mutable_received_to_reported()->set_seconds(86'400);
  r.mutable_launch()->mutable_received_to_reported()->set_nanos(0);
  EXPECT_FALSE(CheckPodReport(Spec(), r).has_value());
}

TEST(CheckPodReportTest, CutsMessagesTo4KiBAsKubernetesDoes) {
  api::PodReport r = Report();
  r.mutable_status()->set_message(std::string(4095, 'x') + "é" +
                                  std::string(10'000, 'y'));
  r.mutable_status()->mutable_container_statuses(0)->set_message(
      std::string(100'000, 'm'));
  r.mutable_status()->mutable_conditions(0)->set_message(
      std::string(5000, 'c'));
  ASSERT_EQ(CheckPodReport(Spec(), r), std::nullopt);
  // The two bytes of "é" would end past 4096: the cut falls before it.
  EXPECT_EQ(r.status().message(), std::string(4095, 'x'));
  EXPECT_EQ(r.status().container_statuses(0).message().size(),
            kMaxReportMessageBytes);
  EXPECT_EQ(r.status().conditions(0).message().size(), kMaxReportMessageBytes);
}

TEST(CheckPodReportTest, CutsEventMessagesTo1KiB) {
  api::PodReport r = Report();
  api::PodEvent* e = r.add_events();
  e->set_type("Warning");
  e->set_reason("Failed");
  e->set_message(std::string(5000, 'm'));
  EXPECT_EQ(CheckPodReport(Spec(), r), std::nullopt);
  EXPECT_EQ(r.events(0).message().size(), kMaxEventMessageBytes);
}

TEST(CheckPodReportTest, RefusesWhatIsNotThePodsOrOverALimit) {
  struct Case {
    std::string name;
    std::function<void(api::PodReport&)> mutate;
    std::string reason;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"huge",
       [](api::PodReport& r) {
         r.mutable_status()->set_message(std::string(3'500'000, 'x'));
       },
       "too_large", "exceeds the limit of 1048576"},
      {"phase", [](api::PodReport& r) { r.mutable_status()->set_phase("Odd"); },
       "phase", "status.phase"},
      {"reason",
       [](api::PodReport& r) {
         r.mutable_status()->set_reason(std::string(2000, 'r'));
       },
       "reason_too_long", "status.reason"},
      {"unknown container",
       [](api::PodReport& r) {
         r.mutable_status()->add_container_statuses()->set_name("intruder");
       },
       "unknown_container", "status.containerStatuses[1].name"},
      {"init container as a container",
       [](api::PodReport& r) {
         r.mutable_status()->add_container_statuses()->set_name("setup");
       },
       "unknown_container", "status.containerStatuses[1]"},
      {"twice",
       [](api::PodReport& r) {
         r.mutable_status()->add_container_statuses()->set_name("main");
       },
       "duplicate_container", "status.containerStatuses[1]"},
      {"unknown init container",
       [](api::PodReport& r) {
         r.mutable_status()->add_init_container_statuses()->set_name("main");
       },
       "unknown_container", "status.initContainerStatuses[1]"},
      {"container reason",
       [](api::PodReport& r) {
         r.mutable_status()->mutable_container_statuses(0)->set_reason(
             std::string(1025, 'r'));
       },
       "reason_too_long", "status.containerStatuses[0].reason"},
      {"conditions",
       [](api::PodReport& r) {
         for (int i = 0; i < kMaxReportConditions; ++i)
           r.mutable_status()->add_conditions()->set_type("T");
       },
       "too_many_conditions", "status.conditions"},
      {"condition type",
       [](api::PodReport& r) {
         r.mutable_status()->mutable_conditions(0)->set_type(
             std::string(400, 't'));
       },
       "condition_type", "status.conditions[0].type"},
      {"events",
       [](api::PodReport& r) {
         for (int i = 0; i <= kMaxReportEvents; ++i) {
           api::PodEvent* e = r.add_events();
           e->set_type("Normal");
           e->set_reason("Pulling");
         }
       },
       "too_many_events", "events: 17 exceed the limit of 16"},
      {"event type",
       [](api::PodReport& r) {
         api::PodEvent* e = r.add_events();
         e->set_type("Error");
         e->set_reason("Pulling");
       },
       "event_type", "events[0].type: unsupported value \"Error\""},
      {"event reason",
       [](api::PodReport& r) {
         api::PodEvent* e = r.add_events();
         e->set_type("Warning");
         e->set_reason("Bad\nReason");
       },
       "event_reason", "events[0].reason: \"Bad\\nReason\" is not 1 to 128"},
      {"empty event reason",
       [](api::PodReport& r) { r.add_events()->set_type("Warning"); },
       "event_reason", "events[0].reason"},
      {"negative launch time",
       [](api::PodReport& r) {
         r.mutable_launch()->mutable_received_to_reported()->set_seconds(-1);
       },
       "launch_timings", "launch.receivedToReported: -1 s 0 ns"},
      {"launch nanos out of range",
       [](api::PodReport& r) {
         r.mutable_launch()->mutable_received_to_reported()->set_nanos(
             1'000'000'000);
       },
       "launch_timings", "launch.receivedToReported"},
      {"launch over a day",
       [](api::PodReport& r) {
         r.mutable_launch()->mutable_received_to_started()->set_seconds(
             int64_t{1} << 60);
       },
       "launch_timings", "launch.receivedToStarted"},
      {"started after reported",
       [](api::PodReport& r) {
         r.mutable_launch()->mutable_received_to_reported()->set_seconds(1);
         r.mutable_launch()->mutable_received_to_started()->set_seconds(2);
       },
       "launch_timings", "longer than receivedToReported"},
      {"started alone",
       [](api::PodReport& r) {
         r.mutable_launch()->mutable_received_to_started()->set_seconds(0);
       },
       "launch_timings", "set without receivedToReported"},
  };
  for (const Case& c : cases) {
    api::PodReport r = Report();
    c.mutate(r);
    std::optional<Refusal> refusal = CheckPodReport(Spec(), r);
    ASSERT_TRUE(refusal.has_value()) << c.name;
    EXPECT_EQ(refusal->reason, c.reason) << c.name;
    EXPECT_THAT(refusal->detail, HasSubstr(c.detail)) << c.name;
  }
}

api::NodeRegistration Registration() {
  api::NodeRegistration r;
  r.set_name("node-1");
  r.set_address("10.0.0.1");
  (*r.mutable_labels())["cloud.google.com/gke-nodepool"] = "pool-a";
  (*r.mutable_capacity())["cpu"] = "64";
  (*r.mutable_capacity())["memory"] = "512Gi";
  (*r.mutable_capacity())["nvidia.com/gpu"] = "8";
  api::Taint* t = r.add_taints();
  t->set_key("dedicated");
  t->set_value("ml");
  t->set_effect("NoSchedule");
  return r;
}

TEST(ValidateRegistrationTest, AcceptsAGoodOneAndIPv6) {
  EXPECT_THAT(ValidateRegistration(Registration()), IsOk());
  api::NodeRegistration r = Registration();
  r.set_address("fd00::1");
  EXPECT_THAT(ValidateRegistration(r), IsOk());
}

TEST(ValidateRegistrationTest, RefusesABadFieldNamingIt) {
  struct Case {
    std::function<void(api::NodeRegistration&)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](api::NodeRegistration& r) { r.set_name("Node_1"); },
       "hello.node.name"},
      {[](api::NodeRegistration& r) { r.set_address(""); },
       "hello.node.address"},
      {[](api::NodeRegistration& r) {
         r.set_address("10.0.0.1\n6.6.6.6 evil");
       },
       "hello.node.address"},
      {[](api::NodeRegistration& r) { r.set_address("node-1.example"); },
       "hello.node.address"},
      // inet_pton reads up to the NUL only: the rest must not get through.
      {[](api::NodeRegistration& r) {
         r.set_address(std::string("10.0.0.1\0\n6.6.6.6 evil", 22));
       },
       "hello.node.address"},
      {[](api::NodeRegistration& r) { (*r.mutable_labels())["bad key"] = "v"; },
       "hello.node.labels[bad key]"},
      {[](api::NodeRegistration& r) {
         (*r.mutable_labels())["ok"] = std::string(64, 'v');
       },
       "hello.node.labels[ok]"},
      {[](api::NodeRegistration& r) {
         for (int i = 0; i <= kMaxNodeLabels; ++i)
           (*r.mutable_labels())[absl::StrCat("l", i)] = "v";
       },
       "hello.node.labels: 258 entries exceed the limit of 256"},
      {[](api::NodeRegistration& r) { r.mutable_taints(0)->set_key("a b"); },
       "hello.node.taints[0].key"},
      {[](api::NodeRegistration& r) { r.mutable_taints(0)->set_effect("No"); },
       "hello.node.taints[0].effect"},
      {[](api::NodeRegistration& r) {
         (*r.mutable_capacity())["memory"] = "lots";
       },
       "hello.node.capacity[memory]"},
      {[](api::NodeRegistration& r) { (*r.mutable_capacity())["cpu"] = "-1"; },
       "hello.node.capacity[cpu]"},
      {[](api::NodeRegistration& r) {
         (*r.mutable_capacity())["nvidia.com/gpu"] = "9E";
       },
       "hello.node.capacity[nvidia.com/gpu]"},
      {[](api::NodeRegistration& r) {
         r.set_agent_version(std::string(300, 'v'));
       },
       "hello.node.agentVersion"},
  };
  for (const Case& c : cases) {
    api::NodeRegistration r = Registration();
    c.mutate(r);
    EXPECT_THAT(
        ValidateRegistration(r),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.field;
  }
}

TEST(ValidateRegistrationTest, BoundsEachResourceNamingValueAndLimit) {
  struct Case {
    std::string resource;
    std::string at_limit;
    std::string over;
    std::string limit;
  };
  const std::vector<Case> cases = {
      {"cpu", "8192", "8193", "8192"},
      {"cpu", "8192", "8192001m", "8192"},
      {"memory", "256Ti", "257Ti", "281474976710656"},
      {"hugepages-2Mi", "256Ti", "1Pi", "281474976710656"},
      {"nvidia.com/gpu", "256", "1000", "256"},
      {"amd.com/gpu", "256", "257", "256"},
      {"google.com/tpu", "256", "1125899906842624", "256"},
      {"aws.amazon.com/neuroncore", "256", "512", "256"},
      {"example.com/widget", "1048576", "1048577", "1048576"},
      {"ephemeral-storage", "1Pi", "2Pi", "must be between 0 and"},
  };
  for (const Case& c : cases) {
    api::NodeRegistration r = Registration();
    (*r.mutable_capacity())[c.resource] = c.at_limit;
    EXPECT_THAT(ValidateRegistration(r), IsOk()) << c.resource;
    (*r.mutable_capacity())[c.resource] = c.over;
    EXPECT_THAT(ValidateRegistration(r),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(absl::StrCat("hello.node.capacity[",
                                                      c.resource, "]")),
                               HasSubstr(absl::StrCat("\"", c.over, "\"")),
                               HasSubstr(c.limit))))
        << c.resource;
  }
}

TEST(DropRestrictedLabelsTest, DropsOnlyTheNodeRestrictionAndJobsetdPrefixes) {
  api::NodeRegistration r = Registration();
  auto& labels = *r.mutable_labels();
  labels["node-restriction.kubernetes.io/pool"] = "a";
  labels["jobsetd.io/team"] = "b";
  labels["kubernetes.io/arch"] = "amd64";
  labels["example.jobsetd.io/x"] = "c";  // Another domain.
  const size_t before = labels.size();
  EXPECT_THAT(
      DropRestrictedLabels(r),
      ElementsAre("jobsetd.io/team", "node-restriction.kubernetes.io/pool"));
  EXPECT_EQ(r.labels().size(), before - 2);
  EXPECT_TRUE(r.labels().contains("kubernetes.io/arch"));
  EXPECT_TRUE(r.labels().contains("example.jobsetd.io/x"));
  EXPECT_THAT(DropRestrictedLabels(r), IsEmpty());
}

// Our addition: a pod's progress, each limit named; a refusal is the
// progress's alone (the hub keeps the status: agent_hub_progress_test).
TEST(CheckPodProgressTest, EachLimit) {
  auto good = [] {
    api::PodProgress p;
    p.set_step(100);
    p.set_checkpoint_step(90);
    p.set_steps_per_second(12.5);
    p.mutable_since_last_advance()->set_seconds(3);
    p.set_rejected_lines(2);
    return p;
  };
  EXPECT_EQ(CheckPodProgress(good()), std::nullopt);
  EXPECT_EQ(CheckPodProgress(api::PodProgress()), std::nullopt);  // no step
  api::PodProgress max = good();
  max.set_step(kMaxProgressStep);
  max.set_steps_per_second(kMaxProgressStepsPerSecond);
  max.mutable_since_last_advance()->set_seconds(
      absl::ToInt64Seconds(kMaxProgressAge));
  EXPECT_EQ(CheckPodProgress(max), std::nullopt);
  struct Case {
    std::string reason;
    std::string field;
    std::function<void(api::PodProgress&)> spoil;
  };
  const std::vector<Case> cases = {
      {"progress_step", "progress.step",
       [](api::PodProgress& p) { p.set_step(-1); }},
      {"progress_step", "progress.step",
       [](api::PodProgress& p) { p.set_step(kMaxProgressStep + 1); }},
      {"progress_checkpoint", "progress.checkpointStep",
       [](api::PodProgress& p) { p.set_checkpoint_step(101); }},
      {"progress_checkpoint", "progress.checkpointStep",
       [](api::PodProgress& p) { p.set_checkpoint_step(-5); }},
      {"progress_checkpoint", "progress.checkpointStep",
       [](api::PodProgress& p) { p.clear_step(); }},
      {"progress_rate", "progress.stepsPerSecond",
       [](api::PodProgress& p) { p.set_steps_per_second(-0.5); }},
      {"progress_rate", "progress.stepsPerSecond",
       [](api::PodProgress& p) { p.set_steps_per_second(2e9); }},
      {"progress_rate", "progress.stepsPerSecond",
       [](api::PodProgress& p) { p.set_steps_per_second(std::nan("")); }},
      {"progress_rate", "progress.stepsPerSecond",
       [](api::PodProgress& p) {
         p.set_steps_per_second(std::numeric_limits<double>::infinity());
       }},
      {"progress_age", "progress.sinceLastAdvance",
       [](api::PodProgress& p) {
         p.mutable_since_last_advance()->set_seconds(-1);
       }},
      {"progress_age", "progress.sinceLastAdvance",
       [](api::PodProgress& p) {
         p.mutable_since_last_advance()->set_nanos(1'000'000'000);
       }},
      {"progress_age", "progress.sinceLastAdvance",
       [](api::PodProgress& p) {
         p.mutable_since_last_advance()->set_seconds(
             absl::ToInt64Seconds(kMaxProgressAge) + 1);
       }},
      {"progress_rejected_lines", "progress.rejectedLines",
       [](api::PodProgress& p) { p.set_rejected_lines(-1); }},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    api::PodProgress p = good();
    cases[i].spoil(p);
    std::optional<Refusal> r = CheckPodProgress(p);
    ASSERT_TRUE(r.has_value()) << i;
    EXPECT_EQ(r->reason, cases[i].reason) << i;
    EXPECT_THAT(r->detail, HasSubstr(cases[i].field)) << i;
  }
}

}  // namespace
}  // namespace jobset::scheduler
