#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/records/constants.h"
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

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// A child Job of JobSet `jobset` in "default" whose one container reads
// its host's address through the downward API.
api::Job MakeJob(const std::string& jobset, const std::string& name) {
  api::Job job;
  job.mutable_metadata()->set_name(name);
  job.mutable_metadata()->set_namespace_("default");
  job.mutable_metadata()->set_uid(absl::StrCat(name, "-uid"));
  (*job.mutable_metadata()->mutable_labels())[kJobSetNameKey] = jobset;
  job.mutable_spec()->set_completion_mode("Indexed");
  api::PodTemplateSpec* tmpl = job.mutable_spec()->mutable_template_();
  (*tmpl->mutable_metadata()->mutable_labels())[kJobSetNameKey] = jobset;
  api::Container* c = tmpl->mutable_spec()->add_containers();
  c->set_name("main");
  api::EnvVar* literal = c->add_env();
  literal->set_name("MODE");
  literal->set_value("train");
  api::EnvVar* host = c->add_env();
  host->set_name("HOST_IP");
  host->mutable_value_from()->mutable_field_ref()->set_field_path(
      "status.hostIP");
  return job;
}

std::string Env(const api::Pod& pod, const std::string& name) {
  for (const api::EnvVar& var : pod.spec().containers(0).env()) {
    if (var.name() == name) return var.value();
  }
  return "<unset>";
}

std::vector<std::string> Names(const std::vector<api::Pod>& pods) {
  std::vector<std::string> names;
  for (const api::Pod& pod : pods) names.push_back(pod.metadata().name());
  return names;
}

class StoredPodsTest : public ::testing::Test {
 protected:
  // Stores `job` and its pods, one record per index; `bound` of them placed.
  void Put(const api::Job& job, int pods, int bound) {
    api::JobPods records;
    for (int i = 0; i < pods; ++i) {
      api::PodRecord* r = records.add_pods();
      *r = NewPodRecord(absl::StrCat(job.metadata().name(), "-", i),
                        absl::StrCat(job.metadata().name(), "-pod-", i), i,
                        kNow);
      if (i < bound) BindPod("node-a", "10.0.0.1", kNow, r);
    }
    const std::string& jobset = job.metadata().labels().at(kJobSetNameKey);
    store::Batch batch;
    batch.Put(store::keys::JobKey("default", jobset, job.metadata().name()),
              job.SerializeAsString());
    batch.Put(store::keys::JobPodsKey("default", jobset, job.metadata().name()),
              records.SerializeAsString());
    ASSERT_THAT(store_.Commit(batch).status(), IsOk());
  }

  store::MemoryStore store_;
};

TEST_F(StoredPodsTest, BuildsEachPodFromItsJobAndRecord) {
  Put(MakeJob("train", "train-workers-0"), 2, 1);

  absl::StatusOr<StoredPods> read =
      ReadStoredPods(&store_, "pods/default/train/");
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(read->revision, store_.CurrentRevision());
  ASSERT_EQ(read->pods.size(), 2);

  const api::Pod& bound = read->pods[0];
  EXPECT_EQ(bound.metadata().name(), "train-workers-0-0");
  EXPECT_EQ(bound.metadata().namespace_(), "default");
  EXPECT_EQ(bound.metadata().uid(), "train-workers-0-pod-0");
  EXPECT_EQ(bound.metadata().labels().at("batch.kubernetes.io/job-name"),
            "train-workers-0");
  EXPECT_EQ(bound.metadata().labels().at(kCompletionIndexKey), "0");
  EXPECT_EQ(bound.spec().hostname(), "train-workers-0-0");
  EXPECT_EQ(bound.spec().node_name(), "node-a");
  EXPECT_EQ(bound.status().host_ip(), "10.0.0.1");
  EXPECT_EQ(Env(bound, "MODE"), "train");
  EXPECT_EQ(Env(bound, "HOST_IP"), "10.0.0.1");
  EXPECT_EQ(Env(bound, kEnvCompletionIndex), "0");
  EXPECT_EQ(Env(bound, kEnvJobSetName), "train");

  const api::Pod& pending = read->pods[1];
  EXPECT_EQ(pending.metadata().name(), "train-workers-0-1");
  EXPECT_EQ(pending.metadata().labels().at("batch.kubernetes.io/job-name"),
            "train-workers-0");
  EXPECT_EQ(pending.spec().hostname(), "train-workers-0-1");
  EXPECT_EQ(pending.spec().node_name(), "");
  EXPECT_EQ(pending.status().phase(), "Pending");
  // Not bound: the environment is the template's, unresolved.
  EXPECT_EQ(Env(pending, kEnvCompletionIndex), "<unset>");
}

// A Job whose pods are split across records reads back whole, and the
// neighbouring Job's records are not taken for its chunks.
TEST_F(StoredPodsTest, ReadsEveryChunkOfAJobsPods) {
  const api::Job job = MakeJob("train", "train-w-1");
  std::map<std::string, api::PodRecord> pods;
  for (int i = 0; i < 40; ++i) {
    api::PodRecord r = NewPodRecord(absl::StrCat("train-w-1-", i),
                                    absl::StrCat("pod-", i), i, kNow);
    BindPod("node-a", "10.0.0.1", kNow, &r);
    pods[r.name()] = r;
  }
  const std::vector<std::string> chunks =
      EncodeJobPodsChunks("train-w-1", pods, 256);
  ASSERT_GT(chunks.size(), 3u);
  store::Batch batch;
  batch.Put(store::keys::JobKey("default", "train", "train-w-1"),
            job.SerializeAsString());
  for (size_t i = 0; i < chunks.size(); ++i) {
    batch.Put(
        JobPodsChunkKey("default", "train", "train-w-1", static_cast<int>(i)),
        chunks[i]);
  }
  ASSERT_THAT(store_.Commit(batch).status(), IsOk());
  Put(MakeJob("train", "train-w-10"), 1, 1);

  absl::StatusOr<StoredPods> read =
      ReadStoredPods(&store_, "pods/default/train/");
  ASSERT_THAT(read, IsOk());
  ASSERT_EQ(read->pods.size(), 41u);
  int of_w1 = 0;
  for (const api::Pod& pod : read->pods) {
    if (pod.metadata().labels().at("batch.kubernetes.io/job-name") ==
        "train-w-1") {
      ++of_w1;
      EXPECT_EQ(pod.spec().node_name(), "node-a");
    }
  }
  EXPECT_EQ(of_w1, 40);
}

TEST_F(StoredPodsTest, ListsByJobKeyWithinThePrefixOnly) {
  Put(MakeJob("train", "train-workers-1"), 1, 1);
  Put(MakeJob("train", "train-leader-0"), 2, 0);
  Put(MakeJob("train2", "train2-workers-0"), 1, 0);

  absl::StatusOr<StoredPods> jobset =
      ReadStoredPods(&store_, "pods/default/train/");
  ASSERT_THAT(jobset, IsOk());
  EXPECT_THAT(
      Names(jobset->pods),
      ElementsAre("train-leader-0-0", "train-leader-0-1", "train-workers-1-0"));

  absl::StatusOr<StoredPods> ns = ReadStoredPods(&store_, "pods/default/");
  ASSERT_THAT(ns, IsOk());
  EXPECT_EQ(ns->pods.size(), 4);
}

TEST_F(StoredPodsTest, ReadsEveryPage) {
  // More Jobs than one scan page holds.
  for (int i = 0; i < 1001; ++i) {
    Put(MakeJob("big", absl::StrCat("big-w-", absl::Dec(i, absl::kZeroPad4))),
        1, 0);
  }
  absl::StatusOr<StoredPods> read = ReadStoredPods(&store_, "pods/default/");
  ASSERT_THAT(read, IsOk());
  ASSERT_EQ(read->pods.size(), 1001);
  EXPECT_EQ(read->pods.back().metadata().name(), "big-w-1000-0");
}

TEST_F(StoredPodsTest, SkipsRecordsWhoseJobIsGone) {
  Put(MakeJob("train", "train-workers-0"), 2, 2);
  Put(MakeJob("train", "train-workers-1"), 1, 1);
  store::Batch batch;
  batch.Delete(store::keys::JobKey("default", "train", "train-workers-0"));
  ASSERT_THAT(store_.Commit(batch).status(), IsOk());

  absl::StatusOr<StoredPods> read =
      ReadStoredPods(&store_, "pods/default/train/");
  ASSERT_THAT(read, IsOk());
  EXPECT_THAT(Names(read->pods), ElementsAre("train-workers-1-0"));
}

TEST_F(StoredPodsTest, PodsOfAJobBeingDeletedAreBeingDeletedToo) {
  api::Job job = MakeJob("train", "train-workers-0");
  job.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(42);
  Put(job, 2, 2);

  absl::StatusOr<StoredPods> read =
      ReadStoredPods(&store_, "pods/default/train/");
  ASSERT_THAT(read, IsOk());
  ASSERT_EQ(read->pods.size(), 2u);
  for (const api::Pod& pod : read->pods) {
    EXPECT_EQ(pod.metadata().deletion_timestamp().seconds(), 42);
  }
}

TEST_F(StoredPodsTest, EmptyPrefixHasNoPodsAndTheCurrentRevision) {
  Put(MakeJob("train", "train-workers-0"), 1, 0);
  absl::StatusOr<StoredPods> read = ReadStoredPods(&store_, "pods/other/");
  ASSERT_THAT(read, IsOk());
  EXPECT_THAT(read->pods, IsEmpty());
  EXPECT_EQ(read->revision, store_.CurrentRevision());
}

TEST_F(StoredPodsTest, GarbageRecordsIsDataLossNamingTheKey) {
  store::Batch batch;
  batch.Put(store::keys::JobKey("default", "train", "train-workers-0"),
            MakeJob("train", "train-workers-0").SerializeAsString());
  batch.Put(store::keys::JobPodsKey("default", "train", "train-workers-0"),
            "\xff\xff garbage");
  ASSERT_THAT(store_.Commit(batch).status(), IsOk());

  EXPECT_THAT(ReadStoredPods(&store_, "pods/default/"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("pods/default/train/train-workers-0")));
}

TEST_F(StoredPodsTest, GarbageJobIsDataLossNamingTheKey) {
  Put(MakeJob("train", "train-workers-0"), 1, 0);
  store::Batch batch;
  batch.Put(store::keys::JobKey("default", "train", "train-workers-0"),
            "\xff\xff garbage");
  ASSERT_THAT(store_.Commit(batch).status(), IsOk());

  EXPECT_THAT(ReadStoredPods(&store_, "pods/default/"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("jobs/default/train/train-workers-0")));
}

TEST_F(StoredPodsTest, RefusesAPrefixOutsidePods) {
  EXPECT_THAT(
      ReadStoredPods(&store_, "jobs/default/"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jobs/default/")));
}

}  // namespace
}  // namespace jobset::scheduler
