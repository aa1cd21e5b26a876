#include "agent/runtime/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/pod_files.h"

namespace jobset::agent {

namespace {

// Whether this kernel lists a task's children in /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN; Debian's kernels have it).
bool KernelListsChildren() {
  static const bool listed =
      access(absl::StrCat("/proc/self/task/", getpid(), "/children").c_str(),
             R_OK) == 0;
  return listed;
}

// The direct children of `pid`, from the children file of each of its
// threads (a child belongs to the thread that forked it). A process that is
// gone has none.
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return out;
  while (struct dirent* entry = readdir(dir)) {
    int tid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &tid)) continue;
    absl::StatusOr<std::string> list =
        ReadFileToString(absl::StrCat(tasks, "/", tid, "/children"));
    if (!list.ok()) continue;
    for (absl::string_view word :
         absl::StrSplit(*list, ' ', absl::SkipWhitespace())) {
      int child = 0;
      if (absl::SimpleAtoi(word, &child) && child > 0) out.push_back(child);
    }
  }
  closedir(dir);
  return out;
}

}  // namespace

std::vector<pid_t> DescendantsByScan(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {};
  while (struct dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
    if (!stat.ok() || stat->exited()) continue;
    children[stat->ppid].push_back(pid);
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

std::vector<pid_t> Descendants(pid_t root) {
  if (!KernelListsChildren()) return DescendantsByScan(root);
  // Walks down from `root`: reads only the pod's own processes, not every
  // process on the host (a shim ends with this walk, so a host with
  // thousands of processes paid thousands of reads per pod).
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  // The pod's processes fork and exit while this reads: a pid met twice
  // (exited and reused below) is walked once, so the walk always ends.
  std::set<pid_t> seen = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t child : ChildrenOf(p)) {
      // Gone, exited (it has no children left), or already reparented
      // elsewhere since the list was read: not a live descendant.
      absl::StatusOr<ProcStat> stat = ReadProcStat(child);
      if (!stat.ok() || stat->exited() || stat->ppid != p ||
          !seen.insert(child).second) {
        continue;
      }
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
