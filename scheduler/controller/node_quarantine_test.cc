// The quarantine ledger's keeping (node_quarantine.h): its records in the
// store across a jobsetd restart, a pass that does not commit, and the
// taint the operator removes.
#include "scheduler/controller/node_quarantine.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

class TaintingFleet : public AgentFleet {
 public:
  void Run(Assignment) override {}
  void Stop(const std::string&, const std::string&) override {}
  void Release(const std::string&, const std::string&) override {}
  void Quarantine(const std::string& node, const std::string& why) override {
    tainted.push_back({node, why});
  }
  std::vector<std::pair<std::string, std::string>> tainted;
};

class NodeQuarantineTest : public ::testing::Test {
 protected:
  NodeQuarantineTest() { Restart(); }

  // A fresh keeping loaded from the store, as after a jobsetd restart.
  void Restart() {
    absl::StatusOr<NodeQuarantine> q =
        NodeQuarantine::Create({.threshold = 3}, {});
    ASSERT_THAT(q.status(), IsOk());
    q_.emplace(*std::move(q));
    ASSERT_THAT(q_->Load(store_), IsOk());
  }

  // A failure of JobSet `jobset`'s attempt 0 on `node`, as node_faults.cc
  // records it.
  void Fail(const std::string& node, const std::string& jobset,
            absl::Duration after) {
    QuarantineState& s = q_->pass_state();
    std::optional<resilience::QuarantineDecision> d =
        s.ledger.Record(node, {.time = kT0 + after,
                               .kind = resilience::FaultKind::kDeviceError,
                               .jobset_namespace = "default",
                               .jobset_name = jobset,
                               .jobset_uid = absl::StrCat("uid-", jobset),
                               .pod = absl::StrCat(jobset, "-w-0-0"),
                               .detail = "exit code 74"});
    if (d.has_value()) s.decided.push_back(*std::move(d));
  }

  // One pass's stage, commit (or a refused one) and aftermath.
  void Pass(absl::Duration after, bool durable = true) {
    PassWrites writes;
    q_->Stage(kT0 + after, writes);
    if (durable) {
      ASSERT_THAT(store_.Commit(writes.ToBatch(ControllerState())).status(),
                  IsOk());
    }
    q_->Committed(durable, fleet_);
  }

  int Count(const std::string& node) {
    return q_->pass_state().ledger.Count(node, kT0 + absl::Hours(1));
  }

  static NodeInfo Node(const std::string& name, bool tainted) {
    NodeInfo n;
    n.name = name;
    if (tainted) {
      n.taints.push_back(
          {"jobsetd.io/quarantined", "", placement::TaintEffect::kNoSchedule});
    }
    return n;
  }

  store::MemoryStore store_;
  TaintingFleet fleet_;
  std::optional<NodeQuarantine> q_;
};

TEST_F(NodeQuarantineTest, CountsSurviveARestart) {
  Fail("n1", "a", absl::Minutes(1));
  Fail("n1", "b", absl::Minutes(2));
  Pass(absl::Minutes(2));
  Restart();
  EXPECT_EQ(Count("n1"), 2);
  Fail("n1", "c", absl::Minutes(3));
  Pass(absl::Minutes(3));
  EXPECT_THAT(fleet_.tainted,
              ElementsAre(Pair("n1", ::testing::HasSubstr("3 failures in"))));
  Restart();
  EXPECT_TRUE(q_->pass_state().ledger.IsQuarantined("n1"));
}

TEST_F(NodeQuarantineTest, APassThatDidNotCommitLeavesItsWorkToTheNext) {
  Fail("n1", "a", absl::Minutes(1));
  Fail("n1", "b", absl::Minutes(2));
  Fail("n1", "c", absl::Minutes(3));
  Pass(absl::Minutes(3), /*durable=*/false);
  EXPECT_THAT(fleet_.tainted, IsEmpty()) << "only a durable pass taints";
  EXPECT_EQ(store_.Get(store::keys::QuarantineKey("n1"))->has_value(), false);
  Pass(absl::Minutes(4));
  EXPECT_THAT(fleet_.tainted, ElementsAre(Pair("n1", ::testing::_)));
  EXPECT_TRUE(store_.Get(store::keys::QuarantineKey("n1"))->has_value());
}

TEST_F(NodeQuarantineTest, RemovingTheTaintReleasesTheNode) {
  for (const char* js : {"a", "b", "c"}) Fail("n1", js, absl::Minutes(1));
  Pass(absl::Minutes(1));
  q_->ObserveNode(Node("n1", /*tainted=*/true));
  q_->ObserveNode(Node("n1", /*tainted=*/false));
  EXPECT_FALSE(q_->pass_state().ledger.IsQuarantined("n1"));
  EXPECT_EQ(Count("n1"), 0);
  Pass(absl::Minutes(2));
  EXPECT_FALSE(store_.Get(store::keys::QuarantineKey("n1"))->has_value());
  EXPECT_THAT(fleet_.tainted, ElementsAre(Pair("n1", ::testing::_)))
      << "released, not tainted again";
  // It starts from zero: two more failures do not quarantine it.
  Fail("n1", "d", absl::Minutes(3));
  Fail("n1", "e", absl::Minutes(4));
  EXPECT_FALSE(q_->pass_state().ledger.IsQuarantined("n1"));
}

TEST_F(NodeQuarantineTest, AQuarantineNeverTaintedIsTaintedAfterARestart) {
  for (const char* js : {"a", "b", "c"}) Fail("n1", js, absl::Minutes(1));
  Pass(absl::Minutes(1), /*durable=*/true);
  fleet_.tainted.clear();  // as if jobsetd stopped before the taint landed
  Restart();
  q_->ObserveNode(Node("n1", /*tainted=*/false));
  q_->ObserveNode(Node("n2", /*tainted=*/false));
  Pass(absl::Minutes(2));
  EXPECT_THAT(fleet_.tainted,
              ElementsAre(Pair("n1", ::testing::HasSubstr("before jobsetd"))));
  EXPECT_TRUE(q_->pass_state().ledger.IsQuarantined("n1"));
}

TEST_F(NodeQuarantineTest, ADecidedNodeIsTaintedForThePassesPlacement) {
  ControllerState state;
  state.SetNode(Node("n1", /*tainted=*/false));
  state.SetNode(Node("n2", /*tainted=*/false));
  Fail("n1", "a", absl::Minutes(1));
  EXPECT_FALSE(q_->TaintDecided(state)) << "nothing decided yet";
  Fail("n1", "b", absl::Minutes(1));
  Fail("n1", "c", absl::Minutes(1));
  EXPECT_TRUE(q_->TaintDecided(state));
  ASSERT_EQ(state.nodes().at("n1").taints.size(), 1u);
  EXPECT_EQ(state.nodes().at("n1").taints[0].key, "jobsetd.io/quarantined");
  EXPECT_TRUE(state.nodes().at("n2").taints.empty());
  EXPECT_FALSE(q_->TaintDecided(state)) << "already tainted";
}

TEST_F(NodeQuarantineTest, BadStoredRecordsAreLeftOut) {
  api::NodeFaultRecord elsewhere;
  elsewhere.set_node("n9");
  api::NodeFaultRecord bad_kind;
  bad_kind.set_node("n3");
  bad_kind.add_evidence()->set_kind("Gremlins");
  ASSERT_THAT(
      store_
          .Commit(store::Batch()
                      .Put(store::keys::QuarantineKey("n1"), "\xff garbage")
                      .Put(store::keys::QuarantineKey("n2"),
                           elsewhere.SerializeAsString())
                      .Put(store::keys::QuarantineKey("n3"),
                           bad_kind.SerializeAsString()))
          .status(),
      IsOk());
  Fail("n4", "a", absl::Minutes(1));
  Pass(absl::Minutes(1));
  Restart();
  EXPECT_EQ(q_->pass_state().ledger.node_count(), 1u);
  EXPECT_EQ(Count("n4"), 1);
}

TEST_F(NodeQuarantineTest, FailuresOutOfTheWindowAreDroppedFromTheStore) {
  Fail("n1", "a", absl::Minutes(1));
  Pass(absl::Minutes(1));
  Pass(absl::Hours(25));
  EXPECT_FALSE(store_.Get(store::keys::QuarantineKey("n1"))->has_value());
}

}  // namespace
}  // namespace jobset::scheduler
