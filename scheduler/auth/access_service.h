#ifndef JOBSET_SCHEDULER_AUTH_ACCESS_SERVICE_H_
#define JOBSET_SCHEDULER_AUTH_ACCESS_SERVICE_H_

#include <optional>
#include <string>

#include "proto/auth.grpc.pb.h"
#include "scheduler/auth/cluster_files.h"
#include "scheduler/auth/request_auth.h"
#include "store/store.h"

namespace jobset::scheduler {

// Users' tokens, the join token and RBAC objects, each call authorized by
// RBAC (tokens: resource "tokens" in jobset.x-k8s.io, cluster-scoped, which
// only cluster-admin holds among the built-in roles; RBAC objects: their
// Kubernetes resources, with Kubernetes' escalation check).
class AccessServiceImpl final : public api::AccessService::Service {
 public:
  // `data_dir` receives the rotated join-token file; SaveSnapshot reads
  // `store` (which must outlive this).
  // A join token rotated without a ttl lives `join_token_ttl` (nullopt:
  // forever).
  AccessServiceImpl(const RequestAuth* auth, const ClusterPki* pki,
                    std::string data_dir, store::Store* store,
                    std::optional<absl::Duration> join_token_ttl = std::nullopt)
      : auth_(auth),
        pki_(pki),
        data_dir_(std::move(data_dir)),
        store_(store),
        join_token_ttl_(join_token_ttl) {}

  grpc::Status CreateToken(grpc::ServerContext* context,
                           const api::CreateTokenRequest* request,
                           api::CreateTokenResponse* response) override;
  grpc::Status ListTokens(grpc::ServerContext* context,
                          const api::ListTokensRequest* request,
                          api::ListTokensResponse* response) override;
  grpc::Status DeleteToken(grpc::ServerContext* context,
                           const api::DeleteTokenRequest* request,
                           api::TokenInfo* response) override;
  grpc::Status RotateJoinToken(grpc::ServerContext* context,
                               const api::RotateJoinTokenRequest* request,
                               api::RotateJoinTokenResponse* response) override;
  grpc::Status ApplyRbac(grpc::ServerContext* context,
                         const api::RbacObject* request,
                         api::RbacObject* response) override;
  grpc::Status DeleteRbac(grpc::ServerContext* context,
                          const api::RbacObjectRef* request,
                          api::RbacObject* response) override;
  grpc::Status ListRbac(grpc::ServerContext* context,
                        const api::ListRbacRequest* request,
                        api::ListRbacResponse* response) override;
  grpc::Status ReviewAccess(grpc::ServerContext* context,
                            const api::AccessReview* request,
                            api::AccessReviewResult* response) override;
  // One consistent read of the store (Store::ReadAll), written as a snapshot
  // file in chunks as it is read: never held whole in memory.
  grpc::Status SaveSnapshot(
      grpc::ServerContext* context, const api::SaveSnapshotRequest* request,
      grpc::ServerWriter<api::SnapshotChunk>* writer) override;

 private:
  const RequestAuth* const auth_;
  const ClusterPki* const pki_;
  const std::string data_dir_;
  store::Store* const store_;
  const std::optional<absl::Duration> join_token_ttl_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_ACCESS_SERVICE_H_
