#ifndef JOBSET_SCHEDULER_AUTH_REQUEST_AUTH_H_
#define JOBSET_SCHEDULER_AUTH_REQUEST_AUTH_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "auth/rbac.h"
#include "common/clock.h"
#include "common/grpc_status.h"
#include "grpcpp/server_context.h"
#include "scheduler/auth/access_store.h"
#include "scheduler/auth/audit_log.h"
#include "scheduler/auth/failure_limiter.h"

namespace jobset::scheduler {

// Who made a request, as authenticated.
struct Caller {
  auth::UserInfo user;
  // Set when the caller is a node (a certificate with CN system:node:<name>
  // in O system:nodes): the node's name.
  std::string node;
  // "cert", "token" or "insecure-dev".
  std::string method;
  // The token id or the certificate serial (never a secret).
  std::string credential_id;
  // A certificate's: when it expires, and (a node's) its join's generation.
  absl::Time expires = absl::InfiniteFuture();
  int64_t node_generation = 0;
};

// Authentication and authorization of every request but the open ones
// (gRPC health, GetClusterInfo, JoinNode, which carries its own token).
// Every service's handler calls Authorize (or AuthenticateNode) first and
// returns its status when not OK. Thread-safe.
//
// Authentication, first match wins (as kube-apiserver's chain): a client
// certificate gRPC has verified against the cluster CA (its serial must not
// be revoked; a node if CN system:node:<n> and O system:nodes, and then
// only while that node is joined with the generation the certificate
// names; else user = CN, groups = O), then a bearer token ("authorization:
// Bearer <id>.<secret>" metadata). Neither: kUnauthenticated. In insecure
// mode (plaintext, loopback only) a caller without a token is the
// development administrator (system:masters). Guessing is slowed: 100 bad
// tokens within a minute for one existing token id from one address, or
// 100 unknown or malformed tokens from one address (or 100 bad join tokens
// from one address), and that key is refused (RESOURCE_EXHAUSTED) for the
// rest of that minute. A certificate is never limited: a pod that shares
// its node's address cannot lock the node's agent out.
//
// Authorization: Kubernetes RBAC over the AccessStore; nodes may call
// nothing but the agents' own methods. A denial is kPermissionDenied in
// kube-apiserver's wording.
class RequestAuth {
 public:
  struct Options {
    AccessStore* access = nullptr;  // required
    bool insecure = false;
    Clock* clock = RealClock::Get();
    AuditLog* audit = nullptr;  // may be null
  };
  explicit RequestAuth(Options options) : options_(options) {}

  absl::StatusOr<Caller> Authenticate(
      const grpc::ServerContextBase& context) const;

  // What a request brings to be authenticated by.
  struct Credentials {
    std::string source_ip = {};
    // The client certificate gRPC verified against the cluster CA (PEM),
    // or empty.
    std::string cert_pem = {};
    // The "authorization" metadata, if sent.
    std::optional<std::string> authorization = {};
  };
  // Authenticate, once the request's credentials are read out of it.
  absl::StatusOr<Caller> AuthenticateCredentials(
      const Credentials& credentials) const;

  // Authenticates, then checks RBAC; records the decision for the audit log.
  absl::StatusOr<Caller> Authorize(grpc::ServerContextBase* context,
                                   const auth::Attributes& attrs) const;

  // The node a request comes from (kUnauthenticated "... requires a node
  // certificate" otherwise). In insecure mode, a caller without a
  // certificate is any node: the returned Caller's node is empty.
  absl::StatusOr<Caller> AuthenticateNode(grpc::ServerContextBase* context,
                                          absl::string_view what) const;

  // OK while `caller`'s credential still stands: a token neither deleted
  // nor expired, a certificate not expired and, a node's, of its node's
  // current join. Long-lived streams (watches, `logs -f`) call it as they
  // poll and end with its kUnauthenticated: a deleted token or node is cut
  // off within a poll.
  absl::Status StillValid(const Caller& caller) const;

  // Whether the caller (already authenticated) may do `attrs`.
  bool Allows(const Caller& caller, const auth::Attributes& attrs,
              std::string* reason) const;

  // Checks a join token's credential for JoinNode (kUnauthenticated), with
  // the same limit on failures per address as every other credential.
  absl::Status CheckJoinCredential(const grpc::ServerContextBase& context,
                                   absl::string_view credential) const;

  bool insecure() const { return options_.insecure; }
  AccessStore* access() const { return options_.access; }
  Clock* clock() const { return options_.clock; }

 private:
  // Files the request's audit record: `caller` null when authentication
  // failed; `reason` the authorization.k8s.io/reason annotation.
  void Audit(const grpc::ServerContextBase& context, const Caller* caller,
             const auth::Attributes& attrs, bool allowed,
             std::string reason) const;

  // The failure limiter's key for a bearer `token` from `source_ip`.
  std::string FailureKey(absl::string_view source_ip,
                         absl::string_view token) const;

  Options options_;
  // Failed guesses (not a missing credential, not a certificate: neither is
  // a guess) per key: a known token id from an address, else the address;
  // join tokens per address apart. Past the limit the key gets
  // RESOURCE_EXHAUSTED for a while.
  mutable FailureLimiter failures_;
};

// The development administrator of insecure mode.
inline constexpr absl::string_view kInsecureAdmin = "system:admin";

}  // namespace jobset::scheduler

// In a gRPC handler: returns the refusal (UNAUTHENTICATED or
// PERMISSION_DENIED, as a grpc::Status) unless the caller of `context` may
// do `attrs`.
#define JOBSET_AUTHORIZE_OR_RETURN(auth, context, attrs)       \
  if (absl::StatusOr<::jobset::scheduler::Caller> authorized = \
          (auth)->Authorize(context, attrs);                   \
      !authorized.ok()) {                                      \
    return ::jobset::ToGrpcStatus(authorized.status());        \
  }

#endif  // JOBSET_SCHEDULER_AUTH_REQUEST_AUTH_H_
