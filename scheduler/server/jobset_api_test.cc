#include "scheduler/server/jobset_api.h"

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "common/uid.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/cluster.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "scheduler/server/namespace_api.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class JobSetApiTest : public ::testing::Test {
 protected:
  JobSet MustCreate(const JobSet& jobset) {
    auto result = api_.Create(jobset, /*dry_run=*/false);
    EXPECT_THAT(result.status(), IsOk());
    return result.ok() ? result->jobset : JobSet();
  }

  std::vector<std::string> Names(const api::ListJobSetsResponse& list) {
    std::vector<std::string> names;
    for (const JobSet& js : list.items()) {
      names.push_back(
          absl::StrCat(js.metadata().namespace_(), "/", js.metadata().name()));
    }
    return names;
  }

  store::MemoryStore store_{/*history_events=*/100};
  FakeClock clock_;
  JobSetApi api_{&store_, &clock_, {.restart_job = true}};
};

TEST_F(JobSetApiTest, CreateDefaultsAndStampsServerFields) {
  JobSet js = JobSetBuilder("train").Replicated("workers", 2).Build();
  js.mutable_metadata()->set_uid("client-chosen");
  js.mutable_status()->set_restarts(7);
  auto created = api_.Create(js, false);
  ASSERT_THAT(created.status(), IsOk());
  EXPECT_TRUE(created->created);
  const api::ObjectMeta& meta = created->jobset.metadata();
  EXPECT_EQ(meta.namespace_(), "default");
  EXPECT_NE(meta.uid(), "client-chosen");
  EXPECT_THAT(meta.uid(),
              ::testing::MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-["
                                      "89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(meta.generation(), 1);
  EXPECT_EQ(meta.creation_timestamp().seconds(),
            absl::ToUnixSeconds(clock_.Now()));
  EXPECT_EQ(meta.resource_version(), "1");
  EXPECT_EQ(created->jobset.status().restarts(), 0);
  // Defaults applied (upstream's webhook).
  EXPECT_EQ(created->jobset.spec().success_policy().operator_(), "All");
  EXPECT_EQ(created->jobset.spec().replicated_jobs(0).group_name(), "default");

  auto got = api_.Get("", "train");
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_TRUE(MessageDifferencer::Equals(*got, created->jobset));
}

// Kueue's webhook: a JobSet labelled for a queue is stored suspended (the
// controller starts it once admitted); an unlabelled one is left alone;
// Kueue's label rules refuse a bad one, and the queue may not change while
// it runs.
TEST_F(JobSetApiTest, KueueManagedJobSetsAreCreatedSuspended) {
  JobSet queued = MustCreate(JobSetBuilder("queued")
                                 .Label("kueue.x-k8s.io/queue-name", "team-a")
                                 .Replicated("workers", 1)
                                 .Build());
  EXPECT_TRUE(queued.spec().suspend());
  JobSet plain =
      MustCreate(JobSetBuilder("plain").Replicated("workers", 1).Build());
  EXPECT_FALSE(plain.spec().suspend());

  auto bad =
      api_.Create(JobSetBuilder("bad")
                      .Label("kueue.x-k8s.io/queue-name", "team-a")
                      .Label("kueue.x-k8s.io/max-exec-time-seconds", "1h")
                      .Replicated("workers", 1)
                      .Build(),
                  false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("kueue.x-k8s.io/max-exec-time-seconds"));

  // Running (as the controller stores it once admitted), its queue is fixed.
  queued.mutable_spec()->set_suspend(false);
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::JobSetKey("default", "queued"),
                      [&] {
                        JobSet stored = queued;
                        stored.mutable_metadata()->clear_resource_version();
                        return stored.SerializeAsString();
                      }()))
                  .status(),
              IsOk());
  JobSet moved = queued;
  moved.mutable_metadata()->clear_resource_version();
  (*moved.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
      "team-b";
  auto updated = api_.Update(moved, false);
  EXPECT_EQ(updated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(updated.status().message(), HasSubstr("field is immutable"));
}

// Kueue's LocalQueueDefaulting (§6 scenario 31): with a LocalQueue named
// "default" in its namespace, an unlabelled JobSet is queued there, and the
// label cannot be removed later; elsewhere it runs unmanaged.
TEST_F(JobSetApiTest, TheDefaultLocalQueueTakesUnlabelledJobSets) {
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::KueueKey("localqueues", "team-a", "default"),
                      "stored LocalQueue"))
                  .status(),
              IsOk());
  JobSet queued = MustCreate(
      JobSetBuilder("queued").Namespace("team-a").Replicated("w", 1).Build());
  EXPECT_EQ(queued.metadata().labels().at("kueue.x-k8s.io/queue-name"),
            "default");
  EXPECT_TRUE(queued.spec().suspend());
  JobSet elsewhere =
      MustCreate(JobSetBuilder("elsewhere").Replicated("w", 1).Build());
  EXPECT_FALSE(
      elsewhere.metadata().labels().contains("kueue.x-k8s.io/queue-name"));
  EXPECT_FALSE(elsewhere.spec().suspend());
  JobSet unlabelled = queued;
  unlabelled.mutable_metadata()->clear_resource_version();
  unlabelled.mutable_metadata()->mutable_labels()->erase(
      "kueue.x-k8s.io/queue-name");
  EXPECT_EQ(api_.Update(unlabelled, false).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Applying the same manifest again to a JobSet Kueue admitted leaves it as
// it is: suspend and the flavor Kueue injected are Kueue's, as kubectl
// apply's merge keeps what a manifest does not set.
TEST_F(JobSetApiTest, ReapplyingAKueueAdmittedJobSetKeepsWhatKueueSet) {
  const JobSet manifest = JobSetBuilder("queued")
                              .Label("kueue.x-k8s.io/queue-name", "team-a")
                              .Replicated("workers", 1)
                              .Build();
  JobSet created = MustCreate(manifest);
  // The controller's admission: the Workload keeps the template as it was,
  // the JobSet runs with the flavor's nodeSelector.
  api::KueueObject workload;
  api::PodSet* pod_set =
      workload.mutable_workload()->mutable_spec()->add_pod_sets();
  pod_set->set_name("workers");
  *pod_set->mutable_template_() =
      created.spec().replicated_jobs(0).template_().spec().template_();
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::KueueKey("workloads", "default",
                                            queues::WorkloadName(created)),
                      workload.SerializeAsString()))
                  .status(),
              IsOk());
  JobSet admitted = created;
  admitted.mutable_spec()->set_suspend(false);
  (*admitted.mutable_spec()
        ->mutable_replicated_jobs(0)
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_node_selector())["pool"] = "h100";
  admitted.mutable_metadata()->clear_resource_version();
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::JobSetKey("default", "queued"),
                      admitted.SerializeAsString()))
                  .status(),
              IsOk());

  JobSet again = manifest;
  again.mutable_metadata()->set_namespace_("default");
  auto updated = api_.Update(again, false);
  ASSERT_THAT(updated.status(), IsOk());
  EXPECT_FALSE(updated->spec().suspend());
  EXPECT_EQ(updated->spec()
                .replicated_jobs(0)
                .template_()
                .spec()
                .template_()
                .spec()
                .node_selector()
                .at("pool"),
            "h100");
}

TEST_F(JobSetApiTest, CreateIsIdempotentForTheSameSpec) {
  JobSet js = JobSetBuilder("train").Replicated("workers", 2).Build();
  JobSet first = MustCreate(js);
  auto again = api_.Create(js, false);
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->jobset.metadata().uid(), first.metadata().uid());
  EXPECT_EQ(store_.CurrentRevision(), 1);

  JobSet different = JobSetBuilder("train").Replicated("workers", 3).Build();
  EXPECT_THAT(
      api_.Create(different, false).status(),
      StatusIs(absl::StatusCode::kAlreadyExists,
               AllOf(HasSubstr("\"train\""), HasSubstr("different spec"))));
}

TEST_F(JobSetApiTest, CreateRejectsInvalidSpecsWithFieldPaths) {
  JobSet js = JobSetBuilder("train").Replicated("workers", 2).Build();
  js.mutable_spec()->mutable_replicated_jobs(0)->set_replicas(-1);
  EXPECT_THAT(api_.Create(js, false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.replicatedJobs[0].replicas")));
  JobSet bad_name = JobSetBuilder("Not_A_Name").Replicated("w", 1).Build();
  EXPECT_THAT(
      api_.Create(bad_name, false).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.name")));
  EXPECT_EQ(store_.CurrentRevision(), 0);
}

TEST_F(JobSetApiTest, CreateRefusesOversizedJobSets) {
  JobSet js = JobSetBuilder("big").Replicated("w", 1).Build();
  (*js.mutable_metadata()->mutable_annotations())["blob"] =
      std::string(JobSetApi::kMaxJobSetBytes, 'x');
  EXPECT_THAT(api_.Create(js, false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("1572864"), HasSubstr("1.5 MiB"))));
}

TEST_F(JobSetApiTest, DryRunStoresNothing) {
  auto result =
      api_.Create(JobSetBuilder("x").Replicated("w", 1).Build(), true);
  ASSERT_THAT(result.status(), IsOk());
  EXPECT_EQ(result->jobset.spec().success_policy().operator_(), "All");
  EXPECT_EQ(store_.CurrentRevision(), 0);
}

TEST_F(JobSetApiTest, GenerateNameAddsASuffix) {
  JobSet js = JobSetBuilder("ignored").Replicated("w", 1).Build();
  js.mutable_metadata()->clear_name();
  js.mutable_metadata()->set_generate_name("run-");
  JobSet a = MustCreate(js);
  JobSet b = MustCreate(js);
  EXPECT_THAT(a.metadata().name(), ::testing::MatchesRegex("run-[a-z0-9]{5}"));
  EXPECT_NE(a.metadata().name(), b.metadata().name());
}

TEST_F(JobSetApiTest, GetNamesWhatIsMissingOrInvalid) {
  EXPECT_THAT(api_.Get("default", "nope").status(),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("\"nope\""), HasSubstr("default"))));
  EXPECT_THAT(api_.Get("a/b", "x").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace")));
  EXPECT_THAT(
      api_.Get("default", "").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.name")));
}

TEST_F(JobSetApiTest, ListFiltersByNamespaceAndSelector) {
  MustCreate(JobSetBuilder("a").Label("team", "ml").Replicated("w", 1).Build());
  MustCreate(
      JobSetBuilder("b").Label("team", "infra").Replicated("w", 1).Build());
  MustCreate(JobSetBuilder("c")
                 .Namespace("other")
                 .Label("team", "ml")
                 .Replicated("w", 1)
                 .Build());

  api::ListJobSetsRequest request;
  auto list = api_.List(request);
  ASSERT_THAT(list.status(), IsOk());
  EXPECT_THAT(Names(*list), ElementsAre("default/a", "default/b"));
  EXPECT_EQ(list->resource_version(), "3");
  EXPECT_EQ(list->continue_(), "");

  request.set_all_namespaces(true);
  request.set_label_selector("team=ml");
  EXPECT_THAT(Names(*api_.List(request)), ElementsAre("default/a", "other/c"));
  request.set_label_selector("team notin (ml)");
  EXPECT_THAT(Names(*api_.List(request)), ElementsAre("default/b"));
  request.set_label_selector("team in (");
  EXPECT_THAT(api_.List(request).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("label selector")));
}

TEST_F(JobSetApiTest, ListPagesWithAContinueToken) {
  for (int i = 0; i < 7; ++i) {
    MustCreate(JobSetBuilder(absl::StrCat("js-", i))
                   .Label("parity", i % 2 == 0 ? "even" : "odd")
                   .Replicated("w", 1)
                   .Build());
  }
  api::ListJobSetsRequest request;
  request.set_limit(2);
  request.set_label_selector("parity=even");  // js-0, js-2, js-4, js-6.
  std::vector<std::string> all;
  int pages = 0;
  do {
    auto page = api_.List(request);
    ASSERT_THAT(page.status(), IsOk());
    EXPECT_LE(page->items_size(), 2);
    for (const std::string& name : Names(*page)) all.push_back(name);
    request.set_continue_(page->continue_());
    ++pages;
  } while (!request.continue_().empty() && pages < 10);
  EXPECT_THAT(all, ElementsAre("default/js-0", "default/js-2", "default/js-4",
                               "default/js-6"));
  EXPECT_EQ(pages, 2);

  request.set_continue_("garbage");
  EXPECT_THAT(
      api_.List(request).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("continue")));
  request.set_continue_("");
  request.set_limit(JobSetApi::kMaxListLimit + 1);
  EXPECT_THAT(api_.List(request).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("10000")));
}

TEST_F(JobSetApiTest, ContinueTokenOfAnotherNamespaceIsRefused) {
  MustCreate(JobSetBuilder("a").Replicated("w", 1).Build());
  MustCreate(JobSetBuilder("b").Replicated("w", 1).Build());
  api::ListJobSetsRequest request;
  request.set_limit(1);
  auto page = api_.List(request);
  ASSERT_THAT(page.status(), IsOk());
  ASSERT_FALSE(page->continue_().empty());
  request.set_namespace_("other");
  request.set_continue_(page->continue_());
  EXPECT_THAT(
      api_.List(request).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("continue")));
}

TEST_F(JobSetApiTest, UpdateComparesResourceVersions) {
  JobSet created =
      MustCreate(JobSetBuilder("train").Replicated("w", 1).Build());
  JobSet change = created;
  (*change.mutable_metadata()->mutable_labels())["owner"] = "alice";
  auto updated = api_.Update(change, false);
  ASSERT_THAT(updated.status(), IsOk());
  EXPECT_EQ(updated->metadata().labels().at("owner"), "alice");
  EXPECT_EQ(updated->metadata().generation(), 1);  // Metadata only.
  EXPECT_NE(updated->metadata().resource_version(),
            created.metadata().resource_version());

  // `change` still carries the old resourceVersion.
  (*change.mutable_metadata()->mutable_labels())["owner"] = "bob";
  EXPECT_THAT(api_.Update(change, false).status(),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("the object has been modified")));
  change.mutable_metadata()->set_resource_version("x1");
  EXPECT_THAT(api_.Update(change, false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.resourceVersion")));
}

TEST_F(JobSetApiTest, UpdateEnforcesUpstreamImmutability) {
  JobSet created =
      MustCreate(JobSetBuilder("train").Replicated("w", 1).Build());
  JobSet change = created;
  change.mutable_spec()->mutable_replicated_jobs(0)->set_replicas(5);
  EXPECT_THAT(api_.Update(change, false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.replicatedJobs")));

  change = created;
  change.mutable_spec()->set_suspend(true);
  auto suspended = api_.Update(change, false);
  ASSERT_THAT(suspended.status(), IsOk());
  EXPECT_EQ(suspended->metadata().generation(), 2);
}

TEST_F(JobSetApiTest, UpdateLeavesStatusToTheController) {
  JobSet created =
      MustCreate(JobSetBuilder("train").Replicated("w", 1).Build());
  // The controller writes status directly to the store.
  JobSet with_status = created;
  with_status.mutable_status()->set_restarts(2);
  with_status.mutable_metadata()->clear_resource_version();
  ASSERT_THAT(
      store_
          .Commit(store::Batch().Put(store::keys::JobSetKey("default", "train"),
                                     with_status.SerializeAsString()))
          .status(),
      IsOk());
  JobSet change = *api_.Get("default", "train");
  change.mutable_status()->set_restarts(0);
  (*change.mutable_metadata()->mutable_annotations())["note"] = "x";
  auto updated = api_.Update(change, false);
  ASSERT_THAT(updated.status(), IsOk());
  EXPECT_EQ(updated->status().restarts(), 2);
}

TEST_F(JobSetApiTest, ConcurrentReadModifyWriteLosesNoUpdate) {
  MustCreate(JobSetBuilder("counter")
                 .Annotation("count", "0")
                 .Replicated("w", 1)
                 .Build());
  constexpr int kClients = 6;
  constexpr int kIncrements = 25;
  std::atomic<int> conflicts = 0;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        auto js = api_.Get("default", "counter");
        ASSERT_THAT(js.status(), IsOk());
        int count;
        ASSERT_TRUE(
            absl::SimpleAtoi(js->metadata().annotations().at("count"), &count));
        (*js->mutable_metadata()->mutable_annotations())["count"] =
            absl::StrCat(count + 1);
        auto updated = api_.Update(*js, false);
        if (updated.ok()) {
          ++done;
        } else {
          ASSERT_THAT(updated.status(), StatusIs(absl::StatusCode::kAborted));
          ++conflicts;
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(
      api_.Get("default", "counter")->metadata().annotations().at("count"),
      absl::StrCat(kClients * kIncrements));
  ::testing::Test::RecordProperty("conflicts", conflicts.load());
}

TEST_F(JobSetApiTest, SuspendAndResume) {
  MustCreate(JobSetBuilder("train").Replicated("w", 1).Build());
  auto suspended = api_.SetSuspend("default", "train", true);
  ASSERT_THAT(suspended.status(), IsOk());
  EXPECT_TRUE(suspended->spec().suspend());
  auto resumed = api_.SetSuspend("", "train", false);
  ASSERT_THAT(resumed.status(), IsOk());
  EXPECT_FALSE(resumed->spec().suspend());
  EXPECT_EQ(resumed->metadata().generation(), 3);
  EXPECT_THAT(api_.SetSuspend("default", "nope", true).status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(JobSetApiTest, DeleteComparesResourceVersionAndReturnsTheLastState) {
  JobSet created =
      MustCreate(JobSetBuilder("train").Replicated("w", 1).Build());
  EXPECT_THAT(api_.Delete("default", "train", "999").status(),
              StatusIs(absl::StatusCode::kAborted));
  auto deleted =
      api_.Delete("default", "train", created.metadata().resource_version());
  ASSERT_THAT(deleted.status(), IsOk());
  EXPECT_EQ(deleted->metadata().uid(), created.metadata().uid());
  EXPECT_THAT(api_.Get("default", "train").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(api_.Delete("default", "train", "").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(JobSetApiTest, WatchListsThenStreamsChanges) {
  MustCreate(JobSetBuilder("a").Replicated("w", 1).Build());
  auto watch = api_.StartWatch(api::WatchJobSetsRequest());
  ASSERT_THAT(watch.status(), IsOk());
  auto events = watch->Next(absl::InfinitePast());
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_EQ((*events)[0].type(), "ADDED");

  MustCreate(JobSetBuilder("b").Replicated("w", 1).Build());
  ASSERT_THAT(api_.SetSuspend("default", "a", true).status(), IsOk());
  ASSERT_THAT(api_.Delete("default", "b", "").status(), IsOk());
  MustCreate(JobSetBuilder("c").Namespace("other").Replicated("w", 1).Build());
  events = watch->Next(absl::InfinitePast());
  ASSERT_THAT(events.status(), IsOk());
  std::vector<std::string> seen;
  for (const api::WatchEvent& e : *events) {
    seen.push_back(absl::StrCat(e.type(), " ", e.object().metadata().name(),
                                " ", e.object().metadata().resource_version()));
  }
  EXPECT_THAT(seen, ElementsAre("ADDED b 2", "MODIFIED a 3", "DELETED b 4"));
  events = watch->Next(absl::Now() + absl::Milliseconds(10));
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, IsEmpty());
}

TEST_F(JobSetApiTest, WatchResumesFromAResourceVersionOrSaysListAgain) {
  MustCreate(JobSetBuilder("a").Label("team", "ml").Replicated("w", 1).Build());
  MustCreate(JobSetBuilder("b").Replicated("w", 1).Build());
  api::WatchJobSetsRequest request;
  request.set_resource_version("1");
  request.set_label_selector("team=ml");
  auto watch = api_.StartWatch(request);
  ASSERT_THAT(watch.status(), IsOk());
  ASSERT_THAT(api_.SetSuspend("default", "a", true).status(), IsOk());
  auto events = watch->Next(absl::InfinitePast());
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));  // b does not match the selector.
  EXPECT_EQ((*events)[0].type(), "MODIFIED");

  // The history holds 100 events; 150 more changes push revision 1 out.
  for (int i = 0; i < 150; ++i) {
    ASSERT_THAT(api_.SetSuspend("default", "b", i % 2 == 0).status(), IsOk());
  }
  auto stale = api_.StartWatch(request);
  ASSERT_THAT(stale.status(), IsOk());
  EXPECT_THAT(stale->Next(absl::InfinitePast()).status(),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("list again")));
}

TEST_F(JobSetApiTest, CorruptStoredJobSetIsReportedNotServed) {
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::JobSetKey("default", "bad"), "\xff\xff\xff"))
                  .status(),
              IsOk());
  EXPECT_THAT(
      api_.Get("default", "bad").status(),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("jobsets/default/bad")));
  EXPECT_THAT(api_.List(api::ListJobSetsRequest()).status(),
              StatusIs(absl::StatusCode::kDataLoss));
}

// Stores `message` at `key` as the controller would.
template <typename Message>
void Put(store::Store& store, const std::string& key, const Message& message) {
  ASSERT_THAT(store.Commit(store::Batch().Put(key, message.SerializeAsString()))
                  .status(),
              IsOk());
}

template <typename List>
std::vector<std::string> ItemNames(const List& list) {
  std::vector<std::string> names;
  for (const auto& item : list.items()) names.push_back(item.metadata().name());
  return names;
}

TEST_F(JobSetApiTest, ListJobsAndPodsOfANamespaceOrOneJobSet) {
  for (const auto& [ns, jobset, name] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"default", "a", "a-workers-0"},
           {"default", "a", "a-workers-1"},
           {"default", "ab", "ab-workers-0"},
           {"other", "a", "a-other-0"}}) {
    api::Job job;
    job.mutable_metadata()->set_name(name);
    job.mutable_metadata()->set_namespace_(ns);
    Put(store_, store::keys::JobKey(ns, jobset, name), job);
    // Pods are stored as records beside their Job, which they are built from.
    api::JobPods pods;
    api::PodRecord* pod = pods.add_pods();
    pod->set_name(absl::StrCat(name, "-0-x"));
    pod->set_completion_index(0);
    pod->set_node_name("node-1");
    pod->mutable_status()->set_host_ip("10.0.0.1");
    Put(store_, store::keys::JobPodsKey(ns, jobset, name), pods);
  }

  api::ListJobsRequest jobs_request;
  auto all_jobs = api_.ListJobs(jobs_request);
  ASSERT_THAT(all_jobs.status(), IsOk());
  EXPECT_THAT(ItemNames(*all_jobs),
              ElementsAre("a-workers-0", "a-workers-1", "ab-workers-0"));
  EXPECT_EQ(all_jobs->resource_version(), "8");

  // "a" must not match JobSet "ab" by prefix.
  jobs_request.set_jobset("a");
  auto of_a = api_.ListJobs(jobs_request);
  ASSERT_THAT(of_a.status(), IsOk());
  EXPECT_THAT(ItemNames(*of_a), ElementsAre("a-workers-0", "a-workers-1"));

  api::ListPodsRequest pods_request;
  pods_request.set_namespace_("other");
  auto pods = api_.ListPods(pods_request);
  ASSERT_THAT(pods.status(), IsOk());
  EXPECT_THAT(ItemNames(*pods), ElementsAre("a-other-0-0-x"));
  EXPECT_EQ(pods->items(0).metadata().namespace_(), "other");
  EXPECT_EQ(
      pods->items(0).metadata().labels().at("batch.kubernetes.io/job-name"),
      "a-other-0");
  EXPECT_EQ(pods->items(0).spec().node_name(), "node-1");
  EXPECT_EQ(pods->items(0).status().host_ip(), "10.0.0.1");
  EXPECT_EQ(pods->resource_version(), "8");

  // "a" must not match JobSet "ab" by prefix.
  pods_request.set_namespace_("default");
  pods_request.set_jobset("a");
  auto pods_of_a = api_.ListPods(pods_request);
  ASSERT_THAT(pods_of_a.status(), IsOk());
  EXPECT_THAT(ItemNames(*pods_of_a),
              ElementsAre("a-workers-0-0-x", "a-workers-1-0-x"));

  pods_request.set_jobset("missing");
  auto none = api_.ListPods(pods_request);
  ASSERT_THAT(none.status(), IsOk());
  EXPECT_THAT(none->items(), IsEmpty());
}

// Issue 39: agents report containers flat ({"state":"terminated",
// "exitCode":...}); ListPods serves Kubernetes' core/v1 ContainerStatus.
TEST_F(JobSetApiTest, ListedPodsHaveKubernetesContainerStatuses) {
  api::Job job;
  job.mutable_metadata()->set_name("a-w-0");
  job.mutable_metadata()->set_namespace_("default");
  api::Container* main =
      job.mutable_spec()->mutable_template_()->mutable_spec()->add_containers();
  main->set_name("main");
  main->set_image("busybox");
  Put(store_, store::keys::JobKey("default", "a", "a-w-0"), job);
  api::JobPods pods;
  api::PodRecord* pod = pods.add_pods();
  pod->set_name("a-w-0-0-x");
  pod->set_completion_index(0);
  pod->set_node_name("node-1");
  pod->mutable_status()->set_phase("Succeeded");
  api::ContainerStatus* c = pod->mutable_status()->add_container_statuses();
  c->set_name("main");
  c->set_flat_state("terminated");
  c->set_exit_code(0);
  c->set_reason("Completed");
  c->mutable_finished_at()->set_seconds(60);
  Put(store_, store::keys::JobPodsKey("default", "a", "a-w-0"), pods);

  auto listed = api_.ListPods(api::ListPodsRequest());
  ASSERT_THAT(listed.status(), IsOk());
  ASSERT_THAT(listed->items(), SizeIs(1));
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  listed->items(0).status().container_statuses(0), &json)
                  .ok());
  EXPECT_EQ(json,
            R"j({"name":"main","ready":false,"restartCount":0,)j"
            R"j("state":{"terminated":{"exitCode":0,"reason":"Completed",)j"
            R"j("finishedAt":"1970-01-01T00:01:00Z"}},"lastState":{},)j"
            R"j("image":"busybox","imageID":"","started":false})j");
}

// The controller stores Jobs compact (the JobSet's keys once, as labels):
// clients get upstream's Jobs and pods, the keys on the template and pods too.
TEST_F(JobSetApiTest, ListedJobsAndPodsHaveUpstreamsLabelsAndAnnotations) {
  api::Job job;
  job.mutable_metadata()->set_name("a-workers-0");
  job.mutable_metadata()->set_namespace_("default");
  (*job.mutable_metadata()
        ->mutable_labels())["jobset.sigs.k8s.io/jobset-name"] = "a";
  (*job.mutable_metadata()->mutable_labels())["jobset.sigs.k8s.io/job-index"] =
      "0";
  (*job.mutable_metadata()->mutable_annotations())
      ["alpha.jobset.sigs.k8s.io/exclusive-topology"] = "rack";
  Put(store_, store::keys::JobKey("default", "a", "a-workers-0"), job);
  api::JobPods pods;
  pods.add_pods()->set_name("a-workers-0-0-x");
  Put(store_, store::keys::JobPodsKey("default", "a", "a-workers-0"), pods);

  auto jobs = api_.ListJobs(api::ListJobsRequest());
  ASSERT_THAT(jobs.status(), IsOk());
  ASSERT_EQ(jobs->items_size(), 1);
  const api::Job& listed = jobs->items(0);
  EXPECT_EQ(listed.metadata().annotations().at("jobset.sigs.k8s.io/job-index"),
            "0");
  const api::ObjectMeta& tmpl = listed.spec().template_().metadata();
  EXPECT_EQ(tmpl.labels().at("jobset.sigs.k8s.io/jobset-name"), "a");
  EXPECT_EQ(tmpl.annotations().at("jobset.sigs.k8s.io/job-index"), "0");
  EXPECT_EQ(
      tmpl.annotations().at("alpha.jobset.sigs.k8s.io/exclusive-topology"),
      "rack");

  auto listed_pods = api_.ListPods(api::ListPodsRequest());
  ASSERT_THAT(listed_pods.status(), IsOk());
  ASSERT_EQ(listed_pods->items_size(), 1);
  const api::ObjectMeta& pod = listed_pods->items(0).metadata();
  EXPECT_EQ(pod.labels().at("jobset.sigs.k8s.io/jobset-name"), "a");
  EXPECT_EQ(pod.annotations().at("jobset.sigs.k8s.io/job-index"), "0");
}

TEST_F(JobSetApiTest, ListEventsOldestFirstAndEmptyWithoutAny) {
  auto empty = api_.ListEvents(api::ListEventsRequest());
  ASSERT_THAT(empty.status(), IsOk());
  EXPECT_THAT(empty->items(), IsEmpty());

  for (uint64_t seq : {30, 10, 20}) {
    api::Event event;
    event.mutable_metadata()->set_name(absl::StrCat("e", seq));
    event.set_reason("AllJobsCompleted");
    Put(store_, store::keys::EventKey("default", "train", seq), event);
  }
  api::ListEventsRequest request;
  request.set_jobset("train");
  auto events = api_.ListEvents(request);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(ItemNames(*events), ElementsAre("e10", "e20", "e30"));
  EXPECT_EQ(events->items(0).reason(), "AllJobsCompleted");
}

TEST_F(JobSetApiTest, ListChildrenValidatesNamesAndReportsCorruption) {
  api::ListJobsRequest bad_ns;
  bad_ns.set_namespace_("Bad/NS");
  EXPECT_THAT(api_.ListJobs(bad_ns).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace")));
  api::ListPodsRequest bad_jobset;
  bad_jobset.set_jobset("a/b");
  EXPECT_THAT(
      api_.ListPods(bad_jobset).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.name")));

  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::JobPodsKey("default", "a", "a-workers-0"),
                      "\xff\xff"))
                  .status(),
              IsOk());
  EXPECT_THAT(api_.ListPods(api::ListPodsRequest()).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("pods/default/a/a-workers-0")));
}

// Finding 3 of issue 19: the JobSet was stored and the controller ran out of
// memory expanding it, on every restart.
TEST(JobSetApiLimitsTest, TwoBillionReplicasAreRefusedAtCreate) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  JobSet jobset = JobSetBuilder("huge").Replicated("workers", 1).Build();
  jobset.mutable_spec()->mutable_replicated_jobs(0)->set_replicas(2000000000);
  EXPECT_THAT(api.Create(jobset, /*dry_run=*/false).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("spec.replicatedJobs[0].replicas"),
                             HasSubstr("2000000000"),
                             HasSubstr("--max_pods_per_jobset"))));
  EXPECT_EQ(store.CurrentRevision(), 0);  // Nothing stored.
}

TEST(JobSetApiLimitsTest, LimitsComeFromTheOptions) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi::Limits limits;
  limits.spec.max_containers_per_pod = 1;
  JobSetApi api(&store, &clock, {}, limits);
  JobSet jobset = JobSetBuilder("two").Replicated("workers", 1).Build();
  api::Container* second = jobset.mutable_spec()
                               ->mutable_replicated_jobs(0)
                               ->mutable_template_()
                               ->mutable_spec()
                               ->mutable_template_()
                               ->mutable_spec()
                               ->add_containers();
  second->set_name("sidecar");
  second->set_image("busybox");
  EXPECT_THAT(
      api.Create(jobset, false).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("containers: Too many: 2: must have at most "
                         "1 items (jobsetd --max_containers_per_pod)")));
}

TEST(JobSetApiLimitsTest, StoredJobSetCountsAreLimited) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi::Limits limits;
  limits.max_jobsets_per_namespace = 2;
  limits.max_jobsets = 3;
  JobSetApi api(&store, &clock, {}, limits);
  auto create = [&](const std::string& ns, const std::string& name) {
    return api
        .Create(JobSetBuilder(name).Namespace(ns).Replicated("w", 1).Build(),
                false)
        .status();
  };
  ASSERT_THAT(create("a", "one"), IsOk());
  ASSERT_THAT(create("a", "two"), IsOk());
  EXPECT_THAT(create("a", "three"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("namespace \"a\" has 2 JobSets"),
                             HasSubstr("--max_jobsets_per_namespace"))));
  // Creating one that exists is still answered; a dry run stores nothing.
  EXPECT_THAT(create("a", "two"), IsOk());
  EXPECT_THAT(
      api.Create(
             JobSetBuilder("three").Namespace("a").Replicated("w", 1).Build(),
             /*dry_run=*/true)
          .status(),
      IsOk());
  ASSERT_THAT(create("b", "one"), IsOk());
  EXPECT_THAT(create("c", "one"), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("--max_jobsets")));
  // A delete makes room.
  ASSERT_THAT(api.Delete("a", "one", "").status(), IsOk());
  EXPECT_THAT(create("c", "one"), IsOk());
}

TEST(JobSetApiPagingTest, LimitZeroIsAPageOf500) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  for (int i = 0; i < 501; ++i) {
    ASSERT_THAT(
        api.Create(
               JobSetBuilder(absl::StrCat("js-", i)).Replicated("w", 1).Build(),
               false)
            .status(),
        IsOk());
  }
  auto first = api.List(api::ListJobSetsRequest());
  ASSERT_THAT(first.status(), IsOk());
  EXPECT_THAT(first->items(), SizeIs(500));
  ASSERT_FALSE(first->continue_().empty());
  api::ListJobSetsRequest next;
  next.set_continue_(first->continue_());
  auto second = api.List(next);
  ASSERT_THAT(second.status(), IsOk());
  EXPECT_THAT(second->items(), SizeIs(1));
  EXPECT_EQ(second->continue_(), "");
  // Every page reports the list's resourceVersion, the first page's.
  EXPECT_EQ(second->resource_version(), first->resource_version());
  // A watch without a resourceVersion still starts with every JobSet.
  auto watch = api.StartWatch(api::WatchJobSetsRequest());
  ASSERT_THAT(watch.status(), IsOk());
  auto added = watch->Next(absl::InfinitePast());
  ASSERT_THAT(added.status(), IsOk());
  EXPECT_THAT(*added, SizeIs(501));

  next.set_continue_("");
  next.set_limit(-1);
  EXPECT_THAT(api.List(next).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("between 0 (meaning 500) and 10000")));
}

// Stores `jobs` Jobs of JobSet "train" with `pods_per_job` pod records each,
// as the controller stores them, straight into `store`.
void StorePods(store::Store& store, int jobs, int pods_per_job) {
  for (int j = 0; j < jobs; ++j) {
    const std::string job_name = absl::StrCat("train-workers-", j);
    api::Job job;
    job.mutable_metadata()->set_name(job_name);
    job.mutable_metadata()->set_namespace_("default");
    api::JobPods pods;
    for (int p = 0; p < pods_per_job; ++p) {
      api::PodRecord* pod = pods.add_pods();
      pod->set_name(absl::StrCat(job_name, "-", p, "-abcde"));
      pod->set_completion_index(p);
      pod->set_node_name(absl::StrCat("node-", p));
      pod->mutable_status()->set_phase("Running");
    }
    ASSERT_THAT(
        store
            .Commit(
                store::Batch()
                    .Put(store::keys::JobKey("default", "train", job_name),
                         job.SerializeAsString())
                    .Put(store::keys::JobPodsKey("default", "train", job_name),
                         pods.SerializeAsString()))
            .status(),
        IsOk());
  }
}

// Issue 19: ListPods returned every pod in one response. Paged, 25,000 pods
// come back each exactly once, pages ending inside a Job's pods too, each
// page within the byte bound.
TEST(JobSetApiPagingTest, TwentyFiveThousandPodsEachExactlyOnce) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  StorePods(store, /*jobs=*/25, /*pods_per_job=*/1000);
  for (int32_t limit : {0, 333, 10'000}) {
    SCOPED_TRACE(absl::StrCat("limit ", limit));
    api::ListPodsRequest request;
    request.set_jobset("train");
    request.set_limit(limit);
    std::set<std::string> seen;
    int pages = 0;
    std::string resource_version;
    do {
      auto page = api.ListPods(request);
      ASSERT_THAT(page.status(), IsOk());
      EXPECT_LE(page->items_size(), limit == 0 ? 500 : limit);
      EXPECT_LE(page->ByteSizeLong(), size_t{4} << 20);
      if (pages == 0) resource_version = page->resource_version();
      EXPECT_EQ(page->resource_version(), resource_version);
      for (const api::Pod& pod : page->items()) {
        EXPECT_TRUE(seen.insert(pod.metadata().name()).second)
            << pod.metadata().name() << " listed twice";
      }
      request.set_continue_(page->continue_());
      ++pages;
    } while (!request.continue_().empty() && pages < 1000);
    EXPECT_EQ(seen.size(), 25'000u);
    if (limit == 0) {
      EXPECT_EQ(pages, 50);
    }
  }
}

// A Job whose pods are stored in chunks (pods/<ns>/<jobset>/<job>/<i>, which
// sort between other Jobs' keys: "train-workers-1/1" after
// "train-workers-10") is listed from its Job like any other: every pod once.
TEST(JobSetApiPagingTest, ChunkedJobsPodsEachExactlyOnce) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  int chunked_jobs = 0;
  for (int j = 0; j < 12; ++j) {
    const std::string job_name = absl::StrCat("train-workers-", j);
    api::Job job;
    job.mutable_metadata()->set_name(job_name);
    job.mutable_metadata()->set_namespace_("default");
    std::map<std::string, api::PodRecord> pods;
    for (int p = 0; p < 300; ++p) {
      const std::string uid = NewUid();
      api::PodRecord pod = NewPodRecord(PodName(job_name, p, uid), uid, p,
                                        absl::FromUnixSeconds(1'700'000'000));
      BindPod(absl::StrCat("node-", p), absl::StrCat("10.0.0.", p % 250),
              absl::FromUnixSeconds(1'700'000'001), &pod);
      pods[pod.name()] = std::move(pod);
    }
    const std::vector<std::string> chunks =
        EncodeJobPodsChunks(job_name, pods, /*max_bytes=*/4096);
    if (chunks.size() > 1) ++chunked_jobs;
    store::Batch batch;
    batch.Put(store::keys::JobKey("default", "train", job_name),
              job.SerializeAsString());
    for (size_t i = 0; i < chunks.size(); ++i) {
      batch.Put(
          JobPodsChunkKey("default", "train", job_name, static_cast<int>(i)),
          chunks[i]);
    }
    ASSERT_THAT(store.Commit(batch).status(), IsOk());
  }
  ASSERT_EQ(chunked_jobs, 12);
  for (int32_t limit : {0, 77}) {
    SCOPED_TRACE(absl::StrCat("limit ", limit));
    api::ListPodsRequest request;
    request.set_jobset("train");
    request.set_limit(limit);
    std::set<std::string> seen;
    int pages = 0;
    do {
      auto page = api.ListPods(request);
      ASSERT_THAT(page.status(), IsOk());
      for (const api::Pod& pod : page->items()) {
        EXPECT_TRUE(seen.insert(pod.metadata().name()).second)
            << pod.metadata().name() << " listed twice";
        EXPECT_FALSE(pod.spec().node_name().empty());
      }
      request.set_continue_(page->continue_());
      ++pages;
    } while (!request.continue_().empty() && pages < 1000);
    EXPECT_EQ(seen.size(), 12u * 300u);
  }
}

TEST(JobSetApiPagingTest, JobsAndEventsArePagedToo) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  StorePods(store, /*jobs=*/5, /*pods_per_job=*/1);
  for (int i = 0; i < 5; ++i) {
    api::Event event;
    event.mutable_metadata()->set_name(absl::StrCat("e", i));
    ASSERT_THAT(store
                    .Commit(store::Batch().Put(
                        store::keys::EventKey("default", "train", i + 1),
                        event.SerializeAsString()))
                    .status(),
                IsOk());
  }
  api::ListJobsRequest jobs;
  jobs.set_limit(2);
  api::ListEventsRequest events;
  events.set_limit(2);
  std::vector<std::string> job_names, event_names;
  for (int page = 0; page < 3; ++page) {
    auto j = api.ListJobs(jobs);
    auto e = api.ListEvents(events);
    ASSERT_THAT(j.status(), IsOk());
    ASSERT_THAT(e.status(), IsOk());
    for (const auto& item : j->items()) {
      job_names.push_back(item.metadata().name());
    }
    for (const auto& item : e->items()) {
      event_names.push_back(item.metadata().name());
    }
    EXPECT_EQ(j->continue_().empty(), page == 2);
    EXPECT_EQ(e->continue_().empty(), page == 2);
    jobs.set_continue_(j->continue_());
    events.set_continue_(e->continue_());
  }
  EXPECT_THAT(job_names,
              ::testing::ElementsAre("train-workers-0", "train-workers-1",
                                     "train-workers-2", "train-workers-3",
                                     "train-workers-4"));
  EXPECT_THAT(event_names,
              ::testing::ElementsAre("e0", "e1", "e2", "e3", "e4"));
  // A Jobs token does not continue a pods list.
  api::ListPodsRequest pods;
  pods.set_continue_(jobs.continue_().empty() ? "x" : jobs.continue_());
  EXPECT_THAT(
      api.ListPods(pods).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("continue")));
}

// Kubernetes answers a continue whose resourceVersion was compacted with 410
// Gone; jobsetd with OUT_OF_RANGE.
TEST(JobSetApiPagingTest, ContinueFromACompactedRevisionIsTooOld) {
  store::MemoryStore store(/*history_events=*/10);
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  StorePods(store, /*jobs=*/3, /*pods_per_job=*/2);
  api::ListPodsRequest request;
  request.set_limit(1);
  auto first = api.ListPods(request);
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_FALSE(first->continue_().empty());
  request.set_continue_(first->continue_());
  EXPECT_THAT(api.ListPods(request).status(), IsOk());
  for (int i = 0; i < 20; ++i) {
    ASSERT_THAT(
        store.Commit(store::Batch().Put(absl::StrCat("pods/x/y/", i), ""))
            .status(),
        IsOk());
  }
  EXPECT_THAT(api.ListPods(request).status(),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("too old to display a consistent list")));
}

// A watcher that falls behind the history's byte bound (a few large
// JobSets written while it does not read) is told OUT_OF_RANGE, Kubernetes'
// "too old resource version", and a fresh watch lists every JobSet again.
TEST(JobSetApiWatchTest, AWatcherThatFallsBehindTheByteBoundListsAgain) {
  store::MemoryStore store(/*history_events=*/10'000,
                           /*history_bytes=*/64 << 10);
  FakeClock clock;
  JobSetApi api(&store, &clock, {});
  auto create = [&](int i) {
    JobSet jobset =
        JobSetBuilder(absl::StrCat("js-", i)).Replicated("w", 1).Build();
    (*jobset.mutable_metadata()->mutable_annotations())["note"] =
        std::string(20 << 10, 'x');
    return api.Create(jobset, false).status();
  };
  ASSERT_THAT(create(0), IsOk());
  auto watch = api.StartWatch(api::WatchJobSetsRequest());
  ASSERT_THAT(watch.status(), IsOk());
  auto listed = watch->Next(absl::InfinitePast());
  ASSERT_THAT(listed.status(), IsOk());
  EXPECT_THAT(*listed, SizeIs(1));
  ASSERT_THAT(create(1), IsOk());
  auto one = watch->Next(absl::InfinitePast());
  ASSERT_THAT(one.status(), IsOk());
  EXPECT_THAT(*one, SizeIs(1));
  // Five more of 20 KiB: more than the 64 KiB held, before it reads again.
  for (int i = 2; i < 7; ++i) ASSERT_THAT(create(i), IsOk());
  EXPECT_THAT(watch->Next(absl::InfinitePast()).status(),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("list again")));
  auto relisted = api.StartWatch(api::WatchJobSetsRequest());
  ASSERT_THAT(relisted.status(), IsOk());
  auto all = relisted->Next(absl::InfinitePast());
  ASSERT_THAT(all.status(), IsOk());
  EXPECT_THAT(*all, SizeIs(7));
}

// ---- Pod Security admission ----

api::PodSpec* PodSpecOf(JobSet* js, int rjob = 0) {
  return js->mutable_spec()
      ->mutable_replicated_jobs(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_template_()
      ->mutable_spec();
}

JobSet WithHostPath(absl::string_view name, absl::string_view path,
                    absl::string_view ns = "default") {
  JobSet js =
      JobSetBuilder(name).Namespace(ns).Replicated("workers", 1).Build();
  api::Volume* v = PodSpecOf(&js)->add_volumes();
  v->set_name("data");
  v->mutable_host_path()->set_path(std::string(path));
  return js;
}

void PutNamespace(NamespaceApi* namespaces, absl::string_view name,
                  std::map<std::string, std::string> labels) {
  api::ApplyNamespaceRequest request;
  request.mutable_namespace_()->mutable_metadata()->set_name(std::string(name));
  for (const auto& [k, v] : labels) {
    (*request.mutable_namespace_()->mutable_metadata()->mutable_labels())[k] =
        v;
  }
  ASSERT_THAT(namespaces->Apply(request), IsOk());
}

TEST(PodSecurityAdmissionTest, BaselineRefusesHostPathUnlessAllowed) {
  store::MemoryStore store;
  FakeClock clock;
  JobSetApi strict(&store, &clock, {});
  EXPECT_THAT(
      strict.Create(WithHostPath("data", "/datasets/imagenet"), false).status(),
      StatusIs(absl::StatusCode::kPermissionDenied,
               "jobsets.jobset.x-k8s.io \"data\" is forbidden: "
               "spec.replicatedJobs[0].template.spec.template: violates "
               "PodSecurity \"baseline:latest\": hostPath volumes (volume "
               "\"data\")"));
  EXPECT_EQ(store.CurrentRevision(), 0);  // Nothing stored.

  JobSetApi::Limits limits;
  absl::StatusOr<api::AllowedHostPaths> allowed = api::AllowedHostPaths::Parse(
      "--allowed_host_paths", "/datasets,/scratch");
  ASSERT_THAT(allowed, IsOk());
  limits.pod_security.allowed_host_paths = *allowed;
  JobSetApi lenient(&store, &clock, {}, limits);
  EXPECT_THAT(lenient.Create(WithHostPath("data", "/datasets/imagenet"), false)
                  .status(),
              IsOk());
  EXPECT_THAT(lenient.Create(WithHostPath("escape", "/datasets/../etc"), false)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must not contain '..'")));
  EXPECT_THAT(
      lenient.Create(WithHostPath("sibling", "/datasets2"), false).status(),
      StatusIs(absl::StatusCode::kPermissionDenied));

  limits.pod_security.enforce = api::PodSecurityLevel::kPrivileged;
  JobSetApi open(&store, &clock, {}, limits);
  EXPECT_THAT(open.Create(WithHostPath("root", "/"), false).status(), IsOk());
}

TEST(PodSecurityAdmissionTest, NamespaceLabelsOverrideTheFlag) {
  store::MemoryStore store;
  FakeClock clock;
  NamespaceApi namespaces(&store, &clock);
  JobSetApi api(&store, &clock, {});
  PutNamespace(&namespaces, "secure",
               {{"pod-security.kubernetes.io/enforce", "restricted"}});
  PutNamespace(&namespaces, "lab",
               {{"pod-security.kubernetes.io/enforce", "privileged"}});
  PutNamespace(&namespaces, "watched",
               {{"pod-security.kubernetes.io/warn", "restricted"}});

  // Baseline-clean, but not restricted.
  JobSet plain =
      JobSetBuilder("plain").Namespace("secure").Replicated("w", 1).Build();
  EXPECT_THAT(
      api.Create(plain, false).status(),
      StatusIs(
          absl::StatusCode::kPermissionDenied,
          AllOf(HasSubstr("violates PodSecurity \"restricted:latest\": "
                          "allowPrivilegeEscalation != false (container "
                          "\"main\" must set "
                          "securityContext.allowPrivilegeEscalation=false)"),
                HasSubstr("runAsNonRoot != true"))));

  // A restricted-clean one passes there.
  JobSet clean = plain;
  api::PodSpec* spec = PodSpecOf(&clean);
  spec->mutable_security_context()->set_run_as_non_root(true);
  spec->mutable_security_context()->mutable_seccomp_profile()->set_type(
      "RuntimeDefault");
  api::SecurityContext* sc =
      spec->mutable_containers(0)->mutable_security_context();
  sc->set_allow_privilege_escalation(false);
  sc->mutable_capabilities()->add_drop("ALL");
  EXPECT_THAT(api.Create(clean, false).status(), IsOk());

  // privileged lets everything through.
  JobSet wild = WithHostPath("wild", "/", "lab");
  PodSpecOf(&wild)->set_host_pid(true);
  PodSpecOf(&wild)
      ->mutable_containers(0)
      ->mutable_security_context()
      ->set_privileged(true);
  EXPECT_THAT(api.Create(wild, false).status(), IsOk());

  // warn: created, with Kubernetes' warning.
  JobSet warned =
      JobSetBuilder("warned").Namespace("watched").Replicated("w", 1).Build();
  absl::StatusOr<JobSetApi::CreateResult> created = api.Create(warned, false);
  ASSERT_THAT(created, IsOk());
  ASSERT_THAT(created->warnings, SizeIs(1));
  EXPECT_THAT(created->warnings[0],
              HasSubstr("spec.replicatedJobs[0].template.spec.template: would "
                        "violate PodSecurity \"restricted:latest\": "
                        "allowPrivilegeEscalation != false"));
  // A namespace without labels, or without an object, gets the flag's level.
  EXPECT_THAT(api.Create(WithHostPath("d", "/d", "other"), false).status(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("baseline:latest")));
}

// The agents run a container without runAsUser as root only where its
// JobSet was admitted at privileged: the level is the server's to record,
// never the client's.
TEST(PodSecurityAdmissionTest,
     TheAdmittedLevelIsRecordedNotTakenFromTheClient) {
  store::MemoryStore store;
  FakeClock clock;
  NamespaceApi namespaces(&store, &clock);
  JobSetApi api(&store, &clock, {});
  PutNamespace(&namespaces, "lab",
               {{"pod-security.kubernetes.io/enforce", "privileged"}});
  auto level = [&](const std::string& ns, const std::string& name) {
    absl::StatusOr<JobSet> js = api.Get(ns, name);
    EXPECT_THAT(js, IsOk());
    if (!js.ok()) return std::string("<missing>");
    auto it = js->metadata().annotations().find(kPodSecurityLevelKey);
    return it == js->metadata().annotations().end() ? std::string("<none>")
                                                    : it->second;
  };
  JobSet forged = JobSetBuilder("forged").Suspend().Replicated("w", 1).Build();
  (*forged.mutable_metadata()->mutable_annotations())[kPodSecurityLevelKey] =
      "privileged";
  ASSERT_THAT(api.Create(forged, false).status(), IsOk());
  EXPECT_EQ(level("default", "forged"), "baseline");
  ASSERT_THAT(api.Create(JobSetBuilder("root-ok")
                             .Namespace("lab")
                             .Replicated("w", 1)
                             .Build(),
                         false)
                  .status(),
              IsOk());
  EXPECT_EQ(level("lab", "root-ok"), "privileged");

  // An update that leaves the templates alone keeps the recorded level,
  // whatever the client sends under its key, or without it.
  absl::StatusOr<JobSet> current = api.Get("default", "forged");
  ASSERT_THAT(current, IsOk());
  (*current->mutable_metadata()->mutable_annotations())[kPodSecurityLevelKey] =
      "privileged";
  ASSERT_THAT(api.Update(*current, false).status(), IsOk());
  EXPECT_EQ(level("default", "forged"), "baseline");
  current = api.Get("default", "forged");
  ASSERT_THAT(current, IsOk());
  current->mutable_metadata()->mutable_annotations()->clear();
  ASSERT_THAT(api.Update(*current, false).status(), IsOk());
  EXPECT_EQ(level("default", "forged"), "baseline");
}

TEST(PodSecurityAdmissionTest, UpdateChecksChangedTemplatesOnly) {
  store::MemoryStore store;
  FakeClock clock;
  NamespaceApi namespaces(&store, &clock);
  JobSetApi api(&store, &clock, {});
  JobSet js = JobSetBuilder("train").Suspend().Replicated("workers", 1).Build();
  absl::StatusOr<JobSetApi::CreateResult> created = api.Create(js, false);
  ASSERT_THAT(created, IsOk());

  // The namespace turns restricted: the JobSet can still be resumed (its
  // templates do not change)...
  PutNamespace(&namespaces, "default",
               {{"pod-security.kubernetes.io/enforce", "restricted"}});
  EXPECT_THAT(api.SetSuspend("default", "train", false).status(), IsOk());

  // ...but a template change is admitted at the new level.
  absl::StatusOr<JobSet> current = api.Get("default", "train");
  ASSERT_THAT(current, IsOk());
  JobSet changed = *current;
  changed.mutable_spec()->set_suspend(true);
  ASSERT_THAT(api.Update(changed, false).status(), IsOk());
  current = api.Get("default", "train");
  ASSERT_THAT(current, IsOk());
  changed = *current;
  // (A suspended JobSet's pod template labels and annotations may change.)
  (*changed.mutable_spec()
        ->mutable_replicated_jobs(0)
        ->mutable_template_()
        ->mutable_spec()
        ->mutable_template_()
        ->mutable_metadata()
        ->mutable_annotations())["example.com/note"] = "changed";
  EXPECT_THAT(api.Update(changed, false).status(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("restricted:latest")));
}

}  // namespace
}  // namespace jobset::scheduler
