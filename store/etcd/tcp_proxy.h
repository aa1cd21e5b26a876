#ifndef JOBSET_STORE_ETCD_TCP_PROXY_H_
#define JOBSET_STORE_ETCD_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace jobset::store::testing {

// A TCP proxy on 127.0.0.1 in front of one address, for tests that cut a
// process off from etcd while both stay alive. Cut() stops forwarding with
// every connection held open (a link that drops packets, not one that
// resets), so the client notices only by its own timeouts. Thread-safe.
class TcpProxy {
 public:
  // Listens on a free loopback port and forwards each connection to
  // `target` ("127.0.0.1:PORT").
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(
      const std::string& target);
  ~TcpProxy();

  std::string address() const;  // "127.0.0.1:PORT"
  void Cut(bool cut) { cut_.store(cut); }

 private:
  TcpProxy(int listen_fd, int port, std::string target);
  void Loop();

  const int listen_fd_;
  const int port_;
  const std::string target_;
  std::atomic<bool> cut_ = false;
  std::atomic<bool> stopping_ = false;
  std::thread thread_;
};

}  // namespace jobset::store::testing

#endif  // JOBSET_STORE_ETCD_TCP_PROXY_H_
