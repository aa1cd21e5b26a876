#include "common/status_macros.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointee;

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("spec.replicatedJobs[0].name")
              : absl::OkStatus();
}

absl::Status TwoSteps(bool fail_first, int* steps) {
  JOBSET_RETURN_IF_ERROR(FailIf(fail_first));
  ++*steps;
  JOBSET_RETURN_IF_ERROR(FailIf(false));
  ++*steps;
  return absl::OkStatus();
}

TEST(ReturnIfErrorTest, ReturnsTheFirstError) {
  int steps = 0;
  EXPECT_THAT(TwoSteps(true, &steps),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("replicatedJobs[0]")));
  EXPECT_EQ(steps, 0);
}

TEST(ReturnIfErrorTest, ContinuesOnOk) {
  int steps = 0;
  EXPECT_THAT(TwoSteps(false, &steps), IsOk());
  EXPECT_EQ(steps, 2);
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(int v) {
  if (v < 0) return absl::OutOfRangeError("negative");
  return std::make_unique<int>(v);
}

absl::StatusOr<int> Doubled(int v) {
  // A move-only value and a declaration on the left both work.
  JOBSET_ASSIGN_OR_RETURN(std::unique_ptr<int> p, MakeInt(v));
  int copy = 0;
  JOBSET_ASSIGN_OR_RETURN(copy, absl::StatusOr<int>(*p));
  return copy * 2;
}

TEST(AssignOrReturnTest, AssignsTheValue) {
  EXPECT_THAT(Doubled(21), IsOkAndHolds(42));
}

TEST(AssignOrReturnTest, ReturnsTheError) {
  EXPECT_THAT(Doubled(-1), StatusIs(absl::StatusCode::kOutOfRange, "negative"));
}

TEST(MatchersTest, DescribeMismatches) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::NotFoundError("x"), Not(IsOk()));
  EXPECT_THAT(absl::NotFoundError("x"),
              Not(StatusIs(absl::StatusCode::kAborted)));
  EXPECT_THAT(absl::NotFoundError("x"),
              Not(StatusIs(absl::StatusCode::kNotFound, "y")));
  EXPECT_THAT(absl::StatusOr<int>(3), Not(IsOkAndHolds(4)));
  EXPECT_THAT(absl::StatusOr<int>(absl::AbortedError("a")),
              Not(IsOkAndHolds(3)));
  EXPECT_THAT(MakeInt(5), IsOkAndHolds(Pointee(Eq(5))));
  EXPECT_EQ(::testing::DescribeMatcher<absl::Status>(
                StatusIs(absl::StatusCode::kNotFound)),
            "has a status code that is equal to NOT_FOUND and a message that "
            "is anything");
}

}  // namespace
}  // namespace jobset
