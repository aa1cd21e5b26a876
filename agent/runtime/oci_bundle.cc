#include "agent/runtime/oci_bundle.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/json_quote.h"

namespace jobset::agent {
namespace {

// Splits an absolute in-root path into its components, dropping "." and
// resolving ".." without leaving the root.
void Push(std::vector<std::string>* parts, absl::string_view path) {
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts->empty()) parts->pop_back();
      continue;
    }
    parts->emplace_back(part);
  }
}

std::string JoinRoot(const std::string& root,
                     const std::vector<std::string>& parts) {
  std::string out = root == "/" ? "" : root;
  for (const std::string& p : parts) absl::StrAppend(&out, "/", p);
  return out.empty() ? "/" : out;
}

}  // namespace

absl::StatusOr<std::string> ResolveInRoot(const std::string& root,
                                          const std::string& path) {
  std::vector<std::string> todo_parts;
  Push(&todo_parts, path);
  std::vector<std::string> done;
  // Components still to walk, in order; a symlink's target is spliced in.
  std::vector<std::string> todo(todo_parts.rbegin(), todo_parts.rend());
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    done.push_back(part);
    const std::string full = JoinRoot(root, done);
    struct stat st;
    if (lstat(full.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(full, " does not exist"));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    if (++links > 40) {
      return absl::NotFoundError(absl::StrCat("too many links at ", full));
    }
    char target[4096];
    const ssize_t n = readlink(full.c_str(), target, sizeof(target) - 1);
    if (n < 0) return absl::NotFoundError(absl::StrCat("readlink ", full));
    target[n] = '\0';
    done.pop_back();
    if (target[0] == '/') done.clear();
    std::vector<std::string> link_parts;
    for (absl::string_view p :
         absl::StrSplit(absl::string_view(target), '/', absl::SkipEmpty())) {
      link_parts.emplace_back(p);
    }
    for (auto it = link_parts.rbegin(); it != link_parts.rend(); ++it) {
      todo.push_back(*it);
    }
    // ".." and "." inside link targets.
    while (!todo.empty() && (todo.back() == "." || todo.back() == "..")) {
      if (todo.back() == ".." && !done.empty()) done.pop_back();
      todo.pop_back();
    }
  }
  return JoinRoot(root, done);
}

absl::StatusOr<std::string> LookPath(const std::string& root,
                                     const std::string& command,
                                     const std::string& path_env) {
  if (command.empty()) {
    return absl::NotFoundError("empty command");
  }
  auto executable = [&](const std::string& in_root) -> bool {
    absl::StatusOr<std::string> host = ResolveInRoot(root, in_root);
    if (!host.ok()) return false;
    struct stat st;
    return stat(host->c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           (st.st_mode & 0111) != 0;
  };
  if (absl::StrContains(command, '/')) {
    if (command[0] != '/' && root != "/") {
      // Relative to the working directory inside an image: leave to runc.
      return command;
    }
    if (command[0] != '/' || executable(command)) return command;
    return absl::NotFoundError(
        absl::StrCat("executable file not found: ", command));
  }
  const std::string path = path_env.empty() ? kDefaultPath : path_env;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate =
        absl::StrCat(dir.empty() ? "." : dir, "/", command);
    if (executable(candidate)) return candidate;
  }
  return absl::NotFoundError(
      absl::StrCat("executable file not found in $PATH: ", command));
}

absl::StatusOr<std::string> ImageRootfs(const std::string& image_dir,
                                        const std::string& image) {
  if (image.empty()) {
    return absl::InvalidArgumentError("container has no image");
  }
  for (absl::string_view part : absl::StrSplit(image, '/')) {
    if (part == ".." || part == "." || part.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad image name \"", image, "\""));
    }
  }
  struct stat st;
  const std::string exact = absl::StrCat(image_dir, "/", image, "/rootfs");
  if (stat(exact.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return exact;
  // Strip a digest, then a tag (a ':' after the last '/').
  std::string name = image;
  if (size_t at = name.find('@'); at != std::string::npos) name.resize(at);
  const size_t slash = name.rfind('/');
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos &&
      (slash == std::string::npos || colon > slash)) {
    name.resize(colon);
  }
  const std::string untagged = absl::StrCat(image_dir, "/", name, "/rootfs");
  if (stat(untagged.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return untagged;
  return absl::NotFoundError(absl::StrCat("image \"", image,
                                          "\" not found: no directory ", exact,
                                          " or ", untagged));
}

namespace {

std::string QuoteList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
}

std::string Mount(absl::string_view dest, absl::string_view type,
                  absl::string_view source,
                  const std::vector<std::string>& options) {
  return absl::StrCat("{\"destination\":", JsonQuote(dest),
                      ",\"type\":", JsonQuote(type),
                      ",\"source\":", JsonQuote(source),
                      ",\"options\":", QuoteList(options), "}");
}

void AddDevices(const std::string& dir, int depth,
                std::vector<OciDevice>* out) {
  if (depth > 4) return;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = absl::StrCat(dir, "/", name);
    if (depth == 0 && (name == "pts" || name == "shm" || name == "mqueue" ||
                       name == "fd" || name == "console")) {
      continue;
    }
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      AddDevices(path, depth + 1, out);
    } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      OciDevice dev;
      dev.path = path;
      dev.type = S_ISCHR(st.st_mode) ? 'c' : 'b';
      dev.major = major(st.st_rdev);
      dev.minor = minor(st.st_rdev);
      dev.file_mode = st.st_mode & 07777;
      dev.uid = st.st_uid;
      dev.gid = st.st_gid;
      out->push_back(std::move(dev));
    }
  }
  closedir(d);
}

std::string UintList(const std::vector<uint32_t>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ","), "]");
}

}  // namespace

std::vector<OciDevice> HostDevices() {
  std::vector<OciDevice> out;
  AddDevices("/dev", 0, &out);
  return out;
}

std::vector<OciDevice> OciAcceleratorDevices(
    const std::vector<AcceleratorDevice>& devices) {
  std::vector<OciDevice> out;
  for (const AcceleratorDevice& d : devices) {
    out.push_back(
        {d.container_path, 'c', d.major, d.minor, d.file_mode, d.uid, d.gid});
  }
  return out;
}

std::string OciConfigJson(const OciSpec& spec) {
  const std::string caps = QuoteList(spec.caps);
  std::vector<std::string> mounts = {
      Mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}),
      Mount("/dev", "tmpfs", "tmpfs",
            {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
             "gid=5"}),
      Mount("/dev/shm", "tmpfs", "shm",
            {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs",
            {"nosuid", "noexec", "nodev", spec.privileged ? "rw" : "ro"}),
      Mount("/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777"}),
  };
  if (!spec.hosts_file.empty()) {
    mounts.push_back(
        Mount("/etc/hosts", "bind", spec.hosts_file, {"rbind", "ro"}));
  }
  for (const OciMount& m : spec.mounts) {
    std::vector<std::string> options = {"rbind"};
    options.push_back(m.read_only ? "ro" : "rw");
    mounts.push_back(Mount(m.destination, "bind", m.source, options));
  }
  std::string resources = absl::StrCat(
      "\"devices\":[{\"allow\":", spec.privileged ? "true" : "false",
      ",\"access\":\"rwm\"}");
  std::vector<std::string> devices;
  for (const OciDevice& d : spec.devices) {
    devices.push_back(absl::StrCat(
        "{\"path\":", JsonQuote(d.path), ",\"type\":\"", std::string(1, d.type),
        "\",\"major\":", d.major, ",\"minor\":", d.minor, ",\"fileMode\":",
        d.file_mode, ",\"uid\":", d.uid, ",\"gid\":", d.gid, "}"));
    // A node made in the container is of no use unless the device cgroup
    // lets it be opened (a privileged container's allows everything).
    if (!spec.privileged) {
      absl::StrAppend(&resources, ",{\"allow\":true,\"type\":\"",
                      std::string(1, d.type), "\",\"major\":", d.major,
                      ",\"minor\":", d.minor, ",\"access\":\"rwm\"}");
    }
  }
  absl::StrAppend(&resources, "]");
  if (spec.memory_limit > 0) {
    absl::StrAppend(&resources, ",\"memory\":{\"limit\":", spec.memory_limit,
                    "}");
  }
  if (spec.pids_limit > 0) {
    absl::StrAppend(&resources, ",\"pids\":{\"limit\":", spec.pids_limit, "}");
  }
  const std::string masked =
      spec.privileged
          ? "\"maskedPaths\":[],\"readonlyPaths\":[]"
          : "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\","
            "\"/proc/keys\",\"/proc/latency_stats\",\"/proc/timer_list\","
            "\"/proc/timer_stats\",\"/proc/sched_debug\",\"/sys/firmware\","
            "\"/proc/scsi\"],"
            "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\","
            "\"/proc/sys\",\"/proc/sysrq-trigger\"]";
  return absl::StrCat(
      "{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"terminal\":false,",
      "\"user\":{\"uid\":", spec.uid, ",\"gid\":", spec.gid,
      ",\"additionalGids\":", UintList(spec.additional_gids),
      "},\"args\":", QuoteList(spec.args), ",\"env\":", QuoteList(spec.env),
      ",\"cwd\":", JsonQuote(spec.cwd),
      ",\"capabilities\":{\"bounding\":", QuoteList(spec.bounding_caps),
      ",\"effective\":", caps, ",\"permitted\":", caps,
      ",\"inheritable\":", caps, ",\"ambient\":", QuoteList(spec.ambient_caps),
      "},\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":", spec.nofile,
      ",\"soft\":", spec.nofile,
      "}],\"noNewPrivileges\":", spec.no_new_privileges ? "true" : "false",
      "},", "\"root\":{\"path\":", JsonQuote(spec.rootfs),
      ",\"readonly\":true},", "\"hostname\":", JsonQuote(spec.hostname),
      ",\"mounts\":[", absl::StrJoin(mounts, ","),
      "],\"linux\":{\"cgroupsPath\":", JsonQuote(spec.cgroups_path),
      ",\"resources\":{", resources, "},\"devices\":[",
      absl::StrJoin(devices, ","), "],",
      "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":"
      "\"uts\"},{\"type\":\"mount\"}],",
      masked, "}}");
}

}  // namespace jobset::agent
