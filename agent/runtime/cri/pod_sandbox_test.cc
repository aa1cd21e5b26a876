#include "agent/runtime/cri/pod_sandbox.h"

#include <string>
#include <vector>

#include "agent/runtime/cri/cri_config.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

namespace v1 = ::runtime::v1;

v1::Container Attempt(const std::string& id, const std::string& name,
                      int attempt) {
  v1::Container c;
  c.set_id(id);
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_attempt(attempt);
  if (!name.empty()) (*c.mutable_labels())[kContainerLabel] = name;
  return c;
}

TEST(LatestAttemptTest, HighestAttemptOfTheNamedContainer) {
  const std::vector<v1::Container> containers = {
      Attempt("a0", "main", 0),    Attempt("s0", "sidecar", 0),
      Attempt("a2", "main", 2),    Attempt("a1", "main", 1),
      Attempt("s5", "sidecar", 5), Attempt("x9", "", 9),
  };
  struct Case {
    std::string name;
    std::string want_id;  // "": none
  };
  const Case cases[] = {
      {"main", "a2"},
      {"sidecar", "s5"},
      {"init", ""},
      // Only the label counts, not the metadata's name.
      {"", ""},
  };
  for (const Case& c : cases) {
    const v1::Container* latest = LatestAttempt(containers, c.name);
    if (c.want_id.empty()) {
      EXPECT_EQ(latest, nullptr) << c.name;
    } else {
      ASSERT_NE(latest, nullptr) << c.name;
      EXPECT_EQ(latest->id(), c.want_id) << c.name;
    }
  }
}

TEST(LatestAttemptTest, FirstOfEqualAttemptsWins) {
  const std::vector<v1::Container> containers = {Attempt("first", "main", 3),
                                                 Attempt("second", "main", 3)};
  ASSERT_NE(LatestAttempt(containers, "main"), nullptr);
  EXPECT_EQ(LatestAttempt(containers, "main")->id(), "first");
}

}  // namespace
}  // namespace jobset::agent::cri
