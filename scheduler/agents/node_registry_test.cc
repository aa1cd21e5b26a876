#include "scheduler/agents/node_registry.h"

#include <optional>
#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/node_object.h"
#include "scheduler/agents/test_orders.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::HelloFrom;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

TEST(NodeRegistryTest, RegistersDatesAndStoresOnlyWhatChanged) {
  NodeRegistry registry;
  std::optional<api::NodeRecord> to_store;
  auto first = std::make_shared<AgentSession>("n1", nullptr);
  EXPECT_EQ(registry.Register(HelloFrom("n1").node(), first, kStart, &to_store),
            nullptr);
  ASSERT_TRUE(to_store.has_value());  // New: stored, dated.
  EXPECT_EQ(to_store->creation_timestamp().seconds(),
            absl::ToUnixSeconds(kStart));
  NodeEntry* entry = registry.Find("n1");
  ASSERT_NE(entry, nullptr);
  EXPECT_TRUE(entry->ready);
  EXPECT_EQ(entry->last_seen, kStart);
  EXPECT_EQ(entry->transition, kStart);

  // Lost, then back with the same registration: nothing to store, a
  // transition, the earlier session replaced.
  EXPECT_EQ(NodeRegistry::MarkLost(*entry, kStart + absl::Seconds(5)), first);
  EXPECT_FALSE(entry->ready);
  EXPECT_EQ(entry->session, nullptr);
  auto second = std::make_shared<AgentSession>("n1", nullptr);
  const absl::Time back = kStart + absl::Seconds(9);
  EXPECT_EQ(registry.Register(HelloFrom("n1").node(), second, back, &to_store),
            nullptr);
  EXPECT_FALSE(to_store.has_value());
  EXPECT_EQ(entry->transition, back);
  auto third = std::make_shared<AgentSession>("n1", nullptr);
  api::NodeRegistration moved = HelloFrom("n1").node();
  moved.set_address("127.0.0.9");
  EXPECT_EQ(registry.Register(moved, third, back, &to_store), second);
  ASSERT_TRUE(to_store.has_value());  // Changed: stored again.
  EXPECT_EQ(to_store->registration().address(), "127.0.0.9");
  EXPECT_EQ(entry->transition, back);  // Was Ready: no transition.

  entry->node.set_cordoned(true);
  const NodeRegistry::Counts counts = registry.Count();
  EXPECT_EQ(counts.ready, 1);
  EXPECT_EQ(counts.not_ready, 0);
  EXPECT_EQ(counts.cordoned, 1);
  EXPECT_EQ(registry.Erase("n1"), third);
  EXPECT_EQ(registry.Find("n1"), nullptr);
}

TEST(NodeRegistryTest, LoadsTheStoredNodesReadySinceTheStart) {
  store::MemoryStore store;
  api::NodeRecord record;
  *record.mutable_registration() = HelloFrom("n1").node();
  record.set_cordoned(true);
  ASSERT_THAT(StoreNode(store, record), IsOk());
  ASSERT_THAT(store
                  .Commit(store::Batch().Put(store::keys::NodeKey("garbage"),
                                             "\xff\xff\xff"))
                  .status(),
              IsOk());
  int undecodable = 0;
  absl::StatusOr<NodeRegistry> registry =
      NodeRegistry::Load(store, kStart, &undecodable);
  ASSERT_THAT(registry.status(), IsOk());
  EXPECT_EQ(undecodable, 1);
  ASSERT_THAT(registry->nodes(), SizeIs(1));
  const NodeEntry& entry = registry->nodes().at("n1");
  EXPECT_TRUE(entry.ready);
  EXPECT_EQ(entry.transition, kStart);
  EXPECT_EQ(entry.last_seen, absl::InfinitePast());
  EXPECT_TRUE(entry.node.cordoned());
}

TEST(NodeRegistryTest, ToNodeInfoNamesTheFieldItCannotPlaceOn) {
  api::NodeRecord record;
  *record.mutable_registration() = HelloFrom("n1").node();
  record.set_cordoned(true);
  absl::StatusOr<NodeInfo> info = ToNodeInfo(record);
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->name, "n1");
  EXPECT_EQ(info->address, "127.0.0.2");
  EXPECT_EQ(info->allocatable.cpu_millis, 8000);
  EXPECT_EQ(info->allocatable.memory_bytes, int64_t{32} << 30);
  EXPECT_EQ(info->allocatable.extended.at("nvidia.com/gpu"), 4);
  EXPECT_EQ(info->labels.at("slice"), "a");
  EXPECT_TRUE(info->ready);
  EXPECT_TRUE(info->cordoned);

  api::NodeRecord bad = record;
  api::Taint* t = bad.mutable_registration()->add_taints();
  t->set_key("k");
  t->set_effect("Sometimes");
  EXPECT_THAT(ToNodeInfo(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.taints[0].effect")));
  bad = record;
  (*bad.mutable_registration()->mutable_capacity())["memory"] = "lots";
  EXPECT_THAT(ToNodeInfo(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.capacity[memory]")));
}

TEST(NodeRegistryTest, DescribesANodeWithItsLoadAndLiveness) {
  NodeEntry entry;
  *entry.node.mutable_registration() = HelloFrom("n1").node();
  entry.ready = true;
  entry.session = std::make_shared<AgentSession>("n1", nullptr);
  NodeLoad load;
  load.pods = 2;
  load.allocated.cpu_millis = 1500;
  load.allocated.extended["nvidia.com/gpu"] = 2;
  const api::Node node = Describe(entry, load);
  const auto& annotations = node.metadata().annotations();
  EXPECT_EQ(annotations.at(kConnectedAnnotation), "true");
  EXPECT_EQ(annotations.at(kPodsAnnotation), "2");
  EXPECT_EQ(annotations.at(kAllocatedAnnotation), "cpu=1500m,nvidia.com/gpu=2");
  EXPECT_EQ(node.status().conditions(0).status(), "True");
}

}  // namespace
}  // namespace jobset::scheduler
