#ifndef JOBSET_TESTS_CLUSTER_CREDENTIALS_H_
#define JOBSET_TESTS_CLUSTER_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"

namespace jobset::testing {

// What a secure jobsetd wrote to its data directory on first start
// (scheduler/auth/cluster_files.h): the CA, the administrator's token from
// admin.conf, the join token.
struct ClusterCredentials {
  std::string ca_pem;
  std::string ca_key_pem;  // the CA's key, for tests that forge certificates
  std::string admin_token;
  std::string join_token;
};

absl::StatusOr<ClusterCredentials> ReadClusterCredentials(
    const std::string& data_dir);

// A channel to `address` over TLS verified against `ca_pem` under the name
// server.jobsetd, sending `token` (if not empty) as a bearer token and
// presenting `cert_pem`/`key_pem` (if not empty) as a client certificate.
std::shared_ptr<grpc::Channel> SecureChannel(const std::string& address,
                                             const std::string& ca_pem,
                                             const std::string& token,
                                             const std::string& cert_pem = "",
                                             const std::string& key_pem = "");

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_CLUSTER_CREDENTIALS_H_
