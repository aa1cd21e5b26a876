#include "agent/runtime/progress_dir.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/volumes.h"

namespace jobset::agent {
namespace {

void SetEnv(const std::string& file, api::Container* c) {
  auto* env = c->mutable_env();
  for (int i = env->size() - 1; i >= 0; --i) {
    if (env->Get(i).name() == kProgressEnv) env->DeleteSubrange(i, 1);
  }
  api::EnvVar* e = env->Add();
  e->set_name(kProgressEnv);
  e->set_value(file);
}

}  // namespace

std::string ProgressDirOf(const std::string& pod_dir) {
  return absl::StrCat(pod_dir, "/", kProgressDirName);
}

std::string ProgressFileInPod(const std::string& pod_dir, bool mounted) {
  return absl::StrCat(mounted ? kProgressMountPath : ProgressDirOf(pod_dir),
                      "/", kProgressFileName);
}

absl::Status MakeProgressDir(const std::string& pod_dir,
                             const api::PodSpec& pod) {
  const std::string dir = ProgressDirOf(pod_dir);
  if (absl::Status s = MakeDirIfMissing(dir); !s.ok()) return s;
  // Only root can give it to another user; otherwise the pod runs as the
  // agent's user, whose it is.
  if (geteuid() != 0) return absl::OkStatus();
  return OwnPodWritableDir(dir, pod);
}

void SetProgressEnv(const std::string& file, api::PodSpec* pod) {
  for (api::Container& c : *pod->mutable_init_containers()) SetEnv(file, &c);
  for (api::Container& c : *pod->mutable_containers()) SetEnv(file, &c);
}

}  // namespace jobset::agent
