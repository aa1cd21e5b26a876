#include "agent/runtime/cdi_spec.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The shape `nvidia-ctk cdi generate` writes (trimmed).
constexpr char kNvidiaYaml[] = R"(---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: "1"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
      hostPath: /host/dev/nvidia1
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
    - path: /dev/nvidia1
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  deviceNodes:
  - path: /dev/nvidiactl
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    options: [ro, nosuid, nodev, bind]
  - hostPath: /run/nvidia-persistenced/socket
    containerPath: /run/nvidia-persistenced/socket
    options: [nosuid, nodev, bind, noexec]
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args: [nvidia-ctk, hook, update-ldcache]
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args: [nvidia-ctk, hook, create-symlinks, --link,
           libcuda.so.535.104.05::/usr/lib/x86_64-linux-gnu/libcuda.so.1,
           "--link=/abs/t::/usr/lib/x86_64-linux-gnu/libcuda.so"]
)";

TEST(ParseCdiSpecTest, ReadsNvidiaCtksSpec) {
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(kNvidiaYaml, "/etc/cdi/nv.yaml");
  ASSERT_THAT(spec.status(), IsOk());
  EXPECT_EQ(spec->kind, "nvidia.com/gpu");
  ASSERT_EQ(spec->devices.size(), 3u);
  EXPECT_EQ(spec->devices[1].name, "1");
  ASSERT_EQ(spec->devices[1].edits.device_nodes.size(), 1u);
  EXPECT_EQ(spec->devices[1].edits.device_nodes[0].path, "/dev/nvidia1");
  EXPECT_EQ(spec->devices[1].edits.device_nodes[0].host_path,
            "/host/dev/nvidia1");
  // hostPath defaults to path.
  EXPECT_EQ(spec->devices[0].edits.device_nodes[0].host_path, "/dev/nvidia0");
  EXPECT_THAT(spec->edits.env, ElementsAre("NVIDIA_VISIBLE_DEVICES=void"));
  ASSERT_EQ(spec->edits.mounts.size(), 2u);
  EXPECT_TRUE(spec->edits.mounts[0].read_only);
  EXPECT_FALSE(spec->edits.mounts[1].read_only);
  EXPECT_EQ(spec->edits.hooks, 2);
  using Link = std::pair<std::string, std::string>;
  EXPECT_THAT(
      spec->edits.symlinks,
      ElementsAre(Link{"/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05",
                       "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
                  Link{"/abs/t", "/usr/lib/x86_64-linux-gnu/libcuda.so"}));
}

TEST(ParseCdiSpecTest, ReadsJson) {
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(
      R"({"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[)"
      R"({"name":"GPU-4cf8db2d","containerEdits":{"env":["A=1"]}}]})",
      "/var/run/cdi/nv.json");
  ASSERT_THAT(spec.status(), IsOk());
  ASSERT_EQ(spec->devices.size(), 1u);
  EXPECT_EQ(spec->devices[0].name, "GPU-4cf8db2d");
  EXPECT_THAT(spec->devices[0].edits.env, ElementsAre("A=1"));
}

TEST(ParseCdiSpecTest, RefusesWhatIsNotASpecNamingTheField) {
  const std::string head = "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n";
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"{{{", "CDI spec f: (file): does not parse"},
           {"- a\n- b\n", "(file): is not a mapping"},
           {"kind: nvidia.com/gpu\n", "cdiVersion: is missing"},
           {"cdiVersion: 0.5.0\nkind: gpu\n",
            "kind: \"gpu\" is not vendor/class"},
           {head + "devices: {a: 1}\n", "devices: is not a list"},
           {head + "devices:\n- name: \"-x\"\n",
            "devices[0].name: \"-x\" is not a device name"},
           {head + "devices:\n- name: a\n- name: a\n",
            "devices[1].name: \"a\" appears twice"},
           {head + "devices:\n- name: a\n  containerEdits:\n    mounts:\n"
                   "    - {hostPath: /x, containerPath: lib}\n",
            "devices[0].containerEdits.mounts[0].containerPath: \"lib\" is "
            "not absolute"},
           {head + "containerEdits:\n  deviceNodes:\n  - {hostPath: /dev/x}\n",
            "containerEdits.deviceNodes[0].path: \"\" is not absolute"},
           {head + "containerEdits:\n  env: [NOEQUALS]\n",
            "containerEdits.env[0]: \"NOEQUALS\" is not NAME=VALUE"},
           {head + "containerEdits:\n  env: [[a]]\n",
            "containerEdits.env[0]: is not a string"},
           {head + "containerEdits:\n  mounts: [{hostPath: [1]}]\n",
            "containerEdits.mounts[0].hostPath: is not a string"},
           {head + "containerEdits:\n  hooks:\n  - args: [create-symlinks, "
                   "--link, nocolons]\n",
            "containerEdits.hooks[0].args: \"nocolons\" is not TARGET::LINK"},
       }) {
    EXPECT_THAT(
        ParseCdiSpec(c.text, "f"),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.text;
  }
}

TEST(CdiEditsForTest, TheSpecsEditsOnceThenEachDevicesLaterFilesWin) {
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(kNvidiaYaml, "/etc/cdi/nv.yaml");
  ASSERT_THAT(spec.status(), IsOk());
  absl::StatusOr<CdiEdits> edits = CdiEditsFor({*spec}, {"1", "0"});
  ASSERT_THAT(edits.status(), IsOk());
  std::vector<std::string> nodes;
  for (const CdiDeviceNode& n : edits->device_nodes) nodes.push_back(n.path);
  EXPECT_THAT(nodes,
              ElementsAre("/dev/nvidiactl", "/dev/nvidia1", "/dev/nvidia0"));
  EXPECT_EQ(edits->mounts.size(), 2u);
  EXPECT_EQ(edits->hooks, 2);
  EXPECT_EQ(edits->symlinks.size(), 2u);

  // A later spec's device 1 replaces the earlier one's.
  absl::StatusOr<CdiSpec> later = ParseCdiSpec(
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"1\"\n"
      "  containerEdits:\n    env: [LATER=1]\n",
      "/var/run/cdi/nv.yaml");
  ASSERT_THAT(later.status(), IsOk());
  edits = CdiEditsFor({*spec, *later}, {"1"});
  ASSERT_THAT(edits.status(), IsOk());
  EXPECT_THAT(edits->env, ElementsAre("LATER=1"));
  EXPECT_TRUE(edits->device_nodes.empty());

  EXPECT_THAT(
      CdiEditsFor({*spec}, {"7"}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("no CDI spec has device "
                                                      "\"nvidia.com/gpu=7\"")));
}

TEST(LoadCdiSpecsTest, ReadsTheDirectoriesFilesOfTheKind) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/cdi-load");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/b-nvidia.yaml") << kNvidiaYaml;
  std::ofstream(dir + "/a-other.json")
      << R"({"cdiVersion":"0.5.0","kind":"vendor.com/net","devices":[]})";
  std::ofstream(dir + "/README") << "not a spec";
  absl::StatusOr<std::vector<CdiSpec>> specs =
      LoadCdiSpecs({dir + "/missing", dir}, "nvidia.com/gpu");
  ASSERT_THAT(specs.status(), IsOk());
  ASSERT_EQ(specs->size(), 1u);
  EXPECT_EQ((*specs)[0].path, dir + "/b-nvidia.yaml");

  std::ofstream(dir + "/c-broken.yaml") << "cdiVersion: [";
  EXPECT_THAT(LoadCdiSpecs({dir}, "nvidia.com/gpu"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(dir + "/c-broken.yaml")));
}

}  // namespace
}  // namespace jobset::agent
