// NodeRestriction's record: what a node's Hello may change, and the admin's
// label and taint edits with kubectl's rules and messages.
#include "scheduler/agents/node_admin.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/agent_input.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

api::Taint MakeTaint(const std::string& key, const std::string& value,
                     const std::string& effect) {
  api::Taint t;
  t.set_key(key);
  t.set_value(value);
  t.set_effect(effect);
  return t;
}

api::NodeRegistration Hello(std::initializer_list<api::Taint> taints = {}) {
  api::NodeRegistration r;
  r.set_name("n1");
  r.set_address("10.0.0.1");
  (*r.mutable_labels())["slice"] = "a";
  for (const api::Taint& t : taints) *r.add_taints() = t;
  return r;
}

std::vector<std::string> Keys(const std::vector<api::Taint>& taints) {
  std::vector<std::string> keys;
  for (const api::Taint& t : taints)
    keys.push_back(t.key() + "=" + t.value() + ":" + t.effect());
  return keys;
}

TEST(MergeHelloTest, ANewNodeRegistersWithItsTaintsOnlyOnce) {
  api::NodeRecord record;
  bool ignored = true;
  EXPECT_TRUE(MergeHello(Hello({MakeTaint("gpu", "", "NoSchedule")}), record,
                         &ignored));
  EXPECT_FALSE(ignored);
  EXPECT_THAT(Keys(EffectiveTaints(record)), ElementsAre("gpu=:NoSchedule"));
  // The same Hello again: nothing changed.
  EXPECT_FALSE(MergeHello(Hello({MakeTaint("gpu", "", "NoSchedule")}), record,
                          &ignored));
  // A Hello without it: ignored, the taint stays.
  EXPECT_FALSE(MergeHello(Hello(), record, &ignored));
  EXPECT_TRUE(ignored);
  EXPECT_THAT(Keys(EffectiveTaints(record)), ElementsAre("gpu=:NoSchedule"));
  EXPECT_THAT(record.registration().taints(), IsEmpty());
}

TEST(MergeHelloTest, ARecordStoredBeforeKeepsTheTaintsItHad) {
  api::NodeRecord record;
  *record.mutable_registration() = Hello({MakeTaint("a", "", "NoExecute")});
  EXPECT_THAT(Keys(EffectiveTaints(record)), ElementsAre("a=:NoExecute"));
  bool ignored = false;
  EXPECT_TRUE(MergeHello(Hello(), record, &ignored));
  EXPECT_TRUE(ignored);
  EXPECT_THAT(Keys(EffectiveTaints(record)), ElementsAre("a=:NoExecute"));
}

TEST(EffectiveLabelsTest, AdminsWinAndRestrictedOnesFromTheNodeNeverCount) {
  api::NodeRecord record;
  *record.mutable_registration() = Hello();
  // Stored before NodeRestriction, by the node itself.
  (*record.mutable_registration()->mutable_labels())["jobsetd.io/pool"] = "x";
  (*record.mutable_registration()
        ->mutable_labels())["node-restriction.kubernetes.io/a"] = "x";
  (*record.mutable_registration()->mutable_labels())["zone"] = "z1";
  (*record.mutable_admin()->mutable_labels())["zone"] = "z2";
  (*record.mutable_admin()->mutable_labels())["jobsetd.io/pool"] = "secure";
  record.mutable_admin()->add_removed_labels("slice");
  EXPECT_THAT(
      EffectiveLabels(record),
      ElementsAre(Pair("jobsetd.io/pool", "secure"), Pair("zone", "z2")));
  EXPECT_THAT(EffectiveRegistration(record).labels(), ::testing::SizeIs(2));
}

api::LabelNodeRequest Label(
    std::initializer_list<std::pair<std::string, std::string>> set,
    std::initializer_list<std::string> remove = {}, bool overwrite = false) {
  api::LabelNodeRequest r;
  r.set_name("n1");
  for (const auto& [k, v] : set) (*r.mutable_labels())[k] = v;
  for (const std::string& k : remove) r.add_remove(k);
  r.set_overwrite(overwrite);
  return r;
}

TEST(ApplyLabelsTest, SetsRestrictedLabelsAndKeepsThemOverTheNodes) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello(), record, &ignored);
  ASSERT_THAT(ApplyLabels(Label({{"jobsetd.io/pool", "secure"}}), record),
              IsOk());
  // The node reports its labels again, claiming none: the admin's stays.
  MergeHello(Hello(), record, &ignored);
  EXPECT_THAT(
      EffectiveLabels(record),
      ElementsAre(Pair("jobsetd.io/pool", "secure"), Pair("slice", "a")));
}

TEST(ApplyLabelsTest, ChangingAValueNeedsOverwriteAsKubectlSays) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello(), record, &ignored);
  EXPECT_THAT(ApplyLabels(Label({{"slice", "b"}}), record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "'slice' already has a value (a), and --overwrite is "
                       "false"));
  EXPECT_THAT(EffectiveLabels(record), ElementsAre(Pair("slice", "a")));
  // The same value is no change; overwrite changes it.
  EXPECT_THAT(ApplyLabels(Label({{"slice", "a"}}), record), IsOk());
  EXPECT_THAT(ApplyLabels(Label({{"slice", "b"}}, {}, true), record), IsOk());
  EXPECT_THAT(EffectiveLabels(record), ElementsAre(Pair("slice", "b")));
}

TEST(ApplyLabelsTest, RemovingANodesLabelHidesItWhileTheNodeReportsIt) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello(), record, &ignored);
  ASSERT_THAT(ApplyLabels(Label({}, {"slice"}), record), IsOk());
  MergeHello(Hello(), record, &ignored);
  EXPECT_THAT(EffectiveLabels(record), IsEmpty());
  // Set again by the admin: shown with the admin's value.
  ASSERT_THAT(ApplyLabels(Label({{"slice", "c"}}), record), IsOk());
  EXPECT_THAT(EffectiveLabels(record), ElementsAre(Pair("slice", "c")));
  EXPECT_THAT(record.admin().removed_labels(), IsEmpty());
}

TEST(ApplyLabelsTest, RefusesBadLabelsNamingThemAndChangesNothing) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello(), record, &ignored);
  const api::NodeRecord before = record;
  EXPECT_THAT(ApplyLabels(Label({{"bad key", "v"}}), record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("labels[bad key]")));
  EXPECT_THAT(ApplyLabels(Label({{"k", "bad value!"}}), record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("labels[k]: invalid value \"bad value!\"")));
  EXPECT_THAT(ApplyLabels(Label({{"k", "v"}}, {"k"}), record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("can not both modify and remove")));
  api::LabelNodeRequest many = Label({});
  for (int i = 0; i <= kMaxNodeLabels; ++i)
    (*many.mutable_labels())[absl::StrCat("l", i)] = "v";
  EXPECT_THAT(ApplyLabels(many, record),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("257 labels set by admins exceed the limit "
                                 "of 256")));
  EXPECT_EQ(record.SerializeAsString(), before.SerializeAsString());
}

api::TaintNodeRequest Taint(std::initializer_list<api::Taint> add,
                            std::initializer_list<api::Taint> remove = {},
                            bool overwrite = false) {
  api::TaintNodeRequest r;
  r.set_name("n1");
  for (const api::Taint& t : add) *r.add_add() = t;
  for (const api::Taint& t : remove) *r.add_remove() = t;
  r.set_overwrite(overwrite);
  return r;
}

TEST(ApplyTaintsTest, AddsReplacesAndRemovesAsKubectl) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello({MakeTaint("a", "1", "NoSchedule")}), record, &ignored);
  ASSERT_THAT(ApplyTaints(Taint({MakeTaint("b", "", "NoExecute")}), record),
              IsOk());
  EXPECT_THAT(Keys(EffectiveTaints(record)),
              ElementsAre("b=:NoExecute", "a=1:NoSchedule"));
  EXPECT_THAT(ApplyTaints(Taint({MakeTaint("a", "2", "NoSchedule")}), record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Node n1 already has a taint(s) with same effect(s) "
                       "and --overwrite is false"));
  ASSERT_THAT(
      ApplyTaints(Taint({MakeTaint("a", "2", "NoSchedule")}, {}, true), record),
      IsOk());
  EXPECT_THAT(Keys(EffectiveTaints(record)),
              ElementsAre("a=2:NoSchedule", "b=:NoExecute"));
  // key:Effect- removes that one; key- every effect of the key.
  ASSERT_THAT(ApplyTaints(Taint({MakeTaint("a", "", "PreferNoSchedule")},
                                {MakeTaint("b", "", "NoExecute")}),
                          record),
              IsOk());
  ASSERT_THAT(ApplyTaints(Taint({}, {MakeTaint("a", "", "")}), record), IsOk());
  EXPECT_THAT(EffectiveTaints(record), IsEmpty());
  // And no Hello brings the registered one back.
  MergeHello(Hello({MakeTaint("a", "1", "NoSchedule")}), record, &ignored);
  EXPECT_TRUE(ignored);
  EXPECT_THAT(EffectiveTaints(record), IsEmpty());
}

TEST(ApplyTaintsTest, RefusesMissingAndBadTaintsChangingNothing) {
  api::NodeRecord record;
  bool ignored = false;
  MergeHello(Hello({MakeTaint("a", "", "NoSchedule")}), record, &ignored);
  const api::NodeRecord before = record;
  EXPECT_THAT(
      ApplyTaints(Taint({MakeTaint("c", "", "NoSchedule")},
                        {MakeTaint("a", "", "NoExecute")}),
                  record),
      StatusIs(absl::StatusCode::kNotFound, "taint \"a:NoExecute\" not found"));
  EXPECT_THAT(
      ApplyTaints(Taint({MakeTaint("c", "", "Sometimes")}), record),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("add[0].effect: invalid value \"Sometimes\"")));
  EXPECT_THAT(ApplyTaints(Taint({MakeTaint("c", "", "NoSchedule"),
                                 MakeTaint("c", "x", "NoSchedule")}),
                          record),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("duplicated taints")));
  EXPECT_EQ(record.SerializeAsString(), before.SerializeAsString());
}

}  // namespace
}  // namespace jobset::scheduler
