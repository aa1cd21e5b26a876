#include "scheduler/auth/request_auth.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "common/status_macros.h"
#include "grpcpp/security/auth_context.h"

namespace jobset::scheduler {
namespace {

std::string Property(const grpc::AuthContext& auth, const char* name) {
  std::vector<grpc::string_ref> values = auth.FindPropertyValues(name);
  if (values.empty()) return "";
  return std::string(values.front().data(), values.front().size());
}

// "ipv4:10.0.0.7:53211" -> "10.0.0.7"; "ipv6:[::1]:5" -> "::1".
std::string SourceIp(const grpc::ServerContextBase& context) {
  const std::string text = context.peer();
  absl::string_view peer = text;
  if (!absl::ConsumePrefix(&peer, "ipv4:") &&
      !absl::ConsumePrefix(&peer, "ipv6:")) {
    return std::string(peer);
  }
  size_t colon = peer.rfind(':');
  if (colon != absl::string_view::npos) peer = peer.substr(0, colon);
  absl::ConsumePrefix(&peer, "[");
  absl::ConsumeSuffix(&peer, "]");
  return std::string(peer);
}

// The verified client certificate `pem`'s identity, or why it is refused.
absl::StatusOr<Caller> FromCertificate(const std::string& pem,
                                       const AccessStore& access,
                                       absl::Time now) {
  absl::StatusOr<auth::CertificateInfo> cert = auth::ParseCertificate(pem);
  if (!cert.ok()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "unreadable client certificate: ", cert.status().message()));
  }
  // gRPC checked the chain and the dates at the handshake; a long-lived
  // stream may outlive the certificate, and a revocation is ours to check.
  if (cert->not_after <= now) {
    return absl::UnauthenticatedError("certificate has expired");
  }
  if (!cert->client_auth) {
    return absl::UnauthenticatedError(
        "certificate is not for client authentication");
  }
  Caller caller;
  caller.method = "cert";
  caller.credential_id = cert->serial;
  caller.expires = cert->not_after;
  caller.user.name = cert->common_name;
  caller.user.groups = cert->organizations;
  caller.user.groups.emplace_back(auth::kAuthenticatedGroup);
  bool in_nodes = false;
  for (const std::string& o : cert->organizations) {
    if (o == auth::kNodesGroup) in_nodes = true;
  }
  absl::string_view name = cert->common_name;
  if (in_nodes && absl::ConsumePrefix(&name, auth::kNodeUserPrefix) &&
      !name.empty()) {
    caller.node = std::string(name);
    // A node is its join, not its serial: a deleted node's certificates
    // (every one, however many renewals) stay out until it joins again.
    JOBSET_ASSIGN_OR_RETURN(int64_t generation, NodeGenerationOf(cert->uris));
    JOBSET_RETURN_IF_ERROR(
        access.CheckNodeCertificate(caller.node, generation));
    caller.node_generation = generation;
  } else if (in_nodes ||
             absl::StartsWith(cert->common_name, auth::kNodeUserPrefix)) {
    return absl::UnauthenticatedError(absl::StrCat(
        "certificate names \"", cert->common_name,
        "\" but is not a node certificate (CN system:node:<name>, O ",
        auth::kNodesGroup, ")"));
  }
  // The serials revoked before node generations (and any other).
  if (access.IsRevoked(cert->serial)) {
    return absl::UnauthenticatedError("certificate has been revoked");
  }
  return caller;
}

}  // namespace

absl::Status RequestAuth::CheckJoinCredential(
    const grpc::ServerContextBase& context,
    absl::string_view credential) const {
  const absl::Time now = options_.clock->Now();
  // Counted apart from users' tokens: a pod's bad tokens do not stop its
  // node from joining again.
  const std::string key = absl::StrCat(SourceIp(context), " (join tokens)");
  JOBSET_RETURN_IF_ERROR(failures_.Check(key, now));
  absl::Status checked = options_.access->CheckJoinCredential(credential, now);
  if (!checked.ok()) failures_.Failed(key, now);
  return checked;
}

absl::StatusOr<Caller> RequestAuth::Authenticate(
    const grpc::ServerContextBase& context) const {
  Credentials credentials;
  credentials.source_ip = SourceIp(context);
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    credentials.cert_pem = Property(*auth, "x509_pem_cert");
  }
  const auto& metadata = context.client_metadata();
  if (auto header = metadata.find("authorization"); header != metadata.end()) {
    credentials.authorization =
        std::string(header->second.data(), header->second.size());
  }
  return AuthenticateCredentials(credentials);
}

std::string RequestAuth::FailureKey(absl::string_view source_ip,
                                    absl::string_view token) const {
  absl::StatusOr<auth::TokenParts> parts = auth::ParseToken(token);
  if (parts.ok() && options_.access->HasTokenId(parts->id)) {
    return absl::StrCat(source_ip, " for token ", parts->id);
  }
  return std::string(source_ip);
}

absl::StatusOr<Caller> RequestAuth::AuthenticateCredentials(
    const Credentials& credentials) const {
  const absl::Time now = options_.clock->Now();
  // A certificate gRPC verified is no guess: it authenticates (or is
  // refused) whatever others sent from its address, and is never limited.
  if (!credentials.cert_pem.empty()) {
    return FromCertificate(credentials.cert_pem, *options_.access, now);
  }
  if (credentials.authorization.has_value()) {
    absl::string_view value = *credentials.authorization;
    if (!absl::ConsumePrefix(&value, "Bearer ")) {
      return absl::UnauthenticatedError(
          "authorization metadata must be \"Bearer <token>\"");
    }
    // Failures are counted per credential: an existing token id's on its
    // own (guesses of its secret), the rest on the address (guesses of
    // whole tokens). A valid token is refused only after guesses of its
    // own secret from its own address.
    const std::string key = FailureKey(credentials.source_ip, value);
    JOBSET_RETURN_IF_ERROR(failures_.Check(key, now));
    absl::StatusOr<auth::UserInfo> user =
        options_.access->AuthenticateToken(value, now);
    if (!user.ok()) {
      failures_.Failed(key, now);
      return user.status();
    }
    Caller caller;
    caller.method = "token";
    caller.credential_id =
        std::string(value.substr(0, value.find('.')).substr(0, 16));
    caller.user = *std::move(user);
    return caller;
  }
  if (options_.insecure) {
    Caller caller;
    caller.method = "insecure-dev";
    caller.user.name = std::string(kInsecureAdmin);
    caller.user.groups = {std::string(auth::kMastersGroup),
                          std::string(auth::kAuthenticatedGroup)};
    return caller;
  }
  return absl::UnauthenticatedError(
      "no credentials: send a bearer token (authorization: Bearer <token>) "
      "or a client certificate signed by the cluster CA");
}

absl::Status RequestAuth::StillValid(const Caller& caller) const {
  const absl::Time now = options_.clock->Now();
  if (caller.method == "token") {
    return options_.access->CheckTokenStands(caller.credential_id, now);
  }
  if (caller.method != "cert") return absl::OkStatus();
  if (caller.expires <= now) {
    return absl::UnauthenticatedError("certificate has expired");
  }
  if (!caller.node.empty()) {
    return options_.access->CheckNodeCertificate(caller.node,
                                                 caller.node_generation);
  }
  if (options_.access->IsRevoked(caller.credential_id)) {
    return absl::UnauthenticatedError("certificate has been revoked");
  }
  return absl::OkStatus();
}

bool RequestAuth::Allows(const Caller& caller, const auth::Attributes& attrs,
                         std::string* reason) const {
  // Nodes are authorized by who they are, for their own stream and
  // certificate only (scheduler/agents, IdentityService), never by RBAC.
  if (!caller.node.empty()) return false;
  return options_.access->Allows(caller.user, attrs, reason);
}

absl::StatusOr<Caller> RequestAuth::Authorize(
    grpc::ServerContextBase* context, const auth::Attributes& attrs) const {
  absl::StatusOr<Caller> caller = Authenticate(*context);
  if (!caller.ok()) {
    Audit(*context, nullptr, attrs, false, "");
    return caller.status();
  }
  std::string reason;  // Only the audit log reads it.
  bool allowed =
      Allows(*caller, attrs, options_.audit != nullptr ? &reason : nullptr);
  if (allowed && !reason.empty()) {
    reason = absl::StrCat("RBAC: ", reason);  // as Kubernetes' RBAC says it
  } else if (!allowed && !caller->node.empty()) {
    reason =
        "a node may call only the agents' methods (RBAC grants nodes nothing)";
  }
  Audit(*context, &*caller, attrs, allowed, std::move(reason));
  if (!allowed) {
    return absl::PermissionDeniedError(
        auth::ForbiddenMessage(caller->user, attrs));
  }
  return caller;
}

absl::StatusOr<Caller> RequestAuth::AuthenticateNode(
    grpc::ServerContextBase* context, absl::string_view what) const {
  absl::StatusOr<Caller> caller = Authenticate(*context);
  auth::Attributes attrs{.verb = "update", .resource = "nodes"};
  if (!caller.ok()) {
    Audit(*context, nullptr, attrs, false, "");
    return caller;
  }
  if (caller->node.empty() &&
      !(options_.insecure && caller->method == "insecure-dev")) {
    std::string reason = absl::StrCat(what, " requires a node certificate");
    Audit(*context, &*caller, attrs, false, reason);
    return absl::UnauthenticatedError(absl::StrCat(
        reason, " (user \"", caller->user.name, "\" is not a node)"));
  }
  attrs.name = caller->node;
  Audit(*context, &*caller, attrs, true, "");
  return caller;
}

void RequestAuth::Audit(const grpc::ServerContextBase& context,
                        const Caller* caller, const auth::Attributes& attrs,
                        bool allowed, std::string reason) const {
  if (options_.audit == nullptr) return;
  AuditRecord record;
  if (caller != nullptr) {
    record.authenticated = true;
    record.user = caller->user;
    record.authn_method = caller->method;
    record.credential_id = caller->credential_id;
  }
  record.attrs = attrs;
  record.allowed = allowed;
  record.reason = std::move(reason);
  record.source_ip = SourceIp(context);
  const auto& metadata = context.client_metadata();
  if (auto agent = metadata.find("user-agent"); agent != metadata.end()) {
    record.user_agent.assign(agent->second.data(), agent->second.size());
  }
  record.received = options_.clock->Now();
  options_.audit->Begin(&context, std::move(record));
}

}  // namespace jobset::scheduler
