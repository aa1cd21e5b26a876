#include "api/names.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// One input to a name check and the error details it must produce; every
// expected detail must occur (as a substring) in the matching error.
struct NameCase {
  std::string value;
  std::vector<std::string> errors;  // Empty: valid.
};

// Checks `check` against every case of `cases`.
void ExpectCases(std::vector<std::string> (*check)(absl::string_view),
                 const std::vector<NameCase>& cases) {
  for (const NameCase& c : cases) {
    SCOPED_TRACE(c.value);
    std::vector<std::string> got = check(c.value);
    ASSERT_THAT(got, SizeIs(c.errors.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_THAT(got[i], HasSubstr(c.errors[i]));
    }
  }
}

TEST(IsDns1035LabelTest, Table) {
  const std::string longest(63, 'a');
  const std::string too_long(64, 'a');
  constexpr char kRegex[] =
      "a DNS-1035 label must consist of lower case alphanumeric characters or "
      "'-', start with an alphabetic character, and end with an alphanumeric "
      "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
      "'[a-z]([-a-z0-9]*[a-z0-9])?')";
  ExpectCases(
      IsDns1035Label,
      {
          {"a", {}},
          {"my-name", {}},
          {"abc-123", {}},
          {longest, {}},
          {"", {kRegex}},
          {"9lives", {kRegex}},
          {"-a", {kRegex}},
          {"a-", {kRegex}},
          {"My-name", {kRegex}},
          {"my.name", {kRegex}},
          {"my_name", {kRegex}},
          {too_long, {"must be no more than 63 characters"}},
          {too_long + "-", {"must be no more than 63 characters", kRegex}},
      });
}

TEST(IsDns1035LabelTest, ExactWording) {
  EXPECT_THAT(
      IsDns1035Label("Bad"),
      ElementsAre(
          "a DNS-1035 label must consist of lower case alphanumeric "
          "characters or '-', start with an alphabetic character, and end "
          "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
          "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
}

TEST(IsDns1123LabelTest, Table) {
  const std::string longest(63, 'a');
  const std::string too_long(64, 'a');
  constexpr char kRegex[] =
      "a lowercase RFC 1123 label must consist of lower case alphanumeric "
      "characters or '-', and must start and end with an alphanumeric "
      "character (e.g. 'my-name',  or '123-abc', regex used for validation "
      "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  ExpectCases(IsDns1123Label,
              {
                  {"a", {}},
                  {"123-abc", {}},
                  {"9lives", {}},
                  {longest, {}},
                  {"", {kRegex}},
                  {"-a", {kRegex}},
                  {"A", {kRegex}},
                  {"a.b", {"must not contain dots"}},
                  {too_long, {"must be no more than 63 characters"}},
              });
}

TEST(IsDns1123SubdomainTest, Table) {
  constexpr char kRegex[] =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
      "characters, '-' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  ExpectCases(IsDns1123Subdomain,
              {
                  {"a", {}},
                  {"example.com", {}},
                  {"a-b.c-d.e", {}},
                  {"0.1", {}},
                  {std::string(253, 'a'), {}},
                  {"", {kRegex}},
                  {".a", {kRegex}},
                  {"a.", {kRegex}},
                  {"a..b", {kRegex}},
                  {"a.-b", {kRegex}},
                  {"Example.com", {kRegex}},
                  {"a_b", {kRegex}},
                  {std::string(254, 'a'), {"must be no more than 253"}},
              });
}

TEST(IsQualifiedNameTest, Table) {
  const std::string longest(63, 'a');
  const std::string too_long(64, 'a');
  constexpr char kName[] =
      "name part must consist of alphanumeric characters, '-', '_' or '.', "
      "and must start and end with an alphanumeric character (e.g. 'MyName', "
      " or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  ExpectCases(
      IsQualifiedName,
      {
          {"app", {}},
          {"MyName", {}},
          {"my.name_x-1", {}},
          {"example.com/MyName", {}},
          {"alpha.jobset.sigs.k8s.io/exclusive-topology", {}},
          {longest, {}},
          {"", {"name part must be non-empty", kName}},
          {"-app", {kName}},
          {"app_", {kName}},
          {"a b", {kName}},
          {too_long, {"name part must be no more than 63 characters"}},
          {"/name", {"prefix part must be non-empty"}},
          {"Example.com/name", {"prefix part a lowercase RFC 1123 subdomain"}},
          {"example.com/", {"name part must be non-empty", kName}},
          {"a/b/c", {"a qualified name must consist of alphanumeric"}},
      });
}

TEST(IsValidLabelValueTest, Table) {
  const std::string longest(63, 'a');
  const std::string too_long(64, 'a');
  constexpr char kRegex[] =
      "a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
      "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
      "[A-Za-z0-9])?')";
  ExpectCases(IsValidLabelValue,
              {
                  {"", {}},
                  {"v", {}},
                  {"My_value.1-2", {}},
                  {"js-rj-0-0.js", {}},
                  {longest, {}},
                  {"-v", {kRegex}},
                  {"v.", {kRegex}},
                  {"a/b", {kRegex}},
                  {too_long, {"must be no more than 63 characters"}},
              });
}

TEST(IsDomainPrefixedPathTest, Table) {
  constexpr char kShape[] =
      "must be a domain-prefixed path (such as \"acme.io/foo\")";
  ExpectCases(IsDomainPrefixedPath,
              {
                  {"acme.io/foo", {}},
                  {"example.com/foo/bar", {}},
                  {"jobset.sigs.k8s.io/jobset-controller", {}},
                  {"kueue.x-k8s.io/multikueue", {}},
                  {"", {"must be non-empty"}},
                  {"acme.io", {kShape}},
                  {"/foo", {kShape}},
                  {"acme.io/", {kShape}},
                  {"Acme.io/foo", {"a lowercase RFC 1123 subdomain"}},
                  {"acme.io/foo bar",
                   {"Invalid path (regex used for validation is "
                    "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"}},
                  {"acme.io/a\"b", {"Invalid path"}},
              });
}

TEST(JobNameTest, Formats) {
  EXPECT_EQ(JobName("train", "workers", 0), "train-workers-0");
  EXPECT_EQ(JobName("train", "workers", 12), "train-workers-12");
}

TEST(PodHostnameTest, Formats) {
  EXPECT_EQ(PodHostname("train", "workers", 3, 7), "train-workers-3-7");
}

TEST(CoordinatorEndpointTest, Formats) {
  EXPECT_EQ(CoordinatorEndpoint("test-js", "replicated-job-a", 0, 0, "test-js"),
            "test-js-replicated-job-a-0-0.test-js");
  EXPECT_EQ(CoordinatorEndpoint("js", "rj", 1, 2, "net"), "js-rj-1-2.net");
}

TEST(IsLoopbackHostTest, Loopbacks) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.example.com"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.256"));
  EXPECT_FALSE(IsLoopbackHost("127.example.com"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("[::1"));
  EXPECT_FALSE(IsLoopbackHost(std::string("127.0.0.1\0x", 11)));
}

TEST(IsIpLiteralTest, OnlyAWholeAddressLiteral) {
  EXPECT_TRUE(IsIpLiteral("10.0.0.1"));
  EXPECT_TRUE(IsIpLiteral("::1"));
  EXPECT_TRUE(IsIpLiteral("fe80::1:2"));
  EXPECT_FALSE(IsIpLiteral(""));
  EXPECT_FALSE(IsIpLiteral("node-1"));
  EXPECT_FALSE(IsIpLiteral("10.0.0.1 "));
  EXPECT_FALSE(IsIpLiteral("10.0.0.1\n6.6.6.6 evil"));
  EXPECT_FALSE(IsIpLiteral(std::string("10.0.0.1\0\n6.6.6.6 evil", 22)));
  EXPECT_FALSE(IsIpLiteral("10.0.0.256"));
}

}  // namespace
}  // namespace jobset::api
