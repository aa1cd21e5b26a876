// create_bench: measures CreateJobSet throughput and latency through the whole
// front door (gRPC -> JobSetApi -> RocksDbStore) with N concurrent clients,
// with fsync on and off, and prints one table row per (fsync, clients) cell.
//
// Each cell opens a fresh RocksDbStore in its own directory, starts an
// in-process Server on 127.0.0.1:0 and runs N client threads, each on its own
// gRPC channel (its own TCP connection), issuing synchronous CreateJobSet
// calls with unique names. With --store_only the clients skip gRPC and the
// API and call the store as JobSetApi::Create does, which shows the store's
// own ceiling. Calls ending during the warm-up are not counted;
// only OK, created responses count as creates. Clients and server share the
// machine's CPUs, as they do when jobsetd and its users run on one host.
//
//   tools/bench --clients=16 --fsync=true --duration=10s
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/log.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "scheduler/auth/access_store.h"
#include "scheduler/auth/cluster_files.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/controller/controller.h"
#include "scheduler/server/server.h"
#include "store/etcd_store.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/store.h"

ABSL_FLAG(std::string, clients, "1,4,16,64",
          "Comma-separated numbers of concurrent clients; one cell each");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(5),
          "How long each cell is measured, after its warm-up");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(1),
          "How long each cell runs before measuring starts");
ABSL_FLAG(std::string, fsync, "true,false",
          "Comma-separated store fsync settings to measure (true, false)");
ABSL_FLAG(std::string, store, "rocksdb",
          "The store measured: rocksdb (a fresh one per cell under "
          "--data_dir) or etcd (--etcd_endpoints; each cell under a key "
          "prefix of its own)");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "--store=etcd: comma-separated http(s)://HOST:PORT of etcd members");
ABSL_FLAG(std::string, etcd_cafile, "",
          "--store=etcd over https: the CA of the members' certificates");
ABSL_FLAG(std::string, etcd_certfile, "",
          "--store=etcd over https: a client certificate, when etcd asks");
ABSL_FLAG(std::string, etcd_keyfile, "", "--store=etcd: its key");
ABSL_FLAG(std::string, data_dir, "",
          "Directory under which each cell's store is created and then "
          "deleted; the default is a fresh directory under $TMPDIR or /tmp. "
          "fsync cost depends on the filesystem it is on");
ABSL_FLAG(bool, store_only, false,
          "Clients call the store directly (a Get and a Create of a "
          "JobSet-sized value per Create, as JobSetApi does) instead of "
          "CreateJobSet over gRPC: the store's ceiling without gRPC, "
          "defaulting and validation");
ABSL_FLAG(bool, controller, false,
          "Also run jobsetd's controller (with no nodes, as jobsetd before "
          "any agent joins): each Create then also makes the controller "
          "write the JobSet's Jobs, pods and status, sharing the CPUs and "
          "the store's writes");
ABSL_FLAG(bool, tls, true,
          "Serve TLS (a cluster CA made for the run) and send a bearer "
          "token, as jobsetd and jobsetctl do; false: plaintext, no "
          "credentials (jobsetd --insecure)");
ABSL_FLAG(std::string, json, "",
          "Also write the results as JSON to this file (\"-\": stdout)");

namespace jobset::scheduler {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A Store that forwards to another and adds up the time callers spend in
// Commit (queueing for the group leader, checking, writing and fsync), so the
// table can tell store time from the rest of a Create. Thread-safe.
class TimedStore final : public store::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    const SteadyClock::time_point start = SteadyClock::now();
    absl::StatusOr<int64_t> revision = ForwardingStore::Commit(batch);
    commit_nanos_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                         SteadyClock::now() - start)
                         .count();
    ++commits_;
    return revision;
  }

  // Returns the Commit calls so far and the nanoseconds spent in them.
  std::pair<int64_t, int64_t> CommitTime() const {
    return {commits_.load(), commit_nanos_.load()};
  }

 private:
  std::atomic<int64_t> commits_ = 0;
  std::atomic<int64_t> commit_nanos_ = 0;
};

// What one cell measured.
struct CellResult {
  bool fsync = false;
  int clients = 0;
  double seconds = 0;  // The measured window.
  int64_t creates = 0;
  double creates_per_second = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  // Store revisions (one per Create) per RocksDB write in the window.
  double commits_per_write = 0;
  double commit_mean_ms = 0;  // Mean time a Create spent in Store::Commit.
  double cpu_cores = 0;       // Process CPU seconds per wall second.
  int64_t errors = 0;
  std::map<std::string, int64_t> error_counts;  // "CODE: message" -> count.
};

// One client thread's record of the measured window.
struct ClientRecord {
  std::vector<double> latencies_ms;  // OK, created calls only.
  std::map<std::string, int64_t> errors;
};

// A JobSet like examples/: four workers running a shell command.
api::JobSet BenchJobSet() {
  api::JobSet jobset;
  jobset.set_api_version("jobset.x-k8s.io/v1alpha2");
  jobset.set_kind("JobSet");
  jobset.mutable_metadata()->set_namespace_("default");
  (*jobset.mutable_metadata()->mutable_labels())["app"] = "create-bench";
  api::ReplicatedJob* workers = jobset.mutable_spec()->add_replicated_jobs();
  workers->set_name("workers");
  workers->set_replicas(4);
  api::JobSpec* job = workers->mutable_template_()->mutable_spec();
  job->set_parallelism(1);
  job->set_completions(1);
  job->set_backoff_limit(0);
  api::Container* container =
      job->mutable_template_()->mutable_spec()->add_containers();
  container->set_name("main");
  container->set_image("busybox");
  container->add_command("sh");
  container->add_command("-c");
  container->add_command("true");
  (*container->mutable_resources()->mutable_requests())["cpu"] = "500m";
  (*container->mutable_resources()->mutable_requests())["memory"] = "256Mi";
  return jobset;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// One Create by client `client`, its `seq`th; returns what went wrong, or
// nothing when the JobSet was created.
using CreateFn =
    std::function<std::optional<std::string>(int client, int64_t seq)>;

// Issues Creates until `stop`; records the calls that end inside
// [measure_start, measure_end].
void RunClient(const CreateFn& create, int client,
               SteadyClock::time_point measure_start,
               SteadyClock::time_point measure_end,
               const std::atomic<bool>* stop, ClientRecord* record) {
  for (int64_t seq = 0; !stop->load(std::memory_order_relaxed); ++seq) {
    const SteadyClock::time_point start = SteadyClock::now();
    std::optional<std::string> error = create(client, seq);
    const SteadyClock::time_point end = SteadyClock::now();
    if (end < measure_start || end > measure_end) continue;
    if (error.has_value()) {
      ++record->errors[*error];
    } else {
      record->latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
}

// Returns one CreateFn per client, each calling CreateJobSet on its own
// channel to `address`.
// With `tls`, each verifies the server against `ca_pem` under
// kServerName and sends `token`.
absl::StatusOr<std::vector<CreateFn>> GrpcClients(const std::string& address,
                                                  int clients, bool tls,
                                                  const std::string& ca_pem,
                                                  const std::string& token) {
  std::vector<CreateFn> fns;
  for (int i = 0; i < clients; ++i) {
    // A distinct channel argument keeps gRPC from sharing one subchannel (one
    // TCP connection) among the clients.
    grpc::ChannelArguments args;
    args.SetInt("bench.channel", i);
    std::shared_ptr<grpc::ChannelCredentials> credentials =
        grpc::InsecureChannelCredentials();
    if (tls) {
      args.SetSslTargetNameOverride(kServerName);
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = ca_pem;
      credentials = grpc::CompositeChannelCredentials(
          grpc::SslCredentials(ssl), grpc::AccessTokenCredentials(token));
    }
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateCustomChannel(address, credentials, args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::seconds(10))) {
      return absl::UnavailableError(
          absl::StrCat("client ", i, " cannot connect to ", address));
    }
    std::shared_ptr<api::JobSetService::Stub> stub =
        api::JobSetService::NewStub(channel);
    auto request = std::make_shared<api::CreateJobSetRequest>();
    *request->mutable_jobset() = BenchJobSet();
    fns.push_back([stub, request](int client,
                                  int64_t seq) -> std::optional<std::string> {
      request->mutable_jobset()->mutable_metadata()->set_name(
          absl::StrCat("bench-", client, "-", seq));
      api::CreateJobSetResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(30));
      grpc::Status status = stub->CreateJobSet(&context, *request, &response);
      if (!status.ok()) {
        return absl::StrCat("gRPC code ", status.error_code(), ": ",
                            status.error_message());
      }
      if (!response.created()) return "OK but created=false (name reused?)";
      return std::nullopt;
    });
  }
  return fns;
}

// Returns one CreateFn per client, each doing what JobSetApi::Create does to
// the store (a Get, then a Create of a stored-JobSet-sized value) directly.
std::vector<CreateFn> StoreClients(store::Store* store, int clients) {
  api::JobSet jobset = BenchJobSet();
  jobset.mutable_metadata()->set_name("bench-0-0");
  jobset.mutable_metadata()->set_uid("00000000-0000-4000-8000-000000000000");
  const std::string value = jobset.SerializeAsString();
  std::vector<CreateFn> fns;
  for (int i = 0; i < clients; ++i) {
    fns.push_back([store, value](int client,
                                 int64_t seq) -> std::optional<std::string> {
      const std::string key = store::keys::JobSetKey(
          "default", absl::StrCat("bench-", client, "-", seq));
      absl::StatusOr<std::optional<store::KeyValue>> existing = store->Get(key);
      if (!existing.ok()) return existing.status().ToString();
      if (existing->has_value()) return "key exists (name reused?)";
      absl::StatusOr<int64_t> revision =
          store->Commit(store::Batch().Create(key, value));
      if (!revision.ok()) return revision.status().ToString();
      return std::nullopt;
    });
  }
  return fns;
}

absl::StatusOr<CellResult> RunCell(const std::string& dir, bool fsync,
                                   int clients, bool store_only,
                                   absl::Duration warmup,
                                   absl::Duration duration) {
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  // The store under test: RocksDB in `dir`, or keys of this cell's own on
  // etcd (etcd always fsyncs; `fsync` only labels the cell there).
  std::unique_ptr<store::Store> opened;
  store::RocksDbStore* rocksdb = nullptr;  // WriteCount, RocksDB only.
  if (absl::GetFlag(FLAGS_store) == "etcd") {
    absl::StatusOr<std::unique_ptr<store::EtcdStore>> etcd =
        store::EtcdStore::Open(
            {.endpoints = absl::StrSplit(absl::GetFlag(FLAGS_etcd_endpoints),
                                         ',', absl::SkipWhitespace()),
             .ca_file = absl::GetFlag(FLAGS_etcd_cafile),
             .cert_file = absl::GetFlag(FLAGS_etcd_certfile),
             .key_file = absl::GetFlag(FLAGS_etcd_keyfile),
             .prefix = absl::StrCat(
                 "/create_bench/", getpid(), "/",
                 std::filesystem::path(dir).filename().string(), "/"),
             .history_events = 10'000});
    if (!etcd.ok()) return etcd.status();
    opened = *std::move(etcd);
  } else {
    absl::StatusOr<std::unique_ptr<store::RocksDbStore>> opened_rocksdb =
        store::RocksDbStore::Open(
            {.path = dir, .sync = fsync, .history_events = 10'000});
    if (!opened_rocksdb.ok()) return opened_rocksdb.status();
    rocksdb = opened_rocksdb->get();
    opened = *std::move(opened_rocksdb);
  }
  TimedStore store(opened.get());
  NoAgentFleet fleet;
  std::unique_ptr<Controller> controller;
  if (absl::GetFlag(FLAGS_controller)) {
    absl::StatusOr<std::unique_ptr<Controller>> started = Controller::Start(
        opened.get(), &fleet, RealClock::Get(), {.restart_job = true});
    if (!started.ok()) return started.status();
    controller = *std::move(started);
  }
  std::unique_ptr<AccessStore> access;
  ClusterPki pki;
  std::unique_ptr<RequestAuth> auth;
  std::unique_ptr<Server> server;
  std::vector<CreateFn> creates;
  if (store_only) {
    creates = StoreClients(&store, clients);
  } else {
    const bool tls = absl::GetFlag(FLAGS_tls);
    absl::StatusOr<std::unique_ptr<AccessStore>> loaded =
        AccessStore::Load(&store);
    if (!loaded.ok()) return loaded.status();
    access = *std::move(loaded);
    std::filesystem::create_directories(absl::StrCat(dir, "-pki"), error);
    absl::StatusOr<ClusterPki> made =
        LoadOrCreatePki(absl::StrCat(dir, "-pki"), {}, absl::Now());
    if (!made.ok()) return made.status();
    pki = *std::move(made);
    absl::StatusOr<std::string> token = access->ResetAdminToken(absl::Now());
    if (!token.ok()) return token.status();
    auth = std::make_unique<RequestAuth>(
        RequestAuth::Options{.access = access.get(), .insecure = !tls});
    Server::Options options;
    options.listen = "127.0.0.1:0";
    options.auth = auth.get();
    options.tls = tls ? &pki : nullptr;
    // A cell creates tens of thousands of JobSets in one namespace: counted
    // as always (that cost is measured), never refused.
    options.api_limits.max_jobsets_per_namespace =
        std::numeric_limits<int64_t>::max();
    options.api_limits.max_jobsets = std::numeric_limits<int64_t>::max();
    absl::StatusOr<std::unique_ptr<Server>> started =
        Server::Start(options, &store);
    if (!started.ok()) return started.status();
    server = *std::move(started);
    absl::StatusOr<std::vector<CreateFn>> fns =
        GrpcClients(server->address(), clients, tls, pki.ca.cert_pem, *token);
    if (!fns.ok()) return fns.status();
    creates = *std::move(fns);
  }

  const SteadyClock::time_point measure_start =
      SteadyClock::now() + absl::ToChronoNanoseconds(warmup);
  const SteadyClock::time_point measure_end =
      measure_start + absl::ToChronoNanoseconds(duration);
  std::atomic<bool> stop = false;
  std::vector<ClientRecord> records(clients);
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back(RunClient, std::cref(creates[i]), i, measure_start,
                         measure_end, &stop, &records[i]);
  }

  std::this_thread::sleep_until(measure_start);
  const int64_t revision_start = opened->CurrentRevision();
  const int64_t writes_start = rocksdb ? rocksdb->WriteCount() : 0;
  const auto [commits_start, commit_nanos_start] = store.CommitTime();
  const double cpu_start = CpuSeconds();
  std::this_thread::sleep_until(measure_end);
  const double cpu_end = CpuSeconds();
  const int64_t revision_end = opened->CurrentRevision();
  const int64_t writes_end = rocksdb ? rocksdb->WriteCount() : 0;
  const auto [commits_end, commit_nanos_end] = store.CommitTime();
  stop = true;
  for (std::thread& thread : threads) thread.join();
  if (server != nullptr) server->Shutdown(absl::Now() + absl::Seconds(5));
  creates.clear();
  server.reset();
  controller.reset();  // Before the store it writes to.
  opened.reset();
  std::filesystem::remove_all(dir, error);
  std::filesystem::remove_all(absl::StrCat(dir, "-pki"), error);

  CellResult result;
  result.fsync = fsync;
  result.clients = clients;
  result.seconds = absl::ToDoubleSeconds(duration);
  std::vector<double> latencies;
  for (ClientRecord& record : records) {
    latencies.insert(latencies.end(), record.latencies_ms.begin(),
                     record.latencies_ms.end());
    for (const auto& [message, count] : record.errors) {
      result.error_counts[message] += count;
      result.errors += count;
    }
  }
  std::sort(latencies.begin(), latencies.end());
  result.creates = static_cast<int64_t>(latencies.size());
  result.creates_per_second = result.creates / result.seconds;
  result.p50_ms = Percentile(latencies, 50);
  result.p99_ms = Percentile(latencies, 99);
  result.max_ms = latencies.empty() ? 0 : latencies.back();
  if (writes_end > writes_start) {
    result.commits_per_write =
        static_cast<double>(revision_end - revision_start) /
        static_cast<double>(writes_end - writes_start);
  }
  if (commits_end > commits_start) {
    result.commit_mean_ms =
        static_cast<double>(commit_nanos_end - commit_nanos_start) / 1e6 /
        static_cast<double>(commits_end - commits_start);
  }
  result.cpu_cores = (cpu_end - cpu_start) / result.seconds;
  return result;
}

// Parses a comma-separated list of client counts ("1,4,16").
bool ParseInts(absl::string_view flag, absl::string_view text,
               std::vector<int>* out, std::string* error) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(item, &value) || value < 1 || value > 4096) {
      *error = absl::StrCat("--", flag, ": \"", item,
                            "\" is not a number of clients from 1 to 4096");
      return false;
    }
    out->push_back(value);
  }
  if (out->empty()) *error = absl::StrCat("--", flag, " is empty");
  return !out->empty();
}

// Parses a comma-separated list of booleans ("true,false").
bool ParseBools(absl::string_view flag, absl::string_view text,
                std::vector<bool>* out, std::string* error) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    bool value = false;
    if (!absl::SimpleAtob(item, &value)) {
      *error = absl::StrCat("--", flag, ": \"", item, "\" is not true/false");
      return false;
    }
    out->push_back(value);
  }
  if (out->empty()) *error = absl::StrCat("--", flag, " is empty");
  return !out->empty();
}

int OnlineCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "unknown";
}

std::string JsonEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Json(const std::string& command, bool store_only, int cpus,
                 const std::string& cpu_model,
                 const std::vector<CellResult>& results) {
  std::string out = absl::StrFormat(
      "{\n  \"command\": \"%s\",\n  \"store_only\": %s,\n  \"tls\": %s,\n  "
      "\"nproc\": %d,\n  "
      "\"cpu\": \"%s\",\n"
      "  \"cells\": [",
      JsonEscape(command), store_only ? "true" : "false",
      absl::GetFlag(FLAGS_tls) ? "true" : "false", cpus, JsonEscape(cpu_model));
  for (size_t i = 0; i < results.size(); ++i) {
    const CellResult& r = results[i];
    std::vector<std::string> errors;
    for (const auto& [message, count] : r.error_counts) {
      errors.push_back(
          absl::StrFormat("\"%s\": %d", JsonEscape(message), count));
    }
    absl::StrAppendFormat(
        &out,
        "%s\n    {\"fsync\": %s, \"clients\": %d, \"seconds\": %.3f, "
        "\"creates\": %d, \"creates_per_second\": %.1f, \"p50_ms\": %.3f, "
        "\"p99_ms\": %.3f, \"max_ms\": %.3f, \"commits_per_write\": %.2f, "
        "\"commit_mean_ms\": %.3f, \"cpu_cores\": %.2f, \"errors\": %d, "
        "\"error_counts\": {%s}}",
        i == 0 ? "" : ",", r.fsync ? "true" : "false", r.clients, r.seconds,
        r.creates, r.creates_per_second, r.p50_ms, r.p99_ms, r.max_ms,
        r.commits_per_write, r.commit_mean_ms, r.cpu_cores, r.errors,
        absl::StrJoin(errors, ", "));
  }
  out += "\n  ]\n}\n";
  return out;
}

int Main(int argc, char** argv) {
  std::string error;
  std::vector<int> client_counts;
  std::vector<bool> fsyncs;
  if (!ParseInts("clients", absl::GetFlag(FLAGS_clients), &client_counts,
                 &error) ||
      !ParseBools("fsync", absl::GetFlag(FLAGS_fsync), &fsyncs, &error)) {
    JOBSET_LOG(ERROR) << error;
    return 2;
  }
  const std::string store_kind = absl::GetFlag(FLAGS_store);
  if (store_kind != "rocksdb" && store_kind != "etcd") {
    JOBSET_LOG(ERROR) << "--store=" << store_kind
                      << ": must be rocksdb or etcd";
    return 2;
  }
  if (store_kind == "etcd" && absl::GetFlag(FLAGS_etcd_endpoints).empty()) {
    JOBSET_LOG(ERROR) << "--store=etcd needs --etcd_endpoints";
    return 2;
  }
  const bool store_only = absl::GetFlag(FLAGS_store_only);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  const absl::Duration warmup = absl::GetFlag(FLAGS_warmup);
  if (duration <= absl::ZeroDuration() || warmup < absl::ZeroDuration()) {
    JOBSET_LOG(ERROR)
        << "--duration must be positive and --warmup not negative";
    return 2;
  }

  std::string root = absl::GetFlag(FLAGS_data_dir);
  const bool own_root = root.empty();
  if (own_root) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = absl::StrCat(
        tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/create_bench.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      JOBSET_LOG(ERROR) << "cannot create " << pattern << ": "
                        << std::strerror(errno);
      return 1;
    }
    root = pattern;
  }

  std::vector<std::string> args(argv, argv + argc);
  args[0] = std::filesystem::path(args[0]).filename().string();
  const std::string command = absl::StrJoin(args, " ");
  const int cpus = OnlineCpus();
  const std::string cpu_model = CpuModel();
  std::printf("command: %s\n", command.c_str());
  std::printf("machine: %d CPUs (nproc), %s\n", cpus, cpu_model.c_str());
  if (absl::GetFlag(FLAGS_store) == "etcd") {
    std::printf(
        "store:   etcd at %s (a key prefix per cell; etcd fsyncs "
        "every commit whatever --fsync says)\n",
        absl::GetFlag(FLAGS_etcd_endpoints).c_str());
  } else {
    std::printf("data:    %s (a fresh store per cell, deleted after)\n",
                root.c_str());
  }
  std::printf("calls:   %s\n",
              store_only ? "Store Get + Commit directly (--store_only)"
                         : "CreateJobSet over gRPC, one TCP connection per "
                           "client, in-process server");
  std::printf("each cell: %s warm-up, then %s measured\n\n",
              absl::FormatDuration(warmup).c_str(),
              absl::FormatDuration(duration).c_str());
  std::printf("%-5s | %7s | %9s | %7s | %7s | %7s | %14s | %9s | %8s | %6s\n",
              "fsync", "clients", "creates/s", "p50 ms", "p99 ms", "max ms",
              "commits/write", "commit ms", "CPU used", "errors");
  std::printf(
      "------+---------+-----------+---------+---------+---------+------------"
      "----+-----------+----------+-------\n");
  std::fflush(stdout);

  std::vector<CellResult> results;
  int status = 0;
  for (bool fsync : fsyncs) {
    for (int clients : client_counts) {
      const std::string dir = absl::StrCat(root, "/cell-fsync-",
                                           fsync ? "on" : "off", "-", clients);
      absl::StatusOr<CellResult> r =
          RunCell(dir, fsync, clients, store_only, warmup, duration);
      if (!r.ok()) {
        std::printf("%-5s | %7d | cell failed: %s\n", fsync ? "on" : "off",
                    clients, r.status().ToString().c_str());
        std::fflush(stdout);
        status = 1;
        continue;
      }
      std::printf(
          "%-5s | %7d | %9.0f | %7.2f | %7.2f | %7.2f | %14.1f | %9.2f | "
          "%4.2f/%-3d | %6lld\n",
          fsync ? "on" : "off", clients, r->creates_per_second, r->p50_ms,
          r->p99_ms, r->max_ms, r->commits_per_write, r->commit_mean_ms,
          r->cpu_cores, cpus, static_cast<long long>(r->errors));
      std::fflush(stdout);
      if (r->errors > 0) status = 1;
      results.push_back(*std::move(r));
    }
  }
  std::error_code ec;
  if (own_root) std::filesystem::remove_all(root, ec);

  bool any_errors = false;
  for (const CellResult& r : results) {
    for (const auto& [message, count] : r.error_counts) {
      if (!any_errors) std::printf("\nerrors:\n");
      any_errors = true;
      std::printf("  fsync=%s clients=%d: %lld x %s\n", r.fsync ? "on" : "off",
                  r.clients, static_cast<long long>(count), message.c_str());
    }
  }
  std::printf(
      "\ncreates/s counts OK, created responses ending in the measured "
      "window;\nlatency is per call at the client; commits/write is store "
      "revisions per RocksDB write\n(group commit); commit ms is the mean "
      "time a Create spent in Store::Commit\n(queueing, checks, write, "
      "fsync); CPU used is process CPU seconds per second\n(clients and "
      "server together) of the CPUs available.\n");

  const std::string json_path = absl::GetFlag(FLAGS_json);
  if (!json_path.empty()) {
    const std::string json =
        Json(command, store_only, cpus, cpu_model, results);
    if (json_path == "-") {
      std::fputs(json.c_str(), stdout);
    } else {
      std::ofstream out(json_path);
      out << json;
      if (!out.good()) {
        JOBSET_LOG(ERROR) << "cannot write " << json_path;
        status = 1;
      }
    }
  }
  return status;
}

}  // namespace
}  // namespace jobset::scheduler

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures CreateJobSet throughput and latency through an in-process "
      "jobsetd\n(gRPC + RocksDB store) with N concurrent clients, fsync on "
      "and off.\nUsage: create_bench [--clients=1,4,16,64] "
      "[--fsync=true,false] [--duration=5s] [--json=FILE]");
  absl::ParseCommandLine(argc, argv);
  // As jobsetd does (jobsetd_main.cc).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return jobset::scheduler::Main(argc, argv);
}
