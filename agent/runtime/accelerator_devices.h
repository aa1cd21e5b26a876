#ifndef JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_
#define JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_

// What the accelerators the agent gave a pod (PodAssignment.devices) need
// in its containers, which the oci and cri runtimes give them: the host
// device nodes, and for NVIDIA GPUs the host's user-space driver, from the
// NVIDIA container toolkit's CDI spec where one exists (cdi_spec.h), else
// the driver's libraries and tools found on the host. Reads the file system
// only; thread-compatible.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// One character device node to give a container.
struct AcceleratorDevice {
  std::string host_path;       // "<dev_root>/nvidia1"
  std::string container_path;  // "/dev/nvidia1": the same name under /dev
  int64_t major = 0;
  int64_t minor = 0;
  uint32_t file_mode = 0;  // permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// Returns the device nodes of `devices` under `dev_root` ("/dev"; tests use
// stand-ins): for GPU indices N, <dev_root>/nvidia<N> in that order, then
// nvidiactl, nvidia-uvm, nvidia-uvm-tools and nvidia-modeset; with tpus,
// <dev_root>/accel* and <dev_root>/vfio/* (sorted). Only character devices
// that exist are returned (stat: a symlink counts as what it points to);
// a negative or repeated index adds nothing.
std::vector<AcceleratorDevice> AcceleratorDevices(
    const api::PodDevices& devices, const std::string& dev_root = "/dev");

// A read-only bind mount of a host file.
struct AcceleratorMount {
  std::string host_path;
  std::string container_path;
  bool read_only = true;
};

struct AcceleratorOptions {
  std::string dev_root = "/dev";
  // Where the driver is installed ("/"; a driver container's root
  // elsewhere): its libraries are looked for under <driver_root>/usr/lib...
  std::string driver_root = "/";
  // Where CDI specs are (the CDI registry's defaults, lowest rank first).
  std::vector<std::string> cdi_dirs = {"/etc/cdi", "/var/run/cdi"};
};

// Everything a container of a pod with `devices` gets.
struct AcceleratorSetup {
  std::vector<AcceleratorDevice> devices;
  std::vector<AcceleratorMount> mounts;
  std::vector<std::string> env;  // "NAME=VALUE", after the container's own
  // Where the driver's files came from, for the agent's log:
  // "CDI spec /etc/cdi/nvidia.yaml (2 hooks not run)", "host driver (7
  // files)", "" without GPUs.
  std::string driver_source;
};

// AcceleratorDevices, and for NVIDIA GPUs the driver: with a CDI spec of
// kind nvidia.com/gpu in `cdi_dirs`, its edits for devices "<N>" (its device
// nodes that exist as character devices, its mounts, its env; its hooks
// cannot be run through CRI and are counted in driver_source, but the links
// of nvidia-ctk's create-symlinks hook are mounts of their targets); without
// one,
// the driver's libraries (libcuda.so.1, libnvidia-ml.so.1,
// libnvidia-ptxjitcompiler.so.1, libnvidia-nvvm.so.4, ... as
// nvidia-container-toolkit's "compute,utility" give) and nvidia-smi, each
// where it is under driver_root mounted read-only at the same path in the
// container (the multiarch directory a Debian or Ubuntu image searches).
// InvalidArgument for a CDI spec that does not parse, NotFound for a GPU no
// spec names: the container's start error.
absl::StatusOr<AcceleratorSetup> AcceleratorSetupFor(
    const api::PodDevices& devices, const AcceleratorOptions& options);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_
