// KueueApi against the store: corrupt values, bounds, conditional and raced
// commits, watches.
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

TEST_F(KueueApiTest, CorruptStoredValuesAreDataLoss) {
  const std::string garbage_key =
      store::keys::KueueKey("clusterqueues", "", "garbage");
  ASSERT_THAT(store_.Commit(store::Batch().Put(garbage_key, "\xff\xff\xff")),
              IsOk());
  EXPECT_THAT(api_.Get(Ref("ClusterQueue", "garbage")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("\"kueue/clusterqueues/garbage\"")));
  EXPECT_THAT(api_.List(ListOf("ClusterQueue")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("kueue/clusterqueues/garbage")));
  EXPECT_THAT(api_.Apply(Request(absl::StrReplaceAll(
                  kClusterQueue, {{"name: research", "name: garbage"}}))),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(api_.Delete(Ref("ClusterQueue", "garbage")),
              StatusIs(absl::StatusCode::kDataLoss));

  // A well-formed value of another kind, or of another name, at a key.
  api::KueueObject lq = Parse(LocalQueue("x", "team"));
  const std::string wrong_kind =
      store::keys::KueueKey("clusterqueues", "", "x");
  ASSERT_THAT(
      store_.Commit(store::Batch().Put(wrong_kind, EncodeKueueObject(lq))),
      IsOk());
  EXPECT_THAT(api_.Get(Ref("ClusterQueue", "x")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("\"kueue/clusterqueues/x\" (revision ")));
  api::KueueObject other = Parse(LocalQueue("other", "team"));
  ASSERT_THAT(store_.Commit(store::Batch().Put(
                  store::keys::KueueKey("localqueues", "team", "lq"),
                  EncodeKueueObject(other))),
              IsOk());
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq", "team")),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("is not the LocalQueue its key names")));
}

TEST_F(KueueApiTest, BoundsNameTheLimit) {
  KueueApi small(&store_, &clock_,
                 {.max_objects_per_scope = 2,
                  .max_bytes_per_scope = 1000,
                  .max_object_bytes = 600});
  ASSERT_THAT(small.Apply(Request(LocalQueue("a", "team"))), IsOk());
  ASSERT_THAT(small.Apply(Request(LocalQueue("b", "team"))), IsOk());
  EXPECT_THAT(small.Apply(Request(LocalQueue("c", "team"))),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "localqueues.kueue.x-k8s.io \"c\": namespace \"team\" "
                       "has 2 LocalQueue objects, the most jobsetd keeps per "
                       "namespace (2)"));
  // Replacing one is no new one; another namespace has its own count.
  EXPECT_THAT(small.Apply(Request(LocalQueue("b", "team", ", labels: {x: y}"))),
              IsOk());
  EXPECT_THAT(small.Apply(Request(LocalQueue("c", "other"))), IsOk());

  const std::string big_label = std::string(500, 'v');
  EXPECT_THAT(small.Apply(Request(absl::StrCat(
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                  "metadata: {name: big, annotations: {a: ",
                  big_label, "}}\n"))),
              IsOk());
  // Replacing it counts its new bytes in place of its old ones.
  EXPECT_THAT(small.Apply(Request(absl::StrCat(
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                  "metadata: {name: big, annotations: {a: ",
                  std::string(500, 'w'), "}}\n"))),
              IsOk());
  EXPECT_THAT(
      small.Apply(Request(
          absl::StrCat("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                       "metadata: {name: big2, annotations: {a: ",
                       big_label, "}}\n"))),
      StatusIs(absl::StatusCode::kResourceExhausted,
               HasSubstr("the Cohort objects of the cluster would take ")));
  EXPECT_THAT(small.Apply(Request(absl::StrCat(
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                  "metadata: {name: huge, annotations: {a: ",
                  std::string(700, 'v'), "}}\n"))),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("more than jobsetd keeps for one Kueue object "
                                 "(600)")));
  EXPECT_THAT(api_.Get(Ref("Cohort", "huge")),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(KueueApiTest, ResourceVersionMakesApplyConditional) {
  absl::StatusOr<api::ApplyKueueObjectResponse> created =
      api_.Apply(Request(LocalQueue("lq", "team")));
  ASSERT_THAT(created, IsOk());
  const std::string rv =
      created->object().local_queue().metadata().resource_version();
  ASSERT_THAT(api_.Apply(Request(LocalQueue("lq", "team", ", labels: {a: b}"))),
              IsOk());
  // Stale.
  EXPECT_THAT(
      api_.Apply(Request(LocalQueue(
          "lq", "team", absl::StrCat(", resourceVersion: \"", rv, "\"")))),
      StatusIs(absl::StatusCode::kAborted,
               "Operation cannot be fulfilled on localqueues.kueue.x-k8s.io "
               "\"lq\": the object has been modified; please apply your "
               "changes to the latest version and try again"));
  // Current.
  const std::string now = absl::StrCat(store_.CurrentRevision());
  EXPECT_THAT(
      api_.Apply(Request(LocalQueue(
          "lq", "team", absl::StrCat(", resourceVersion: \"", now, "\"")))),
      IsOk());
  // None stored.
  EXPECT_THAT(api_.Apply(Request(
                  LocalQueue("new", "team", ", resourceVersion: \"1\""))),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      api_.Apply(Request(LocalQueue("lq", "team", ", resourceVersion: \"x\""))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("metadata.resourceVersion")));
}

// A store where another writer changes the key between each read and the
// commit that follows it, `times` times.
class RacingStore : public store::ForwardingStore {
 public:
  RacingStore(store::Store* inner, int times)
      : ForwardingStore(inner), times_(times) {}

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    if (times_ > 0 && !batch.empty()) {
      --times_;
      // The other writer bumps the object's revision.
      const store::Batch::Op& op = batch.ops()[0];
      absl::StatusOr<std::optional<store::KeyValue>> kv = inner()->Get(op.key);
      if (kv.ok() && kv->has_value()) {
        EXPECT_THAT(inner()->Commit(store::Batch().Put(op.key, (*kv)->value)),
                    IsOk());
      }
    }
    return inner()->Commit(batch);
  }
  int times_;
};

TEST_F(KueueApiTest, LostRacesAreRetriedThenAborted) {
  ASSERT_THAT(api_.Apply(Request(LocalQueue("lq", "team"))), IsOk());
  RacingStore twice(&store_, 2);
  KueueApi racing(&twice, &clock_);
  absl::StatusOr<api::ApplyKueueObjectResponse> applied =
      racing.Apply(Request(LocalQueue("lq", "team", ", labels: {a: b}")));
  ASSERT_THAT(applied, IsOk());
  EXPECT_EQ(twice.times_, 0);
  EXPECT_EQ(api_.Get(Ref("LocalQueue", "lq", "team"))
                ->local_queue()
                .metadata()
                .labels()
                .at("a"),
            "b");

  RacingStore always(&store_, 100);
  KueueApi losing(&always, &clock_);
  EXPECT_THAT(
      losing.Apply(Request(LocalQueue("lq", "team", ", labels: {a: c}"))),
      StatusIs(absl::StatusCode::kAborted,
               "applying LocalQueue \"lq\" kept conflicting; try again"));
  EXPECT_THAT(losing.Delete(Ref("LocalQueue", "lq", "team")),
              StatusIs(absl::StatusCode::kAborted,
                       "deleting LocalQueue \"lq\" kept conflicting; try "
                       "again"));
  EXPECT_THAT(api_.Get(Ref("LocalQueue", "lq", "team")), IsOk());
}

std::vector<std::string> Events(KueueApi::Watch& watch) {
  absl::StatusOr<std::vector<api::KueueWatchEvent>> events =
      watch.Next(absl::Now());
  EXPECT_THAT(events.status(), IsOk());
  std::vector<std::string> out;
  for (const api::KueueWatchEvent& e :
       events.value_or(std::vector<api::KueueWatchEvent>())) {
    const api::ObjectMeta& meta = api::KueueObjectMeta(e.object());
    out.push_back(
        absl::StrCat(e.type(), " ", meta.namespace_(), "/", meta.name()));
  }
  return out;
}

api::WatchKueueObjectsRequest WatchOf(absl::string_view kind,
                                      absl::string_view ns = "",
                                      absl::string_view rv = "") {
  api::WatchKueueObjectsRequest request;
  request.set_kind(std::string(kind));
  request.set_namespace_(std::string(ns));
  request.set_resource_version(std::string(rv));
  return request;
}

TEST_F(KueueApiTest, WatchStreamsChangesOfOneKindAndScope) {
  ASSERT_THAT(api_.Apply(Request(LocalQueue("before", "team"))), IsOk());
  absl::StatusOr<KueueApi::Watch> team =
      api_.StartWatch(WatchOf("LocalQueue", "team"));
  ASSERT_THAT(team, IsOk());
  api::WatchKueueObjectsRequest gold_request = WatchOf("LocalQueue");
  gold_request.set_all_namespaces(true);
  gold_request.set_label_selector("tier=gold");
  absl::StatusOr<KueueApi::Watch> gold = api_.StartWatch(gold_request);
  ASSERT_THAT(gold, IsOk());
  absl::StatusOr<KueueApi::Watch> cqs =
      api_.StartWatch(WatchOf("ClusterQueue"));
  ASSERT_THAT(cqs, IsOk());

  ASSERT_THAT(api_.Apply(Request(LocalQueue("lq", "team"))), IsOk());
  ASSERT_THAT(
      api_.Apply(Request(LocalQueue("lq", "team", ", labels: {tier: gold}"))),
      IsOk());
  ASSERT_THAT(
      api_.Apply(Request(LocalQueue("g", "other", ", labels: {tier: gold}"))),
      IsOk());
  ASSERT_THAT(api_.Apply(Request(kClusterQueue)), IsOk());
  ASSERT_THAT(api_.Delete(Ref("LocalQueue", "lq", "team")), IsOk());

  // From now: what was there before is not replayed.
  EXPECT_THAT(Events(*team), ElementsAre("ADDED team/lq", "MODIFIED team/lq",
                                         "DELETED team/lq"));
  EXPECT_THAT(Events(*team), ElementsAre());
  EXPECT_THAT(Events(*gold), ElementsAre("MODIFIED team/lq", "ADDED other/g",
                                         "DELETED team/lq"));
  EXPECT_THAT(Events(*cqs), ElementsAre("ADDED /research"));

  // From a List's resourceVersion.
  absl::StatusOr<api::ListKueueObjectsResponse> listed =
      api_.List(ListOf("ClusterQueue"));
  ASSERT_THAT(listed, IsOk());
  absl::StatusOr<KueueApi::Watch> from_list =
      api_.StartWatch(WatchOf("ClusterQueue", "", listed->resource_version()));
  ASSERT_THAT(from_list, IsOk());
  ASSERT_THAT(api_.Delete(Ref("ClusterQueue", "research")), IsOk());
  EXPECT_THAT(Events(*from_list), ElementsAre("DELETED /research"));

  EXPECT_THAT(api_.StartWatch(WatchOf("Queue")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(api_.StartWatch(WatchOf("ClusterQueue", "", "soon")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(KueueWatchTest, CompactedHistoryIsOutOfRange) {
  store::MemoryStore store(/*history_events=*/2);
  FakeClock clock;
  KueueApi api(&store, &clock);
  for (const char* name : {"a", "b", "c", "d"}) {
    ASSERT_THAT(api.Apply(Request(LocalQueue(name, "team"))), IsOk());
  }
  absl::StatusOr<KueueApi::Watch> watch =
      api.StartWatch(WatchOf("LocalQueue", "team", "1"));
  ASSERT_THAT(watch, IsOk());
  EXPECT_THAT(watch->Next(absl::Now()).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
}

}  // namespace
}  // namespace jobset::scheduler
