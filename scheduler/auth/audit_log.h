#ifndef JOBSET_SCHEDULER_AUTH_AUDIT_LOG_H_
#define JOBSET_SCHEDULER_AUTH_AUDIT_LOG_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/rbac.h"
#include "common/clock.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_interceptor.h"

namespace jobset::scheduler {

// What the audit log says about one request, Kubernetes' audit event at
// level Metadata: who, what, the decision, the outcome. Never a secret.
struct AuditRecord {
  std::string user;  // "system:anonymous" when authentication failed
  std::vector<std::string> groups;
  std::string authn_method;   // "cert", "token", "insecure-dev", "" (failed)
  std::string credential_id;  // token id or certificate serial
  auth::Attributes attrs;
  bool allowed = false;
  std::string source_ip;
  absl::Time received;
};

// `--audit_log=FILE`: one JSON line per request that changes something
// (every request with `audit_reads`), written when the request ends, with
// its status. RequestAuth files a request's record (Begin); the gRPC
// interceptor from InterceptorFactory writes it when the call's status is
// sent (Finish). Thread-safe.
class AuditLog {
 public:
  // Appends to `path` (created 0600).
  // `clock` stamps when each request ended.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      const std::string& path, bool audit_reads,
      Clock* clock = RealClock::Get());
  ~AuditLog();

  void Begin(const grpc::ServerContextBase* context, AuditRecord record);
  void Finish(const grpc::ServerContextBase* context, absl::string_view method,
              const grpc::Status& status);

  // Installs Finish on every call of a server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  InterceptorFactory();

  // One line, as written (exposed for tests).
  static std::string Format(const AuditRecord& record, absl::string_view method,
                            const grpc::Status& status, absl::Time done);

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
