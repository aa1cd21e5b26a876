#include "store/etcd/etcd_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "auth/pki.h"
#include "common/status_macros.h"
#include "store/etcd/rpc.grpc.pb.h"

extern char** environ;

namespace jobset::store::testing {
namespace {

// Binds `count` sockets to 127.0.0.1:0 at once (so the ports differ), reads
// their ports and closes them.
absl::StatusOr<std::vector<int>> FreePorts(int count) {
  std::vector<int> fds;
  std::vector<int> ports;
  absl::Status status;
  for (int i = 0; i < count && status.ok(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      status = absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = absl::InternalError(absl::StrCat("bind: ", strerror(errno)));
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (!status.ok()) return status;
  return ports;
}

}  // namespace

std::string EtcdTestServer::Binary() {
  const char* env = std::getenv("JOBSET_ETCD");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/etcd";
}

bool EtcdTestServer::Available() { return access(Binary().c_str(), X_OK) == 0; }

std::string EtcdTestServer::Why() {
  return absl::StrCat(
      "etcd is not installed at ", Binary(),
      " (apt-get install etcd-server, or set JOBSET_ETCD): the etcd store "
      "tests need a real etcd");
}

absl::StatusOr<std::unique_ptr<EtcdTestServer>> EtcdTestServer::Start(
    const Options& options) {
  if (options.members < 1 || options.members > 7) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EtcdTestServer: members ", options.members, " is outside 1..7"));
  }
  if (!Available()) return absl::FailedPreconditionError(Why());
  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        "EtcdTestServer: mkdir ", options.dir, ": ", error.message()));
  }
  JOBSET_ASSIGN_OR_RETURN(std::vector<int> ports,
                          FreePorts(2 * options.members));
  std::unique_ptr<EtcdTestServer> server(new EtcdTestServer(options));
  server->token_ = absl::StrCat("jobset-test-", getpid(), "-", ports[0]);
  std::vector<std::string> cluster;
  for (int i = 0; i < options.members; ++i) {
    Member m;
    m.name = absl::StrCat("m", i);
    m.data_dir = absl::StrCat(options.dir, "/", m.name);
    m.log = absl::StrCat(options.dir, "/", m.name, ".log");
    m.client_port = ports[2 * i];
    m.peer_port = ports[2 * i + 1];
    cluster.push_back(absl::StrCat(m.name, "=", server->Scheme(),
                                   "://127.0.0.1:", m.peer_port));
    server->members_.push_back(std::move(m));
  }
  server->initial_cluster_ = absl::StrJoin(cluster, ",");
  if (options.tls) JOBSET_RETURN_IF_ERROR(server->MakeCertificates());
  for (int i = 0; i < options.members; ++i) {
    JOBSET_RETURN_IF_ERROR(server->Spawn(i));
  }
  const absl::Time deadline = absl::Now() + options.startup_timeout;
  for (int i = 0; i < options.members; ++i) {
    JOBSET_RETURN_IF_ERROR(server->WaitHealthy(
        i, std::max(deadline - absl::Now(), absl::Seconds(1))));
  }
  return server;
}

EtcdTestServer::~EtcdTestServer() {
  for (int i = 0; i < members(); ++i) (void)Kill(i);
}

std::vector<std::string> EtcdTestServer::endpoints() const {
  std::vector<std::string> out;
  for (const Member& m : members_) {
    out.push_back(absl::StrCat(Scheme(), "://127.0.0.1:", m.client_port));
  }
  return out;
}

absl::Status EtcdTestServer::Spawn(int i) {
  Member& m = members_[i];
  const std::string client =
      absl::StrCat(Scheme(), "://127.0.0.1:", m.client_port);
  const std::string peer = absl::StrCat(Scheme(), "://127.0.0.1:", m.peer_port);
  std::vector<std::string> args = {
      Binary(),
      "--name=" + m.name,
      "--data-dir=" + m.data_dir,
      "--listen-client-urls=" + client,
      "--advertise-client-urls=" + client,
      "--listen-peer-urls=" + peer,
      "--initial-advertise-peer-urls=" + peer,
      "--initial-cluster=" + initial_cluster_,
      "--initial-cluster-state=new",
      "--initial-cluster-token=" + token_,
  };
  if (options_.tls) {
    for (const char* side : {"", "peer-"}) {
      args.push_back(absl::StrCat("--", side, "cert-file=", member_cert_file_));
      args.push_back(absl::StrCat("--", side, "key-file=", member_key_file_));
      args.push_back(absl::StrCat("--", side, "trusted-ca-file=", ca_file_));
      args.push_back(absl::StrCat("--", side, "client-cert-auth"));
    }
  }
  for (const std::string& a : options_.extra_args) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, m.log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("EtcdTestServer: spawn ", argv[0], ": ", strerror(rc)));
  }
  m.pid = pid;
  return absl::OkStatus();
}

absl::Status EtcdTestServer::Kill(int i) {
  if (i < 0 || i >= members()) {
    return absl::InvalidArgumentError(absl::StrCat("no member ", i));
  }
  Member& m = members_[i];
  if (m.pid <= 0) return absl::FailedPreconditionError("member not running");
  kill(m.pid, SIGKILL);
  int status;
  waitpid(m.pid, &status, 0);
  m.pid = -1;
  return absl::OkStatus();
}

absl::Status EtcdTestServer::Restart(int i, absl::Duration timeout) {
  if (i < 0 || i >= members()) {
    return absl::InvalidArgumentError(absl::StrCat("no member ", i));
  }
  if (members_[i].pid > 0) JOBSET_RETURN_IF_ERROR(Kill(i));
  JOBSET_RETURN_IF_ERROR(Spawn(i));
  return WaitHealthy(i, timeout);
}

absl::Status EtcdTestServer::WaitHealthy(int i, absl::Duration timeout) {
  const Member& m = members_[i];
  // Short reconnect backoff: gRPC's default grows to seconds while etcd
  // is still starting.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  // A connection etcd accepted before it served can hang for about 10 s (a
  // plaintext gRPC client that waits for the server's SETTINGS, which etcd
  // 3.4's connection multiplexer sends only after it has matched the
  // connection): give up on an attempt after 3 s and try again.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 3000);
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (options_.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = tls_.ca.cert_pem;
    ssl.pem_cert_chain = tls_.client.cert_pem;
    ssl.pem_private_key = tls_.client.key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  const absl::Time deadline = absl::Now() + timeout;
  std::string last = "no answer";
  // Bounded: one attempt per 100 ms at most, until the deadline.
  for (int attempt = 0; attempt < 10'000 && absl::Now() < deadline; ++attempt) {
    int status;
    if (m.pid <= 0 || waitpid(m.pid, &status, WNOHANG) == m.pid) {
      members_[i].pid = -1;
      return absl::InternalError(
          absl::StrCat("etcd member ", m.name, " exited: ", LogTail(i)));
    }
    // A fresh channel per attempt: no connection from before etcd served.
    auto channel = grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", m.client_port), credentials, args);
    auto kv = etcdserverpb::KV::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(3)));
    etcdserverpb::RangeRequest request;
    request.set_key("health");
    etcdserverpb::RangeResponse response;
    const grpc::Status s = kv->Range(&context, request, &response);
    if (s.ok()) return absl::OkStatus();
    last = s.error_message();
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "etcd member ", m.name, " not healthy within ",
      absl::FormatDuration(timeout), " (", last, "); log: ", LogTail(i)));
}

absl::Status EtcdTestServer::MakeCertificates() {
  const absl::Time now = absl::Now();
  JOBSET_ASSIGN_OR_RETURN(tls_.ca, auth::CreateCa("jobset etcd test CA", now));
  JOBSET_ASSIGN_OR_RETURN(
      const auth::KeyAndCert member,
      auth::IssueKeyAndCertificate(tls_.ca,
                                   {.common_name = "etcd member",
                                    .dns_names = {"localhost"},
                                    .ip_addresses = {"127.0.0.1"},
                                    .server_auth = true,
                                    .client_auth = true},
                                   now));
  JOBSET_ASSIGN_OR_RETURN(
      tls_.client,
      auth::IssueKeyAndCertificate(
          tls_.ca, {.common_name = "jobsetd", .client_auth = true}, now));
  ca_file_ = absl::StrCat(options_.dir, "/ca.pem");
  member_cert_file_ = absl::StrCat(options_.dir, "/member.pem");
  member_key_file_ = absl::StrCat(options_.dir, "/member-key.pem");
  client_cert_file_ = absl::StrCat(options_.dir, "/client.pem");
  client_key_file_ = absl::StrCat(options_.dir, "/client-key.pem");
  for (const auto& [path, contents] :
       std::vector<std::pair<std::string, std::string>>{
           {ca_file_, tls_.ca.cert_pem},
           {member_cert_file_, member.cert_pem},
           {member_key_file_, member.key_pem},
           {client_cert_file_, tls_.client.cert_pem},
           {client_key_file_, tls_.client.key_pem}}) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
    out.close();
    if (!out) {
      return absl::InternalError(
          absl::StrCat("EtcdTestServer: cannot write ", path));
    }
  }
  return absl::OkStatus();
}

std::string EtcdTestServer::LogTail(int i, size_t max_bytes) const {
  std::ifstream in(members_[i].log);
  std::stringstream contents;
  contents << in.rdbuf();
  std::string s = contents.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

}  // namespace jobset::store::testing
