// The fixture of the security end-to-end tests: a real jobsetd process
// (TLS, an audit log) and clients that act as users and nodes over
// 127.0.0.1. Shared by security_e2e_test.cc and security_e2e_test_nodes.cc.
#ifndef JOBSET_TESTS_SECURITY_E2E_TEST_FIXTURE_H_
#define JOBSET_TESTS_SECURITY_E2E_TEST_FIXTURE_H_

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/cluster_credentials.h"
#include "tests/jobsetd_process.h"

namespace jobset::testing {

inline std::string TempDir(absl::string_view name) {
  const char* root = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(root != nullptr ? root : "/tmp", "/", name,
                                 "-", getpid(), "-", rand());
  std::string command = absl::StrCat("mkdir -p ", dir);
  EXPECT_EQ(std::system(command.c_str()), 0);
  return dir;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(10));
  return context;
}

inline api::JobSet Training(absl::string_view ns, absl::string_view name) {
  return api::testing::JobSetBuilder(name)
      .Namespace(ns)
      .Replicated("workers", 1)
      .Build();
}

// A node identity made the way jobset-agent makes one: its own key, a
// CSR, JoinNode with the join token's credential.
struct Node {
  std::string key_pem;
  std::string cert_pem;
  std::string secret;
};

class SecurityE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("security");
    audit_ = dir_ + "/audit.log";
    Start({});
  }

  // Starts jobsetd on dir_ with `extra` flags (after stopping the one
  // running, if any) and reads the credentials it wrote.
  void Start(const std::vector<std::string>& extra) {
    if (jobsetd_ != nullptr) {
      (void)jobsetd_->Kill(SIGTERM);
      (void)jobsetd_->Wait();
      jobsetd_.reset();
    }
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     "--data_dir=" + dir_ + "/data",
                                     "--audit_log=" + audit_, "--fsync=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto jobsetd =
        JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                               .args = args,
                               .stderr_path = dir_ + "/jobsetd.stderr"});
    ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
    jobsetd_ = *std::move(jobsetd);
    auto credentials = ReadClusterCredentials(dir_ + "/data");
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    credentials_ = *std::move(credentials);
  }

  void TearDown() override {
    if (jobsetd_ != nullptr) {
      (void)jobsetd_->Kill(SIGTERM);
      (void)jobsetd_->Wait();
    }
  }

  std::shared_ptr<grpc::Channel> As(const std::string& token) {
    return SecureChannel(jobsetd_->address(), credentials_.ca_pem, token);
  }
  std::shared_ptr<grpc::Channel> Admin() {
    return As(credentials_.admin_token);
  }

  grpc::Status CreateJobSet(const std::shared_ptr<grpc::Channel>& channel,
                            absl::string_view ns, absl::string_view name) {
    api::CreateJobSetRequest request;
    *request.mutable_jobset() = Training(ns, name);
    api::CreateJobSetResponse response;
    return api::JobSetService::NewStub(channel)->CreateJobSet(
        Context().get(), request, &response);
  }

  int CountJobSets(absl::string_view ns) {
    api::ListJobSetsRequest request;
    request.set_namespace_(std::string(ns));
    api::ListJobSetsResponse response;
    grpc::Status status = api::JobSetService::NewStub(Admin())->ListJobSets(
        Context().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.items_size();
  }

  // A user token made by the administrator.
  std::string Token(const std::string& name,
                    std::vector<std::string> groups = {}) {
    api::CreateTokenRequest request;
    request.set_name(name);
    for (const std::string& g : groups) request.add_groups(g);
    api::CreateTokenResponse response;
    grpc::Status status = api::AccessService::NewStub(Admin())->CreateToken(
        Context().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.token();
  }

  grpc::Status Bind(const std::shared_ptr<grpc::Channel>& channel,
                    absl::string_view ns, absl::string_view name,
                    absl::string_view role, absl::string_view user) {
    api::RbacObject object;
    api::RoleBinding* binding = object.mutable_binding();
    binding->set_api_version("rbac.authorization.k8s.io/v1");
    binding->set_kind(ns.empty() ? "ClusterRoleBinding" : "RoleBinding");
    binding->mutable_metadata()->set_name(std::string(name));
    binding->mutable_metadata()->set_namespace_(std::string(ns));
    api::Subject* subject = binding->add_subjects();
    subject->set_kind("User");
    subject->set_api_group("rbac.authorization.k8s.io");
    subject->set_name(std::string(user));
    binding->mutable_role_ref()->set_api_group("rbac.authorization.k8s.io");
    binding->mutable_role_ref()->set_kind("ClusterRole");
    binding->mutable_role_ref()->set_name(std::string(role));
    api::RbacObject response;
    return api::AccessService::NewStub(channel)->ApplyRbac(Context().get(),
                                                           object, &response);
  }

  absl::StatusOr<Node> Join(const std::string& name,
                            const std::string& credential,
                            const std::string& secret = "") {
    Node node;
    node.secret =
        secret.empty() ? auth::RandomString(32, "abcdef0123456789") : secret;
    absl::StatusOr<std::string> key = auth::GeneratePrivateKey();
    if (!key.ok()) return key.status();
    node.key_pem = *key;
    absl::StatusOr<std::string> csr = auth::CreateCsr(
        node.key_pem, absl::StrCat("system:node:", name), "system:nodes");
    if (!csr.ok()) return csr.status();
    api::JoinNodeRequest request;
    request.set_token(credential);
    request.set_node_name(name);
    request.set_csr_pem(*csr);
    request.set_node_secret(node.secret);
    api::NodeCertificate response;
    grpc::Status status = api::IdentityService::NewStub(As(""))->JoinNode(
        Context().get(), request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    node.cert_pem = response.cert_pem();
    return node;
  }

  std::string JoinCredential() {
    absl::StatusOr<auth::JoinToken> token =
        auth::ParseJoinToken(credentials_.join_token);
    EXPECT_TRUE(token.ok()) << token.status();
    return token.ok() ? auth::FormatToken(token->credential) : "";
  }

  std::shared_ptr<grpc::Channel> AsNode(const Node& node) {
    return SecureChannel(jobsetd_->address(), credentials_.ca_pem, "",
                         node.cert_pem, node.key_pem);
  }

  // Opens an agent stream with a Hello naming `name`; returns how it ended
  // (or OK while it is still open after the hello was accepted).
  grpc::Status Hello(const std::shared_ptr<grpc::Channel>& channel,
                     const std::string& name) {
    auto stub = api::AgentService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    auto stream = stub->Connect(&context);
    api::AgentMessage hello;
    api::NodeRegistration* node = hello.mutable_hello()->mutable_node();
    node->set_name(name);
    node->set_address("127.0.0.1");
    stream->Write(hello);
    api::SchedulerMessage welcome;
    if (stream->Read(&welcome)) {
      context.TryCancel();
      return grpc::Status::OK;
    }
    return stream->Finish();
  }

  std::string dir_;
  std::string audit_;
  std::unique_ptr<JobsetdProcess> jobsetd_;
  ClusterCredentials credentials_;
};

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_SECURITY_E2E_TEST_FIXTURE_H_
