// Heartbeat cost: N simulated agents (one stream and one thread each, in
// this process) against one real jobsetd process. Each registers a node and
// heartbeats every --interval for --seconds; the bench prints the heartbeat
// round trip (p50/p99/max), jobsetd's CPU use and RSS.
//
//   bazel run -c opt //tests:heartbeat_bench -- --agents=1000
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "common/log.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"
#include "proto/auth.grpc.pb.h"
#include "tests/cluster_credentials.h"
#include "tests/jobsetd_process.h"

ABSL_FLAG(int, agents, 1000, "Simulated agents");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1), "Heartbeat interval");
ABSL_FLAG(absl::Duration, seconds, absl::Seconds(20), "Measured time");
ABSL_FLAG(std::string, jobsetd, "", "jobsetd binary (default: runfiles)");
ABSL_FLAG(bool, tls, true,
          "As real agents: each joins with the join token and streams over "
          "mTLS with its node certificate; false: jobsetd --insecure, "
          "plaintext");

namespace jobset {
namespace {

struct ProcStat {
  double cpu_seconds = 0;
  int64_t rss_bytes = 0;
};

ProcStat Stat(pid_t pid) {
  ProcStat s;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string field;
  std::vector<std::string> fields;
  while (stat >> field) fields.push_back(field);
  // Fields 14 and 15 (1-based): utime, stime in clock ticks; 24: rss pages.
  if (fields.size() > 24) {
    const double tick = sysconf(_SC_CLK_TCK);
    s.cpu_seconds = (std::stod(fields[13]) + std::stod(fields[14])) / tick;
    s.rss_bytes = std::stoll(fields[23]) * sysconf(_SC_PAGESIZE);
  }
  return s;
}

int Main() {
  const int n = absl::GetFlag(FLAGS_agents);
  const absl::Duration interval = absl::GetFlag(FLAGS_interval);
  std::string binary = absl::GetFlag(FLAGS_jobsetd);
  if (binary.empty()) {
    const char* srcdir = std::getenv("RUNFILES_DIR");
    binary = absl::StrCat(srcdir ? srcdir : ".", "/jobsetd/scheduler/jobsetd");
  }
  char tmpl[] = "/tmp/heartbeat-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  testing::JobsetdProcess::Options options;
  options.binary = binary;
  const bool tls = absl::GetFlag(FLAGS_tls);
  options.args = {
      "--listen=127.0.0.1:0", absl::StrCat("--data_dir=", dir),
      "--node_lost_timeout=30s",
      absl::StrCat("--heartbeat_interval=", absl::FormatDuration(interval))};
  if (!tls) options.args.push_back("--insecure");
  auto jobsetd = testing::JobsetdProcess::Start(options);
  if (!jobsetd.ok()) {
    JOBSET_LOG(ERROR) << jobsetd.status();
    return 1;
  }
  const std::string address = (*jobsetd)->address();
  testing::ClusterCredentials credentials;
  std::string credential, key;
  if (tls) {
    absl::StatusOr<testing::ClusterCredentials> read =
        testing::ReadClusterCredentials(dir);
    absl::StatusOr<auth::JoinToken> token =
        read.ok() ? auth::ParseJoinToken(read->join_token)
                  : absl::StatusOr<auth::JoinToken>(read.status());
    absl::StatusOr<std::string> made = auth::GeneratePrivateKey();
    if (!token.ok() || !made.ok()) {
      JOBSET_LOG(ERROR) << "cannot join: " << token.status() << made.status();
      return 1;
    }
    credentials = *read;
    credential = auth::FormatToken(token->credential);
    key = *made;  // One key for every simulated node; a CSR each.
  }

  absl::Mutex mu;
  std::vector<double> rtts_ms;
  std::atomic<int> connected = 0;
  std::atomic<bool> measuring = false, stop = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      const std::string name = absl::StrCat("sim-", i);
      std::shared_ptr<grpc::Channel> channel;
      if (tls) {
        // Joins as jobset-agent does, then streams as that node.
        absl::StatusOr<std::string> csr = auth::CreateCsr(
            key, absl::StrCat("system:node:", name), "system:nodes");
        if (!csr.ok()) return;
        api::JoinNodeRequest join;
        join.set_token(credential);
        join.set_node_name(name);
        join.set_csr_pem(*csr);
        join.set_node_secret(absl::StrCat("heartbeat-bench-secret-", i));
        api::NodeCertificate cert;
        grpc::ClientContext join_ctx;
        if (!api::IdentityService::NewStub(
                 testing::SecureChannel(address, credentials.ca_pem, ""))
                 ->JoinNode(&join_ctx, join, &cert)
                 .ok()) {
          return;
        }
        channel = testing::SecureChannel(address, credentials.ca_pem, "",
                                         cert.cert_pem(), key);
      } else {
        // A connection of its own, as each real agent has.
        grpc::ChannelArguments args;
        args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
        channel = grpc::CreateCustomChannel(
            address, grpc::InsecureChannelCredentials(), args);
      }
      auto stub = api::AgentService::NewStub(channel);
      grpc::ClientContext ctx;
      auto stream = stub->Connect(&ctx);
      api::AgentMessage hello;
      api::NodeRegistration* r = hello.mutable_hello()->mutable_node();
      r->set_name(name);
      r->set_address(
          absl::StrCat("10.", i / 65536, ".", (i / 256) % 256, ".", i % 256));
      (*r->mutable_capacity())["cpu"] = "64";
      (*r->mutable_capacity())["memory"] = "512Gi";
      (*r->mutable_capacity())["nvidia.com/gpu"] = "8";
      (*r->mutable_labels())["cloud.google.com/gke-nodepool"] =
          absl::StrCat("slice-", i / 16);
      api::SchedulerMessage msg;
      if (!stream->Write(hello) || !stream->Read(&msg)) return;
      ++connected;
      // Spread the agents over the interval, as real ones drift apart.
      absl::SleepFor(interval * (i % 100) / 100);
      std::vector<double> mine;
      for (int64_t seq = 1; !stop; ++seq) {
        const absl::Time sent = absl::Now();
        api::AgentMessage hb;
        hb.mutable_heartbeat()->set_seq(seq);
        if (!stream->Write(hb)) break;
        do {
          if (!stream->Read(&msg)) return;
        } while (!msg.has_heartbeat_ack());
        if (measuring) {
          mine.push_back(absl::ToDoubleMilliseconds(absl::Now() - sent));
        }
        absl::SleepFor(interval - (absl::Now() - sent));
      }
      ctx.TryCancel();
      absl::MutexLock lock(&mu);
      rtts_ms.insert(rtts_ms.end(), mine.begin(), mine.end());
    });
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (connected < n && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  absl::SleepFor(interval * 2);  // Settle.
  const ProcStat before = Stat((*jobsetd)->pid());
  const absl::Time start = absl::Now();
  measuring = true;
  absl::SleepFor(absl::GetFlag(FLAGS_seconds));
  measuring = false;
  const ProcStat after = Stat((*jobsetd)->pid());
  const double wall = absl::ToDoubleSeconds(absl::Now() - start);
  stop = true;
  for (std::thread& t : threads) t.join();
  std::sort(rtts_ms.begin(), rtts_ms.end());
  auto pct = [&](double p) {
    return rtts_ms.empty()
               ? 0.0
               : rtts_ms[std::min(rtts_ms.size() - 1,
                                  static_cast<size_t>(p * rtts_ms.size()))];
  };
  std::printf(
      "%s: agents %d (connected %d), interval %s, measured %.1fs\n"
      "heartbeats %zu (%.0f/s); round trip p50 %.2f ms, p99 %.2f ms, max "
      "%.2f ms\n"
      "jobsetd CPU %.1f%% of one core; RSS %.1f MiB\n",
      tls ? "mTLS" : "plaintext", n, connected.load(),
      absl::FormatDuration(interval).c_str(), wall, rtts_ms.size(),
      rtts_ms.size() / wall, pct(0.5), pct(0.99),
      rtts_ms.empty() ? 0.0 : rtts_ms.back(),
      100.0 * (after.cpu_seconds - before.cpu_seconds) / wall,
      after.rss_bytes / 1048576.0);
  (*jobsetd)->Kill(SIGTERM).IgnoreError();
  (*jobsetd)->Wait().IgnoreError();
  std::string cmd = absl::StrCat("rm -rf ", dir);
  return system(cmd.c_str()) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace jobset

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return jobset::Main();
}
