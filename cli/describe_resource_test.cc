#include <string>
#include <vector>

#include "cli/describe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/kueue.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

api::ClusterQueue Research() {
  api::ClusterQueue cq;
  api::ObjectMeta* meta = cq.mutable_metadata();
  meta->set_name("research");
  (*meta->mutable_labels())["tier"] = "gold";
  (*meta->mutable_labels())["team"] = "ml";
  (*meta->mutable_annotations())["note"] = "hi";
  meta->set_uid("u-1");
  meta->set_resource_version("42");
  meta->set_generation(1);
  meta->mutable_creation_timestamp()->set_seconds(1'700'000'000);
  api::ClusterQueueSpec* spec = cq.mutable_spec();
  spec->set_cohort("ml-org");
  spec->mutable_namespace_selector();  // {}: every namespace.
  spec->set_queueing_strategy("BestEffortFIFO");
  api::ResourceGroup* group = spec->add_resource_groups();
  group->add_covered_resources("cpu");
  group->add_covered_resources("nvidia.com/gpu");
  api::FlavorQuotas* flavor = group->add_flavors();
  flavor->set_name("gpu-h100");
  api::ResourceQuota* cpu = flavor->add_resources();
  cpu->set_name("cpu");
  cpu->set_nominal_quota("96");
  api::ResourceQuota* gpu = flavor->add_resources();
  gpu->set_name("nvidia.com/gpu");
  gpu->set_nominal_quota("16");
  gpu->set_borrowing_limit("8");
  api::Condition* active = cq.mutable_status()->add_conditions();
  active->set_type("Active");
  active->set_status("True");
  active->set_reason("Ready");
  active->set_message("Can admit new workloads");
  active->mutable_last_transition_time()->set_seconds(1'700'000'000);
  cq.mutable_status()->set_pending_workloads(2);
  return cq;
}

// kubectl describe clusterqueue: the generic describer's layout, its
// tabwriter's alignment (runs of "Key:<tab>value" lines share a width) and
// trailing padding included.
TEST(DescribeResourceTest, ClusterQueueAsKubectlPrintsIt) {
  const std::vector<api::Event> none;
  EXPECT_EQ(DescribeResource(Research(), "kueue.x-k8s.io/v1beta1",
                             "ClusterQueue", &none, kNow),
            "Name:         research\n"
            "Namespace:    \n"
            "Labels:       team=ml\n"
            "              tier=gold\n"
            "Annotations:  note: hi\n"
            "API Version:  kueue.x-k8s.io/v1beta1\n"
            "Kind:         ClusterQueue\n"
            "Metadata:\n"
            "  Creation Timestamp:  2023-11-14T22:13:20Z\n"
            "  Generation:          1\n"
            "  Resource Version:    42\n"
            "  UID:                 u-1\n"
            "Spec:\n"
            "  Cohort:  ml-org\n"
            "  Namespace Selector:\n"
            "  Queueing Strategy:  BestEffortFIFO\n"
            "  Resource Groups:\n"
            "    Covered Resources:\n"
            "      cpu\n"
            "      nvidia.com/gpu\n"
            "    Flavors:\n"
            "      Name:  gpu-h100\n"
            "      Resources:\n"
            "        Name:             cpu\n"
            "        Nominal Quota:    96\n"
            "        Borrowing Limit:  8\n"
            "        Name:             nvidia.com/gpu\n"
            "        Nominal Quota:    16\n"
            "Status:\n"
            "  Conditions:\n"
            "    Last Transition Time:  2023-11-14T22:13:20Z\n"
            "    Message:               Can admit new workloads\n"
            "    Reason:                Ready\n"
            "    Status:                True\n"
            "    Type:                  Active\n"
            "  Pending Workloads:       2\n"
            "Events:                    <none>\n");
}

TEST(DescribeResourceTest, EventsAndLongAnnotations) {
  api::WorkloadPriorityClass wpc;
  wpc.mutable_metadata()->set_name("flagship");
  (*wpc.mutable_metadata()->mutable_annotations())["long"] =
      std::string(150, 'x');
  wpc.set_value(10000);
  wpc.set_description("Release-blocking training.");
  std::vector<api::Event> events(1);
  events[0].set_type("Warning");
  events[0].set_reason("Misconfigured");
  events[0].set_note(" a note \n");
  events[0].mutable_event_time()->set_seconds(1'700'000'000 - 90);
  const std::string text = DescribeResource(
      wpc, "kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass", &events, kNow);
  EXPECT_THAT(text,
              HasSubstr("Annotations:  long:\n  " + std::string(138, 'x') +
                        "...\nAPI Version:  kueue.x-k8s.io/v1beta1\n"));
  EXPECT_THAT(text, HasSubstr("Description:  Release-blocking training.\n"
                              "Kind:         WorkloadPriorityClass\n"));
  EXPECT_THAT(text, HasSubstr("Value:  10000\n"
                              "Events:\n"
                              "  Type     Reason         Age   From     "
                              "Message\n"
                              "  ----     ------         ----  ----     "
                              "-------\n"
                              "  Warning  Misconfigured  90s   jobsetd  "
                              "a note\n"));
  // Events could not be read: no section, as kubectl.
  EXPECT_THAT(DescribeResource(wpc, "kueue.x-k8s.io/v1beta1",
                               "WorkloadPriorityClass", nullptr, kNow),
              Not(HasSubstr("Events")));
}

}  // namespace
}  // namespace jobset::cli
