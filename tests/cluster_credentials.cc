#include "tests/cluster_credentials.h"

#include <atomic>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace jobset::testing {
namespace {

absl::StatusOr<std::string> Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<ClusterCredentials> ReadClusterCredentials(
    const std::string& data_dir) {
  ClusterCredentials out;
  absl::StatusOr<std::string> ca = Read(data_dir + "/pki/ca.crt");
  if (!ca.ok()) return ca.status();
  out.ca_pem = *ca;
  absl::StatusOr<std::string> key = Read(data_dir + "/pki/ca.key");
  if (!key.ok()) return key.status();
  out.ca_key_pem = *key;
  absl::StatusOr<std::string> admin = Read(data_dir + "/admin.conf");
  if (!admin.ok()) return admin.status();
  for (absl::string_view line : absl::StrSplit(*admin, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "token:")) {
      out.admin_token = std::string(absl::StripAsciiWhitespace(line));
    }
  }
  if (out.admin_token.empty()) {
    return absl::NotFoundError("admin.conf has no token");
  }
  absl::StatusOr<std::string> join = Read(data_dir + "/join-token");
  if (!join.ok()) return join.status();
  out.join_token = std::string(absl::StripAsciiWhitespace(*join));
  return out;
}

std::shared_ptr<grpc::Channel> SecureChannel(const std::string& address,
                                             const std::string& ca_pem,
                                             const std::string& token,
                                             const std::string& cert_pem,
                                             const std::string& key_pem) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ca_pem;
  ssl.pem_cert_chain = cert_pem;
  ssl.pem_private_key = key_pem;
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::SslCredentials(ssl);
  if (!token.empty()) {
    credentials = grpc::CompositeChannelCredentials(
        credentials, grpc::AccessTokenCredentials(token));
  }
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("server.jobsetd");
  // A fresh connection per channel: tests compare credentials.
  static std::atomic<int> next = 0;
  args.SetInt("jobsetd.test.unique", next++);
  return grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace jobset::testing
