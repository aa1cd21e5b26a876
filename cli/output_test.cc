#include "cli/output.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
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

// STATUS is kubectl's: the waiting or terminated reason of Kubernetes'
// ContainerState; from a jobsetd that served the flat form, its reason.
TEST(PodStatusTextTest, ReadsTheContainerStateAndTheOldFlatForm) {
  api::Pod backoff;
  backoff.mutable_status()->set_phase("Running");
  api::ContainerStatus* c = backoff.mutable_status()->add_container_statuses();
  c->mutable_state()->mutable_waiting()->set_reason("CrashLoopBackOff");
  c->mutable_last_state()->mutable_terminated()->set_exit_code(1);
  EXPECT_EQ(PodStatusText(backoff), "CrashLoopBackOff");

  api::Pod completed = backoff;
  completed.mutable_status()->set_phase("Succeeded");
  c = completed.mutable_status()->mutable_container_statuses(0);
  c->mutable_state()->mutable_terminated()->set_reason("Completed");
  EXPECT_EQ(PodStatusText(completed), "Completed");

  api::Pod flat;
  flat.mutable_status()->set_phase("Failed");
  c = flat.mutable_status()->add_container_statuses();
  c->set_flat_state("terminated");
  c->set_reason("OOMKilled");
  EXPECT_EQ(PodStatusText(flat), "OOMKilled");
}

TEST(PodStatusTextTest, AStragglerSaysSo) {
  api::Pod pod;
  pod.mutable_status()->set_phase("Running");
  api::Condition* c = pod.mutable_status()->add_conditions();
  c->set_type("Straggler");
  c->set_status("True");
  EXPECT_EQ(PodStatusText(pod), "Running,Straggler");
  c->set_status("False");
  EXPECT_EQ(PodStatusText(pod), "Running");
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
  a->mutable_state()->mutable_running();
  a->set_restart_count(2);
  api::ContainerStatus* b = running.mutable_status()->add_container_statuses();
  b->mutable_state()->mutable_running();
  b->set_restart_count(1);

  api::Pod oom;
  oom.mutable_metadata()->set_name("p1");
  oom.mutable_spec()->add_containers()->set_name("a");
  oom.mutable_status()->set_phase("Failed");
  api::ContainerStatus* o = oom.mutable_status()->add_container_statuses();
  o->mutable_state()->mutable_terminated()->set_reason("OOMKilled");

  api::Pod done;
  done.mutable_metadata()->set_name("p2");
  done.mutable_status()->set_phase("Succeeded");

  running.mutable_status()->set_host_ip("10.0.0.1");
  EXPECT_THAT(
      PodRows({running, oom, done}, kNow),
      ElementsAre(ElementsAre("NAME", "READY", "STATUS", "RESTARTS", "AGE"),
                  ElementsAre("p0", "1/2", "Running", "3", "30s"),
                  ElementsAre("p1", "0/1", "OOMKilled", "0", "<unknown>"),
                  ElementsAre("p2", "0/0", "Completed", "0", "<unknown>")));
  // -o wide, as kubectl's: the pod's IP (its node's when it has none of its
  // own) and node.
  oom.mutable_status()->set_pod_ip("10.9.0.3");
  EXPECT_THAT(
      PodRows({running, oom, done}, kNow, /*wide=*/true),
      ElementsAre(
          ElementsAre("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP",
                      "NODE", "NOMINATED NODE", "READINESS GATES"),
          ElementsAre("p0", "1/2", "Running", "3", "30s", "10.0.0.1", "host-1",
                      "<none>", "<none>"),
          ElementsAre("p1", "0/1", "OOMKilled", "0", "<unknown>", "10.9.0.3",
                      "<none>", "<none>", "<none>"),
          ElementsAre("p2", "0/0", "Completed", "0", "<unknown>", "<none>",
                      "<none>", "<none>", "<none>")));
}

void AddReady(api::Node* node, const std::string& status) {
  api::NodeCondition* c = node->mutable_status()->add_conditions();
  c->set_type("Ready");
  c->set_status(status);
}

// A node as jobsetd's NodeService returns it (scheduler/agents/node_object.h).
api::Node SampleNode() {
  api::Node node;
  node.set_api_version("v1");
  node.set_kind("Node");
  node.mutable_metadata()->set_name("host-1");
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] =
      "host-1";
  (*node.mutable_metadata()
        ->mutable_annotations())["jobsetd.x-k8s.io/connected"] = "true";
  SetTime(node.mutable_metadata()->mutable_creation_timestamp(),
          kNow - absl::Hours(50));
  node.mutable_spec()->set_unschedulable(true);
  api::Taint* t = node.mutable_spec()->add_taints();
  t->set_key("node.kubernetes.io/unschedulable");
  t->set_effect("NoSchedule");
  (*node.mutable_status()->mutable_capacity())["cpu"] = "8";
  (*node.mutable_status()->mutable_allocatable())["cpu"] = "8";
  AddReady(&node, "True");
  api::NodeCondition* ready = node.mutable_status()->mutable_conditions(0);
  ready->set_reason("KubeletReady");
  ready->set_message("jobset-agent is posting ready status");
  SetTime(ready->mutable_last_heartbeat_time(), kNow - absl::Seconds(1));
  SetTime(ready->mutable_last_transition_time(), kNow - absl::Hours(1));
  api::NodeAddress* ip = node.mutable_status()->add_addresses();
  ip->set_type("InternalIP");
  ip->set_address("10.0.0.1");
  api::NodeAddress* host = node.mutable_status()->add_addresses();
  host->set_type("Hostname");
  host->set_address("host-1");
  node.mutable_status()->mutable_node_info()->set_kubelet_version(
      "jobset-agent 0.1");
  node.mutable_status()->mutable_node_info()->set_operating_system("linux");
  node.mutable_status()->mutable_node_info()->set_architecture("amd64");
  node.mutable_status()->mutable_node_info()->set_machine_id("m1");
  return node;
}

TEST(NodeRowsTest, KubectlColumns) {
  api::Node cordoned = SampleNode();
  (*cordoned.mutable_metadata()
        ->mutable_labels())["node-role.kubernetes.io/control-plane"] = "";
  (*cordoned.mutable_metadata()->mutable_labels())["kubernetes.io/role"] =
      "gpu";
  api::Node lost;
  lost.mutable_metadata()->set_name("host-2");
  AddReady(&lost, "Unknown");
  api::Node down;
  down.mutable_metadata()->set_name("host-3");
  AddReady(&down, "False");
  api::Node bare;
  bare.mutable_metadata()->set_name("host-4");
  EXPECT_THAT(
      NodeRows({cordoned, lost, down, bare}, kNow),
      ElementsAre(ElementsAre("NAME", "STATUS", "ROLES", "AGE", "VERSION"),
                  ElementsAre("host-1", "Ready,SchedulingDisabled",
                              "control-plane,gpu", "2d2h", "jobset-agent/0.1"),
                  ElementsAre("host-2", "NotReady", "<none>", "<unknown>", ""),
                  ElementsAre("host-3", "NotReady", "<none>", "<unknown>", ""),
                  ElementsAre("host-4", "Unknown", "<none>", "<unknown>", "")));
  EXPECT_THAT(
      NodeRows({SampleNode(), lost}, kNow, /*wide=*/true),
      ElementsAre(
          ElementsAre("NAME", "STATUS", "ROLES", "AGE", "VERSION",
                      "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                      "KERNEL-VERSION", "CONTAINER-RUNTIME"),
          ElementsAre("host-1", "Ready,SchedulingDisabled", "<none>", "2d2h",
                      "jobset-agent/0.1", "10.0.0.1", "<none>", "<unknown>",
                      "<unknown>", "<unknown>"),
          ElementsAre("host-2", "NotReady", "<none>", "<unknown>", "", "<none>",
                      "<none>", "<unknown>", "<unknown>", "<unknown>")));
}

TEST(NodeJsonTest, KubernetesFieldNames) {
  YAML::Node n = YAML::Load(ToJson(SampleNode(), "v1", "Node"));
  EXPECT_EQ(n["apiVersion"].as<std::string>(), "v1");
  EXPECT_EQ(n["kind"].as<std::string>(), "Node");
  EXPECT_EQ(n["metadata"]["name"].as<std::string>(), "host-1");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/hostname"].as<std::string>(),
            "host-1");
  EXPECT_EQ(n["metadata"]["annotations"]["jobsetd.x-k8s.io/connected"]
                .as<std::string>(),
            "true");
  EXPECT_EQ(n["metadata"]["creationTimestamp"].as<std::string>(),
            "2023-11-12T20:13:20Z");
  EXPECT_TRUE(n["spec"]["unschedulable"].as<bool>());
  EXPECT_EQ(n["spec"]["taints"][0]["key"].as<std::string>(),
            "node.kubernetes.io/unschedulable");
  EXPECT_EQ(n["spec"]["taints"][0]["effect"].as<std::string>(), "NoSchedule");
  EXPECT_EQ(n["status"]["capacity"]["cpu"].as<std::string>(), "8");
  EXPECT_EQ(n["status"]["allocatable"]["cpu"].as<std::string>(), "8");
  const YAML::Node ready = n["status"]["conditions"][0];
  EXPECT_EQ(ready["type"].as<std::string>(), "Ready");
  EXPECT_EQ(ready["status"].as<std::string>(), "True");
  EXPECT_EQ(ready["reason"].as<std::string>(), "KubeletReady");
  EXPECT_EQ(ready["message"].as<std::string>(),
            "jobset-agent is posting ready status");
  EXPECT_EQ(ready["lastHeartbeatTime"].as<std::string>(),
            "2023-11-14T22:13:19Z");
  EXPECT_EQ(ready["lastTransitionTime"].as<std::string>(),
            "2023-11-14T21:13:20Z");
  EXPECT_EQ(n["status"]["addresses"][0]["type"].as<std::string>(),
            "InternalIP");
  EXPECT_EQ(n["status"]["addresses"][0]["address"].as<std::string>(),
            "10.0.0.1");
  EXPECT_EQ(n["status"]["addresses"][1]["type"].as<std::string>(), "Hostname");
  const YAML::Node info = n["status"]["nodeInfo"];
  EXPECT_EQ(info["kubeletVersion"].as<std::string>(), "jobset-agent 0.1");
  EXPECT_EQ(info["operatingSystem"].as<std::string>(), "linux");
  EXPECT_EQ(info["architecture"].as<std::string>(), "amd64");
  EXPECT_EQ(info["machineID"].as<std::string>(), "m1");
  // The keys are Kubernetes', in its order; nothing of jobsetd's own shape.
  std::vector<std::string> keys;
  for (auto entry : n) keys.push_back(entry.first.Scalar());
  EXPECT_THAT(keys,
              ElementsAre("apiVersion", "kind", "metadata", "spec", "status"));
  const std::string json = ToJson(SampleNode(), "v1", "Node");
  EXPECT_THAT(json, Not(HasSubstr("registration")));
  EXPECT_THAT(json, StartsWith("{\n    \"apiVersion\": \"v1\",\n    "
                               "\"kind\": \"Node\",\n"));
}

TEST(NodeJsonTest, ListsAreKubernetesLists) {
  api::Node a = SampleNode();
  YAML::Node list = YAML::Load(ToList({&a}, "v1", "Node", /*yaml=*/true));
  EXPECT_EQ(list["kind"].as<std::string>(), "List");
  EXPECT_EQ(list["items"][0]["kind"].as<std::string>(), "Node");
  EXPECT_EQ(list["items"][0]["metadata"]["name"].as<std::string>(), "host-1");
  EXPECT_EQ(list["items"][0]["status"]["nodeInfo"]["kubeletVersion"]
                .as<std::string>(),
            "jobset-agent 0.1");
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

// A document as one line of text: maps and sequences in order, scalars as
// text (YAML writes plain what JSON quotes, so quoting is not compared).
std::string Canonical(const YAML::Node& node) {
  if (node.IsMap()) {
    std::string out = "{";
    for (auto entry : node) {
      absl::StrAppend(&out, entry.first.Scalar(), "=", Canonical(entry.second),
                      ";");
    }
    return out + "}";
  }
  if (node.IsSequence()) {
    std::string out = "[";
    for (size_t i = 0; i < node.size(); ++i) {
      absl::StrAppend(&out, Canonical(node[i]), ";");
    }
    return out + "]";
  }
  if (node.IsNull()) return "null";
  return node.Scalar();
}

TEST(ToJsonTest, WritesWhatTheDocumentPathWrites) {
  // ToJson and ToList(json) reformat protobuf's JSON in one pass; ToYaml
  // still goes through a document. Both must say the same, strings that
  // need escaping included.
  api::JobSet js = SampleJobSet();
  const std::string hostile =
      "say \"hi\"\\ / \t tab\nline \x01 \xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80 <b>";
  (*js.mutable_metadata()->mutable_labels())["empty"] = "";
  js.mutable_metadata()->set_uid("12345");  // a string that looks like a number
  api::ReplicatedJob* second = js.mutable_spec()->add_replicated_jobs();
  second->set_name("leader");
  second->set_replicas(0);
  js.mutable_status()->add_replicated_jobs_status()->set_name("workers");
  EXPECT_EQ(
      Canonical(YAML::Load(ToJson(js, "jobset.x-k8s.io/v1alpha2", "JobSet"))),
      Canonical(YAML::Load(ToYaml(js, "jobset.x-k8s.io/v1alpha2", "JobSet"))));
  // Escapes: decoded from protobuf's JSON and written again as JsonQuote
  // writes them, so that the value reads back unchanged.
  (*js.mutable_metadata()->mutable_annotations())["quotes"] = hostile;
  const std::string json = ToJson(js, "jobset.x-k8s.io/v1alpha2", "JobSet");
  EXPECT_THAT(json, HasSubstr(R"("quotes": "say \"hi\"\\ / \t tab\nline )"
                              R"(\u0001 )"));
  EXPECT_EQ(
      YAML::Load(json)["metadata"]["annotations"]["quotes"].as<std::string>(),
      hostile);
  EXPECT_THAT(json, HasSubstr("\"uid\": \"12345\""));
  EXPECT_THAT(json, HasSubstr("\"generation\": 3,"));
  // The layout: 4 spaces a level, `{}` and `[]` when empty.
  EXPECT_THAT(json, HasSubstr("\n    \"metadata\": {\n        \"name\": "
                              "\"train\",\n"));
  // (YAML writes a string with a newline as a literal block, which reads
  // back with one more newline at its end: not compared.)
  js.mutable_metadata()->mutable_annotations()->erase("quotes");
  api::JobSet a = js, b = SampleJobSet();
  const std::string list =
      ToList({&a, &b}, "jobset.x-k8s.io/v1alpha2", "JobSet", /*yaml=*/false);
  EXPECT_EQ(Canonical(YAML::Load(list)),
            Canonical(YAML::Load(ToList({&a, &b}, "jobset.x-k8s.io/v1alpha2",
                                        "JobSet", /*yaml=*/true))));
  EXPECT_THAT(list, StartsWith("{\n    \"apiVersion\": \"v1\",\n    \"items\": "
                               "[\n        {\n            \"apiVersion\": "));
  EXPECT_THAT(list, EndsWith("\n    ],\n    \"kind\": \"List\"\n}\n"));
  // A message with nothing set.
  EXPECT_EQ(ToJson(api::JobSet(), "", ""), "{}\n");
  EXPECT_EQ(ToJson(api::JobSet(), "v1", "X"),
            "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"X\"\n}\n");
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

TEST(ToYamlTest, MultiLineStringsReadBackUnchanged) {
  for (const std::string value :
       {"a\nb", "a\nb\n", "a\n\n", " indented\nnext\n", "\nfirst empty\n",
        "trailing space \nx\n", "crlf\r\n"}) {
    api::JobSet js = SampleJobSet();
    (*js.mutable_metadata()->mutable_annotations())["text"] = value;
    const std::string yaml = ToYaml(js, "jobset.x-k8s.io/v1alpha2", "JobSet");
    EXPECT_EQ(
        YAML::Load(yaml)["metadata"]["annotations"]["text"].as<std::string>(),
        value)
        << yaml;
  }
  api::JobSet js = SampleJobSet();
  (*js.mutable_metadata()->mutable_annotations())["script"] = "set -e\nrun\n";
  EXPECT_THAT(ToYaml(js, "jobset.x-k8s.io/v1alpha2", "JobSet"),
              HasSubstr("script: |\n"));
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
