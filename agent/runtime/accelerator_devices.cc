#include "agent/runtime/accelerator_devices.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace jobset::agent {
namespace {

// Adds <dev_root>/<name> when it is a character device not added yet.
void AddIfCharDevice(const std::string& dev_root, const std::string& name,
                     std::set<std::string>* seen,
                     std::vector<AcceleratorDevice>* out) {
  if (!seen->insert(name).second) return;
  const std::string host_path = absl::StrCat(dev_root, "/", name);
  struct stat st;
  if (stat(host_path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return;
  AcceleratorDevice d;
  d.host_path = host_path;
  d.container_path = absl::StrCat("/dev/", name);
  d.major = major(st.st_rdev);
  d.minor = minor(st.st_rdev);
  d.file_mode = st.st_mode & 07777;
  d.uid = st.st_uid;
  d.gid = st.st_gid;
  out->push_back(std::move(d));
}

// The names in `dir` that start with `prefix`, sorted ("" if none).
std::vector<std::string> Names(const std::string& dir,
                               const std::string& prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (absl::StartsWith(name, prefix)) names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<AcceleratorDevice> AcceleratorDevices(
    const api::PodDevices& devices, const std::string& dev_root) {
  std::vector<AcceleratorDevice> out;
  std::set<std::string> seen;
  bool any_gpu = false;
  for (int32_t index : devices.nvidia_gpus()) {
    if (index < 0) continue;
    any_gpu = true;
    AddIfCharDevice(dev_root, absl::StrCat("nvidia", index), &seen, &out);
  }
  if (any_gpu) {
    // What the driver needs besides the GPUs' own nodes (what
    // nvidia-container-toolkit gives a container too).
    for (const char* name :
         {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}) {
      AddIfCharDevice(dev_root, name, &seen, &out);
    }
  }
  if (devices.tpus()) {
    for (const std::string& name : Names(dev_root, "accel")) {
      AddIfCharDevice(dev_root, name, &seen, &out);
    }
    for (const std::string& name : Names(dev_root + "/vfio", "")) {
      AddIfCharDevice(dev_root, absl::StrCat("vfio/", name), &seen, &out);
    }
  }
  return out;
}

}  // namespace jobset::agent
