#include "agent/runtime/accelerator_devices.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runtime/cdi_spec.h"

namespace jobset::agent {
namespace {

// Adds host_path at container_path when it is a character device.
bool AddCharDevice(const std::string& host_path,
                   const std::string& container_path,
                   std::vector<AcceleratorDevice>* out) {
  struct stat st;
  if (stat(host_path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  AcceleratorDevice d;
  d.host_path = host_path;
  d.container_path = container_path;
  d.major = major(st.st_rdev);
  d.minor = minor(st.st_rdev);
  d.file_mode = st.st_mode & 07777;
  d.uid = st.st_uid;
  d.gid = st.st_gid;
  out->push_back(std::move(d));
  return true;
}

// Adds <dev_root>/<name> when it is a character device not added yet.
void AddIfCharDevice(const std::string& dev_root, const std::string& name,
                     std::set<std::string>* seen,
                     std::vector<AcceleratorDevice>* out) {
  if (!seen->insert(name).second) return;
  AddCharDevice(absl::StrCat(dev_root, "/", name), absl::StrCat("/dev/", name),
                out);
}

// The driver's user-space files a CUDA program or nvidia-smi needs, as
// nvidia-container-toolkit's "compute" and "utility" capabilities list them.
constexpr const char* kDriverLibraries[] = {"libcuda.so.1",
                                            "libcudadebugger.so.1",
                                            "libnvidia-ml.so.1",
                                            "libnvidia-cfg.so.1",
                                            "libnvidia-ptxjitcompiler.so.1",
                                            "libnvidia-nvvm.so.4",
                                            "libnvidia-allocator.so.1",
                                            "libnvidia-opencl.so.1",
                                            "libnvidia-gpucomp.so.1"};
constexpr const char* kDriverLibraryDirs[] = {"/usr/lib/x86_64-linux-gnu",
                                              "/usr/lib/aarch64-linux-gnu",
                                              "/usr/lib64", "/usr/lib"};
constexpr const char* kDriverBinaries[] = {"nvidia-smi", "nvidia-debugdump",
                                           "nvidia-cuda-mps-control",
                                           "nvidia-cuda-mps-server"};

bool IsRegularFile(const std::string& path) {
  struct stat st;  // stat: a library is mostly a symlink to its version
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The host driver's files, each at its own path in the container.
std::vector<AcceleratorMount> HostDriverMounts(const std::string& root) {
  const std::string prefix = root == "/" ? "" : root;
  std::vector<AcceleratorMount> mounts;
  for (const char* name : kDriverLibraries) {
    for (const char* dir : kDriverLibraryDirs) {
      const std::string in_container = absl::StrCat(dir, "/", name);
      if (IsRegularFile(prefix + in_container)) {
        mounts.push_back({prefix + in_container, in_container, true});
        break;
      }
    }
  }
  for (const char* name : kDriverBinaries) {
    const std::string in_container = absl::StrCat("/usr/bin/", name);
    if (IsRegularFile(prefix + in_container)) {
      mounts.push_back({prefix + in_container, in_container, true});
    }
  }
  return mounts;
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

absl::StatusOr<AcceleratorSetup> AcceleratorSetupFor(
    const api::PodDevices& devices, const AcceleratorOptions& options) {
  AcceleratorSetup setup;
  setup.devices = AcceleratorDevices(devices, options.dev_root);
  std::vector<std::string> gpus;
  for (int32_t index : devices.nvidia_gpus()) {
    if (index >= 0) gpus.push_back(absl::StrCat(index));
  }
  if (gpus.empty()) return setup;
  absl::StatusOr<std::vector<CdiSpec>> specs =
      LoadCdiSpecs(options.cdi_dirs, "nvidia.com/gpu");
  if (!specs.ok()) return specs.status();
  if (specs->empty()) {
    setup.mounts = HostDriverMounts(options.driver_root);
    setup.driver_source =
        absl::StrCat("host driver (", setup.mounts.size(), " files)");
    return setup;
  }
  absl::StatusOr<CdiEdits> edits = CdiEditsFor(*specs, gpus);
  if (!edits.ok()) return edits.status();
  for (const CdiDeviceNode& n : edits->device_nodes) {
    const bool have = std::any_of(
        setup.devices.begin(), setup.devices.end(),
        [&](const AcceleratorDevice& d) { return d.container_path == n.path; });
    if (!have) AddCharDevice(n.host_path, n.path, &setup.devices);
  }
  for (const CdiMount& m : edits->mounts) {
    setup.mounts.push_back({m.host_path, m.container_path, m.read_only});
  }
  // nvidia-ctk's create-symlinks hook (libcuda.so.1 -> libcuda.so.<version>)
  // cannot run: each link is the mount of what it names, read-only.
  for (const auto& [target, link] : edits->symlinks) {
    for (const CdiMount& m : edits->mounts) {
      if (m.container_path == target) {
        setup.mounts.push_back({m.host_path, link, true});
        break;
      }
    }
  }
  setup.env = edits->env;
  std::vector<std::string> files;
  for (const CdiSpec& spec : *specs) files.push_back(spec.path);
  setup.driver_source = absl::StrCat("CDI spec ", absl::StrJoin(files, ", "));
  if (edits->hooks > 0) {
    absl::StrAppend(&setup.driver_source, " (", edits->hooks,
                    " hooks not run: a CRI config cannot carry them)");
  }
  return setup;
}

}  // namespace jobset::agent
