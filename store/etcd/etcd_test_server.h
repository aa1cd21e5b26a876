#ifndef JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_
#define JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/pki.h"

namespace jobset::store::testing {

// A private etcd cluster for tests: `members` etcd processes on free
// 127.0.0.1 ports, data under `dir`, plaintext or (with `tls`) mutual TLS
// for clients and peers from a test CA of its own. Start() returns once every
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
    // Clients and peers speak TLS and must show a certificate from the
    // cluster's CA (etcd --client-cert-auth, --peer-client-cert-auth). The
    // CA, the members' certificate (SANs IP:127.0.0.1 and DNS:localhost) and
    // a client certificate (CN jobsetd) are written under `dir`.
    bool tls = false;
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

  // "http://127.0.0.1:PORT" (https:// with tls) of every member, in order.
  std::vector<std::string> endpoints() const;
  int members() const { return static_cast<int>(members_.size()); }
  // With tls: the PEM files of the CA and of a client certificate it signed.
  const std::string& ca_file() const { return ca_file_; }
  const std::string& client_cert_file() const { return client_cert_file_; }
  const std::string& client_key_file() const { return client_key_file_; }

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
  // Makes the CA and the certificates `tls` needs, as files under dir.
  absl::Status MakeCertificates();
  std::string Scheme() const { return options_.tls ? "https" : "http"; }

  const Options options_;
  std::string initial_cluster_;
  std::string token_;
  std::vector<Member> members_;
  std::string ca_file_, client_cert_file_, client_key_file_;
  std::string member_cert_file_, member_key_file_;
  struct {
    auth::KeyAndCert ca;
    auth::KeyAndCert client;
  } tls_;
};

}  // namespace jobset::store::testing

#endif  // JOBSET_STORE_ETCD_ETCD_TEST_SERVER_H_
