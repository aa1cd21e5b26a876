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

TEST(UidTest, BytesRoundTrip) {
  for (int i = 0; i < 100; ++i) {
    const std::string uid = NewUid();
    std::optional<UidBytes> bytes = ParseUid(uid);
    ASSERT_TRUE(bytes.has_value()) << uid;
    EXPECT_EQ(FormatUid(*bytes), uid);
  }
  UidBytes all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<char>(i * 17);
  EXPECT_EQ(FormatUid(all), "00112233-4455-6677-8899-aabbccddeeff");
}

TEST(UidTest, ParseTakesOnlyTheLowercaseTextForm) {
  for (const char* uid :
       {"00112233-4455-6677-8899-AABBCCDDEEFF",
        "001122334455-6677-8899-aabbccddeeff-",
        "00112233-4455-6677-8899-aabbccddeef",
        "00112233-4455-6677-8899-aabbccddeefg", "pod-uid-1", ""}) {
    EXPECT_FALSE(ParseUid(uid).has_value()) << uid;
  }
}

}  // namespace
}  // namespace jobset
