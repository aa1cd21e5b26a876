#include "agent/runtime/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/pod_files.h"

namespace jobset::agent {

std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {};
  while (struct dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    absl::StatusOr<std::string> stat =
        ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
    if (!stat.ok()) continue;
    const size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(
        absl::string_view(*stat).substr(paren + 1), ' ', absl::SkipEmpty());
    int ppid = 0;
    if (fields.size() < 2 || fields[0] == "Z" ||
        !absl::SimpleAtoi(fields[1], &ppid)) {
      continue;
    }
    children[ppid].push_back(pid);
  }
  closedir(proc);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t child : children[p]) {
      out.push_back(child);
      todo.push_back(child);
    }
  }
  return out;
}

PodProcessTree::PodProcessTree(std::vector<std::string> cgroup_dirs)
    : cgroup_dirs_(std::move(cgroup_dirs)) {}

void PodProcessTree::SignalAll(int signal) const {
  if (!cgroup_dirs_.empty()) {
    if (signal == SIGKILL) {
      KillCgroups(cgroup_dirs_, 1);
    } else {
      SignalCgroups(cgroup_dirs_, signal);
    }
  }
  for (pid_t pid : Descendants(getpid())) kill(pid, signal);
}

bool PodProcessTree::HasDescendants() const {
  return !Descendants(getpid()).empty();
}

void PodProcessTree::KillLeftovers(Clock& clock, absl::Duration timeout) const {
  const absl::Time deadline = clock.Now() + timeout;
  while (clock.Now() < deadline) {
    std::vector<pid_t> left = Descendants(getpid());
    const bool cgroups_empty =
        cgroup_dirs_.empty() || KillCgroups(cgroup_dirs_, 1);
    for (pid_t pid : left) kill(pid, SIGKILL);
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (left.empty() && cgroups_empty) break;
    clock.SleepUntil(clock.Now() + absl::Milliseconds(5));
  }
}

}  // namespace jobset::agent
