#include "agent/runtime/pod_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/pod_phase.h"
#include "common/quote.h"
#include "common/status_macros.h"

namespace jobset::agent {
namespace {

absl::Status ErrnoError(absl::string_view what, const std::string& path,
                        int err) {
  std::string message = absl::StrCat(what, " ", path, ": ", strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

// Runs `fn` holding the lock of pod directory `dir` (an flock of the
// directory itself). kNotFound when `dir` does not exist.
absl::Status WithPodDirLock(const std::string& dir,
                            absl::FunctionRef<absl::Status()> fn) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", dir, errno);
  int locked;
  do {
    locked = flock(fd, LOCK_EX);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0) {
    const int error = errno;
    close(fd);
    return ErrnoError("flock", dir, error);
  }
  absl::Status status = fn();
  close(fd);  // Releases the lock.
  return status;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status MakeDirIfMissing(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("mkdir ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status FsyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", dir, errno);
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return ErrnoError("fsync", dir, err);
  return absl::OkStatus();
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view data,
                             mode_t mode, Durability durability) {
  const bool sync = durability == Durability::kHostCrash;
  const std::string tmp = absl::StrCat(path, ".tmp");
  // A stale .tmp (a crash between create and rename) may have another mode:
  // it goes, so the file is always created here, with `mode`.
  (void)unlink(tmp.c_str());
  const int fd = open(tmp.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("create", tmp, errno);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return ErrnoError("write", tmp, err);
    }
    done += static_cast<size_t>(n);
  }
  if (sync && fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return ErrnoError("fsync", tmp, err);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return ErrnoError("rename", tmp, err);
  }
  return sync ? FsyncDir(DirName(path)) : absl::OkStatus();
}

absl::Status WriteProtoAtomic(const std::string& path,
                              const google::protobuf::MessageLite& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("cannot serialize ", path));
  }
  return WriteFileAtomic(path, bytes);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  std::string out;
  char buf[8192];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return ErrnoError("read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

absl::Status ReadProtoFile(const std::string& path,
                           google::protobuf::MessageLite* message) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  if (!message->ParseFromString(*bytes)) {
    return absl::DataLossError(absl::StrCat("cannot parse ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<ProcStat> ReadProcStat(pid_t pid) {
  absl::StatusOr<std::string> text =
      ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("no process ", pid));
  // The command name (field 2) may hold spaces and parentheses: fields after
  // it are counted from the last ')'.
  const size_t paren = text->rfind(')');
  if (paren == std::string::npos) {
    return absl::DataLossError(absl::StrCat("bad /proc/", pid, "/stat"));
  }
  std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(*text).substr(paren + 1), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state), fields[1] field 4, fields[19] field 22.
  ProcStat stat;
  if (fields.size() < 20 || fields[0].size() != 1 ||
      !absl::SimpleAtoi(fields[1], &stat.ppid) ||
      !absl::SimpleAtoi(fields[19], &stat.start_time)) {
    return absl::DataLossError(absl::StrCat("bad /proc/", pid, "/stat"));
  }
  stat.state = fields[0][0];
  return stat;
}

absl::StatusOr<uint64_t> ProcStartTime(pid_t pid) {
  absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
  if (!stat.ok()) return stat.status();
  if (stat->exited()) {
    return absl::NotFoundError(absl::StrCat("process ", pid, " exited"));
  }
  return stat->start_time;
}

std::string FormatProcessId(const ProcessId& id) {
  return absl::StrCat(id.pid, " ", id.start_time, "\n");
}

absl::StatusOr<ProcessId> ParseProcessId(absl::string_view text) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
  ProcessId id;
  int pid = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &pid) || pid <= 0 ||
      !absl::SimpleAtoi(parts[1], &id.start_time)) {
    return absl::DataLossError(absl::StrCat("bad process id ", Quote(text)));
  }
  id.pid = pid;
  return id;
}

bool ProcessAlive(const ProcessId& id) {
  if (id.pid <= 0) return false;
  absl::StatusOr<uint64_t> start = ProcStartTime(id.pid);
  return start.ok() && *start == id.start_time;
}

bool IsFinalPhase(absl::string_view phase) {
  return phase == api::kPodSucceeded || phase == api::kPodFailed;
}

absl::Status RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError("stat", path, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return ErrnoError("opendir", path, errno);
    std::vector<std::string> names;
    while (struct dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      names.push_back(name);
    }
    closedir(dir);
    absl::Status first;
    for (const std::string& name : names) {
      absl::Status s = RemoveTree(absl::StrCat(path, "/", name));
      if (!s.ok() && first.ok()) first = s;
    }
    if (rmdir(path.c_str()) != 0 && errno != ENOENT) {
      if (first.ok()) first = ErrnoError("rmdir", path, errno);
    }
    return first;
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError("unlink", path, errno);
  }
  return absl::OkStatus();
}

absl::Status RewriteFileInPlace(const std::string& path,
                                absl::string_view data) {
  // Not truncated first: a reader meanwhile sees the old bytes or the new
  // ones, never an empty file (a host table only grows at its end, so the
  // lines before stay where they were).
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", strerror(errno)));
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = pwrite(fd, data.data() + done, data.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("write ", path, ": ", strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (ftruncate(fd, static_cast<off_t>(data.size())) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(
        absl::StrCat("truncate ", path, ": ", strerror(error)));
  }
  close(fd);
  return absl::OkStatus();
}

std::string HostsFileText(const api::PodAssignment& assignment) {
  const api::Pod& pod = assignment.pod();
  std::string hostname = pod.spec().hostname().empty() ? pod.metadata().name()
                                                       : pod.spec().hostname();
  if (hostname.empty()) hostname = pod.metadata().uid();
  std::string hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n";
  const std::string own_ip = pod.status().pod_ip().empty()
                                 ? pod.status().host_ip()
                                 : pod.status().pod_ip();
  // What reaches the file was checked (CheckAssignment, CheckHostEntries);
  // an address or name that is not one is left out all the same, so no
  // value can add a line.
  const bool own_ok = CheckIpAddress("", own_ip).ok();
  if (!CheckDnsSubdomain("", hostname).ok()) hostname = "localhost";
  // With a subdomain (JobSet's), the pod's FQDN comes first, as kubelet
  // writes it: it is the canonical name, so `hostname -f` prints it and a
  // launcher that compares an endpoint such as JOBSET_COORDINATOR with the
  // machine's names (PyTorch's c10d rendezvous) finds itself.
  const std::string fqdn = absl::StrCat(hostname, ".", pod.spec().subdomain());
  if (!pod.spec().subdomain().empty() && hostname != "localhost" &&
      CheckDnsSubdomain("", fqdn).ok()) {
    absl::StrAppend(&hosts, own_ok ? own_ip : "127.0.1.1", "\t", fqdn, "\t",
                    hostname, "\n");
  } else {
    absl::StrAppend(&hosts, own_ok ? own_ip : "127.0.1.1", "\t", hostname,
                    "\n");
  }
  for (const api::HostEntry& entry : assignment.hosts()) {
    if (entry.address().empty() || entry.names().empty()) continue;
    if (!CheckIpAddress("", entry.address()).ok()) continue;
    bool names_ok = true;
    for (const std::string& name : entry.names())
      names_ok &= CheckDnsSubdomain("", name).ok();
    if (!names_ok) continue;
    absl::StrAppend(&hosts, entry.address(), "\t",
                    absl::StrJoin(entry.names(), " "), "\n");
  }
  return hosts;
}

absl::Status WriteHostsFile(const std::string& pod_dir,
                            api::PodAssignment* assignment) {
  return WithPodDirLock(pod_dir, [&]() -> absl::Status {
    api::PodAssignment latest;
    JOBSET_RETURN_IF_ERROR(
        ReadProtoFile(absl::StrCat(pod_dir, "/", kAssignmentFile), &latest));
    *assignment->mutable_hosts() = latest.hosts();
    // Not secret (every pod sees its attempt's table) and read by whatever
    // user the pod's processes run as.
    return WriteFileAtomic(absl::StrCat(pod_dir, "/", kHostsFile),
                           HostsFileText(*assignment), 0644,
                           Durability::kProcessCrash);
  });
}

absl::Status UpdateHostsFile(
    const std::string& pod_dir,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) {
  return WithPodDirLock(pod_dir, [&]() -> absl::Status {
    const std::string path = absl::StrCat(pod_dir, "/", kAssignmentFile);
    api::PodAssignment assignment;
    JOBSET_RETURN_IF_ERROR(ReadProtoFile(path, &assignment));
    api::PodAssignment grown = assignment;
    *grown.mutable_hosts() = hosts;
    if (grown.SerializeAsString() == assignment.SerializeAsString()) {
      return absl::OkStatus();
    }
    JOBSET_RETURN_IF_ERROR(WriteProtoAtomic(path, grown));
    // Not written yet: the shim writes it from this assignment.
    const std::string hosts_path = absl::StrCat(pod_dir, "/", kHostsFile);
    struct stat st;
    if (stat(hosts_path.c_str(), &st) != 0) return absl::OkStatus();
    return RewriteFileInPlace(hosts_path, HostsFileText(grown));
  });
}

}  // namespace jobset::agent
