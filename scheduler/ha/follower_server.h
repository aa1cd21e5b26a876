#ifndef JOBSET_SCHEDULER_HA_FOLLOWER_SERVER_H_
#define JOBSET_SCHEDULER_HA_FOLLOWER_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace jobset::scheduler {

// What a replica that does not lead serves on its API address while it
// campaigns: every call of every service (the JobSet API, agents' streams,
// health) is answered UNAVAILABLE, "jobsetd: this replica is a follower;
// the leader is at ADDR", with ADDR in the trailing metadata
// kLeaderMetadataKey (common/leader_redirect.h), absent while no leader is
// known. Clients and agents given every replica's address go to the leader
// (option R of ../shared/reference/etcd-ha.md §7: no double hop, nothing to
// keep in step). Health answers UNAVAILABLE too, so a load balancer sends
// nothing here. Thread-safe.
class FollowerServer {
 public:
  struct Options {
    std::string listen;  // HOST:PORT; port 0 picks one.
    std::shared_ptr<grpc::ServerCredentials> credentials;
    // The leader's address as this replica knows it now ("" if none).
    std::function<std::string()> leader;
  };

  // kUnavailable if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<FollowerServer>> Start(Options options);
  // Stops serving and frees the port (the leader's server binds it next).
  ~FollowerServer();

  // The address serving, with the port actually bound.
  const std::string& address() const { return address_; }

 private:
  explicit FollowerServer(Options options) : options_(std::move(options)) {}
  void Serve();
  // Asks gRPC for the next call, unless the server is stopping.
  void RequestNext();

  const Options options_;
  grpc::AsyncGenericService service_;
  std::unique_ptr<grpc::ServerCompletionQueue> queue_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_HA_FOLLOWER_SERVER_H_
