#ifndef JOBSET_SCHEDULER_AUTH_IDENTITY_SERVICE_H_
#define JOBSET_SCHEDULER_AUTH_IDENTITY_SERVICE_H_

#include "proto/auth.grpc.pb.h"
#include "scheduler/auth/cluster_files.h"
#include "scheduler/auth/request_auth.h"

namespace jobset::scheduler {

// How agents become nodes (security-model.md §2.3): GetClusterInfo is open,
// JoinNode takes the join token in its request, RenewNodeCertificate needs
// the node's certificate. A node certificate is CN system:node:<name>, O
// system:nodes, URI SANs jobsetd://node/<name> and
// jobsetd://node-generation/<g> (the join it belongs to: access_store.h),
// clientAuth only, 30 days; nothing else a CSR asks for is signed. A node
// renews at most once per kMinRenewalInterval (RESOURCE_EXHAUSTED naming
// the wait).
class IdentityServiceImpl final : public api::IdentityService::Service {
 public:
  IdentityServiceImpl(const ClusterPki* pki, const RequestAuth* auth)
      : pki_(pki), auth_(auth) {}

  grpc::Status GetClusterInfo(grpc::ServerContext* context,
                              const api::ClusterInfoRequest* request,
                              api::ClusterInfo* response) override;
  grpc::Status JoinNode(grpc::ServerContext* context,
                        const api::JoinNodeRequest* request,
                        api::NodeCertificate* response) override;
  grpc::Status RenewNodeCertificate(
      grpc::ServerContext* context,
      const api::RenewNodeCertificateRequest* request,
      api::NodeCertificate* response) override;

 private:
  // A certificate for `node` of `generation` (AccessStore's) over
  // `csr_pem`'s key.
  absl::StatusOr<api::NodeCertificate> Issue(absl::string_view node,
                                             int64_t generation,
                                             absl::string_view csr_pem,
                                             std::string* serial,
                                             absl::Time* not_after) const;

  const ClusterPki* const pki_;
  const RequestAuth* const auth_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_IDENTITY_SERVICE_H_
