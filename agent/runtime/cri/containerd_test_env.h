#ifndef JOBSET_AGENT_RUNTIME_CRI_CONTAINERD_TEST_ENV_H_
#define JOBSET_AGENT_RUNTIME_CRI_CONTAINERD_TEST_ENV_H_

// Test-only servers for the cri runtime, each private to the test that
// starts it (containers-cri.md §5, §8): a docker-registry on a loopback port
// chosen at run time (bcrypt htpasswd when given a user), images built with
// umoci and pushed with skopeo, and a containerd with every path under the
// test's folder and its socket in a short private folder. Processes are
// started and stopped by pid only; nothing outlives Shutdown or the
// destructors. Thread-compatible.

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace jobset::agent::testing {

// Why a private containerd cannot run here ("" when it can): not root, a
// missing program, /run/containerd (where containerd puts its shims'
// sockets whatever its config) not creatable.
std::string ContainerdUnavailable();

// An OCI image's config as umoci sets it; empty fields are left unset.
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;
  std::string working_dir;
  std::string user;
};

// A docker-registry on 127.0.0.1:<free port>, its files under `dir`.
class TestRegistry {
 public:
  // With `user` non-empty every request needs basic auth (user, password).
  static absl::StatusOr<std::unique_ptr<TestRegistry>> Start(
      const std::string& dir, const std::string& user = "",
      const std::string& password = "");
  ~TestRegistry();

  // "127.0.0.1:PORT".
  std::string address() const;
  // Builds an image whose root filesystem is a copy of directory `rootfs`,
  // with `config`, and pushes it as <address>/<repo>:<tag>, which it returns.
  absl::StatusOr<std::string> Push(const std::string& rootfs,
                                   const ImageConfig& config,
                                   const std::string& repo,
                                   const std::string& tag);

 private:
  TestRegistry(std::string dir, int port, pid_t pid, std::string user,
               std::string password)
      : dir_(std::move(dir)),
        port_(port),
        pid_(pid),
        user_(std::move(user)),
        password_(std::move(password)) {}

  const std::string dir_;
  const int port_;
  pid_t pid_;
  const std::string user_, password_;
  int pushes_ = 0;
};

// A private containerd (CRI plugin, overlayfs, runc, cgroupfs,
// restrict_oom_score_adj) whose sandbox image is a catatonit pause image
// served by its own anonymous TestRegistry.
class TestContainerd {
 public:
  static absl::StatusOr<std::unique_ptr<TestContainerd>> Start(
      const std::string& dir);
  ~TestContainerd();

  // "unix://<socket>".
  std::string endpoint() const;
  std::string sandbox_image() const { return sandbox_image_; }
  // How many containers it runs now (ListContainers, state RUNNING).
  absl::StatusOr<int> RunningContainers() const;

  // Removes every sandbox and container through CRI, stops containerd (by
  // its pid), kills any shim left whose command line names our socket,
  // unmounts what is still mounted under its folders (deepest first), removes
  // the containers' cgroups and the folders. Idempotent.
  absl::Status Shutdown();

 private:
  TestContainerd() = default;

  std::string dir_;
  std::string socket_dir_;
  std::string socket_;
  std::string sandbox_image_;
  pid_t pid_ = 0;
  std::unique_ptr<TestRegistry> pause_registry_;
  bool shut_down_ = false;
};

// Builds a root filesystem in `dir`: static busybox at /bin/busybox with
// the applets tests use (sh, sleep, echo, cat, id, env, pwd, ls, true,
// false) as relative symlinks, and each (host path, path in the rootfs) of
// `extra_files` copied in.
absl::Status BuildBusyboxRootfs(
    const std::string& dir,
    const std::vector<std::pair<std::string, std::string>>& extra_files = {});

}  // namespace jobset::agent::testing

#endif  // JOBSET_AGENT_RUNTIME_CRI_CONTAINERD_TEST_ENV_H_
