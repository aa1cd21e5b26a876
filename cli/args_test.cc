#include "cli/args.h"

#include <string>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Invocation> Parse(std::vector<std::string> args) {
  return ParseCommandLine(args, Commands());
}

TEST(ParseCommandLineTest, GlobalFlagsBeforeAndAfterTheVerb) {
  auto inv = Parse({"--server=10.0.0.1:7070", "get", "jobsets", "-n", "team",
                    "train", "-o", "json"});
  ASSERT_THAT(inv.status(), IsOk());
  EXPECT_EQ(inv->command->verb, "get");
  EXPECT_THAT(inv->args, ElementsAre("jobsets", "train"));
  EXPECT_EQ(inv->Get("server", ""), "10.0.0.1:7070");
  EXPECT_EQ(inv->Get("namespace", ""), "team");
  EXPECT_EQ(inv->Get("output", ""), "json");
  EXPECT_FALSE(inv->Has("watch"));
}

TEST(ParseCommandLineTest, VersionAndCompletion) {
  auto version = Parse({"version"});
  ASSERT_THAT(version.status(), IsOk());
  EXPECT_EQ(version->command->verb, "version");
  EXPECT_THAT(Parse({"version", "extra"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("too many arguments")));
  auto completion = Parse({"completion", "zsh"});
  ASSERT_THAT(completion.status(), IsOk());
  EXPECT_THAT(completion->args, ElementsAre("zsh"));
  EXPECT_THAT(Parse({"completion"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing arguments")));
  EXPECT_THAT(Parse({"delete", "jobsets", "--selector"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("flag needs an argument: --selector")));
}

TEST(ParseCommandLineTest, FlagForms) {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
    std::string value;
  };
  const std::vector<Case> cases = {
      {{"apply", "-f", "x.yaml"}, "filename", "x.yaml"},
      {{"apply", "-fx.yaml"}, "filename", "x.yaml"},
      {{"apply", "-f=x.yaml"}, "filename", "x.yaml"},
      {{"apply", "--filename", "-"}, "filename", "-"},
      {{"apply", "-f", "-", "--dry-run"}, "dry-run", "true"},
      {{"apply", "-f", "-", "--dry_run"}, "dry-run", "true"},
      {{"apply", "-f", "-", "--dry-run=true"}, "dry-run", "true"},
      {{"-nteam", "get", "pods"}, "namespace", "team"},
      {{"get", "jobsets", "-w"}, "watch", "true"},
      {{"wait", "jobset", "a", "--for=condition=Completed"},
       "for",
       "condition=Completed"},
      {{"logs", "p", "-f"}, "follow", "true"},
      {{"logs", "p", "-p"}, "previous", "true"},
      {{"logs", "p", "--previous"}, "previous", "true"},
      {{"logs", "p", "--attempt", "2"}, "attempt", "2"},
      {{"logs", "p", "--attempt=0"}, "attempt", "0"},
      // kubectl's get and delete flags (issue 23).
      {{"get", "pods", "-l", "app=x,tier!=db"}, "selector", "app=x,tier!=db"},
      {{"get", "pods", "--selector=env in (a,b)"}, "selector", "env in (a,b)"},
      {{"get", "pods", "--field-selector", "status.phase=Pending"},
       "field-selector",
       "status.phase=Pending"},
      {{"get", "pods", "-A"}, "all-namespaces", "true"},
      {{"get", "jobs", "--all-namespaces"}, "all-namespaces", "true"},
      {{"get", "js", "-ojsonpath={.items[*].metadata.name}"},
       "output",
       "jsonpath={.items[*].metadata.name}"},
      {{"get", "js", "-o=jsonpath={.a}"}, "output", "jsonpath={.a}"},
      {{"get", "js", "--output=jsonpath={.a=b}"}, "output", "jsonpath={.a=b}"},
      {{"get", "nodes", "-w", "--timeout=3s"}, "timeout", "3s"},
      {{"delete", "jobsets", "--all"}, "all", "true"},
      {{"delete", "jobsets", "-l", "a=b", "-A"}, "all-namespaces", "true"},
      {{"version", "--client"}, "client", "true"},
      {{"version", "-o", "json"}, "output", "json"},
  };
  for (const Case& c : cases) {
    auto inv = Parse(c.args);
    ASSERT_THAT(inv.status(), IsOk()) << c.args[0];
    EXPECT_EQ(inv->Get(c.flag, "<unset>"), c.value) << c.args.back();
  }
}

TEST(ParseCommandLineTest, SwitchSetToFalseIsUnset) {
  auto inv = Parse({"apply", "-f", "-", "--dry-run=false"});
  ASSERT_THAT(inv.status(), IsOk());
  EXPECT_FALSE(inv->Has("dry-run"));
}

TEST(ParseCommandLineTest, DoubleDashEndsFlags) {
  auto inv = Parse({"get", "pods", "--", "-odd-name"});
  ASSERT_THAT(inv.status(), IsOk());
  EXPECT_THAT(inv->args, ElementsAre("pods", "-odd-name"));
}

TEST(ParseCommandLineTest, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"frobnicate"}, "unknown command \"frobnicate\""},
      // Input echoed in a message is quoted as Go's %q: it cannot forge a
      // line or a quote of its own.
      {{"frob\n\"error: x"}, R"(unknown command "frob\n\"error: x")"},
      {{"get", "jobsets", "--bogus"}, "unknown flag: --bogus"},
      {{"get", "jobsets", "-x"}, "unknown flag: -x"},
      // Command flags are not known before the verb.
      {{"-o", "json", "get", "jobsets"}, "unknown flag: -o"},
      {{"get", "jobsets", "-o"}, "flag needs an argument: -o"},
      {{"get"}, "missing arguments for \"get\""},
      {{"delete", "jobset", "a", "b"}, "too many arguments for \"delete\""},
      {{"apply", "-f", "-", "--dry-run=maybe"}, "takes no value"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(
        Parse(c.args).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.args[0];
  }
}

TEST(ParseCommandLineTest, HelpSkipsArgumentChecks) {
  auto inv = Parse({"wait", "--help"});
  ASSERT_THAT(inv.status(), IsOk());
  EXPECT_TRUE(inv->help);
  EXPECT_EQ(inv->command->verb, "wait");
  EXPECT_THAT(HelpText(inv->command, Commands()),
              AllOf(HasSubstr("jobsetctl wait jobset NAME"),
                    HasSubstr("--for=condition=TYPE"), HasSubstr("--server")));
  auto top = Parse({"-h"});
  ASSERT_THAT(top.status(), IsOk());
  EXPECT_EQ(top->command, nullptr);
  EXPECT_THAT(HelpText(nullptr, Commands()),
              AllOf(HasSubstr("apply"), HasSubstr("Exit status")));
}

TEST(ServerAddressTest, FlagThenEnvironmentThenDefault) {
  auto with_flag = Parse({"--server=a:1", "get", "pods"});
  ASSERT_THAT(with_flag.status(), IsOk());
  EXPECT_EQ(ServerAddress(*with_flag, "b:2"), "a:1");
  auto without = Parse({"get", "pods"});
  ASSERT_THAT(without.status(), IsOk());
  EXPECT_EQ(ServerAddress(*without, "b:2"), "b:2");
  EXPECT_EQ(ServerAddress(*without, ""), "127.0.0.1:7070");
  EXPECT_EQ(ServerAddress(*without, nullptr), "127.0.0.1:7070");
}

TEST(ParseDurationFlagTest, AcceptsGoDurationsAndSeconds) {
  EXPECT_EQ(*ParseDurationFlag("timeout", "60s"), absl::Seconds(60));
  EXPECT_EQ(*ParseDurationFlag("timeout", "1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseDurationFlag("timeout", "45"), absl::Seconds(45));
  EXPECT_THAT(ParseDurationFlag("timeout", "soon").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--timeout: invalid duration \"soon\"")));
  EXPECT_THAT(ParseDurationFlag("timeout", "so\x1b[2Jon").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(invalid duration "so\x1b[2Jon")")));
  EXPECT_THAT(ParseDurationFlag("timeout", "-5s").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ArgsTest, RepeatedFlagsKeepEveryValue) {
  absl::StatusOr<Invocation> invocation = ParseCommandLine(
      {"create", "secret", "generic", "s", "--from-literal=a=1",
       "--from-literal", "b=2=3", "--from-file=k=/tmp/x"},
      Commands());
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  EXPECT_EQ(invocation->args,
            (std::vector<std::string>{"secret", "generic", "s"}));
  EXPECT_EQ(invocation->GetAll("from-literal"),
            (std::vector<std::string>{"a=1", "b=2=3"}));
  EXPECT_EQ(invocation->Get("from-literal", ""), "b=2=3");
  EXPECT_EQ(invocation->GetAll("from-file"),
            (std::vector<std::string>{"k=/tmp/x"}));
  EXPECT_TRUE(invocation->GetAll("type").empty());
}

}  // namespace
}  // namespace jobset::cli
