// version: the client's and the server's.
#include <string>
#include <vector>

#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

TEST_F(CommandsTest, VersionOfClientAndServer) {
  ASSERT_EQ(Run({"version"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\nServer Version: v9.9.9\n");
  Clear();
  ASSERT_EQ(Run({"version", "-o", "json"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"clientVersion\": {"));
  EXPECT_THAT(out_.str(), HasSubstr("\"gitVersion\": \"v9.9.9\""));
  Clear();
  // --client needs no server.
  ASSERT_EQ(Main({"--server=127.0.0.1:1", "version", "--client"}, nullptr,
                 {.out = &out_, .err = &err_}),
            kExitOk);
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\n");
  Clear();
  EXPECT_EQ(Main({"--server=127.0.0.1:1", "--request-timeout=2s", "version"},
                 nullptr, {.out = &out_, .err = &err_}),
            kExitUnreachable);
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\n");
}

}  // namespace
}  // namespace jobset::cli
