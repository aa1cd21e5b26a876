#include "scheduler/auth/identity_service.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace jobset::scheduler {
namespace {

constexpr size_t kMaxCsrBytes = 16 << 10;
constexpr size_t kMinNodeSecretBytes = 16;
constexpr size_t kMaxNodeSecretBytes = 256;

}  // namespace

grpc::Status IdentityServiceImpl::GetClusterInfo(grpc::ServerContext*,
                                                 const api::ClusterInfoRequest*,
                                                 api::ClusterInfo* response) {
  response->set_ca_pem(pki_->ca.cert_pem);
  return grpc::Status::OK;
}

absl::StatusOr<api::NodeCertificate> IdentityServiceImpl::Issue(
    absl::string_view node, int64_t generation, absl::string_view csr_pem,
    std::string* serial, absl::Time* not_after) const {
  if (csr_pem.size() > kMaxCsrBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "csr_pem: ", csr_pem.size(), " bytes, more than ", kMaxCsrBytes));
  }
  auth::LeafRequest request{
      .common_name = absl::StrCat(auth::kNodeUserPrefix, node),
      .organizations = {std::string(auth::kNodesGroup)},
      .uris = {absl::StrCat("jobsetd://node/", node),
               NodeGenerationUri(generation)},
      .client_auth = true,
      .validity = auth::kNodeCertValidity};
  absl::StatusOr<std::string> cert =
      auth::IssueCertificate(pki_->ca, csr_pem, request, auth_->clock()->Now());
  if (!cert.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("csr_pem: ", cert.status().message()));
  }
  JOBSET_ASSIGN_OR_RETURN(auth::CertificateInfo info,
                          auth::ParseCertificate(*cert));
  *serial = info.serial;
  *not_after = info.not_after;
  api::NodeCertificate out;
  out.set_cert_pem(*std::move(cert));
  out.set_ca_pem(pki_->ca.cert_pem);
  return out;
}

grpc::Status IdentityServiceImpl::JoinNode(grpc::ServerContext* context,
                                           const api::JoinNodeRequest* request,
                                           api::NodeCertificate* response) {
  const absl::Time now = auth_->clock()->Now();
  // The token first: nothing about names is said to whoever lacks it.
  if (absl::Status token =
          auth_->CheckJoinCredential(*context, request->token());
      !token.ok()) {
    return ToGrpcStatus(token);
  }
  if (std::vector<std::string> errors =
          api::IsDns1123Subdomain(request->node_name());
      !errors.empty()) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("node_name: Invalid value: \"", request->node_name(),
                     "\": ", absl::StrJoin(errors, "; ")));
  }
  if (request->node_secret().size() < kMinNodeSecretBytes ||
      request->node_secret().size() > kMaxNodeSecretBytes) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("node_secret: must be ", kMinNodeSecretBytes, " to ",
                     kMaxNodeSecretBytes, " bytes"));
  }
  absl::StatusOr<int64_t> generation = auth_->access()->JoinGeneration(
      request->node_name(), request->node_secret());
  if (!generation.ok()) return ToGrpcStatus(generation.status());
  std::string serial;
  absl::Time not_after;
  absl::StatusOr<api::NodeCertificate> cert =
      Issue(request->node_name(), *generation, request->csr_pem(), &serial,
            &not_after);
  if (!cert.ok()) return ToGrpcStatus(cert.status());
  // Recorded before it is handed out: a certificate jobsetd does not know
  // of could never be revoked.
  if (absl::Status recorded = auth_->access()->RecordJoin(
          request->node_name(), request->node_secret(), *generation, serial,
          not_after, now);
      !recorded.ok()) {
    return ToGrpcStatus(recorded);
  }
  *response = *std::move(cert);
  return grpc::Status::OK;
}

grpc::Status IdentityServiceImpl::RenewNodeCertificate(
    grpc::ServerContext* context,
    const api::RenewNodeCertificateRequest* request,
    api::NodeCertificate* response) {
  absl::StatusOr<Caller> caller =
      auth_->AuthenticateNode(context, "RenewNodeCertificate");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (caller->node.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "jobsetd runs --insecure: there are no certificates");
  }
  // Rate limited before anything is signed.
  const absl::Time now = auth_->clock()->Now();
  absl::StatusOr<int64_t> generation =
      auth_->access()->CheckRenewal(caller->node, now);
  if (!generation.ok()) return ToGrpcStatus(generation.status());
  std::string serial;
  absl::Time not_after;
  absl::StatusOr<api::NodeCertificate> cert =
      Issue(caller->node, *generation, request->csr_pem(), &serial, &not_after);
  if (!cert.ok()) return ToGrpcStatus(cert.status());
  if (absl::Status recorded = auth_->access()->RecordRenewal(
          caller->node, *generation, serial, not_after, now);
      !recorded.ok()) {
    return ToGrpcStatus(recorded);
  }
  *response = *std::move(cert);
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler
