#include "agent/runtime/cgroups.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_files.h"

namespace jobset::agent {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::Status WriteSmall(const std::string& path, absl::string_view value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", strerror(errno)));
  }
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return absl::InternalError(
        absl::StrCat("write \"", value, "\" to ", path, ": ", strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  std::string prefix;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    absl::StrAppend(&prefix, "/", part);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("mkdir ", prefix, ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// Returns `dir` and every cgroup below it, deepest first.
void CollectDeepestFirst(const std::string& dir,
                         std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> children;
  while (struct dirent* entry = readdir(d)) {
    if (entry->d_type != DT_DIR) continue;
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    children.push_back(absl::StrCat(dir, "/", name));
  }
  closedir(d);
  for (const std::string& child : children) CollectDeepestFirst(child, out);
  out->push_back(dir);
}

std::vector<pid_t> ReadProcs(const std::string& dir) {
  std::vector<pid_t> pids;
  absl::StatusOr<std::string> text =
      ReadFileToString(absl::StrCat(dir, "/cgroup.procs"));
  if (!text.ok()) return pids;
  for (absl::string_view line :
       absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    int pid = 0;
    if (absl::SimpleAtoi(line, &pid) && pid > 0) pids.push_back(pid);
  }
  return pids;
}

int64_t ReadKeyedValue(const std::string& path, absl::string_view key) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return 0;
  for (absl::string_view line :
       absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(line, ' ');
    int64_t value = 0;
    if (kv.first == key && absl::SimpleAtoi(kv.second, &value)) return value;
  }
  return 0;
}

}  // namespace

absl::StatusOr<CgroupLayout> DetectCgroupLayout() {
  CgroupLayout layout;
  if (Exists("/sys/fs/cgroup/cgroup.controllers")) {
    layout.pure_v2 = true;
    layout.unified_mount = "/sys/fs/cgroup";
  } else {
    if (Exists("/sys/fs/cgroup/unified/cgroup.procs")) {
      layout.unified_mount = "/sys/fs/cgroup/unified";
    }
    if (Exists("/sys/fs/cgroup/memory/cgroup.procs")) {
      layout.memory_mount = "/sys/fs/cgroup/memory";
    }
    if (Exists("/sys/fs/cgroup/pids/cgroup.procs")) {
      layout.pids_mount = "/sys/fs/cgroup/pids";
    }
  }
  if (layout.unified_mount.empty() && layout.memory_mount.empty() &&
      layout.pids_mount.empty()) {
    return absl::UnavailableError("no cgroup hierarchy under /sys/fs/cgroup");
  }
  std::map<std::string, std::string> own_by_controller;
  absl::StatusOr<std::string> self = ReadFileToString("/proc/self/cgroup");
  if (!self.ok()) return self.status();
  for (absl::string_view line :
       absl::StrSplit(*self, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, ':');
    if (parts.size() < 3) continue;
    // The path may itself hold ':'; it is everything after the second one.
    const size_t second = line.find(':', line.find(':') + 1);
    std::string path(line.substr(second + 1));
    if (path == "/") path.clear();
    if (parts[0] == "0" && parts[1].empty()) layout.own_unified = path;
    std::string key(parts[1]);
    if (absl::StartsWith(key, "name=")) key = key.substr(5);
    if (!key.empty()) own_by_controller[key] = path;
    for (absl::string_view controller : absl::StrSplit(parts[1], ',')) {
      if (controller == "memory") layout.own_memory = path;
      if (controller == "pids") layout.own_pids = path;
    }
  }
  if (!layout.pure_v2) {
    DIR* d = opendir("/sys/fs/cgroup");
    while (d != nullptr) {
      struct dirent* entry = readdir(d);
      if (entry == nullptr) break;
      const std::string name = entry->d_name;
      if (entry->d_type != DT_DIR || name == "." || name == ".." ||
          name == "unified") {
        continue;
      }
      const std::string mount = absl::StrCat("/sys/fs/cgroup/", name);
      if (!Exists(absl::StrCat(mount, "/cgroup.procs"))) continue;
      layout.v1_all.emplace_back(mount, own_by_controller[name]);
    }
    if (d != nullptr) closedir(d);
  }
  return layout;
}

PodCgroups::PodCgroups(CgroupLayout layout, std::string root,
                       std::string pod_uid)
    : layout_(std::move(layout)),
      root_(std::move(root)),
      pod_uid_(std::move(pod_uid)) {}

std::string PodCgroups::Dir(const std::string& mount, const std::string& own,
                            const std::string& sub) const {
  std::string dir = mount;
  if (!absl::StartsWith(root_, "/")) absl::StrAppend(&dir, own);
  absl::StrAppend(&dir, "/", absl::StripPrefix(root_, "/"), "/", pod_uid_);
  if (!sub.empty()) absl::StrAppend(&dir, "/", sub);
  return dir;
}

std::vector<std::string> PodCgroups::PodDirs() const {
  std::vector<std::string> dirs;
  if (!layout_.unified_mount.empty()) {
    dirs.push_back(Dir(layout_.unified_mount, layout_.own_unified, ""));
  }
  if (!layout_.memory_mount.empty()) {
    dirs.push_back(Dir(layout_.memory_mount, layout_.own_memory, ""));
  }
  if (!layout_.pids_mount.empty()) {
    dirs.push_back(Dir(layout_.pids_mount, layout_.own_pids, ""));
  }
  return dirs;
}

std::vector<std::string> PodCgroups::AllPodDirs() const {
  std::vector<std::string> dirs = PodDirs();
  for (const auto& [mount, own] : layout_.v1_all) {
    const std::string dir = Dir(mount, own, "");
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      dirs.push_back(dir);
    }
  }
  return dirs;
}

absl::StatusOr<std::vector<std::string>> PodCgroups::CreatePod(
    int64_t pids_max) {
  std::vector<std::string> dirs = PodDirs();
  for (const std::string& dir : dirs) {
    absl::Status s = MakeDirs(dir);
    if (!s.ok()) return s;
  }
  if (layout_.pure_v2) {
    // Limits need the controllers enabled in every parent. The caller's own
    // cgroup may hold processes, where the kernel refuses (EBUSY): then the
    // pod runs without limits (logged by the caller), but is still tracked
    // and killed as a whole.
    std::string parent = layout_.unified_mount;
    if (!absl::StartsWith(root_, "/"))
      absl::StrAppend(&parent, layout_.own_unified);
    const std::string pod = dirs[0];
    std::string path = parent;
    std::vector<std::string> chain = {parent};
    for (absl::string_view part :
         absl::StrSplit(absl::string_view(pod).substr(parent.size()), '/',
                        absl::SkipEmpty())) {
      absl::StrAppend(&path, "/", part);
      chain.push_back(path);
    }
    for (const std::string& dir : chain) {
      (void)WriteSmall(absl::StrCat(dir, "/cgroup.subtree_control"),
                       "+memory +pids");
    }
    if (pids_max > 0 && Exists(absl::StrCat(pod, "/pids.max"))) {
      absl::Status s =
          WriteSmall(absl::StrCat(pod, "/pids.max"), absl::StrCat(pids_max));
      if (!s.ok()) return s;
    }
  } else if (pids_max > 0 && !layout_.pids_mount.empty()) {
    absl::Status s =
        WriteSmall(absl::StrCat(Dir(layout_.pids_mount, layout_.own_pids, ""),
                                "/pids.max"),
                   absl::StrCat(pids_max));
    if (!s.ok()) return s;
  }
  return dirs;
}

absl::StatusOr<std::vector<std::string>> PodCgroups::CreateContainer(
    const std::string& name, int64_t memory_limit) {
  std::vector<std::string> dirs;
  if (!layout_.unified_mount.empty()) {
    dirs.push_back(Dir(layout_.unified_mount, layout_.own_unified, name));
  }
  if (!layout_.memory_mount.empty()) {
    dirs.push_back(Dir(layout_.memory_mount, layout_.own_memory, name));
  }
  if (!layout_.pids_mount.empty()) {
    dirs.push_back(Dir(layout_.pids_mount, layout_.own_pids, name));
  }
  for (const std::string& dir : dirs) {
    if (absl::Status s = MakeDirIfMissing(dir); !s.ok()) return s;
  }
  if (memory_limit > 0) {
    std::string file;
    if (layout_.pure_v2) {
      file = absl::StrCat(dirs[0], "/memory.max");
    } else if (!layout_.memory_mount.empty()) {
      file = absl::StrCat(Dir(layout_.memory_mount, layout_.own_memory, name),
                          "/memory.limit_in_bytes");
    }
    if (file.empty() || !Exists(file)) {
      return absl::UnavailableError(
          "no memory controller to enforce the memory limit");
    }
    absl::Status s = WriteSmall(file, absl::StrCat(memory_limit));
    if (!s.ok()) return s;
  }
  return dirs;
}

int64_t PodCgroups::OomKills(const std::string& name) const {
  if (layout_.pure_v2) {
    return ReadKeyedValue(
        absl::StrCat(Dir(layout_.unified_mount, layout_.own_unified, name),
                     "/memory.events"),
        "oom_kill");
  }
  if (layout_.memory_mount.empty()) return 0;
  return ReadKeyedValue(
      absl::StrCat(Dir(layout_.memory_mount, layout_.own_memory, name),
                   "/memory.oom_control"),
      "oom_kill");
}

std::vector<pid_t> PodCgroups::Pids() const {
  std::vector<std::string> dirs;
  for (const std::string& pod : PodDirs()) CollectDeepestFirst(pod, &dirs);
  std::vector<pid_t> pids;
  for (const std::string& dir : dirs) {
    for (pid_t pid : ReadProcs(dir)) pids.push_back(pid);
  }
  return pids;
}

std::string PodCgroups::RuncCgroupsPath(const std::string& name) const {
  return absl::StrCat(root_, "/", pod_uid_, "/", name);
}

int JoinCgroupRaw(const char* procs_path, pid_t pid) {
  char buf[24];
  int len = 0;
  char rev[24];
  int n = 0;
  do {
    rev[n++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0);
  while (n > 0) buf[len++] = rev[--n];
  const int fd = open(procs_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t written = write(fd, buf, static_cast<size_t>(len));
  close(fd);
  return written == len ? 0 : -1;
}

void SignalCgroups(const std::vector<std::string>& dirs, int signal) {
  std::vector<std::string> all;
  for (const std::string& dir : dirs) CollectDeepestFirst(dir, &all);
  for (const std::string& dir : all) {
    for (pid_t pid : ReadProcs(dir)) kill(pid, signal);
  }
}

bool KillCgroups(const std::vector<std::string>& dirs, int attempts) {
  std::vector<std::string> all;
  for (const std::string& dir : dirs) CollectDeepestFirst(dir, &all);
  for (const std::string& dir : all) {
    const std::string kill_file = absl::StrCat(dir, "/cgroup.kill");
    if (Exists(kill_file)) (void)WriteSmall(kill_file, "1");
  }
  for (int i = 0; i < attempts; ++i) {
    bool empty = true;
    for (const std::string& dir : all) {
      for (pid_t pid : ReadProcs(dir)) {
        empty = false;
        kill(pid, SIGKILL);
      }
    }
    if (empty) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return false;
}

bool RemoveCgroups(const std::vector<std::string>& dirs) {
  bool ok = true;
  for (const std::string& dir : dirs) {
    std::vector<std::string> all;
    CollectDeepestFirst(dir, &all);
    for (const std::string& d : all) {
      if (rmdir(d.c_str()) != 0 && errno != ENOENT) ok = false;
    }
  }
  return ok;
}

}  // namespace jobset::agent
