#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "common/uid.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/records.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kJob[] = "train-workers-3";
const absl::Time kCreated = absl::FromUnixSeconds(1'700'000'000);
const absl::Time kScheduled = kCreated + absl::Seconds(2);

// Pod `index` of kJob as the controller creates and binds it.
api::PodRecord Bound(int index, absl::Time created = kCreated) {
  const std::string uid = NewUid();
  api::PodRecord pod =
      NewPodRecord(PodName(kJob, index, uid), uid, index, created);
  BindPod(absl::StrCat("node-", index), absl::StrCat("10.0.0.", index),
          kScheduled, &pod);
  return pod;
}

store::KeyValue Stored(const std::map<std::string, api::PodRecord>& pods) {
  store::KeyValue kv;
  kv.key = store::keys::JobPodsKey("default", "train", kJob);
  kv.value = EncodeJobPods(kJob, pods);
  kv.mod_revision = 7;
  return kv;
}

std::map<std::string, api::PodRecord> ByName(
    const std::vector<api::PodRecord>& pods) {
  std::map<std::string, api::PodRecord> out;
  for (const api::PodRecord& pod : pods) out[pod.name()] = pod;
  return out;
}

// Decodes what EncodeJobPods made of `pods` and expects every record back,
// unchanged, in name order.
void ExpectRoundTrip(const std::map<std::string, api::PodRecord>& pods) {
  absl::StatusOr<std::vector<api::PodRecord>> back =
      DecodeJobPods(Stored(pods));
  ASSERT_THAT(back.status(), IsOk());
  ASSERT_THAT(*back, SizeIs(pods.size()));
  auto it = pods.begin();
  for (const api::PodRecord& pod : *back) {
    EXPECT_TRUE(MessageDifferencer::Equals(pod, it->second))
        << "got " << pod.DebugString() << "want " << it->second.DebugString();
    ++it;
  }
}

TEST(JobPodsTest, PodsAsCreatedAndBoundAreStoredAsColumns) {
  std::map<std::string, api::PodRecord> pods;
  for (int i = 0; i < 15; ++i) {
    api::PodRecord pod = Bound(i);
    pods[pod.name()] = pod;
  }
  const store::KeyValue kv = Stored(pods);
  api::JobPods stored;
  ASSERT_TRUE(stored.ParseFromString(kv.value));
  EXPECT_EQ(stored.pods_size(), 0);
  EXPECT_EQ(stored.bound().completion_indexes_size(), 15);
  // About 40 bytes a pod; each whole record takes over 100.
  EXPECT_LT(kv.value.size(), 15 * 45);
  EXPECT_GT(pods.begin()->second.ByteSizeLong(), 100u);
  ExpectRoundTrip(pods);
}

TEST(JobPodsTest, NonIndexedPodsAreStoredAsColumnsToo) {
  api::PodRecord pod = Bound(-1);
  EXPECT_EQ(pod.name(), absl::StrCat(kJob, "-", pod.uid().substr(0, 5)));
  api::JobPods stored;
  ASSERT_TRUE(stored.ParseFromString(Stored({{pod.name(), pod}}).value));
  EXPECT_EQ(stored.pods_size(), 0);
  ExpectRoundTrip({{pod.name(), pod}});
}

// Anything a bound pod has beyond its creation and binding keeps it whole,
// next to pods stored as columns.
TEST(JobPodsTest, EveryOtherPodIsStoredWhole) {
  const std::vector<
      std::pair<std::string, std::function<void(api::PodRecord*)>>>
      changes = {
          {"running",
           [](api::PodRecord* p) {
             p->mutable_status()->set_phase("Running");
           }},
          {"unbound", [](api::PodRecord* p) { p->clear_node_name(); }},
          {"stopping",
           [](api::PodRecord* p) {
             p->mutable_deletion_timestamp()->set_seconds(5);
           }},
          {"ready",
           [](api::PodRecord* p) {
             SetCondition(p->mutable_status()->mutable_conditions(), "Ready",
                          true, "", "", kScheduled);
           }},
          {"unschedulable",
           [](api::PodRecord* p) {
             SetCondition(p->mutable_status()->mutable_conditions(),
                          "PodScheduled", false, "Unschedulable", "no room",
                          kScheduled);
           }},
          {"bound later",
           [](api::PodRecord* p) {
             p->set_scheduled_seconds(absl::ToUnixSeconds(kScheduled) + 60);
           }},
          {"no bind time",
           [](api::PodRecord* p) { p->clear_scheduled_seconds(); }},
          {"created later",
           [](api::PodRecord* p) {
             p->mutable_creation_timestamp()->set_seconds(
                 absl::ToUnixSeconds(kCreated) + 60);
           }},
          {"creation nanos",
           [](api::PodRecord* p) {
             p->mutable_creation_timestamp()->set_nanos(1);
           }},
          {"no creation time",
           [](api::PodRecord* p) { p->clear_creation_timestamp(); }},
          {"status reason",
           [](api::PodRecord* p) {
             p->mutable_status()->set_reason("Evicted");
           }},
          {"status message",
           [](api::PodRecord* p) { p->mutable_status()->set_message("m"); }},
          {"pod ip",
           [](api::PodRecord* p) {
             p->mutable_status()->set_pod_ip("1.2.3.4");
           }},
          {"start time",
           [](api::PodRecord* p) {
             p->mutable_status()->mutable_start_time()->set_seconds(9);
           }},
          {"container status",
           [](api::PodRecord* p) {
             p->mutable_status()->add_container_statuses()->set_name("main");
           }},
          {"init container status",
           [](api::PodRecord* p) {
             p->mutable_status()->add_init_container_statuses()->set_name("i");
           }},
          {"renamed", [](api::PodRecord* p) { p->set_name("custom-name"); }},
          {"uppercase uid",
           [](api::PodRecord* p) {
             std::string uid = p->uid();
             for (char& c : uid) c = static_cast<char>(std::toupper(c));
             p->set_name(PodName(kJob, p->completion_index(), uid));
             p->set_uid(uid);
           }},
          {"not a uuid",
           [](api::PodRecord* p) {
             p->set_uid("pod-uid-1");
             p->set_name(PodName(kJob, p->completion_index(), p->uid()));
           }},
          {"index below -1",
           [](api::PodRecord* p) {
             p->set_completion_index(-2);
             p->set_name(PodName(kJob, -2, p->uid()));
           }},
      };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    api::PodRecord plain = Bound(0);
    api::PodRecord other = Bound(1);
    change(&other);
    const std::map<std::string, api::PodRecord> pods = {{plain.name(), plain},
                                                        {other.name(), other}};
    api::JobPods stored;
    ASSERT_TRUE(stored.ParseFromString(Stored(pods).value));
    ASSERT_EQ(stored.pods_size(), 1);
    EXPECT_EQ(stored.pods(0).uid(), other.uid());
    EXPECT_EQ(stored.bound().completion_indexes_size(), 1);
    ExpectRoundTrip(pods);
  }
}

TEST(JobPodsTest, RecordsStoredWholeAloneStillRead) {
  // What every JobPods held before the columns.
  api::PodRecord a = Bound(0), b = Bound(1);
  api::JobPods stored;
  *stored.add_pods() = b;
  *stored.add_pods() = a;
  store::KeyValue kv = Stored({});
  kv.value = stored.SerializeAsString();
  absl::StatusOr<std::vector<api::PodRecord>> back = DecodeJobPods(kv);
  ASSERT_THAT(back.status(), IsOk());
  ASSERT_THAT(*back, SizeIs(2));
  EXPECT_EQ(ByName(*back).at(a.name()).uid(), a.uid());
  EXPECT_EQ(ByName(*back).at(b.name()).uid(), b.uid());
}

TEST(JobPodsTest, ColumnsThatDisagreeAreDataLossNamingTheKey) {
  api::PodRecord pod = Bound(0);
  const store::KeyValue good = Stored({{pod.name(), pod}});
  api::JobPods stored;
  ASSERT_TRUE(stored.ParseFromString(good.value));
  const std::vector<std::pair<std::string, std::function<void(api::JobPods*)>>>
      breaks = {
          {"node names",
           [](api::JobPods* s) { s->mutable_bound()->add_node_names("x"); }},
          {"host addresses",
           [](api::JobPods* s) { s->mutable_bound()->clear_host_ips(); }},
          {"bytes of uids",
           [](api::JobPods* s) {
             s->mutable_bound()->mutable_uids()->pop_back();
           }},
          {"completion index -2",
           [](api::JobPods* s) {
             s->mutable_bound()->set_completion_indexes(0, -2);
           }},
      };
  for (const auto& [what, change] : breaks) {
    SCOPED_TRACE(what);
    api::JobPods broken = stored;
    change(&broken);
    store::KeyValue kv = good;
    kv.value = broken.SerializeAsString();
    EXPECT_THAT(DecodeJobPods(kv),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr(kv.key), HasSubstr(what))));
  }
  store::KeyValue garbage = good;
  garbage.value = "\xff\xff\xff";
  EXPECT_THAT(DecodeJobPods(garbage),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(good.key)));
}

// Issue 19: however many pods a Job has, no record passes the store's value
// limit: the pods are split into chunks by bytes, and read back whole.
TEST(JobPodsTest, ManyPodsAreSplitIntoChunksWithinTheLimit) {
  std::map<std::string, api::PodRecord> pods;
  for (int i = 0; i < 100'000; ++i) {
    api::PodRecord pod = Bound(i);
    // Every tenth pod is stored whole (it ran and reported).
    if (i % 10 == 0) {
      pod.mutable_status()->set_phase("Running");
      pod.mutable_status()->set_message(std::string(200, 'm'));
    }
    pods[pod.name()] = std::move(pod);
  }
  // Unsplit, it would not fit.
  ASSERT_GT(EncodeJobPods(kJob, pods).size(), store::Store::kMaxValueBytes);
  const std::vector<std::string> chunks = EncodeJobPodsChunks(kJob, pods);
  ASSERT_GT(chunks.size(), 1u);
  std::map<std::string, api::PodRecord> back;
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_LE(chunks[i].size(), kMaxJobPodsChunkBytes) << i;
    store::KeyValue kv;
    kv.key = JobPodsChunkKey("default", "train", kJob, static_cast<int>(i));
    kv.value = chunks[i];
    absl::StatusOr<std::vector<api::PodRecord>> decoded = DecodeJobPods(kv);
    ASSERT_THAT(decoded.status(), IsOk()) << kv.key;
    for (api::PodRecord& pod : *decoded) {
      const std::string name = pod.name();
      EXPECT_TRUE(back.emplace(name, std::move(pod)).second) << name;
    }
  }
  ASSERT_EQ(back.size(), pods.size());
  for (const auto& [name, pod] : pods) {
    ASSERT_TRUE(MessageDifferencer::Equals(back.at(name), pod)) << name;
  }
}

TEST(JobPodsTest, AFewPodsAreOneChunkAsBefore) {
  std::map<std::string, api::PodRecord> pods;
  for (int i = 0; i < 3; ++i) {
    api::PodRecord pod = Bound(i);
    pods[pod.name()] = pod;
  }
  const std::vector<std::string> chunks = EncodeJobPodsChunks(kJob, pods);
  ASSERT_THAT(chunks, SizeIs(1));
  // What a jobsetd that never split wrote is chunk 0: the same bytes.
  EXPECT_EQ(chunks[0], EncodeJobPods(kJob, pods));
  EXPECT_THAT(EncodeJobPodsChunks(kJob, {}), SizeIs(1));
  // Small chunks: every pod in exactly one.
  EXPECT_THAT(EncodeJobPodsChunks(kJob, pods, 100), SizeIs(3));
}

TEST(JobPodsTest, ChunkKeysParseBack) {
  EXPECT_EQ(JobPodsChunkKey("ns", "js", "js-w-0", 0), "pods/ns/js/js-w-0");
  EXPECT_EQ(JobPodsChunkKey("ns", "js", "js-w-0", 12), "pods/ns/js/js-w-0/12");
  std::optional<JobPodsKeyParts> parts = ParseJobPodsKey("pods/ns/js/j/12");
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->ns, "ns");
  EXPECT_EQ(parts->jobset, "js");
  EXPECT_EQ(parts->job, "j");
  EXPECT_EQ(parts->chunk, 12);
  parts = ParseJobPodsKey("pods/ns/js/j");
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->chunk, 0);
  for (const char* bad :
       {"jobs/ns/js/j", "pods/ns/js", "pods/ns/js/j/0", "pods/ns/js/j/x",
        "pods/ns/js/j/01", "pods/ns//j", "pods/ns/js/j/1/2"}) {
    EXPECT_FALSE(ParseJobPodsKey(bad).has_value()) << bad;
  }
  store::KeyValue kv;
  kv.key = "pods/not-a-job";
  EXPECT_THAT(DecodeJobPods(kv).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pods/not-a-job")));
}

}  // namespace
}  // namespace jobset::scheduler
