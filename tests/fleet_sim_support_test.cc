#include "tests/fleet_sim_support.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::testing::fleet {
namespace {

using ::testing::HasSubstr;

api::Pod PodWithEnv(
    const std::vector<std::vector<std::pair<std::string, std::string>>>&
        containers) {
  api::Pod pod;
  int i = 0;
  for (const auto& env : containers) {
    api::Container* c = pod.mutable_spec()->add_containers();
    c->set_name(absl::StrCat("c", i++));
    for (const auto& [name, value] : env) {
      api::EnvVar* e = c->add_env();
      e->set_name(name);
      e->set_value(value);
    }
  }
  return pod;
}

TEST(WorkloadOfTest, ReadsTheFirstContainerThatSetsIt) {
  struct Case {
    std::string name;
    std::vector<std::vector<std::pair<std::string, std::string>>> env;
    std::optional<absl::Duration> run;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {"nothing set: runs until stopped", {{{"OTHER", "1"}}}, std::nullopt, 0},
      {"instant success",
       {{{"SIM_RUN_SECONDS", "0"}}},
       absl::ZeroDuration(),
       0},
      {"fractions",
       {{{"SIM_RUN_SECONDS", "1.5"}}},
       absl::Milliseconds(1500),
       0},
      {"failure after a while",
       {{{"SIM_RUN_SECONDS", "3"}, {"SIM_EXIT_CODE", "7"}}},
       absl::Seconds(3),
       7},
      {"exit code alone: runs until stopped",
       {{{"SIM_EXIT_CODE", "1"}}},
       std::nullopt,
       1},
      {"the first container that sets either wins",
       {{{"OTHER", "x"}},
        {{"SIM_RUN_SECONDS", "2"}},
        {{"SIM_RUN_SECONDS", "9"}, {"SIM_EXIT_CODE", "3"}}},
       absl::Seconds(2),
       0},
      {"the longest run", {{{"SIM_RUN_SECONDS", "86400"}}}, absl::Hours(24), 0},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Workload> w = WorkloadOf(PodWithEnv(c.env));
    ASSERT_TRUE(w.ok()) << c.name << ": " << w.status();
    EXPECT_EQ(w->run, c.run) << c.name;
    EXPECT_EQ(w->exit_code, c.exit_code) << c.name;
  }
}

TEST(WorkloadOfTest, RefusesMalformedValuesNamingThem) {
  struct Case {
    std::string name;
    std::string value;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"SIM_RUN_SECONDS", "abc", "SIM_RUN_SECONDS: Invalid value: \"abc\""},
      {"SIM_RUN_SECONDS", "-1", "from 0 to 86400"},
      {"SIM_RUN_SECONDS", "86401", "from 0 to 86400"},
      {"SIM_RUN_SECONDS", "nan", "SIM_RUN_SECONDS"},
      {"SIM_RUN_SECONDS", "inf", "SIM_RUN_SECONDS"},
      {"SIM_EXIT_CODE", "256", "from 0 to 255"},
      {"SIM_EXIT_CODE", "-1", "from 0 to 255"},
      {"SIM_EXIT_CODE", "1.5", "SIM_EXIT_CODE: Invalid value: \"1.5\""},
      {"SIM_FAIL_ATTEMPTS", "-1", "from 0 to 1000"},
      {"SIM_FAIL_ATTEMPTS", "1001", "from 0 to 1000"},
      {"SIM_FAIL_ATTEMPTS", "x", "SIM_FAIL_ATTEMPTS: Invalid value: \"x\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Workload> w = WorkloadOf(PodWithEnv({{{c.name, c.value}}}));
    ASSERT_FALSE(w.ok()) << c.name << "=" << c.value;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(w.status().message(), HasSubstr(c.want));
    EXPECT_THAT(w.status().message(), HasSubstr("container c0"));
  }
  // A hostile value is cut in the message.
  absl::StatusOr<Workload> w =
      WorkloadOf(PodWithEnv({{{"SIM_RUN_SECONDS", std::string(10000, 'x')}}}));
  ASSERT_FALSE(w.ok());
  EXPECT_LT(w.status().message().size(), 300u);
}

TEST(WorkloadOfTest, FailsOnlyTheAttemptsBelowSimFailAttempts) {
  struct Case {
    std::string fail_attempts;  // "": unset
    int attempt;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {"", 0, 3},  {"", 5, 3},  {"1", 0, 3}, {"1", 1, 0},
      {"2", 1, 3}, {"2", 2, 0}, {"0", 0, 0},
  };
  for (const Case& c : cases) {
    std::vector<std::pair<std::string, std::string>> env = {
        {"SIM_RUN_SECONDS", "1"}, {"SIM_EXIT_CODE", "3"}};
    if (!c.fail_attempts.empty())
      env.emplace_back("SIM_FAIL_ATTEMPTS", c.fail_attempts);
    api::Pod pod = PodWithEnv({env});
    (*pod.mutable_metadata()
          ->mutable_labels())["jobset.sigs.k8s.io/restart-attempt"] =
        absl::StrCat(c.attempt);
    absl::StatusOr<Workload> w = WorkloadOf(pod);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->exit_code, c.exit_code)
        << "SIM_FAIL_ATTEMPTS=" << c.fail_attempts << ", attempt " << c.attempt;
    EXPECT_EQ(w->run, absl::Seconds(1));
  }
}

TEST(PodLabelsTest, JobSetAttemptAndJob) {
  api::Pod pod;
  pod.mutable_metadata()->set_namespace_("ns");
  EXPECT_EQ(JobSetKeyOf(pod), "");
  EXPECT_EQ(RestartAttemptOf(pod), 0);
  EXPECT_EQ(JobIndexOf(pod), -1);
  auto& labels = *pod.mutable_metadata()->mutable_labels();
  labels["jobset.sigs.k8s.io/jobset-name"] = "train";
  labels["jobset.sigs.k8s.io/restart-attempt"] = "3";
  labels["jobset.sigs.k8s.io/job-index"] = "12";
  EXPECT_EQ(JobSetKeyOf(pod), "ns/train");
  EXPECT_EQ(RestartAttemptOf(pod), 3);
  EXPECT_EQ(JobIndexOf(pod), 12);
  labels["jobset.sigs.k8s.io/restart-attempt"] = "-2";
  EXPECT_EQ(RestartAttemptOf(pod), 0);
  labels.erase("jobset.sigs.k8s.io/restart-attempt");
  (*pod.mutable_metadata()
        ->mutable_annotations())["jobset.sigs.k8s.io/restart-attempt"] = "4";
  EXPECT_EQ(RestartAttemptOf(pod), 4);
}

TEST(SimNodeTest, SlicesOfHostsPerSlice) {
  NodeShape shape;
  shape.hosts_per_slice = 64;
  const api::NodeRegistration first = SimNode(0, shape);
  const api::NodeRegistration last = SimNode(63, shape);
  const api::NodeRegistration next = SimNode(64, shape);
  EXPECT_EQ(first.name(), "sim-0");
  EXPECT_EQ(first.labels().at(kSliceLabel), "slice-0");
  EXPECT_EQ(last.labels().at(kSliceLabel), "slice-0");
  EXPECT_EQ(next.labels().at(kSliceLabel), "slice-1");
  EXPECT_EQ(next.capacity().at("nvidia.com/gpu"), "8");
  EXPECT_EQ(SimNode(70000, shape).address(), "10.1.17.112");
  shape.gpus = 0;
  EXPECT_FALSE(SimNode(1, shape).capacity().contains("nvidia.com/gpu"));
}

TEST(PercentileTest, Table) {
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 0.5), 3);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 0.99), 4);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 1.0), 4);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 0), 1);
}

TEST(FleetRecorderTest, TalliesOrdersPerJobSetAttempt) {
  FleetRecorder r;
  const absl::Time t0 = absl::UnixEpoch() + absl::Seconds(100);
  r.Run("ns/a", 0, 5, "u1", t0 + absl::Seconds(2), false);
  r.Run("ns/a", 0, 6, "u2", t0 + absl::Seconds(1), true);
  r.Run("ns/a", 1, 7, "u3", t0 + absl::Seconds(3), false);
  r.Stop("ns/a", 0, t0 + absl::Seconds(4));
  const FleetRecorder::Tally a0 = r.Get("ns/a", 0);
  EXPECT_EQ(a0.runs, 2);
  EXPECT_EQ(a0.first_run, t0 + absl::Seconds(1));
  EXPECT_EQ(a0.last_run, t0 + absl::Seconds(2));
  EXPECT_EQ(a0.first_agent, 5);
  EXPECT_EQ(a0.first_uid, "u1");
  EXPECT_EQ(a0.stops, 1);
  EXPECT_EQ(r.Get("ns/a", 1).runs, 1);
  EXPECT_EQ(r.Get("ns/b", 0).runs, 0);
  EXPECT_EQ(r.counts().runs, 3);
  EXPECT_EQ(r.counts().welcome_runs, 1);
  // Reached already, and not reached by a deadline past: no wait either way.
  EXPECT_EQ(r.AwaitRuns("ns/a", 0, 2, absl::InfinitePast()).runs, 2);
  EXPECT_EQ(r.AwaitRuns("ns/a", 1, 2, absl::InfinitePast()).runs, 1);
}

TEST(FleetRecorderTest, CountsDoubleLaunchesAndReportCopies) {
  FleetRecorder r;
  const absl::Time t0 = absl::UnixEpoch() + absl::Seconds(100);
  r.Run("ns/a", 0, 1, "u1", t0, false);
  r.Launch("u1", "ns/a", 0, "ns/a/0/a-w-0-0");
  r.Launch("u2", "ns/a", 0, "ns/a/0/a-w-0-1");
  EXPECT_EQ(r.counts().double_launches, 0);
  EXPECT_EQ(r.counts().double_task_launches, 0);
  // The same uid twice; another uid for a task that already ran.
  r.Launch("u1", "ns/a", 0, "ns/a/0/a-w-0-0");
  r.Launch("u3", "ns/a", 0, "ns/a/0/a-w-0-1");
  EXPECT_EQ(r.counts().double_launches, 1);
  EXPECT_EQ(r.counts().double_task_launches, 2);

  r.ReportCopy("u1", /*sent=*/true, /*stale=*/false);
  r.ReportCopy("u1", /*sent=*/false, /*stale=*/false);
  // Attempt 1 ordered: a copy of attempt 0's report comes after it.
  r.Run("ns/a", 1, 1, "u4", t0, false);
  r.ReportCopy("u1", /*sent=*/true, /*stale=*/true);
  r.ReportCopy("unknown", /*sent=*/true, /*stale=*/true);
  const FleetRecorder::Counts c = r.counts();
  EXPECT_EQ(c.copies_sent, 3);
  EXPECT_EQ(c.copies_dropped, 1);
  EXPECT_EQ(c.stale_copies, 2);
  EXPECT_EQ(c.copies_after_restart, 1);
}

TEST(PodLabelsTest, TaskKeyIsTheNameWithoutTheUidSuffix) {
  api::Pod pod;
  pod.mutable_metadata()->set_namespace_("ns");
  pod.mutable_metadata()->set_name("train-w-0-3-ab12c");
  auto& labels = *pod.mutable_metadata()->mutable_labels();
  labels["jobset.sigs.k8s.io/jobset-name"] = "train";
  labels["jobset.sigs.k8s.io/restart-attempt"] = "2";
  EXPECT_EQ(TaskKeyOf(pod), "ns/train/2/train-w-0-3");
  pod.mutable_metadata()->set_name("nodash");
  EXPECT_EQ(TaskKeyOf(pod), "ns/train/2/");
}

TEST(FleetRecorderTest, KeepsRoundTripsOnlyWhileMeasuring) {
  FleetRecorder r;
  r.Rtt(absl::Milliseconds(5));
  r.SetMeasuring(true);
  r.Rtt(absl::Milliseconds(3));
  r.Rtt(absl::Milliseconds(1));
  r.SetMeasuring(false);
  r.Rtt(absl::Milliseconds(9));
  EXPECT_EQ(r.TakeRttsMs(), (std::vector<double>{1, 3}));
  EXPECT_TRUE(r.TakeRttsMs().empty());
}

TEST(FleetRecorderTest, CountsStreamEndsAndErrors) {
  FleetRecorder r;
  r.StreamEnded(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "lost"),
                /*was_welcomed=*/true);
  r.StreamEnded(grpc::Status(grpc::StatusCode::CANCELLED, "bye"), true);
  r.StreamEnded(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"), false);
  r.StreamEnded(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"), true);
  EXPECT_EQ(r.counts().lost, 1);
  EXPECT_THAT(r.TopErrors(5),
              ::testing::ElementsAre("2 x stream: code 14: down",
                                     "1 x stream: code 9: lost"));
  r.ClearErrors();
  EXPECT_TRUE(r.TopErrors(5).empty());
}

}  // namespace
}  // namespace jobset::testing::fleet
