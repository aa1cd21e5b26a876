#include "common/uid.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

TEST(UidTest, IsAVersion4UuidAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string uid = NewUid();
    EXPECT_THAT(uid,
                ::testing::MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                        "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
    EXPECT_TRUE(seen.insert(uid).second);
  }
}

}  // namespace
}  // namespace jobset
