#ifndef JOBSET_SCHEDULER_SERVER_SERVER_H_
#define JOBSET_SCHEDULER_SERVER_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/validation.h"
#include "common/clock.h"
#include "grpcpp/server.h"
#include "scheduler/auth/audit_log.h"
#include "scheduler/auth/cluster_files.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/metrics.h"
#include "scheduler/server/jobset_api.h"
#include "scheduler/server/jobset_service.h"
#include "scheduler/server/kueue_api.h"
#include "scheduler/server/kueue_service.h"
#include "scheduler/server/namespace_api.h"
#include "scheduler/server/stream_limiter.h"
#include "scheduler/server/stream_ticker.h"
#include "store/store.h"

namespace jobset::scheduler {

// jobsetd's front door, assembled: the store, the JobSet and Kueue APIs over
// it, and a gRPC server with JobSetService, KueueService, the standard
// health service and (insecure mode only) server reflection. The binary
// (jobsetd_main.cc) and in-process tests both start one. Thread-safe.
class Server {
 public:
  // gRPC refuses larger requests with RESOURCE_EXHAUSTED (the default of
  // Options::max_receive_bytes).
  static constexpr int kMaxRequestBytes = 4 << 20;

  // The gRPC server's own limits, on every service it serves (the JobSet
  // API, the agents' streams, nodes, logs, health). jobsetd sets them from
  // its flags; scheduler/README.md has the table.
  struct Limits {
    // HTTP/2 streams (calls) one connection may have open at once; more
    // wait in the client until one ends (--grpc_max_concurrent_streams).
    // Channels to the same address in one process share a connection (as
    // tests/heartbeat_bench's simulated agents do), so this is generous.
    int max_concurrent_streams = 2'048;
    // Largest message received, and sent, in bytes: RESOURCE_EXHAUSTED
    // beyond (--grpc_max_receive_bytes, --grpc_max_send_bytes).
    int max_receive_bytes = kMaxRequestBytes;
    int max_send_bytes = 16 << 20;
    // Threads the server may use (grpc::ResourceQuota::SetMaxThreads):
    // every synchronous call in progress holds one (watches, `logs -f` and
    // agent streams are callback streams and hold none), so this bounds
    // the unary calls in flight; a call beyond it is refused with
    // RESOURCE_EXHAUSTED (--grpc_max_threads).
    int max_threads = 16'384;
  };

  struct Options {
    std::string listen = "127.0.0.1:7070";  // HOST:PORT; port 0 picks one.
    api::Features features = {.restart_job = true};
    // The API's limits (what a JobSet may ask for, how many are stored).
    ApiLimits api_limits;
    Limits grpc_limits;
    Clock* clock = RealClock::Get();
    // More services to serve (the agents' and the node registry's); they
    // must outlive the server.
    std::vector<grpc::Service*> services;
    // Called by Shutdown once watches are ended, before in-flight calls are
    // drained: ends the calls that would otherwise never finish (streams).
    std::function<void()> end_streams;
    // Counts and times every call (null: no metrics).
    SchedulerMetrics* metrics = nullptr;
    // Authenticates and authorizes every call (required; must outlive the
    // server).
    const RequestAuth* auth = nullptr;
    // TLS with the cluster's CA and serving certificate; client
    // certificates are optional and, when sent, verified against the CA.
    // Null: plaintext, allowed only when `auth` is insecure (loopback
    // development and in-process tests).
    const ClusterPki* tls = nullptr;
    // Writes an audit line per request (null: none); must outlive the
    // server.
    AuditLog* audit = nullptr;
    // Caps each user's open watches (shared with the logs -f streams of
    // PodLogService; null: no cap); must outlive the server.
    StreamLimiter* streams = nullptr;
  };

  // The credentials Start serves with: TLS with `tls`' CA and serving
  // certificate (client certificates optional and, when sent, verified),
  // plaintext when null. A follower replica serves with the same
  // (scheduler/ha/follower_server.h).
  static std::shared_ptr<grpc::ServerCredentials> Credentials(
      const ClusterPki* tls);

  // Serves `store` (which must outlive the server) on options.listen.
  // kUnavailable if the address cannot be bound; kInvalidArgument without
  // `auth`, or plaintext with an `auth` that is not insecure.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const Options& options,
                                                       store::Store* store);

  // Stops serving: marks the health service NOT_SERVING, ends watches, lets
  // in-flight calls finish until `deadline`, then cancels the rest.
  // Idempotent.
  void Shutdown(absl::Time deadline);

  ~Server();

  // The address serving, with the port actually bound ("127.0.0.1:43121").
  const std::string& address() const { return address_; }

 private:
  Server(store::Store* store, const Options& options);

  std::function<void()> end_streams_;
  JobSetApi api_;
  NamespaceApi namespaces_;
  SecretApi secrets_;
  ConfigMapApi config_maps_;
  KueueApi kueue_;
  // Keeps the watches going (one thread for all of them).
  StreamTicker ticker_;
  JobSetServiceImpl service_;
  KueueServiceImpl kueue_service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::string address_;
  std::atomic<bool> shut_down_ = false;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_SERVER_H_
