#include "agent/runtime/cri/cri_log.h"

#include <string>

#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

TEST(DecodeCriLogTest, FullAndPartialLinesOfBothStreams) {
  const std::string raw =
      "2026-12-01T19:12:03.981468805Z stdout F hello world\n"
      "2026-12-01T19:12:03.98213606Z stderr P abc\n"
      "2026-12-01T19:12:03.982285847Z stderr F def\n"
      "2026-12-01T19:12:03.982653607Z stdout P tail\n"
      "2026-12-01T19:12:03.99Z stdout F \n";
  size_t consumed = 0;
  EXPECT_EQ(DecodeCriLog(raw, &consumed), "hello world\nabcdef\ntail\n");
  EXPECT_EQ(consumed, raw.size());
}

TEST(DecodeCriLogTest, StopsAtTheLastWholeLine) {
  const std::string raw =
      "2026-12-01T19:12:03Z stdout F one\n2026-12-01T19:12:04Z stdout F tw";
  size_t consumed = 0;
  EXPECT_EQ(DecodeCriLog(raw, &consumed), "one\n");
  EXPECT_EQ(consumed, raw.find('\n') + 1);
  EXPECT_EQ(DecodeCriLog("no newline yet", &consumed), "");
  EXPECT_EQ(consumed, 0u);
}

TEST(DecodeCriLogTest, TagsAfterTheFirstAndSpacesInTheText) {
  size_t consumed = 0;
  EXPECT_EQ(DecodeCriLog("t stdout F:x a  b \n", &consumed), "a  b \n");
  EXPECT_EQ(DecodeCriLog("t stdout P:x a\nt stdout F b\n", &consumed), "ab\n");
}

TEST(DecodeCriLogTest, LinesThatDoNotParsePassThrough) {
  size_t consumed = 0;
  EXPECT_EQ(DecodeCriLog("garbage\nt stdout X y\n", &consumed),
            "garbage\nt stdout X y\n");
}

}  // namespace
}  // namespace jobset::agent::cri
