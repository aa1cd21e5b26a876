#include "common/grpc_status.h"

#include <string>

namespace jobset {
namespace {

// Both enums follow google.rpc.Code: OK = 0 ... UNAUTHENTICATED = 16.
constexpr int kMaxCode = 16;

bool IsKnownCode(int code) { return code >= 0 && code <= kMaxCode; }

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(status.code());
  return grpc::Status(IsKnownCode(code) ? static_cast<grpc::StatusCode>(code)
                                        : grpc::StatusCode::UNKNOWN,
                      std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const int code = static_cast<int>(status.error_code());
  return absl::Status(IsKnownCode(code) ? static_cast<absl::StatusCode>(code)
                                        : absl::StatusCode::kUnknown,
                      status.error_message());
}

}  // namespace jobset
