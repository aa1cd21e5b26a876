#include "scheduler/resilience/quarantine_ledger.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// A failure of attempt `attempt` of JobSet default/`jobset`, `after` kT0.
Evidence Fault(std::string jobset, int32_t attempt, absl::Duration after,
               FaultKind kind = FaultKind::kDeviceError) {
  return Evidence{.time = kT0 + after,
                  .kind = kind,
                  .jobset_namespace = "default",
                  .jobset_name = jobset,
                  .jobset_uid = absl::StrCat("uid-", jobset),
                  .attempt = attempt,
                  .pod = absl::StrCat(jobset, "-w-0-0"),
                  .detail = "container \"main\": exit code 74"};
}

QuarantineLedger Ledger(QuarantineConfig config = {}) {
  absl::StatusOr<QuarantineLedger> ledger = QuarantineLedger::Create(config);
  EXPECT_TRUE(ledger.ok()) << ledger.status();
  return *std::move(ledger);
}

TEST(QuarantineLedgerTest, ThirdDistinctAttemptQuarantines) {
  QuarantineLedger ledger = Ledger();
  EXPECT_EQ(ledger.Record("n1", Fault("a", 0, absl::Hours(1))), std::nullopt);
  EXPECT_EQ(
      ledger.Record("n1", Fault("b", 0, absl::Hours(2), FaultKind::kNodeLost)),
      std::nullopt);
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(2)), 2);
  EXPECT_FALSE(ledger.IsQuarantined("n1"));

  std::optional<QuarantineDecision> d =
      ledger.Record("n1", Fault("a", 1, absl::Hours(3)));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->node, "n1");
  EXPECT_THAT(d->evidence, ElementsAre(Field(&Evidence::jobset_name, "a"),
                                       Field(&Evidence::jobset_name, "b"),
                                       Field(&Evidence::attempt, 1)));
  EXPECT_EQ(d->message,
            "3 failures in 24h (quarantine after 3): 2023-11-14T23:13:20Z "
            "DeviceError default/a attempt 0 pod a-w-0-0 (container \"main\": "
            "exit code 74); 2023-11-15T00:13:20Z NodeLost default/b attempt 0 "
            "pod b-w-0-0 (container \"main\": exit code 74); "
            "2023-11-15T01:13:20Z DeviceError default/a attempt 1 pod a-w-0-0 "
            "(container \"main\": exit code 74)");
  EXPECT_TRUE(ledger.IsQuarantined("n1"));
  // Decided once: a fourth failure adds evidence, no second decision.
  EXPECT_EQ(ledger.Record("n1", Fault("c", 0, absl::Hours(4))), std::nullopt);
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(4)), 4);
  EXPECT_FALSE(ledger.IsQuarantined("n2"));
}

TEST(QuarantineLedgerTest, SameAttemptCountsOncePerNode) {
  QuarantineLedger ledger = Ledger();
  for (int i = 0; i < 8; ++i) {
    // One gang losing 8 pods on the node, or a straggler flagged each pass.
    EXPECT_EQ(ledger.Record("n1", Fault("a", 0, absl::Minutes(i))),
              std::nullopt);
  }
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(1)), 1);
  // The same attempt on another node counts there.
  ledger.Record("n2", Fault("a", 0, absl::Minutes(1)));
  EXPECT_EQ(ledger.Count("n2", kT0 + absl::Hours(1)), 1);
  // A JobSet recreated under the same name (another uid) counts again.
  Evidence recreated = Fault("a", 0, absl::Minutes(9));
  recreated.jobset_uid = "uid-a-2";
  ledger.Record("n1", recreated);
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(1)), 2);
}

struct WindowCase {
  std::string name;
  absl::Duration third_at;  // after kT0; the first is at kT0
  bool quarantined;
};

class QuarantineWindowTest : public ::testing::TestWithParam<WindowCase> {};

TEST_P(QuarantineWindowTest, ExactlyWindowOldNoLongerCounts) {
  QuarantineLedger ledger = Ledger();
  ledger.Record("n1", Fault("a", 0, absl::ZeroDuration()));
  ledger.Record("n1", Fault("b", 0, absl::Hours(1)));
  EXPECT_EQ(ledger.Record("n1", Fault("c", 0, GetParam().third_at)).has_value(),
            GetParam().quarantined);
}

INSTANTIATE_TEST_SUITE_P(
    Boundary, QuarantineWindowTest,
    ::testing::Values(WindowCase{"Inside", absl::Hours(2), true},
                      WindowCase{"OneNanosecondShort",
                                 absl::Hours(24) - absl::Nanoseconds(1), true},
                      WindowCase{"Exactly", absl::Hours(24), false}),
    [](const ::testing::TestParamInfo<WindowCase>& info) {
      return info.param.name;
    });

TEST(QuarantineLedgerTest, ClockGoingBackCountsAtItsOwnTimeFromTheLatest) {
  QuarantineLedger ledger = Ledger();
  ledger.Record("n1", Fault("a", 0, absl::Hours(30)));
  // Stamped before the latest time but inside the window: counts.
  ledger.Record("n1", Fault("b", 0, absl::Hours(10)));
  EXPECT_EQ(ledger.Count("n1", kT0), 2);  // `now` before the latest: latest
  // Stamped a window before the latest: ignored.
  EXPECT_EQ(ledger.Record("n1", Fault("c", 0, absl::Hours(6))), std::nullopt);
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(30)), 2);
  // Kept oldest first, whatever the order of arrival.
  api::QuarantineLedgerState state = ledger.ToProto();
  ASSERT_EQ(state.nodes(0).evidence_size(), 2);
  EXPECT_EQ(state.nodes(0).evidence(0).jobset_name(), "b");
}

TEST(QuarantineLedgerTest, InfiniteTimesIgnored) {
  QuarantineLedger ledger = Ledger({.threshold = 1});
  Evidence e = Fault("a", 0, absl::ZeroDuration());
  e.time = absl::InfiniteFuture();
  EXPECT_EQ(ledger.Record("n1", e), std::nullopt);
  e.time = absl::InfinitePast();
  EXPECT_EQ(ledger.Record("n1", e), std::nullopt);
  EXPECT_EQ(ledger.node_count(), 0u);
}

TEST(QuarantineLedgerTest, EvidencePerNodeIsCapped) {
  QuarantineLedger ledger =
      Ledger({.threshold = 3, .max_evidence_per_node = 4});
  for (int i = 0; i < 100; ++i) {
    ledger.Record("n1", Fault("a", i, absl::Minutes(i)));
  }
  EXPECT_EQ(ledger.Count("n1", kT0 + absl::Hours(2)), 4);
  api::QuarantineLedgerState state = ledger.ToProto();
  ASSERT_EQ(state.nodes(0).evidence_size(), 4);
  EXPECT_EQ(state.nodes(0).evidence(0).attempt(), 96);  // the newest kept
}

TEST(QuarantineLedgerTest, NodesAreCappedOldestNonQuarantinedFirst) {
  QuarantineLedger ledger = Ledger({.threshold = 2, .max_nodes = 2});
  ledger.Record("quarantined", Fault("a", 0, absl::Hours(1)));
  ASSERT_TRUE(ledger.Record("quarantined", Fault("b", 0, absl::Hours(1))));
  ledger.Record("older", Fault("c", 0, absl::Hours(2)));
  ASSERT_EQ(ledger.node_count(), 2u);
  // A third node: "older" goes; the quarantined one stays though older.
  ledger.Record("third", Fault("d", 0, absl::Hours(4)));
  EXPECT_EQ(ledger.node_count(), 2u);
  EXPECT_TRUE(ledger.IsQuarantined("quarantined"));
  EXPECT_EQ(ledger.Count("older", kT0 + absl::Hours(4)), 0);
  EXPECT_EQ(ledger.Count("third", kT0 + absl::Hours(4)), 1);
  // All quarantined but one: the oldest unquarantined still goes first.
  ledger.Record("fourth", Fault("e", 0, absl::Hours(5)));
  EXPECT_TRUE(ledger.IsQuarantined("quarantined"));
  EXPECT_EQ(ledger.Count("third", kT0 + absl::Hours(5)), 0);
}

TEST(QuarantineLedgerTest, ExpiredNodesMakeRoomBeforeEviction) {
  QuarantineLedger ledger = Ledger({.max_nodes = 1});
  ledger.Record("old", Fault("a", 0, absl::ZeroDuration()));
  ledger.Record("new", Fault("b", 0, absl::Hours(25)));
  EXPECT_EQ(ledger.node_count(), 1u);
  EXPECT_EQ(ledger.Count("new", kT0 + absl::Hours(25)), 1);
}

TEST(QuarantineLedgerTest, ReleaseStartsFromZero) {
  QuarantineLedger ledger = Ledger({.threshold = 1});
  ASSERT_TRUE(ledger.Record("n1", Fault("a", 0, absl::ZeroDuration())));
  ledger.Release("n1");
  EXPECT_FALSE(ledger.IsQuarantined("n1"));
  EXPECT_EQ(ledger.Count("n1", kT0), 0);
  EXPECT_TRUE(ledger.Record("n1", Fault("b", 0, absl::Minutes(1))));
}

TEST(QuarantineLedgerTest, PruneKeepsQuarantinedNodes) {
  QuarantineLedger ledger = Ledger({.threshold = 2});
  ledger.Record("q", Fault("a", 0, absl::ZeroDuration()));
  ledger.Record("q", Fault("b", 0, absl::Minutes(1)));
  ledger.Record("n", Fault("c", 0, absl::Minutes(2)));
  ledger.Prune(kT0 + absl::Hours(48));
  EXPECT_EQ(ledger.node_count(), 1u);
  EXPECT_TRUE(ledger.IsQuarantined("q"));
  EXPECT_EQ(ledger.Count("q", kT0 + absl::Hours(48)), 0);
}

TEST(QuarantineLedgerTest, TakeChangedNamesWhatToWriteBack) {
  using ::testing::IsEmpty;
  using ::testing::UnorderedElementsAre;
  QuarantineLedger ledger = Ledger({.threshold = 2, .max_nodes = 2});
  ledger.Record("a", Fault("x", 0, absl::ZeroDuration()));
  ledger.Record("b", Fault("y", 0, absl::Minutes(1)));
  EXPECT_THAT(ledger.TakeChanged(), UnorderedElementsAre("a", "b"));
  EXPECT_THAT(ledger.TakeChanged(), IsEmpty());
  // The same attempt again adds nothing: nothing to write.
  ledger.Record("a", Fault("x", 0, absl::Minutes(2)));
  EXPECT_THAT(ledger.TakeChanged(), IsEmpty());
  // A third node evicts "a" (the oldest): both are written (one deleted).
  ledger.Record("c", Fault("z", 0, absl::Minutes(3)));
  EXPECT_THAT(ledger.TakeChanged(), UnorderedElementsAre("a", "c"));
  EXPECT_EQ(ledger.NodeRecord("a"), std::nullopt);
  std::optional<api::NodeFaultRecord> c = ledger.NodeRecord("c");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->node(), "c");
  EXPECT_EQ(c->evidence_size(), 1);
  EXPECT_FALSE(c->quarantined());
  // Released and pruned nodes change too; a failed write is put back.
  ledger.Release("b");
  EXPECT_THAT(ledger.TakeChanged(), UnorderedElementsAre("b"));
  ledger.Prune(kT0 + absl::Hours(48));
  std::set<std::string> pruned = ledger.TakeChanged();
  EXPECT_THAT(pruned, UnorderedElementsAre("c"));
  ledger.MarkChanged(pruned);
  EXPECT_THAT(ledger.TakeChanged(), UnorderedElementsAre("c"));
}

TEST(QuarantineLedgerTest, HugeAttemptIndexesAndManyNodes) {
  QuarantineLedger ledger = Ledger({.max_nodes = 10000});
  for (int i = 0; i < 20000; ++i) {
    ledger.Record(
        absl::StrCat("n", i),
        Fault("a", std::numeric_limits<int32_t>::max(), absl::Seconds(i)));
  }
  EXPECT_EQ(ledger.node_count(), 10000u);
  EXPECT_EQ(ledger.Count("n19999", kT0 + absl::Hours(6)), 1);
  EXPECT_EQ(ledger.Count("n0", kT0 + absl::Hours(6)), 0);  // evicted
}

TEST(QuarantineLedgerTest, RoundTripsThroughItsProto) {
  QuarantineLedger ledger = Ledger();
  ledger.Record("n1", Fault("a", 0, absl::Hours(1)));
  ledger.Record("n1", Fault("b", 2, absl::Hours(2), FaultKind::kStraggler));
  ledger.Record("n1", Fault("c", 0, absl::Hours(3), FaultKind::kLoneFailure));
  ledger.Record("n2", Fault("a", 0, absl::Hours(1) + absl::Nanoseconds(5)));
  const api::QuarantineLedgerState state = ledger.ToProto();
  ASSERT_EQ(state.nodes_size(), 2);
  EXPECT_TRUE(state.nodes(0).quarantined());
  EXPECT_EQ(state.nodes(0).evidence(1).kind(), "Straggler");

  absl::StatusOr<QuarantineLedger> back =
      QuarantineLedger::FromProto({}, state);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToProto().SerializeAsString(), state.SerializeAsString());
  EXPECT_TRUE(back->IsQuarantined("n1"));
  EXPECT_EQ(back->Count("n2", kT0), 1);
  // Dedup survives the round trip.
  EXPECT_EQ(back->Record("n2", Fault("a", 0, absl::Hours(4))), std::nullopt);
  EXPECT_EQ(back->Count("n2", kT0), 1);
}

TEST(QuarantineLedgerTest, FromProtoTrimsToTheBounds) {
  QuarantineLedger big = Ledger();
  for (int i = 0; i < 10; ++i) {
    big.Record("n1", Fault("a", i, absl::Minutes(i)));
    big.Record(absl::StrCat("m", i), Fault("a", i, absl::Minutes(i)));
  }
  absl::StatusOr<QuarantineLedger> small = QuarantineLedger::FromProto(
      {.threshold = 2, .max_evidence_per_node = 2, .max_nodes = 3},
      big.ToProto());
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->node_count(), 3u);
  EXPECT_EQ(small->Count("n1", kT0), 2);
}

TEST(QuarantineLedgerTest, FromProtoNamesWhatIsWrong) {
  QuarantineLedger ledger = Ledger();
  ledger.Record("n1", Fault("a", 0, absl::Hours(1)));
  const api::QuarantineLedgerState good = ledger.ToProto();

  api::QuarantineLedgerState s = good;
  s.mutable_nodes(0)->mutable_evidence(0)->set_kind("Cosmic");
  EXPECT_EQ(QuarantineLedger::FromProto({}, s).status(),
            absl::InvalidArgumentError(
                "nodes[0].evidence[0].kind: unknown kind \"Cosmic\""));
  s = good;
  s.mutable_nodes(0)->mutable_evidence(0)->clear_time();
  EXPECT_EQ(QuarantineLedger::FromProto({}, s).status(),
            absl::InvalidArgumentError(
                "nodes[0].evidence[0].time: missing or out of range"));
  s = good;
  *s.add_nodes() = s.nodes(0);
  EXPECT_EQ(QuarantineLedger::FromProto({}, s).status(),
            absl::InvalidArgumentError("nodes[1].node: \"n1\" listed twice"));
  s = good;
  s.mutable_nodes(0)->clear_node();
  EXPECT_EQ(QuarantineLedger::FromProto({}, s).status(),
            absl::InvalidArgumentError("nodes[0].node: empty"));
  s = good;
  s.mutable_latest()->set_nanos(-3);
  EXPECT_EQ(QuarantineLedger::FromProto({}, s).status(),
            absl::InvalidArgumentError("latest: out of range"));
  EXPECT_TRUE(QuarantineLedger::FromProto({}, {}).ok());
}

struct ConfigCase {
  std::string name;
  QuarantineConfig config;
  std::string error;  // empty: valid
};

class QuarantineConfigTest : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(QuarantineConfigTest, Table) {
  absl::Status s = ValidateQuarantineConfig(GetParam().config);
  if (GetParam().error.empty()) {
    EXPECT_TRUE(s.ok()) << s;
  } else {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(GetParam().error));
    EXPECT_FALSE(QuarantineLedger::Create(GetParam().config).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, QuarantineConfigTest,
    ::testing::Values(
        ConfigCase{"Default", {}, ""},
        ConfigCase{"ThresholdOne", {.threshold = 1}, ""},
        ConfigCase{"ThresholdAtCap",
                   {.threshold = 16, .max_evidence_per_node = 16},
                   ""},
        ConfigCase{"ThresholdZero",
                   {.threshold = 0},
                   "quarantine_after must be from 1 to 16, not 0"},
        ConfigCase{"ThresholdAboveCap",
                   {.threshold = 17},
                   "quarantine_after must be from 1 to 16, not 17"},
        ConfigCase{"WindowZero",
                   {.window = absl::ZeroDuration()},
                   "quarantine_window must be positive and finite, not 0"},
        ConfigCase{"WindowInfinite",
                   {.window = absl::InfiniteDuration()},
                   "quarantine_window must be positive and finite, not inf"},
        ConfigCase{"NoEvidence",
                   {.max_evidence_per_node = 0},
                   "evidence per node must be at least 1"},
        ConfigCase{
            "NoNodes", {.max_nodes = 0}, "nodes tracked must be at least 1"}),
    [](const ::testing::TestParamInfo<ConfigCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::scheduler::resilience
