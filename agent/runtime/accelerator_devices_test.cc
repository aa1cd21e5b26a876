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
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::testing::ElementsAre;
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

}  // namespace
}  // namespace jobset::agent
