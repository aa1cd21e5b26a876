#include "tests/e2e_support.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/shim_runtime.h"

namespace jobset::testing {

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                      std::getenv("TEST_WORKSPACE"), "/", path);
}

bool Eventually(const std::function<bool()>& done, absl::Duration timeout,
                absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(poll);
  }
  return done();
}

int RunCommand(const std::string& command, std::string* out) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    out->append(buffer, n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int CountLines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::vector<std::string> GatedPodCommand(const std::string& started,
                                         const std::string& gate) {
  return {"/bin/sh", "-c",
          absl::StrCat("echo $$ >> ", started, "; while [ ! -e ", gate,
                       " ]; do sleep 0.1; done")};
}

std::string PodIoDir() {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/pod-io");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  return dir;
}

void MountHostDir(api::JobSet* js, const std::string& dir) {
  for (api::ReplicatedJob& rj :
       *js->mutable_spec()->mutable_replicated_jobs()) {
    api::PodSpec* pod = rj.mutable_template_()
                            ->mutable_spec()
                            ->mutable_template_()
                            ->mutable_spec();
    api::Volume* v = pod->add_volumes();
    v->set_name("e2e-dir");
    v->mutable_host_path()->set_path(dir);
    for (auto* list :
         {pod->mutable_init_containers(), pod->mutable_containers()}) {
      for (api::Container& c : *list) {
        api::VolumeMount* m = c.add_volume_mounts();
        m->set_name("e2e-dir");
        m->set_mount_path(dir);
      }
    }
  }
}

bool AwaitNodesReady(const std::string& jobsetctl,
                     const std::vector<std::string>& nodes,
                     absl::Duration timeout, std::string* out) {
  return Eventually(
      [&] {
        out->clear();
        if (RunCommand(absl::StrCat(jobsetctl, " get nodes 2>&1"), out) != 0 ||
            absl::StrContains(*out, "NotReady")) {
          return false;
        }
        for (const std::string& node : nodes) {
          if (!absl::StrContains(*out, node)) return false;
        }
        return true;
      },
      timeout);
}

void RemovePods(const std::vector<std::string>& work_dirs) {
  for (const std::string& work_dir : work_dirs) {
    agent::ShimRuntime::Options options;
    options.work_dir = work_dir;
    options.shim_path = Runfile("agent/runtime/jobset-pod-shim");
    auto runtime = agent::ShimRuntime::Create(options);
    if (!runtime.ok()) continue;
    for (const agent::PodState& pod : (*runtime)->List()) {
      (*runtime)->Remove(pod.uid).IgnoreError();
    }
  }
}

}  // namespace jobset::testing
