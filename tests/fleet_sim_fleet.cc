// The fleet's joins, streams' start and shutdown, and its sums over the
// agents (tests/fleet_sim_agent.h).
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/host_table.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "proto/auth.grpc.pb.h"
#include "tests/fleet_sim_agent.h"

namespace jobset::testing::fleet {

Fleet::Fleet(Options options) : options_(std::move(options)) {
  HoldCallbackQueue();
  agents_.reserve(options_.agents);
  for (int i = 0; i < options_.agents; ++i)
    agents_.push_back(std::make_unique<SimAgent>(this, i));
  timers_.Start();
  connects_.Start();
}

Fleet::~Fleet() { Shutdown(); }

void Fleet::Shutdown() {
  // Every stream cancelled first, then each waited for.
  for (auto& agent : agents_) agent->BeginShutdown();
  for (auto& agent : agents_) agent->Shutdown();
  connects_.Stop();
  timers_.Stop();
}

void Fleet::HoldCallbackQueue() {
  keeper_ = grpc::CreateChannel("unix:/nonexistent/fleet-sim-keeper",
                                grpc::InsecureChannelCredentials());
  auto* ctx = new grpc::ClientContext;
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(1)));
  auto* request = new api::JoinNodeRequest;
  auto* response = new api::NodeCertificate;
  api::IdentityService::NewStub(keeper_)->async()->JoinNode(
      ctx, request, response, [ctx, request, response](grpc::Status) {
        delete ctx;
        delete request;
        delete response;
      });
}

absl::Status Fleet::Join(
    int i, const auth::JoinToken& token,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  // As jobset-agent --join_token: a P-256 key of its own, a CSR for
  // system:node:<name>, JoinNode with the token's credential.
  absl::StatusOr<std::string> key = auth::GeneratePrivateKey();
  if (!key.ok()) return key.status();
  SimAgent& a = *agents_[i];
  absl::StatusOr<std::string> csr = auth::CreateCsr(
      *key, absl::StrCat("system:node:", a.name()), "system:nodes");
  if (!csr.ok()) return csr.status();
  api::JoinNodeRequest join;
  join.set_token(auth::FormatToken(token.credential));
  join.set_node_name(a.name());
  join.set_csr_pem(*csr);
  join.set_node_secret(absl::StrCat("fleet-sim-node-secret-", i));
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("server.jobsetd");
  // Joins share a few connections (their cost is the join, not TLS).
  args.SetInt("fleet_sim.join_channel", i % 8);
  auto stub = api::IdentityService::NewStub(
      grpc::CreateCustomChannel(options_.address, credentials, args));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  api::NodeCertificate cert;
  grpc::Status s = stub->JoinNode(&ctx, join, &cert);
  if (!s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "JoinNode: code ", s.error_code(), ": ", s.error_message()));
  }
  a.SetIdentity(*key, cert.cert_pem(), options_.ca_pem);
  return absl::OkStatus();
}

int Fleet::JoinAndStart(absl::Time deadline) {
  // This fleet's jobsetd's (a process may run fleets against several, one
  // after another).
  const absl::StatusOr<auth::JoinToken> token =
      auth::ParseJoinToken(options_.join_token);
  if (!token.ok()) {
    recorder_.JoinFailed(std::string(token.status().message()));
    return 0;
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = options_.ca_pem;
  const std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::SslCredentials(ssl);
  std::atomic<int> next = 0, joined = 0;
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min(options_.join_concurrency, size()));
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < size() && absl::Now() < deadline; i = next++) {
        absl::Status s = Join(i, *token, credentials);
        if (!s.ok()) {
          recorder_.JoinFailed(std::string(s.message()));
          continue;
        }
        ++joined;
        agents_[i]->Start();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return joined.load();
}

bool Fleet::AwaitWelcomed(int count, absl::Time deadline) {
  while (welcomed_.load() < count && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(20));
  return welcomed_.load() >= count;
}

int64_t Fleet::pods() {
  int64_t total = 0;
  for (auto& agent : agents_) total += agent->pod_count();
  return total;
}

int Fleet::HostEntries(const api::PodAssignment& a) {
  if (a.hosts_table().empty()) return a.hosts_size();
  absl::MutexLock lock(&tables_mu_);
  if (auto it = tables_.find(a.hosts_table()); it != tables_.end())
    return it->second;
  absl::StatusOr<api::HostTable> table =
      api::DecodeHostTable("hosts_table", a.hosts_table());
  if (tables_.size() >= 8) tables_.clear();  // earlier attempts'
  const int entries = table.ok() ? table->hosts_size() : -1;
  tables_.emplace(a.hosts_table(), entries);
  return entries;
}

ReportMixer::Counts Fleet::mixed() {
  ReportMixer::Counts total;
  for (auto& agent : agents_) {
    const ReportMixer::Counts c = agent->mixed();
    total.reports += c.reports;
    total.copies += c.copies;
    total.displaced += c.displaced;
  }
  return total;
}

}  // namespace jobset::testing::fleet
