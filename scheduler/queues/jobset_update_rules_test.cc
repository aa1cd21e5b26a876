#include "scheduler/queues/jobset_update_rules.h"

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/jobset.pb.h"
#include "scheduler/queues/jobset_workload.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::api::testing::JobSetBuilder;

using Labels = std::map<std::string, std::string>;

constexpr char kQueue[] = "kueue.x-k8s.io/queue-name";
constexpr char kClass[] = "kueue.x-k8s.io/priority-class";
constexpr char kMaxExec[] = "kueue.x-k8s.io/max-exec-time-seconds";

api::JobSet Make(const Labels& labels, std::optional<bool> suspend,
                 int rjobs = 1) {
  JobSetBuilder b("train");
  for (const auto& [key, value] : labels) b.Label(key, value);
  if (suspend.has_value()) b.Suspend(*suspend);
  for (int i = 0; i < rjobs; ++i) b.Replicated("r" + std::to_string(i), 1);
  return b.Build();
}

// "" for OK, else the whole message.
std::string Result(const absl::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

// ---------------------------------------------------------------------------
// Create

struct CreateCase {
  std::string name;
  Labels labels;
  int rjobs;
  bool manage_without_queue_name;
  std::string want;
};

class CreateTest : public ::testing::TestWithParam<CreateCase> {};

TEST_P(CreateTest, KueueLabelsAndPodSetLimit) {
  const CreateCase& c = GetParam();
  EXPECT_EQ(
      Result(ValidateKueueJobSetCreate(
          Make(c.labels, true, c.rjobs),
          {.manage_jobs_without_queue_name = c.manage_without_queue_name})),
      c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CreateTest,
    ::testing::Values(
        CreateCase{"Unlabelled", {}, 1, false, ""},
        CreateCase{"QueueName", {{kQueue, "research-queue"}}, 1, false, ""},
        CreateCase{
            "QueueNameSubdomain", {{kQueue, "team.queue"}}, 1, false, ""},
        CreateCase{"QueueNameNotASubdomain",
                   {{kQueue, "Research"}},
                   1,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/queue-name]: Invalid value: \"Research\": a lowercase "
                   "RFC 1123 subdomain must consist of lower case "
                   "alphanumeric characters, '-' or '.', and must start and "
                   "end with an alphanumeric character (e.g. 'example.com', "
                   "regex used for validation is "
                   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-"
                   "9])?)*')"},
        CreateCase{"MaxExecTime", {{kMaxExec, "3600"}}, 1, false, ""},
        CreateCase{"MaxExecTimeNotANumber",
                   {{kMaxExec, "1h"}},
                   1,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: \"1h\": "
                   "strconv.Atoi: parsing \"1h\": invalid syntax"},
        CreateCase{"MaxExecTimeOutOfRange",
                   {{kMaxExec, "99999999999999999999"}},
                   1,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: "
                   "\"99999999999999999999\": strconv.Atoi: parsing "
                   "\"99999999999999999999\": value out of range"},
        CreateCase{"MaxExecTimeZero",
                   {{kMaxExec, "-0"}},
                   1,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: 0: should be "
                   "greater than 0"},
        // §6 scenario 38.
        CreateCase{"NineteenReplicatedJobsQueued",
                   {{kQueue, "q"}},
                   19,
                   false,
                   "JobSet \"train\" is invalid: spec.replicatedJobs: Too "
                   "many: 19: must have at most 18 items when queued by "
                   "Kueue (one Workload podSet each)"},
        CreateCase{
            "EighteenReplicatedJobsQueued", {{kQueue, "q"}}, 18, false, ""},
        CreateCase{"NineteenReplicatedJobsUnmanaged", {}, 19, false, ""},
        CreateCase{"NineteenManagedWithoutQueueName",
                   {},
                   19,
                   true,
                   "JobSet \"train\" is invalid: spec.replicatedJobs: Too "
                   "many: 19: must have at most 18 items when queued by "
                   "Kueue (one Workload podSet each)"},
        CreateCase{"AllProblemsTogether",
                   {{kQueue, ""}, {kMaxExec, "0"}},
                   1,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/queue-name]: Invalid value: \"\": a lowercase RFC 1123 "
                   "subdomain must consist of lower case alphanumeric "
                   "characters, '-' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'example.com', regex used "
                   "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-"
                   "9]([-a-z0-9]*[a-z0-9])?)*'); metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: 0: should be "
                   "greater than 0"}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Update

struct UpdateCase {
  std::string name;
  Labels old_labels;
  std::optional<bool> old_suspend;
  Labels new_labels;
  std::optional<bool> new_suspend;
  bool default_queue;
  std::string want;
};

class UpdateTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(UpdateTest, KueueRules) {
  const UpdateCase& c = GetParam();
  EXPECT_EQ(
      Result(ValidateKueueJobSetUpdate(
          Make(c.old_labels, c.old_suspend), Make(c.new_labels, c.new_suspend),
          {.default_local_queue_exists = c.default_queue})),
      c.want);
}

constexpr char kQueueImmutable[] =
    "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s.io/queue-name]: "
    "Invalid value: \"b\": field is immutable";

INSTANTIATE_TEST_SUITE_P(
    Table, UpdateTest,
    ::testing::Values(
        UpdateCase{"NothingChanges",
                   {{kQueue, "a"}},
                   false,
                   {{kQueue, "a"}},
                   false,
                   false,
                   ""},
        // §6 scenario 32: suspended and unadmitted, the label moves the
        // Workload; running, it is immutable.
        UpdateCase{"QueueChangeWhileSuspended",
                   {{kQueue, "a"}},
                   true,
                   {{kQueue, "b"}},
                   true,
                   false,
                   ""},
        UpdateCase{"QueueChangeWhileRunning",
                   {{kQueue, "a"}},
                   false,
                   {{kQueue, "b"}},
                   false,
                   false,
                   kQueueImmutable},
        UpdateCase{"QueueChangeWhileUnsuspending",
                   {{kQueue, "a"}},
                   true,
                   {{kQueue, "b"}},
                   false,
                   false,
                   kQueueImmutable},
        UpdateCase{"QueueChangeWhileSuspending",
                   {{kQueue, "a"}},
                   false,
                   {{kQueue, "b"}},
                   true,
                   false,
                   ""},
        UpdateCase{"SuspendUnsetIsRunning",
                   {{kQueue, "a"}},
                   std::nullopt,
                   {{kQueue, "b"}},
                   std::nullopt,
                   false,
                   kQueueImmutable},
        // §6 scenario 30: the label may be added while suspended.
        UpdateCase{"QueueAddedWhileSuspended",
                   {},
                   true,
                   {{kQueue, "b"}},
                   true,
                   false,
                   ""},
        UpdateCase{"QueueAddedWhileRunning",
                   {},
                   false,
                   {{kQueue, "b"}},
                   false,
                   false,
                   kQueueImmutable},
        UpdateCase{"QueueRemovedWhileSuspended",
                   {{kQueue, "a"}},
                   true,
                   {},
                   true,
                   false,
                   ""},
        // §6 scenario 31.
        UpdateCase{"QueueRemovedWithDefaultQueue",
                   {{kQueue, "default"}},
                   true,
                   {},
                   true,
                   true,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/queue-name]: Invalid value: \"\": queue-name must not "
                   "be empty in namespace with default queue"},
        UpdateCase{"QueueRemovedWhileRunningWithDefaultQueue",
                   {{kQueue, "default"}},
                   false,
                   {},
                   false,
                   true,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/queue-name]: Invalid value: \"\": field is immutable; "
                   "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid "
                   "value: \"\": queue-name must not be empty in namespace "
                   "with default queue"},
        UpdateCase{"MaxExecChangeWhileSuspended",
                   {{kMaxExec, "60"}},
                   true,
                   {{kMaxExec, "120"}},
                   true,
                   false,
                   ""},
        UpdateCase{"MaxExecChangeWhileSuspending",
                   {{kMaxExec, "60"}},
                   false,
                   {{kMaxExec, "120"}},
                   true,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: \"120\": field "
                   "is immutable"},
        UpdateCase{"MaxExecRemovedWhileRunning",
                   {{kMaxExec, "60"}},
                   false,
                   {},
                   false,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/max-exec-time-seconds]: Invalid value: \"\": field is "
                   "immutable"},
        UpdateCase{"ClassAddedWhileSuspended",
                   {},
                   true,
                   {{kClass, "gold"}},
                   true,
                   false,
                   ""},
        UpdateCase{"ClassAddedWhileRunning",
                   {},
                   false,
                   {{kClass, "gold"}},
                   false,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/priority-class]: Invalid value: \"gold\": "
                   "WorkloadPriorityClass cannot be added to a non-suspended "
                   "workload"},
        UpdateCase{"ClassChangedWhileRunning",
                   {{kClass, "low"}},
                   false,
                   {{kClass, "gold"}},
                   false,
                   false,
                   ""},
        UpdateCase{"ClassRemovedWhileSuspended",
                   {{kClass, "low"}},
                   true,
                   {},
                   true,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/priority-class]: Invalid value: \"\": "
                   "WorkloadPriorityClass cannot be removed from a workload"},
        // The create rules run on the new JobSet too.
        UpdateCase{"NewQueueNameInvalid",
                   {},
                   true,
                   {{kQueue, "Q"}},
                   true,
                   false,
                   "JobSet \"train\" is invalid: metadata.labels[kueue.x-k8s."
                   "io/queue-name]: Invalid value: \"Q\": a lowercase RFC "
                   "1123 subdomain must consist of lower case alphanumeric "
                   "characters, '-' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'example.com', regex used "
                   "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-"
                   "9]([-a-z0-9]*[a-z0-9])?)*')"}),
    [](const auto& info) { return info.param.name; });

TEST(UpdateTest, LabellingNineteenReplicatedJobsIsRefused) {
  const absl::Status s = ValidateKueueJobSetUpdate(
      Make({}, true, 19), Make({{kQueue, "q"}}, true, 19), {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("Too many: 19"));
}

}  // namespace
}  // namespace jobset::scheduler::queues
