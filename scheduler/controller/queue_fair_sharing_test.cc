// Kueue's fair sharing as the controller runs it (--fair_sharing): the
// shares in ClusterQueue and Cohort status and in the gauges, and a
// borrower preempted for a queue with the lower share.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/queue_admission_test_fixture.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using queue_admission_test::H100Flavor;
using queue_admission_test::QueueAdmissionTest;
using queue_admission_test::Queued;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// ClusterQueue `name` in cohort org with 4 cpus, reclaiming by fair
// sharing, and its LocalQueue `name` in namespace default.
std::string Team(const std::string& name, const std::string& weight) {
  return absl::StrCat(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: )",
                      name, R"(
spec:
  cohort: org
  namespaceSelector: {}
  fairSharing:
    weight: ")",
                      weight, R"("
  preemption:
    reclaimWithinCohort: Any
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: )",
                      name, R"(
  namespace: default
spec:
  clusterQueue: )",
                      name, "\n");
}

class FairSharingTest : public QueueAdmissionTest {
 protected:
  void SetUp() override {
    features_.fair_sharing.enable = true;
    Restart();
    ApplyKueue(H100Flavor());
    ApplyKueue(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
        "metadata: {name: org}\n");
    for (const auto& [team, weight] :
         {std::pair<std::string, std::string>{"team-a", "1"},
          {"team-b", "2"}}) {
      for (absl::string_view doc : absl::StrSplit(Team(team, weight), "---")) {
        ApplyKueue(std::string(doc));
      }
    }
  }

  JobSet In(const std::string& queue, const std::string& name, int pods) {
    JobSet js = Queued(name, pods);
    (*js.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
        queue;
    return js;
  }

  int64_t ShareOf(const std::string& cq) {
    const api::KueueObject o = Stored("clusterqueues", "", cq);
    EXPECT_TRUE(o.cluster_queue().status().has_fair_sharing()) << cq;
    return o.cluster_queue().status().fair_sharing().weighted_share();
  }
};

TEST_F(FairSharingTest, SharesInStatusAndGauges) {
  Submit(In("team-a", "big", 3), "u-big");  // 6 cpus: 2 borrowed of 8
  Settle();
  ASSERT_THAT(RunningPodsOf("big"), SizeIs(3));
  EXPECT_EQ(ShareOf("team-a"), 250);  // 2000 / 8000 per 1000
  EXPECT_EQ(ShareOf("team-b"), 0);
  const api::KueueObject org = Stored("cohorts", "", "org");
  EXPECT_TRUE(org.cohort().status().has_fair_sharing());
  EXPECT_EQ(org.cohort().status().fair_sharing().weighted_share(), 0);
  ASSERT_TRUE(metrics_.Of("team-a").has_value());
  EXPECT_EQ(metrics_.Of("team-a")->weighted_share, 250);
  ASSERT_THAT(metrics_.cohorts, SizeIs(1));
  EXPECT_EQ(metrics_.cohorts[0].name, "org");
}

// team-a borrows all of team-b's quota; team-b, within its nominal quota,
// takes back what it needs (FairSharingPreemptWithinNominal).
TEST_F(FairSharingTest, AQueueWithinNominalReclaims) {
  Submit(In("team-a", "a1", 2), "u-a1");
  Submit(In("team-a", "a2", 2), "u-a2");
  Settle();
  ASSERT_THAT(RunningPodsOf("a1"), SizeIs(2));
  ASSERT_THAT(RunningPodsOf("a2"), SizeIs(2));
  EXPECT_EQ(ShareOf("team-a"), 500);

  Submit(In("team-b", "b1", 2), "u-b1");
  Settle();
  // One of team-a's (equal in candidate order but for their uids) goes.
  int preempted = 0;
  for (const char* name : {"a1", "a2"}) {
    for (const api::Condition& c : WorkloadOf(name).status().conditions()) {
      if (c.type() != "Preempted" || c.status() != "True") continue;
      ++preempted;
      EXPECT_EQ(c.reason(), "InCohortReclamation");
      EXPECT_THAT(c.message(), HasSubstr("reclamation within the cohort"));
    }
  }
  EXPECT_EQ(preempted, 1);
}

}  // namespace
}  // namespace jobset::scheduler
