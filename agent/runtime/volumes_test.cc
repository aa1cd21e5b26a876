#include "agent/runtime/volumes.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

std::string TmpDir(const std::string& name) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

api::HostPathVolumeSource HostPath(const std::string& path,
                                   const std::string& type) {
  api::HostPathVolumeSource h;
  h.set_path(path);
  h.set_type(type);
  return h;
}

api::Container WithMemory(const char* name, const char* limit) {
  api::Container c;
  c.set_name(name);
  if (limit != nullptr)
    (*c.mutable_resources()->mutable_limits())["memory"] = limit;
  return c;
}

TEST(MemoryVolumeSizeTest, SmallerOfSizeLimitAndPodLimit) {
  api::PodSpec pod;
  *pod.add_containers() = WithMemory("a", "1Gi");
  *pod.add_containers() = WithMemory("b", "1Gi");
  api::EmptyDirVolumeSource e;
  e.set_medium("Memory");
  EXPECT_EQ(*MemoryVolumeSize(pod, e, "f"), int64_t{2} << 30);
  e.set_size_limit("64Mi");
  EXPECT_EQ(*MemoryVolumeSize(pod, e, "f"), int64_t{64} << 20);
  e.set_size_limit("16Gi");
  EXPECT_EQ(*MemoryVolumeSize(pod, e, "f"), int64_t{2} << 30);
  // An init container asking more than the containers' sum sets the limit.
  *pod.add_init_containers() = WithMemory("i", "4Gi");
  EXPECT_EQ(*MemoryVolumeSize(pod, e, "f"), int64_t{4} << 30);
  // A container without a limit: the pod has none, sizeLimit alone.
  *pod.add_containers() = WithMemory("c", nullptr);
  EXPECT_EQ(*MemoryVolumeSize(pod, e, "f"), int64_t{16} << 30);
  e.clear_size_limit();
  EXPECT_FALSE(MemoryVolumeSize(pod, e, "f")->has_value());
  e.set_size_limit("0");
  EXPECT_FALSE(MemoryVolumeSize(pod, e, "f")->has_value());
  e.set_size_limit("lots");
  EXPECT_THAT(MemoryVolumeSize(pod, e, "spec.volumes[0].emptyDir").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.volumes[0].emptyDir.sizeLimit")));
}

TEST(HostPathTypeTest, KubeletsChecksAndMessages) {
  const std::string dir = TmpDir("hostpath");
  const std::string file = dir + "/file";
  ASSERT_EQ(close(creat(file.c_str(), 0600)), 0);
  EXPECT_THAT(CheckHostPathType(HostPath(dir + "/missing", "")), IsOk());
  EXPECT_THAT(CheckHostPathType(HostPath(dir, "Directory")), IsOk());
  EXPECT_THAT(
      CheckHostPathType(HostPath(file, "Directory")),
      StatusIs(absl::StatusCode::kNotFound,
               "hostPath type check failed: " + file + " is not a directory"));
  EXPECT_THAT(
      CheckHostPathType(HostPath(dir + "/none", "Directory")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("is not a directory")));
  EXPECT_THAT(CheckHostPathType(HostPath(file, "File")), IsOk());
  EXPECT_THAT(
      CheckHostPathType(HostPath(dir, "File")),
      StatusIs(absl::StatusCode::kNotFound,
               "hostPath type check failed: " + dir + " is not a file"));
  EXPECT_THAT(
      CheckHostPathType(HostPath(file, "Socket")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("is not a socket file")));
  EXPECT_THAT(CheckHostPathType(HostPath("/dev/null", "CharDevice")), IsOk());
  EXPECT_THAT(CheckHostPathType(HostPath(file, "CharDevice")),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("is not a character device")));
  EXPECT_THAT(CheckHostPathType(HostPath("/dev/null", "BlockDevice")),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("/dev/null is not a block device")));
  EXPECT_THAT(CheckHostPathType(HostPath(dir, "Folder")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Folder is an invalid volume type"));
}

TEST(HostPathTypeTest, SocketIsASocket) {
  // TEST_TMPDIR is too long for a socket address: a private dir in /tmp.
  char tmpl[] = "/tmp/jobset-volumes-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/s";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_THAT(CheckHostPathType(HostPath(path, "Socket")), IsOk());
  EXPECT_THAT(CheckHostPathType(HostPath(path, "File")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not a file")));
  close(fd);
  unlink(path.c_str());
  rmdir(tmpl);
}

TEST(HostPathTypeTest, OrCreateMakesWhatIsMissing) {
  const std::string dir = TmpDir("create");
  const std::string sub = dir + "/a/b";
  EXPECT_THAT(CheckHostPathType(HostPath(sub, "DirectoryOrCreate")), IsOk());
  struct stat st;
  ASSERT_EQ(stat(sub.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  const std::string file = dir + "/f";
  EXPECT_THAT(CheckHostPathType(HostPath(file, "FileOrCreate")), IsOk());
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // Existing, of the other kind: the check still applies.
  EXPECT_THAT(
      CheckHostPathType(HostPath(file, "DirectoryOrCreate")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("is not a directory")));
  EXPECT_THAT(
      CheckHostPathType(HostPath(sub, "FileOrCreate")),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("is not a file")));
  // FileOrCreate does not make parents (os.OpenFile).
  EXPECT_THAT(CheckHostPathType(HostPath(dir + "/x/y", "FileOrCreate")),
              StatusIs(absl::StatusCode::kInternal));
}

TEST(ContainerMountsTest, SourcesAndTypeChecks) {
  const std::string dir = TmpDir("mounts");
  google::protobuf::RepeatedPtrField<api::Volume> volumes;
  api::Volume* scratch = volumes.Add();
  scratch->set_name("scratch");
  scratch->mutable_empty_dir();
  api::Volume* data = volumes.Add();
  data->set_name("data");
  *data->mutable_host_path() = HostPath(dir, "Directory");
  api::Container c;
  api::VolumeMount* m = c.add_volume_mounts();
  m->set_name("data");
  m->set_mount_path("/data");
  m->set_read_only(true);
  m = c.add_volume_mounts();
  m->set_name("scratch");
  m->set_mount_path("/scratch");
  m->set_sub_path("a");
  absl::StatusOr<std::vector<ContainerMount>> mounts =
      ContainerMounts("/pods/u", volumes, c);
  ASSERT_THAT(mounts.status(), IsOk());
  ASSERT_EQ(mounts->size(), 2u);
  EXPECT_EQ((*mounts)[0].source, dir);
  EXPECT_TRUE((*mounts)[0].read_only);
  EXPECT_EQ((*mounts)[1].source, "/pods/u/volumes/scratch");
  EXPECT_EQ((*mounts)[1].sub_path, "a");
  EXPECT_EQ((*mounts)[1].index, 1);
  data->mutable_host_path()->set_type("File");
  EXPECT_THAT(ContainerMounts("/pods/u", volumes, c).status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("hostPath type check failed")));
}

TEST(HasMemoryVolumeTest, OnlyMemoryMedium) {
  api::PodSpec pod;
  pod.add_volumes()->mutable_empty_dir();
  EXPECT_FALSE(HasMemoryVolume(pod));
  pod.add_volumes()->mutable_empty_dir()->set_medium("Memory");
  EXPECT_TRUE(HasMemoryVolume(pod));
}

}  // namespace
}  // namespace jobset::agent
