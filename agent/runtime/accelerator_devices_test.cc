#include "agent/runtime/accelerator_devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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
using ::testing::IsEmpty;

// A stand-in /dev: character devices with /dev/null's numbers (1, 3), so
// nothing real is named.
class AcceleratorDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dev_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/dev", ++counter);
    ASSERT_EQ(mkdir(dev_.c_str(), 0755), 0) << strerror(errno);
    ASSERT_EQ(mkdir((dev_ + "/vfio").c_str(), 0755), 0) << strerror(errno);
    if (mknod((dev_ + "/probe").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
      GTEST_SKIP() << "cannot make device nodes here (root, outside a "
                      "sandbox): "
                   << strerror(errno);
    }
  }

  void Node(const std::string& name, mode_t mode = 0666) {
    ASSERT_EQ(mknod((dev_ + "/" + name).c_str(), S_IFCHR | mode, makedev(1, 3)),
              0)
        << name << ": " << strerror(errno);
    ASSERT_EQ(chmod((dev_ + "/" + name).c_str(), mode), 0) << strerror(errno);
  }

  void File(const std::string& name) {
    std::ofstream(dev_ + "/" + name) << "not a device";
  }

  std::vector<std::string> Paths(const api::PodDevices& devices) {
    std::vector<std::string> paths;
    for (const AcceleratorDevice& d : AcceleratorDevices(devices, dev_)) {
      EXPECT_EQ(d.host_path, dev_ + d.container_path.substr(4));
      paths.push_back(d.container_path);
    }
    return paths;
  }

  std::string dev_;
};

api::PodDevices Gpus(std::vector<int> gpus, bool tpus = false) {
  api::PodDevices d;
  for (int g : gpus) d.add_nvidia_gpus(g);
  d.set_tpus(tpus);
  return d;
}

TEST_F(AcceleratorDevicesTest, GivesThePickedGpusAndTheDriversNodesOnly) {
  for (const char* name : {"nvidia0", "nvidia1", "nvidia2", "nvidiactl",
                           "nvidia-uvm", "nvidia-modeset"}) {
    Node(name);
  }
  File("nvidia-uvm-tools");  // not a character device
  Node("accel0");
  EXPECT_THAT(Paths(Gpus({2, 1})),
              ElementsAre("/dev/nvidia2", "/dev/nvidia1", "/dev/nvidiactl",
                          "/dev/nvidia-uvm", "/dev/nvidia-modeset"));
  // An index with no node, a repeated or a negative one add nothing.
  EXPECT_THAT(Paths(Gpus({7, 1, 1, -1})),
              ElementsAre("/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm",
                          "/dev/nvidia-modeset"));
  EXPECT_THAT(Paths(Gpus({})), IsEmpty());
}

TEST_F(AcceleratorDevicesTest, GivesEveryTpuNodeToATpuPod) {
  Node("accel1");
  Node("accel0");
  File("accel2");
  Node("vfio/vfio");
  Node("vfio/0");
  Node("nvidia0");
  Node("nvidiactl");
  EXPECT_THAT(Paths(Gpus({}, /*tpus=*/true)),
              ElementsAre("/dev/accel0", "/dev/accel1", "/dev/vfio/0",
                          "/dev/vfio/vfio"));
  EXPECT_THAT(Paths(Gpus({0}, /*tpus=*/false)),
              ElementsAre("/dev/nvidia0", "/dev/nvidiactl"));
}

TEST_F(AcceleratorDevicesTest, CarriesTheNodesNumbersModeAndOwner) {
  Node("nvidia3", 0620);
  ASSERT_EQ(chown((dev_ + "/nvidia3").c_str(), 12, 34), 0) << strerror(errno);
  std::vector<AcceleratorDevice> d = AcceleratorDevices(Gpus({3}), dev_);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].host_path, dev_ + "/nvidia3");
  EXPECT_EQ(d[0].container_path, "/dev/nvidia3");
  EXPECT_EQ(d[0].major, 1);
  EXPECT_EQ(d[0].minor, 3);
  EXPECT_EQ(d[0].file_mode, 0620u);
  EXPECT_EQ(d[0].uid, 12u);
  EXPECT_EQ(d[0].gid, 34u);
}

TEST(AcceleratorDevicesNoRootTest, AMissingDevRootGivesNothing) {
  EXPECT_THAT(AcceleratorDevices(Gpus({0}, true), "/nonexistent/dev"),
              IsEmpty());
}

// A stand-in driver: its libraries under <root>/usr/lib/x86_64-linux-gnu
// (libcuda.so.1 a symlink to its version, as the driver installs it) and
// nvidia-smi; and CDI specs in <root>/cdi.
TEST_F(AcceleratorDevicesTest,
       WithoutCdiTheHostDriversFilesAreMountedReadOnly) {
  Node("nvidia0");
  Node("nvidiactl");
  const std::string root = dev_ + "/driver";
  const std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  ASSERT_EQ(
      system(absl::StrCat("mkdir -p ", lib, " ", root, "/usr/bin").c_str()), 0);
  std::ofstream(lib + "/libcuda.so.535.104.05") << "cuda";
  ASSERT_EQ(symlink("libcuda.so.535.104.05", (lib + "/libcuda.so.1").c_str()),
            0);
  std::ofstream(lib + "/libnvidia-ml.so.1") << "nvml";
  std::ofstream(root + "/usr/bin/nvidia-smi") << "smi";
  AcceleratorOptions options;
  options.dev_root = dev_;
  options.driver_root = root;
  options.cdi_dirs = {root + "/cdi"};
  absl::StatusOr<AcceleratorSetup> setup =
      AcceleratorSetupFor(Gpus({0}), options);
  ASSERT_THAT(setup.status(), IsOk());
  ASSERT_EQ(setup->devices.size(), 2u);
  std::vector<std::string> mounts;
  for (const AcceleratorMount& m : setup->mounts) {
    EXPECT_EQ(m.host_path, root + m.container_path);
    EXPECT_TRUE(m.read_only);
    mounts.push_back(m.container_path);
  }
  EXPECT_THAT(mounts, ElementsAre("/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                  "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                  "/usr/bin/nvidia-smi"));
  EXPECT_THAT(setup->env, IsEmpty());
  EXPECT_EQ(setup->driver_source, "host driver (3 files)");

  // No GPU, no driver; TPUs need none.
  setup = AcceleratorSetupFor(Gpus({}, /*tpus=*/true), options);
  ASSERT_THAT(setup.status(), IsOk());
  EXPECT_THAT(setup->mounts, IsEmpty());
  EXPECT_EQ(setup->driver_source, "");
}

TEST_F(AcceleratorDevicesTest, ACdiSpecGivesItsEditsForTheAssignedGpus) {
  Node("nvidia0");
  Node("nvidia1");
  Node("nvidiactl");
  Node("nvidia-caps-imex");
  const std::string cdi = dev_ + "/cdi";
  ASSERT_EQ(mkdir(cdi.c_str(), 0755), 0);
  std::ofstream(cdi + "/nvidia.yaml") << absl::StrCat(
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n"
      "- name: \"1\"\n  containerEdits:\n    deviceNodes:\n"
      "    - {path: /dev/nvidia1, hostPath: ",
      dev_, "/nvidia1}\n",
      "- name: \"0\"\n  containerEdits:\n    deviceNodes:\n"
      "    - {path: /dev/nvidia0, hostPath: ",
      dev_, "/nvidia0}\n",
      "containerEdits:\n  env: [NVIDIA_CTK_LIBCUDA_DIR=/usr/lib64]\n"
      "  deviceNodes:\n"
      "  - {path: /dev/nvidia-caps/imex, hostPath: ",
      dev_,
      "/nvidia-caps-imex}\n"
      "  - {path: /dev/absent, hostPath: ",
      dev_,
      "/absent}\n"
      "  mounts:\n  - {hostPath: /usr/lib64/libcuda.so.1, containerPath: "
      "/usr/lib64/libcuda.so.1, options: [ro, bind]}\n"
      "  hooks:\n  - {hookName: createContainer, path: /usr/bin/nvidia-ctk,"
      " args: [nvidia-ctk, hook, create-symlinks, --link, "
      "\"libcuda.so.1::/usr/lib64/libcuda.so\"]}\n");
  AcceleratorOptions options;
  options.dev_root = dev_;
  options.driver_root = dev_ + "/no-driver-here";
  options.cdi_dirs = {cdi};
  absl::StatusOr<AcceleratorSetup> setup =
      AcceleratorSetupFor(Gpus({1}), options);
  ASSERT_THAT(setup.status(), IsOk());
  std::vector<std::string> devices;
  for (const AcceleratorDevice& d : setup->devices) {
    devices.push_back(d.container_path);
  }
  // Our own nodes first; the spec's nvidia1 is one of them; a node that does
  // not exist is left out; GPU 0 is not given.
  EXPECT_THAT(devices, ElementsAre("/dev/nvidia1", "/dev/nvidiactl",
                                   "/dev/nvidia-caps/imex"));
  ASSERT_EQ(setup->mounts.size(), 2u);
  EXPECT_EQ(setup->mounts[0].container_path, "/usr/lib64/libcuda.so.1");
  EXPECT_TRUE(setup->mounts[0].read_only);
  // The hook's symlink, as a mount of its target.
  EXPECT_EQ(setup->mounts[1].host_path, "/usr/lib64/libcuda.so.1");
  EXPECT_EQ(setup->mounts[1].container_path, "/usr/lib64/libcuda.so");
  EXPECT_TRUE(setup->mounts[1].read_only);
  EXPECT_THAT(setup->env, ElementsAre("NVIDIA_CTK_LIBCUDA_DIR=/usr/lib64"));
  EXPECT_EQ(setup->driver_source,
            absl::StrCat("CDI spec ", cdi,
                         "/nvidia.yaml (1 hooks not run: a CRI config cannot "
                         "carry them)"));

  // A GPU the spec does not name, and a spec that does not parse.
  EXPECT_THAT(
      AcceleratorSetupFor(Gpus({2}), options).status(),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"nvidia.com/gpu=2\"")));
  std::ofstream(cdi + "/nvidia.yaml") << "kind: [";
  EXPECT_THAT(AcceleratorSetupFor(Gpus({1}), options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(cdi + "/nvidia.yaml")));
}

}  // namespace
}  // namespace jobset::agent
