#include "cli/jsonpath.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

constexpr absl::string_view kList = R"json({
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"metadata": {"name": "a", "labels": {"app": "x", "tier": "web"},
                  "annotations": {"app.kubernetes.io/name": "z"}},
     "spec": {"replicas": 2},
     "status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"},
                               {"type": "Synced", "status": "False"}]}},
    {"metadata": {"name": "b"},
     "spec": {"replicas": 5},
     "status": {"phase": "Pending",
                "conditions": [{"type": "Ready", "status": "False"}]}},
    {"metadata": {"name": "c"},
     "spec": {"replicas": 1.5, "suspend": true},
     "status": {"phase": "Running"}}
  ]
})json";

struct Case {
  std::string name;
  std::string template_text;
  std::string want;
};

class JsonPathTest : public ::testing::TestWithParam<Case> {};

TEST_P(JsonPathTest, Renders) {
  absl::StatusOr<std::string> out =
      RenderJsonPath(GetParam().template_text, kList);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, JsonPathTest,
    ::testing::Values(
        Case{"Names", "{.items[*].metadata.name}", "a b c"},
        Case{"Kind", "{.kind}", "List"}, Case{"Root", "{$.kind}", "List"},
        Case{"TextAround", "kind={.kind}!", "kind=List!"},
        Case{
            "Range",
            R"({range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end})",
            "a\tRunning\nb\tPending\nc\tRunning\n"},
        Case{"FilterPhase",
             R"({.items[?(@.status.phase=="Running")].metadata.name})", "a c"},
        Case{"FilterSingleQuotes",
             "{.items[?(@.status.phase == 'Pending')].metadata.name}", "b"},
        Case{"FilterNotEqual",
             R"({.items[?(@.status.phase!="Running")].metadata.name})", "b"},
        Case{"FilterNumber", "{.items[?(@.spec.replicas>1)].metadata.name}",
             "a b c"},
        Case{"FilterNumberLessEqual",
             "{.items[?(@.spec.replicas<=2)].metadata.name}", "a c"},
        Case{"FilterExists", "{.items[?(@.metadata.labels)].metadata.name}",
             "a"},
        Case{"FilterBool", "{.items[?(@.spec.suspend==true)].metadata.name}",
             "c"},
        Case{"ConditionStatus",
             R"({.items[0].status.conditions[?(@.type=="Ready")].status})",
             "True"},
        Case{"Index", "{.items[1].metadata.name}", "b"},
        Case{"NegativeIndex", "{.items[-1].metadata.name}", "c"},
        Case{"SliceFromEnd", "{.items[-1:].metadata.name}", "c"},
        Case{"Slice", "{.items[0:2].metadata.name}", "a b"},
        Case{"SliceStep", "{.items[::2].metadata.name}", "a c"},
        Case{"SliceBeyondEnd", "{.items[1:10].metadata.name}", "b c"},
        Case{"Union", "{.items[0,2].metadata.name}", "a c"},
        Case{"BracketName", "{.items[0]['metadata']['name']}", "a"},
        Case{"NameUnion", "{.items[0].metadata.labels['app','tier']}", "x web"},
        Case{"WildcardMap", "{.items[0].metadata.labels.*}", "x web"},
        Case{"Recursive", "{..phase}", "Running Pending Running"},
        Case{"ObjectAsJson", "{.items[0].metadata.labels}",
             R"({"app":"x","tier":"web"})"},
        Case{"Numbers", "{.items[*].spec.replicas}", "2 5 1.5"},
        Case{"Bool", "{.items[2].spec.suspend}", "true"},
        Case{"MissingKeyPrintsNothing", "{.items[*].metadata.missing}", ""},
        Case{
            "NestedRange",
            R"({range .items[*]}{.metadata.name}:{range .status.conditions[*]}{.type},{end};{end})",
            "a:Ready,Synced,;b:Ready,;c:;"},
        Case{"Current", "{.items[1].metadata}", R"({"name":"b"})"},
        Case{"EscapedDot",
             R"({.items[0].metadata.annotations.app\.kubernetes\.io/name})",
             "z"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

struct ErrorCase {
  std::string name;
  std::string template_text;
  std::string want;
};

class JsonPathErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(JsonPathErrorTest, Fails) {
  absl::StatusOr<std::string> out =
      RenderJsonPath(GetParam().template_text, kList);
  ASSERT_FALSE(out.ok()) << *out;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Table, JsonPathErrorTest,
    ::testing::Values(
        ErrorCase{"UnclosedAction", "{.items",
                  "error parsing jsonpath {.items, unclosed action"},
        ErrorCase{"UnclosedArray", "{.items[}", "unclosed array expect ]"},
        ErrorCase{"BadIndex", "{.items[x]}", "invalid array index x"},
        ErrorCase{"BadStep", "{.items[::0]}", "invalid array index ::0"},
        ErrorCase{"Unrecognized", "{items}",
                  "unrecognized character in action: U+0069 'i'"},
        ErrorCase{"UnterminatedString", R"({"abc})",
                  "unterminated quoted string"},
        ErrorCase{"UnterminatedFilter",
                  "{.items[?(@.a==", "unterminated filter"},
        ErrorCase{"EndWithoutRange", "{end}", "not in range, nothing to end"},
        ErrorCase{"RangeWithoutEnd", "{range .items[*]}{.kind}",
                  "unclosed range"},
        ErrorCase{"OutOfBounds", "{.items[7].metadata.name}",
                  "error executing jsonpath \"{.items[7].metadata.name}\": "
                  "array index out of bounds: index 7, length 3"},
        ErrorCase{"FilterOnObject", "{.items[0].metadata[?(@.name)]}",
                  "an object is not array or slice and cannot be filtered"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      return info.param.name;
    });

TEST(JsonPathTest, RejectsDataThatIsNotJson) {
  absl::StatusOr<std::string> out = RenderJsonPath("{.a}", "{not json");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JsonPathTest, ParsedTemplateRunsOnSeveralValues) {
  absl::StatusOr<JsonPath> path = JsonPath::Parse("{.metadata.name}");
  ASSERT_TRUE(path.ok()) << path.status();
  for (const std::string name : {"one", "two"}) {
    absl::StatusOr<google::protobuf::Value> value =
        ParseJsonValue("{\"metadata\": {\"name\": \"" + name + "\"}}");
    ASSERT_TRUE(value.ok()) << value.status();
    absl::StatusOr<std::string> out = path->Execute(*value);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, name);
  }
}

TEST(JsonPathTest, DeeplyNestedFiltersAreRefused) {
  std::string t = "{.items";
  for (int i = 0; i < 10000; ++i) t += "[?(@.a";
  absl::StatusOr<std::string> out = RenderJsonPath(t, kList);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("filters nested too deeply"));
  // Shallow nesting works.
  out = RenderJsonPath(
      R"({.items[?(@.status.conditions[?(@.type=="Synced")])].metadata.name})",
      kList);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "a");
}

TEST(JsonPathTest, HostileTemplatesDoNotCrash) {
  for (const std::string t :
       {"{", "}", "{[", "{..}", "{.[?(}", "{.a[?(@.b==)]}", "{.a[1:2:3:4]}",
        "{range}", "{range .a}{end}{end}", "{\"\\q\"}", "{.a[?(@.b=x)]}",
        "{.items[-100:-200]}", "{$$}", "{@@}", "{.a,.b}"}) {
    absl::StatusOr<std::string> out = RenderJsonPath(t, kList);
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << t;
    }
  }
}

}  // namespace
}  // namespace jobset::cli
