#ifndef JOBSET_AGENT_FAKE_JOBSETD_H_
#define JOBSET_AGENT_FAKE_JOBSETD_H_

// A jobsetd stand-in for the agent's identity tests: IdentityService (join,
// renew) and AgentService (a stream that welcomes, or refuses a revoked
// certificate as jobsetd does) over TLS with client certificates.

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/identity.h"
#include "auth/pki.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/auth.grpc.pb.h"

namespace jobset::agent::testing {

using ::jobset::testing::IsOk;

inline constexpr char kTokenId[] = "abcdef";
inline constexpr char kTokenSecret[] = "0123456789abcdef";

inline std::string PeerValue(const grpc::ServerContext* context,
                             const std::string& property) {
  std::vector<grpc::string_ref> values =
      context->auth_context()->FindPropertyValues(property);
  if (values.empty()) return "";
  return std::string(values.front().data(), values.front().size());
}

// What the fake jobsetd saw and how it behaves. Thread-safe.
struct FakeState {
  absl::Mutex mu;
  auth::KeyAndCert ca;                           // signs node certificates
  std::string offered_ca_pem;                    // what GetClusterInfo answers
  absl::Time issue_time = absl::InfinitePast();  // InfinitePast: real now
  bool renew_unavailable = false;
  std::map<std::string, std::string> node_secrets;  // name -> secret
  int cluster_info_calls = 0;
  int join_calls = 0;
  int renew_calls = 0;
  int connect_calls = 0;
  // Certificates (PEM) the agent stream refuses as jobsetd refuses a
  // revoked one.
  std::set<std::string> revoked;
  std::string last_peer_pem;  // any call's client certificate
  std::string connect_cn;     // AgentService.Connect's client CN
  std::string hello_name;
  std::string renew_cn;
};

inline absl::StatusOr<std::string> Issue(FakeState* state,
                                         const std::string& name,
                                         const std::string& csr) {
  auth::LeafRequest request;
  request.common_name = Identity::CommonName(name);
  request.organizations = {"system:nodes"};
  request.uris = {absl::StrCat("jobsetd://node/", name)};
  request.client_auth = true;
  const absl::Time now = state->issue_time == absl::InfinitePast()
                             ? RealClock::Get()->Now()
                             : state->issue_time;
  return auth::IssueCertificate(state->ca, csr, request, now);
}

class FakeIdentityService final : public api::IdentityService::Service {
 public:
  explicit FakeIdentityService(FakeState* state) : state_(state) {}

  grpc::Status GetClusterInfo(grpc::ServerContext* context,
                              const api::ClusterInfoRequest*,
                              api::ClusterInfo* reply) override {
    absl::MutexLock lock(&state_->mu);
    ++state_->cluster_info_calls;
    state_->last_peer_pem = PeerValue(context, "x509_pem_cert");
    reply->set_ca_pem(state_->offered_ca_pem);
    return grpc::Status::OK;
  }

  grpc::Status JoinNode(grpc::ServerContext*,
                        const api::JoinNodeRequest* request,
                        api::NodeCertificate* reply) override {
    absl::MutexLock lock(&state_->mu);
    ++state_->join_calls;
    if (request->token() != absl::StrCat(kTokenId, ".", kTokenSecret)) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "join token is invalid or expired");
    }
    auto [it, added] = state_->node_secrets.emplace(request->node_name(),
                                                    request->node_secret());
    if (!added && it->second != request->node_secret()) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          absl::StrCat("node name \"", request->node_name(),
                                       "\" is already registered"));
    }
    absl::StatusOr<std::string> cert =
        Issue(state_, request->node_name(), request->csr_pem());
    if (!cert.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(cert.status().message()));
    }
    reply->set_cert_pem(*cert);
    reply->set_ca_pem(state_->ca.cert_pem);
    return grpc::Status::OK;
  }

  grpc::Status RenewNodeCertificate(
      grpc::ServerContext* context,
      const api::RenewNodeCertificateRequest* request,
      api::NodeCertificate* reply) override {
    absl::MutexLock lock(&state_->mu);
    ++state_->renew_calls;
    state_->renew_cn = PeerValue(context, "x509_common_name");
    if (state_->renew_unavailable) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "try later");
    }
    const std::string prefix = "system:node:";
    if (state_->renew_cn.rfind(prefix, 0) != 0) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no node cert");
    }
    absl::StatusOr<std::string> cert = Issue(
        state_, state_->renew_cn.substr(prefix.size()), request->csr_pem());
    if (!cert.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(cert.status().message()));
    }
    reply->set_cert_pem(*cert);
    reply->set_ca_pem(state_->ca.cert_pem);
    return grpc::Status::OK;
  }

 private:
  FakeState* const state_;
};

class FakeAgentService final : public api::AgentService::Service {
 public:
  explicit FakeAgentService(FakeState* state) : state_(state) {}

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
          stream) override {
    {
      absl::MutexLock lock(&state_->mu);
      ++state_->connect_calls;
      if (state_->revoked.contains(PeerValue(context, "x509_pem_cert"))) {
        // What scheduler/auth/request_auth.cc answers.
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                            "certificate has been revoked");
      }
    }
    api::AgentMessage hello;
    if (!stream->Read(&hello)) return grpc::Status::OK;
    {
      absl::MutexLock lock(&state_->mu);
      state_->connect_cn = PeerValue(context, "x509_common_name");
      state_->last_peer_pem = PeerValue(context, "x509_pem_cert");
      state_->hello_name = hello.hello().node().name();
    }
    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
    stream->Write(welcome);
    api::AgentMessage msg;
    while (stream->Read(&msg)) {
    }
    return grpc::Status::OK;
  }

 private:
  FakeState* const state_;
};

// A jobsetd stand-in: a server certificate for server.jobsetd from its own
// CA (`server_ca`), client certificates requested and verified against
// state.ca.
class FakeJobsetd {
 public:
  FakeJobsetd(const auth::KeyAndCert& server_ca, const auth::KeyAndCert& ca)
      : identity_(&state_), agents_(&state_) {
    state_.ca = ca;
    state_.offered_ca_pem = server_ca.cert_pem;
    auth::LeafRequest leaf;
    leaf.common_name = "jobsetd";
    leaf.dns_names = {"server.jobsetd", "localhost"};
    leaf.ip_addresses = {"127.0.0.1"};
    leaf.server_auth = true;
    leaf.validity = auth::kServerCertValidity;
    absl::StatusOr<auth::KeyAndCert> server =
        auth::IssueKeyAndCertificate(server_ca, leaf, RealClock::Get()->Now());
    EXPECT_THAT(server.status(), IsOk());
    grpc::SslServerCredentialsOptions ssl(
        GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = ca.cert_pem;
    if (server.ok()) {
      ssl.pem_key_cert_pairs.push_back({server->key_pem, server->cert_pem});
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl),
                             &port_);
    builder.RegisterService(&identity_);
    builder.RegisterService(&agents_);
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
    EXPECT_GT(port_, 0);
  }
  ~FakeJobsetd() {
    if (server_ != nullptr) {
      server_->Shutdown(absl::ToChronoTime(RealDeadline(absl::Seconds(1))));
    }
  }

  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  FakeState& state() { return state_; }

 private:
  FakeState state_;
  FakeIdentityService identity_;
  FakeAgentService agents_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace jobset::agent::testing

#endif  // JOBSET_AGENT_FAKE_JOBSETD_H_
