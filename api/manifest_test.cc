#include "api/manifest.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr absl::string_view kLeaderWorkers = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: train
  labels:
    team: ml
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: rack
spec:
  suspend: true
  ttlSecondsAfterFinished: 60
  network:
    enableDNSHostnames: false
    subdomain: net
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: RestartJobSetAndIgnoreMaxRestarts
      onJobFailureReasons: [PodFailurePolicy]
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        backoffLimit: 0
        activeDeadlineSeconds: 3600
        podFailurePolicy:
          rules:
          - action: FailJob
            onExitCodes: {containerName: main, operator: In, values: [1, 42]}
        template:
          spec:
            restartPolicy: Never
            hostNetwork: true
            nodeSelector: {pool: a}
            tolerations:
            - {key: gpu, operator: Exists, effect: NoSchedule}
            containers:
            - name: main
              image: busybox
              command: [sh, -c, "echo hi"]
              ports:
              - containerPort: 3389
                hostIP: 0.0.0.0
              env:
              - name: RANK
                valueFrom:
                  fieldRef:
                    fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
              resources:
                requests: {cpu: 500m, memory: 4Gi, nvidia.com/gpu: 8}
                limits: {cpu: 1}
              readinessProbe:
                tcpSocket: {port: 3389}
                periodSeconds: 5
)";

TEST(LoadManifestTest, ReadsEveryKindOfField) {
  auto objects = LoadManifest(kLeaderWorkers);
  ASSERT_THAT(objects, IsOk());
  ASSERT_THAT(*objects, SizeIs(1));
  const ManifestObject& o = (*objects)[0];
  EXPECT_EQ(o.document, 1);
  EXPECT_THAT(o.warnings, IsEmpty());
  const JobSet& js = o.jobset;
  EXPECT_EQ(js.metadata().name(), "train");
  EXPECT_EQ(js.metadata().labels().at("team"), "ml");
  EXPECT_EQ(js.metadata().annotations().at(
                "alpha.jobset.sigs.k8s.io/exclusive-topology"),
            "rack");
  EXPECT_TRUE(js.spec().has_suspend() && js.spec().suspend());
  EXPECT_EQ(js.spec().ttl_seconds_after_finished(), 60);
  EXPECT_TRUE(js.spec().network().has_enable_dns_hostnames());
  EXPECT_FALSE(js.spec().network().enable_dns_hostnames());
  EXPECT_FALSE(js.spec().network().has_publish_not_ready_addresses());
  EXPECT_EQ(js.spec().failure_policy().rules(0).on_job_failure_reasons(0),
            "PodFailurePolicy");
  const ReplicatedJob& rj = js.spec().replicated_jobs(0);
  EXPECT_EQ(rj.replicas(), 1);
  EXPECT_FALSE(rj.template_().spec().has_suspend());
  EXPECT_EQ(rj.template_().spec().backoff_limit(), 0);
  EXPECT_TRUE(rj.template_().spec().has_backoff_limit());
  EXPECT_EQ(rj.template_().spec().active_deadline_seconds(), 3600);
  EXPECT_THAT(rj.template_()
                  .spec()
                  .pod_failure_policy()
                  .rules(0)
                  .on_exit_codes()
                  .values(),
              ElementsAre(1, 42));
  const PodSpec& pod = rj.template_().spec().template_().spec();
  EXPECT_TRUE(pod.host_network());
  EXPECT_EQ(pod.node_selector().at("pool"), "a");
  EXPECT_EQ(pod.tolerations(0).operator_(), "Exists");
  const Container& c = pod.containers(0);
  EXPECT_THAT(c.command(), ElementsAre("sh", "-c", "echo hi"));
  EXPECT_EQ(c.ports(0).container_port(), 3389);
  EXPECT_EQ(c.ports(0).host_ip(), "0.0.0.0");
  EXPECT_EQ(c.env(0).value_from().field_ref().field_path(),
            "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  // Quantities may be numbers or strings; they are kept as written.
  EXPECT_EQ(c.resources().requests().at("nvidia.com/gpu"), "8");
  EXPECT_EQ(c.resources().requests().at("memory"), "4Gi");
  EXPECT_EQ(c.resources().limits().at("cpu"), "1");
  EXPECT_EQ(c.readiness_probe().tcp_socket().port(), "3389");
}

TEST(LoadManifestTest, JsonLoadsTheSameAsYaml) {
  constexpr absl::string_view kJson = R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "j"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template":
      {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox", "resources":
          {"limits": {"nvidia.com/gpu": 1, "memory": "1Gi"}}}]}}}}}]}})";
  constexpr absl::string_view kYaml = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: j}
spec:
  replicatedJobs:
  - name: w
    replicas: 2
    template:
      spec:
        template:
          spec:
            containers:
            - name: c
              image: busybox
              resources: {limits: {nvidia.com/gpu: 1, memory: 1Gi}}
)";
  auto from_json = LoadManifest(kJson);
  auto from_yaml = LoadManifest(kYaml);
  ASSERT_THAT(from_json, IsOk());
  ASSERT_THAT(from_yaml, IsOk());
  EXPECT_TRUE(MessageDifferencer::Equals((*from_json)[0].jobset,
                                         (*from_yaml)[0].jobset));
}

// The proto's JSON names are upstream's, so protobuf's own JSON mapping reads
// and writes the same objects as the manifest loader.
TEST(LoadManifestTest, AgreesWithProtobufJsonMapping) {
  auto objects = LoadManifest(kLeaderWorkers);
  ASSERT_THAT(objects, IsOk());
  std::string json;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString((*objects)[0].jobset, &json)
          .ok());
  EXPECT_THAT(json, AllOf(HasSubstr("\"replicatedJobs\""),
                          HasSubstr("\"enableDNSHostnames\":false"),
                          HasSubstr("\"ttlSecondsAfterFinished\":60"),
                          HasSubstr("\"hostIP\":\"0.0.0.0\"")));
  JobSet via_protobuf;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(json, &via_protobuf).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(via_protobuf, (*objects)[0].jobset));
  // And the loader reads protobuf's JSON back to the same object.
  auto reloaded = LoadManifest(json);
  ASSERT_THAT(reloaded, IsOk());
  EXPECT_TRUE(
      MessageDifferencer::Equals((*reloaded)[0].jobset, (*objects)[0].jobset));
}

TEST(LoadManifestTest, SeveralDocumentsAndEmptyOnes) {
  constexpr absl::string_view kTwo = R"(---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a}
---
# only a comment
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: b}
---
)";
  auto objects = LoadManifest(kTwo);
  ASSERT_THAT(objects, IsOk());
  ASSERT_THAT(*objects, SizeIs(2));
  EXPECT_EQ((*objects)[0].jobset.metadata().name(), "a");
  EXPECT_EQ((*objects)[1].jobset.metadata().name(), "b");
  EXPECT_EQ((*objects)[1].document, 3);
  EXPECT_THAT(LoadManifest(""), IsOk());
}

TEST(LoadManifestTest, IgnoredKubernetesFieldsWarnWithTheirPaths) {
  constexpr absl::string_view kManifest = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a, finalizers: [x]}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            dnsPolicy: ClusterFirstWithHostNet
            serviceAccountName: trainer
            shareProcessNamespace: true
            containers:
            - name: c
              image: busybox
              imagePullPolicy: Always
              startupProbe: {exec: {command: [ls]}, initialDelaySeconds: 5}
)";
  auto objects = LoadManifest(kManifest);
  ASSERT_THAT(objects, IsOk());
  const std::string pod = "spec.replicatedJobs[0].template.spec.template.spec";
  EXPECT_THAT(
      (*objects)[0].warnings,
      ElementsAre("metadata.finalizers: ignored by jobsetd",
                  pod + ".dnsPolicy: ignored by jobsetd",
                  pod + ".serviceAccountName: ignored by jobsetd",
                  pod + ".shareProcessNamespace: ignored by jobsetd",
                  pod + ".containers[0].startupProbe: ignored by jobsetd"));
  EXPECT_EQ((*objects)[0]
                .jobset.spec()
                .replicated_jobs(0)
                .template_()
                .spec()
                .template_()
                .spec()
                .containers(0)
                .image_pull_policy(),
            "Always");
}

TEST(LoadManifestTest, LeadingZeroIntegersAreOctalAsInYaml11) {
  auto objects = LoadManifest(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a}
spec:
  replicatedJobs:
  - name: w
    replicas: 010
    template:
      spec:
        parallelism: 0o7
        completions: 09
        template:
          spec:
            containers: [{name: c, image: busybox}]
)");
  ASSERT_THAT(objects, IsOk());
  const ReplicatedJob& rjob = (*objects)[0].jobset.spec().replicated_jobs(0);
  EXPECT_EQ(rjob.replicas(), 8);
  EXPECT_EQ(rjob.template_().spec().parallelism(), 7);
  // Not octal digits: decimal.
  EXPECT_EQ(rjob.template_().spec().completions(), 9);
}

TEST(LoadManifestTest, SecretAndConfigMapReferencesAreRealFields) {
  constexpr absl::string_view kManifest = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            imagePullSecrets: [{name: regcred}]
            volumes:
            - name: creds
              secret:
                secretName: db
                defaultMode: 0400
                optional: true
                items: [{key: password, path: conf/pw, mode: 0600}]
            - name: cfg
              configMap: {name: settings, items: [{key: a, path: a.txt}]}
            containers:
            - name: c
              image: busybox
              envFrom:
              - prefix: DB_
                secretRef: {name: db, optional: true}
              - configMapRef: {name: settings}
              env:
              - name: P
                valueFrom: {secretKeyRef: {name: db, key: password}}
              - name: M
                valueFrom:
                  configMapKeyRef: {name: settings, key: mode, optional: true}
)";
  auto objects = LoadManifest(kManifest);
  ASSERT_THAT(objects, IsOk());
  EXPECT_THAT((*objects)[0].warnings, IsEmpty());
  const PodSpec& pod = (*objects)[0]
                           .jobset.spec()
                           .replicated_jobs(0)
                           .template_()
                           .spec()
                           .template_()
                           .spec();
  ASSERT_EQ(pod.image_pull_secrets_size(), 1);
  EXPECT_EQ(pod.image_pull_secrets(0).name(), "regcred");
  ASSERT_EQ(pod.volumes_size(), 2);
  const SecretVolumeSource& secret = pod.volumes(0).secret();
  EXPECT_EQ(secret.secret_name(), "db");
  // 0400 is octal, as in the YAML 1.1 kubectl reads.
  EXPECT_EQ(secret.default_mode(), 0400);
  EXPECT_TRUE(secret.optional());
  ASSERT_EQ(secret.items_size(), 1);
  EXPECT_EQ(secret.items(0).path(), "conf/pw");
  EXPECT_EQ(secret.items(0).mode(), 0600);
  EXPECT_EQ(pod.volumes(1).config_map().name(), "settings");
  const Container& c = pod.containers(0);
  ASSERT_EQ(c.env_from_size(), 2);
  EXPECT_EQ(c.env_from(0).prefix(), "DB_");
  EXPECT_TRUE(c.env_from(0).secret_ref().optional());
  EXPECT_EQ(c.env_from(1).config_map_ref().name(), "settings");
  EXPECT_EQ(c.env(0).value_from().secret_key_ref().key(), "password");
  EXPECT_TRUE(c.env(1).value_from().config_map_key_ref().optional());
}

struct BadCase {
  std::string name;
  std::string spec;  // YAML for `spec:` of an otherwise valid JobSet.
  std::string path;
  std::string message;
};

class LoadManifestErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoadManifestErrorTest, NamesThePath) {
  const std::string manifest =
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
      "metadata: {name: a}\nspec:\n" +
      GetParam().spec;
  EXPECT_THAT(
      LoadManifest(manifest),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("manifest document 1 is invalid"),
                     HasSubstr(GetParam().path + ": " + GetParam().message))));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LoadManifestErrorTest,
    ::testing::Values(
        BadCase{"Typo", "  replicatedJobs: [{name: w, replica: 2}]",
                "spec.replicatedJobs[0].replica",
                "unknown field (did you mean \"replicas\"?)"},
        BadCase{"TypoDeep",
                "  replicatedJobs: [{name: w, template: {spec: {paralelism: "
                "2}}}]",
                "spec.replicatedJobs[0].template.spec.paralelism",
                "unknown field (did you mean \"parallelism\"?)"},
        BadCase{"UnknownFarFromAnything", "  zzzzzzzzzzz: 1",
                "spec.zzzzzzzzzzz", "unknown field"},
        BadCase{"StringForInt", "  replicatedJobs: [{name: w, replicas: two}]",
                "spec.replicatedJobs[0].replicas",
                "Invalid value: \"two\": expected an integer"},
        BadCase{"QuotedInt", "  replicatedJobs: [{name: w, replicas: \"2\"}]",
                "spec.replicatedJobs[0].replicas",
                "expected an integer, got \"2\""},
        BadCase{"FloatForInt", "  replicatedJobs: [{name: w, replicas: 1.5}]",
                "spec.replicatedJobs[0].replicas",
                "Invalid value: \"1.5\": expected an integer"},
        BadCase{"Int32Overflow",
                "  replicatedJobs: [{name: w, replicas: 2147483648}]",
                "spec.replicatedJobs[0].replicas",
                "Invalid value: \"2147483648\": out of range: must be between "
                "-2147483648 and 2147483647"},
        BadCase{"Int64Overflow",
                "  replicatedJobs: [{name: w, template: {spec: "
                "{activeDeadlineSeconds: 99999999999999999999}}}]",
                "spec.replicatedJobs[0].template.spec.activeDeadlineSeconds",
                "Invalid value: \"99999999999999999999\": out of range"},
        BadCase{"BoolForString", "  managedBy: true", "spec.managedBy",
                "Invalid value: \"true\": expected a string, got a boolean "
                "(quote the value)"},
        BadCase{"NumberForString", "  replicatedJobs: [{name: 7}]",
                "spec.replicatedJobs[0].name",
                "Invalid value: \"7\": expected a string, got a number (quote "
                "the value)"},
        BadCase{"StringForBool", "  suspend: maybe", "spec.suspend",
                "expected a boolean (true or false), got \"maybe\""},
        BadCase{"ListForObject", "  network: [a]", "spec.network",
                "expected an object, got a list"},
        BadCase{"ScalarForList", "  replicatedJobs: w", "spec.replicatedJobs",
                "expected a list, got \"w\""},
        BadCase{"NullListItem", "  replicatedJobs: [null]",
                "spec.replicatedJobs[0]", "list items must not be null"},
        BadCase{"DuplicateField", "  suspend: true\n  suspend: false",
                "spec.suspend", "duplicate field"},
        BadCase{"DuplicateMapKey",
                "  replicatedJobs: [{name: w, template: {metadata: {labels: "
                "{a: x, a: y}}}}]",
                "spec.replicatedJobs[0].template.metadata.labels[a]",
                "duplicate key"},
        BadCase{"NumberLabelValue",
                "  replicatedJobs: [{name: w, template: {metadata: {labels: "
                "{a: 1}}}}]",
                "spec.replicatedJobs[0].template.metadata.labels[a]",
                "Invalid value: \"1\": expected a string, got a number"},
        BadCase{"BadTimestamp",
                "  replicatedJobs: []\nstatus: {conditions: "
                "[{lastTransitionTime: yesterday}]}",
                "status.conditions[0].lastTransitionTime",
                "Invalid value: \"yesterday\": expected an RFC 3339 time"}),
    [](const auto& info) { return info.param.name; });

TEST(LoadManifestTest, ReportsAllProblemsOfADocumentTogether) {
  auto result = LoadManifest(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a, lables: {}}
spec:
  suspend: 3
  replicatedJobs: [{name: w, replicas: -x}]
)");
  EXPECT_THAT(
      result,
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("metadata.lables"), HasSubstr("spec.suspend"),
                     HasSubstr("spec.replicatedJobs[0].replicas"))));
}

TEST(LoadManifestTest, RejectsOtherKindsAndVersions) {
  EXPECT_THAT(LoadManifest("apiVersion: batch/v1\nkind: Job\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kind: Unsupported value: \"Job\""),
                             HasSubstr("apiVersion: Unsupported value: "
                                       "\"batch/v1\": supported values: "
                                       "\"jobset.x-k8s.io/v1alpha2\""))));
  EXPECT_THAT(
      LoadManifest("apiVersion: jobset.x-k8s.io/v1alpha1\nkind: JobSet\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("apiVersion: Unsupported value")));
  EXPECT_THAT(LoadManifest("kind: JobSet\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("apiVersion: Unsupported value: \"\"")));
  EXPECT_THAT(LoadManifest("- a\n- b\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected an object, got a list")));
}

TEST(LoadManifestTest, MalformedYamlNamesTheLine) {
  EXPECT_THAT(LoadManifest("kind: JobSet\nmetadata: {name: a\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not valid YAML or JSON: line")));
  EXPECT_THAT(LoadManifest("a: b\n c: d\n  - e"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line")));
  EXPECT_THAT(LoadManifest("{\"kind\": \"JobSet\",}"), Not(IsOk()));
  constexpr char kBinary[] = "kind: \"Job\xff\xfe\"\n\0garbage";
  EXPECT_THAT(LoadManifest(std::string(kBinary, sizeof(kBinary) - 1)),
              Not(IsOk()));
}

// yaml-cpp 0.7's LoadAll never returned on these (fuzz/manifest_fuzzer).
TEST(LoadManifestTest, AStrayCommaIsAnErrorNotAnEndlessLoop) {
  for (const char* text :
       {",", ", a", "{} ,", "[a],", "kind: JobSet\n,\n", "a: 1\n---\n,"}) {
    EXPECT_THAT(LoadManifest(text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("not valid YAML or JSON: line")))
        << text;
    PodSpec pod;
    EXPECT_THAT(ParseManifestDocument(text, &pod, nullptr), Not(IsOk()))
        << text;
  }
  // Documents that do end, one after another, still load.
  EXPECT_THAT(LoadManifest("---\n---\n...\n---\n"), IsOk());
}

TEST(LoadManifestTest, HugeInputIsRefusedBeforeParsing) {
  std::string huge = "kind: JobSet\nmetadata:\n  annotations:\n    a: \"";
  huge.append(kMaxManifestBytes, 'x');
  huge.append("\"\n");
  EXPECT_THAT(LoadManifest(huge),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("over the limit of 1572864 bytes (1.5 MiB)")));
}

TEST(LoadManifestTest, DeepNestingIsRefusedNotCrashed) {
  std::string deep(5000, '[');
  deep.append(5000, ']');
  EXPECT_THAT(LoadManifest(deep), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("nested too deeply")));
  EXPECT_THAT(LoadManifest(std::string(100000, '[')), Not(IsOk()));
  std::string nested = "kind: JobSet\nstatus: {conditions: [";
  nested.append(1000, '[');
  nested.append(1000, ']');
  nested.append("]}\n");
  EXPECT_THAT(LoadManifest(nested), Not(IsOk()));
}

TEST(LoadManifestTest, AliasExpansionIsBounded) {
  // "Billion laughs": each level doubles ten times.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) {
      bomb += (j ? ", *a" : "*a") + std::to_string(i - 1);
    }
    bomb += "]\n";
  }
  bomb =
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nspec:\n  "
      "volumeClaimPolicies:\n  - templates:\n    - spec:\n" +
      [&] {
        std::string indented;
        for (absl::string_view line : absl::StrSplit(bomb, '\n')) {
          if (!line.empty()) indented += "        " + std::string(line) + "\n";
        }
        return indented;
      }();
  EXPECT_THAT(LoadManifest(bomb), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("too many nodes")));
}

TEST(ParseManifestDocumentTest, ParsesOneDocumentIntoAnyMessage) {
  PodSpec pod;
  std::vector<std::string> warnings;
  EXPECT_THAT(ParseManifestDocument(
                  "containers: [{name: a, image: b}]\ndnsPolicy: Default\n",
                  &pod, &warnings),
              IsOk());
  EXPECT_EQ(pod.containers(0).image(), "b");
  EXPECT_THAT(warnings, ElementsAre("dnsPolicy: ignored by jobsetd"));
  EXPECT_THAT(ParseManifestDocument("a: 1\n---\nb: 2\n", &pod, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exactly one document")));
}

TEST(ReadDocumentTypeTest, ReadsApiVersionAndKindOnly) {
  absl::StatusOr<DocumentType> type = ReadDocumentType(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
      "spec: {anything: [goes]}\n");
  ASSERT_THAT(type, IsOk());
  EXPECT_EQ(type->api_version, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(type->kind, "ClusterQueue");

  type = ReadDocumentType(R"({"kind": ["not", "a", "string"]})");
  ASSERT_THAT(type, IsOk());
  EXPECT_EQ(type->api_version, "");
  EXPECT_EQ(type->kind, "");

  EXPECT_THAT(ReadDocumentType("kind: [A"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not valid YAML or JSON")));
  EXPECT_THAT(ReadDocumentType("kind: A\n---\nkind: B\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exactly one document, got 2")));
  EXPECT_THAT(ReadDocumentType(std::string(kMaxManifestBytes + 1, ' ')),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

}  // namespace
}  // namespace jobset::api
