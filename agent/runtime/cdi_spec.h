#ifndef JOBSET_AGENT_RUNTIME_CDI_SPEC_H_
#define JOBSET_AGENT_RUNTIME_CDI_SPEC_H_

// Container Device Interface specs (github.com/cncf-tags/container-device-
// interface, SPEC.md): the files a vendor's tooling writes under /etc/cdi
// and /var/run/cdi (`nvidia-ctk cdi generate`), YAML or JSON, each naming a
// kind ("nvidia.com/gpu"), its devices ("0", "1", "all", a UUID) and the
// container edits each needs (device nodes, mounts, env, hooks). containerd
// 1.6 reads none of them, so the agent applies the edits itself, to the CRI
// and OCI configs it writes. The files are the host's, but read as input
// that may be wrong: every field is checked, and a bad file is an error
// naming it, never a crash. Thread-compatible.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace jobset::agent {

struct CdiDeviceNode {
  std::string path;       // in the container
  std::string host_path;  // defaults to path
};

struct CdiMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;  // options hold "ro"
};

// What injecting devices asks of a container.
struct CdiEdits {
  std::vector<std::string> env;  // "NAME=VALUE"
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  // OCI hooks: a CRI config cannot carry them, so they are not run. Those
  // of nvidia-ctk's `hook create-symlinks --link TARGET::LINK` are read
  // (TARGET relative to LINK's directory, or absolute), so that the caller
  // can give the links as mounts; the others are counted.
  std::vector<std::pair<std::string, std::string>> symlinks;  // target, link
  int hooks = 0;  // not run, create-symlinks included
};

struct CdiDevice {
  std::string name;
  CdiEdits edits;
};

struct CdiSpec {
  std::string path;  // the file it came from
  std::string kind;  // "vendor/class"
  CdiEdits edits;    // the spec's own, applied with any of its devices
  std::vector<CdiDevice> devices;
};

// Parses one spec file's text; InvalidArgument naming `path` and the field
// (`devices[2].containerEdits.mounts[0].containerPath`) for anything that is
// not a spec: a missing kind or name, a relative path, a name that is not
// CDI's [A-Za-z0-9][A-Za-z0-9_.:-]*, more than 4096 devices or edits.
absl::StatusOr<CdiSpec> ParseCdiSpec(const std::string& text,
                                     const std::string& path);

// The specs of `kind` in `dirs` (*.yaml, *.yml, *.json, each at most 4 MiB,
// sorted by name; a later directory's spec of the same device wins, as the
// CDI registry ranks /var/run/cdi over /etc/cdi). A file that does not parse
// is an error naming it. Missing directories hold nothing.
absl::StatusOr<std::vector<CdiSpec>> LoadCdiSpecs(
    const std::vector<std::string>& dirs, const std::string& kind);

// The edits for devices `names` of `specs` (each spec's own edits once, for
// a spec one of whose devices is named, then each device's), or NotFound
// naming "kind=name" for a device no spec has. Empty edits for no names.
absl::StatusOr<CdiEdits> CdiEditsFor(const std::vector<CdiSpec>& specs,
                                     const std::vector<std::string>& names);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CDI_SPEC_H_
