#include "agent/runtime/cri/containerd_test_env.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/api.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace jobset::agent::testing {
namespace {

namespace v1 = ::runtime::v1;

constexpr const char* kPrograms[] = {
    "containerd", "containerd-shim-runc-v2", "runc",     "umoci",
    "skopeo",     "docker-registry",         "htpasswd", "catatonit"};
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kStopTimeout = absl::Seconds(10);

std::string FindProgram(const std::string& name) {
  for (const char* dir : {"/usr/bin", "/usr/sbin", "/bin", "/sbin",
                          "/usr/local/bin", "/usr/local/sbin"}) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  return text.size() <= 2000 ? text : text.substr(text.size() - 2000);
}

// Starts argv[0] (searched) with stdout and stderr appended to `log`.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const std::string& log) {
  const std::string program = FindProgram(argv[0]);
  if (program.empty()) {
    return absl::NotFoundError(absl::StrCat(argv[0], " is not installed"));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.data()));
  args.push_back(nullptr);
  const int fd =
      open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", log));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return absl::InternalError("fork");
  }
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    execv(program.c_str(), args.data());
    _exit(127);
  }
  close(fd);
  return pid;
}

// Runs argv to its end (bounded); an error names the command and its output.
absl::Status Run(const std::vector<std::string>& argv, const std::string& log) {
  absl::StatusOr<pid_t> pid = Spawn(argv, log);
  if (!pid.ok()) return pid.status();
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  int status = 0;
  while (true) {
    const pid_t r = waitpid(*pid, &status, WNOHANG);
    if (r == *pid) break;
    if (absl::Now() > deadline) {
      kill(*pid, SIGKILL);
      waitpid(*pid, &status, 0);
      return absl::DeadlineExceededError(
          absl::StrCat(absl::StrJoin(argv, " "), ": still running after 2m"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      absl::StrJoin(argv, " "), " failed (status ", status, "): ", Tail(log)));
}

// Stops `pid` (our child): SIGTERM, then SIGKILL after kStopTimeout.
void StopChild(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  const absl::Time deadline = absl::Now() + kStopTimeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Connects(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("mkdir ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Pids whose command line has "-address <socket>" (this containerd's
// shims).
std::vector<pid_t> ShimsOf(const std::string& socket) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) {
      continue;
    }
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
    std::vector<std::string> args = absl::StrSplit(cmdline, '\0');
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "-address" && args[i + 1] == socket) {
        pids.push_back(std::stoi(name));
        break;
      }
    }
  }
  return pids;
}

// Mount points under any of `dirs`, deepest first.
std::vector<std::string> MountsUnder(const std::vector<std::string>& dirs) {
  std::vector<std::string> mounts;
  std::ifstream in("/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 2) continue;
    for (const std::string& d : dirs) {
      if (!d.empty() && absl::StartsWith(fields[1], d + "/")) {
        mounts.push_back(fields[1]);
      }
    }
  }
  std::sort(mounts.begin(), mounts.end(),
            [](const std::string& a, const std::string& b) {
              return a.size() > b.size();
            });
  return mounts;
}

}  // namespace

std::string ContainerdUnavailable() {
  if (geteuid() != 0) return "needs root (containerd, runc, mounts)";
  for (const char* p : kPrograms) {
    if (FindProgram(p).empty()) {
      return absl::StrCat(p, " is not installed (tools/setup installs it)");
    }
  }
  if (access("/bin/busybox", X_OK) != 0) return "/bin/busybox is missing";
  std::error_code ec;
  std::filesystem::create_directories("/run/containerd", ec);
  if (ec) return absl::StrCat("cannot create /run/containerd: ", ec.message());
  return "";
}

absl::Status BuildBusyboxRootfs(
    const std::string& dir,
    const std::vector<std::pair<std::string, std::string>>& extra_files) {
  if (absl::Status s = MakeDirs(dir + "/bin"); !s.ok()) return s;
  for (const char* d : {"/etc", "/tmp", "/proc", "/sys", "/dev"}) {
    if (absl::Status s = MakeDirs(dir + d); !s.ok()) return s;
  }
  std::error_code ec;
  std::filesystem::copy_file("/bin/busybox", dir + "/bin/busybox",
                             std::filesystem::copy_options::overwrite_existing,
                             ec);
  if (ec) return absl::InternalError("copy /bin/busybox: " + ec.message());
  for (const char* applet : {"sh", "sleep", "echo", "cat", "id", "env", "pwd",
                             "ls", "true", "false"}) {
    const std::string link = absl::StrCat(dir, "/bin/", applet);
    unlink(link.c_str());
    if (symlink("busybox", link.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("symlink ", link));
    }
  }
  for (const auto& [from, to] : extra_files) {
    std::filesystem::copy_file(
        from, dir + to, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return absl::InternalError("copy " + from + ": " + ec.message());
  }
  return absl::OkStatus();
}

// ---- TestRegistry ----

absl::StatusOr<std::unique_ptr<TestRegistry>> TestRegistry::Start(
    const std::string& dir, const std::string& user,
    const std::string& password) {
  if (absl::Status s = MakeDirs(dir + "/data"); !s.ok()) return s;
  std::string auth;
  if (!user.empty()) {
    // registry 2.x accepts bcrypt only.
    const std::string htpasswd = dir + "/htpasswd";
    if (absl::Status s = Run({"htpasswd", "-bBc", htpasswd, user, password},
                             dir + "/htpasswd.log");
        !s.ok()) {
      return s;
    }
    auth = absl::StrCat(
        "auth:\n  htpasswd:\n    realm: jobset-test\n    path: ", htpasswd,
        "\n");
  }
  absl::Status last = absl::InternalError("no attempt");
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = FreePort();
    if (port <= 0) return absl::InternalError("no free loopback port");
    const std::string config = dir + "/registry.yml";
    if (absl::Status s = WriteFile(
            config, absl::StrCat("version: 0.1\nlog:\n  level: warn\n"
                                 "storage:\n  filesystem:\n    rootdirectory: ",
                                 dir, "/data\nhttp:\n  addr: 127.0.0.1:", port,
                                 "\n", auth));
        !s.ok()) {
      return s;
    }
    const std::string log = dir + "/registry.log";
    absl::StatusOr<pid_t> pid =
        Spawn({"docker-registry", "serve", config}, log);
    if (!pid.ok()) return pid.status();
    const absl::Time deadline = absl::Now() + kStartTimeout;
    bool exited = false;
    while (absl::Now() < deadline) {
      int status = 0;
      if (waitpid(*pid, &status, WNOHANG) == *pid) {
        exited = true;
        break;
      }
      if (Connects(port)) {
        return std::unique_ptr<TestRegistry>(
            new TestRegistry(dir, port, *pid, user, password));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    if (!exited) StopChild(*pid);
    last = absl::UnavailableError(absl::StrCat(
        "docker-registry did not serve on 127.0.0.1:", port, ": ", Tail(log)));
  }
  return last;
}

TestRegistry::~TestRegistry() {
  StopChild(pid_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string TestRegistry::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::StatusOr<std::string> TestRegistry::Push(const std::string& rootfs,
                                               const ImageConfig& config,
                                               const std::string& repo,
                                               const std::string& tag) {
  const std::string work = absl::StrCat(dir_, "/build-", ++pushes_);
  const std::string layout = work + "/layout";
  const std::string bundle = work + "/bundle";
  const std::string log = work + "/build.log";
  if (absl::Status s = MakeDirs(work); !s.ok()) return s;
  const std::string image = absl::StrCat(layout, ":", tag);
  for (const std::vector<std::string>& step :
       std::vector<std::vector<std::string>>{
           {"umoci", "init", "--layout", layout},
           {"umoci", "new", "--image", image},
           {"umoci", "unpack", "--image", image, bundle}}) {
    if (absl::Status s = Run(step, log); !s.ok()) return s;
  }
  if (absl::Status s =
          Run({"cp", "-a", rootfs + "/.", bundle + "/rootfs/"}, log);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Run({"umoci", "repack", "--image", image, bundle}, log);
      !s.ok()) {
    return s;
  }
  std::vector<std::string> cfg = {"umoci", "config", "--image", image};
  for (const std::string& e : config.entrypoint) {
    cfg.push_back("--config.entrypoint");
    cfg.push_back(e);
  }
  for (const std::string& c : config.cmd) {
    cfg.push_back("--config.cmd");
    cfg.push_back(c);
  }
  for (const std::string& e : config.env) {
    cfg.push_back("--config.env");
    cfg.push_back(e);
  }
  if (!config.working_dir.empty()) {
    cfg.push_back("--config.workingdir");
    cfg.push_back(config.working_dir);
  }
  if (!config.user.empty()) {
    cfg.push_back("--config.user");
    cfg.push_back(config.user);
  }
  if (cfg.size() > 4) {
    if (absl::Status s = Run(cfg, log); !s.ok()) return s;
  }
  const std::string ref = absl::StrCat(address(), "/", repo, ":", tag);
  std::vector<std::string> copy = {"skopeo", "copy", "--quiet",
                                   "--dest-tls-verify=false"};
  if (!user_.empty()) {
    copy.push_back("--dest-creds");
    copy.push_back(absl::StrCat(user_, ":", password_));
  }
  copy.push_back(absl::StrCat("oci:", image));
  copy.push_back(absl::StrCat("docker://", ref));
  if (absl::Status s = Run(copy, log); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  return ref;
}

// ---- TestContainerd ----

absl::StatusOr<std::unique_ptr<TestContainerd>> TestContainerd::Start(
    const std::string& dir) {
  std::unique_ptr<TestContainerd> c(new TestContainerd);
  c->dir_ = dir;
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  // A unix socket path has at most 107 bytes; the test's folder may be
  // longer.
  char socket_dir[] = "/tmp/jobset-ctrd-XXXXXX";
  if (mkdtemp(socket_dir) == nullptr) {
    return absl::InternalError("mkdtemp /tmp/jobset-ctrd-XXXXXX");
  }
  c->socket_dir_ = socket_dir;
  c->socket_ = c->socket_dir_ + "/containerd.sock";

  // The pause image, served anonymously (the sandbox pull has no secrets).
  const std::string pause_root = dir + "/pause-rootfs";
  if (absl::Status s = MakeDirs(pause_root); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::copy_file(
      FindProgram("catatonit"), pause_root + "/catatonit",
      std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return absl::InternalError("copy catatonit: " + ec.message());
  absl::StatusOr<std::unique_ptr<TestRegistry>> registry =
      TestRegistry::Start(dir + "/pause-registry");
  if (!registry.ok()) return registry.status();
  c->pause_registry_ = *std::move(registry);
  ImageConfig pause;
  pause.entrypoint = {"/catatonit", "-P"};
  absl::StatusOr<std::string> pause_ref =
      c->pause_registry_->Push(pause_root, pause, "pause", "3.6");
  if (!pause_ref.ok()) return pause_ref.status();
  c->sandbox_image_ = *pause_ref;

  for (const char* sub :
       {"/root", "/state", "/certs.d", "/cni/bin", "/cni/net.d"}) {
    if (absl::Status s = MakeDirs(dir + sub); !s.ok()) return s;
  }
  const std::string config = dir + "/config.toml";
  const std::string text = absl::StrCat(
      "version = 2\n",                  //
      "root = \"", dir, "/root\"\n",    //
      "state = \"", dir, "/state\"\n",  //
      "disabled_plugins = [\"io.containerd.snapshotter.v1.aufs\", "
      "\"io.containerd.snapshotter.v1.btrfs\", "
      "\"io.containerd.snapshotter.v1.zfs\", "
      "\"io.containerd.snapshotter.v1.devmapper\"]\n",  //
      "[grpc]\n  address = \"", c->socket_, "\"\n",
      "[plugins.\"io.containerd.grpc.v1.cri\"]\n", "  sandbox_image = \"",
      c->sandbox_image_, "\"\n", "  restrict_oom_score_adj = true\n",
      "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n",
      "    snapshotter = \"overlayfs\"\n",
      "    default_runtime_name = \"runc\"\n",
      "    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n",
      "      runtime_type = \"io.containerd.runc.v2\"\n",
      "      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc."
      "options]\n",
      "        SystemdCgroup = false\n",
      "  [plugins.\"io.containerd.grpc.v1.cri\".registry]\n",
      "    config_path = \"", dir, "/certs.d\"\n",
      "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n", "    bin_dir = \"",
      dir, "/cni/bin\"\n", "    conf_dir = \"", dir, "/cni/net.d\"\n");
  if (absl::Status s = WriteFile(config, text); !s.ok()) return s;
  const std::string log = dir + "/containerd.log";
  absl::StatusOr<pid_t> pid = Spawn({"containerd", "--config", config}, log);
  if (!pid.ok()) return pid.status();
  c->pid_ = *pid;

  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(c->endpoint(), grpc::InsecureChannelCredentials());
  auto stub = v1::RuntimeService::NewStub(channel);
  const absl::Time deadline = absl::Now() + kStartTimeout;
  std::string last;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(c->pid_, &status, WNOHANG) == c->pid_) {
      c->pid_ = 0;
      return absl::UnavailableError(
          absl::StrCat("containerd exited at start: ", Tail(log)));
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    v1::VersionRequest req;
    req.set_version("0.1.0");
    v1::VersionResponse resp;
    grpc::Status s = stub->Version(&ctx, req, &resp);
    if (s.ok() && resp.runtime_api_version() == "v1") return c;
    last = s.ok() ? resp.runtime_api_version() : s.error_message();
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::UnavailableError(absl::StrCat(
      "containerd did not answer CRI Version (", last, "): ", Tail(log)));
}

TestContainerd::~TestContainerd() { (void)Shutdown(); }

std::string TestContainerd::endpoint() const {
  return absl::StrCat("unix://", socket_);
}

absl::StatusOr<int> TestContainerd::RunningContainers() const {
  auto stub = v1::RuntimeService::NewStub(
      grpc::CreateChannel(endpoint(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListContainersRequest req;
  req.mutable_filter()->mutable_state()->set_state(v1::CONTAINER_RUNNING);
  v1::ListContainersResponse list;
  if (grpc::Status s = stub->ListContainers(&ctx, req, &list); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("ListContainers: ", s.error_message()));
  }
  return list.containers_size();
}

absl::Status TestContainerd::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  std::vector<std::string> ids;
  if (pid_ > 0 && Alive(pid_)) {
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(endpoint(), grpc::InsecureChannelCredentials());
    auto stub = v1::RuntimeService::NewStub(channel);
    auto call_ctx = [](grpc::ClientContext* ctx) {
      ctx->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    };
    {
      grpc::ClientContext ctx;
      call_ctx(&ctx);
      v1::ListContainersResponse list;
      if (stub->ListContainers(&ctx, v1::ListContainersRequest(), &list).ok()) {
        for (const v1::Container& k : list.containers()) {
          ids.push_back(k.id());
          grpc::ClientContext stop_ctx;
          call_ctx(&stop_ctx);
          v1::StopContainerRequest stop;
          stop.set_container_id(k.id());
          v1::StopContainerResponse stopped;
          (void)stub->StopContainer(&stop_ctx, stop, &stopped);
          grpc::ClientContext rm_ctx;
          call_ctx(&rm_ctx);
          v1::RemoveContainerRequest rm;
          rm.set_container_id(k.id());
          v1::RemoveContainerResponse removed;
          (void)stub->RemoveContainer(&rm_ctx, rm, &removed);
        }
      }
    }
    grpc::ClientContext ctx;
    call_ctx(&ctx);
    v1::ListPodSandboxResponse sandboxes;
    if (stub->ListPodSandbox(&ctx, v1::ListPodSandboxRequest(), &sandboxes)
            .ok()) {
      for (const v1::PodSandbox& s : sandboxes.items()) {
        ids.push_back(s.id());
        grpc::ClientContext stop_ctx;
        call_ctx(&stop_ctx);
        v1::StopPodSandboxRequest stop;
        stop.set_pod_sandbox_id(s.id());
        v1::StopPodSandboxResponse stopped;
        (void)stub->StopPodSandbox(&stop_ctx, stop, &stopped);
        grpc::ClientContext rm_ctx;
        call_ctx(&rm_ctx);
        v1::RemovePodSandboxRequest rm;
        rm.set_pod_sandbox_id(s.id());
        v1::RemovePodSandboxResponse removed;
        (void)stub->RemovePodSandbox(&rm_ctx, rm, &removed);
      }
    }
  }
  StopChild(pid_);
  pid_ = 0;
  std::string left;
  if (!socket_.empty()) {
    // Shims (and with them their containers) whose containerd is gone.
    for (pid_t shim : ShimsOf(socket_)) kill(shim, SIGKILL);
    const absl::Time deadline = absl::Now() + kStopTimeout;
    while (!ShimsOf(socket_).empty() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    if (!ShimsOf(socket_).empty()) left = "a containerd shim did not exit";
  }
  for (const std::string& m : MountsUnder({dir_, socket_dir_})) {
    umount2(m.c_str(), MNT_DETACH);
  }
  // The cgroups containerd made for our sandboxes and containers.
  std::error_code ec;
  for (const auto& hierarchy :
       std::filesystem::directory_iterator("/sys/fs/cgroup", ec)) {
    for (const std::string& id : ids) {
      rmdir((hierarchy.path() / "k8s.io" / id).c_str());
    }
  }
  pause_registry_.reset();
  if (!socket_dir_.empty()) std::filesystem::remove_all(socket_dir_, ec);
  std::filesystem::remove_all(dir_, ec);
  if (!left.empty()) return absl::InternalError(left);
  return absl::OkStatus();
}

}  // namespace jobset::agent::testing
