// The client config file, and the config verbs that edit it.
#include <string>
#include <vector>

#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kConfig[] = R"(apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "http://SERVER"}
users:
- name: admin
  user: {token: config.token}
contexts:
- name: admin@local
  context: {cluster: local, user: admin, namespace: team}
- name: other
  context: {cluster: missing}
current-context: admin@local
)";

TEST_F(CommandsTest, TheConfigFileGivesServerTokenAndNamespace) {
  std::string text = kConfig;
  text.replace(text.find("SERVER"), 6, address_);
  const std::string path = WriteConfig("client.conf", text);
  Environment env;
  env.config = path.c_str();
  // http:// and a token: refused, the token is never sent in plaintext.
  EXPECT_EQ(RunWith({"auth", "can-i", "get", "jobsets"}, env), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("a bearer token is only sent over TLS"));
  EXPECT_EQ(access_.authorization(), "");
  Clear();
  // Without the token (jobsetd --insecure needs none) the call is made.
  text.replace(text.find("{token: config.token}"), 21, "{}");
  const std::string no_token = WriteConfig("client-no-token.conf", text);
  env.config = no_token.c_str();
  ASSERT_EQ(RunWith({"auth", "can-i", "get", "jobsets"}, env), kExitOk)
      << err_.str();
  EXPECT_EQ(access_.last_review().namespace_(), "team");
  EXPECT_EQ(RunWith({"--context=other", "auth", "whoami"}, env), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("cluster \"missing\" (of context "
                                    "\"other\") not found"));
  Clear();
  EXPECT_EQ(RunWith({"--config=/nonexistent", "auth", "whoami"}, env),
            kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("/nonexistent"));
}

TEST_F(CommandsTest, ConfigCommands) {
  const std::string path = WriteConfig("edit.conf", kConfig);
  Environment env;
  env.config = path.c_str();
  ASSERT_EQ(RunWith({"config", "view"}, env), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("token: REDACTED"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("config.token")));
  Clear();
  ASSERT_EQ(RunWith({"config", "view", "--raw", "--minify"}, env), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("config.token"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("name: other")));
  Clear();
  ASSERT_EQ(RunWith({"config", "current-context"}, env), kExitOk);
  EXPECT_EQ(out_.str(), "admin@local\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "use-context", "other"}, env), kExitOk);
  EXPECT_EQ(out_.str(), "Switched to context \"other\".\n");
  EXPECT_EQ(RunWith({"config", "use-context", "nope"}, env), kExitApiError);
  Clear();
  ASSERT_EQ(RunWith({"config", "set-context", "--current", "-n", "ns2"}, env),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "Context \"other\" modified.\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "set-context", "fresh", "--cluster=local",
                     "--user=admin"},
                    env),
            kExitOk);
  EXPECT_EQ(out_.str(), "Context \"fresh\" created.\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "get-contexts"}, env), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("CURRENT   NAME"));
  EXPECT_THAT(out_.str(), HasSubstr("*         other"));
  EXPECT_THAT(out_.str(), HasSubstr("fresh"));
  EXPECT_THAT(out_.str(), HasSubstr("ns2"));
  EXPECT_EQ(RunWith({"config", "frobnicate"}, env), kExitUsage);
}

}  // namespace
}  // namespace jobset::cli
