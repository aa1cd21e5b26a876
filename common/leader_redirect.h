#ifndef JOBSET_COMMON_LEADER_REDIRECT_H_
#define JOBSET_COMMON_LEADER_REDIRECT_H_

#include <optional>
#include <string>

#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

namespace jobset {

// A jobsetd replica that does not lead answers every call UNAVAILABLE and
// names the leader's address ("HOST:PORT") in this trailing metadata
// (scheduler/ha/follower_server.h); clients and agents given several
// addresses go there next.
inline constexpr char kLeaderMetadataKey[] = "jobsetd-leader";

// The leader that a call answered with `status` was redirected to, if any.
inline std::optional<std::string> RedirectedLeader(
    const grpc::ClientContext& context, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return std::nullopt;
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(kLeaderMetadataKey);
  if (it == trailers.end() || it->second.empty()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}

}  // namespace jobset

#endif  // JOBSET_COMMON_LEADER_REDIRECT_H_
