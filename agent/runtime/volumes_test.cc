#include "agent/runtime/volumes.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// The same (device, inode): the same object.
bool SameObject(int fd, const std::string& path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && lstat(path.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

TEST(ContainerMountsTest, AHostPathComesWithTheObjectChecked) {
  const std::string dir = TmpDir("opened");
  char* real = realpath(dir.c_str(), nullptr);
  ASSERT_NE(real, nullptr);
  const std::string base = real;
  free(real);
  google::protobuf::RepeatedPtrField<api::Volume> volumes;
  api::Volume* data = volumes.Add();
  data->set_name("data");
  *data->mutable_host_path() = HostPath(base + "/made", "DirectoryOrCreate");
  api::Volume* scratch = volumes.Add();
  scratch->set_name("scratch");
  scratch->mutable_empty_dir();
  api::Container c;
  api::VolumeMount* m = c.add_volume_mounts();
  m->set_name("data");
  m->set_mount_path("/data");
  m = c.add_volume_mounts();
  m->set_name("scratch");
  m->set_mount_path("/scratch");
  absl::StatusOr<std::vector<ContainerMount>> mounts =
      ContainerMounts("/pods/u", volumes, c);
  ASSERT_THAT(mounts.status(), IsOk());
  ASSERT_EQ(mounts->size(), 2u);
  // Made, then opened: the source stays the path as written (messages, the
  // oci and cri runtimes).
  EXPECT_EQ((*mounts)[0].source, base + "/made");
  EXPECT_TRUE((*mounts)[0].host_path);
  ASSERT_NE((*mounts)[0].host_path_fd, nullptr);
  EXPECT_TRUE(SameObject((*mounts)[0].host_path_fd->get(), base + "/made"));
  EXPECT_FALSE((*mounts)[1].host_path);
  EXPECT_EQ((*mounts)[1].host_path_fd, nullptr);

  // Type "" checks nothing: a path that is not there has no object yet.
  *data->mutable_host_path() = HostPath(base + "/missing", "");
  mounts = ContainerMounts("/pods/u", volumes, c);
  ASSERT_THAT(mounts.status(), IsOk());
  EXPECT_TRUE((*mounts)[0].host_path);
  EXPECT_EQ((*mounts)[0].host_path_fd, nullptr);

  // A link is refused before anything is made through it.
  ASSERT_EQ(symlink((base + "/made").c_str(), (base + "/link").c_str()), 0);
  *data->mutable_host_path() =
      HostPath(base + "/link/new", "DirectoryOrCreate");
  EXPECT_THAT(ContainerMounts("/pods/u", volumes, c).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a symbolic link")));
  struct stat st;
  EXPECT_NE(lstat((base + "/made/new").c_str(), &st), 0);
}

TEST(ContainerMountsTest, SecretAndConfigMapAreReadOnly) {
  google::protobuf::RepeatedPtrField<api::Volume> volumes;
  api::Volume* creds = volumes.Add();
  creds->set_name("creds");
  creds->mutable_secret()->set_secret_name("s");
  api::Volume* conf = volumes.Add();
  conf->set_name("conf");
  conf->mutable_config_map()->set_name("c");
  api::Container c;
  api::VolumeMount* m = c.add_volume_mounts();
  m->set_name("creds");
  m->set_mount_path("/creds");
  m = c.add_volume_mounts();
  m->set_name("conf");
  m->set_mount_path("/etc/app.yaml");
  m->set_sub_path("app.yaml");
  absl::StatusOr<std::vector<ContainerMount>> mounts =
      ContainerMounts("/pods/u", volumes, c);
  ASSERT_THAT(mounts.status(), IsOk());
  ASSERT_EQ(mounts->size(), 2u);
  EXPECT_EQ((*mounts)[0].source, "/pods/u/volumes/creds");
  EXPECT_TRUE((*mounts)[0].read_only);
  EXPECT_EQ((*mounts)[1].source, "/pods/u/volumes/conf");
  EXPECT_EQ((*mounts)[1].sub_path, "app.yaml");
  EXPECT_TRUE((*mounts)[1].read_only);
}

TEST(SecretVolumeSizeTest, PagesOfEveryFilePlusAMiBRounded) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  api::ConfigVolume v;
  EXPECT_EQ(SecretVolumeSize(v), int64_t{1} << 20);
  v.add_files()->set_data("x");
  v.add_files()->set_data("y");
  EXPECT_EQ(SecretVolumeSize(v), int64_t{2} << 20);
  // A thousand one-byte files take a thousand pages.
  for (int i = 0; i < 1000; ++i) v.add_files()->set_data("z");
  EXPECT_GE(SecretVolumeSize(v), (int64_t{1} << 20) + 1002 * page);
  EXPECT_EQ(SecretVolumeSize(v) % (int64_t{1} << 20), 0);
}

// As root, secret tmpfs mounts go into a mount namespace of the test's own.
void PrivateMounts() {
  if (geteuid() != 0) return;
  static const bool done = [] {
    return unshare(CLONE_NEWNS) == 0 &&
           mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
  }();
  ASSERT_TRUE(done) << strerror(errno);
}

api::ConfigFile* AddFile(api::ConfigVolume* v, const std::string& path,
                         const std::string& data, int mode) {
  api::ConfigFile* f = v->add_files();
  f->set_path(path);
  f->set_data(data);
  f->set_mode(mode);
  return f;
}

// A pod with secret volume "creds" (token 0644, tls/key 0400), configMap
// volume "conf" (app.yaml 0644) and secret volume "none" sent without files
// (an optional secret that is missing).
struct ConfigPod {
  ConfigPod() {
    api::Volume* v = pod.add_volumes();
    v->set_name("creds");
    v->mutable_secret()->set_secret_name("creds");
    v = pod.add_volumes();
    v->set_name("conf");
    v->mutable_config_map()->set_name("app");
    v = pod.add_volumes();
    v->set_name("none");
    v->mutable_secret()->set_secret_name("missing");
    pod.add_volumes()->set_name("scratch");  // no source: not touched
    api::ConfigVolume* creds = files.Add();
    creds->set_name("creds");
    creds->set_secret(true);
    AddFile(creds, "token", "s3cr3t-token", 0644);
    AddFile(creds, "tls/key", "s3cr3t-key", 0400);
    api::ConfigVolume* conf = files.Add();
    conf->set_name("conf");
    AddFile(conf, "app.yaml", "a: 1\n", 0644);
  }
  api::PodSpec pod;
  google::protobuf::RepeatedPtrField<api::ConfigVolume> files;
};

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

struct stat Stat(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path << ": " << strerror(errno);
  return st;
}

bool IsTmpfs(const std::string& path) {
  struct statfs fs = {};
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

TEST(PrepareConfigVolumesTest, FilesWithExactModesSecretsOnTmpfs) {
  PrivateMounts();
  const std::string dir = TmpDir("config");
  const ConfigPod p;
  const mode_t old_umask = umask(0077);  // must not narrow any mode
  absl::Status s = PrepareConfigVolumes(dir, p.pod, p.files);
  umask(old_umask);
  ASSERT_THAT(s, IsOk());
  const std::string creds = dir + "/volumes/creds";
  const std::string conf = dir + "/volumes/conf";
  EXPECT_EQ(Contents(creds + "/token"), "s3cr3t-token");
  EXPECT_EQ(Contents(creds + "/tls/key"), "s3cr3t-key");
  EXPECT_EQ(Contents(conf + "/app.yaml"), "a: 1\n");
  EXPECT_EQ(Stat(creds).st_mode & 07777, 0755u);
  EXPECT_EQ(Stat(creds + "/tls").st_mode & 07777, 0755u);
  EXPECT_EQ(Stat(creds + "/token").st_mode & 07777, 0644u);
  EXPECT_EQ(Stat(creds + "/tls/key").st_mode & 07777, 0400u);
  EXPECT_TRUE(S_ISDIR(Stat(dir + "/volumes/none").st_mode));
  EXPECT_EQ(Stat(dir + "/volumes/none").st_mode & 07777, 0755u);
  EXPECT_NE(access((dir + "/volumes/scratch").c_str(), F_OK), 0);
  EXPECT_FALSE(IsTmpfs(conf));
  if (geteuid() == 0) {
    EXPECT_TRUE(IsTmpfs(creds));
    EXPECT_TRUE(IsTmpfs(dir + "/volumes/none"));
    // Gone with the tmpfs: the secret never was on the disk below.
    UnmountVolumes(dir, p.pod);
    EXPECT_FALSE(IsTmpfs(creds));
    EXPECT_NE(access((creds + "/token").c_str(), F_OK), 0);
    EXPECT_TRUE(S_ISDIR(Stat(creds).st_mode));
  }
}

TEST(PrepareConfigVolumesTest, PreparingAgainIsTheSame) {
  PrivateMounts();
  const std::string dir = TmpDir("again");
  const ConfigPod p;
  ASSERT_THAT(PrepareConfigVolumes(dir, p.pod, p.files), IsOk());
  ASSERT_THAT(PrepareConfigVolumes(dir, p.pod, p.files), IsOk());
  for (const char* v : {"creds", "conf"}) {
    EXPECT_EQ(Stat(dir + "/volumes/" + v).st_mode & 07777, 0755u) << v;
  }
  EXPECT_EQ(Contents(dir + "/volumes/creds/tls/key"), "s3cr3t-key");
  EXPECT_EQ(Stat(dir + "/volumes/creds/tls/key").st_mode & 07777, 0400u);
  EXPECT_EQ(Contents(dir + "/volumes/conf/app.yaml"), "a: 1\n");
  if (geteuid() == 0) {
    // One tmpfs, not two stacked: after one unmount the directory is bare.
    UnmountVolumes(dir, p.pod);
    EXPECT_FALSE(IsTmpfs(dir + "/volumes/creds"));
  }
}

TEST(PrepareConfigVolumesTest, FsGroupOwnsFilesAndDirectories) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another group needs root";
  PrivateMounts();
  const std::string dir = TmpDir("fsgroup-config");
  {
    // A sandbox's user namespace may map no group 2000.
    const std::string probe = dir + "/probe";
    ASSERT_EQ(close(creat(probe.c_str(), 0600)), 0);
    const bool mapped = chown(probe.c_str(), -1, 2000) == 0;
    const int err = errno;
    unlink(probe.c_str());
    if (!mapped) GTEST_SKIP() << "chown to gid 2000: " << strerror(err);
  }
  ConfigPod p;
  p.pod.mutable_security_context()->set_fs_group(2000);
  ASSERT_THAT(PrepareConfigVolumes(dir, p.pod, p.files), IsOk());
  const std::string creds = dir + "/volumes/creds";
  for (const auto& [path, mode] : std::vector<std::pair<std::string, mode_t>>{
           {creds, 02755},
           {creds + "/tls", 02755},
           {creds + "/token", 0644},
           {creds + "/tls/key", 0440},
           {dir + "/volumes/conf/app.yaml", 0644},
       }) {
    const struct stat st = Stat(path);
    EXPECT_EQ(st.st_mode & 07777, mode) << path;
    EXPECT_EQ(st.st_gid, 2000u) << path;
    EXPECT_EQ(st.st_uid, 0u) << path;
  }
  UnmountVolumes(dir, p.pod);
}

TEST(PrepareConfigVolumesTest, SymlinksAreNotFollowed) {
  const std::string dir = TmpDir("symlinks");
  const std::string outside = TmpDir("symlinks-outside");
  // A configMap volume (a plain directory) where symlinks were planted.
  api::PodSpec pod;
  api::Volume* v = pod.add_volumes();
  v->set_name("conf");
  v->mutable_config_map()->set_name("app");
  ASSERT_EQ(mkdir((dir + "/volumes").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir + "/volumes/conf").c_str(), 0755), 0);
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/volumes/conf/sub").c_str()), 0);
  ASSERT_EQ(close(creat((outside + "/file").c_str(), 0600)), 0);
  ASSERT_EQ(symlink((outside + "/file").c_str(),
                    (dir + "/volumes/conf/file").c_str()),
            0);
  for (const char* path : {"sub/key", "file"}) {
    google::protobuf::RepeatedPtrField<api::ConfigVolume> files;
    api::ConfigVolume* conf = files.Add();
    conf->set_name("conf");
    AddFile(conf, path, "s3cr3t", 0644);
    absl::Status s = PrepareConfigVolumes(dir, pod, files);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal,
                            HasSubstr("spec.volumes[0] (configMap volume "
                                      "\"conf\")")))
        << path;
    EXPECT_THAT(s.message(), HasSubstr(path));
    EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("s3cr3t")));
  }
  EXPECT_NE(access((outside + "/key").c_str(), F_OK), 0);
  EXPECT_EQ(Contents(outside + "/file"), "");
  // The volume's own directory a symlink: refused too.
  ASSERT_EQ(unlink((dir + "/volumes/conf/sub").c_str()), 0);
  ASSERT_EQ(unlink((dir + "/volumes/conf/file").c_str()), 0);
  ASSERT_EQ(rmdir((dir + "/volumes/conf").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/volumes/conf").c_str()), 0);
  google::protobuf::RepeatedPtrField<api::ConfigVolume> files;
  api::ConfigVolume* conf = files.Add();
  conf->set_name("conf");
  AddFile(conf, "key", "s3cr3t", 0644);
  EXPECT_THAT(
      PrepareConfigVolumes(dir, pod, files),
      StatusIs(absl::StatusCode::kInternal, HasSubstr("is not a directory")));
  EXPECT_NE(access((outside + "/key").c_str(), F_OK), 0);
}

TEST(HasTmpfsVolumeTest, MemoryEmptyDirOrSecret) {
  api::PodSpec pod;
  pod.add_volumes()->mutable_empty_dir();
  pod.add_volumes()->mutable_config_map();
  EXPECT_FALSE(HasTmpfsVolume(pod));
  pod.add_volumes()->mutable_secret();
  EXPECT_TRUE(HasTmpfsVolume(pod));
  api::PodSpec memory;
  memory.add_volumes()->mutable_empty_dir()->set_medium("Memory");
  EXPECT_TRUE(HasTmpfsVolume(memory));
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
