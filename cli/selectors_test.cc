#include "cli/selectors.h"

#include "cli/jsonpath.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

google::protobuf::Value Json(absl::string_view text) {
  absl::StatusOr<google::protobuf::Value> value = ParseJsonValue(text);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : google::protobuf::Value();
}

constexpr absl::string_view kPod = R"json({
  "metadata": {"name": "p-0", "namespace": "team", "labels": {"app": "x"}},
  "spec": {"restartPolicy": "Never"},
  "status": {"phase": "Pending"}
})json";

// The fields get accepts for pods and JobSets (cli/cmd/kinds.cc).
const std::vector<std::string> kPodFields = {
    "metadata.name",      "metadata.namespace", "spec.nodeName",
    "spec.restartPolicy", "status.phase",       "status.podIP"};
const std::vector<std::string> kJobSetFields = {"metadata.name",
                                                "metadata.namespace"};

struct Case {
  std::string selector;
  bool want;
};

TEST(FieldSelectorTest, MatchesAsKubernetes) {
  const google::protobuf::Value pod = Json(kPod);
  for (const Case& c : std::vector<Case>{
           {"", true},
           {"status.phase=Pending", true},
           {"status.phase==Pending", true},
           {"status.phase!=Pending", false},
           {"status.phase=Running", false},
           {"metadata.name=p-0,metadata.namespace=team", true},
           {"metadata.name=p-0,metadata.namespace=other", false},
           // Unset reads as "": unbound pods.
           {"spec.nodeName=", true},
           {"spec.nodeName!=", false},
           {"spec.nodeName=n1", false},
       }) {
    absl::StatusOr<FieldSelector> selector =
        FieldSelector::Parse(c.selector, kPodFields);
    ASSERT_TRUE(selector.ok()) << c.selector << ": " << selector.status();
    EXPECT_EQ(selector->Matches(pod), c.want) << c.selector;
  }
}

TEST(FieldSelectorTest, RejectsInKubernetesWords) {
  absl::StatusOr<FieldSelector> unsupported =
      FieldSelector::Parse("spec.foo=x", kPodFields);
  EXPECT_EQ(unsupported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unsupported.status().message(),
            "field label not supported: spec.foo");
  absl::StatusOr<FieldSelector> jobset_phase =
      FieldSelector::Parse("spec.nodeName=a", kJobSetFields);
  EXPECT_THAT(std::string(jobset_phase.status().message()),
              HasSubstr("field label not supported: spec.nodeName"));
  absl::StatusOr<FieldSelector> garbage =
      FieldSelector::Parse("status.phase", kPodFields);
  EXPECT_EQ(garbage.status().message(),
            "invalid selector: 'status.phase'; can't understand "
            "'status.phase'");
}

TEST(FieldSelectorTest, EscapedSeparators) {
  absl::StatusOr<FieldSelector> selector = FieldSelector::Parse(
      R"(metadata.name=a\,b,status.phase!=x\=y)", kPodFields);
  ASSERT_TRUE(selector.ok()) << selector.status();
  ASSERT_EQ(selector->requirements().size(), 2u);
  EXPECT_EQ(selector->requirements()[0].value, "a,b");
  EXPECT_EQ(selector->requirements()[1].value, "x=y");
  EXPECT_FALSE(selector->requirements()[1].equals);
}

TEST(FieldTextTest, ScalarsAsText) {
  const google::protobuf::Value v =
      Json(R"({"spec": {"unschedulable": true, "n": 3, "f": 1.5}})");
  EXPECT_EQ(FieldText(v, "spec.unschedulable"), "true");
  EXPECT_EQ(FieldText(v, "spec.n"), "3");
  EXPECT_EQ(FieldText(v, "spec.f"), "1.5");
  EXPECT_EQ(FieldText(v, "spec.missing"), "");
  EXPECT_EQ(FieldText(v, "spec.n.deeper"), "");
}

TEST(LabelsOfTest, ReadsMetadataLabels) {
  EXPECT_EQ(LabelsOf(Json(kPod)).at("app"), "x");
  EXPECT_TRUE(LabelsOf(Json(R"({"metadata": {}})")).empty());
  EXPECT_TRUE(LabelsOf(Json(R"("a string")")).empty());
}

}  // namespace
}  // namespace jobset::cli
