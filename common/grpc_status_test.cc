#include "common/grpc_status.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

TEST(GrpcStatusTest, OkBothWays) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(GrpcStatusTest, EveryCodeRoundTripsWithItsMessage) {
  for (int c = 1; c <= 16; ++c) {
    const absl::Status in(static_cast<absl::StatusCode>(c), "spec.suspend");
    const grpc::Status g = ToGrpcStatus(in);
    EXPECT_EQ(static_cast<int>(g.error_code()), c);
    EXPECT_EQ(g.error_message(), "spec.suspend");
    EXPECT_EQ(FromGrpcStatus(g), in);
  }
}

TEST(GrpcStatusTest, NamedCodesLineUp) {
  EXPECT_EQ(ToGrpcStatus(absl::InvalidArgumentError("x")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcStatus(absl::AbortedError("x")).error_code(),
            grpc::StatusCode::ABORTED);
  EXPECT_EQ(FromGrpcStatus(
                grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "too big"))
                .code(),
            absl::StatusCode::kResourceExhausted);
}

// 25 is outside both code sets yet within both enums' value ranges, so the
// test itself has no undefined behaviour.
TEST(GrpcStatusTest, UnknownCodesBecomeUnknown) {
  EXPECT_EQ(FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(25), "?"))
                .code(),
            absl::StatusCode::kUnknown);
  EXPECT_EQ(ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(25), "?"))
                .error_code(),
            grpc::StatusCode::UNKNOWN);
}

}  // namespace
}  // namespace jobset
