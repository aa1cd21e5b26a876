// jobset-agent: runs a host's pods for jobsetd. Dials --scheduler, registers
// the host and runs what it is told until SIGTERM or SIGINT; pods keep
// running when the agent stops (each has its own supervisor), and a
// restarted agent re-attaches to them. Exits 3 (after 10 s) when jobsetd
// revoked the node's certificate.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/host.h"
#include "agent/identity.h"
#include "agent/metrics.h"
#include "agent/runtime/cri_runtime.h"
#include "agent/runtime/pod_input.h"
#include "agent/runtime/pod_root.h"
#include "agent/runtime/security_context.h"
#include "agent/runtime/shim_runtime.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/replicas.h"
#include "prometheus/exposer.h"

ABSL_FLAG(std::string, scheduler, "127.0.0.1:7070",
          "jobsetd's HOST:PORT, or every replica's, comma-separated "
          "(a,b,c: the agent follows a follower's redirect to the leader "
          "and moves on from a replica it cannot reach). The agent dials "
          "out; it needs no inbound port");
ABSL_FLAG(std::string, node_name, "",
          "This node's name (a DNS subdomain); default: the host name");
ABSL_FLAG(std::string, address, "",
          "The address other nodes reach this node's pods at (what pod "
          "hostnames resolve to); default 127.0.0.1");
ABSL_FLAG(std::string, labels, "",
          "Node labels, k=v,k2=v2 (for nodeSelector, affinity and exclusive "
          "topology, e.g. cloud.google.com/gke-nodepool=slice-a)");
ABSL_FLAG(std::string, taints, "",
          "Node taints, key[=value]:NoSchedule|PreferNoSchedule|NoExecute, "
          "comma-separated; taken at the node's first registration only, "
          "after that an admin's `jobsetctl taint node` sets them");
ABSL_FLAG(std::string, capacity, "",
          "Capacity overrides, e.g. cpu=8,memory=32Gi,nvidia.com/gpu=8; "
          "default: online CPUs, MemTotal, detected GPUs (nvidia-smi) and TPU "
          "chips (/dev/accel*)");
ABSL_FLAG(std::string, work_dir, "./jobset-agent-data",
          "Where pods' state and logs live; created if missing. A restarted "
          "agent on the same directory re-attaches to its pods");
ABSL_FLAG(std::string, runtime, "process",
          "How pods run: process (supervised processes; namespaces and "
          "cgroups when root), oci (runc containers) or cri (registry images "
          "through a CRI runtime: containerd, CRI-O)");
ABSL_FLAG(std::string, cri_endpoint, "unix:///run/containerd/containerd.sock",
          "cri: the CRI runtime's gRPC endpoint");
ABSL_FLAG(std::string, image_dir, "/var/lib/jobset/images",
          "oci: a container's image names <image_dir>/<image>/rootfs");
ABSL_FLAG(std::string, runc, "runc", "oci: the runc binary");
ABSL_FLAG(std::string, shim, "",
          "The jobset-pod-shim binary; default: next to jobset-agent");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT to serve Prometheus metrics on (/metrics); empty: off");
ABSL_FLAG(absl::Duration, lease, absl::ZeroDuration(),
          "Stop every pod once jobsetd has not been heard from for this long "
          "(0: never). Set it (plus 1s) below jobsetd's --node_lost_timeout "
          "to guarantee an old attempt never overlaps its replacement");
ABSL_FLAG(absl::Duration, log_retention, absl::Hours(24),
          "Remove a released pod's container logs once they were last "
          "written this long ago");
ABSL_FLAG(
    std::string, join_token_file, "",
    "A file holding the cluster's join token (JS1<ca hash>::<id>.<secret>; "
    "jobsetd writes it to <data_dir>/join-token). Needed only when "
    "<work_dir>/pki holds no valid node certificate");
ABSL_FLAG(std::string, join_token, "",
          "The join token itself; prefer --join_token_file (a flag shows in "
          "ps)");
ABSL_FLAG(absl::Duration, join_timeout, absl::Minutes(5),
          "How long joining keeps trying an unreachable jobsetd");
ABSL_FLAG(std::string, server_name, "server.jobsetd",
          "The name jobsetd's certificate is verified under");
ABSL_FLAG(bool, insecure, false,
          "Plaintext, no node certificate: only for a jobsetd run with "
          "--insecure, and only when --scheduler is a loopback address");
ABSL_FLAG(int64_t, max_log_bytes, int64_t{10} << 30,
          "Once the logs under --work_dir exceed this many bytes, remove "
          "released pods' logs, oldest first (a known pod's are never "
          "removed); 0: no limit");

ABSL_FLAG(std::string, nvidia_driver_root, "/",
          "oci, cri: where the NVIDIA driver is installed (/run/nvidia/driver "
          "for a driver container); without a CDI spec its libraries under "
          "usr/lib... and nvidia-smi are mounted into GPU pods");
ABSL_FLAG(std::vector<std::string>, cdi_dirs,
          std::vector<std::string>({"/etc/cdi", "/var/run/cdi"}),
          "oci, cri: where CDI specs are (nvidia-ctk cdi generate), lowest "
          "rank first; a spec of kind nvidia.com/gpu is used for GPU pods");
ABSL_FLAG(int64_t, container_log_max_bytes, int64_t{10} << 20,
          "A container's log is rotated to <name>.log.1 (replacing the older "
          "one) at this size (kubelet's containerLogMaxSize); under "
          "--runtime=cri it is checked every second, so it can pass it by "
          "what a second writes; 0: never rotated (cri only)");
ABSL_FLAG(std::vector<std::string>, pod_host_mounts, {},
          "process: host directories (absolute, comma-separated) bound "
          "read-write at the same path into every pod, as Apptainer's "
          "\"bind path\": shared homes, datasets, a scratch folder (not "
          "--work_dir nor inside it; --work_dir beneath one is empty in "
          "pods). A pod sees no other host folder but its hostPath volumes");
ABSL_FLAG(int64_t, default_pod_uid, jobset::agent::kDefaultPodUid,
          "every runtime: the uid (and, without runAsGroup, gid) of a "
          "container whose securityContext sets no runAsUser, unless its "
          "namespace's Pod Security level is privileged (cri: unless its "
          "image names a non-root USER, which it runs as, as under kubelet); "
          "0: such containers run as the agent's user (process) or root, as "
          "before issue 40");
ABSL_FLAG(absl::Duration, progress_report_interval, absl::Seconds(1),
          "the least time between two reads, and reports to jobsetd, of one "
          "pod's progress file ($JOBSET_PROGRESS_FILE: progress heartbeats, "
          "docs/agent.md)");

namespace jobset::agent {
namespace {

// How long a revoked agent waits before it exits non-zero: a supervisor that
// restarts it (systemd Restart=) does not spin, and jobsetd sees one refused
// stream per restart rather than one a second.
constexpr absl::Duration kRevokedExitDelay = absl::Seconds(10);
// jobset-agent's exit status when jobsetd revoked the node's certificate.
constexpr int kRevokedExit = 3;

// CLOCK_MONOTONIC as a Clock: what pods' progress rates and ages are measured
// by, so that a step of the wall clock (NTP) changes neither.
class MonotonicClock final : public Clock {
 public:
  absl::Time Now() const override {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return absl::UnixEpoch() + absl::DurationFromTimespec(ts);
  }
  void SleepUntil(absl::Time deadline) override {
    const absl::Duration left = deadline - Now();
    if (left > absl::ZeroDuration()) absl::SleepFor(left);
  }
};

int Fail(const std::string& message) {
  JOBSET_LOG(ERROR) << message;
  return 2;
}

// The join token from --join_token_file or --join_token; "" if neither.
absl::StatusOr<std::string> JoinToken() {
  const std::string file = absl::GetFlag(FLAGS_join_token_file);
  const std::string flag = absl::GetFlag(FLAGS_join_token);
  if (!file.empty() && !flag.empty()) {
    return absl::InvalidArgumentError(
        "--join_token_file and --join_token: give one of them");
  }
  if (!flag.empty()) {
    JOBSET_LOG(WARNING) << "--join_token shows in ps and in shell history; "
                           "prefer --join_token_file";
    return flag;
  }
  if (file.empty()) return std::string();
  if (struct stat st; stat(file.c_str(), &st) == 0 && (st.st_mode & 077)) {
    JOBSET_LOG(WARNING) << "--join_token_file=" << file
                        << " can be read by others (mode "
                        << absl::StrFormat("%04o", st.st_mode & 07777)
                        << "); chmod 600 it";
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--join_token_file=", file, ": cannot read: ", std::strerror(errno)));
  }
  // A join token is about 90 characters; read no more than a little over.
  std::string token(4096, '\0');
  in.read(token.data(), static_cast<std::streamsize>(token.size()));
  token.resize(static_cast<size_t>(in.gcount()));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--join_token_file=", file, " is empty"));
  }
  return std::string(absl::StripAsciiWhitespace(token));
}

int Main(const char* argv0) {
  Agent::Options options;
  options.scheduler = absl::GetFlag(FLAGS_scheduler);
  absl::StatusOr<Replicas> replicas =
      Replicas::Parse("--scheduler", options.scheduler);
  if (!replicas.ok()) return Fail(std::string(replicas.status().message()));
  options.lease = absl::GetFlag(FLAGS_lease);
  options.progress_report_interval =
      absl::GetFlag(FLAGS_progress_report_interval);
  if (options.progress_report_interval <= absl::ZeroDuration()) {
    return Fail(
        absl::StrCat("--progress_report_interval: ",
                     absl::FormatDuration(options.progress_report_interval),
                     " is not positive"));
  }
  static MonotonicClock* const monotonic = new MonotonicClock;
  options.progress_clock = monotonic;
  api::NodeRegistration& r = options.registration;
  std::string name = absl::GetFlag(FLAGS_node_name);
  if (name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    name = host;
  }
  r.set_name(name);
  r.set_address(absl::GetFlag(FLAGS_address).empty()
                    ? "127.0.0.1"
                    : absl::GetFlag(FLAGS_address));
  // It reaches every pod's /etc/hosts on other nodes: an IP literal only.
  if (absl::Status s = CheckIpAddress("--address", r.address()); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  options.log_retention.retention = absl::GetFlag(FLAGS_log_retention);
  options.log_retention.max_bytes = absl::GetFlag(FLAGS_max_log_bytes);
  r.set_agent_version("jobset-agent 0.1");
  auto labels = ParseKeyValues("labels", absl::GetFlag(FLAGS_labels));
  if (!labels.ok()) return Fail(std::string(labels.status().message()));
  r.mutable_labels()->insert(labels->begin(), labels->end());
  auto capacity = ParseKeyValues("capacity", absl::GetFlag(FLAGS_capacity));
  if (!capacity.ok()) return Fail(std::string(capacity.status().message()));
  auto taints = ParseTaints(absl::GetFlag(FLAGS_taints));
  if (!taints.ok()) return Fail(std::string(taints.status().message()));
  for (api::Taint& t : *taints) *r.add_taints() = std::move(t);
  DescribeHost(DetectAccelerators(), *capacity, &r);
  // Flags win over detected labels.
  for (const auto& [k, v] : *labels) (*r.mutable_labels())[k] = v;

  const std::string work_dir = absl::GetFlag(FLAGS_work_dir);
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) {
    return Fail(absl::StrCat("--work_dir ", work_dir, ": ", ec.message()));
  }
  options.state_dir = work_dir;

  std::unique_ptr<Identity> identity;
  std::string pki_dir;
  if (absl::GetFlag(FLAGS_insecure)) {
    for (absl::string_view target : absl::StrSplit(options.scheduler, ',')) {
      if (IsLoopbackTarget(target)) continue;
      return Fail(absl::StrCat(
          "--insecure: --scheduler entry ", target,
          " is not a loopback address; plaintext is only for a jobsetd run "
          "with --insecure on this host (drop --insecure and join with "
          "--join_token_file)"));
    }
    JOBSET_LOG(WARNING) << "--insecure: plaintext to jobsetd at "
                        << options.scheduler << ", no node identity";
  } else {
    absl::StatusOr<std::string> token = JoinToken();
    if (!token.ok()) return Fail(std::string(token.status().message()));
    Identity::Options io;
    io.pki_dir = (std::filesystem::path(work_dir) / "pki").string();
    pki_dir = io.pki_dir;
    io.node_name = name;
    io.scheduler = options.scheduler;
    io.server_name = absl::GetFlag(FLAGS_server_name);
    io.join_timeout = absl::GetFlag(FLAGS_join_timeout);
    absl::StatusOr<std::unique_ptr<Identity>> opened =
        Identity::Open(io, *token, RealClock::Get());
    if (!opened.ok()) return Fail(std::string(opened.status().message()));
    identity = *std::move(opened);
    Identity* id = identity.get();
    options.credentials = [id] { return id->ChannelCredentials(); };
    options.server_name = io.server_name;
    std::printf(
        "jobset-agent node certificate for %s valid until %s "
        "(renewal from %s)\n",
        Identity::CommonName(name).c_str(),
        absl::FormatTime(id->not_after()).c_str(),
        absl::FormatTime(id->renew_at()).c_str());
  }

  const std::string mode = absl::GetFlag(FLAGS_runtime);
  const int64_t log_cap = absl::GetFlag(FLAGS_container_log_max_bytes);
  if (log_cap < 0 || (log_cap > 0 && log_cap < 4096) ||
      (log_cap == 0 && mode != "cri")) {
    return Fail(absl::StrCat("--container_log_max_bytes: ", log_cap,
                             " is not 0 (cri only) or at least 4096"));
  }
  const int64_t default_pod_uid = absl::GetFlag(FLAGS_default_pod_uid);
  if (default_pod_uid < 0 || default_pod_uid >= 4294967295) {
    return Fail(absl::StrCat("--default_pod_uid: ", default_pod_uid,
                             " is not a uid (0 to 4294967294)"));
  }
  std::unique_ptr<Runtime> runtime;
  if (mode == "cri") {
    if (absl::GetFlag(FLAGS_lease) > absl::ZeroDuration()) {
      // Nothing would stop the containers of a dead or frozen agent: the CRI
      // runtime keeps them running (agent/runtime/README.md).
      return Fail(
          "--lease is not supported with --runtime=cri: the CRI runtime keeps "
          "pods running while the agent is down, so nothing would stop them "
          "when the lease runs out");
    }
    CriRuntime::Options co;
    co.work_dir = work_dir;
    co.endpoint = absl::GetFlag(FLAGS_cri_endpoint);
    co.log_cap_bytes = log_cap;
    co.accelerators.driver_root = absl::GetFlag(FLAGS_nvidia_driver_root);
    co.accelerators.cdi_dirs = absl::GetFlag(FLAGS_cdi_dirs);
    co.default_pod_uid = default_pod_uid;
    auto cri = CriRuntime::Create(co);
    if (!cri.ok()) return Fail(cri.status().ToString());
    runtime = *std::move(cri);
  } else {
    ShimRuntime::Options ro;
    ro.work_dir = work_dir;
    ro.shim_path = absl::GetFlag(FLAGS_shim);
    if (ro.shim_path.empty()) {
      std::error_code self_ec;
      std::filesystem::path self =
          std::filesystem::read_symlink("/proc/self/exe", self_ec);
      if (self_ec) self = argv0;
      ro.shim_path = (self.parent_path() / "jobset-pod-shim").string();
      if (access(ro.shim_path.c_str(), X_OK) != 0) {
        // Under bazel-bin the shim is in its own package.
        ro.shim_path =
            (self.parent_path() / "runtime" / "jobset-pod-shim").string();
      }
    }
    if (mode == "process") {
      ro.mode = ShimRuntime::Mode::kProcess;
    } else if (mode == "oci") {
      ro.mode = ShimRuntime::Mode::kOci;
    } else {
      return Fail(
          absl::StrCat("--runtime: \"", mode, "\" is not process, oci or cri"));
    }
    ro.image_dir = absl::GetFlag(FLAGS_image_dir);
    ro.log_cap_bytes = log_cap;
    ro.accelerators.driver_root = absl::GetFlag(FLAGS_nvidia_driver_root);
    ro.accelerators.cdi_dirs = absl::GetFlag(FLAGS_cdi_dirs);
    ro.runc_path = absl::GetFlag(FLAGS_runc);
    ro.default_pod_uid = default_pod_uid;
    ro.pod_host_mounts = absl::GetFlag(FLAGS_pod_host_mounts);
    if (!ro.pod_host_mounts.empty() && mode != "process") {
      return Fail(
          "--pod_host_mounts: for --runtime=process only (a "
          "container's root is its image's)");
    }
    if (absl::Status s = CheckPodHostMounts(ro.pod_host_mounts, work_dir);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    auto shim = ShimRuntime::Create(ro);
    if (!shim.ok()) return Fail(shim.status().ToString());
    runtime = *std::move(shim);
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);  // From on_revoked, to this thread only.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const pthread_t main_thread = pthread_self();
  // jobsetd revoked the node's certificate (the node was deleted, or its
  // certificate revoked): no retry can succeed, so the agent exits non-zero
  // and a supervisor shows it failed. It does not rejoin with
  // --join_token_file even when the token still works: deleting a node
  // revokes it so that it does not come back, and an agent that rejoined at
  // once would undo every delete. Rejoining is the operator's call.
  options.on_revoked = [main_thread](const std::string&) {
    pthread_kill(main_thread, SIGUSR1);
  };

  AgentMetrics metrics;
  options.metrics = &metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
      !listen.empty()) {
    try {  // prometheus-cpp reports a port it cannot bind by throwing.
      exposer = std::make_unique<prometheus::Exposer>(listen);
    } catch (const std::exception& e) {
      return Fail(absl::StrCat("--metrics_listen=", listen, ": ", e.what()));
    }
    exposer->RegisterCollectable(metrics.registry);
    std::printf("jobset-agent metrics on http://%s:%d/metrics\n",
                listen.substr(0, listen.rfind(':')).c_str(),
                exposer->GetListeningPorts().front());
  }

  Agent agent(options, runtime.get(), RealClock::Get());
  agent.Start();
  if (identity != nullptr) identity->StartRenewing();
  std::printf(
      "jobset-agent %s serving jobsetd at %s (address %s, runtime %s, "
      "work dir %s)\n",
      r.name().c_str(), options.scheduler.c_str(), r.address().c_str(),
      mode.c_str(), work_dir.c_str());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  int status = 0;
  if (signal == SIGUSR1) {
    JOBSET_LOG(ERROR) << "exiting with status " << kRevokedExit << " in "
                      << absl::FormatDuration(kRevokedExitDelay)
                      << ": jobsetd revoked this node's certificate; to "
                         "rejoin, remove "
                      << pki_dir
                      << "/node.crt and start jobset-agent with "
                         "--join_token_file holding a current join token "
                         "(pods keep running)";
    status = kRevokedExit;
    // SIGTERM or SIGINT meanwhile: stop at once (still revoked: status 3).
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    const timespec delay = absl::ToTimespec(kRevokedExitDelay);
    sigtimedwait(&stop, nullptr, &delay);
  } else {
    std::printf("jobset-agent: %s, stopping (pods keep running)\n",
                strsignal(signal));
    std::fflush(stdout);
  }
  agent.Shutdown();
  if (identity != nullptr) identity->StopRenewing();
  return status;
}

}  // namespace
}  // namespace jobset::agent

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs a host's pods for jobsetd.\n"
      "Usage: jobset-agent --scheduler=HOST:PORT[,HOST:PORT...] "
      "[--node_name=NAME] "
      "[--join_token_file=FILE] [--address=IP] [--labels=k=v,...] "
      "[--capacity=cpu=8,...] [flags]");
  absl::ParseCommandLine(argc, argv);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return jobset::agent::Main(argv[0]);
}
