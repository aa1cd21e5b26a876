#include "api/label_selector.h"

#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/map.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Matcher;

using Labels = google::protobuf::Map<std::string, std::string>;
using Operator = LabelSelector::Operator;
using Requirement = LabelSelector::Requirement;

Labels MakeLabels(
    std::initializer_list<std::pair<std::string, std::string>> entries) {
  Labels labels;
  for (const auto& [key, value] : entries) labels[key] = value;
  return labels;
}

TEST(LabelSelectorTest, DefaultIsEmptyAndMatchesEverything) {
  const LabelSelector selector;
  EXPECT_TRUE(selector.Empty());
  EXPECT_EQ(selector.ToString(), "");
  EXPECT_TRUE(selector.Matches(Labels()));
  EXPECT_TRUE(selector.Matches(MakeLabels({{"app", "web"}})));
}

TEST(LabelSelectorTest, ParsesRequirements) {
  absl::StatusOr<LabelSelector> selector = LabelSelector::Parse(
      "tier!=db, app==x,env in (b,a,b),!legacy,gpu,stage notin (dev)");
  ASSERT_THAT(selector, IsOk());
  EXPECT_FALSE(selector->Empty());
  EXPECT_THAT(selector->requirements(),
              ElementsAre(Requirement{"app", Operator::kEquals, {"x"}},
                          Requirement{"env", Operator::kIn, {"a", "b"}},
                          Requirement{"gpu", Operator::kExists, {}},
                          Requirement{"legacy", Operator::kDoesNotExist, {}},
                          Requirement{"stage", Operator::kNotIn, {"dev"}},
                          Requirement{"tier", Operator::kNotEquals, {"db"}}));
}

// A selector string and its canonical form.
struct CanonicalCase {
  std::string selector;
  std::string canonical;
};

void PrintTo(const CanonicalCase& c, std::ostream* os) {
  *os << "\"" << c.selector << "\"";
}

class LabelSelectorCanonicalTest
    : public ::testing::TestWithParam<CanonicalCase> {};

TEST_P(LabelSelectorCanonicalTest, ParsesToCanonicalFormAndBack) {
  absl::StatusOr<LabelSelector> selector =
      LabelSelector::Parse(GetParam().selector);
  ASSERT_THAT(selector, IsOk());
  EXPECT_EQ(selector->ToString(), GetParam().canonical);
  EXPECT_EQ(selector->Empty(), GetParam().canonical.empty());
  // The canonical form is a fixed point.
  absl::StatusOr<LabelSelector> reparsed =
      LabelSelector::Parse(selector->ToString());
  ASSERT_THAT(reparsed, IsOk());
  EXPECT_EQ(*reparsed, *selector);
}

INSTANTIATE_TEST_SUITE_P(
    Valid, LabelSelectorCanonicalTest,
    ::testing::Values(
        CanonicalCase{"", ""}, CanonicalCase{" \t\r\n ", ""},
        CanonicalCase{"app=x", "app=x"}, CanonicalCase{"app==x", "app=x"},
        CanonicalCase{"app!=x", "app!=x"}, CanonicalCase{"app", "app"},
        CanonicalCase{"!app", "!app"}, CanonicalCase{"! app", "!app"},
        CanonicalCase{"app in (x)", "app in (x)"},
        CanonicalCase{"app notin (x)", "app notin (x)"},
        // Whitespace around every token, and none at all.
        CanonicalCase{"  app  =  x  ,  tier  !=  db  ", "app=x,tier!=db"},
        CanonicalCase{"\tenv\tin\t(\ta\t,\tb\t)\t", "env in (a,b)"},
        CanonicalCase{"env in(a,b),x notin(c)", "env in (a,b),x notin (c)"},
        // Ordered by key, stably; list values sorted and deduplicated.
        CanonicalCase{"z,b=2,a=1", "a=1,b=2,z"},
        CanonicalCase{"a=2,b,a=1", "a=2,a=1,b"},
        CanonicalCase{"env in (c,a,b,a)", "env in (a,b,c)"},
        // Duplicate and contradictory requirements are kept.
        CanonicalCase{"a=1,a=1", "a=1,a=1"}, CanonicalCase{"a,!a", "a,!a"},
        // Empty values.
        CanonicalCase{"a=", "a="}, CanonicalCase{"a==,b!=", "a=,b!="},
        CanonicalCase{"a= ,b", "a=,b"}, CanonicalCase{"a in (x,)", "a in (,x)"},
        CanonicalCase{"a in (,x)", "a in (,x)"},
        CanonicalCase{"a in (x,,y)", "a in (,x,y)"},
        CanonicalCase{"a notin (,)", "a notin (,)"},
        CanonicalCase{"a in (,,)", "a in (,)"},
        // "in" and "notin" are values where a value stands.
        CanonicalCase{"a=in,b!=notin", "a=in,b!=notin"},
        CanonicalCase{"a in (in,notin)", "a in (in,notin)"},
        // Qualified keys and the longest names and values.
        CanonicalCase{"example.com/My_Name.x-y=A.b_c-9",
                      "example.com/My_Name.x-y=A.b_c-9"},
        CanonicalCase{"k=" + std::string(63, 'v'), "k=" + std::string(63, 'v')},
        CanonicalCase{std::string(63, 'k'), std::string(63, 'k')},
        CanonicalCase{std::string(253, 'p') + "/" + std::string(63, 'n'),
                      std::string(253, 'p') + "/" + std::string(63, 'n')}));

// A selector that does not parse, and what its error must say.
struct ErrorCase {
  std::string selector;
  std::vector<std::string> substrings;
};

void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << "\"" << c.selector << "\"";
}

class LabelSelectorErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(LabelSelectorErrorTest, IsInvalidArgument) {
  std::vector<Matcher<const std::string&>> message = {
      HasSubstr("label selector \"")};
  for (const std::string& s : GetParam().substrings) {
    message.push_back(HasSubstr(s));
  }
  EXPECT_THAT(LabelSelector::Parse(GetParam().selector),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOfArray(message)));
}

INSTANTIATE_TEST_SUITE_P(
    Invalid, LabelSelectorErrorTest,
    ::testing::Values(
        // Set syntax.
        ErrorCase{"a in (b",
                  {"label selector \"a in (b\": missing \")\" at "
                   "offset 7"}},
        ErrorCase{"a in (b,", {"missing \")\" at offset 8"}},
        ErrorCase{"a in (", {"missing \")\" at offset 6"}},
        ErrorCase{"a in ()", {"\"in\" needs at least one value at offset 5"}},
        ErrorCase{"a notin ( )",
                  {"\"notin\" needs at least one value at offset 8"}},
        ErrorCase{"a in b",
                  {"expected \"(\" after \"in\" but found \"b\" at "
                   "offset 5"}},
        ErrorCase{"a in",
                  {"expected \"(\" after \"in\" but found end of "
                   "string at offset 4"}},
        ErrorCase{"a in (b c)",
                  {"expected \",\" or \")\" but found \"c\" at "
                   "offset 8"}},
        ErrorCase{"a in (b=c)", {"but found \"=\" at offset 7"}},
        ErrorCase{"a in ((b))",
                  {"expected a value, \",\" or \")\" but found "
                   "\"(\" at offset 6"}},
        ErrorCase{"a in (b) c",
                  {"expected \",\" or end of string but found "
                   "\"c\" at offset 9"}},
        // Requirement separators.
        ErrorCase{",", {"expected a key or \"!\" but found \",\" at offset 0"}},
        ErrorCase{"a,,b",
                  {"expected a key or \"!\" but found \",\" at offset 2"}},
        ErrorCase{"a=b,",
                  {"expected a requirement after \",\" but found end "
                   "of string at offset 4"}},
        ErrorCase{"a=b c",
                  {"expected \",\" or end of string but found \"c\" "
                   "at offset 4"}},
        ErrorCase{"a b",
                  {"expected an operator",
                   "after key \"a\" but found "
                   "\"b\" at offset 2"}},
        // Operators.
        ErrorCase{"a===b",
                  {"expected a value for key \"a\" but found \"=\" "
                   "at offset 3"}},
        ErrorCase{"a=!b",
                  {"expected a value for key \"a\" but found \"!\" at "
                   "offset 2"}},
        ErrorCase{"a=(b)", {"but found \"(\" at offset 2"}},
        ErrorCase{"a!b",
                  {"expected an operator",
                   "but found \"!\" at offset "
                   "1"}},
        ErrorCase{"a>1", {"operator \">\" is not supported at offset 1"}},
        ErrorCase{"a<1", {"operator \"<\" is not supported at offset 1"}},
        ErrorCase{"=b",
                  {"expected a key or \"!\" but found \"=\" at offset "
                   "0"}},
        ErrorCase{"!",
                  {"expected a key after \"!\" but found end of string "
                   "at offset 1"}},
        ErrorCase{"!!a", {"expected a key after \"!\" but found \"!\""}},
        ErrorCase{"!a=b",
                  {"expected \",\" or end of string but found \"=\" "
                   "at offset 2"}},
        ErrorCase{"in=b", {"expected a key or \"!\" but found \"in\""}},
        ErrorCase{"!notin",
                  {"expected a key after \"!\" but found "
                   "\"notin\""}},
        // Keys.
        ErrorCase{"-a=b",
                  {"invalid key \"-a\" at offset 0: name part must "
                   "consist of alphanumeric characters"}},
        ErrorCase{"x, a_=b", {"invalid key \"a_\" at offset 3"}},
        ErrorCase{"!Bad.Prefix/a",
                  {"invalid key \"Bad.Prefix/a\" at offset 1: prefix part a "
                   "lowercase RFC 1123 subdomain"}},
        ErrorCase{"/a",
                  {"invalid key \"/a\"",
                   "prefix part must be "
                   "non-empty"}},
        ErrorCase{"p/",
                  {"invalid key \"p/\"",
                   "name part must be "
                   "non-empty"}},
        ErrorCase{"a/b/c in (x)",
                  {"invalid key \"a/b/c\"",
                   "a qualified "
                   "name"}},
        ErrorCase{std::string(64, 'k'),
                  {"invalid key",
                   "name part must be no more than 63 "
                   "characters"}},
        ErrorCase{std::string(254, 'p') + "/n",
                  {"invalid key",
                   "prefix part must be no more than 253 "
                   "characters"}},
        ErrorCase{"\"a\"=b", {"invalid key \"\\\"a\\\"\" at offset 0"}},
        // Values.
        ErrorCase{"a=b_",
                  {"invalid value \"b_\" for key \"a\" at offset 2: a "
                   "valid label must be an empty string"}},
        ErrorCase{"a!=-b", {"invalid value \"-b\" for key \"a\" at offset 3"}},
        ErrorCase{"a in (x, y/z)",
                  {"invalid value \"y/z\" for key \"a\" at "
                   "offset 9"}},
        ErrorCase{"a notin (b*)", {"invalid value \"b*\" for key \"a\""}},
        ErrorCase{"a=" + std::string(64, 'v'),
                  {"invalid value", "must be no more than 63 characters"}}));

// A selector, a set of labels, and whether they match.
struct MatchCase {
  std::string selector;
  Labels labels;
  bool matches;
};

void PrintTo(const MatchCase& c, std::ostream* os) {
  *os << "\"" << c.selector << "\" on {";
  for (const auto& [key, value] : c.labels) *os << key << "=" << value << ";";
  *os << "}";
}

class LabelSelectorMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(LabelSelectorMatchTest, Matches) {
  absl::StatusOr<LabelSelector> selector =
      LabelSelector::Parse(GetParam().selector);
  ASSERT_THAT(selector, IsOk());
  EXPECT_EQ(selector->Matches(GetParam().labels), GetParam().matches);
}

Labels Web() { return MakeLabels({{"app", "web"}, {"tier", "frontend"}}); }
Labels EmptyApp() { return MakeLabels({{"app", ""}}); }

INSTANTIATE_TEST_SUITE_P(
    Table, LabelSelectorMatchTest,
    ::testing::Values(
        // The empty selector selects everything.
        MatchCase{"", Labels(), true}, MatchCase{"", Web(), true},
        // Equality.
        MatchCase{"app=web", Web(), true}, MatchCase{"app==web", Web(), true},
        MatchCase{"app=db", Web(), false}, MatchCase{"app=Web", Web(), false},
        MatchCase{"env=web", Web(), false}, MatchCase{"app=web", {}, false},
        MatchCase{"app!=db", Web(), true}, MatchCase{"app!=web", Web(), false},
        // != and notin match an absent key.
        MatchCase{"env!=prod", Web(), true}, MatchCase{"env!=prod", {}, true},
        MatchCase{"env notin (prod)", Web(), true},
        MatchCase{"env notin (prod)", {}, true},
        // Sets.
        MatchCase{"app in (db,web)", Web(), true},
        MatchCase{"app in (db,cache)", Web(), false},
        MatchCase{"env in (web)", Web(), false},
        MatchCase{"app notin (db,web)", Web(), false},
        MatchCase{"app notin (db,cache)", Web(), true},
        // Existence.
        MatchCase{"app", Web(), true}, MatchCase{"env", Web(), false},
        MatchCase{"!env", Web(), true}, MatchCase{"!app", Web(), false},
        MatchCase{"!app", {}, true}, MatchCase{"app", EmptyApp(), true},
        // Empty values are values, not absence.
        MatchCase{"app=", EmptyApp(), true}, MatchCase{"app=", {}, false},
        MatchCase{"app=", Web(), false}, MatchCase{"app!=", Web(), true},
        MatchCase{"app!=", EmptyApp(), false},
        MatchCase{"app in (web,)", EmptyApp(), true},
        MatchCase{"app in (web)", EmptyApp(), false},
        // Every requirement must hold.
        MatchCase{"app=web,tier=frontend", Web(), true},
        MatchCase{" app = web , tier in ( frontend , backend ) , !legacy ",
                  Web(), true},
        MatchCase{"app=web,tier=backend", Web(), false},
        MatchCase{"app=web,legacy", Web(), false},
        // Duplicate and contradictory requirements.
        MatchCase{"app=web,app=web", Web(), true},
        MatchCase{"app=web,app==web,app in (web)", Web(), true},
        MatchCase{"app=web,app=db", Web(), false},
        MatchCase{"app,!app", Web(), false}, MatchCase{"app,!app", {}, false},
        MatchCase{"app in (web,web)", Web(), true},
        // Keys are case-sensitive and matched whole.
        MatchCase{"App=web", Web(), false},
        MatchCase{"example.com/app=web", Web(), false},
        MatchCase{"example.com/app=web",
                  MakeLabels({{"example.com/app", "web"}}), true}));

TEST(LabelSelectorTest, RequirementMatchesAlone) {
  const Requirement requirement{"tier", Operator::kNotIn, {"backend", "db"}};
  EXPECT_TRUE(requirement.Matches(Web()));
  EXPECT_FALSE(requirement.Matches(MakeLabels({{"tier", "db"}})));
  EXPECT_EQ(requirement.ToString(), "tier notin (backend,db)");
}

}  // namespace
}  // namespace jobset::api
