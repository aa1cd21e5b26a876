// label|taint node arguments as kubectl reads them, and what each prints.
#include "cli/cmd/node_edits.h"

#include <string>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::string Show(const api::Taint& t) {
  return t.key() + "=" + t.value() + ":" + t.effect();
}

TEST(ParseLabelArgsTest, SetsAndRemoves) {
  absl::StatusOr<api::LabelNodeRequest> r = ParseLabelArgs(
      "n1", {"jobsetd.io/pool=secure", "zone=", "old-", "x=a=b"}, true);
  ASSERT_THAT(r.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid label value: \"x=a=b\"")));
  r = ParseLabelArgs("n1", {"jobsetd.io/pool=secure", "zone=", "old-", "old-"},
                     true);
  ASSERT_THAT(r.status(), IsOk());
  EXPECT_EQ(r->name(), "n1");
  EXPECT_TRUE(r->overwrite());
  EXPECT_THAT(r->labels(),
              UnorderedElementsAre(Pair("jobsetd.io/pool", "secure"),
                                   Pair("zone", "")));
  EXPECT_THAT(r->remove(), ElementsAre("old"));
}

TEST(ParseLabelArgsTest, RefusesWithKubectlsMessages) {
  const struct {
    std::vector<std::string> specs;
    std::string message;
  } cases[] = {
      {{}, "at least one label update is required"},
      {{"k"}, "unknown label spec: k"},
      {{"-"}, "unknown label spec: -"},
      {{"bad key=v"}, "invalid label spec: bad key=v"},
      {{"bad key-"}, "invalid label spec: bad key-"},
      {{"k=v v"}, "invalid label value: \"k=v v\""},
      {{"k=v", "k-"},
       "can not both modify and remove a label in the same command"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(
        ParseLabelArgs("n1", c.specs, false).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.message;
  }
}

TEST(ParseTaintArgsTest, AddsAndRemovesAsKubectl) {
  absl::StatusOr<api::TaintNodeRequest> r =
      ParseTaintArgs("n1",
                     {"dedicated=team-a:NoSchedule", "gpu:NoExecute",
                      "old:PreferNoSchedule-", "all-"},
                     false);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->add_size(), 2);
  EXPECT_EQ(Show(r->add(0)), "dedicated=team-a:NoSchedule");
  EXPECT_EQ(Show(r->add(1)), "gpu=:NoExecute");
  ASSERT_EQ(r->remove_size(), 2);
  EXPECT_EQ(Show(r->remove(0)), "old=:PreferNoSchedule");
  EXPECT_EQ(Show(r->remove(1)), "all=:");
  EXPECT_FALSE(r->overwrite());
}

TEST(ParseTaintArgsTest, RefusesWithKubectlsMessages) {
  const struct {
    std::vector<std::string> specs;
    std::string message;
  } cases[] = {
      {{}, "at least one taint update is required"},
      {{"k=v"}, "invalid taint spec: k=v"},
      {{"k=v:Sometimes"},
       "invalid taint effect: Sometimes, unsupported taint effect"},
      {{"a:b:NoSchedule"}, "invalid taint spec: a:b:NoSchedule"},
      {{"bad key:NoSchedule"}, "invalid taint spec: bad key:NoSchedule"},
      {{"k=bad value:NoSchedule"}, "invalid taint spec: k=bad value"},
      {{"k:Sometimes-"}, "invalid taint spec: k:Sometimes-"},
      {{"k=1:NoSchedule", "k=2:NoSchedule"},
       "duplicated taints with the same key and effect: k=2:NoSchedule"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(
        ParseTaintArgs("n1", c.specs, false).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.message;
  }
}

api::Node WithLabels(
    std::initializer_list<std::pair<std::string, std::string>> l) {
  api::Node node;
  for (const auto& [k, v] : l)
    (*node.mutable_metadata()->mutable_labels())[k] = v;
  return node;
}

TEST(OutcomeTest, SaysWhatKubectlSays) {
  EXPECT_EQ(
      LabelOutcome(WithLabels({{"a", "1"}}), WithLabels({{"a", "1"}}), false),
      "not labeled");
  EXPECT_EQ(LabelOutcome(WithLabels({{"a", "1"}}),
                         WithLabels({{"a", "1"}, {"b", "2"}}), false),
            "labeled");
  EXPECT_EQ(
      LabelOutcome(WithLabels({{"a", "1"}}), WithLabels({{"a", "2"}}), true),
      "labeled");
  EXPECT_EQ(LabelOutcome(WithLabels({{"a", "1"}}), WithLabels({}), false),
            "unlabeled");
  api::TaintNodeRequest r;
  r.add_add()->set_key("a");
  EXPECT_EQ(TaintOutcome(r), "tainted");
  r.add_remove()->set_key("b");
  EXPECT_EQ(TaintOutcome(r), "modified");
  r.clear_add();
  EXPECT_EQ(TaintOutcome(r), "untainted");
  r.set_overwrite(true);
  EXPECT_EQ(TaintOutcome(r), "modified");
}

}  // namespace
}  // namespace jobset::cli
