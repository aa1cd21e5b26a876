#include "scheduler/resilience/node_fault.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {
namespace {

// Operator's list: exit code 74 (an Xid handler's), signal 7 (SIGBUS).
const DeviceErrorPolicy kPolicy{.exit_codes = {74, 79}, .signals = {7}};

PodFailure Failure(std::vector<ContainerExit> exits, int64_t gang = 16,
                   int64_t others_failed = 0, std::string disruption = "") {
  return PodFailure{.pod = "train-w-0-3",
                    .node = "n7",
                    .disruption_reason = std::move(disruption),
                    .exits = std::move(exits),
                    .gang_size = gang,
                    .others_failed = others_failed};
}

struct Case {
  std::string name;
  PodFailure failure;
  std::optional<Attribution> want;
  bool node_fault;
};

class AttributeFailureTest : public ::testing::TestWithParam<Case> {};

TEST_P(AttributeFailureTest, Table) {
  EXPECT_EQ(AttributeFailure(GetParam().failure, kPolicy), GetParam().want);
  EXPECT_EQ(IsNodeFault(GetParam().failure, kPolicy), GetParam().node_fault);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttributeFailureTest,
    ::testing::Values(
        Case{"NodeLost", Failure({}, 16, 5, "NodeLost"),
             Attribution{FaultKind::kNodeLost, "node lost"}, true},
        Case{"DeviceErrorExitCode",
             Failure({{.container = "main", .exit_code = 74}}, 16, 3),
             Attribution{FaultKind::kDeviceError,
                         "container \"main\": exit code 74"},
             true},
        Case{"DeviceErrorSignalWithReason",
             Failure({{.container = "side", .exit_code = 0},
                      {.container = "main",
                       .exit_code = 135,
                       .signal = 7,
                       .reason = "Error"}}),
             Attribution{FaultKind::kDeviceError,
                         "container \"main\": signal 7 (\"Error\")"},
             true},
        // A signal decides, not the 128+signal exit code beside it.
        Case{"ExitCodeBesideUnlistedSignal",
             Failure({{.container = "main", .exit_code = 74, .signal = 9}}, 16,
                     1),
             std::nullopt, false},
        // Drained or preempted: no failure of the node.
        Case{"Drained",
             Failure({{.container = "main", .exit_code = 143}}, 16, 0,
                     "Drained"),
             std::nullopt, false},
        // Lost node wins over a device error code.
        Case{"NodeLostBeatsDeviceError",
             Failure({{.container = "main", .exit_code = 74}}, 16, 0,
                     "NodeLost"),
             Attribution{FaultKind::kNodeLost, "node lost"}, true},
        Case{
            "LoneFailure",
            Failure({{.container = "main", .exit_code = 1, .reason = "Error"}}),
            Attribution{FaultKind::kLoneFailure,
                        "container \"main\": exit code 1 (\"Error\"), the "
                        "only failure of 16 pods"},
            false},
        Case{"NotLoneWhenOthersFailed",
             Failure({{.container = "main", .exit_code = 1}}, 16, 1),
             std::nullopt, false},
        Case{"NotLoneInAGangOfOne",
             Failure({{.container = "main", .exit_code = 1}}, 1, 0),
             std::nullopt, false},
        Case{"OomIsTheUsers",
             Failure({{.container = "main",
                       .exit_code = 137,
                       .signal = 9,
                       .reason = "OOMKilled"}}),
             std::nullopt, false},
        Case{"NoFailedContainer",
             Failure({{.container = "main", .exit_code = 0}}), std::nullopt,
             false},
        Case{"NoContainers", Failure({}), std::nullopt, false},
        Case{"HostileReasonQuoted",
             Failure({{.container = "main",
                       .exit_code = 79,
                       .reason = "x\n[fake]"}}),
             Attribution{FaultKind::kDeviceError,
                         "container \"main\": exit code 79 (\"x\\n[fake]\")"},
             true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(AttributeFailureTest, EmptyPolicyHasNoDeviceErrors) {
  EXPECT_EQ(
      AttributeFailure(Failure({{.container = "main", .exit_code = 74}}, 16, 2),
                       DeviceErrorPolicy{}),
      std::nullopt);
}

TEST(FaultKindTest, NamesRoundTrip) {
  for (FaultKind kind : {FaultKind::kNodeLost, FaultKind::kDeviceError,
                         FaultKind::kLoneFailure, FaultKind::kStraggler}) {
    EXPECT_EQ(ParseFaultKind(FaultKindName(kind)), kind);
  }
  EXPECT_EQ(FaultKindName(FaultKind::kDeviceError), "DeviceError");
  EXPECT_EQ(ParseFaultKind("nodelost"), std::nullopt);
  EXPECT_EQ(ParseFaultKind(""), std::nullopt);
  EXPECT_TRUE(IsNodeFault(FaultKind::kNodeLost));
  EXPECT_TRUE(IsNodeFault(FaultKind::kDeviceError));
  EXPECT_FALSE(IsNodeFault(FaultKind::kLoneFailure));
  EXPECT_FALSE(IsNodeFault(FaultKind::kStraggler));
}

TEST(ConstantsTest, ContractNames) {
  EXPECT_EQ(kQuarantineTaintKey, "jobsetd.io/quarantined");
  EXPECT_EQ(kQuarantineTaintEffect, "NoSchedule");
  EXPECT_EQ(kNodeFaultReason, "NodeFault");
}

}  // namespace
}  // namespace jobset::scheduler::resilience
