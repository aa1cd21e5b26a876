// local-containerd: a private docker-registry (basic auth when a user is
// given) and a private containerd for `tools/demo --containers`, with one
// image built offline from busybox-static and pushed to the registry. It
// writes what a cluster needs to reach them to <dir>/env, runs until
// SIGTERM or SIGINT, and then removes every sandbox and container, stops
// both servers and unmounts what containerd mounted: nothing outlives it.
//
//   local-containerd --dir=DIR --registry_user=demo --registry_password=PW
//     --image=jobset-demo/trainer:1 --entrypoint=examples/containers/train.sh
//     --cmd=6 --image_user=1000:1000
//
// <dir>/env (shell assignments, written once both serve):
//   CRI_ENDPOINT=unix:///tmp/jobset-ctrd-XXXXXX/containerd.sock
//   REGISTRY=127.0.0.1:PORT
//   IMAGE=127.0.0.1:PORT/jobset-demo/trainer:1

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/cri/containerd_test_env.h"

ABSL_FLAG(std::string, dir, "",
          "folder for the registry's and containerd's files");
ABSL_FLAG(std::string, registry_user, "",
          "basic-auth user of the registry (empty: anonymous)");
ABSL_FLAG(std::string, registry_password, "", "its password");
ABSL_FLAG(std::string, image, "jobset-demo/trainer:1",
          "repository:tag of the image pushed");
ABSL_FLAG(std::string, entrypoint, "",
          "a script copied into the image as /bin/entrypoint, its ENTRYPOINT "
          "(empty: the image has none)");
ABSL_FLAG(std::string, cmd, "", "the image's CMD, comma-separated");
ABSL_FLAG(std::string, image_user, "", "the image's USER (uid[:gid])");

namespace {

using jobset::agent::testing::BuildBusyboxRootfs;
using jobset::agent::testing::ImageConfig;
using jobset::agent::testing::TestContainerd;
using jobset::agent::testing::TestRegistry;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "local-containerd: %s\n",
               std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) return Fail(absl::InvalidArgumentError("--dir is required"));
  const std::string image = absl::GetFlag(FLAGS_image);
  const std::vector<std::string> repo_tag = absl::StrSplit(image, ':');
  if (repo_tag.size() != 2 || repo_tag[0].empty() || repo_tag[1].empty()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--image=", image, ": want repository:tag")));
  }

  // Signals are taken by sigwait below; blocked before any thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto registry =
      TestRegistry::Start(dir + "/registry", absl::GetFlag(FLAGS_registry_user),
                          absl::GetFlag(FLAGS_registry_password));
  if (!registry.ok()) return Fail(registry.status());

  ImageConfig config;
  std::vector<std::pair<std::string, std::string>> files;
  if (const std::string script = absl::GetFlag(FLAGS_entrypoint);
      !script.empty()) {
    files.emplace_back(script, "/bin/entrypoint");
    config.entrypoint = {"/bin/entrypoint"};
  }
  if (const std::string cmd = absl::GetFlag(FLAGS_cmd); !cmd.empty()) {
    config.cmd = absl::StrSplit(cmd, ',');
  }
  config.env = {"PATH=/bin"};
  config.user = absl::GetFlag(FLAGS_image_user);
  const std::string rootfs = dir + "/image-rootfs";
  if (absl::Status s = BuildBusyboxRootfs(rootfs, files); !s.ok()) {
    return Fail(s);
  }
  absl::StatusOr<std::string> ref =
      (*registry)->Push(rootfs, config, repo_tag[0], repo_tag[1]);
  if (!ref.ok()) return Fail(ref.status());

  auto containerd = TestContainerd::Start(dir + "/containerd");
  if (!containerd.ok()) return Fail(containerd.status());

  {
    const std::string env = dir + "/env";
    std::ofstream out(env + ".tmp");
    out << "CRI_ENDPOINT=" << (*containerd)->endpoint() << "\n"
        << "REGISTRY=" << (*registry)->address() << "\n"
        << "IMAGE=" << *ref << "\n";
    out.close();
    if (!out || std::rename((env + ".tmp").c_str(), env.c_str()) != 0) {
      (void)(*containerd)->Shutdown();
      return Fail(absl::InternalError(absl::StrCat("cannot write ", env)));
    }
  }
  std::printf("local-containerd: containerd at %s, image %s\n",
              (*containerd)->endpoint().c_str(), ref->c_str());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop, &signal);
  absl::Status down = (*containerd)->Shutdown();
  registry->reset();  // Stops the registry (by its pid).
  if (!down.ok()) return Fail(down);
  return 0;
}
