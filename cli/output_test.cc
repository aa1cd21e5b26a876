#include "cli/output.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

void SetTime(google::protobuf::Timestamp* ts, absl::Time t) {
  ts->set_seconds(absl::ToUnixSeconds(t));
}

TEST(FormatTableTest, AlignsColumnsWithoutTrailingBlanks) {
  EXPECT_EQ(FormatTable({{"NAME", "AGE", "X"}, {"a-long-name", "5s", ""}}),
            "NAME          AGE   X\n"
            "a-long-name   5s\n");
}

TEST(FormatAgeTest, KubectlHumanDuration) {
  struct Case {
    absl::Duration age;
    std::string text;
  };
  const std::vector<Case> cases = {
      {absl::Seconds(-1), "0s"},
      {absl::Seconds(-5), "<invalid>"},
      {absl::Seconds(0), "0s"},
      {absl::Seconds(119), "119s"},
      {absl::Seconds(120), "2m"},
      {absl::Seconds(192), "3m12s"},
      {absl::Minutes(25), "25m"},
      {absl::Minutes(179), "179m"},
      {absl::Minutes(310), "5h10m"},
      {absl::Hours(5), "5h"},
      {absl::Hours(30), "30h"},
      {absl::Hours(51), "2d3h"},
      {absl::Hours(24 * 120), "120d"},
      {absl::Hours(24 * 365 * 3), "3y"},
      {absl::Hours(24 * (365 * 3 + 10)), "3y10d"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatAge(kNow - c.age, kNow), c.text) << c.age;
  }
  EXPECT_EQ(FormatAge(absl::InfinitePast(), kNow), "<unknown>");
}

api::JobSet SampleJobSet() {
  api::JobSet js;
  js.mutable_metadata()->set_name("train");
  js.mutable_metadata()->set_namespace_("default");
  js.mutable_metadata()->set_generation(3);
  js.mutable_metadata()->set_resource_version("17");
  (*js.mutable_metadata()->mutable_labels())["team"] = "ml";
  (*js.mutable_metadata()->mutable_annotations())["note"] = "true";
  SetTime(js.mutable_metadata()->mutable_creation_timestamp(),
          kNow - absl::Minutes(25));
  js.mutable_spec()->set_suspend(false);
  api::ReplicatedJob* rjob = js.mutable_spec()->add_replicated_jobs();
  rjob->set_name("workers");
  rjob->set_replicas(2);
  rjob->mutable_template_()->mutable_spec()->set_active_deadline_seconds(600);
  js.mutable_status()->set_restarts(1);
  js.mutable_status()->set_terminal_state("Completed");
  api::Condition* c = js.mutable_status()->add_conditions();
  c->set_type("Completed");
  c->set_status("True");
  return js;
}

TEST(JobSetRowsTest, UpstreamPrinterColumns) {
  api::JobSet pending;
  pending.mutable_metadata()->set_name("waiting");
  EXPECT_THAT(
      JobSetRows({SampleJobSet(), pending}, kNow),
      ElementsAre(
          ElementsAre("NAME", "TERMINALSTATE", "RESTARTS", "COMPLETED",
                      "SUSPENDED", "AGE"),
          ElementsAre("train", "Completed", "1", "True", "false", "25m"),
          ElementsAre("waiting", "", "0", "", "", "<unknown>")));
}

TEST(PodRowsTest, ReadyStatusRestartsNode) {
  api::Pod running;
  running.mutable_metadata()->set_name("p0");
  SetTime(running.mutable_metadata()->mutable_creation_timestamp(),
          kNow - absl::Seconds(30));
  running.mutable_spec()->add_containers()->set_name("a");
  running.mutable_spec()->add_containers()->set_name("b");
  running.mutable_spec()->set_node_name("host-1");
  running.mutable_status()->set_phase("Running");
  api::ContainerStatus* a = running.mutable_status()->add_container_statuses();
  a->set_ready(true);
  a->set_state("running");
  a->set_restart_count(2);
  api::ContainerStatus* b = running.mutable_status()->add_container_statuses();
  b->set_state("running");
  b->set_restart_count(1);

  api::Pod oom;
  oom.mutable_metadata()->set_name("p1");
  oom.mutable_spec()->add_containers()->set_name("a");
  oom.mutable_status()->set_phase("Failed");
  api::ContainerStatus* o = oom.mutable_status()->add_container_statuses();
  o->set_state("terminated");
  o->set_reason("OOMKilled");

  api::Pod done;
  done.mutable_metadata()->set_name("p2");
  done.mutable_status()->set_phase("Succeeded");

  EXPECT_THAT(
      PodRows({running, oom, done}, kNow),
      ElementsAre(
          ElementsAre("NAME", "READY", "STATUS", "RESTARTS", "NODE", "AGE"),
          ElementsAre("p0", "1/2", "Running", "3", "host-1", "30s"),
          ElementsAre("p1", "0/1", "OOMKilled", "0", "<none>", "<unknown>"),
          ElementsAre("p2", "0/0", "Completed", "0", "<none>", "<unknown>")));
}

TEST(NodeRowsTest, StateCordonAndHeartbeat) {
  api::Node node;
  node.mutable_registration()->set_name("host-1");
  node.mutable_registration()->set_address("10.0.0.1");
  node.set_state("Ready");
  node.set_cordoned(true);
  node.set_pods(4);
  SetTime(node.mutable_last_heartbeat(), kNow - absl::Seconds(3));
  api::Node never;
  never.mutable_registration()->set_name("host-2");
  EXPECT_THAT(
      NodeRows({node, never}, kNow),
      ElementsAre(
          ElementsAre("NAME", "STATUS", "CORDONED", "PODS", "ADDRESS",
                      "LAST HEARTBEAT"),
          ElementsAre("host-1", "Ready", "true", "4", "10.0.0.1", "3s ago"),
          ElementsAre("host-2", "Unknown", "false", "0", "<none>", "<never>")));
}

TEST(ToJsonTest, UpstreamShapeWithApiVersionAndKindFirst) {
  const std::string json =
      ToJson(SampleJobSet(), "jobset.x-k8s.io/v1alpha2", "JobSet");
  EXPECT_THAT(json, StartsWith("{\n    \"apiVersion\": "
                               "\"jobset.x-k8s.io/v1alpha2\",\n    \"kind\": "
                               "\"JobSet\",\n    \"metadata\": {\n"));
  // json names, int64 as numbers (as Kubernetes), strings stay strings.
  EXPECT_THAT(json, HasSubstr("\"generation\": 3,"));
  EXPECT_THAT(json, HasSubstr("\"resourceVersion\": \"17\""));
  EXPECT_THAT(json, HasSubstr("\"activeDeadlineSeconds\": 600"));
  EXPECT_THAT(json, HasSubstr("\"replicatedJobs\": ["));
  EXPECT_THAT(json, HasSubstr("\"terminalState\": \"Completed\""));
  EXPECT_THAT(json, HasSubstr("\"note\": \"true\""));
  EXPECT_THAT(json,
              HasSubstr("\"creationTimestamp\": \"2023-11-14T21:48:20Z\""));
  // It parses back as JSON with the same values.
  YAML::Node parsed = YAML::Load(json);
  EXPECT_EQ(parsed["spec"]["replicatedJobs"][0]["replicas"].as<int>(), 2);
  EXPECT_EQ(parsed["metadata"]["labels"]["team"].as<std::string>(), "ml");
}

TEST(ToYamlTest, QuotesStringsThatYamlWouldReadAsOtherTypes) {
  const std::string yaml =
      ToYaml(SampleJobSet(), "jobset.x-k8s.io/v1alpha2", "JobSet");
  EXPECT_THAT(yaml, StartsWith("apiVersion: jobset.x-k8s.io/v1alpha2\n"
                               "kind: JobSet\nmetadata:\n  name: train\n"));
  EXPECT_THAT(yaml, HasSubstr("note: \"true\""));
  EXPECT_THAT(yaml, HasSubstr("resourceVersion: \"17\""));
  EXPECT_THAT(yaml, HasSubstr("generation: 3\n"));
  EXPECT_THAT(yaml, HasSubstr("suspend: false\n"));
  YAML::Node parsed = YAML::Load(yaml);
  EXPECT_EQ(parsed["metadata"]["annotations"]["note"].as<std::string>(),
            "true");
  EXPECT_EQ(parsed["status"]["restarts"].as<int>(), 1);
}

TEST(ToListTest, KubernetesListOfItems) {
  api::JobSet a = SampleJobSet();
  api::JobSet b = SampleJobSet();
  b.mutable_metadata()->set_name("other");
  const std::string json =
      ToList({&a, &b}, "jobset.x-k8s.io/v1alpha2", "JobSet", /*yaml=*/false);
  YAML::Node parsed = YAML::Load(json);
  EXPECT_EQ(parsed["kind"].as<std::string>(), "List");
  EXPECT_EQ(parsed["apiVersion"].as<std::string>(), "v1");
  ASSERT_EQ(parsed["items"].size(), 2u);
  EXPECT_EQ(parsed["items"][1]["metadata"]["name"].as<std::string>(), "other");
  EXPECT_EQ(parsed["items"][0]["kind"].as<std::string>(), "JobSet");
  EXPECT_THAT(ToList({}, "v1", "Pod", false), HasSubstr("\"items\": []"));
  EXPECT_THAT(ToList({}, "v1", "Pod", true), Not(HasSubstr("- ")));
}

TEST(TokenRowsTest, GroupsAgeAndExpiry) {
  api::TokenInfo alice;
  alice.set_name("alice");
  alice.set_id("abc123");
  alice.add_groups("dev");
  alice.add_groups("ops");
  SetTime(alice.mutable_creation_timestamp(), kNow - absl::Hours(2));
  SetTime(alice.mutable_expiration_timestamp(), kNow + absl::Hours(72));
  api::TokenInfo old = alice;
  old.set_name("old");
  old.clear_groups();
  SetTime(old.mutable_expiration_timestamp(), kNow - absl::Seconds(1));
  api::TokenInfo forever = old;
  forever.set_name("forever");
  forever.clear_expiration_timestamp();
  std::vector<Row> rows = TokenRows({alice, old, forever}, kNow);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_THAT(rows[0], ElementsAre("NAME", "ID", "GROUPS", "AGE", "EXPIRES"));
  EXPECT_THAT(rows[1],
              ElementsAre("alice", "abc123", "dev,ops", "120m", "in 3d"));
  EXPECT_THAT(rows[2],
              ElementsAre("old", "abc123", "<none>", "120m", "expired"));
  EXPECT_EQ(rows[3][4], "<never>");
}

TEST(RbacRowsTest, NamespaceColumnWhenAsked) {
  api::RbacObject role;
  role.mutable_role()->mutable_metadata()->set_name("r");
  role.mutable_role()->mutable_metadata()->set_namespace_("team");
  SetTime(role.mutable_role()->mutable_metadata()->mutable_creation_timestamp(),
          kNow - absl::Minutes(5));
  api::RbacObject binding;
  binding.mutable_binding()->mutable_metadata()->set_name("b");
  EXPECT_THAT(RbacRows({role, binding}, false, kNow),
              ElementsAre(ElementsAre("NAME", "AGE"), ElementsAre("r", "5m"),
                          ElementsAre("b", "<unknown>")));
  EXPECT_THAT(RbacRows({role}, true, kNow)[1], ElementsAre("team", "r", "5m"));
}

}  // namespace
}  // namespace jobset::cli
