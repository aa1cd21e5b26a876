#include "api/quantity.h"

#include <cstdint>
#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

struct ValidCase {
  std::string text;
  int64_t milli;
};

class ParseQuantityValidTest : public ::testing::TestWithParam<ValidCase> {};

TEST_P(ParseQuantityValidTest, ParsesExactly) {
  EXPECT_THAT(ParseQuantity(GetParam().text),
              IsOkAndHolds(Quantity::FromMilli(GetParam().milli)));
}

constexpr int64_t kKi = 1024;
constexpr int64_t kGi = kKi * kKi * kKi;

INSTANTIATE_TEST_SUITE_P(
    Kubernetes, ParseQuantityValidTest,
    ::testing::Values(
        ValidCase{"0", 0}, ValidCase{"8", 8000}, ValidCase{"500m", 500},
        ValidCase{"1.5", 1500}, ValidCase{"0.5", 500}, ValidCase{".5", 500},
        ValidCase{"5.", 5000}, ValidCase{"+3", 3000}, ValidCase{"-2", -2000},
        ValidCase{"1k", 1'000'000}, ValidCase{"1M", 1'000'000'000},
        ValidCase{"2G", 2'000'000'000'000}, ValidCase{"4Gi", 4 * kGi * 1000},
        ValidCase{"1Ki", 1'024'000}, ValidCase{"1.5Gi", 3 * kGi / 2 * 1000},
        ValidCase{"128974848", 128'974'848'000},
        ValidCase{"129e6", 129'000'000'000}, ValidCase{"123E-3", 123},
        ValidCase{"1e3", 1'000'000}, ValidCase{"007", 7000},
        ValidCase{"0.1m", 1},       // finer than 1m rounds up
        ValidCase{"1.0001", 1001},  // also rounds up
        ValidCase{"1Pi", 1'125'899'906'842'624'000}));

TEST(QuantityTest, ValueRoundsUpToWholeUnits) {
  EXPECT_EQ(Quantity::FromMilli(500).Value(), 1);
  EXPECT_EQ(Quantity::FromMilli(2000).Value(), 2);
  EXPECT_EQ(Quantity::FromMilli(2001).Value(), 3);
  EXPECT_EQ(Quantity::FromMilli(0).Value(), 0);
  EXPECT_EQ(Quantity::FromMilli(-1500).Value(), -1);
  EXPECT_EQ(Quantity::FromUnits(3).MilliValue(), 3000);
}

TEST(QuantityTest, Orders) {
  EXPECT_LT(*ParseQuantity("500m"), *ParseQuantity("1"));
  EXPECT_EQ(*ParseQuantity("1Ki"), *ParseQuantity("1024"));
  EXPECT_EQ(*ParseQuantity("1k"), *ParseQuantity("1e3"));
}

class ParseQuantityInvalidTest : public ::testing::TestWithParam<std::string> {
};

TEST_P(ParseQuantityInvalidTest, RejectsWithTheTextInTheMessage) {
  EXPECT_THAT(ParseQuantity(GetParam()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"" + GetParam() + "\"")));
}

INSTANTIATE_TEST_SUITE_P(Garbage, ParseQuantityInvalidTest,
                         ::testing::Values("", "abc", "1x", "Gi", "1.2.3", ".",
                                           "-", "1 Gi", " 1", "1gi", "1e",
                                           "1e+", "1ee3", "1Mi1", "0x10", "1,5",
                                           "1e3.5", "--1", "1KiB"));

TEST(ParseQuantityTest, TooLargeIsOutOfRange) {
  for (const char* text : {"8Ei", "10E", "1e40", "99999999999999999999", "1e41",
                           "1234567890123456789012345678901"}) {
    EXPECT_THAT(ParseQuantity(text),
                StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("too large")))
        << text;
  }
}

TEST(ParseQuantityTest, LargestValuesThatFit) {
  // 9.2e15 units is the limit; 8Pi and 9P fit.
  EXPECT_TRUE(ParseQuantity("8Pi").ok());
  EXPECT_TRUE(ParseQuantity("9P").ok());
  EXPECT_THAT(ParseQuantity("1e-50"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace jobset::api
