// jobsetd: the JobSet scheduler. Serves the gRPC API on --listen over a
// RocksDB store in --data_dir until SIGTERM or SIGINT.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/names.h"
#include "api/pod_security.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/quote.h"
#include "prometheus/exposer.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/agent_service.h"
#include "scheduler/agents/pod_log_service.h"
#include "scheduler/auth/access_service.h"
#include "scheduler/auth/access_store.h"
#include "scheduler/auth/audit_log.h"
#include "scheduler/auth/cluster_files.h"
#include "scheduler/auth/identity_service.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/auth/shared_ca.h"
#include "scheduler/controller/controller.h"
#include "scheduler/ha/follower_server.h"
#include "scheduler/ha/leader_election.h"
#include "scheduler/metered_store.h"
#include "scheduler/metrics.h"
#include "scheduler/policy_flags.h"
#include "scheduler/records/attempt_pods.h"
#include "scheduler/server/server.h"
#include "scheduler/server/stream_limiter.h"
#include "store/etcd_store.h"
#include "store/rocksdb_store.h"
#include "store/snapshot.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "HOST:PORT to serve the gRPC API on; port 0 picks a free port (the "
          "address actually bound is printed once serving)");
ABSL_FLAG(std::string, data_dir, "./jobsetd-data",
          "Directory of the RocksDB store holding every JobSet; created if "
          "missing. Only one jobsetd may use a directory at a time");
ABSL_FLAG(std::string, restore_from, "",
          "Start from this snapshot file (jobsetctl admin snapshot save): "
          "verified whole, then written into the store, which must be empty "
          "(a fresh --data_dir, or a fresh --etcd_prefix); the cluster's "
          "CA is in it only with --cluster_secret_file, sealed (else keep "
          "the data dir's pki/; store/README.md, Snapshots)");
ABSL_FLAG(std::string, store, "rocksdb",
          "Where JobSets are stored: rocksdb (embedded, in --data_dir) or "
          "etcd (--etcd_endpoints; --data_dir then holds only credentials). "
          "On etcd the controller splits its commits to fit etcd's limits "
          "(128 operations, 1.5 MiB a transaction; "
          "scheduler/controller/README.md)");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "--store=etcd: comma-separated http://HOST:PORT or https://HOST:PORT "
          "of the etcd members; the next is tried when one is unavailable");
ABSL_FLAG(std::string, etcd_cafile, "",
          "--store=etcd: PEM CA bundle that signs the etcd members' "
          "certificates (https:// endpoints)");
ABSL_FLAG(std::string, etcd_certfile, "",
          "--store=etcd: PEM client certificate for etcd (with "
          "--etcd_keyfile), for members run with --client-cert-auth");
ABSL_FLAG(std::string, etcd_keyfile, "",
          "--store=etcd: PEM private key of --etcd_certfile");
ABSL_FLAG(std::string, cluster_secret_file, "",
          "A file holding a secret of at least 32 bytes, the same for every "
          "replica: the cluster CA then lives in the store, its key sealed "
          "with it (AES-256-GCM), so every replica on one etcd serves under "
          "one CA with nothing copied between machines, and a snapshot "
          "carries the CA. The first jobsetd given it publishes its CA (or a "
          "new one); later ones write the store's to their pki/. Empty: the "
          "CA is only in --data_dir/pki (scheduler/auth/README.md)");
ABSL_FLAG(absl::Duration, leader_lease, absl::Seconds(5),
          "--store=etcd: the leader's lease. Replicas sharing one etcd elect "
          "one leader; when it dies without resigning the next leads after "
          "at most this, and a leader cut off from etcd stops acting (exits) "
          "four fifths of it after its last renewal (scheduler/ha/README.md)");
ABSL_FLAG(std::string, advertise_address, "",
          "--store=etcd: the HOST:PORT followers send clients and agents to "
          "while this replica leads (default: the address --listen bound)");
ABSL_FLAG(std::string, etcd_prefix, "/jobset/",
          "--store=etcd: every key jobsetd writes lives under this prefix");
ABSL_FLAG(bool, fsync, true,
          "fsync every write before acknowledging it. --fsync=false is for "
          "benchmarks only: a power loss (not a process crash) can then lose "
          "acknowledged writes");
ABSL_FLAG(int64_t, watch_history, 10'000,
          "Store changes kept in memory for watches to resume from; a watch "
          "resuming from an older resourceVersion is told to list again "
          "(OUT_OF_RANGE), as is one that falls that far behind");
ABSL_FLAG(std::string, feature_gates, "RestartJob=true,InPlaceRestart=true",
          "Comma-separated Name=true|false of upstream JobSet feature gates: "
          "RestartJob, InPlaceRestart, ElasticJobSet");
ABSL_FLAG(absl::Duration, node_lost_timeout, absl::Seconds(10),
          "A node whose agent sends nothing for this long is declared lost: "
          "its pods fail with a DisruptionTarget condition (reason NodeLost) "
          "and their JobSets' failure policies decide");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(1),
          "How often agents are asked to send a heartbeat");
ABSL_FLAG(absl::Duration, restart_grace, absl::Seconds(30),
          "After jobsetd starts or leads, how long the nodes known before "
          "have to reconnect before they are declared lost (a scheduler "
          "outage is not a node failure); a node that has connected since is "
          "under --node_lost_timeout at once");
ABSL_FLAG(int64_t, events_per_jobset, 100,
          "Events kept per JobSet (the oldest go first)");
ABSL_FLAG(absl::Duration, event_max_age, absl::Hours(24),
          "Events older than this are deleted (checked at least once a "
          "minute)");
ABSL_FLAG(
    int32_t, attempt_history, jobset::scheduler::kDefaultAttemptHistory,
    "Restart attempts kept per JobSet, the current one included (1 to "
    "100): `jobsetctl describe jobset` lists them, and `jobsetctl logs "
    "POD --attempt N` (or --previous) reads their pods' logs while the "
    "agents keep them (--log_retention). An attempt's pod record holds "
    "at most 1 MiB (some 25,000 pods, each on its own node); pods beyond it "
    "are not kept");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on (/metrics); empty: off. "
          "docs/metrics.md lists them");
ABSL_FLAG(bool, insecure, false,
          "Serve plaintext and treat every caller without a token as the "
          "cluster administrator. Development only: refused unless --listen "
          "is a loopback address");
ABSL_FLAG(std::vector<std::string>, tls_san, {},
          "Comma-separated extra names and addresses for jobsetd's serving "
          "certificate (it always has server.jobsetd, localhost, 127.0.0.1 "
          "and the --listen host)");
ABSL_FLAG(std::string, audit_log, "",
          "File to append one JSON line (a Kubernetes audit.k8s.io/v1 Event, "
          "level Metadata) to per request that changes something or is "
          "refused (reads too: with --audit_reads, every read); empty: off");
ABSL_FLAG(bool, audit_reads, false, "Audit reads (get, list, watch) too");
ABSL_FLAG(int, max_streams_per_user,
          jobset::scheduler::StreamLimiter::kDefaultMaxPerUser,
          "Watches one user (token, certificate) may hold open at once; the "
          "next is refused with RESOURCE_EXHAUSTED naming this limit "
          "(0: no limit)");
ABSL_FLAG(absl::Duration, join_token_ttl, absl::Hours(24),
          "How long a join token lives (the one written to "
          "<data_dir>/join-token, and `jobsetctl token rotate-join` without "
          "--ttl); 0: forever");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(5),
          "On SIGTERM/SIGINT, how long in-flight calls may finish before they "
          "are cancelled");

// Limits at the API edge and on the gRPC server (scheduler/README.md has the
// table). Their defaults are those of api::Limits, ApiLimits and
// Server::Limits.
ABSL_FLAG(int64_t, max_pods_per_jobset,
          jobset::api::Limits().max_pods_per_jobset,
          "Pods one JobSet attempt may have (replicas x parallelism summed "
          "over its replicatedJobs); a larger spec is refused at create and "
          "update (INVALID_ARGUMENT)");
ABSL_FLAG(int64_t, max_jobs_per_jobset,
          jobset::api::Limits().max_jobs_per_jobset,
          "Jobs one JobSet attempt may have (replicas summed over its "
          "replicatedJobs)");
ABSL_FLAG(int64_t, max_containers_per_pod,
          jobset::api::Limits().max_containers_per_pod,
          "Containers a pod template may have");
ABSL_FLAG(int64_t, max_init_containers_per_pod,
          jobset::api::Limits().max_init_containers_per_pod,
          "Init containers a pod template may have");
ABSL_FLAG(int64_t, max_volumes_per_pod,
          jobset::api::Limits().max_volumes_per_pod,
          "Volumes a pod template may have");
ABSL_FLAG(int64_t, max_env_per_container,
          jobset::api::Limits().max_env_per_container,
          "Environment variables a container may set");
ABSL_FLAG(int64_t, max_ports_per_container,
          jobset::api::Limits().max_ports_per_container,
          "Ports a container may declare");
ABSL_FLAG(int64_t, max_command_bytes, jobset::api::Limits().max_command_bytes,
          "Bytes of a container's command and args together (each with its "
          "terminating NUL)");
ABSL_FLAG(int64_t, max_label_bytes, jobset::api::Limits().max_label_bytes,
          "Bytes of the keys and values of one object's labels (the JobSet's, "
          "its Job and pod templates', a nodeSelector)");
ABSL_FLAG(int64_t, max_annotation_bytes,
          jobset::api::Limits().max_annotation_bytes,
          "Bytes of the keys and values of one object's annotations "
          "(Kubernetes: 256 KiB)");
ABSL_FLAG(int64_t, max_jobsets_per_namespace,
          jobset::scheduler::ApiLimits().max_jobsets_per_namespace,
          "JobSets one namespace may hold; a create beyond is refused with "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_jobsets, jobset::scheduler::ApiLimits().max_jobsets,
          "JobSets jobsetd may hold in all namespaces together");
ABSL_FLAG(std::string, pod_security, "baseline",
          "Pod Security Standard enforced on the pod templates of JobSets "
          "(privileged, baseline or restricted) in namespaces whose Namespace "
          "object has no pod-security.kubernetes.io/enforce label");
ABSL_FLAG(std::string, allowed_host_paths, "",
          "Comma-separated absolute paths: hostPath volumes at or under one "
          "(by path components) pass Pod Security at every level, e.g. "
          "/datasets,/scratch");
ABSL_FLAG(int32_t, grpc_max_concurrent_streams,
          jobset::scheduler::Server::Limits().max_concurrent_streams,
          "Calls one client connection may have open at once (HTTP/2 "
          "streams); more wait in the client");
ABSL_FLAG(int32_t, grpc_max_receive_bytes,
          jobset::scheduler::Server::Limits().max_receive_bytes,
          "Largest message jobsetd accepts on any service (agents' included); "
          "larger is refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int32_t, grpc_max_send_bytes,
          jobset::scheduler::Server::Limits().max_send_bytes,
          "Largest message jobsetd sends on any service");
ABSL_FLAG(int64_t, watch_history_bytes,
          jobset::store::History::kDefaultMaxBytes,
          "Bytes of store changes (keys and values) kept in memory for "
          "watches, besides --watch_history events: the oldest go first");
ABSL_FLAG(int32_t, grpc_max_threads,
          jobset::scheduler::Server::Limits().max_threads,
          "Threads the gRPC server may use for its synchronous calls: each "
          "watch, logs -f and call in flight holds one (agent streams hold "
          "none), so set it above watches + a few hundred; a call beyond is "
          "refused with RESOURCE_EXHAUSTED");

namespace jobset {
namespace {

// The store --store names: RocksDB in `data_dir`, or etcd.
absl::StatusOr<std::unique_ptr<store::Store>> OpenStore(
    const std::string& data_dir, size_t history_bytes) {
  const size_t history_events =
      static_cast<size_t>(absl::GetFlag(FLAGS_watch_history));
  const std::string kind = absl::GetFlag(FLAGS_store);
  if (kind == "rocksdb") {
    return store::RocksDbStore::Open({.path = data_dir,
                                      .sync = absl::GetFlag(FLAGS_fsync),
                                      .history_events = history_events,
                                      .history_bytes = history_bytes});
  }
  if (kind != "etcd") {
    return absl::InvalidArgumentError(
        absl::StrCat("--store=", kind, ": must be rocksdb or etcd"));
  }
  // --data_dir still holds the credentials (RocksDB would have made it):
  // the owner's only, as RocksDbStore keeps it, whatever the umask.
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  if (!error) {
    std::filesystem::permissions(data_dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, error);
  }
  if (error) {
    return absl::InternalError(absl::StrCat(
        "--data_dir=", data_dir, ": cannot create: ", error.message()));
  }
  std::vector<std::string> endpoints = absl::StrSplit(
      absl::GetFlag(FLAGS_etcd_endpoints), ',', absl::SkipWhitespace());
  if (endpoints.empty()) {
    return absl::InvalidArgumentError(
        "--store=etcd needs --etcd_endpoints=http[s]://HOST:PORT,...");
  }
  return store::EtcdStore::Open(
      {.endpoints = std::move(endpoints),
       .ca_file = absl::GetFlag(FLAGS_etcd_cafile),
       .cert_file = absl::GetFlag(FLAGS_etcd_certfile),
       .key_file = absl::GetFlag(FLAGS_etcd_keyfile),
       .prefix = absl::GetFlag(FLAGS_etcd_prefix),
       // A request etcd holds (no quorum: it waits for a commit that cannot
       // come) is given up well before the leader would hold itself deposed
       // (4/5 of the lease), so the caller is told why rather than cut off.
       .request_timeout = std::min(absl::Seconds(5),
                                   absl::GetFlag(FLAGS_leader_lease) * 3 / 5),
       .history_events = history_events,
       .history_bytes = history_bytes});
}

// Sets `*field` from `flag`; false, with `*error` naming the flag, when the
// value is not positive.
template <typename Field, typename Value>
bool SetPositive(Field* field, const absl::Flag<Value>& flag,
                 std::string* error) {
  *field = absl::GetFlag(flag);
  if (*field >= 1) return true;
  *error = absl::StrCat("--", absl::GetFlagReflectionHandle(flag).Name(),
                        " must be at least 1");
  return false;
}

// Sets the API's and the gRPC server's limits, and the watch history's byte
// bound, from their flags.
bool LimitsFromFlags(scheduler::Server::Options* options,
                     int64_t* history_bytes, std::string* error) {
  api::Limits& spec = options->api_limits.spec;
  scheduler::Server::Limits& grpc = options->grpc_limits;
  return SetPositive(&spec.max_pods_per_jobset, FLAGS_max_pods_per_jobset,
                     error) &&
         SetPositive(&spec.max_jobs_per_jobset, FLAGS_max_jobs_per_jobset,
                     error) &&
         SetPositive(&spec.max_containers_per_pod, FLAGS_max_containers_per_pod,
                     error) &&
         SetPositive(&spec.max_init_containers_per_pod,
                     FLAGS_max_init_containers_per_pod, error) &&
         SetPositive(&spec.max_volumes_per_pod, FLAGS_max_volumes_per_pod,
                     error) &&
         SetPositive(&spec.max_env_per_container, FLAGS_max_env_per_container,
                     error) &&
         SetPositive(&spec.max_ports_per_container,
                     FLAGS_max_ports_per_container, error) &&
         SetPositive(&spec.max_command_bytes, FLAGS_max_command_bytes, error) &&
         SetPositive(&spec.max_label_bytes, FLAGS_max_label_bytes, error) &&
         SetPositive(&spec.max_annotation_bytes, FLAGS_max_annotation_bytes,
                     error) &&
         SetPositive(&options->api_limits.max_jobsets_per_namespace,
                     FLAGS_max_jobsets_per_namespace, error) &&
         SetPositive(&options->api_limits.max_jobsets, FLAGS_max_jobsets,
                     error) &&
         SetPositive(&grpc.max_concurrent_streams,
                     FLAGS_grpc_max_concurrent_streams, error) &&
         SetPositive(&grpc.max_receive_bytes, FLAGS_grpc_max_receive_bytes,
                     error) &&
         SetPositive(&grpc.max_send_bytes, FLAGS_grpc_max_send_bytes, error) &&
         SetPositive(&grpc.max_threads, FLAGS_grpc_max_threads, error) &&
         SetPositive(history_bytes, FLAGS_watch_history_bytes, error);
}

bool ParseFeatureGates(const std::string& text, api::Features* features,
                       std::string* error) {
  for (absl::string_view gate : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(gate, '=');
    bool value = false;
    if (kv.size() != 2 || !absl::SimpleAtob(kv[1], &value)) {
      *error = absl::StrCat("--feature_gates: \"", gate,
                            "\" is not Name=true or Name=false");
      return false;
    }
    if (kv[0] == "RestartJob") {
      features->restart_job = value;
    } else if (kv[0] == "InPlaceRestart") {
      features->in_place_restart = value;
    } else if (kv[0] == "ElasticJobSet") {
      features->elastic_jobset = value;
    } else {
      *error =
          absl::StrCat("--feature_gates: unknown gate \"", kv[0],
                       "\"; known: RestartJob, InPlaceRestart, ElasticJobSet");
      return false;
    }
  }
  return true;
}

// Campaigns for leadership among the replicas on `etcd`, answering every
// call on `*listen` with a redirect to the leader meanwhile. Returns -1 once
// this replica leads (with `*listen` set to the address it bound, for the
// real server, and `*election` set), or the exit code when a signal came
// first. Losing the leadership later exits the process.
absl::StatusOr<int> CampaignForLeadership(
    store::EtcdStore* etcd, const scheduler::ClusterPki* tls,
    const sigset_t& signals, std::string* listen,
    std::unique_ptr<scheduler::LeaderElection>* election) {
  static std::atomic<scheduler::LeaderElection*> campaigning = nullptr;
  absl::StatusOr<std::unique_ptr<scheduler::FollowerServer>> started =
      scheduler::FollowerServer::Start(
          {.listen = *listen,
           .credentials = scheduler::Server::Credentials(tls),
           .leader = [] {
             scheduler::LeaderElection* e = campaigning.load();
             return e == nullptr ? std::string() : e->leader();
           }});
  if (!started.ok()) return started.status();
  std::unique_ptr<scheduler::FollowerServer> follower = *std::move(started);
  *listen = follower->address();
  std::string advertise = absl::GetFlag(FLAGS_advertise_address);
  if (advertise.empty()) advertise = follower->address();
  // etcd unreachable or without quorum: keep trying, answering callers
  // meanwhile that no leader is elected (the follower server's message),
  // until etcd is back or a signal stops this replica.
  absl::StatusOr<std::unique_ptr<scheduler::LeaderElection>> campaign;
  for (absl::Duration backoff = absl::Milliseconds(250);;
       backoff = std::min(backoff * 2, absl::Seconds(5))) {
    campaign = scheduler::LeaderElection::Campaign(
        etcd,
        {.lease = absl::GetFlag(FLAGS_leader_lease), .address = advertise},
        [](const absl::Status& why) {
          // Exit at once, as kube-controller-manager does: no thread of a
          // deposed leader may go on acting (the fence refuses its writes;
          // agents keep their pods and reconnect to the next leader).
          JOBSET_LOG(ERROR) << "jobsetd: leadership lost, exiting: " << why;
          std::fflush(nullptr);
          _exit(1);
        });
    if (campaign.ok() || (!absl::IsUnavailable(campaign.status()) &&
                          !absl::IsDeadlineExceeded(campaign.status()))) {
      break;
    }
    JOBSET_LOG(WARNING) << "jobsetd: cannot campaign (trying again in "
                        << backoff << "): " << campaign.status();
    timespec wait{};
    wait.tv_sec = absl::ToInt64Seconds(backoff);
    wait.tv_nsec = absl::ToInt64Nanoseconds(
        backoff - absl::Seconds(absl::ToInt64Seconds(backoff)));
    if (const int signal = sigtimedwait(&signals, nullptr, &wait); signal > 0) {
      std::printf("jobsetd: %s while campaigning, shutting down\n",
                  strsignal(signal));
      std::fflush(stdout);
      return 0;
    }
  }
  if (!campaign.ok()) return campaign.status();
  *election = *std::move(campaign);
  campaigning.store(election->get());
  std::printf("jobsetd follower on %s (advertised as %s), campaigning\n",
              follower->address().c_str(), advertise.c_str());
  std::fflush(stdout);
  while (!(*election)->AwaitLeadership(absl::Now() + absl::Milliseconds(200))) {
    const timespec poll{0, 0};
    if (const int signal = sigtimedwait(&signals, nullptr, &poll); signal > 0) {
      std::printf("jobsetd: %s while following, shutting down\n",
                  strsignal(signal));
      std::fflush(stdout);
      follower.reset();
      campaigning.store(nullptr);
      election->reset();
      return 0;
    }
  }
  // Frees the port for the real server (clients retry the moment between).
  follower.reset();
  campaigning.store(nullptr);
  std::printf("jobsetd leads (epoch %lld)\n",
              static_cast<long long>((*election)->epoch()));
  std::fflush(stdout);
  return -1;
}

int Main() {
  // A test build's failpoints (docs/failpoints.md): a typo in the spec is
  // refused here, before anything runs, rather than arming nothing.
  if (absl::Status armed = failpoint::InitFromEnvironment(); !armed.ok()) {
    JOBSET_LOG(ERROR) << armed.message();
    return 2;
  }
  scheduler::Server::Options options;
  options.listen = absl::GetFlag(FLAGS_listen);
  std::string error;
  scheduler::ControllerCore::Options::Quarantine quarantine;
  int64_t history_bytes = 0;
  if (!LimitsFromFlags(&options, &history_bytes, &error)) {
    JOBSET_LOG(ERROR) << error;
    return 2;
  }
  if (!ParseFeatureGates(absl::GetFlag(FLAGS_feature_gates), &options.features,
                         &error)) {
    JOBSET_LOG(ERROR) << error;
    return 2;
  }
  if (!scheduler::PolicyFromFlags(&options.features, &quarantine, &error)) {
    JOBSET_LOG(ERROR) << error;
    return 2;
  }
  const int32_t attempt_history = absl::GetFlag(FLAGS_attempt_history);
  if (attempt_history < 1 || attempt_history > scheduler::kMaxAttemptHistory) {
    JOBSET_LOG(ERROR) << "--attempt_history must be 1 to "
                      << scheduler::kMaxAttemptHistory << ", got "
                      << attempt_history;
    return 2;
  }
  options.features.attempt_history = attempt_history;
  if (absl::GetFlag(FLAGS_watch_history) < 1) {
    JOBSET_LOG(ERROR) << "--watch_history must be at least 1";
    return 2;
  }
  if (absl::GetFlag(FLAGS_join_token_ttl) < absl::ZeroDuration()) {
    JOBSET_LOG(ERROR) << "--join_token_ttl must be 0 (forever) or more, got "
                      << absl::GetFlag(FLAGS_join_token_ttl);
    return 2;
  }
  absl::StatusOr<api::PodSecurityLevel> level = api::ParsePodSecurityLevel(
      "--pod_security", absl::GetFlag(FLAGS_pod_security));
  absl::StatusOr<api::AllowedHostPaths> host_paths =
      api::AllowedHostPaths::Parse("--allowed_host_paths",
                                   absl::GetFlag(FLAGS_allowed_host_paths));
  for (const absl::Status& s : {level.status(), host_paths.status()}) {
    if (!s.ok()) {
      JOBSET_LOG(ERROR) << s.message();
      return 2;
    }
  }
  options.api_limits.pod_security = {*level, *std::move(host_paths)};

  const bool insecure = absl::GetFlag(FLAGS_insecure);
  const std::string listen_host =
      options.listen.substr(0, options.listen.rfind(':'));
  if (insecure && !api::IsLoopbackHost(listen_host)) {
    JOBSET_LOG(ERROR) << "refusing to serve without TLS on " << options.listen
                      << ": --insecure needs a loopback --listen "
                         "(127.0.0.1, ::1, localhost)";
    return 2;
  }
  if (insecure) {
    JOBSET_LOG(WARNING) << "--insecure: plaintext, and every caller without a "
                           "token is the cluster administrator";
  }

  // Signals are taken by sigwait below; every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  auto store = OpenStore(data_dir, static_cast<size_t>(history_bytes));
  if (!store.ok()) {
    JOBSET_LOG(ERROR) << store.status();
    return 1;
  }
  if (const std::string from = absl::GetFlag(FLAGS_restore_from);
      !from.empty()) {
    const std::string name =
        absl::GetFlag(FLAGS_store) == "etcd"
            ? absl::StrCat("the etcd store under prefix \"",
                           absl::GetFlag(FLAGS_etcd_prefix), "\" at ",
                           absl::GetFlag(FLAGS_etcd_endpoints))
            : absl::StrCat("the RocksDB store in --data_dir=", data_dir);
    absl::StatusOr<store::SnapshotInfo> restored =
        store::RestoreSnapshot(from, store->get(), name);
    if (!restored.ok()) {
      JOBSET_LOG(ERROR) << restored.status();
      return 1;
    }
    std::printf(
        "jobsetd restored %llu keys from %s (snapshot of revision %lld) "
        "into %s\n",
        static_cast<unsigned long long>(restored->keys), from.c_str(),
        static_cast<long long>(restored->revision), name.c_str());
    std::fflush(stdout);
  }
  // Every part writes through the metered store (commit latency and bytes).
  scheduler::SchedulerMetrics metrics;
  scheduler::MeteredStore metered(store->get(), &metrics);
  std::unique_ptr<prometheus::Exposer> exposer;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
      !listen.empty()) {
    try {  // prometheus-cpp reports a port it cannot bind by throwing.
      exposer = std::make_unique<prometheus::Exposer>(listen);
    } catch (const std::exception& e) {
      JOBSET_LOG(ERROR) << "--metrics_listen=" << listen << ": " << e.what();
      return 1;
    }
    exposer->RegisterCollectable(metrics.registry);
    const std::string host = listen.substr(0, listen.rfind(':'));
    std::printf("jobsetd metrics on http://%s:%d/metrics\n", host.c_str(),
                exposer->GetListeningPorts().front());
  }
  options.metrics = &metrics;

  // Who may do what: the cluster's certificates, the identity records.
  const absl::Time now = absl::Now();
  std::vector<std::string> sans = absl::GetFlag(FLAGS_tls_san);
  if (!listen_host.empty() && listen_host != "0.0.0.0" &&
      listen_host != "[::]") {
    sans.push_back(listen_host);
  }
  std::optional<auth::KeyAndCert> cluster_ca;
  if (const std::string path = absl::GetFlag(FLAGS_cluster_secret_file);
      !path.empty()) {
    absl::StatusOr<std::string> secret = scheduler::ReadClusterSecret(path);
    absl::StatusOr<std::optional<auth::KeyAndCert>> local =
        secret.ok() ? scheduler::ReadPkiCa(data_dir) : secret.status();
    absl::StatusOr<auth::KeyAndCert> shared =
        local.ok() ? scheduler::LoadOrPublishSharedCa(store->get(), *secret,
                                                      *local, now)
                   : local.status();
    if (!shared.ok()) {
      JOBSET_LOG(ERROR) << shared.status();
      return 1;
    }
    cluster_ca = *std::move(shared);
  }
  absl::StatusOr<scheduler::ClusterPki> pki =
      scheduler::LoadOrCreatePki(data_dir, sans, now, cluster_ca);
  if (!pki.ok()) {
    JOBSET_LOG(ERROR) << pki.status();
    return 1;
  }
  // On etcd, replicas elect one leader; this one serves redirects until it
  // leads, and then everything below runs as on a single machine.
  std::unique_ptr<scheduler::LeaderElection> election;
  if (auto* etcd = dynamic_cast<store::EtcdStore*>(store->get());
      etcd != nullptr) {
    absl::StatusOr<int> campaigned = CampaignForLeadership(
        etcd, insecure ? nullptr : &*pki, signals, &options.listen, &election);
    if (!campaigned.ok()) {
      JOBSET_LOG(ERROR) << campaigned.status();
      return 1;
    }
    if (*campaigned >= 0) return *campaigned;
  }
  auto access = scheduler::AccessStore::Load(&metered);
  if (!access.ok()) {
    JOBSET_LOG(ERROR) << access.status();
    return 1;
  }
  std::unique_ptr<scheduler::AuditLog> audit;
  if (const std::string path = absl::GetFlag(FLAGS_audit_log); !path.empty()) {
    auto opened =
        scheduler::AuditLog::Open(path, absl::GetFlag(FLAGS_audit_reads));
    if (!opened.ok()) {
      JOBSET_LOG(ERROR) << opened.status();
      return 1;
    }
    audit = *std::move(opened);
  }
  scheduler::RequestAuth request_auth(
      {.access = access->get(), .insecure = insecure, .audit = audit.get()});
  options.auth = &request_auth;
  options.tls = insecure ? nullptr : &*pki;
  options.audit = audit.get();
  scheduler::StreamLimiter streams(absl::GetFlag(FLAGS_max_streams_per_user));
  options.streams = &streams;

  auto created = scheduler::AgentHub::Create(
      &metered, {.node_lost_timeout = absl::GetFlag(FLAGS_node_lost_timeout),
                 .heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval),
                 .restart_grace = absl::GetFlag(FLAGS_restart_grace),
                 .metrics = &metrics,
                 .leader_epoch = election != nullptr ? election->epoch() : 0});
  if (!created.ok()) {
    JOBSET_LOG(ERROR) << created.status();
    return 1;
  }
  // Attached to the controller below: the controller is created with the
  // hub (its AgentFleet) and only then can be the hub's sink.
  scheduler::AgentHub& hub = **created;
  scheduler::PrometheusControllerMetrics controller_metrics(&metrics);
  auto controller = scheduler::Controller::Start(
      &metered, &hub, RealClock::Get(), options.features, &controller_metrics,
      {.per_jobset = static_cast<size_t>(
           std::max<int64_t>(1, absl::GetFlag(FLAGS_events_per_jobset))),
       .max_age = absl::GetFlag(FLAGS_event_max_age)},
      // The controller checks the API's pod limit again, for JobSets stored
      // under a higher one (they fail with TooManyPods).
      options.api_limits.spec.max_pods_per_jobset, &hub.progress(), quarantine);
  if (!controller.ok()) {
    JOBSET_LOG(ERROR) << controller.status();
    return 1;
  }
  hub.Attach(controller->get());
  scheduler::AgentServiceImpl agent_service(&hub, &request_auth);
  scheduler::NodeServiceImpl node_service(&hub, &request_auth);
  scheduler::PodLogServiceImpl pod_log_service(&metered, &hub, &request_auth,
                                               &streams, RealClock::Get(),
                                               attempt_history);
  scheduler::IdentityServiceImpl identity_service(&*pki, &request_auth);
  std::optional<absl::Duration> join_token_ttl;
  if (absl::GetFlag(FLAGS_join_token_ttl) > absl::ZeroDuration()) {
    join_token_ttl = absl::GetFlag(FLAGS_join_token_ttl);
  }
  scheduler::AccessServiceImpl access_service(&request_auth, &*pki, data_dir,
                                              &metered, join_token_ttl);
  options.services = {&agent_service, &node_service, &pod_log_service,
                      &identity_service, &access_service};
  options.end_streams = [&hub] { hub.CloseAll(); };
  auto server = scheduler::Server::Start(options, &metered);
  if (!server.ok()) {
    JOBSET_LOG(ERROR) << server.status();
    return 1;
  }
  // The credentials a newcomer needs, for the address actually bound.
  // Replicas sharing a store keep an admin token each (cluster_files.h).
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::string admin_token_name =
      election != nullptr ? scheduler::ReplicaAdminTokenName(host, data_dir)
                          : "admin";
  if (absl::Status written = scheduler::WriteAdminConfig(
          data_dir, *pki, access->get(), (*server)->address(), insecure, now,
          admin_token_name);
      !written.ok()) {
    JOBSET_LOG(ERROR) << written;
    return 1;
  }
  if (absl::Status written = scheduler::WriteJoinToken(
          data_dir, *pki, access->get(), now, join_token_ttl);
      !written.ok()) {
    JOBSET_LOG(ERROR) << written;
    return 1;
  }
  std::printf("jobsetd serving on %s (data %s, revision %lld%s)\n",
              (*server)->address().c_str(), data_dir.c_str(),
              static_cast<long long>((*store)->CurrentRevision()),
              absl::GetFlag(FLAGS_fsync) ? "" : ", fsync off");
  std::printf(
      "jobsetd %s; admin credentials in %s/admin.conf, agents join with "
      "%s/join-token\n",
      insecure ? "serves PLAINTEXT (--insecure)" : "serves TLS",
      data_dir.c_str(), data_dir.c_str());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&signals, &signal);
  std::printf("jobsetd: %s, shutting down\n", strsignal(signal));
  std::fflush(stdout);
  (*server)->Shutdown(absl::Now() + absl::GetFlag(FLAGS_shutdown_grace));
  server->reset();
  hub.CloseAll();
  controller->reset();
  election.reset();  // Resigns: the next replica leads at once.
  store->reset();
  std::printf("jobsetd: stopped\n");
  return 0;
}

}  // namespace
}  // namespace jobset

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The JobSet scheduler: serves the JobSet gRPC API over a RocksDB (or "
      "etcd) store.\n"
      "Usage: jobsetd [--listen=HOST:PORT] [--data_dir=DIR] [flags]");
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil checks every lock acquisition for deadlock cycles (a
  // few percent of CPU under load); the clang build's annotations and the
  // tests cover lock ordering instead.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return jobset::Main();
}
