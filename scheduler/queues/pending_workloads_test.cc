#include "scheduler/queues/pending_workloads.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "proto/kueue.pb.h"

namespace jobset::scheduler::queues {
namespace {

struct Spec {
  std::string ns;
  std::string name;
  std::string queue;
  int32_t priority = 0;
  int64_t created = 0;  // seconds
};

api::Workload Make(const Spec& s) {
  api::Workload wl;
  wl.mutable_metadata()->set_namespace_(s.ns);
  wl.mutable_metadata()->set_name(s.name);
  wl.mutable_metadata()->set_uid("uid-" + s.name);
  wl.mutable_metadata()->mutable_creation_timestamp()->set_seconds(s.created);
  wl.mutable_spec()->set_queue_name(s.queue);
  wl.mutable_spec()->set_priority(s.priority);
  return wl;
}

void SetCondition(api::Workload& wl, const std::string& type,
                  const std::string& status, const std::string& reason,
                  int64_t at) {
  api::Condition* c = wl.mutable_status()->add_conditions();
  c->set_type(type);
  c->set_status(status);
  c->set_reason(reason);
  c->mutable_last_transition_time()->set_seconds(at);
}

// Names and positions of the result, "name:cq-position:lq-position".
std::vector<std::string> Listed(const std::vector<PendingPosition>& got) {
  std::vector<std::string> out;
  for (const PendingPosition& p : got) {
    out.push_back(p.workload->metadata().name() + ":" +
                  std::to_string(p.position_in_cluster_queue) + ":" +
                  std::to_string(p.position_in_local_queue));
  }
  return out;
}

const absl::flat_hash_map<std::string, std::string> kQueues = {
    {"a/lq-a", "cq"}, {"a/lq-a2", "cq"}, {"b/lq-b", "cq"}, {"c/lq-c", "other"}};

TEST(PendingInClusterQueue, PriorityThenQueueOrderTimeThenUid) {
  std::vector<api::Workload> wls = {
      Make({"a", "old", "lq-a", 0, 10}),   Make({"b", "high", "lq-b", 100, 50}),
      Make({"a", "new", "lq-a2", 0, 20}),  Make({"b", "tie-z", "lq-b", 0, 30}),
      Make({"a", "tie-y", "lq-a", 0, 30}),
  };
  EXPECT_EQ(Listed(PendingInClusterQueue("cq", wls, kQueues)),
            (std::vector<std::string>{"high:0:0", "old:1:0", "new:2:0",
                                      "tie-y:3:1", "tie-z:4:1"}));
}

TEST(PendingInClusterQueue, OnlyThosePendingInThatClusterQueue) {
  std::vector<api::Workload> wls = {
      Make({"a", "waits", "lq-a", 0, 1}),
      Make({"c", "elsewhere", "lq-c", 0, 1}),
      Make({"a", "no-queue", "", 0, 1}),
      Make({"a", "missing-queue", "lq-x", 0, 1}),
      // lq-a exists in namespace a only.
      Make({"b", "wrong-namespace", "lq-a", 0, 1}),
      Make({"a", "admitted", "lq-a", 0, 1}),
      Make({"a", "finished", "lq-a", 0, 1}),
      Make({"a", "inactive", "lq-a", 0, 1}),
      Make({"a", "parked", "lq-a", 0, 2}),
  };
  wls[5].mutable_status()->mutable_admission()->set_cluster_queue("cq");
  SetCondition(wls[6], "Finished", "True", "Succeeded", 5);
  wls[7].mutable_spec()->set_active(false);
  SetCondition(wls[8], "QuotaReserved", "False", "Pending", 3);
  EXPECT_EQ(Listed(PendingInClusterQueue("cq", wls, kQueues)),
            (std::vector<std::string>{"waits:0:0", "parked:1:1"}));
  EXPECT_EQ(Listed(PendingInClusterQueue("other", wls, kQueues)),
            (std::vector<std::string>{"elsewhere:0:0"}));
  EXPECT_TRUE(PendingInClusterQueue("none", wls, kQueues).empty());
}

TEST(PendingInClusterQueue, EvictedByPodsReadyTimeoutQueuesByEvictionTime) {
  std::vector<api::Workload> wls = {
      Make({"a", "timed-out", "lq-a", 0, 1}),
      Make({"a", "preempted", "lq-a", 0, 2}),
      Make({"a", "later", "lq-a", 0, 50}),
  };
  SetCondition(wls[0], "Evicted", "True", "PodsReadyTimeout", 100);
  // A preempted workload keeps its creation time.
  SetCondition(wls[1], "Evicted", "True", "Preempted", 200);
  EXPECT_EQ(Listed(PendingInClusterQueue("cq", wls, kQueues)),
            (std::vector<std::string>{"preempted:0:0", "later:1:1",
                                      "timed-out:2:2"}));
}

}  // namespace
}  // namespace jobset::scheduler::queues
