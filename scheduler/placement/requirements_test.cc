#include "scheduler/placement/requirements.h"

#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::placement {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

api::PodSpec Spec(const std::string& text) {
  api::PodSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec))
      << text;
  return spec;
}

struct ResourceCase {
  std::string name;
  std::string spec;
  Resources expected;
};

class ResourcesTest : public ::testing::TestWithParam<ResourceCase> {};

TEST_P(ResourcesTest, EffectiveRequests) {
  absl::StatusOr<PodRequirements> requirements =
      RequirementsFromPodSpec(Spec(GetParam().spec));
  ASSERT_TRUE(requirements.ok()) << requirements.status();
  EXPECT_EQ(requirements->resources, GetParam().expected);
}

constexpr int64_t kGi = int64_t{1} << 30;

INSTANTIATE_TEST_SUITE_P(
    Table, ResourcesTest,
    ::testing::Values(
        ResourceCase{"None", "containers {}", {}},
        ResourceCase{"Requests",
                     R"pb(containers {
                            resources {
                              requests { key: "cpu" value: "500m" }
                              requests { key: "memory" value: "4Gi" }
                              requests { key: "nvidia.com/gpu" value: "8" }
                            }
                          })pb",
                     {500, 4 * kGi, {{"nvidia.com/gpu", 8}}}},
        ResourceCase{"LimitsWhenRequestsAbsent",
                     R"pb(containers {
                            resources {
                              requests { key: "cpu" value: "1" }
                              limits { key: "cpu" value: "2" }
                              limits { key: "memory" value: "1Gi" }
                            }
                          })pb",
                     {1000, kGi, {}}},
        ResourceCase{
            "ContainersSum",
            R"pb(containers { resources { requests { key: "cpu" value: "1" } } }
                 containers {
                   resources {
                     requests { key: "cpu" value: "250m" }
                     requests { key: "google.com/tpu" value: "4" }
                   }
                 })pb",
            {1250, 0, {{"google.com/tpu", 4}}}},
        ResourceCase{"InitContainerMaxWithSum",
                     R"pb(init_containers {
                            resources {
                              requests { key: "cpu" value: "3" }
                              requests { key: "memory" value: "1Gi" }
                            }
                          }
                          init_containers {
                            resources { limits { key: "memory" value: "2Gi" } }
                          }
                          containers {
                            resources {
                              requests { key: "cpu" value: "1" }
                              requests { key: "memory" value: "3Gi" }
                            }
                          }
                          containers {
                            resources { requests { key: "cpu" value: "1" } }
                          })pb",
                     {3000, 3 * kGi, {}}}),
    [](const ::testing::TestParamInfo<ResourceCase>& info) {
      return info.param.name;
    });

struct ErrorCase {
  std::string name;
  std::string spec;
  std::string message;
};

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, NamesTheField) {
  EXPECT_THAT(RequirementsFromPodSpec(Spec(GetParam().spec)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Table, ErrorTest,
    ::testing::Values(
        ErrorCase{"BadQuantity",
                  R"pb(containers {
                         resources { requests { key: "cpu" value: "lots" } }
                       })pb",
                  "containers[0].resources.requests[cpu]"},
        ErrorCase{"Negative",
                  R"pb(containers {}
                       containers {
                         resources { limits { key: "memory" value: "-1Gi" } }
                       })pb",
                  "containers[1].resources.limits[memory]: must be greater"},
        ErrorCase{"FractionalGpu",
                  R"pb(init_containers {
                         resources {
                           requests { key: "nvidia.com/gpu" value: "500m" }
                         }
                       })pb",
                  "initContainers[0].resources.requests[nvidia.com/gpu]: "
                  "must be a whole number"},
        ErrorCase{"AffinityOperator",
                  R"pb(affinity {
                         node_affinity {
                           required_during_scheduling_ignored_during_execution {
                             node_selector_terms {
                               match_expressions { key: "a" operator: "Exists" }
                               match_expressions { key: "b" operator: "Near" }
                             }
                           }
                         }
                       })pb",
                  "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                  "Execution.nodeSelectorTerms[0].matchExpressions[1]."
                  "operator"},
        ErrorCase{"AffinityGtNotANumber",
                  R"pb(affinity {
                         node_affinity {
                           required_during_scheduling_ignored_during_execution {
                             node_selector_terms {
                               match_expressions {
                                 key: "a"
                                 operator: "Gt"
                                 values: "x"
                               }
                             }
                           }
                         }
                       })pb",
                  "matchExpressions[0].values"},
        ErrorCase{"TolerationOperator",
                  R"pb(tolerations { key: "k" operator: "Like" })pb",
                  "tolerations[0].operator"},
        ErrorCase{
            "TolerationExistsWithValue",
            R"pb(tolerations { key: "k" operator: "Exists" value: "v" })pb",
            "tolerations[0].operator"},
        ErrorCase{"TolerationEmptyKeyEqual", R"pb(tolerations {})pb",
                  "tolerations[0].operator: operator must be Exists"},
        ErrorCase{"TolerationEffect",
                  R"pb(tolerations { key: "k" effect: "Never" })pb",
                  "tolerations[0].effect"},
        ErrorCase{
            "PortProtocol",
            R"pb(containers {
                   ports { host_port: 80 container_port: 80 protocol: "ICMP" }
                 })pb",
            "containers[0].ports[0].protocol"},
        ErrorCase{"PortRange",
                  R"pb(host_network: true
                       containers { ports { container_port: 70000 } })pb",
                  "containers[0].ports[0].hostPort"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      return info.param.name;
    });

TEST(RequirementsFromPodSpecTest, SchedulingConstraints) {
  absl::StatusOr<PodRequirements> requirements = RequirementsFromPodSpec(Spec(
      R"pb(node_selector { key: "pool" value: "p1" }
           affinity {
             node_affinity {
               required_during_scheduling_ignored_during_execution {
                 node_selector_terms {
                   match_expressions { key: "zone" operator: "In" values: "a" }
                   match_expressions { key: "gen" operator: "Lt" values: "7" }
                 }
                 node_selector_terms {}
               }
             }
           }
           tolerations { key: "k" value: "v" effect: "NoSchedule" }
           tolerations { operator: "Exists" })pb"));
  ASSERT_TRUE(requirements.ok()) << requirements.status();
  using Op = NodeSelectorRequirement::Operator;
  EXPECT_EQ(requirements->node_selector,
            (std::map<std::string, std::string, std::less<>>{{"pool", "p1"}}));
  ASSERT_TRUE(requirements->required_node_affinity.has_value());
  EXPECT_EQ(*requirements->required_node_affinity,
            (std::vector<NodeSelectorTerm>{
                {{{"zone", Op::kIn, {"a"}, 0}, {"gen", Op::kLt, {}, 7}}}, {}}));
  EXPECT_EQ(
      requirements->tolerations,
      (std::vector<Toleration>{{"k", false, "v", TaintEffect::kNoSchedule},
                               {"", true, "", std::nullopt}}));

  absl::StatusOr<PodRequirements> none =
      RequirementsFromPodSpec(Spec("containers {}"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->required_node_affinity.has_value());
}

TEST(RequirementsFromPodSpecTest, HostPorts) {
  using P = HostPort::Protocol;
  // Without hostNetwork only explicit hostPorts count; init containers never.
  absl::StatusOr<PodRequirements> pod = RequirementsFromPodSpec(Spec(
      R"pb(init_containers { ports { host_port: 1 container_port: 1 } }
           containers {
             ports { container_port: 8080 }
             ports { host_port: 9000 container_port: 9000 protocol: "UDP" }
           }
           containers { ports { host_port: 443 container_port: 8443 } })pb"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_THAT(pod->host_ports,
              ElementsAre(HostPort{P::kTcp, 443}, HostPort{P::kUdp, 9000}));

  // With hostNetwork every container port is a host port.
  absl::StatusOr<PodRequirements> host_network = RequirementsFromPodSpec(Spec(
      R"pb(host_network: true
           containers {
             ports { container_port: 8080 }
             ports { container_port: 8080 }
             ports { container_port: 53 protocol: "SCTP" }
           })pb"));
  ASSERT_TRUE(host_network.ok()) << host_network.status();
  EXPECT_THAT(host_network->host_ports,
              ElementsAre(HostPort{P::kTcp, 8080}, HostPort{P::kSctp, 53}));
}

}  // namespace
}  // namespace jobset::scheduler::placement
