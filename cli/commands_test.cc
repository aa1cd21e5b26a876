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

// Reads a whole file ("" when it cannot).
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// jobsetctl over TLS: the CA and server name from the config, the token as
// call credentials. The certificates are made with the openssl command.
TEST(TlsTest, ConnectsWithTheConfigsCaNameAndToken) {
  if (std::system("openssl version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs the openssl command";
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/tls");
  const std::string script = absl::StrCat(
      "set -e; mkdir -p ", dir, "; cd ", dir,
      "; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'"
      "; openssl req -x509 $k -keyout ca.key -out ca.pem -days 1 "
      "-subj /CN=ca 2>/dev/null"
      "; openssl req -x509 $k -keyout other.key -out other.pem -days 1 "
      "-subj /CN=other 2>/dev/null"
      "; openssl req $k -keyout server.key -out server.csr "
      "-subj /CN=server.jobsetd 2>/dev/null"
      "; echo subjectAltName=DNS:server.jobsetd > ext"
      "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out server.pem -days 1 -extfile ext 2>/dev/null"
      "; openssl req $k -keyout alice.key -out alice.csr -subj /CN=alice "
      "2>/dev/null"
      "; openssl x509 -req -in alice.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out alice.pem -days 1 2>/dev/null");
  ASSERT_EQ(std::system(script.c_str()), 0);
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
