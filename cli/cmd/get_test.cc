// get KIND [NAME]: selectors, -o, pages, watches and AGE against the fakes.
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CommandsTest, GetSelectorsJsonPathAndAllNamespaces) {
  ASSERT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items[*].metadata.name}"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "js-0 js-1 js-2 js-3 js-4");
  Clear();
  ASSERT_EQ(Run({"get", "js", "-l", "app=x", "-A", "-o", "name"}), kExitOk)
      << err_.str();
  EXPECT_EQ(service_.last_list().label_selector(), "app=x");
  EXPECT_TRUE(service_.last_list().all_namespaces());
  Clear();
  ASSERT_EQ(Run({"get", "jobsets", "--field-selector=metadata.name!=js-0",
                 "--field-selector", "metadata.name==js-2", "-o", "name"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "jobset.jobset.x-k8s.io/js-2\n");
  Clear();
  ASSERT_EQ(Run({"get", "jobsets", "-A"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("NAMESPACE"));
  EXPECT_THAT(out_.str(), HasSubstr("default"));
  Clear();
  EXPECT_EQ(Run({"get", "pods", "--field-selector", "spec.foo=bar"}),
            kExitApiError);
  EXPECT_EQ(err_.str(), "error: field label not supported: spec.foo\n");
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items["}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("error parsing jsonpath {.items[, "
                                    "unclosed array expect ]"));
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items[9]}"}),
            kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("error executing jsonpath"));
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "js-0", "-l", "a=b"}), kExitUsage);
  EXPECT_THAT(err_.str(),
              HasSubstr("name cannot be provided when a selector is "
                        "specified"));
  Clear();
  EXPECT_EQ(Run({"get", "tokens", "-w"}), kExitUsage);
}

TEST_F(CommandsTest, GetPagesThroughTheList) {
  ASSERT_EQ(Run({"get", "jobsets", "-o", "name"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io/js-0\njobset.jobset.x-k8s.io/js-1\n"
            "jobset.jobset.x-k8s.io/js-2\njobset.jobset.x-k8s.io/js-3\n"
            "jobset.jobset.x-k8s.io/js-4\n");
  EXPECT_EQ(service_.list_calls(), 3);
}

// A watch that falls behind is told OUT_OF_RANGE; `get -w` watches again
// from the current state and shows only what it has not shown.
TEST_F(CommandsTest, GetWatchRelistsAndGoesOn) {
  ASSERT_EQ(Run({"get", "jobsets", "-w", "--timeout=10s", "-o", "json"}),
            kExitOk)
      << err_.str();
  const std::string out = out_.str();
  // The list (five), js-0 at 101 once (not again after the relist), js-1 at
  // 11 once (listed first), then js-1 at 102.
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = out.find(text); at != std::string::npos;
         at = out.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("\"resourceVersion\": \"101\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"11\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"102\""), 1u) << out;
  EXPECT_THAT(err_.str(), Not(HasSubstr("error")));
}

// AGE is read from the command's clock: five minutes and three seconds
// after the JobSets were created.
TEST_F(CommandsTest, GetAgesComeFromTheClock) {
  FakeClock clock(absl::FromUnixSeconds(kCreated) + absl::Seconds(303));
  ASSERT_EQ(RunAt(clock, {"get", "jobsets", "js-0"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("AGE"));
  EXPECT_THAT(out_.str(), HasSubstr("js-0"));
  EXPECT_THAT(out_.str(), HasSubstr("5m3s"));
  Clear();
  clock.Advance(absl::Hours(49));
  ASSERT_EQ(RunAt(clock, {"get", "jobsets", "js-0"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("2d1h"));
}

// Messages that list kinds come from the kinds table.
TEST_F(CommandsTest, UnknownKindsNameTheKnownOnes) {
  EXPECT_EQ(Run({"get", "widgets"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("unknown resource type \"widgets\" (use "
                                    "jobsets, jobs, pods, nodes, events, "));
  EXPECT_THAT(err_.str(), HasSubstr("clusterroles or clusterrolebindings)"));
  Clear();
  EXPECT_EQ(Run({"describe", "pods", "p-0"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\"describe\" supports jobsets, nodes, "
                                    "secrets, configmaps, resourceflavors, "));
  EXPECT_THAT(err_.str(), HasSubstr("and workloads, got \"pods\""));
  Clear();
  EXPECT_EQ(Run({"get", "namespaces", "-w"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("-w/--watch does not apply to namespaces"));
  Clear();
  EXPECT_EQ(Run({"get", "secrets", "-A"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("-A/--all-namespaces does not apply"));
  Clear();
  EXPECT_EQ(Run({"get", "events", "e-1"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("get events takes no NAME"));
}

}  // namespace
}  // namespace jobset::cli
