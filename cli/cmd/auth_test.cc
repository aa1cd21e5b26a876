// auth can-i and auth whoami.
#include <string>
#include <vector>

#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

TEST_F(CommandsTest, CanIPrintsYesOrNoWithTheExitCode) {
  EXPECT_EQ(
      Run({"auth", "can-i", "get", "jobsets.jobset.x-k8s.io", "-n", "team"}),
      kExitOk);
  EXPECT_EQ(out_.str(), "yes\n");
  api::AccessReview review = access_.last_review();
  EXPECT_EQ(review.resource(), "jobsets");
  EXPECT_EQ(review.api_group(), "jobset.x-k8s.io");
  EXPECT_EQ(review.namespace_(), "team");
  Clear();
  EXPECT_EQ(Run({"auth", "can-i", "delete", "po/log", "p-1", "-A"}),
            kExitApiError);
  EXPECT_EQ(out_.str(), "no\n");
  review = access_.last_review();
  EXPECT_EQ(review.resource(), "pods/log");
  EXPECT_EQ(review.name(), "p-1");
  EXPECT_EQ(review.namespace_(), "");
  Clear();
  EXPECT_EQ(Run({"auth", "whoami"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("alice"));
  EXPECT_EQ(Run({"auth", "can-i", "get"}), kExitUsage);
}

}  // namespace
}  // namespace jobset::cli
