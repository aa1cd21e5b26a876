#ifndef JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_
#define JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace jobset::store::testing {

// A private etcd cluster for tests: `members` etcd processes on free
// 127.0.0.1 ports, data under `dir`, plaintext. Start() returns once every
// member answers a linearizable read. Only the pids this class started are
// ever signalled; the destructor SIGKILLs and reaps them. Each member's
// output goes to DIR/mI.log. Thread-compatible.
//
//   if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
//   auto etcd = EtcdTestServer::Start({.dir = dir});
//   EtcdStore::Open({.endpoints = (*etcd)->endpoints()});
class EtcdTestServer {
 public:
  struct Options {
    std::string dir = "";  // Created if missing; each member in DIR/mI.
    int members = 1;       // 1 to 7.
    absl::Duration startup_timeout = absl::Seconds(30);
    std::vector<std::string> extra_args = {};  // Passed to every member.
  };

  // The etcd binary: $JOBSET_ETCD, else /usr/bin/etcd.
  static std::string Binary();
  // Whether Binary() exists and is executable.
  static bool Available();
  // Why tests skip when it is not available.
  static std::string Why();

  static absl::StatusOr<std::unique_ptr<EtcdTestServer>> Start(
      const Options& options);

  EtcdTestServer(const EtcdTestServer&) = delete;
  EtcdTestServer& operator=(const EtcdTestServer&) = delete;
  ~EtcdTestServer();

  // "http://127.0.0.1:PORT" of every member, in member order.
  std::vector<std::string> endpoints() const;
  int members() const { return static_cast<int>(members_.size()); }

  // SIGKILLs member `i` and reaps it.
  absl::Status Kill(int i);
  // Starts member `i` again on its data dir and ports, and waits until it
  // answers (with `timeout`).
  absl::Status Restart(int i, absl::Duration timeout = absl::Seconds(30));
  // Waits until member `i` answers a linearizable read.
  absl::Status WaitHealthy(int i, absl::Duration timeout);
  // The last `max_bytes` of member `i`'s log, for failure messages.
  std::string LogTail(int i, size_t max_bytes = 2048) const;

 private:
  struct Member {
    std::string name;
    std::string data_dir;
    std::string log;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };

  explicit EtcdTestServer(Options options) : options_(std::move(options)) {}
  absl::Status Spawn(int i);

  const Options options_;
  std::string initial_cluster_;
  std::string token_;
  std::vector<Member> members_;
};

}  // namespace jobset::store::testing

#endif  // JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_
