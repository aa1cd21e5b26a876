// create token, and how refused credentials read.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

TEST_F(TlsCommandsTest, CreateTokenPrintsOnlyTheTokenOnStdout) {
  ASSERT_EQ(Run({"create", "token", "alice", "--groups=dev,ops", "--ttl=24h",
                 "--token=admin.token"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "abc123.secretsecret\n");
  EXPECT_THAT(err_.str(), HasSubstr("cannot be shown again"));
  api::CreateTokenRequest sent = access_.last_token_request();
  EXPECT_EQ(sent.name(), "alice");
  ASSERT_EQ(sent.groups_size(), 2);
  EXPECT_EQ(sent.groups(1), "ops");
  EXPECT_EQ(sent.ttl().seconds(), 24 * 3600);
  // Over TLS, as call credentials.
  EXPECT_EQ(access_.authorization(), "Bearer admin.token");
  EXPECT_EQ(Run({"create", "token"}), kExitUsage);
  EXPECT_EQ(Run({"create", "token", "x", "--ttl=soon"}), kExitUsage);
}

TEST_F(TlsCommandsTest, CredentialErrorsAreExplained) {
  EXPECT_EQ(Run({"create", "token", "x", "--token=bad.token"}), kExitApiError);
  EXPECT_THAT(err_.str(),
              HasSubstr("jobsetd refused the credentials: invalid bearer "
                        "token (check the token or certificate in"));
  Clear();
  EXPECT_EQ(Run({"create", "token", "x", "--token=weak.token"}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: User \"bob\" cannot create resource \"tokens\"\n");
}

// A bearer token is only sent over TLS: to an http:// server jobsetctl
// refuses before it connects, and the server never sees the token.
TEST_F(CommandsTest, ATokenIsNeverSentInPlaintext) {
  EXPECT_EQ(Run({"create", "token", "x", "--token=admin.token"}),
            kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("a bearer token is only sent over TLS"));
  EXPECT_THAT(err_.str(), HasSubstr(absl::StrCat("\"http://", address_)));
  EXPECT_EQ(access_.authorization(), "");
  EXPECT_EQ(access_.last_token_request().name(), "");
}

}  // namespace
}  // namespace jobset::cli
