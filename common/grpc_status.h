#ifndef JOBSET_COMMON_GRPC_STATUS_H_
#define JOBSET_COMMON_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace jobset {

// Converts between absl::Status and grpc::Status, keeping the code and message.
// The two code enums share their numbering (both follow google.rpc.Code); a
// code outside it becomes UNKNOWN. Used once at each RPC boundary.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace jobset

#endif  // JOBSET_COMMON_GRPC_STATUS_H_
