// jobsetctl's Main over TLS: the CA, server name, token and client
// certificate from the config file.
#include "cli/commands.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

// jobsetctl over TLS: the CA and server name from the config, the token as
// call credentials. The certificates are made with the openssl command.
TEST(TlsTest, ConnectsWithTheConfigsCaNameAndToken) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/tls");
  if (!WriteTestCertificates(dir)) GTEST_SKIP() << "needs the openssl command";
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Slurp(dir + "/server.key"), Slurp(dir + "/server.pem")});
  // Client certificates are asked for and verified when sent.
  options.pem_root_certs = Slurp(dir + "/ca.pem");
  options.client_certificate_request =
      GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  FakeAccess access;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(options),
                           &port);
  builder.RegisterService(&access);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string config = absl::StrCat(
      "clusters:\n"
      "- name: tls\n  cluster:\n    server: https://127.0.0.1:",
      port, "\n    certificate-authority: ca.pem\n",
      "    tls-server-name: server.jobsetd\n"
      "- name: wrong\n  cluster:\n    server: https://127.0.0.1:",
      port, "\n    certificate-authority: other.pem\n",
      "    tls-server-name: server.jobsetd\n"
      "users:\n- {name: u, user: {token: tls.token}}\n"
      "- {name: alice, user: {client-certificate: alice.pem, client-key: "
      "alice.key}}\n"
      "contexts:\n- {name: c, context: {cluster: tls, user: u}}\n"
      "- {name: m, context: {cluster: tls, user: alice}}\n"
      "- {name: w, context: {cluster: wrong, user: u}}\n"
      "current-context: c\n");
  const std::string path = dir + "/config";
  std::ofstream(path, std::ios::trunc) << config;
  std::ostringstream out, err;
  Environment env;
  env.config = path.c_str();
  EXPECT_EQ(Main({"auth", "can-i", "get", "jobsets"}, env,
                 {.out = &out, .err = &err}),
            kExitOk)
      << err.str();
  EXPECT_EQ(out.str(), "yes\n");
  EXPECT_EQ(access.authorization(), "Bearer tls.token");
  EXPECT_EQ(access.peer_cn(), "");
  // A client certificate instead of a token.
  EXPECT_EQ(
      Main({"--context=m", "auth", "whoami"}, env, {.out = &out, .err = &err}),
      kExitOk)
      << err.str();
  EXPECT_EQ(access.peer_cn(), "alice");
  EXPECT_EQ(access.authorization(), "");
  err.str("");
  EXPECT_EQ(Main({"--context=w", "--request-timeout=5s", "auth", "whoami"}, env,
                 {.out = &out, .err = &err}),
            kExitUnreachable);
  EXPECT_THAT(err.str(), HasSubstr("TLS handshake failed?"));
  server->Shutdown();
}

}  // namespace
}  // namespace jobset::cli
