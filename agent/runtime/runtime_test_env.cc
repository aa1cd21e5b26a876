#include "agent/runtime/runtime_test_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/runtime/pod_files.h"

namespace jobset::agent::testing {
namespace {

absl::Status Mkdirs(const std::string& path) {
  std::string prefix;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        return absl::InternalError(
            absl::StrCat("mkdir ", prefix, ": ", strerror(errno)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  absl::StatusOr<std::string> bytes = ReadFileToString(from);
  if (!bytes.ok()) return bytes.status();
  absl::Status s = WriteFileAtomic(to, *bytes);
  if (!s.ok()) return s;
  if (chmod(to.c_str(), 0755) != 0) {
    return absl::InternalError(absl::StrCat("chmod ", to));
  }
  return absl::OkStatus();
}

}  // namespace

std::string RunfilePath(const std::string& rel) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr) {
    return absl::StrCat(srcdir, "/",
                        workspace == nullptr ? "jobsetd" : workspace, "/", rel);
  }
  // bazel run: <binary>.runfiles/jobsetd/<rel>.
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  self[n < 0 ? 0 : n] = '\0';
  return absl::StrCat(self, ".runfiles/jobsetd/", rel);
}

absl::Status BuildTestImage(const std::string& image_dir,
                            const std::string& helper) {
  const std::string rootfs = absl::StrCat(image_dir, "/testimg/rootfs");
  for (const char* dir : {"/bin", "/etc", "/tmp", "/proc", "/dev", "/sys"}) {
    absl::Status s = Mkdirs(absl::StrCat(rootfs, dir));
    if (!s.ok()) return s;
  }
  // As in every image: runc gives the tmpfs it mounts at /tmp the mode of
  // the image's directory, and a non-root user writes there.
  const std::string tmp = absl::StrCat(rootfs, "/tmp");
  if (chmod(tmp.c_str(), 01777) != 0) {
    return absl::InternalError(
        absl::StrCat("chmod ", tmp, ": ", strerror(errno)));
  }
  absl::Status s =
      CopyFile("/bin/busybox", absl::StrCat(rootfs, "/bin/busybox"));
  if (!s.ok()) return s;
  s = CopyFile(helper, absl::StrCat(rootfs, "/bin/helper"));
  if (!s.ok()) return s;
  for (const char* applet :
       {"sh", "true", "false", "sleep", "cat", "echo", "ls", "hostname", "test",
        "touch", "ln", "mkdir"}) {
    const std::string link = absl::StrCat(rootfs, "/bin/", applet);
    unlink(link.c_str());
    if (symlink("busybox", link.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("symlink ", link));
    }
  }
  return absl::OkStatus();
}

absl::Status OciAvailable() {
  if (geteuid() != 0) return absl::UnavailableError("oci mode needs root");
  if (access("/bin/busybox", X_OK) != 0) {
    return absl::UnavailableError(
        "no /bin/busybox (apt-get install busybox-static)");
  }
  // runc creates the container's cgroup in every hierarchy; a sandbox (such
  // as Bazel's linux-sandbox) may mount them read-only.
  for (const char* dir :
       {"/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids",
        "/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    struct stat st;
    if (stat(dir, &st) == 0 && access(dir, W_OK) != 0) {
      return absl::UnavailableError(
          absl::StrCat(dir, " is not writable here (", strerror(errno), ")"));
    }
  }
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    if (access(absl::StrCat(dir, "/runc").c_str(), X_OK) == 0) {
      return absl::OkStatus();
    }
  }
  return absl::UnavailableError("no runc (apt-get install runc)");
}

PodBuilder::PodBuilder(const std::string& uid) {
  api::Pod* pod = assignment_.mutable_pod();
  pod->mutable_metadata()->set_uid(uid);
  pod->mutable_metadata()->set_name(absl::StrCat("pod-", uid));
  pod->mutable_spec()->set_restart_policy("Never");
  pod->mutable_status()->set_host_ip("127.0.0.1");
  assignment_.set_pod_security_level("privileged");
}

PodBuilder& PodBuilder::SecurityLevel(const std::string& level) {
  assignment_.set_pod_security_level(level);
  return *this;
}

PodBuilder& PodBuilder::Container(const std::string& name,
                                  const std::vector<std::string>& command) {
  last_ = assignment_.mutable_pod()->mutable_spec()->add_containers();
  last_->set_name(name);
  last_->set_image(kTestImage);
  for (const std::string& c : command) last_->add_command(c);
  return *this;
}

PodBuilder& PodBuilder::InitContainer(const std::string& name,
                                      const std::vector<std::string>& command) {
  last_ = assignment_.mutable_pod()->mutable_spec()->add_init_containers();
  last_->set_name(name);
  last_->set_image(kTestImage);
  for (const std::string& c : command) last_->add_command(c);
  return *this;
}

PodBuilder& PodBuilder::Env(const std::string& name, const std::string& value) {
  api::EnvVar* e = last_->add_env();
  e->set_name(name);
  e->set_value(value);
  return *this;
}

PodBuilder& PodBuilder::WorkingDir(const std::string& dir) {
  last_->set_working_dir(dir);
  return *this;
}

PodBuilder& PodBuilder::MemoryLimit(const std::string& quantity) {
  (*last_->mutable_resources()->mutable_limits())["memory"] = quantity;
  return *this;
}

PodBuilder& PodBuilder::ReadinessProbe(const api::Probe& probe) {
  *last_->mutable_readiness_probe() = probe;
  return *this;
}

PodBuilder& PodBuilder::HostPathVolume(const std::string& path) {
  api::PodSpec* spec = assignment_.mutable_pod()->mutable_spec();
  const std::string name = absl::StrCat("vol", spec->volumes_size());
  api::Volume* v = spec->add_volumes();
  v->set_name(name);
  v->mutable_host_path()->set_path(path);
  api::VolumeMount* m = last_->add_volume_mounts();
  m->set_name(name);
  m->set_mount_path(path);
  return *this;
}

PodBuilder& PodBuilder::EmptyDirVolume(const std::string& name) {
  api::Volume* v = assignment_.mutable_pod()->mutable_spec()->add_volumes();
  v->set_name(name);
  v->mutable_empty_dir();
  return *this;
}

PodBuilder& PodBuilder::Mount(const std::string& name, const std::string& path,
                              const std::string& sub_path) {
  api::VolumeMount* m = last_->add_volume_mounts();
  m->set_name(name);
  m->set_mount_path(path);
  m->set_sub_path(sub_path);
  return *this;
}

PodBuilder& PodBuilder::RestartPolicy(const std::string& policy) {
  assignment_.mutable_pod()->mutable_spec()->set_restart_policy(policy);
  return *this;
}

PodBuilder& PodBuilder::Hostname(const std::string& hostname) {
  assignment_.mutable_pod()->mutable_spec()->set_hostname(hostname);
  return *this;
}

PodBuilder& PodBuilder::Grace(int seconds) {
  assignment_.mutable_pod()
      ->mutable_spec()
      ->set_termination_grace_period_seconds(seconds);
  return *this;
}

PodBuilder& PodBuilder::Host(const std::string& address,
                             const std::vector<std::string>& names) {
  api::HostEntry* h = assignment_.add_hosts();
  h->set_address(address);
  for (const std::string& n : names) h->add_names(n);
  return *this;
}

bool IsFinal(const api::PodStatus& status) {
  return IsFinalPhase(status.phase());
}

bool IsRunning(const api::PodStatus& status) {
  return status.phase() == "Running";
}

absl::StatusOr<PodState> WaitForPod(
    Runtime& runtime, const std::string& uid,
    const std::function<bool(const api::PodStatus&)>& done,
    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  PodState last;
  while (true) {
    for (PodState& pod : runtime.List()) {
      if (pod.uid != uid) continue;
      if (done(pod.status)) return pod;
      last = pod;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "pod ", uid, " not there after ", absl::FormatDuration(timeout),
          "; last status: ", last.status.ShortDebugString()));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace jobset::agent::testing
