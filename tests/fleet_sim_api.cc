#include "tests/fleet_sim_api.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/jobset_builder.h"
#include "proto/agent.grpc.pb.h"
#include "tests/fleet_sim_support.h"

namespace jobset::testing::fleet {
namespace {

constexpr char kExclusiveTopology[] =
    "alpha.jobset.sigs.k8s.io/exclusive-topology";
constexpr absl::Duration kCallDeadline = absl::Seconds(60);
constexpr int kMaxErrorsKept = 5;

// Runs `call(i, stub)` for i in [0, n) on `concurrency` threads, each with
// a connection of its own, until `deadline`.
template <typename Call>
BatchResult RunBatch(const AdminClient& client, int n, int concurrency,
                     absl::Time deadline, const Call& call) {
  BatchResult result;
  const absl::Time start = absl::Now();
  std::atomic<int> next = 0, ok = 0, failed = 0;
  absl::Mutex mu;
  std::vector<std::thread> threads;
  concurrency = std::max(1, std::min(concurrency, n));
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&] {
      auto stub = api::JobSetService::NewStub(client.NewChannel());
      for (int i = next++; i < n; i = next++) {
        if (absl::Now() >= deadline) {
          ++failed;
          continue;
        }
        grpc::Status s = call(i, *stub);
        if (s.ok()) {
          ++ok;
          continue;
        }
        ++failed;
        absl::MutexLock lock(&mu);
        if (result.errors.size() < kMaxErrorsKept) {
          result.errors.push_back(
              absl::StrCat("code ", s.error_code(), ": ", s.error_message()));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  result.ok = ok.load();
  result.failed = failed.load();
  result.took = absl::Now() - start;
  return result;
}

void SetDeadline(grpc::ClientContext* ctx, absl::Time deadline) {
  ctx->set_deadline(
      absl::ToChronoTime(std::min(deadline, absl::Now() + kCallDeadline)));
}

}  // namespace

api::JobSet BuildJobSet(const JobSetShape& shape) {
  api::testing::JobSetBuilder b(shape.name);
  b.Namespace(shape.ns)
      .Label(kRunLabel, shape.run)
      .Replicated("w", shape.jobs, shape.pods_per_job, shape.pods_per_job)
      .RestartPolicy("w", "Never")
      .BackoffLimit("w", 0)
      .Request("w", "cpu", shape.cpu);
  if (shape.gpus > 0)
    b.Request("w", "nvidia.com/gpu", absl::StrCat(shape.gpus));
  if (shape.max_restarts > 0) b.FailurePolicy(shape.max_restarts);
  if (shape.exclusive) b.Annotation(kExclusiveTopology, kSliceLabel);
  api::JobSet js = b.Build();
  api::Container* c = js.mutable_spec()
                          ->mutable_replicated_jobs(0)
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_containers(0);
  if (shape.gpus > 0) {
    // An extended resource's limit must equal its request.
    (*c->mutable_resources()->mutable_limits())["nvidia.com/gpu"] =
        absl::StrCat(shape.gpus);
  }
  if (shape.run_seconds.has_value()) {
    api::EnvVar* e = c->add_env();
    e->set_name(kRunSecondsEnv);
    e->set_value(absl::StrCat(*shape.run_seconds));
  }
  if (shape.exit_code != 0) {
    api::EnvVar* e = c->add_env();
    e->set_name(kExitCodeEnv);
    e->set_value(absl::StrCat(shape.exit_code));
  }
  return js;
}

AdminClient::AdminClient(std::string address, std::string ca_pem,
                         std::string token)
    : address_(std::move(address)),
      ca_pem_(std::move(ca_pem)),
      token_(std::move(token)),
      channel_(NewChannel()) {}

std::shared_ptr<grpc::Channel> AdminClient::NewChannel() const {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ca_pem_;
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::CompositeChannelCredentials(grpc::SslCredentials(ssl),
                                        grpc::AccessTokenCredentials(token_));
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("server.jobsetd");
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // 10,000 nodes listed at once are more than gRPC's default 4 MiB.
  args.SetMaxReceiveMessageSize(256 << 20);
  return grpc::CreateCustomChannel(address_, credentials, args);
}

BatchResult AdminClient::CreateAll(const std::vector<api::JobSet>& jobsets,
                                   int concurrency, absl::Time deadline) {
  return RunBatch(*this, static_cast<int>(jobsets.size()), concurrency,
                  deadline, [&](int i, api::JobSetService::Stub& stub) {
                    grpc::ClientContext ctx;
                    SetDeadline(&ctx, deadline);
                    api::CreateJobSetRequest request;
                    *request.mutable_jobset() = jobsets[i];
                    api::CreateJobSetResponse response;
                    return stub.CreateJobSet(&ctx, request, &response);
                  });
}

BatchResult AdminClient::DeleteAll(
    const std::vector<std::pair<std::string, std::string>>& keys,
    int concurrency, absl::Time deadline) {
  return RunBatch(
      *this, static_cast<int>(keys.size()), concurrency, deadline,
      [&](int i, api::JobSetService::Stub& stub) {
        grpc::ClientContext ctx;
        SetDeadline(&ctx, deadline);
        api::DeleteJobSetRequest request;
        request.set_namespace_(keys[i].first);
        request.set_name(keys[i].second);
        api::JobSet response;
        grpc::Status s = stub.DeleteJobSet(&ctx, request, &response);
        return s.error_code() == grpc::StatusCode::NOT_FOUND ? grpc::Status::OK
                                                             : s;
      });
}

absl::StatusOr<std::vector<api::JobSet>> AdminClient::List(
    const std::string& run) {
  auto stub = api::JobSetService::NewStub(channel_);
  std::vector<api::JobSet> out;
  std::string next;
  for (int page = 0; page < 1000; ++page) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, absl::Now() + kCallDeadline);
    api::ListJobSetsRequest request;
    request.set_all_namespaces(true);
    request.set_label_selector(absl::StrCat(kRunLabel, "=", run));
    request.set_limit(500);
    request.set_continue_(next);
    api::ListJobSetsResponse response;
    grpc::Status s = stub->ListJobSets(&ctx, request, &response);
    if (!s.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "ListJobSets: code ", s.error_code(), ": ", s.error_message()));
    }
    for (api::JobSet& js : *response.mutable_items())
      out.push_back(std::move(js));
    if (response.continue_().empty()) return out;
    next = response.continue_();
  }
  return absl::ResourceExhaustedError("ListJobSets: over 1,000 pages");
}

absl::StatusOr<AdminClient::NodeCount> AdminClient::CountNodes() {
  auto stub = api::NodeService::NewStub(channel_);
  grpc::ClientContext ctx;
  SetDeadline(&ctx, absl::Now() + kCallDeadline);
  api::ListNodesResponse response;
  grpc::Status s = stub->ListNodes(&ctx, api::ListNodesRequest(), &response);
  if (!s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "ListNodes: code ", s.error_code(), ": ", s.error_message()));
  }
  NodeCount count;
  for (const api::Node& node : response.items()) {
    ++count.nodes;
    for (const api::NodeCondition& c : node.status().conditions()) {
      if (c.type() == "Ready" && c.status() == "True") ++count.ready;
    }
  }
  return count;
}

absl::StatusOr<double> ScrapeMetric(int port, const std::string& name) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, request.data(), request.size()) ==
        static_cast<ssize_t>(request.size())) {
      char buf[65536];
      // Bounded: 64 MiB of metrics at most.
      for (ssize_t n; response.size() < (64u << 20) &&
                      (n = read(fd, buf, sizeof(buf))) > 0;) {
        response.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  for (absl::string_view line : absl::StrSplit(response, '\n')) {
    if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, " "))
      continue;
    double value = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line), &value))
      return value;
  }
  return absl::NotFoundError(absl::StrCat(
      "metric ", name, " not found at 127.0.0.1:", port, "/metrics"));
}

TerminalWatch::TerminalWatch(const AdminClient& client, std::string run)
    : channel_(client.NewChannel()), run_(std::move(run)) {}

TerminalWatch::~TerminalWatch() { Stop(); }

void TerminalWatch::Start() {
  thread_ = std::thread([this] { Loop(); });
  absl::MutexLock lock(&mu_);
  auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
  mu_.AwaitWithTimeout(absl::Condition(&open), absl::Seconds(10));
}

void TerminalWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

void TerminalWatch::Loop() {
  auto stub = api::JobSetService::NewStub(channel_);
  // Bounded: a watch that keeps failing is given up after 100 tries.
  for (int attempt = 0; attempt < 100; ++attempt) {
    grpc::ClientContext ctx;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      context_ = &ctx;
    }
    api::WatchJobSetsRequest request;
    request.set_all_namespaces(true);
    request.set_label_selector(absl::StrCat(kRunLabel, "=", run_));
    auto reader = stub->WatchJobSets(&ctx, request);
    {
      absl::MutexLock lock(&mu_);
      open_ = true;
    }
    api::WatchEvent event;
    while (reader->Read(&event)) {
      const api::JobSet& js = event.object();
      const std::string& state = js.status().terminal_state();
      if (event.type() == "DELETED" || state.empty()) continue;
      const std::string key =
          absl::StrCat(js.metadata().namespace_(), "/", js.metadata().name());
      const absl::Time now = absl::Now();
      absl::MutexLock lock(&mu_);
      if (terminal_.emplace(key, state == "Failed").second) {
        last_terminal_ = now;
        if (state == "Failed") ++failed_;
      }
    }
    grpc::Status s = reader->Finish();
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
    if (stopping_) return;
    if (errors_.size() < kMaxErrorsKept) {
      errors_.push_back(absl::StrCat("watch: code ", s.error_code(), ": ",
                                     s.error_message()));
    }
    // Again after a pause that Stop cuts short.
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_;
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping),
                             absl::Milliseconds(200))) {
      return;
    }
  }
}

int TerminalWatch::AwaitTerminal(int count, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(terminal_.size()) >= count;
  };
  mu_.AwaitWithDeadline(absl::Condition(&reached), deadline);
  return static_cast<int>(terminal_.size());
}

absl::Time TerminalWatch::last_terminal() {
  absl::MutexLock lock(&mu_);
  return last_terminal_;
}

int TerminalWatch::failed() {
  absl::MutexLock lock(&mu_);
  return failed_;
}

std::optional<bool> TerminalWatch::Terminal(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = terminal_.find(key);
  if (it == terminal_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> TerminalWatch::errors() {
  absl::MutexLock lock(&mu_);
  return errors_;
}

}  // namespace jobset::testing::fleet
