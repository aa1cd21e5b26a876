// Kueue's waitForPodsReady through the controller (kueue-semantics.md
// §3.6): PodsReady as Kueue writes it, the eviction of a JobSet whose pods
// are not all ready within the timeout, the requeue after the backoff, and
// the deactivation past backoffLimitCount.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/queue_admission_test_fixture.h"

namespace jobset::scheduler {
namespace {

using queue_admission_test::QueueAdmissionTest;
using queue_admission_test::Queued;
using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class PodsReadyTest : public QueueAdmissionTest {
 protected:
  // "<status> <reason>" of the Workload's condition `type`, or "none".
  std::string Cond(const std::string& jobset, absl::string_view type) {
    const api::Condition* c = Condition(jobset, type);
    return c == nullptr ? "none" : absl::StrCat(c->status(), " ", c->reason());
  }
};

TEST_F(PodsReadyTest, ReadyPodsMarkTheWorkloadStarted) {
  SetUpQueues();
  Submit(Queued("train", 2), "uid-train");
  Settle();
  EXPECT_EQ(Cond("train", "PodsReady"), "False WaitForStart");
  EXPECT_EQ(Condition("train", "PodsReady")->message(),
            "Not all pods are ready or succeeded");
  ReportAll("train", "Running");
  Settle();
  EXPECT_EQ(Cond("train", "PodsReady"), "True Started");
  EXPECT_EQ(Condition("train", "PodsReady")->message(),
            "All pods reached readiness and the workload is running");
  // Nothing waits on a timer once every pod is ready.
  EXPECT_EQ(core_->NextWake(), std::nullopt);
}

TEST_F(PodsReadyTest, NotReadyInTimeIsEvictedAndRequeuedAfterTheBackoff) {
  SetUpQueues();
  const absl::Time admitted = clock_.Now();
  Submit(Queued("slow", 2), "uid-slow");
  Settle();
  ASSERT_THAT(RunningPodsOf("slow"), SizeIs(2));
  EXPECT_EQ(core_->NextWake(), admitted + absl::Minutes(30));

  clock_.Advance(absl::Minutes(30));
  Settle();
  const api::Workload& wl = WorkloadOf("slow");
  EXPECT_EQ(Cond("slow", "Evicted"), "True PodsReadyTimeout");
  EXPECT_EQ(Condition("slow", "Evicted")->message(),
            absl::StrCat("Exceeded the PodsReady timeout default/",
                         wl.metadata().name()));
  EXPECT_EQ(wl.status().requeue_state().count(), 1);
  EXPECT_EQ(wl.status().requeue_state().requeue_at().seconds(),
            absl::ToUnixSeconds(clock_.Now() + absl::Seconds(60)));
  EXPECT_TRUE(Suspended("slow"));
  EXPECT_THAT(fleet_.stopped, SizeIs(2));
  EXPECT_THAT(metrics_.events,
              Contains("evicted cq PodsReadyTimeout WaitForStart"));

  // Its pods gone, the quota is released but it backs off for 60 s.
  ConfirmStops();
  Settle();
  EXPECT_FALSE(WorkloadOf("slow").status().has_admission());
  EXPECT_EQ(Cond("slow", "Requeued"), "False PodsReadyTimeout");
  EXPECT_TRUE(Suspended("slow"));
  EXPECT_EQ(core_->NextWake(), clock_.Now() + absl::Seconds(60));

  // Then admitted again at once (Requeued, True BackoffFinished for a
  // moment, is Kueue's "QuotaReserved" history in the same commit).
  clock_.Advance(absl::Seconds(60));
  Settle();
  EXPECT_EQ(Cond("slow", "QuotaReserved"), "True QuotaReserved");
  EXPECT_EQ(Cond("slow", "Requeued"), "False QuotaReserved");
  EXPECT_FALSE(Suspended("slow"));
  EXPECT_THAT(RunningPodsOf("slow"), SizeIs(2));
  // A second timeout backs off twice as long.
  clock_.Advance(absl::Minutes(30));
  Settle();
  EXPECT_EQ(WorkloadOf("slow").status().requeue_state().count(), 2);
  EXPECT_EQ(WorkloadOf("slow").status().requeue_state().requeue_at().seconds(),
            absl::ToUnixSeconds(clock_.Now() + absl::Seconds(120)));
}

TEST_F(PodsReadyTest, APodFailingAfterReadinessHasTheRecoveryTimeout) {
  features_.wait_for_pods_ready.recovery_timeout = absl::Minutes(3);
  Restart();
  SetUpQueues();
  Submit(Queued("train", 2), "uid-train");
  Settle();
  ReportAll("train", "Running");
  Settle();
  ASSERT_EQ(Cond("train", "PodsReady"), "True Started");
  // Its pods fail; the JobSet restarts them (its failure policy), and the
  // new ones are not ready yet.
  clock_.Advance(absl::Minutes(40));
  ReportAll("train", "Failed");
  Settle();
  ASSERT_THAT(RunningPodsOf("train"), SizeIs(2));
  EXPECT_EQ(Cond("train", "PodsReady"), "False WaitForRecovery");
  EXPECT_EQ(core_->NextWake(), clock_.Now() + absl::Minutes(3));
  clock_.Advance(absl::Minutes(3));
  Settle();
  EXPECT_EQ(Cond("train", "Evicted"), "True PodsReadyTimeout");
  EXPECT_THAT(metrics_.events,
              Contains("evicted cq PodsReadyTimeout WaitForRecovery"));
}

TEST_F(PodsReadyTest, PastTheBackoffLimitItIsDeactivated) {
  features_.wait_for_pods_ready.backoff_limit_count = 0;
  Restart();
  SetUpQueues();
  Submit(Queued("slow", 2), "uid-slow");
  Settle();
  clock_.Advance(absl::Minutes(30));
  Settle();
  EXPECT_EQ(Cond("slow", "Evicted"),
            "True DeactivatedDueToRequeuingLimitExceeded");
  EXPECT_FALSE(WorkloadOf("slow").spec().active());
  ConfirmStops();
  Settle();
  EXPECT_FALSE(WorkloadOf("slow").status().has_admission());
  EXPECT_EQ(Cond("slow", "Requeued"),
            "False DeactivatedDueToRequeuingLimitExceeded");
  clock_.Advance(absl::Hours(2));
  Settle();
  EXPECT_TRUE(Suspended("slow"));
  EXPECT_FALSE(WorkloadOf("slow").status().has_admission());
}

TEST_F(PodsReadyTest, OffItNeitherWritesNorEvicts) {
  features_.wait_for_pods_ready.enable = false;
  Restart();
  SetUpQueues();
  Submit(Queued("slow", 2), "uid-slow");
  Settle();
  clock_.Advance(absl::Hours(5));
  Settle();
  EXPECT_EQ(Cond("slow", "PodsReady"), "none");
  EXPECT_EQ(Cond("slow", "Evicted"), "none");
  EXPECT_THAT(fleet_.stopped, IsEmpty());
}

}  // namespace
}  // namespace jobset::scheduler
