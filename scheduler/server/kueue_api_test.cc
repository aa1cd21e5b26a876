#include "scheduler/server/kueue_api.h"

#include "scheduler/server/kueue_api_test_fixture.h"

namespace jobset::scheduler {
namespace {

using kueue_api_test::kClusterQueue;
using kueue_api_test::KueueApiTest;
using kueue_api_test::ListOf;
using kueue_api_test::LocalQueue;
using kueue_api_test::Names;
using kueue_api_test::Parse;
using kueue_api_test::Ref;
using kueue_api_test::Request;

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(KueueApiTest, CreateStoresMetadataAndSpecWithDefaults) {
  clock_.SetTime(absl::FromUnixSeconds(1'700'000'123));
  absl::StatusOr<api::ApplyKueueObjectResponse> created =
      api_.Apply(Request(kClusterQueue));
  ASSERT_THAT(created, IsOk());
  EXPECT_TRUE(created->created());
  EXPECT_FALSE(created->unchanged());
  const api::ClusterQueue& cq = created->object().cluster_queue();
  EXPECT_EQ(cq.api_version(), "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(cq.kind(), "ClusterQueue");
  EXPECT_EQ(cq.metadata().name(), "research");
  EXPECT_EQ(cq.metadata().labels().at("team"), "ml");
  EXPECT_FALSE(cq.metadata().uid().empty());
  EXPECT_EQ(cq.metadata().generation(), 1);
  EXPECT_EQ(cq.metadata().creation_timestamp().seconds(), 1'700'000'123);
  EXPECT_EQ(cq.metadata().resource_version(),
            absl::StrCat(store_.CurrentRevision()));
  // Kueue's defaults.
  EXPECT_EQ(cq.spec().queueing_strategy(), "BestEffortFIFO");
  EXPECT_EQ(cq.spec().preemption().within_cluster_queue(), "Never");

  // Stored under kueue/clusterqueues/<name>, without apiVersion, kind and
  // resourceVersion.
  std::optional<store::KeyValue> raw =
      Raw(store::keys::KueueKey("clusterqueues", "", "research"));
  ASSERT_TRUE(raw.has_value());
  api::KueueObject stored;
  ASSERT_TRUE(stored.ParseFromString(raw->value));
  EXPECT_EQ(stored.cluster_queue().api_version(), "");
  EXPECT_EQ(stored.cluster_queue().kind(), "");
  EXPECT_EQ(stored.cluster_queue().metadata().resource_version(), "");
  EXPECT_EQ(stored.cluster_queue().spec().cohort(), "org");

  absl::StatusOr<api::KueueObject> got =
      api_.Get(Ref("ClusterQueue", "research"));
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->cluster_queue().kind(), "ClusterQueue");
  EXPECT_EQ(got->cluster_queue().metadata().uid(), cq.metadata().uid());
  EXPECT_EQ(got->cluster_queue().metadata().resource_version(),
            absl::StrCat(raw->mod_revision));
}

TEST_F(KueueApiTest, ApplyAgainIsUnchangedAndGenerationCountsSpecChanges) {
  absl::StatusOr<api::ApplyKueueObjectResponse> created =
      api_.Apply(Request(kClusterQueue));
  ASSERT_THAT(created, IsOk());
  const std::string uid = created->object().cluster_queue().metadata().uid();
  const int64_t revision = store_.CurrentRevision();
  clock_.Advance(absl::Hours(1));

  // The same object (a status, a uid-less metadata and all): nothing written.
  absl::StatusOr<api::ApplyKueueObjectResponse> again =
      api_.Apply(Request(kClusterQueue));
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->unchanged());
  EXPECT_FALSE(again->created());
  EXPECT_EQ(store_.CurrentRevision(), revision);
  EXPECT_EQ(again->object().cluster_queue().metadata().resource_version(),
            absl::StrCat(revision));

  // Labels only: written, generation kept.
  std::string relabelled = kClusterQueue;
  relabelled.replace(relabelled.find("team: ml"), 8, "team: cv");
  absl::StatusOr<api::ApplyKueueObjectResponse> labels =
      api_.Apply(Request(relabelled));
  ASSERT_THAT(labels, IsOk());
  EXPECT_FALSE(labels->unchanged());
  EXPECT_EQ(labels->object().cluster_queue().metadata().generation(), 1);
  EXPECT_EQ(labels->object().cluster_queue().metadata().labels().at("team"),
            "cv");
  EXPECT_GT(store_.CurrentRevision(), revision);

  // The spec: generation + 1; uid and creationTimestamp stay.
  std::string respec = relabelled;
  respec.replace(respec.find("nominalQuota: 96"), 16, "nominalQuota: 64");
  absl::StatusOr<api::ApplyKueueObjectResponse> spec =
      api_.Apply(Request(respec));
  ASSERT_THAT(spec, IsOk());
  const api::ObjectMeta& meta = spec->object().cluster_queue().metadata();
  EXPECT_EQ(meta.generation(), 2);
  EXPECT_EQ(meta.uid(), uid);
  EXPECT_EQ(meta.creation_timestamp().seconds(), created->object()
                                                     .cluster_queue()
                                                     .metadata()
                                                     .creation_timestamp()
                                                     .seconds());
  EXPECT_EQ(api_.Get(Ref("ClusterQueue", "research"))
                ->cluster_queue()
                .spec()
                .resource_groups(0)
                .flavors(0)
                .resources(0)
                .nominal_quota(),
            "64");
}

TEST_F(KueueApiTest, WorkloadPriorityClassValueAndDescriptionAreItsSpec) {
  const char* wpc =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
      "metadata: {name: flagship}\nvalue: 10000\ndescription: first\n";
  ASSERT_THAT(api_.Apply(Request(wpc)), IsOk());
  EXPECT_TRUE(api_.Apply(Request(wpc))->unchanged());
  absl::StatusOr<api::ApplyKueueObjectResponse> value = api_.Apply(Request(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
      "metadata: {name: flagship}\nvalue: 20000\ndescription: first\n"));
  ASSERT_THAT(value, IsOk());
  EXPECT_EQ(value->object().workload_priority_class().value(), 20000);
  EXPECT_EQ(value->object().workload_priority_class().metadata().generation(),
            2);
  absl::StatusOr<api::ApplyKueueObjectResponse> description =
      api_.Apply(Request(
          "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
          "metadata: {name: flagship}\nvalue: 20000\ndescription: second\n"));
  ASSERT_THAT(description, IsOk());
  EXPECT_EQ(
      description->object().workload_priority_class().metadata().generation(),
      3);
  EXPECT_EQ(api_.Get(Ref("WorkloadPriorityClass", "flagship"))
                ->workload_priority_class()
                .description(),
            "second");
}

TEST_F(KueueApiTest, CreateOnlyAndDryRun) {
  api::ApplyKueueObjectRequest dry = Request(kClusterQueue);
  dry.set_dry_run(true);
  absl::StatusOr<api::ApplyKueueObjectResponse> would = api_.Apply(dry);
  ASSERT_THAT(would, IsOk());
  EXPECT_TRUE(would->created());
  EXPECT_EQ(would->object().cluster_queue().spec().queueing_strategy(),
            "BestEffortFIFO");
  EXPECT_EQ(store_.CurrentRevision(), 0);  // Nothing stored.
  EXPECT_THAT(api_.Get(Ref("ClusterQueue", "research")),
              StatusIs(absl::StatusCode::kNotFound));

  api::ApplyKueueObjectRequest create_only = Request(kClusterQueue);
  create_only.set_create_only(true);
  ASSERT_THAT(api_.Apply(create_only), IsOk());
  EXPECT_THAT(api_.Apply(create_only),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "clusterqueues.kueue.x-k8s.io \"research\" already "
                       "exists"));

  const int64_t revision = store_.CurrentRevision();
  std::string changed = kClusterQueue;
  changed.replace(changed.find("nominalQuota: 96"), 16, "nominalQuota: 10");
  api::ApplyKueueObjectRequest dry_update = Request(changed);
  dry_update.set_dry_run(true);
  absl::StatusOr<api::ApplyKueueObjectResponse> update = api_.Apply(dry_update);
  ASSERT_THAT(update, IsOk());
  EXPECT_FALSE(update->created());
  EXPECT_EQ(update->object().cluster_queue().metadata().generation(), 2);
  EXPECT_EQ(store_.CurrentRevision(), revision);
  EXPECT_EQ(api_.Get(Ref("ClusterQueue", "research"))
                ->cluster_queue()
                .metadata()
                .generation(),
            1);
}

// Kueue's errors, with their field paths; nothing is stored.
TEST_F(KueueApiTest, RefusesWhatKueueRefuses) {
  const struct {
    const char* name;
    std::string manifest;
    std::string message;
  } cases[] = {
      {"a flavor twice", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: h100, resources: [{name: cpu, nominalQuota: 1}]}
    - {name: h100, resources: [{name: cpu, nominalQuota: 2}]}
)",
       "ClusterQueue \"cq\" is invalid: spec.resourceGroups[0].flavors[1]."
       "name: Duplicate value: \"h100\""},
      {"borrowingLimit without a cohort", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: a, resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 2}]}
)",
       "ClusterQueue \"cq\" is invalid: spec: Invalid value: \"object\": "
       "borrowingLimit must be nil when cohort is empty"},
      {"a clusterQueue that is no name",
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
       "metadata: {name: lq, namespace: team}\nspec: {clusterQueue: CQ}\n",
       "LocalQueue \"lq\" is invalid: spec.clusterQueue: Invalid value: "
       "\"CQ\": spec.clusterQueue in body should match"},
      {"a WorkloadPriorityClass without a value",
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
       "metadata: {name: p}\n",
       "WorkloadPriorityClass \"p\" is invalid: value: Required value"},
      {"a bad name",
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
       "metadata: {name: Org}\n",
       "Cohort \"Org\" is invalid: metadata.name: Invalid value: \"Org\""},
      {"no name",
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {}\n",
       "metadata.name: Required value: name or generateName is required"},
      {"generateName",
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
       "metadata: {generateName: org-}\n",
       "Cohort \"org-\" is invalid: metadata.name: Required value: jobsetd "
       "applies objects by name (generateName is not supported)"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(
        api_.Apply(Request(c.manifest)),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
  EXPECT_THAT(api_.Apply(api::ApplyKueueObjectRequest()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "object: Required value: one of ResourceFlavor, "
                       "ClusterQueue, Cohort, LocalQueue, "
                       "WorkloadPriorityClass, Workload"));
  EXPECT_EQ(store_.CurrentRevision(), 0);

  // As Kueue, a LocalQueue may name no ClusterQueue yet.
  EXPECT_THAT(api_.Apply(Request("apiVersion: kueue.x-k8s.io/v1beta1\n"
                                 "kind: LocalQueue\nmetadata: {name: lq}\n")),
              IsOk());
}

TEST_F(KueueApiTest, StatusIsJobsetdsAndKeptAcrossApply) {
  // A client's status on create is not taken.
  absl::StatusOr<api::ApplyKueueObjectResponse> created = api_.Apply(Request(
      absl::StrCat(kClusterQueue,
                   "status: {pendingWorkloads: 7, admittedWorkloads: 3}\n")));
  ASSERT_THAT(created, IsOk());
  EXPECT_FALSE(created->object().cluster_queue().has_status());
  absl::StatusOr<api::KueueObject> got =
      api_.Get(Ref("ClusterQueue", "research"));
  ASSERT_THAT(got, IsOk());
  EXPECT_FALSE(got->cluster_queue().has_status());

  // The controller writes one.
  api::KueueObject with_status = *got;
  with_status.mutable_cluster_queue()->mutable_status()->set_pending_workloads(
      2);
  PutStored(with_status);

  // Apply with another status and a new spec: the controller's stays.
  std::string changed =
      absl::StrCat(kClusterQueue, "status: {pendingWorkloads: 99}\n");
  changed.replace(changed.find("nominalQuota: 96"), 16, "nominalQuota: 50");
  absl::StatusOr<api::ApplyKueueObjectResponse> applied =
      api_.Apply(Request(changed));
  ASSERT_THAT(applied, IsOk());
  EXPECT_FALSE(applied->unchanged());
  EXPECT_EQ(applied->object().cluster_queue().status().pending_workloads(), 2);
  got = api_.Get(Ref("ClusterQueue", "research"));
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->cluster_queue().status().pending_workloads(), 2);
  EXPECT_EQ(got->cluster_queue()
                .spec()
                .resource_groups(0)
                .flavors(0)
                .resources(0)
                .nominal_quota(),
            "50");

  // A status alone is no change.
  absl::StatusOr<api::ApplyKueueObjectResponse> same =
      api_.Apply(Request(absl::StrReplaceAll(
          changed, {{"pendingWorkloads: 99", "pendingWorkloads: 1"}})));
  ASSERT_THAT(same, IsOk());
  EXPECT_TRUE(same->unchanged());
  EXPECT_EQ(same->object().cluster_queue().status().pending_workloads(), 2);
}

TEST_F(KueueApiTest, UpdateRulesAreCheckedAgainstTheStoredObject) {
  // LocalQueue: spec.clusterQueue may not change.
  ASSERT_THAT(api_.Apply(Request(LocalQueue("lq", "team"))), IsOk());
  const int64_t revision = store_.CurrentRevision();
  EXPECT_THAT(
      api_.Apply(
          Request("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                  "metadata: {name: lq, namespace: team}\nspec: {clusterQueue: "
                  "other}\n")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "LocalQueue \"lq\" is invalid: spec.clusterQueue: Invalid "
               "value: \"string\": field is immutable"));

  // ResourceFlavor: topologyName may not change once set.
  const char* tas =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
      "metadata: {name: rf}\nspec: {topologyName: a, nodeLabels: {z: \"1\"}}\n";
  ASSERT_THAT(api_.Apply(Request(tas)), IsOk());
  const int64_t after_rf = store_.CurrentRevision();
  EXPECT_THAT(
      api_.Apply(Request(
          "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
          "metadata: {name: rf}\nspec: {topologyName: b, nodeLabels: {z: "
          "\"1\"}}\n")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "ResourceFlavor \"rf\" is invalid: spec: Invalid value: "
               "\"object\": topologyName is immutable when topologyName is "
               "set"));
  EXPECT_EQ(store_.CurrentRevision(), after_rf);
  EXPECT_GT(after_rf, revision);
  EXPECT_EQ(api_.Get(Ref("LocalQueue", "lq", "team"))
                ->local_queue()
                .spec()
                .cluster_queue(),
            "research");

  // A uid that is not the stored one.
  std::string wrong_uid = LocalQueue("lq", "team", ", uid: not-it");
  EXPECT_THAT(api_.Apply(Request(wrong_uid)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.uid: Invalid value: \"not-it\": "
                                 "field is immutable")));
}

// The stored status decides the Workload's update rules: while it holds
// quota, its podSets and queueName may not change.
TEST_F(KueueApiTest, WorkloadRulesFollowTheStoredReservation) {
  const std::string workload = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team}
spec:
  queueName: q
  podSets:
  - name: workers
    count: 4
    template:
      spec:
        containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
)";
  const std::string reserved = R"(status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}
  admission:
    clusterQueue: cq
    podSetAssignments: [{name: workers, flavors: {cpu: a}, resourceUsage: {cpu: "8"}, count: 4}]
)";
  ASSERT_THAT(api_.Apply(Request(workload)), IsOk());
  // Pending: the queue may change.
  const std::string in_r =
      absl::StrReplaceAll(workload, {{"queueName: q", "queueName: r"}});
  ASSERT_THAT(api_.Apply(Request(in_r)), IsOk());
  // The controller reserves quota.
  api::KueueObject stored = *api_.Get(Ref("Workload", "w", "team"));
  *stored.mutable_workload()->mutable_status() =
      Parse(absl::StrCat(in_r, reserved)).workload().status();
  PutStored(stored);
  // A client that sends no status cannot take the reservation away, so
  // the rules of a reserved Workload hold.
  EXPECT_THAT(api_.Apply(Request(workload)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("queueName is immutable while workload "
                                 "quota reserved")));
  EXPECT_THAT(api_.Apply(Request(
                  absl::StrReplaceAll(in_r, {{"cpu: \"2\"", "cpu: \"3\""}}))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets.0: Invalid value: \"object\": "
                                 "field is immutable")));
  EXPECT_EQ(api_.Get(Ref("Workload", "w", "team"))
                ->workload()
                .status()
                .admission()
                .cluster_queue(),
            "cq");
}

TEST_F(KueueApiTest, NamespacesDefaultedAndClearedByScope) {
  // A namespaced kind without one is in "default".
  absl::StatusOr<api::ApplyKueueObjectResponse> lq =
      api_.Apply(Request(LocalQueue("lq", "")));
  ASSERT_THAT(lq, IsOk());
  EXPECT_EQ(lq->object().local_queue().metadata().namespace_(), "default");
  EXPECT_TRUE(
      Raw(store::keys::KueueKey("localqueues", "default", "lq")).has_value());
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq")), IsOk());
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq", "default")), IsOk());
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq", "team")),
              StatusIs(absl::StatusCode::kNotFound,
                       "localqueues.kueue.x-k8s.io \"lq\" not found"));

  // A cluster-scoped kind's namespace is cleared, as the API server does.
  absl::StatusOr<api::ApplyKueueObjectResponse> cohort =
      api_.Apply(Request("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                         "metadata: {name: org, namespace: team}\n"));
  ASSERT_THAT(cohort, IsOk());
  EXPECT_EQ(cohort->object().cohort().metadata().namespace_(), "");
  EXPECT_TRUE(Raw(store::keys::KueueKey("cohorts", "", "org")).has_value());
  // And ignored when a request names one.
  absl::StatusOr<api::KueueObject> got = api_.Get(Ref("Cohort", "org", "team"));
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->cohort().metadata().namespace_(), "");
  EXPECT_THAT(Names(*api_.List(ListOf("Cohort", "elsewhere"))),
              ElementsAre("/org"));
}

TEST_F(KueueApiTest, ListSortsAndSelects) {
  for (const auto& [name, ns, labels] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"b", "a", ", labels: {tier: gold}"},
           {"a", "a", ""},
           {"c", "a-b", ", labels: {tier: gold}"},
           {"d", "z", ", labels: {tier: bronze}"},
       }) {
    ASSERT_THAT(api_.Apply(Request(LocalQueue(name, ns, labels))), IsOk());
  }
  absl::StatusOr<api::ListKueueObjectsResponse> all =
      api_.List(ListOf("LocalQueue", "", true));
  ASSERT_THAT(all, IsOk());
  // By namespace, then name ("a" before "a-b", whose keys sort first).
  EXPECT_THAT(Names(*all), ElementsAre("a/a", "a/b", "a-b/c", "z/d"));
  EXPECT_EQ(all->resource_version(), absl::StrCat(store_.CurrentRevision()));
  EXPECT_EQ(all->items(0).local_queue().kind(), "LocalQueue");

  EXPECT_THAT(Names(*api_.List(ListOf("LocalQueue", "a"))),
              ElementsAre("a/a", "a/b"));
  EXPECT_THAT(Names(*api_.List(ListOf("LocalQueue"))), ElementsAre());

  api::ListKueueObjectsRequest gold = ListOf("LocalQueue", "", true);
  gold.set_label_selector("tier=gold");
  EXPECT_THAT(Names(*api_.List(gold)), ElementsAre("a/b", "a-b/c"));
  gold.set_label_selector("tier,tier notin (gold)");
  EXPECT_THAT(Names(*api_.List(gold)), ElementsAre("z/d"));
  gold.set_label_selector("tier in ()");
  EXPECT_THAT(api_.List(gold), StatusIs(absl::StatusCode::kInvalidArgument));

  // Other kinds are apart.
  EXPECT_THAT(Names(*api_.List(ListOf("Workload", "", true))), ElementsAre());
  EXPECT_THAT(api_.List(ListOf("Queue")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kind: Unsupported value: \"Queue\"")));
  EXPECT_THAT(api_.List(ListOf("LocalQueue", "Bad_NS")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("namespace \"Bad_NS\"")));
}

TEST_F(KueueApiTest, DeleteReturnsTheLastState) {
  ASSERT_THAT(api_.Apply(Request(kClusterQueue)), IsOk());
  absl::StatusOr<api::KueueObject> deleted =
      api_.Delete(Ref("ClusterQueue", "research"));
  ASSERT_THAT(deleted, IsOk());
  EXPECT_EQ(deleted->cluster_queue().spec().cohort(), "org");
  EXPECT_EQ(deleted->cluster_queue().kind(), "ClusterQueue");
  EXPECT_EQ(deleted->cluster_queue().metadata().resource_version(),
            absl::StrCat(store_.CurrentRevision()));
  EXPECT_FALSE(
      Raw(store::keys::KueueKey("clusterqueues", "", "research")).has_value());
  EXPECT_THAT(api_.Delete(Ref("ClusterQueue", "research")),
              StatusIs(absl::StatusCode::kNotFound,
                       "clusterqueues.kueue.x-k8s.io \"research\" not found"));
  EXPECT_THAT(api_.Delete(Ref("Workload", "w", "team")),
              StatusIs(absl::StatusCode::kNotFound,
                       "workloads.kueue.x-k8s.io \"w\" not found"));
  // Names are checked before they make a key.
  EXPECT_THAT(api_.Delete(Ref("ClusterQueue", "a/b")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name: Invalid value: \"a/b\"")));
  EXPECT_THAT(api_.Get(Ref("ClusterQueue", "")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "resource name may not be empty"));
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq", "a/b")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("namespace \"a/b\"")));
}

// Stored values are not trusted: a bad one is DATA_LOSS naming its key.
}  // namespace
}  // namespace jobset::scheduler
