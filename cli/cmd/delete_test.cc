// delete: --all and -l over JobSets.
#include <string>
#include <vector>

#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

TEST_F(CommandsTest, DeleteAllAndBySelector) {
  ASSERT_EQ(Run({"delete", "jobsets", "--all"}), kExitOk) << err_.str();
  EXPECT_EQ(
      service_.deleted(),
      (std::vector<std::string>{"default/js-0", "default/js-1", "default/js-2",
                                "default/js-3", "default/js-4"}));
  EXPECT_THAT(out_.str(), HasSubstr("jobset.jobset.x-k8s.io \"js-4\" deleted"));
  EXPECT_FALSE(service_.last_list().all_namespaces());
  Clear();
  ASSERT_EQ(Run({"delete", "jobsets", "-l", "app=x", "-A"}), kExitOk);
  EXPECT_EQ(service_.last_list().label_selector(), "app=x");
  EXPECT_TRUE(service_.last_list().all_namespaces());
  Clear();
  EXPECT_EQ(Run({"delete", "jobsets", "--all", "-l", "a=b"}), kExitUsage);
  EXPECT_EQ(Run({"delete", "jobsets", "js-0", "--all"}), kExitUsage);
  EXPECT_EQ(Run({"delete", "pods", "--all"}), kExitUsage);
  Clear();
  EXPECT_EQ(Run({"delete", "jobsets"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("no name was specified"));
}

}  // namespace
}  // namespace jobset::cli
