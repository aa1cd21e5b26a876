// A process-mode pod's private root (pod_root.h), with real pods through
// ShimRuntime: what a hostile pod tries to reach on its host, and what a
// training pod needs; and its hostPath mounts against a path replaced after
// its check. Needs root (namespaces, pivot_root); skipped otherwise.

#include "agent/runtime/pod_root.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/process_launcher.h"
#include "agent/runtime/runtime_test_env.h"
#include "agent/runtime/scoped_fd.h"
#include "agent/runtime/shim_runtime.h"
#include "agent/runtime/volumes.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::agent::testing::IsFinal;
using ::jobset::agent::testing::IsRunning;
using ::jobset::agent::testing::PodBuilder;
using ::jobset::agent::testing::RunfilePath;
using ::jobset::agent::testing::WaitForPod;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kTimeout = absl::Seconds(20);

std::vector<std::string> Sh(const std::string& script) {
  return {"/bin/busybox", "sh", "-c", script};
}

// Lines of the host's mount table that name `dir`.
std::vector<std::string> HostMountsUnder(const std::string& dir) {
  std::vector<std::string> found;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    if (absl::StrContains(line, dir)) found.push_back(line);
  }
  return found;
}

class PodRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root: namespaces, mounts and pivot_root";
    }
    if (access("/bin/busybox", X_OK) != 0) GTEST_SKIP() << "no /bin/busybox";
    static int counter = 0;
    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/podroot-", ++counter);
    work_dir_ = dir_ + "/work";
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    options_.work_dir = work_dir_;
    options_.shim_path = RunfilePath("agent/runtime/jobset-pod-shim");
    options_.cgroup_root = "jobset-test";
    options_.accelerators.dev_root = dir_ + "/dev";
    options_.accelerators.driver_root = dir_ + "/driver";
    options_.accelerators.cdi_dirs = {dir_ + "/cdi"};
    Recreate();
  }

  // A runtime with options_ (as an agent restarted with them).
  void Recreate() {
    runtime_.reset();
    absl::StatusOr<std::unique_ptr<ShimRuntime>> r =
        ShimRuntime::Create(options_);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = *std::move(r);
  }

  void TearDown() override {
    if (runtime_ == nullptr) return;
    for (const std::string& uid : started_) {
      EXPECT_THAT(runtime_->Remove(uid), IsOk());
    }
    // Every mount of a pod's root lived in its shim's namespaces.
    EXPECT_THAT(HostMountsUnder(dir_), ::testing::IsEmpty());
  }

  absl::Status Start(const api::PodAssignment& a) {
    started_.push_back(a.pod().metadata().uid());
    return runtime_->Start(a);
  }

  api::PodStatus WaitFinal(const std::string& uid) {
    absl::StatusOr<PodState> pod =
        WaitForPod(*runtime_, uid, IsFinal, kTimeout);
    EXPECT_THAT(pod.status(), IsOk());
    return pod.ok() ? pod->status : api::PodStatus();
  }

  std::string Log(const std::string& uid, const std::string& container) {
    return ReadFileToString(runtime_->LogPath(uid, container)).value_or("");
  }

  std::string dir_, work_dir_;
  ShimRuntime::Options options_;
  std::unique_ptr<ShimRuntime> runtime_;
  std::vector<std::string> started_;
};

// Issue 40: a root pod read the node's key, another pod's assignment (its
// resolved Secrets), the host's password hashes, made device nodes it could
// open, and saw every process of the host.
TEST_F(PodRootTest, APodReachesNoAgentStateNoHostSecretsAndNoHostPids) {
  const std::string key = work_dir_ + "/pki/node.key";
  ASSERT_EQ(mkdir((work_dir_ + "/pki").c_str(), 0700), 0);
  ASSERT_THAT(WriteFileAtomic(key, "FAKE-NODE-KEY-7f3a\n"), IsOk());
  api::PodAssignment victim = PodBuilder("victim")
                                  .Container("main", Sh("sleep 600"))
                                  .Env("DB_PASSWORD", "victim-secret-91c2")
                                  .Build();
  ASSERT_THAT(Start(victim), IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "victim", IsRunning, kTimeout).status(),
              IsOk());
  const std::string other = work_dir_ + "/pods/victim/assignment.pb";
  const std::string script = absl::StrCat(
      "for f in ", key, " ", other,
      " /etc/shadow /etc/gshadow; do if /bin/busybox cat $f 2>/dev/null; then "
      "echo \"read $f\"; else echo \"refused $f\"; fi; done; "
      "if /bin/busybox mknod /tmp/disk c 1 3 2>/dev/null && echo x "
      "2>/dev/null > /tmp/disk; then echo mknod-usable; else echo "
      "mknod-refused; fi; echo \"pid $$\"; if /bin/busybox test -e /proc/",
      getpid(), "; then echo sees-host-pids; fi; /bin/busybox ls ", work_dir_,
      "/pods; echo \"ipc $(/bin/busybox readlink /proc/self/ns/ipc)\"");
  api::PodAssignment a =
      PodBuilder("hostile").Container("main", Sh(script)).Build();
  a.mutable_pod()->mutable_spec()->mutable_security_context()->set_run_as_user(
      0);
  ASSERT_THAT(Start(a), IsOk());
  EXPECT_EQ(WaitFinal("hostile").phase(), "Succeeded");
  const std::string log = Log("hostile", "main");
  EXPECT_THAT(log, HasSubstr(absl::StrCat("refused ", key, "\n")));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("refused ", other, "\n")));
  EXPECT_THAT(log, Not(HasSubstr("FAKE-NODE-KEY")));
  EXPECT_THAT(log, Not(HasSubstr("victim-secret")));
  // /etc is the host's, its password hashes an empty file.
  absl::StatusOr<std::string> shadow = ReadFileToString("/etc/shadow");
  if (shadow.ok() && !shadow->empty()) {
    const std::string first = shadow->substr(0, shadow->find('\n'));
    EXPECT_THAT(log, Not(HasSubstr(first)));
  }
  EXPECT_THAT(log, HasSubstr("mknod-refused\n"));
  // Its shell is PID 2 (after the namespace's init); the test is not there.
  EXPECT_THAT(log, HasSubstr("pid 2\n"));
  EXPECT_THAT(log, Not(HasSubstr("sees-host-pids")));
  // Its IPC namespace (shared memory, semaphores) is the pod's, not the
  // host's.
  char host_ipc[64] = {};
  ASSERT_GT(readlink("/proc/self/ns/ipc", host_ipc, sizeof(host_ipc) - 1), 0);
  EXPECT_THAT(log, HasSubstr("ipc ipc:["));
  EXPECT_THAT(log, Not(HasSubstr(absl::StrCat("ipc ", host_ipc))));
  // The directories above the pod's work dir are empty in its root: its own
  // pod only, holding only work/.
  EXPECT_THAT(log, HasSubstr("hostile\n"));
  EXPECT_THAT(log, Not(HasSubstr("victim\n"))) << log;
}

// What a training pod needs: the host's python3 and libraries, its volumes
// (a configMap and an emptyDir at paths the host does not have), /dev/shm,
// its peers' names; run as a user that is not root.
TEST_F(PodRootTest, ANonRootPodRunsTheHostsPythonWithItsVolumes) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no python3";
  const std::string script =
      "import os, socket\n"
      "print('config', open('/conf/app.yaml').read().strip())\n"
      "open('/scratch/out', 'w').write('from-pod')\n"
      "open('/dev/shm/x', 'w').write('shm')\n"
      "print('shm', open('/dev/shm/x').read())\n"
      "print('peer', socket.gethostbyname('peer-0.sub'))\n"
      "print('pids', sorted(int(p) for p in os.listdir('/proc') "
      "if p.isdigit()))\n"
      "print('uid', os.getuid())\n"
      "open('in-cwd', 'w').write('cwd')\n";
  api::PodAssignment a =
      PodBuilder("python")
          .EmptyDirVolume("scratch")
          .Container("main", {"/usr/bin/python3", "-c", script})
          .Mount("scratch", "/scratch")
          .Mount("conf", "/conf")
          .Host("10.1.2.3", {"peer-0.sub", "peer-0"})
          .Build();
  api::PodSpec* spec = a.mutable_pod()->mutable_spec();
  spec->mutable_security_context()->set_run_as_user(1000);
  api::Volume* v = spec->add_volumes();
  v->set_name("conf");
  v->mutable_config_map()->set_name("app");
  api::ConfigVolume* config = a.add_config_volumes();
  config->set_name("conf");
  api::ConfigFile* f = config->add_files();
  f->set_path("app.yaml");
  f->set_data("a: 1\n");
  f->set_mode(0644);
  ASSERT_THAT(Start(a), IsOk());
  api::PodStatus s = WaitFinal("python");
  const std::string log = Log("python", "main");
  EXPECT_EQ(s.phase(), "Succeeded") << s.ShortDebugString() << "\n" << log;
  EXPECT_EQ(log,
            "config a: 1\nshm shm\npeer 10.1.2.3\npids [1, 2]\nuid 1000\n");
  EXPECT_EQ(ReadFileToString(work_dir_ + "/pods/python/volumes/scratch/out")
                .value_or(""),
            "from-pod");
  // Its default workingDir, the pod's work dir, is its to write.
  EXPECT_EQ(
      ReadFileToString(work_dir_ + "/pods/python/work/in-cwd").value_or(""),
      "cwd");
}

// A hostPath volume is the host's directory, beneath the pod's own /tmp
// too (a checkpoint directory), written by a user that is not root.
TEST_F(PodRootTest, AHostPathBeneathTmpIsTheHostsDirectory) {
  const std::string host =
      "/tmp/jobset-pod-root-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(host.c_str(), 0777), 0);
  ASSERT_EQ(chmod(host.c_str(), 0777), 0);
  api::PodAssignment a =
      PodBuilder("hostpath")
          .Container("main", Sh("echo saved > " + host + "/ckpt && echo ok"))
          .HostPathVolume(host)
          .Build();
  a.mutable_pod()->mutable_spec()->mutable_security_context()->set_run_as_user(
      65534);
  ASSERT_THAT(Start(a), IsOk());
  api::PodStatus s = WaitFinal("hostpath");
  const std::string log = Log("hostpath", "main");
  EXPECT_EQ(s.phase(), "Succeeded") << log;
  EXPECT_EQ(ReadFileToString(host + "/ckpt").value_or(""), "saved\n") << log;
  (void)unlink((host + "/ckpt").c_str());
  (void)rmdir(host.c_str());
}

// The operator's --pod_host_mounts are in every pod, read-write, at their
// own path, and nothing else of their parents is.
TEST_F(PodRootTest, ThePodHostMountsAreInEveryPod) {
  const std::string shared = dir_ + "/shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(mkdir((dir_ + "/private").c_str(), 0777), 0);
  options_.pod_host_mounts = {shared};
  Recreate();
  api::PodAssignment a =
      PodBuilder("bound")
          .Container("main", Sh("echo kept > " + shared + "/out && ls " + dir_ +
                                "/private && echo listed"))
          .Build();
  a.mutable_pod()->mutable_spec()->mutable_security_context()->set_run_as_user(
      65534);
  ASSERT_THAT(Start(a), IsOk());
  EXPECT_EQ(WaitFinal("bound").phase(), "Failed") << Log("bound", "main");
  EXPECT_EQ(ReadFileToString(shared + "/out").value_or(""), "kept\n");
  EXPECT_THAT(Log("bound", "main"), Not(HasSubstr("listed")));

  // The work dir's parent bound in: the work dir itself is empty there but
  // for the pod's own work/.
  options_.pod_host_mounts = {dir_};
  Recreate();
  ASSERT_THAT(Start(PodBuilder("parent")
                        .Container("main", Sh("ls " + dir_ + "/private && " +
                                              "ls -R " + work_dir_))
                        .Build()),
              IsOk());
  EXPECT_EQ(WaitFinal("parent").phase(), "Succeeded") << Log("parent", "main");
  EXPECT_THAT(Log("parent", "main"), Not(HasSubstr("assignment")));
  EXPECT_THAT(Log("parent", "main"), Not(HasSubstr("bound")));
}

TEST(CheckPodHostMountsTest, RefusesWhatWouldExposeTheAgentOrTheHost) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string work = tmp + "/agent";
  ASSERT_EQ(mkdir(work.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((tmp + "/data").c_str(), 0755), 0);
  EXPECT_THAT(CheckPodHostMounts({tmp + "/data"}, work), IsOk());
  EXPECT_THAT(CheckPodHostMounts({}, work), IsOk());
  ASSERT_EQ(mkdir((work + "/pki").c_str(), 0700), 0);
  EXPECT_THAT(CheckPodHostMounts({tmp}, work), IsOk());  // Covered in pods.
  for (const std::string& bad :
       {std::string("data"), std::string("/"), tmp + "/data/../agent",
        tmp + "/missing", work, work + "/pki"}) {
    absl::Status s = CheckPodHostMounts({bad}, work);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("--pod_host_mounts: ")) << bad;
  }
  EXPECT_THAT(CheckPodHostMounts({work + "/pki"}, work).message(),
              HasSubstr("is the agent's --work_dir"));
}

// /dev holds the standard nodes and the pod's GPUs' only.
TEST_F(PodRootTest, DevHoldsOnlyTheStandardNodesAndThePodsGpus) {
  const std::string dev = dir_ + "/dev";
  ASSERT_EQ(mkdir(dev.c_str(), 0755), 0);
  for (const char* name : {"nvidia0", "nvidia1", "nvidiactl"}) {
    const std::string node = dev + "/" + name;
    ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    ASSERT_EQ(chmod(node.c_str(), 0666), 0);  // whatever the umask
  }
  api::PodAssignment a =
      PodBuilder("gpus")
          .Container("main",
                     Sh("/bin/busybox ls -1 /dev && echo x > /dev/nvidia1 && "
                        "echo written"))
          .Build();
  a.mutable_devices()->add_nvidia_gpus(1);
  ASSERT_THAT(Start(a), IsOk());
  EXPECT_EQ(WaitFinal("gpus").phase(), "Succeeded");
  std::vector<std::string> lines =
      absl::StrSplit(Log("gpus", "main"), '\n', absl::SkipEmpty());
  EXPECT_THAT(lines, ::testing::UnorderedElementsAre(
                         "fd", "full", "null", "nvidia1", "nvidiactl", "ptmx",
                         "pts", "random", "shm", "stderr", "stdin", "stdout",
                         "tty", "urandom", "zero", "written"));
}

// A container holds no descriptor of the shim's beyond its stdio, not the
// hostPath objects its mounts were made from: through one it could reach
// the host's tree outside its root.
TEST_F(PodRootTest, AContainerHoldsNoDescriptorOfItsHostPath) {
  const std::string host = dir_ + "/data";
  ASSERT_EQ(mkdir(host.c_str(), 0755), 0);
  api::PodAssignment a =
      PodBuilder("fds")
          .Container("main", {"/bin/busybox", "ls", "-1", "/proc/self/fd"})
          .HostPathVolume(host)
          .Build();
  ASSERT_THAT(Start(a), IsOk());
  api::PodStatus s = WaitFinal("fds");
  EXPECT_EQ(s.phase(), "Succeeded") << s.ShortDebugString();
  // 3: the directory ls reads.
  EXPECT_EQ(Log("fds", "main"), "0\n1\n2\n3\n");
}

// A hostPath is checked in the shim (ContainerMounts) and mounted later, in
// the container's child (BindChildMount): another pod that can write the
// allowed directory above it may replace it with a link in between. What is
// mounted is the directory checked, or nothing.
class HostPathRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: mount namespaces";
    static int counter = 0;
    char* real = realpath(std::getenv("TEST_TMPDIR"), nullptr);
    ASSERT_NE(real, nullptr);
    base_ = absl::StrCat(real, "/race-", ++counter);
    free(real);
    x_ = base_ + "/allowed/x";
    secret_ = base_ + "/secret";
    target_ = base_ + "/target";
    for (const std::string& d :
         {base_, base_ + "/allowed", x_, secret_, target_}) {
      ASSERT_EQ(mkdir(d.c_str(), 0755), 0) << d;
    }
    ASSERT_THAT(WriteFileAtomic(x_ + "/original", "data"), IsOk());
    ASSERT_THAT(WriteFileAtomic(secret_ + "/marker", "node key"), IsOk());
  }

  // The container's mount of hostPath x_ (type Directory), checked.
  std::vector<ContainerMount> Checked() {
    google::protobuf::RepeatedPtrField<api::Volume> volumes;
    api::Volume* v = volumes.Add();
    v->set_name("data");
    v->mutable_host_path()->set_path(x_);
    v->mutable_host_path()->set_type("Directory");
    api::Container c;
    api::VolumeMount* m = c.add_volume_mounts();
    m->set_name("data");
    m->set_mount_path("/data");
    absl::StatusOr<std::vector<ContainerMount>> mounts =
        ContainerMounts(base_ + "/pod", volumes, c);
    EXPECT_THAT(mounts.status(), IsOk());
    return mounts.ok() ? *std::move(mounts) : std::vector<ContainerMount>();
  }

  // What another pod writing <base>/allowed does: x_ becomes a link to the
  // directory holding the marker.
  void Replace() {
    ASSERT_EQ(rename(x_.c_str(), (x_ + ".old").c_str()), 0);
    ASSERT_EQ(symlink(secret_.c_str(), x_.c_str()), 0);
  }

  // Mounts `m` at target_ in a child in a mount namespace of its own, as a
  // container's child does; returns "error <errno>\n" if that failed, then
  // the files the child sees at target_.
  std::string MountInChild(const ChildMount& m) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      close(out[0]);
      std::string seen;
      if (unshare(CLONE_NEWNS) != 0 ||
          mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        seen = "no namespace\n";
      } else if (const int err = BindChildMount(m, target_.c_str()); err != 0) {
        seen = absl::StrCat("error ", err, "\n");
      }
      for (const char* f : {"original", "marker"}) {
        if (access((target_ + "/" + f).c_str(), F_OK) == 0) {
          absl::StrAppend(&seen, f, "\n");
        }
      }
      (void)!write(out[1], seen.data(), seen.size());
      _exit(0);
    }
    close(out[1]);
    std::string seen;
    char buf[256];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof(buf))) > 0) seen.append(buf, n);
    close(out[0]);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return seen;
  }

  std::string base_, x_, secret_, target_;
};

TEST_F(HostPathRaceTest, TheDirectoryCheckedIsMountedNotTheLinkInItsPlace) {
  std::vector<ContainerMount> mounts = Checked();
  ASSERT_EQ(mounts.size(), 1u);
  std::vector<ScopedFd> held;
  absl::StatusOr<ChildMount> child = ChildMountFor(mounts[0], &held);
  ASSERT_THAT(child.status(), IsOk());
  EXPECT_EQ(child->source, x_);  // What errors name.
  EXPECT_EQ(child->destination, "/data");
  const ScopedFd probe(open_tree(AT_FDCWD, "/", OPEN_TREE_CLOEXEC));
  if (probe.get() < 0 && errno == ENOSYS) {
    GTEST_SKIP() << "no open_tree (before Linux 5.2)";
  }
  ASSERT_GE(child->tree_fd, 0);
  Replace();
  EXPECT_EQ(MountInChild(*child), "original\n");
  // The race is real: binding the path as checked mounts the marker.
  EXPECT_EQ(MountInChild({x_, "/data"}), "marker\n");
  // Nothing of it reached the test's namespace.
  EXPECT_NE(access((target_ + "/original").c_str(), F_OK), 0);
}

// Before Linux 5.2 (no open_tree) the child binds the path, then compares
// what it mounted with the object checked.
TEST_F(HostPathRaceTest, WithoutOpenTreeAReplacedPathIsRefused) {
  std::vector<ContainerMount> mounts = Checked();
  ASSERT_EQ(mounts.size(), 1u);
  std::vector<ScopedFd> held;
  absl::StatusOr<ChildMount> child = ChildMountFor(mounts[0], &held);
  ASSERT_THAT(child.status(), IsOk());
  child->tree_fd = -1;
  EXPECT_EQ(MountInChild(*child), "original\n");
  Replace();
  EXPECT_EQ(MountInChild(*child), absl::StrCat("error ", ESTALE, "\n"));
}

TEST_F(HostPathRaceTest, AHostPathThatDidNotExistIsNotBound) {
  ContainerMount m;
  m.source = x_ + "/later";
  m.destination = "/data";
  m.index = 2;
  m.host_path = true;  // type "": nothing opened.
  std::vector<ScopedFd> held;
  EXPECT_THAT(ChildMountFor(m, &held).status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr(absl::StrCat("volumeMounts[2]: hostPath \"",
                                              x_, "/later\" does not exist"))));
}

TEST(MaskedEtcFilesTest, NamesPasswordHashesAndHostKeysThatExist) {
  const std::string etc = absl::StrCat(std::getenv("TEST_TMPDIR"), "/etc");
  ASSERT_EQ(mkdir(etc.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((etc + "/ssh").c_str(), 0755), 0);
  for (const char* f : {"/shadow", "/passwd", "/ssh/ssh_host_ed25519_key",
                        "/ssh/ssh_host_ed25519_key.pub", "/ssh/ssh_config"}) {
    std::ofstream(etc + f) << "x";
  }
  EXPECT_THAT(MaskedEtcFiles(etc), ::testing::UnorderedElementsAre(
                                       "shadow", "ssh/ssh_host_ed25519_key"));
}

}  // namespace
}  // namespace jobset::agent
