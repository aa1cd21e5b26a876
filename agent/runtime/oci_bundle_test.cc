#include "agent/runtime/oci_bundle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

class OciBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR")) + "/img/busybox/rootfs";
    ASSERT_EQ(
        system(("mkdir -p " + root_ + "/bin " + root_ + "/usr/bin").c_str()),
        0);
    Touch(root_ + "/bin/busybox", 0755);
    Touch(root_ + "/bin/data", 0644);
    symlink("busybox", (root_ + "/bin/sh").c_str());
    symlink("/bin/busybox", (root_ + "/usr/bin/env").c_str());
    symlink("../../../../../../bin", (root_ + "/usr/bin/escape").c_str());
  }
  static void Touch(const std::string& path, mode_t mode) {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fclose(f);
    chmod(path.c_str(), mode);
  }
  std::string root_;
};

TEST_F(OciBundleTest, LookPathFollowsLinksInsideRoot) {
  EXPECT_THAT(LookPath(root_, "sh", ""), IsOkAndHolds("/bin/sh"));
  EXPECT_THAT(LookPath(root_, "env", "/usr/bin"), IsOkAndHolds("/usr/bin/env"));
  EXPECT_THAT(LookPath(root_, "data", ""),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("data")));
  EXPECT_THAT(LookPath(root_, "nope", ""),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("executable file not found in $PATH: nope")));
  EXPECT_THAT(LookPath(root_, "/bin/nope", ""),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/bin/nope")));
}

TEST_F(OciBundleTest, ResolveInRootNeverLeavesRoot) {
  EXPECT_THAT(ResolveInRoot(root_, "/usr/bin/env"),
              IsOkAndHolds(root_ + "/bin/busybox"));
  EXPECT_THAT(ResolveInRoot(root_, "/usr/bin/escape/busybox"),
              IsOkAndHolds(root_ + "/bin/busybox"));
  EXPECT_THAT(ResolveInRoot(root_, "/../../bin/sh"),
              IsOkAndHolds(root_ + "/bin/busybox"));
}

TEST_F(OciBundleTest, ImageRootfsStripsTagAndDigest) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/img";
  EXPECT_THAT(ImageRootfs(dir, "busybox"), IsOkAndHolds(root_));
  EXPECT_THAT(ImageRootfs(dir, "busybox:1.35"), IsOkAndHolds(root_));
  EXPECT_THAT(ImageRootfs(dir, "busybox@sha256:abc"), IsOkAndHolds(root_));
  EXPECT_THAT(ImageRootfs(dir, "alpine:3"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("alpine:3")));
  EXPECT_THAT(ImageRootfs(dir, "../etc"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ImageRootfs(dir, ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(OciConfigJsonTest, QuotesEverything) {
  OciSpec spec;
  spec.args = {"sh", "-c", "echo \"$(x)\""};
  spec.env = {"A=1"};
  spec.rootfs = "/img/rootfs";
  spec.hostname = "worker-0";
  spec.hosts_file = "/pods/u/hosts";
  spec.cgroups_path = "jobset-pods/u/main";
  spec.memory_limit = 67108864;
  const std::string json = OciConfigJson(spec);
  EXPECT_THAT(json,
              HasSubstr("\"args\":[\"sh\",\"-c\",\"echo \\\"$(x)\\\"\"]"));
  EXPECT_THAT(json, HasSubstr("\"hostname\":\"worker-0\""));
  EXPECT_THAT(json, HasSubstr("\"memory\":{\"limit\":67108864}"));
  EXPECT_THAT(json, HasSubstr("\"cgroupsPath\":\"jobset-pods/u/main\""));
  EXPECT_THAT(json,
              HasSubstr("{\"destination\":\"/etc/hosts\",\"type\":\"bind\","
                        "\"source\":\"/pods/u/hosts\""));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"network\"")));
}

TEST(OciConfigJsonTest, UserCapabilitiesAndPrivileged) {
  OciSpec spec;
  spec.uid = 1000;
  spec.gid = 3000;
  spec.additional_gids = {2000, 3000};
  spec.bounding_caps = {"CAP_NET_BIND_SERVICE"};
  spec.caps = {"CAP_NET_BIND_SERVICE"};
  spec.ambient_caps = {"CAP_NET_BIND_SERVICE"};
  spec.no_new_privileges = true;
  std::string json = OciConfigJson(spec);
  EXPECT_THAT(json, HasSubstr("\"user\":{\"uid\":1000,\"gid\":3000,"
                              "\"additionalGids\":[2000,3000]}"));
  EXPECT_THAT(json, HasSubstr("\"bounding\":[\"CAP_NET_BIND_SERVICE\"]"));
  EXPECT_THAT(json, HasSubstr("\"ambient\":[\"CAP_NET_BIND_SERVICE\"]"));
  EXPECT_THAT(json, HasSubstr("\"noNewPrivileges\":true"));
  EXPECT_THAT(json, HasSubstr("\"readonly\":true"));
  EXPECT_THAT(json, HasSubstr("\"allow\":false"));
  EXPECT_THAT(json, HasSubstr("\"/proc/kcore\""));
  spec.no_new_privileges = false;
  spec.privileged = true;
  spec.devices = {{"/dev/null", 'c', 1, 3, 0666, 0, 0}};
  json = OciConfigJson(spec);
  EXPECT_THAT(json, HasSubstr("\"noNewPrivileges\":false"));
  EXPECT_THAT(json, HasSubstr("\"allow\":true"));
  EXPECT_THAT(json, HasSubstr("\"maskedPaths\":[],\"readonlyPaths\":[]"));
  EXPECT_THAT(json, HasSubstr("{\"path\":\"/dev/null\",\"type\":\"c\","
                              "\"major\":1,\"minor\":3,\"fileMode\":438,"
                              "\"uid\":0,\"gid\":0}"));
}

TEST(OciConfigJsonTest, AcceleratorsAreCreatedAndAllowedOnly) {
  AcceleratorDevice gpu;
  gpu.host_path = "/standin/nvidia1";
  gpu.container_path = "/dev/nvidia1";
  gpu.major = 195;
  gpu.minor = 1;
  gpu.file_mode = 0666;
  gpu.gid = 44;
  AcceleratorDevice uvm = gpu;
  uvm.host_path = "/standin/nvidia-uvm";
  uvm.container_path = "/dev/nvidia-uvm";
  uvm.major = 508;
  uvm.minor = 0;
  OciSpec spec;
  spec.devices = OciAcceleratorDevices({gpu, uvm});
  const std::string json = OciConfigJson(spec);
  // Made at the container path with the host node's numbers and owner.
  EXPECT_THAT(json, HasSubstr("\"devices\":[{\"path\":\"/dev/nvidia1\","
                              "\"type\":\"c\",\"major\":195,\"minor\":1,"
                              "\"fileMode\":438,\"uid\":0,\"gid\":44},"
                              "{\"path\":\"/dev/nvidia-uvm\""));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("/standin")));
  // Everything denied, then exactly these allowed.
  EXPECT_THAT(json, HasSubstr("\"resources\":{\"devices\":["
                              "{\"allow\":false,\"access\":\"rwm\"},"
                              "{\"allow\":true,\"type\":\"c\",\"major\":195,"
                              "\"minor\":1,\"access\":\"rwm\"},"
                              "{\"allow\":true,\"type\":\"c\",\"major\":508,"
                              "\"minor\":0,\"access\":\"rwm\"}]"));
  // A pod with none gets the deny rule alone.
  EXPECT_THAT(OciConfigJson(OciSpec()),
              HasSubstr("\"resources\":{\"devices\":["
                        "{\"allow\":false,\"access\":\"rwm\"}]"));
}

TEST(HostDevicesTest, FindsDevNullAndSkipsPts) {
  bool null_found = false;
  for (const OciDevice& d : HostDevices()) {
    EXPECT_FALSE(absl::StartsWith(d.path, "/dev/pts/")) << d.path;
    if (d.path == "/dev/null") {
      null_found = true;
      EXPECT_EQ(d.type, 'c');
      EXPECT_EQ(d.major, 1);
      EXPECT_EQ(d.minor, 3);
    }
  }
  EXPECT_TRUE(null_found);
}

}  // namespace
}  // namespace jobset::agent
