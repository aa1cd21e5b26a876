#include "scheduler/records/attempt_pods.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "common/uid.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/records/records.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A uid whose text is predictable: "0000000<n>-0000-4000-8000-000000000000".
std::string Uid(int n) {
  return absl::StrCat(absl::Dec(n, absl::kZeroPad8),
                      "-0000-4000-8000-000000000000");
}

api::PodRecord Placed(int index, int uid, const std::string& node) {
  api::PodRecord pod;
  pod.set_uid(Uid(uid));
  pod.set_completion_index(index);
  pod.set_node_name(node);
  return pod;
}

std::vector<std::string> Names(const std::vector<AttemptPod>& pods) {
  std::vector<std::string> names;
  for (const AttemptPod& pod : pods) names.push_back(pod.name);
  return names;
}

TEST(KeptAttemptsTest, TheLastKAttemptsTheCurrentOneIncluded) {
  struct Case {
    int32_t restarts;
    int history;
    int32_t first, last;
  };
  for (const Case& c : std::vector<Case>{{0, 10, 0, 0},
                                         {9, 10, 0, 9},
                                         {12, 10, 3, 12},
                                         {5, 1, 5, 5},
                                         {5, 0, 5, 5},  // Below 1: 1.
                                         {-3, 10, 0, 0},
                                         {150, 100, 51, 150}}) {
    SCOPED_TRACE(absl::StrCat(c.restarts, " restarts, history ", c.history));
    const AttemptRange r = KeptAttempts(c.restarts, c.history);
    EXPECT_EQ(r.first, c.first);
    EXPECT_EQ(r.last, c.last);
    EXPECT_TRUE(r.Contains(c.last));
    EXPECT_FALSE(r.Contains(c.first - 1));
    EXPECT_FALSE(r.Contains(c.last + 1));
  }
}

TEST(AttemptPodsBuilderTest, PodsComeBackWithTheirNamesNodesAndJobs) {
  AttemptPodsBuilder b("js-uid", 3, kMaxAttemptPodsBytes);
  EXPECT_TRUE(b.Add("train-w-0", "w", Placed(0, 1, "node-a")));
  EXPECT_TRUE(b.Add("train-w-0", "w", Placed(1, 2, "node-b")));
  EXPECT_TRUE(b.Add("train-ps-0", "ps", Placed(-1, 3, "node-a")));
  EXPECT_EQ(b.pods(), 3);
  const size_t bound = b.bytes();
  const api::AttemptPods record = b.Build();
  EXPECT_LE(record.ByteSizeLong(), bound);
  EXPECT_EQ(record.jobset_uid(), "js-uid");
  EXPECT_EQ(record.attempt(), 3);
  EXPECT_EQ(record.pods_dropped(), 0);
  EXPECT_THAT(record.nodes(), ElementsAre("node-a", "node-b"));  // Once each.
  absl::StatusOr<std::vector<AttemptPod>> pods = ExpandAttemptPods(record, "k");
  ASSERT_THAT(pods.status(), IsOk());
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0], (AttemptPod{.name = PodName("train-w-0", 0, Uid(1)),
                                    .uid = Uid(1),
                                    .node = "node-a",
                                    .job = "train-w-0",
                                    .replicated_job = "w",
                                    .completion_index = 0}));
  EXPECT_EQ((*pods)[1].node, "node-b");
  EXPECT_EQ((*pods)[1].name, PodName("train-w-0", 1, Uid(2)));
  EXPECT_EQ((*pods)[2].name, PodName("train-ps-0", -1, Uid(3)));
  EXPECT_EQ((*pods)[2].replicated_job, "ps");
}

TEST(AttemptPodsBuilderTest, PodsPastTheCapOrWithoutAUuidAreCountedNotKept) {
  // Room for the header and a few pods only.
  AttemptPodsBuilder b("js-uid", 0, 200);
  int kept = 0;
  for (int i = 0; i < 50; ++i) {
    if (b.Add("train-w-0", "w", Placed(i, i + 1, absl::StrCat("node-", i))))
      ++kept;
  }
  EXPECT_FALSE(b.Add("train-w-0", "w", Placed(99, 0, "")));  // Not placed.
  api::PodRecord bad = Placed(98, 1, "node-x");
  bad.set_uid("not-a-uuid");
  EXPECT_FALSE(b.Add("train-w-0", "w", bad));
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 50);
  const api::AttemptPods record = b.Build();
  EXPECT_LE(record.ByteSizeLong(), 200u);
  EXPECT_EQ(record.pods_dropped(), 50 - kept + 2);
  absl::StatusOr<std::vector<AttemptPod>> pods_or =
      ExpandAttemptPods(record, "k");
  ASSERT_THAT(pods_or.status(), IsOk());
  std::vector<AttemptPod>& pods = *pods_or;
  EXPECT_EQ(static_cast<int>(pods.size()), kept);
}

// The restart benchmark's JobSet (1,000 Jobs of 15 pods, a node each) fits
// one record under the cap.
TEST(AttemptPodsBuilderTest, FifteenThousandPodsOnAsManyNodesFitOneRecord) {
  AttemptPodsBuilder b(NewUid(), 7, kMaxAttemptPodsBytes);
  for (int job = 0; job < 1000; ++job) {
    for (int i = 0; i < 15; ++i) {
      api::PodRecord pod;
      pod.set_uid(NewUid());
      pod.set_completion_index(i);
      pod.set_node_name(absl::StrCat("node-", job * 15 + i));
      ASSERT_TRUE(b.Add(absl::StrCat("big-w-", job), "w", pod));
    }
  }
  const api::AttemptPods record = b.Build();
  EXPECT_EQ(record.pods_dropped(), 0);
  EXPECT_LT(record.ByteSizeLong(), kMaxAttemptPodsBytes / 2);
}

TEST(ExpandAttemptPodsTest, ColumnsThatDisagreeAreDataLossNamingTheKey) {
  AttemptPodsBuilder b("js-uid", 0, kMaxAttemptPodsBytes);
  b.Add("train-w-0", "w", Placed(0, 1, "node-a"));
  const api::AttemptPods good = b.Build();
  api::AttemptPods short_uids = good;
  short_uids.mutable_jobs(0)->mutable_uids()->pop_back();
  EXPECT_THAT(ExpandAttemptPods(short_uids, "attemptpods/ns/js/1/0").status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("attemptpods/ns/js/1/0")));
  api::AttemptPods extra_index = good;
  extra_index.mutable_jobs(0)->add_completion_indexes(1);
  EXPECT_THAT(ExpandAttemptPods(extra_index, "k").status(),
              StatusIs(absl::StatusCode::kDataLoss));
  api::AttemptPods bad_node = good;
  bad_node.mutable_jobs(0)->set_node_indexes(0, 5);
  EXPECT_THAT(ExpandAttemptPods(bad_node, "k").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("node index 5")));
}

class ReadAttemptPodsTest : public ::testing::Test {
 protected:
  void Put(const std::string& uid, int32_t attempt, int part,
           const std::vector<api::PodRecord>& pods) {
    AttemptPodsBuilder b(uid, attempt, kMaxAttemptPodsBytes);
    for (const api::PodRecord& pod : pods) b.Add("train-w-0", "w", pod);
    ASSERT_THAT(
        store_
            .Commit(store::Batch().Put(
                store::keys::AttemptPodsKey("ns", "train", attempt, part),
                b.Build().SerializeAsString()))
            .status(),
        IsOk());
  }
  store::MemoryStore store_;
};

TEST_F(ReadAttemptPodsTest, PartsInOrderAttemptsOldestFirstOthersSkipped) {
  // Attempt 2 in 11 parts (part 10 sorts before 2 as a key).
  for (int part = 0; part <= 10; ++part)
    Put("js-uid", 2, part, {Placed(0, 100 + part, "node-a")});
  Put("js-uid", 10, 0, {Placed(0, 1, "node-b"), Placed(1, 2, "node-c")});
  Put("old-uid", 1, 0, {Placed(0, 7, "node-a")});  // An earlier "train".
  // Another JobSet whose name extends this one's.
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(
                      store::keys::AttemptPodsKey("ns", "train2", 2, 0), "x"))
                  .status(),
              IsOk());
  absl::StatusOr<std::vector<StoredAttempt>> all_or =
      ReadAttemptPods(&store_, "ns", "train", "js-uid");
  ASSERT_THAT(all_or.status(), IsOk());
  std::vector<StoredAttempt>& all = *all_or;
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].attempt, 2);
  ASSERT_EQ(all[0].pods.size(), 11u);
  for (int part = 0; part <= 10; ++part)
    EXPECT_EQ(all[0].pods[part].uid, Uid(100 + part));
  EXPECT_EQ(all[1].attempt, 10);
  EXPECT_THAT(Names(all[1].pods), ElementsAre(PodName("train-w-0", 0, Uid(1)),
                                              PodName("train-w-0", 1, Uid(2))));
  absl::StatusOr<std::vector<StoredAttempt>> ten_or =
      ReadAttemptPods(&store_, "ns", "train", "js-uid", 10);
  ASSERT_THAT(ten_or.status(), IsOk());
  std::vector<StoredAttempt>& ten = *ten_or;
  ASSERT_EQ(ten.size(), 1u);
  EXPECT_EQ(ten[0].attempt, 10);
  absl::StatusOr<std::vector<StoredAttempt>> none_or =
      ReadAttemptPods(&store_, "ns", "train", "js-uid", 1);
  ASSERT_THAT(none_or.status(), IsOk());
  std::vector<StoredAttempt>& none = *none_or;
  EXPECT_THAT(none, IsEmpty());
}

TEST_F(ReadAttemptPodsTest, APartThatDoesNotDecodeIsDataLoss) {
  ASSERT_THAT(
      store_
          .Commit(store::Batch().Put(
              store::keys::AttemptPodsKey("ns", "train", 4, 0), "\xff\xff"))
          .status(),
      IsOk());
  EXPECT_THAT(ReadAttemptPods(&store_, "ns", "train", "js-uid").status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("attemptpods/ns/train/")));
}

TEST(SelectAttemptPodTest, ByNameElseByJobAndIndex) {
  auto pod = [](std::string job, int32_t index, int uid) {
    AttemptPod p;
    p.uid = Uid(uid);
    p.job = std::move(job);
    p.completion_index = index;
    p.name = PodName(p.job, index, p.uid);
    return p;
  };
  // Attempt 4: a suspension erased w-0's pods, the restart its next ones.
  const std::vector<AttemptPod> pods = {
      pod("train-w-0", 0, 1),   pod("train-w-0", 1, 2),
      pod("train-w-0", 0, 3),   pod("train-w-0", 1, 4),
      pod("train-ps-0", -1, 5), pod("train-ps-0", -1, 6),
      pod("train-one-0", -1, 7)};
  struct Case {
    std::string name, job;
    int32_t index;
    absl::StatusCode code;
    std::string want;  // The uid picked, or a substring of the error.
  };
  for (const Case& c : std::vector<Case>{
           // Its own name: exactly that pod, even if not the last.
           {PodName("train-w-0", 0, Uid(1)), "", 0, absl::StatusCode::kOk,
            Uid(1)},
           // A current pod's name: its Job and index pick the last erased.
           {"train-w-0-0-zzzzz", "train-w-0", 0, absl::StatusCode::kOk, Uid(3)},
           {"train-w-0-1-zzzzz", "train-w-0", 1, absl::StatusCode::kOk, Uid(4)},
           {"train-one-0-zzzzz", "train-one-0", -1, absl::StatusCode::kOk,
            Uid(7)},
           {"train-ps-0-zzzzz", "train-ps-0", -1,
            absl::StatusCode::kFailedPrecondition,
            PodName("train-ps-0", -1, Uid(5))},
           {"train-w-0-7-zzzzz", "train-w-0", 7, absl::StatusCode::kNotFound,
            "not kept"},
           {"other", "", -1, absl::StatusCode::kNotFound, "\"other\""},
       }) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<AttemptPod> got =
        SelectAttemptPod(pods, c.name, c.job, c.index);
    if (c.code == absl::StatusCode::kOk) {
      ASSERT_THAT(got.status(), IsOk());
      EXPECT_EQ(got->uid, c.want);
    } else {
      EXPECT_THAT(got.status(), StatusIs(c.code, HasSubstr(c.want)));
    }
  }
}

}  // namespace
}  // namespace jobset::scheduler
