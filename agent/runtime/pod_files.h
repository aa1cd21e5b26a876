#ifndef JOBSET_AGENT_RUNTIME_POD_FILES_H_
#define JOBSET_AGENT_RUNTIME_POD_FILES_H_

// The on-disk contract between ShimRuntime and jobset-pod-shim: the files of
// a pod directory (see agent/runtime/README.md) and the helpers both sides
// use to write them durably. Thread-compatible free functions.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/pod_input.h"
#include "google/protobuf/message_lite.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// Files inside <work_dir>/pods/<uid>/.
inline constexpr char kAssignmentFile[] =
    "assignment.pb";                                  // api::PodAssignment
inline constexpr char kStatusFile[] = "status.pb";    // api::PodStatus
inline constexpr char kShimPidFile[] = "shim.pid";    // "<pid> <starttime>\n"
inline constexpr char kShimLockFile[] = "shim.lock";  // flock'd by the shim
inline constexpr char kShimLogFile[] = "shim.log";    // the shim's stderr
inline constexpr char kStopFile[] = "stop";           // grace in ms, as text
inline constexpr char kCgroupsFile[] = "cgroups";     // one cgroup dir a line
inline constexpr char kHostsFile[] = "hosts";         // the pod's /etc/hosts

// What a file written by WriteFileAtomic survives. A pod's files matter
// across a restart of the agent or of a shim (which the page cache
// survives); what must survive the host's crash is only what says a pod
// existed and how it ended: its assignment (the launch intent) and its
// final status. After a host crash no pod runs, and a pod whose shim left
// no final status is reported lost (SupervisorLost), so everything else
// (the shim's pid, a running pod's status, its hosts and cgroups lists,
// stop and lease files) needs no fsync: each costs two on the launch path.
enum class Durability {
  kHostCrash,     // fsync of the file and of its directory
  kProcessCrash,  // rename only: readers see the old file or the new
};

// Writes `data` to `path` atomically: a temporary file beside it, created
// with `mode` (private by default; a umask can only narrow it), then (for
// kHostCrash) fsync, rename over `path`, (kHostCrash) fsync of the
// directory.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view data,
                             mode_t mode = 0600,
                             Durability durability = Durability::kHostCrash);

// Rewrites the file at `path` in place (same inode: a bind mount of it sees
// the new content), writing over the old bytes before cutting the rest, so
// that a reader never sees it empty.
absl::Status RewriteFileInPlace(const std::string& path,
                                absl::string_view data);

// The pod's /etc/hosts: localhost, the pod's own line (its FQDN
// "<hostname>.<subdomain>" first when it has a subdomain, then its hostname),
// and the JobSet attempt's host table.
std::string HostsFileText(const api::PodAssignment& assignment);

// The pod's hosts file. The agent may grow the host table while the shim is
// starting, between the shim reading the assignment and writing the file, so
// both sides read the assignment file and write the hosts file as one step,
// under the pod directory's lock (an flock of the directory):
//
// The shim's side: writes the hosts file of `assignment` (read when the shim
// started) with the host table the assignment file holds now, which it
// copies into `assignment`.
absl::Status WriteHostsFile(const std::string& pod_dir,
                            api::PodAssignment* assignment);
// The agent's side: sets the host table of the pod's assignment file, and
// rewrites the hosts file in place if the shim has written it. kNotFound when
// the pod has no assignment.
absl::Status UpdateHostsFile(
    const std::string& pod_dir,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts);

// Serializes `message` deterministically and writes it with WriteFileAtomic.
absl::Status WriteProtoAtomic(const std::string& path,
                              const google::protobuf::MessageLite& message);

// Returns the contents of `path`; kNotFound when it does not exist.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Parses `path` into `message`; kNotFound when missing, kDataLoss when the
// bytes do not parse.
absl::Status ReadProtoFile(const std::string& path,
                           google::protobuf::MessageLite* message);

// Fsyncs the directory `dir` (so a created or renamed entry is durable).
absl::Status FsyncDir(const std::string& dir);

// Creates directory `path` with `mode` (private by default) unless it
// exists; kInternal naming it otherwise. An existing directory keeps its mode.
absl::Status MakeDirIfMissing(const std::string& path, mode_t mode = 0700);

// What /proc/<pid>/stat says of a process.
struct ProcStat {
  char state = 0;           // field 3: 'R', 'S', ..., 'Z' (zombie), 'X'
  pid_t ppid = 0;           // field 4
  uint64_t start_time = 0;  // field 22, clock ticks since boot
  // Whether it has exited (a zombie, or dead and not yet gone).
  bool exited() const { return state == 'Z' || state == 'X'; }
};
// kNotFound when there is no such process; kDataLoss when the line does not
// parse.
absl::StatusOr<ProcStat> ReadProcStat(pid_t pid);

// Returns the start time of process `pid` (ProcStat::start_time); kNotFound
// when there is no such process or it has exited.
absl::StatusOr<uint64_t> ProcStartTime(pid_t pid);

// A process identified so that a reused pid is never mistaken for it.
struct ProcessId {
  pid_t pid = 0;
  uint64_t start_time = 0;
};
std::string FormatProcessId(const ProcessId& id);
absl::StatusOr<ProcessId> ParseProcessId(absl::string_view text);
// Returns true when `id` names a live (non-zombie) process.
bool ProcessAlive(const ProcessId& id);

// Returns true for the phases after which nothing changes.
bool IsFinalPhase(absl::string_view phase);

// Removes `path` and everything under it (no error if it does not exist).
// Does not cross into other file systems' mount points it cannot remove.
absl::Status RemoveTree(const std::string& path);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_POD_FILES_H_
