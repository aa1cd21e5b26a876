#ifndef JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_
#define JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_

// The host device nodes of the accelerators the agent gave a pod
// (PodAssignment.devices), which the oci and cri runtimes give its
// containers. Reads the file system only; thread-compatible.

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_ACCELERATOR_DEVICES_H_
