#ifndef JOBSET_SCHEDULER_AUTH_AUDIT_LOG_H_
#define JOBSET_SCHEDULER_AUTH_AUDIT_LOG_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/rbac.h"
#include "common/clock.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_interceptor.h"

namespace jobset::scheduler {

// What the audit log knows of one request when it is authorized: who, what,
// the decision. Never a secret.
struct AuditRecord {
  // The event's auditID, a UUID; AuditLog::Begin makes one when empty.
  std::string audit_id;
  // False when authentication failed: the event names no user and carries
  // no authorization decision (authorization never ran), as Kubernetes'.
  bool authenticated = false;
  auth::UserInfo user;
  // "cert", "token" or "insecure-dev", and the certificate serial or token
  // id: the user's extra "authentication.kubernetes.io/credential-id".
  std::string authn_method;
  std::string credential_id;
  auth::Attributes attrs;
  bool allowed = false;
  // "authorization.k8s.io/reason": which binding allowed it ("RBAC: allowed
  // by ..."), why it was refused, or empty (no rule allows it).
  std::string reason;
  std::string source_ip;
  std::string user_agent;  // as the client says; not to be trusted
  absl::Time received;
};

// `--audit_log=FILE`: one Kubernetes audit event (audit.k8s.io/v1 Event,
// level Metadata, stage ResponseComplete) per JSON line, per request that
// changes something or is refused (every authorized request with
// `audit_reads`), written when the request ends, with its status mapped to
// the HTTP status kube-apiserver would answer. RequestAuth files a request's
// record (Begin); the gRPC interceptor from InterceptorFactory writes it
// when the call's status is sent (Finish). docs/security.md shows the
// fields. Thread-safe.
class AuditLog {
 public:
  // Appends to `path` (created 0600).
  // `clock` stamps when each request ended.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      const std::string& path, bool audit_reads,
      Clock* clock = RealClock::Get());
  ~AuditLog();

  // Files the record of a request (a later record for the same call, as an
  // apply's second check, replaces it but keeps its auditID and received
  // time). An allowed read (get, list, watch) is dropped unless audit_reads.
  void Begin(const grpc::ServerContextBase* context, AuditRecord record);
  // Writes the call's event, if one was filed; `method` is the gRPC method.
  void Finish(const grpc::ServerContextBase* context, absl::string_view method,
              const grpc::Status& status);

  // Installs Finish on every call of a server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  InterceptorFactory();

  // One event, as written without its newline (exposed for tests).
  static std::string Format(const AuditRecord& record, absl::string_view method,
                            const grpc::Status& status, absl::Time done);

  // The HTTP status kube-apiserver answers for what ended with `code`,
  // (201 for an OK create), and its metav1.Status reason ("" for success).
  struct HttpStatus {
    int code;
    absl::string_view reason;
  };
  static HttpStatus ToHttpStatus(grpc::StatusCode code, absl::string_view verb);

  // The REST path of the request in kube-apiserver, e.g.
  // "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets/train".
  static std::string RequestUri(const auth::Attributes& attrs);

 private:
  AuditLog(std::FILE* file, bool audit_reads, Clock* clock)
      : file_(file), audit_reads_(audit_reads), clock_(clock) {}

  std::FILE* const file_;
  const bool audit_reads_;
  Clock* const clock_;
  absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, AuditRecord> open_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_AUDIT_LOG_H_
