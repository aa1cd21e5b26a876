// The Runtime contract, run against ShimRuntime in process mode and in oci
// mode (skipped, with the reason, where runc cannot run), against CriRuntime
// on a private containerd (skipped, with the reason, where it cannot run), and
// against FakeRuntime, which runs nothing: the cases that need a real process
// (its log, its exit code, its signals) are skipped for it, saying why. Every
// wait is a poll with a deadline; only pods these tests start are stopped or
// removed.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/fake_runtime.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/cri/containerd_test_env.h"
#include "agent/runtime/cri/cri_log.h"
#include "agent/runtime/cri_runtime.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/runtime_test_env.h"
#include "agent/runtime/shim_runtime.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::agent::testing::BuildBusyboxRootfs;
using ::jobset::agent::testing::BuildTestImage;
using ::jobset::agent::testing::ContainerdUnavailable;
using ::jobset::agent::testing::ImageConfig;
using ::jobset::agent::testing::IsFinal;
using ::jobset::agent::testing::IsRunning;
using ::jobset::agent::testing::kTestImage;
using ::jobset::agent::testing::OciAvailable;
using ::jobset::agent::testing::PodBuilder;
using ::jobset::agent::testing::RunfilePath;
using ::jobset::agent::testing::TestContainerd;
using ::jobset::agent::testing::TestRegistry;
using ::jobset::agent::testing::WaitForPod;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

constexpr absl::Duration kTimeout = absl::Seconds(20);

// One implementation under test: how to make it on a work dir, and how its
// containers name the test helper.
struct RuntimeFactory {
  std::string name;
  std::function<absl::StatusOr<std::unique_ptr<Runtime>>(
      const std::string& work_dir, const std::string& image_dir,
      int64_t log_cap)>
      make;
  // Why it cannot run here ("" when it can).
  std::function<std::string()> unavailable;
  // Containers run from an image holding the helper at /bin/helper (oci,
  // cri).
  bool oci = false;
  // Runs nothing (FakeRuntime): no logs, no exits of its own.
  bool fake = false;
  // Registry images through CRI (containerd): pulled, with the image's env.
  bool cri = false;
};

void PrintTo(const RuntimeFactory& factory, std::ostream* os) {
  *os << factory.name;
}

// Where the runtimes under test find accelerator device nodes: a stand-in
// /dev beside the work dir, absent unless a test makes nodes there.
std::string DeviceRoot(const std::string& work_dir) {
  return work_dir + "-dev";
}

// The accelerator options of the runtimes under test: the stand-in /dev, a
// stand-in NVIDIA driver root and CDI directory beside the work dir (absent
// unless a test makes them), so that nothing of the host's is read.
AcceleratorOptions TestAccelerators(const std::string& work_dir) {
  AcceleratorOptions options;
  options.dev_root = DeviceRoot(work_dir);
  options.driver_root = work_dir + "-driver";
  options.cdi_dirs = {work_dir + "-cdi"};
  return options;
}

absl::StatusOr<std::unique_ptr<Runtime>> MakeShimRuntime(
    ShimRuntime::Mode mode, const std::string& work_dir,
    const std::string& image_dir, int64_t log_cap) {
  ShimRuntime::Options options;
  options.work_dir = work_dir;
  options.accelerators = TestAccelerators(work_dir);
  options.shim_path = RunfilePath("agent/runtime/jobset-pod-shim");
  options.mode = mode;
  options.image_dir = image_dir;
  options.cgroup_root = "jobset-test";
  if (log_cap > 0) options.log_cap_bytes = log_cap;
  absl::StatusOr<std::unique_ptr<ShimRuntime>> r = ShimRuntime::Create(options);
  if (!r.ok()) return r.status();
  return std::unique_ptr<Runtime>(std::move(*r));
}

// A FakeRuntime's state outlives the agent that uses it (as the shim
// runtime's does on disk): a "new runtime" on a work dir is a new handle on
// the same FakeRuntime.
class SharedFakeRuntime final : public Runtime {
 public:
  explicit SharedFakeRuntime(std::shared_ptr<FakeRuntime> fake)
      : fake_(std::move(fake)) {}

  absl::Status Start(const api::PodAssignment& assignment) override {
    return fake_->Start(assignment);
  }
  absl::Status Stop(const std::string& uid, absl::Duration grace) override {
    return fake_->Stop(uid, grace);
  }
  absl::Status Remove(const std::string& uid) override {
    return fake_->Remove(uid);
  }
  std::vector<PodState> List() override { return fake_->List(); }
  absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts)
      override {
    return fake_->UpdateHosts(uid, hosts);
  }
  std::string LogPath(const std::string& uid,
                      const std::string& container) const override {
    return fake_->LogPath(uid, container);
  }

 private:
  std::shared_ptr<FakeRuntime> fake_;
};

absl::StatusOr<std::unique_ptr<Runtime>> MakeFakeRuntime(
    const std::string& work_dir) {
  static auto* fakes = new std::map<std::string, std::shared_ptr<FakeRuntime>>;
  std::shared_ptr<FakeRuntime>& fake = (*fakes)[work_dir];
  if (fake == nullptr) fake = std::make_shared<FakeRuntime>();
  return std::unique_ptr<Runtime>(std::make_unique<SharedFakeRuntime>(fake));
}

// One private registry and containerd for the whole test binary (starting
// containerd costs seconds), serving the test image (busybox and the helper)
// as <registry>/jobset-test/testimg:1; stopped, with every container, by
// the environment's TearDown.
class CriEnvironment : public ::testing::Environment {
 public:
  static CriEnvironment* Get() {
    static CriEnvironment* env = [] {
      auto* e = new CriEnvironment;
      ::testing::AddGlobalTestEnvironment(e);  // gtest owns it.
      return e;
    }();
    return env;
  }

  // Starts them on first use; "" when they run, else why they cannot.
  const std::string& Unavailable() {
    if (started_) return why_;
    started_ = true;
    why_ = ContainerdUnavailable();
    if (!why_.empty()) return why_;
    absl::Status s = StartAll();
    if (!s.ok()) why_ = std::string(s.message());
    return why_;
  }

  const std::string& endpoint() const { return endpoint_; }
  const std::string& image() const { return image_; }
  // The same files with ENTRYPOINT /bin/helper, CMD ["argv", "from-cmd"],
  // USER 1234:1234 and WorkingDir /etc.
  const std::string& entry_image() const { return entry_image_; }
  const std::string& registry() const { return registry_address_; }

  void TearDown() override {
    if (containerd_ != nullptr) {
      EXPECT_THAT(containerd_->Shutdown(), IsOk());
    }
    containerd_.reset();
    registry_.reset();
  }

 private:
  absl::Status StartAll() {
    const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/cri");
    if (mkdir(dir.c_str(), 0700) != 0) {
      return absl::InternalError(absl::StrCat("mkdir ", dir));
    }
    absl::Status s = BuildTestImage(dir + "/images",
                                    RunfilePath("agent/runtime/test_helper"));
    if (!s.ok()) return s;
    absl::StatusOr<std::unique_ptr<TestRegistry>> registry =
        TestRegistry::Start(dir + "/registry");
    if (!registry.ok()) return registry.status();
    registry_ = *std::move(registry);
    ImageConfig config;
    config.env = {"PATH=/bin"};
    absl::StatusOr<std::string> ref = registry_->Push(
        dir + "/images/testimg/rootfs", config, "jobset-test/testimg", "1");
    if (!ref.ok()) return ref.status();
    image_ = *ref;
    ImageConfig entry;
    entry.entrypoint = {"/bin/helper"};
    entry.cmd = {"argv", "from-cmd"};
    entry.env = {"PATH=/bin", "FROM_IMAGE=1", "OVERRIDE_ME=image"};
    entry.user = "1234:1234";
    entry.working_dir = "/etc";
    ref = registry_->Push(dir + "/images/testimg/rootfs", entry,
                          "jobset-test/entry", "1");
    if (!ref.ok()) return ref.status();
    entry_image_ = *ref;
    registry_address_ = registry_->address();
    absl::StatusOr<std::unique_ptr<TestContainerd>> containerd =
        TestContainerd::Start(dir + "/containerd");
    if (!containerd.ok()) return containerd.status();
    containerd_ = *std::move(containerd);
    endpoint_ = containerd_->endpoint();
    return absl::OkStatus();
  }

  bool started_ = false;
  std::string why_;
  std::unique_ptr<TestRegistry> registry_;
  std::unique_ptr<TestContainerd> containerd_;
  std::string endpoint_, image_, entry_image_, registry_address_;
};

absl::StatusOr<std::unique_ptr<Runtime>> MakeCriRuntime(
    const std::string& work_dir, int64_t log_cap = 0) {
  CriRuntime::Options options;
  options.work_dir = work_dir;
  if (log_cap > 0) options.log_cap_bytes = log_cap;
  options.accelerators = TestAccelerators(work_dir);
  options.endpoint = CriEnvironment::Get()->endpoint();
  options.sync_period = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<CriRuntime>> r = CriRuntime::Create(options);
  if (!r.ok()) return r.status();
  return std::unique_ptr<Runtime>(std::move(*r));
}

class RuntimeContractTest : public ::testing::TestWithParam<RuntimeFactory> {
 protected:
  void SetUp() override {
    const std::string why = GetParam().unavailable();
    if (!why.empty()) GTEST_SKIP() << GetParam().name << ": " << why;
    static int counter = 0;
    root_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", GetParam().name, "-",
                         ++counter);
    work_dir_ = root_ + "/work";
    image_dir_ = root_ + "/images";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    helper_ = RunfilePath("agent/runtime/test_helper");
    // A runfile is a symlink into bazel-out; a process-mode pod's private
    // root has neither, so the helper's real directory is a volume
    // (Prepared).
    char real[PATH_MAX];
    if (realpath(helper_.c_str(), real) != nullptr) helper_ = real;
    if (GetParam().oci) {
      ASSERT_THAT(BuildTestImage(image_dir_, helper_), IsOk());
      helper_ = "/bin/helper";
    }
    NewRuntime();
  }

  void TearDown() override {
    if (runtime_ == nullptr) return;
    for (const std::string& uid : started_) {
      EXPECT_THAT(runtime_->Remove(uid), IsOk());
    }
  }

  void NewRuntime(int64_t log_cap = 0) {
    runtime_.reset();
    absl::StatusOr<std::unique_ptr<Runtime>> r =
        GetParam().make(work_dir_, image_dir_, log_cap);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = std::move(*r);
  }

  std::vector<std::string> Helper(std::vector<std::string> args) {
    args.insert(args.begin(), helper_);
    return args;
  }

  absl::Status Start(const PodBuilder& pod) {
    api::PodAssignment a = pod.Build();
    started_.push_back(a.pod().metadata().uid());
    return runtime_->Start(Prepared(std::move(a)));
  }

  // The pod as this runtime runs it: under cri, every container's image is
  // the registry's test image.
  api::PodAssignment Prepared(api::PodAssignment a) const {
    if (!oci() && !cri() && !fake()) return WithHelperVolume(std::move(a));
    if (!cri()) return a;
    api::PodSpec* spec = a.mutable_pod()->mutable_spec();
    for (auto* list :
         {spec->mutable_init_containers(), spec->mutable_containers()}) {
      for (api::Container& c : *list) {
        if (c.image() != kTestImage) continue;
        c.set_image(CriEnvironment::Get()->image());
        c.set_image_pull_policy("IfNotPresent");
      }
    }
    return a;
  }

  // Process mode: the test helper's directory, a read-only hostPath volume
  // at the same path in every container (after the pod's own mounts).
  api::PodAssignment WithHelperVolume(api::PodAssignment a) const {
    const std::string dir = helper_.substr(0, helper_.rfind('/'));
    api::PodSpec* spec = a.mutable_pod()->mutable_spec();
    for (auto* list :
         {spec->mutable_init_containers(), spec->mutable_containers()}) {
      for (api::Container& c : *list) {
        api::VolumeMount* m = c.add_volume_mounts();
        m->set_name("test-helper");
        m->set_mount_path(dir);
        m->set_read_only(true);
      }
    }
    api::Volume* v = spec->add_volumes();
    v->set_name("test-helper");
    v->mutable_host_path()->set_path(dir);
    return a;
  }

  api::PodStatus WaitFinal(const std::string& uid) {
    absl::StatusOr<PodState> pod =
        WaitForPod(*runtime_, uid, IsFinal, kTimeout);
    EXPECT_THAT(pod.status(), IsOk());
    return pod.ok() ? pod->status : api::PodStatus();
  }

  std::string Log(const std::string& uid, const std::string& container) {
    absl::StatusOr<std::string> text =
        ReadFileToString(runtime_->LogPath(uid, container));
    if (!text.ok()) return "";
    if (!runtime_->CriLogFormat()) return *text;
    size_t consumed = 0;
    return cri::DecodeCriLog(*text, &consumed);
  }

  // Waits until container's log holds `text`.
  bool WaitLog(const std::string& uid, const std::string& container,
               const std::string& text) {
    const absl::Time deadline = absl::Now() + kTimeout;
    while (absl::Now() < deadline) {
      if (absl::StrContains(Log(uid, container), text)) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  bool oci() const { return GetParam().oci; }
  bool fake() const { return GetParam().fake; }
  bool cri() const { return GetParam().cri; }

  std::string root_, work_dir_, image_dir_, helper_;
  std::unique_ptr<Runtime> runtime_;
  std::vector<std::string> started_;
};

std::string Counted(const std::string& key, const std::string& value) {
  return absl::StrCat(key, " ", value.size(), ":", value, "\n");
}

TEST_P(RuntimeContractTest, ExitCodePropagates) {
  if (fake()) GTEST_SKIP() << "needs the exit code of a real program";
  ASSERT_THAT(
      Start(PodBuilder("exit3").Container("main", Helper({"exit", "3"}))),
      IsOk());
  api::PodStatus s = WaitFinal("exit3");
  EXPECT_EQ(s.phase(), "Failed");
  ASSERT_EQ(s.container_statuses_size(), 1);
  EXPECT_EQ(s.container_statuses(0).flat_state(), "terminated");
  EXPECT_EQ(s.container_statuses(0).exit_code(), 3);
  EXPECT_EQ(s.container_statuses(0).reason(), "Error");
  EXPECT_TRUE(s.container_statuses(0).has_finished_at());
}

TEST_P(RuntimeContractTest, SuccessIsCompleted) {
  if (fake())
    GTEST_SKIP() << "needs a program that exits on its own, and its log";
  ASSERT_THAT(Start(PodBuilder("ok").Container("main", Helper({"exit", "0"}))),
              IsOk());
  api::PodStatus s = WaitFinal("ok");
  EXPECT_EQ(s.phase(), "Succeeded");
  EXPECT_EQ(s.container_statuses(0).reason(), "Completed");
  EXPECT_EQ(s.container_statuses(0).exit_code(), 0);
  EXPECT_THAT(Log("ok", "main"), HasSubstr("started"));
}

TEST_P(RuntimeContractTest, ArgvIsExactAndNoShell) {
  if (fake()) GTEST_SKIP() << "needs the program's argv, read from its log";
  const std::vector<std::string> args = {"argv",         "a;b", "$(x)", "'q'\"",
                                         "line1\nline2", "",    "*",    "`id`"};
  ASSERT_THAT(Start(PodBuilder("argv").Container("main", Helper(args))),
              IsOk());
  EXPECT_EQ(WaitFinal("argv").phase(), "Succeeded");
  std::string expected = Counted("arg", helper_);
  for (const std::string& a : args) expected += Counted("arg", a);
  const std::string log = Log("argv", "main");
  EXPECT_THAT(log, HasSubstr(expected + "end\n"));
  // The helper itself runs, not a shell that ran it.
  EXPECT_THAT(log, HasSubstr(oci() ? "exe 11:/bin/helper\n" : "test_helper\n"));
}

TEST_P(RuntimeContractTest, EnvIsExactlyTheContainers) {
  if (fake())
    GTEST_SKIP() << "needs the program's environment, read from its log";
  ASSERT_THAT(Start(PodBuilder("env")
                        .Container("main", Helper({"env"}))
                        .Env("A", "1")
                        .Env("SPACED", "x y $HOME")
                        .Env("EMPTY", "")),
              IsOk());
  EXPECT_EQ(WaitFinal("env").phase(), "Succeeded");
  // Every runtime adds the progress file's path as the container sees it
  // (docs/agent.md, "Progress heartbeats").
  const std::string progress =
      Counted("env", absl::StrCat("JOBSET_PROGRESS_FILE=",
                                  oci() || cri() ? "/var/run/jobset/progress"
                                                 : runtime_->ProgressDir("env"),
                                  "/progress"));
  if (cri()) {
    // Kubernetes' semantics: the image's env (PATH=/bin), then the
    // container's over it, then what the runtime adds (HOSTNAME; HOME when
    // unset).
    const std::string log = Log("env", "main");
    EXPECT_TRUE(absl::StartsWith(log, Counted("env", "PATH=/bin"))) << log;
    EXPECT_THAT(log, HasSubstr(Counted("env", "A=1") +
                               Counted("env", "SPACED=x y $HOME") +
                               Counted("env", "EMPTY=") + progress));
    for (absl::string_view line : absl::StrSplit(log, '\n')) {
      if (line.empty() || line == "end") continue;
      const bool known = absl::StrContains(line, ":PATH=") ||
                         absl::StrContains(line, ":A=") ||
                         absl::StrContains(line, ":SPACED=") ||
                         absl::StrContains(line, ":EMPTY=") ||
                         absl::StrContains(line, ":JOBSET_PROGRESS_FILE=") ||
                         absl::StrContains(line, ":HOSTNAME=") ||
                         absl::StrContains(line, ":HOME=");
      EXPECT_TRUE(known) << line;
    }
    return;
  }
  // runc sets HOME (from the image's passwd, else "/") when the container
  // sets none, as Docker and Kubernetes do; nothing else is added.
  EXPECT_EQ(Log("env", "main"),
            Counted("env", "A=1") + Counted("env", "SPACED=x y $HOME") +
                Counted("env", "EMPTY=") + progress +
                (oci() ? Counted("env", "HOME=/") : "") + "end\n");
}

TEST_P(RuntimeContractTest, WorkingDir) {
  if (fake())
    GTEST_SKIP() << "needs the program's working directory, read from its log";
  const std::string dir = oci() ? "/etc" : root_;
  ASSERT_THAT(
      Start(
          PodBuilder("cwd").Container("main", Helper({"cwd"})).WorkingDir(dir)),
      IsOk());
  EXPECT_EQ(WaitFinal("cwd").phase(), "Succeeded");
  EXPECT_EQ(Log("cwd", "main"), Counted("cwd", dir));
}

TEST_P(RuntimeContractTest, MissingBinaryIsStartError) {
  if (fake()) GTEST_SKIP() << "needs a binary to look up and miss";
  ASSERT_THAT(
      Start(PodBuilder("nobin").Container("main", {"no-such-binary-x"})),
      IsOk());
  api::PodStatus s = WaitFinal("nobin");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(), HasSubstr("no-such-binary-x"));
  EXPECT_THAT(s.message(), HasSubstr("no-such-binary-x"));
}

TEST_P(RuntimeContractTest, BadWorkingDirIsStartError) {
  if (fake()) GTEST_SKIP() << "needs a directory to change to";
  if (cri()) {
    GTEST_SKIP() << "the CRI runtime makes a missing workingDir, as it does "
                    "for Kubernetes";
  }
  ASSERT_THAT(Start(PodBuilder("badwd")
                        .Container("main", Helper({"cwd"}))
                        .WorkingDir("/no/such/dir-x")),
              IsOk());
  api::PodStatus s = WaitFinal("badwd");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(), HasSubstr("/no/such/dir-x"));
}

TEST_P(RuntimeContractTest, UnknownImageFailsThePod) {
  if (!oci()) GTEST_SKIP() << "process mode runs host binaries, no images";
  if (cri()) {
    GTEST_SKIP() << "a registry image that cannot be pulled waits "
                    "(ErrImagePull, ImagePullBackOff), as in Kubernetes: "
                    "CriImageTest covers it";
  }
  PodBuilder pod("noimg");
  pod.Container("main", Helper({"exit", "0"}));
  api::PodAssignment a = pod.Build();
  a.mutable_pod()->mutable_spec()->mutable_containers(0)->set_image("nope:1");
  started_.push_back("noimg");
  ASSERT_THAT(runtime_->Start(a), IsOk());
  api::PodStatus s = WaitFinal("noimg");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(), HasSubstr("nope:1"));
}

// The pid in this test's PID namespace of the process running `program`
// whose pid in its own namespace is `ns_pid` (/proc/<pid>/status' NSpid);
// 0 when there is none.
int HostPidOf(int ns_pid, const std::string& program) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string cmdline =
        ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline")).value_or("");
    if (!absl::StartsWith(cmdline, program + '\0')) continue;
    const std::string status =
        ReadFileToString(absl::StrCat("/proc/", pid, "/status")).value_or("");
    for (absl::string_view line : absl::StrSplit(status, '\n')) {
      if (!absl::ConsumePrefix(&line, "NSpid:")) continue;
      std::vector<absl::string_view> ids =
          absl::StrSplit(line, '\t', absl::SkipEmpty());
      int last = 0;
      if (!ids.empty() && absl::SimpleAtoi(ids.back(), &last) &&
          last == ns_pid) {
        return pid;
      }
    }
  }
  return 0;
}

TEST_P(RuntimeContractTest, StopKillsWhatIgnoresTermAndDoubleForks) {
  if (fake())
    GTEST_SKIP() << "needs real processes that ignore SIGTERM and double-fork "
                    "(StopEndsThePodAsStopped covers Stop for every runtime)";
  ASSERT_THAT(Start(PodBuilder("orphan").Container("main", Helper({"orphan"}))),
              IsOk());
  ASSERT_TRUE(WaitLog("orphan", "main", "orphan="));
  ASSERT_TRUE(WaitLog("orphan", "main", "main="));
  ASSERT_THAT(WaitForPod(*runtime_, "orphan", IsRunning, kTimeout).status(),
              IsOk());
  int orphan = 0;
  for (absl::string_view line :
       absl::StrSplit(Log("orphan", "main"), '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "orphan=")) {
      ASSERT_TRUE(absl::SimpleAtoi(line, &orphan));
    }
  }
  // Process mode runs a container in a PID namespace of its own: the pid
  // it printed is its pid there.
  if (!oci()) orphan = HostPidOf(orphan, helper_);
  const absl::Time stopped = absl::Now();
  ASSERT_THAT(runtime_->Stop("orphan", absl::Milliseconds(300)), IsOk());
  api::PodStatus s = WaitFinal("orphan");
  EXPECT_GE(absl::Now() - stopped, absl::Milliseconds(300));
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.reason(), "Stopped");
  EXPECT_EQ(s.container_statuses(0).signal(), SIGKILL);
  EXPECT_EQ(s.container_statuses(0).exit_code(), 128 + SIGKILL);
  if (!oci()) {
    // It must be gone (and reaped).
    ASSERT_GT(orphan, 0);
    EXPECT_NE(kill(orphan, 0), 0);
    EXPECT_EQ(errno, ESRCH);
  }
  EXPECT_THAT(runtime_->Stop("orphan", absl::ZeroDuration()), IsOk());
  EXPECT_THAT(runtime_->Stop("never-started", absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(RuntimeContractTest, StopSendsTermFirst) {
  if (fake()) GTEST_SKIP() << "needs a real process to receive SIGTERM";
  ASSERT_THAT(Start(PodBuilder("graceful")
                        .Container("main", Helper({"sleep", "60000"}))
                        .Grace(1)),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "graceful", IsRunning, kTimeout).status(),
              IsOk());
  ASSERT_TRUE(WaitLog("graceful", "main", "started"));
  ASSERT_THAT(runtime_->Stop("graceful", absl::Seconds(2)), IsOk());
  api::PodStatus s = WaitFinal("graceful");
  EXPECT_EQ(s.phase(), "Failed");
  // On the host the helper dies of the SIGTERM. In oci mode it is pid 1 of
  // its pid namespace with no handler, which ignores SIGTERM: the SIGKILL
  // after the grace period ends it.
  EXPECT_EQ(s.container_statuses(0).signal(), oci() ? SIGKILL : SIGTERM);
}

// As the kubelet does, a stop sends the container's process one SIGTERM: a
// handler that writes a checkpoint is not interrupted or run twice (issue
// 41: preemption that respects checkpoints).
TEST_P(RuntimeContractTest, StopSendsOneTerm) {
  if (fake()) GTEST_SKIP() << "needs a real process to receive SIGTERM";
  if (geteuid() != 0) GTEST_SKIP() << "namespaces need root";
  ASSERT_THAT(
      Start(PodBuilder("checkpoints")
                .Container("main", {"/bin/sh", "-c",
                                    "trap 'echo term; sleep 0.5; echo saved; "
                                    "exit 0' TERM; echo started; "
                                    "sleep 600 & wait $!"})
                .Grace(5)),
      IsOk());
  ASSERT_THAT(
      WaitForPod(*runtime_, "checkpoints", IsRunning, kTimeout).status(),
      IsOk());
  ASSERT_TRUE(WaitLog("checkpoints", "main", "started"));
  ASSERT_THAT(runtime_->Stop("checkpoints", absl::Seconds(5)), IsOk());
  api::PodStatus s = WaitFinal("checkpoints");
  const std::string log = Log("checkpoints", "main");
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(log, "term")).size(), 2u)
      << log;
  EXPECT_THAT(log, HasSubstr("saved"));
  // Ended by its own exit 0 within the grace period, not by SIGKILL.
  EXPECT_EQ(s.container_statuses(0).exit_code(), 0) << s.DebugString();
}

TEST_P(RuntimeContractTest, HostnameAndHosts) {
  if (fake())
    GTEST_SKIP()
        << "needs a program's hostname and /etc/hosts, read from its log";
  if (geteuid() != 0) GTEST_SKIP() << "namespaces need root";
  char host_before[256] = {};
  gethostname(host_before, sizeof(host_before));
  ASSERT_THAT(Start(PodBuilder("hosts")
                        .Hostname("worker-0")
                        .Host("10.1.2.3", {"peer-1", "peer-1.sub"})
                        .Container("main", Helper({"hosts", "peer-1.sub"}))),
              IsOk());
  EXPECT_EQ(WaitFinal("hosts").phase(), "Succeeded");
  // On the host network the cri runtime's pods have the node's hostname, as
  // Kubernetes' hostNetwork pods do.
  EXPECT_EQ(Log("hosts", "main"),
            Counted("hostname", cri() ? host_before : "worker-0") +
                Counted("address", "10.1.2.3"));
  char host_after[256] = {};
  gethostname(host_after, sizeof(host_after));
  EXPECT_STREQ(host_before, host_after);
}

TEST_P(RuntimeContractTest, MemoryLimitIsOomKilled) {
  if (fake()) GTEST_SKIP() << "needs a real process to hit its memory limit";
  if (geteuid() != 0) GTEST_SKIP() << "cgroups need root";
  absl::StatusOr<CgroupLayout> layout = DetectCgroupLayout();
  if (!layout.ok() || (layout->memory_mount.empty() && !layout->pure_v2)) {
    GTEST_SKIP() << "no memory cgroup controller";
  }
  const std::string memory = layout->pure_v2
                                 ? layout->unified_mount + layout->own_unified
                                 : layout->memory_mount + layout->own_memory;
  if (access(memory.c_str(), W_OK) != 0) {
    GTEST_SKIP() << memory << " is not writable here: " << strerror(errno);
  }
  ASSERT_THAT(Start(PodBuilder("oom")
                        .Container("main", Helper({"hog", "512"}))
                        .MemoryLimit("32Mi")),
              IsOk());
  api::PodStatus s = WaitFinal("oom");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).reason(), "OOMKilled");
  EXPECT_EQ(s.container_statuses(0).exit_code(), 137);
  EXPECT_THAT(Log("oom", "main"), ::testing::Not(HasSubstr("survived")));
}

// The container process starts in its own cgroups: born in the cgroup2
// one (clone3 CLONE_INTO_CGROUP), written into the v1 ones.
TEST_P(RuntimeContractTest, ContainersStartInTheirCgroups) {
  if (fake() || oci() || cri()) GTEST_SKIP() << "process mode's own cgroups";
  if (geteuid() != 0) GTEST_SKIP() << "cgroups need root";
  absl::StatusOr<CgroupLayout> layout = DetectCgroupLayout();
  if (!layout.ok()) GTEST_SKIP() << layout.status();
  ASSERT_THAT(Start(PodBuilder("cg").Container("main", Helper({"cgroup"}))),
              IsOk());
  EXPECT_EQ(WaitFinal("cg").phase(), "Succeeded");
  const std::string lines = Log("cg", "main");
  int in_pod = 0;
  bool unified = false;
  for (absl::string_view line :
       absl::StrSplit(lines, '\n', absl::SkipEmpty())) {
    const bool ours = absl::StrContains(line, "/cg/main");
    in_pod += ours ? 1 : 0;
    unified |= ours && absl::StartsWith(line, "0::");
  }
  EXPECT_EQ(unified, !layout->unified_mount.empty()) << lines;
  const int expected = (layout->unified_mount.empty() ? 0 : 1) +
                       (layout->memory_mount.empty() ? 0 : 1) +
                       (layout->pids_mount.empty() ? 0 : 1);
  EXPECT_EQ(in_pod, expected) << lines;
}

TEST_P(RuntimeContractTest, InitContainersRunFirstInOrder) {
  if (fake()) GTEST_SKIP() << "needs containers that exit on their own";
  ASSERT_THAT(Start(PodBuilder("init")
                        .InitContainer("first", Helper({"sleep", "200"}))
                        .InitContainer("second", Helper({"exit", "0"}))
                        .Container("main", Helper({"exit", "0"}))),
              IsOk());
  api::PodStatus s = WaitFinal("init");
  EXPECT_EQ(s.phase(), "Succeeded");
  ASSERT_EQ(s.init_container_statuses_size(), 2);
  auto micros = [](const google::protobuf::Timestamp& t) {
    return t.seconds() * 1000000 + t.nanos() / 1000;
  };
  const auto& first = s.init_container_statuses(0);
  const auto& second = s.init_container_statuses(1);
  EXPECT_EQ(first.reason(), "Completed");
  EXPECT_LE(micros(first.finished_at()), micros(second.started_at()));
  EXPECT_LE(micros(second.finished_at()),
            micros(s.container_statuses(0).started_at()));
}

const api::Condition* FindPodCondition(const api::PodStatus& s,
                                       const std::string& type) {
  for (const api::Condition& c : s.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool PodReady(const api::PodStatus& s) {
  const api::Condition* c = FindPodCondition(s, "Ready");
  return c != nullptr && c->status() == "True";
}

// The kubelet's pod conditions, in its order, each when it changed.
TEST_P(RuntimeContractTest, ConditionsAreThePodsTimeline) {
  if (fake()) GTEST_SKIP() << "needs containers that exit on their own";
  ASSERT_THAT(Start(PodBuilder("timeline")
                        .InitContainer("setup", Helper({"sleep", "200"}))
                        .Container("main", Helper({"sleep", "1500"}))),
              IsOk());
  absl::StatusOr<PodState> running = WaitForPod(
      *runtime_, "timeline",
      [](const api::PodStatus& s) { return IsRunning(s) && PodReady(s); },
      kTimeout);
  ASSERT_THAT(running.status(), IsOk());
  const api::PodStatus& s = running->status;
  std::vector<std::string> types;
  for (const api::Condition& c : s.conditions()) types.push_back(c.type());
  EXPECT_THAT(
      types, ::testing::ElementsAre("Initialized", "Ready", "ContainersReady"));
  auto micros = [](const google::protobuf::Timestamp& t) {
    return t.seconds() * 1000000 + t.nanos() / 1000;
  };
  for (const api::Condition& c : s.conditions()) {
    EXPECT_EQ(c.status(), "True") << c.type();
    EXPECT_TRUE(c.reason().empty()) << c.type();
  }
  const int64_t initialized =
      micros(FindPodCondition(s, "Initialized")->last_transition_time());
  // Initialized once the init container finished, and before the pod was
  // ready; not when the pod started.
  EXPECT_GE(initialized, micros(s.init_container_statuses(0).finished_at()));
  EXPECT_GT(initialized, micros(s.start_time()));
  EXPECT_LE(initialized,
            micros(FindPodCondition(s, "Ready")->last_transition_time()));
  const api::PodStatus done = WaitFinal("timeline");
  EXPECT_EQ(FindPodCondition(done, "ContainersReady")->status(), "False");
  EXPECT_EQ(FindPodCondition(done, "Ready")->reason(), "PodCompleted");
  EXPECT_EQ(FindPodCondition(done, "Initialized")->status(), "True");
}

TEST_P(RuntimeContractTest, FailingInitContainerFailsThePod) {
  if (fake()) GTEST_SKIP() << "needs an init container that exits on its own";
  ASSERT_THAT(Start(PodBuilder("initfail")
                        .InitContainer("setup", Helper({"exit", "4"}))
                        .Container("main", Helper({"exit", "0"}))),
              IsOk());
  api::PodStatus s = WaitFinal("initfail");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.init_container_statuses(0).exit_code(), 4);
  EXPECT_EQ(s.container_statuses(0).flat_state(), "waiting");
  EXPECT_FALSE(s.container_statuses(0).has_started_at());
}

TEST_P(RuntimeContractTest, OnFailureRestartsInPlace) {
  if (fake())
    GTEST_SKIP() << "needs a container that fails on its own and runs again";
  const std::string marker_dir = root_ + "/marker";
  ASSERT_EQ(mkdir(marker_dir.c_str(), 0777), 0);
  ASSERT_THAT(
      Start(PodBuilder("restart")
                .RestartPolicy("OnFailure")
                .Container("main", Helper({"failonce", marker_dir + "/m"}))
                .HostPathVolume(marker_dir)),
      IsOk());
  // Between the attempts (1s back-off) the pod is Running, restart_count 1.
  absl::StatusOr<PodState> backing_off = WaitForPod(
      *runtime_, "restart",
      [](const api::PodStatus& s) {
        return s.container_statuses_size() == 1 &&
               s.container_statuses(0).restart_count() == 1;
      },
      kTimeout);
  ASSERT_THAT(backing_off.status(), IsOk());
  api::PodStatus s = WaitFinal("restart");
  EXPECT_EQ(s.phase(), "Succeeded");
  EXPECT_EQ(s.container_statuses(0).restart_count(), 1);
  EXPECT_EQ(s.container_statuses(0).reason(), "Completed");
  EXPECT_THAT(Log("restart", "main"), HasSubstr("first run\nsecond run\n"));
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST_P(RuntimeContractTest, ReadinessTcpAndHttpProbesFlipReady) {
  if (fake()) GTEST_SKIP() << "needs a real listener to probe";
  const int port = FreePort();
  api::Probe tcp;
  tcp.mutable_tcp_socket()->set_port(absl::StrCat(port));
  tcp.set_period_seconds(1);
  api::Probe http;
  http.mutable_http_get()->set_port(absl::StrCat(port));
  http.mutable_http_get()->set_path("/healthz");
  http.set_period_seconds(1);
  ASSERT_THAT(
      Start(PodBuilder("tcp")
                .Container("server",
                           Helper({"listen", absl::StrCat(port), "700"}))
                .ReadinessProbe(tcp)
                .Container("web", Helper({"sleep", "60000"}))
                .ReadinessProbe(http)),
      IsOk());
  absl::StatusOr<PodState> running =
      WaitForPod(*runtime_, "tcp", IsRunning, kTimeout);
  ASSERT_THAT(running.status(), IsOk());
  if (!absl::StrContains(Log("tcp", "server"), "listening")) {
    EXPECT_FALSE(PodReady(running->status));
  }
  absl::StatusOr<PodState> ready =
      WaitForPod(*runtime_, "tcp", PodReady, kTimeout);
  ASSERT_THAT(ready.status(), IsOk());
  EXPECT_TRUE(ready->status.container_statuses(0).ready());
  EXPECT_TRUE(ready->status.container_statuses(1).ready());
  ASSERT_THAT(runtime_->Stop("tcp", absl::ZeroDuration()), IsOk());
  api::PodStatus s = WaitFinal("tcp");
  EXPECT_FALSE(PodReady(s));
}

TEST_P(RuntimeContractTest, ReadinessExecProbe) {
  if (fake()) GTEST_SKIP() << "needs a probe command to run";
  api::Probe probe;
  probe.mutable_exec()->add_command(helper_);
  probe.mutable_exec()->add_command("exit");
  probe.mutable_exec()->add_command("0");
  probe.set_period_seconds(1);
  api::Probe failing = probe;
  failing.mutable_exec()->set_command(2, "1");
  ASSERT_THAT(Start(PodBuilder("exec")
                        .Container("main", Helper({"sleep", "60000"}))
                        .ReadinessProbe(probe)),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "exec", PodReady, kTimeout).status(),
              IsOk());
  // A witness beside it, probed as often, turns ready only after two
  // successes in a row: by then the failing probe has run (and failed) at
  // least once, room for a wrong flip.
  api::Probe witness = probe;
  witness.set_success_threshold(2);
  ASSERT_THAT(Start(PodBuilder("exec-fail")
                        .Container("main", Helper({"sleep", "60000"}))
                        .ReadinessProbe(failing)
                        .Container("witness", Helper({"sleep", "60000"}))
                        .ReadinessProbe(witness)),
              IsOk());
  absl::StatusOr<PodState> running =
      WaitForPod(*runtime_, "exec-fail", IsRunning, kTimeout);
  ASSERT_THAT(running.status(), IsOk());
  absl::StatusOr<PodState> still = WaitForPod(
      *runtime_, "exec-fail",
      [](const api::PodStatus& s) {
        for (const api::ContainerStatus& c : s.container_statuses()) {
          if (c.name() == "witness") return c.ready();
        }
        return false;
      },
      kTimeout);
  ASSERT_THAT(still.status(), IsOk());
  EXPECT_EQ(still->status.phase(), "Running");
  EXPECT_FALSE(PodReady(still->status));
  ASSERT_EQ(still->status.container_statuses(0).name(), "main");
  EXPECT_FALSE(still->status.container_statuses(0).ready());
}

TEST_P(RuntimeContractTest, LogIsCapped) {
  if (fake()) GTEST_SKIP() << "needs a program writing a log";
  NewRuntime(/*log_cap=*/64 << 10);
  if (cri()) {
    // The CRI runtime writes the log; a sync that finds it past the cap
    // renames it and has the runtime reopen it. So it passes the cap by what
    // a sync period (100 ms here) sees written: bursts of ~22 KiB (16,000
    // bytes in CRI lines) every 250 ms, 12 of them.
    ASSERT_THAT(Start(PodBuilder("spam").Container(
                    "main", Helper({"spam", "16000", "12", "250"}))),
                IsOk());
    EXPECT_EQ(WaitFinal("spam").phase(), "Succeeded");
    const std::string log = runtime_->LogPath("spam", "main");
    struct stat now, old;
    ASSERT_EQ(stat(log.c_str(), &now), 0);
    ASSERT_EQ(stat((log + ".1").c_str(), &old), 0);
    EXPECT_LE(now.st_size, 2 * (64 << 10));
    EXPECT_GT(old.st_size, 64 << 10);  // renamed only once past the cap
    EXPECT_LE(old.st_size, 2 * (64 << 10));
    // The reopened file starts with a whole line: every line decodes.
    absl::StatusOr<std::string> text = ReadFileToString(log);
    ASSERT_THAT(text.status(), IsOk());
    size_t consumed = 0;
    const std::string decoded = cri::DecodeCriLog(*text, &consumed);
    EXPECT_EQ(consumed, text->size());
    for (absl::string_view line :
         absl::StrSplit(decoded, '\n', absl::SkipEmpty())) {
      ASSERT_EQ(line, std::string(100, 'x'));
    }
    return;
  }
  ASSERT_THAT(
      Start(PodBuilder("spam").Container("main", Helper({"spam", "300000"}))),
      IsOk());
  EXPECT_EQ(WaitFinal("spam").phase(), "Succeeded");
  struct stat st;
  const std::string log = runtime_->LogPath("spam", "main");
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  EXPECT_LE(st.st_size, 64 << 10);
  // Rotated when the next read would pass the cap. A read takes up to a
  // pipe's worth (64 KiB) when the shim falls behind, so the older file holds
  // anything from one byte to the cap (it held exactly 32 KiB in a loaded CI
  // run, where this once asked for more).
  ASSERT_EQ(stat((log + ".1").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 64 << 10);
  EXPECT_GT(st.st_size, 0);
}

TEST_P(RuntimeContractTest, UpdatedHostsReachARunningPod) {
  if (fake())
    GTEST_SKIP() << "needs a program reading the pod's /etc/hosts "
                    "(StopEndsThePodAsStopped checks UpdateHosts' NOT_FOUND)";
  if (geteuid() != 0) GTEST_SKIP() << "namespaces need root";
  // The pod waits until a peer placed after it resolves.
  ASSERT_THAT(
      Start(PodBuilder("grows")
                .Hostname("worker-0")
                .Host("10.1.2.3", {"peer-1"})
                .Container("main", {"/bin/sh", "-c",
                                    "while ! grep -q late-peer /etc/hosts; do "
                                    "sleep 0.05; done; grep late-peer "
                                    "/etc/hosts"})),
      IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "grows", IsRunning, kTimeout).status(),
              IsOk());
  api::PodAssignment grown;
  api::HostEntry* e = grown.add_hosts();
  e->set_address("10.1.2.3");
  e->add_names("peer-1");
  e = grown.add_hosts();
  e->set_address("10.1.2.4");
  e->add_names("late-peer");
  ASSERT_THAT(runtime_->UpdateHosts("grows", grown.hosts()), IsOk());
  EXPECT_EQ(WaitFinal("grows").phase(), "Succeeded");
  EXPECT_THAT(Log("grows", "main"), HasSubstr("10.1.2.4\tlate-peer"));
  EXPECT_THAT(runtime_->UpdateHosts("nope", grown.hosts()),
              StatusIs(absl::StatusCode::kNotFound));
}

// The scheduler's word is untrusted: a uid that climbs out of the pods
// directory reaches no file, and an address with a newline adds no line.
TEST_P(RuntimeContractTest, UpdateHostsRefusesEscapingUidsAndBadAddresses) {
  // A pod directory's look-alike outside <work_dir>/pods.
  const std::string victim = root_ + "/victim";
  ASSERT_EQ(mkdir(victim.c_str(), 0700), 0);
  api::PodAssignment planted = PodBuilder("victim").Build();
  ASSERT_THAT(WriteProtoAtomic(victim + "/assignment.pb", planted), IsOk());
  ASSERT_THAT(WriteFileAtomic(victim + "/hosts", "untouched\n"), IsOk());
  api::PodAssignment evil;
  api::HostEntry* e = evil.add_hosts();
  e->set_address("10.6.6.6");
  e->add_names("evil");
  for (const char* uid :
       {"../../victim", "../victim", "..", "a/../../victim"}) {
    EXPECT_THAT(runtime_->UpdateHosts(uid, evil.hosts()),
                StatusIs(absl::StatusCode::kNotFound))
        << uid;
  }
  EXPECT_EQ(*ReadFileToString(victim + "/hosts"), "untouched\n");

  // A known pod: its table with a newline in an address, or in a name.
  ASSERT_THAT(Start(PodBuilder("hosts-pod")
                        .Host("10.1.2.3", {"peer-1"})
                        .Container("main", Helper({"sleep", "60000"}))),
              IsOk());
  if (!fake()) {
    ASSERT_THAT(
        WaitForPod(*runtime_, "hosts-pod", IsRunning, kTimeout).status(),
        IsOk());
  }
  const std::string hosts = work_dir_ + "/pods/hosts-pod/hosts";
  const absl::StatusOr<std::string> before = ReadFileToString(hosts);
  e->set_address("10.1.2.4\n10.6.6.6\tevil");
  EXPECT_THAT(runtime_->UpdateHosts("hosts-pod", evil.hosts()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hosts[0].address")));
  e->set_address("10.1.2.4");
  e->set_names(0, "peer-2\n10.6.6.6 evil");
  EXPECT_THAT(runtime_->UpdateHosts("hosts-pod", evil.hosts()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hosts[0].names[0]")));
  if (!fake()) {
    ASSERT_THAT(before.status(), IsOk());
    EXPECT_EQ(*ReadFileToString(hosts), *before);
    EXPECT_THAT(*before, ::testing::Not(HasSubstr("evil")));
  }
  // And a pod started with one is refused before anything is written.
  EXPECT_THAT(runtime_->Start(PodBuilder("bad-hosts")
                                  .Host("10.1.2.3\n10.6.6.6 evil", {"peer"})
                                  .Container("main", Helper({"exit", "0"}))
                                  .Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hosts[0].address")));
  struct stat st;
  EXPECT_NE(stat((work_dir_ + "/pods/bad-hosts").c_str(), &st), 0);
}

TEST_P(RuntimeContractTest, LogPathRefusesEscapingUidsAndOtherContainers) {
  // A log's look-alike outside <work_dir>/logs.
  const std::string secret = root_ + "/secret";
  ASSERT_EQ(mkdir(secret.c_str(), 0700), 0);
  ASSERT_THAT(WriteFileAtomic(secret + "/main.log", "TOPSECRET"), IsOk());
  for (const char* uid : {"../../secret", "../../secret/", "..", "a/../.."}) {
    EXPECT_EQ(runtime_->LogPath(uid, "main"), "") << uid;
  }
  EXPECT_EQ(runtime_->LogPath("x", "../../../secret/main"), "");
  if (fake()) return;
  ASSERT_THAT(
      Start(
          PodBuilder("logs-pod").Container("main", Helper({"argv", "hello"}))),
      IsOk());
  EXPECT_EQ(WaitFinal("logs-pod").phase(), "Succeeded");
  EXPECT_NE(runtime_->LogPath("logs-pod", "main"), "");
  EXPECT_EQ(runtime_->LogPath("logs-pod", "other"), "");
  EXPECT_EQ(runtime_->LogPath("unknown-pod", "main"), "");
}

// Host files are private: the assignment holds the resolved environment
// (tokens, keys), logs what the pod printed.
TEST_P(RuntimeContractTest, HostFilesArePrivate) {
  if (fake()) GTEST_SKIP() << "keeps no files";
  ASSERT_THAT(Start(PodBuilder("private")
                        .InitContainer("init", Helper({"argv", "x"}))
                        .Container("main", Helper({"sleep", "60000"}))),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "private", IsRunning, kTimeout).status(),
              IsOk());
  ASSERT_TRUE(WaitLog("private", "init", "x"));
  const std::string pod = work_dir_ + "/pods/private";
  const std::string logs = work_dir_ + "/logs/private";
  std::vector<std::pair<std::string, mode_t>> want = {
      {work_dir_ + "/pods", 0700},    {work_dir_ + "/logs", 0700}, {pod, 0700},
      {pod + "/assignment.pb", 0600}, {pod + "/hosts", 0644},      {logs, 0700},
      {logs + "/init.log", 0600},     {logs + "/main.log", 0600},
  };
  if (!cri()) {  // The shim's own files.
    for (const char* f :
         {"/status.pb", "/shim.lock", "/shim.log", "/shim.pid"}) {
      want.push_back({pod + f, 0600});
    }
  }
  for (const auto& [path, mode] : want) {
    struct stat st;
    ASSERT_EQ(lstat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(st.st_mode & 07777, mode) << path;
  }
}

// An init container plants a symlink to /etc in an emptyDir; a later
// container's subPath mount through it is refused (the pod fails, naming
// the subPath), never bound to the host's /etc.
TEST_P(RuntimeContractTest, SubPathSymlinkOutOfTheVolumeIsRefused) {
  if (!oci()) GTEST_SKIP() << "volumes are mounted in oci mode only";
  ASSERT_THAT(
      Start(PodBuilder("subpath")
                .EmptyDirVolume("data")
                .InitContainer("plant", {"/bin/ln", "-s", "/etc", "/data/etc"})
                .Mount("data", "/data")
                .Container("main", {"/bin/cat", "/mnt/hostname"})
                .Mount("data", "/mnt", "etc")),
      IsOk());
  api::PodStatus s = WaitFinal("subpath");
  EXPECT_EQ(s.phase(), "Failed");
  ASSERT_EQ(s.container_statuses_size(), 1);
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr("volumeMounts[0].subPath"));
  EXPECT_EQ(Log("subpath", "main"), "");
  struct stat st;
  ASSERT_EQ(lstat((work_dir_ + "/pods/subpath/volumes/data").c_str(), &st), 0);
  // Still the volume's directory, not the link. kubelet's emptyDir mode:
  // containers without runAsUser may run as --default_pod_uid.
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0777u);
}

TEST_P(RuntimeContractTest, SubPathBeneathTheVolumeIsMounted) {
  if (!oci()) GTEST_SKIP() << "volumes are mounted in oci mode only";
  ASSERT_THAT(
      Start(PodBuilder("subpath-ok")
                .EmptyDirVolume("data")
                .InitContainer("write", {"/bin/sh", "-c",
                                         "mkdir -p /data/a/b && echo inside > "
                                         "/data/a/b/file"})
                .Mount("data", "/data")
                .Container("main", {"/bin/cat", "/mnt/file"})
                .Mount("data", "/mnt", "a/b")),
      IsOk());
  EXPECT_EQ(WaitFinal("subpath-ok").phase(), "Succeeded");
  EXPECT_EQ(Log("subpath-ok", "main"), "inside\n");
}

TEST_P(RuntimeContractTest, AnUnrenewedLeaseStopsThePodsOnItsOwn) {
  if (fake())
    GTEST_SKIP() << "needs pods that outlive the agent: the shim enforces the "
                    "lease itself, while a FakeRuntime's pods are stopped by "
                    "the agent's own lease check";
  if (cri()) {
    EXPECT_THAT(runtime_->SetLease(absl::Seconds(1)),
                StatusIs(absl::StatusCode::kUnimplemented));
    GTEST_SKIP() << "the cri runtime has no lease (jobset-agent refuses "
                    "--lease with --runtime=cri)";
  }
  ASSERT_THAT(runtime_->SetLease(absl::Milliseconds(600)), IsOk());
  ASSERT_THAT(
      Start(PodBuilder("leased").Container("main", Helper({"sleep", "60000"}))),
      IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "leased", IsRunning, kTimeout).status(),
              IsOk());
  // Renewed, it keeps running past the lease: renewed until a second pod,
  // which runs 1 s (longer than the lease), has exited on its own.
  ASSERT_THAT(Start(PodBuilder("timer").Container(
                  "main", Helper({"exit", "0", "1000"}))),
              IsOk());
  absl::StatusOr<PodState> timer = WaitForPod(
      *runtime_, "timer",
      [&](const api::PodStatus& s) {
        EXPECT_THAT(runtime_->RenewLease(), IsOk());
        return IsFinal(s);
      },
      kTimeout);
  ASSERT_THAT(timer.status(), IsOk());
  EXPECT_EQ(timer->status.phase(), "Succeeded");  // Not LeaseExpired.
  absl::StatusOr<PodState> leased = WaitForPod(
      *runtime_, "leased", [](const api::PodStatus&) { return true; },
      kTimeout);
  ASSERT_THAT(leased.status(), IsOk());
  ASSERT_EQ(leased->status.phase(), "Running");
  // The agent stops renewing (frozen, dead): the shim stops the pod itself.
  const absl::Time last = absl::Now();
  api::PodStatus s = WaitFinal("leased");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.reason(), "LeaseExpired");
  EXPECT_GE(absl::Now() - last, absl::Milliseconds(600));
  EXPECT_LT(absl::Now() - last, absl::Seconds(4));
  ASSERT_THAT(runtime_->SetLease(absl::ZeroDuration()), IsOk());
}

TEST_P(RuntimeContractTest, NewRuntimeReattachesToRunningPod) {
  if (fake())
    GTEST_SKIP() << "needs a container that exits on its own after the restart";
  ASSERT_THAT(Start(PodBuilder("reattach")
                        .Container("main", Helper({"sleep", "1500", "7"}))),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "reattach", IsRunning, kTimeout).status(),
              IsOk());
  NewRuntime();  // The agent restarts.
  absl::StatusOr<PodState> running = WaitForPod(
      *runtime_, "reattach", [](const api::PodStatus&) { return true; },
      kTimeout);
  ASSERT_THAT(running.status(), IsOk());
  EXPECT_EQ(running->status.phase(), "Running");
  api::PodStatus s = WaitFinal("reattach");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).exit_code(), 7);
}

TEST_P(RuntimeContractTest, ExitWhileNoRuntimeIsSeen) {
  if (fake())
    GTEST_SKIP()
        << "needs a container that exits on its own, and the shim's status.pb";
  ASSERT_THAT(Start(PodBuilder("offline").Container(
                  "main", Helper({"exit", "5", "200"}))),
              IsOk());
  runtime_.reset();  // No agent while the pod ends.
  const std::string status_path = work_dir_ + "/pods/offline/status.pb";
  // Nothing writes a cri pod's status meanwhile: containerd keeps its exit.
  const absl::Time deadline =
      absl::Now() + (cri() ? absl::Seconds(2) : kTimeout);
  api::PodStatus on_disk;
  while (absl::Now() < deadline) {
    on_disk.Clear();
    if (ReadProtoFile(status_path, &on_disk).ok() && IsFinal(on_disk)) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  NewRuntime();
  api::PodStatus s = WaitFinal("offline");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).exit_code(), 5);
}

TEST_P(RuntimeContractTest, StartTwiceIsAlreadyExistsAndRunsOnce) {
  if (fake())
    GTEST_SKIP() << "needs a container that exits on its own, and its log "
                    "(StartOfAKnownUidIsAlreadyExists covers ALREADY_EXISTS "
                    "for every runtime)";
  PodBuilder pod("twice");
  pod.Container("main", Helper({"exit", "0"}));
  ASSERT_THAT(Start(pod), IsOk());
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(WaitFinal("twice").phase(), "Succeeded");
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  NewRuntime();
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(Log("twice", "main"), "started\n");
}

TEST_P(RuntimeContractTest, BadUidIsInvalidArgument) {
  EXPECT_THAT(runtime_->Start(PodBuilder("../x").Build()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(RuntimeContractTest, RemoveCleansUpAndKeepsLogs) {
  if (fake())
    GTEST_SKIP() << "needs processes, cgroups and logs to clean up "
                    "(ListShowsEveryPodAndRemoveForgetsIt covers Remove for "
                    "every runtime)";
  ASSERT_THAT(Start(PodBuilder("remove").Container("main", Helper({"orphan"}))),
              IsOk());
  ASSERT_TRUE(WaitLog("remove", "main", "orphan="));
  absl::StatusOr<std::string> cgroups =
      ReadFileToString(work_dir_ + "/pods/remove/cgroups");
  ASSERT_THAT(runtime_->Remove("remove"), IsOk());
  struct stat st;
  EXPECT_NE(stat((work_dir_ + "/pods/remove").c_str(), &st), 0);
  EXPECT_EQ(stat(runtime_->LogPath("remove", "main").c_str(), &st), 0);
  for (const PodState& pod : runtime_->List()) EXPECT_NE(pod.uid, "remove");
  if (cgroups.ok()) {
    for (absl::string_view dir :
         absl::StrSplit(*cgroups, '\n', absl::SkipEmpty())) {
      EXPECT_NE(stat(std::string(dir).c_str(), &st), 0) << dir;
    }
  }
  EXPECT_THAT(runtime_->Remove("remove"), IsOk());
  started_.clear();
}

TEST_P(RuntimeContractTest, LostSupervisorIsReportedNotRelaunched) {
  if (fake() || cri())
    GTEST_SKIP() << "needs the shim runtime's pod directories and supervisors";
  // A pod dir with its intent but no shim: the agent died before spawning.
  const std::string dir = work_dir_ + "/pods/lost";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_THAT(
      WriteProtoAtomic(
          dir + "/assignment.pb",
          PodBuilder("lost").Container("main", Helper({"exit", "0"})).Build()),
      IsOk());
  started_.push_back("lost");
  api::PodStatus s = WaitFinal("lost");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.reason(), "SupervisorLost");
  NewRuntime();
  EXPECT_EQ(WaitFinal("lost").reason(), "SupervisorLost");
}

TEST_P(RuntimeContractTest, StartOfAKnownUidIsAlreadyExists) {
  PodBuilder pod("known");
  pod.Container("main", Helper({"sleep", "60000"}));
  ASSERT_THAT(Start(pod), IsOk());
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_THAT(WaitForPod(*runtime_, "known", IsRunning, kTimeout).status(),
              IsOk());
  NewRuntime();  // The agent restarts.
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_THAT(runtime_->Stop("known", absl::ZeroDuration()), IsOk());
  EXPECT_EQ(WaitFinal("known").phase(), "Failed");
  EXPECT_THAT(runtime_->Start(pod.Build()),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST_P(RuntimeContractTest, StopEndsThePodAsStopped) {
  ASSERT_THAT(Start(PodBuilder("stopped").Container(
                  "main", Helper({"sleep", "60000"}))),
              IsOk());
  absl::StatusOr<PodState> running =
      WaitForPod(*runtime_, "stopped", IsRunning, kTimeout);
  ASSERT_THAT(running.status(), IsOk());
  ASSERT_EQ(running->status.container_statuses_size(), 1);
  EXPECT_EQ(running->status.container_statuses(0).name(), "main");
  EXPECT_EQ(running->status.container_statuses(0).flat_state(), "running");
  ASSERT_THAT(runtime_->Stop("stopped", absl::ZeroDuration()), IsOk());
  api::PodStatus s = WaitFinal("stopped");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.reason(), "Stopped");
  ASSERT_EQ(s.container_statuses_size(), 1);
  EXPECT_EQ(s.container_statuses(0).flat_state(), "terminated");
  EXPECT_FALSE(s.container_statuses(0).ready());
  // How it ended depends on the runtime (SIGTERM, SIGKILL; runc, killed
  // while it starts the container, exits 1): not well.
  EXPECT_NE(s.container_statuses(0).exit_code(), 0);
  EXPECT_FALSE(PodReady(s));
  // Idempotent; an unknown pod is NOT_FOUND.
  EXPECT_THAT(runtime_->Stop("stopped", absl::ZeroDuration()), IsOk());
  EXPECT_EQ(WaitFinal("stopped").reason(), "Stopped");
  EXPECT_THAT(runtime_->Stop("never-started", absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kNotFound));
  api::PodAssignment hosts;
  EXPECT_THAT(runtime_->UpdateHosts("never-started", hosts.hosts()),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(RuntimeContractTest, ListShowsEveryPodAndRemoveForgetsIt) {
  for (const std::string uid : {"list-a", "list-b"}) {
    ASSERT_THAT(
        Start(PodBuilder(uid).Container("main", Helper({"sleep", "60000"}))),
        IsOk());
  }
  for (const std::string uid : {"list-a", "list-b"}) {
    ASSERT_THAT(WaitForPod(*runtime_, uid, IsRunning, kTimeout).status(),
                IsOk());
  }
  auto listed = [&](const std::string& uid) {
    for (const PodState& pod : runtime_->List()) {
      if (pod.uid == uid) return true;
    }
    return false;
  };
  EXPECT_TRUE(listed("list-a"));
  EXPECT_TRUE(listed("list-b"));
  ASSERT_THAT(runtime_->Remove("list-a"), IsOk());
  EXPECT_FALSE(listed("list-a"));
  EXPECT_TRUE(listed("list-b"));
  EXPECT_THAT(runtime_->Remove("list-a"), IsOk());
  EXPECT_THAT(runtime_->Stop("list-a", absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kNotFound));
  NewRuntime();  // The agent restarts: what is left is still listed.
  EXPECT_FALSE(listed("list-a"));
  EXPECT_TRUE(listed("list-b"));
}

// --- securityContext and volumes (issue 21) --------------------------------
// Containers run /bin/busybox, which the host and the test image both have.

std::vector<std::string> Busybox(const std::string& script) {
  return {"/bin/busybox", "sh", "-c", script};
}

// The value of `key` in a /proc/<pid>/status dump inside `log` ("" if none).
std::string StatusField(const std::string& log, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::ConsumePrefix(&line, key + ":")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

api::PodSecurityContext* PodSc(api::PodAssignment& a) {
  return a.mutable_pod()->mutable_spec()->mutable_security_context();
}

api::SecurityContext* ContainerSc(api::PodAssignment& a, int i) {
  return a.mutable_pod()
      ->mutable_spec()
      ->mutable_containers(i)
      ->mutable_security_context();
}

class SecurityContextTest : public RuntimeContractTest {
 protected:
  void SetUp() override {
    if (GetParam().fake) {
      GTEST_SKIP() << "FakeRuntime runs no process to apply a securityContext "
                      "to";
    }
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root: users, groups, capabilities and mounts";
    }
    RuntimeContractTest::SetUp();
  }

  absl::Status StartAssignment(const api::PodAssignment& a) {
    started_.push_back(a.pod().metadata().uid());
    return runtime_->Start(Prepared(a));
  }

  std::string VolumeDir(const std::string& uid, const std::string& name) {
    return absl::StrCat(work_dir_, "/pods/", uid, "/volumes/", name);
  }
};

TEST_P(SecurityContextTest, RunsAsTheUserAndItsGroups) {
  api::PodAssignment a =
      PodBuilder("user")
          .Container("main", Busybox("/bin/busybox id -u; /bin/busybox id -G"))
          .Build();
  PodSc(a)->set_run_as_user(1000);
  PodSc(a)->set_run_as_group(1001);
  PodSc(a)->add_supplemental_groups(1002);
  PodSc(a)->set_fs_group(1003);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("user");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message();
  std::vector<std::string> lines =
      absl::StrSplit(Log("user", "main"), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << Log("user", "main");
  EXPECT_EQ(lines[0], "1000");
  std::vector<std::string> groups = absl::StrSplit(lines[1], ' ');
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups[0], "1001");  // the primary group first
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  EXPECT_THAT(groups, ::testing::ElementsAre("1001", "1002", "1003"));
}

TEST_P(SecurityContextTest, NoNewPrivsAndCapabilities) {
  const std::string script = "cat /proc/self/status";
  api::PodAssignment a = PodBuilder("caps")
                             .Container("root", Busybox(script))
                             .Container("user", Busybox(script))
                             .Container("default", Busybox(script))
                             .Build();
  for (int i : {0, 1}) {
    api::SecurityContext* sc = ContainerSc(a, i);
    sc->set_allow_privilege_escalation(false);
    sc->mutable_capabilities()->add_drop("ALL");
    sc->mutable_capabilities()->add_add("NET_BIND_SERVICE");
  }
  ContainerSc(a, 1)->set_run_as_user(1000);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("caps");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message();
  const std::string root = Log("caps", "root");
  EXPECT_EQ(StatusField(root, "NoNewPrivs"), "1") << root;
  EXPECT_EQ(StatusField(root, "CapEff"), "0000000000000400");
  EXPECT_EQ(StatusField(root, "CapBnd"), "0000000000000400");
  const std::string user = Log("caps", "user");
  EXPECT_EQ(StatusField(user, "NoNewPrivs"), "1") << user;
  EXPECT_EQ(StatusField(user, "CapBnd"), "0000000000000400");
  // containerd gives a non-root user an empty effective set (Kubernetes'
  // semantics); the shim raises the set as ambient capabilities.
  EXPECT_EQ(StatusField(user, "CapEff"),
            cri() ? "0000000000000000" : "0000000000000400");
  EXPECT_EQ(StatusField(user, "CapAmb"),
            cri() ? "0000000000000000" : "0000000000000400");
  // No securityContext (root: the pod is privileged): Kubernetes' default
  // (no no_new_privs) and the container runtime's default capabilities,
  // less NET_RAW (containerd 2's 13).
  const std::string def = Log("caps", "default");
  const std::string default_set = "00000000a80405fb";
  EXPECT_EQ(StatusField(def, "NoNewPrivs"), "0") << def;
  EXPECT_EQ(StatusField(def, "CapBnd"), default_set);
  EXPECT_EQ(StatusField(def, "CapEff"), default_set);
}

// Issue 40: the default capability set has no NET_RAW, so a pod on the
// host's network cannot sniff or spoof its neighbours' traffic; a pod that
// adds NET_RAW (baseline admits it) gets it back.
TEST_P(SecurityContextTest, DefaultCapabilitiesOpenNoPacketSocket) {
  api::PodAssignment a = PodBuilder("packet")
                             .Container("default", Helper({"packet"}))
                             .Container("netraw", Helper({"packet"}))
                             .Build();
  // Root, with the default set: what a pod without runAsUser was before.
  ContainerSc(a, 0)->set_run_as_user(0);
  ContainerSc(a, 1)->set_run_as_user(0);
  ContainerSc(a, 1)->mutable_capabilities()->add_add("NET_RAW");
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("packet");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message();
  EXPECT_EQ(Log("packet", "default"), "packet EPERM\n");
  EXPECT_EQ(Log("packet", "netraw"), "packet ok\n");
}

// Issue 40: a container that sets no runAsUser runs as the agent's default
// pod uid (65534, its group too, no capabilities in effect) outside
// privileged namespaces, an older jobsetd's pods (no level) included; it can
// write its emptyDir and its working directory. (The cri runtime's test
// image names no user; one that names a non-root user keeps it:
// CriImageTest.TheDefaultPodUidReplacesOnlyARootImageUser.)
TEST_P(SecurityContextTest, NoRunAsUserRunsAsTheDefaultPodUid) {
  const std::string mnt = oci() ? "/data" : root_ + "/data";
  ASSERT_EQ(mkdir((root_ + "/data").c_str(), 0755), 0);
  const std::string bb = "/bin/busybox";
  const std::string script = absl::StrCat(
      bb, " id -u; ", bb, " id -g; ", bb, " id -G; ", bb,
      " grep CapEff /proc/self/status; echo x > f && echo emptydir-writable; ",
      "echo y > /dev/shm/defuid && echo shm-writable; ",
      "echo z > /tmp/defuid && echo tmp-writable");
  for (const std::string level : {"baseline", "restricted", ""}) {
    const std::string uid =
        absl::StrCat("defuid-", level.empty() ? "none" : level);
    PodBuilder builder(uid);
    builder.SecurityLevel(level)
        .EmptyDirVolume("data")
        .Container(
            "main",
            Busybox(oci() ? absl::StrCat("cd ", mnt, " && ", script) : script))
        .Mount("data", mnt);
    // As in ExecProbeRunsAsItsContainer: the emptyDir is the working
    // directory.
    if (!oci()) builder.WorkingDir(mnt);
    api::PodAssignment a = builder.Build();
    ASSERT_THAT(StartAssignment(a), IsOk());
    api::PodStatus s = WaitFinal(uid);
    EXPECT_EQ(s.phase(), "Succeeded") << s.message() << Log(uid, "main");
    EXPECT_EQ(Log(uid, "main"),
              "65534\n65534\n65534\nCapEff:\t0000000000000000\n"
              "emptydir-writable\nshm-writable\ntmp-writable\n")
        << level;
    struct stat st;
    ASSERT_EQ(stat((VolumeDir(uid, "data") + "/f").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
  }
  // A privileged namespace keeps the old default: the runtime's user, root.
  api::PodAssignment p = PodBuilder("defuid-privileged")
                             .SecurityLevel("privileged")
                             .Container("main", Busybox(bb + " id -u"))
                             .Build();
  ASSERT_THAT(StartAssignment(p), IsOk());
  EXPECT_EQ(WaitFinal("defuid-privileged").phase(), "Succeeded");
  EXPECT_EQ(Log("defuid-privileged", "main"), "0\n");
}

// Issue 40: an exec readiness probe runs with exactly its container's
// identity: user, capabilities, mount namespace (so it writes the pod's
// emptyDir, never the host directory beneath it) and cgroups. A restricted
// pod: runAsNonRoot, a user, no privilege escalation, every capability
// dropped.
TEST_P(SecurityContextTest, ExecProbeRunsAsItsContainer) {
  const std::string mnt = oci() ? "/data" : root_ + "/data";
  ASSERT_EQ(mkdir((root_ + "/data").c_str(), 0755), 0);
  const std::string bb = "/bin/busybox";
  // Into the working directory (the emptyDir): written, then renamed, so
  // that the test never reads half a file.
  auto report = [&](const std::string& name) {
    return absl::StrCat(
        "{ ", bb, " id -u; ", bb, " grep CapEff /proc/self/status; ", bb,
        " readlink /proc/self/ns/mnt; ", bb, " cat /proc/self/cgroup; } > ",
        name, ".tmp && ", bb, " mv ", name, ".tmp ", name);
  };
  api::Probe probe;
  for (const std::string& arg : Busybox(report("probe"))) {
    probe.mutable_exec()->add_command(arg);
  }
  probe.set_period_seconds(1);
  PodBuilder builder("probe-identity");
  builder.SecurityLevel("restricted")
      .EmptyDirVolume("data")
      .Container("main",
                 Busybox(report("container") + "; exec " + bb + " sleep 600"))
      .Mount("data", mnt);
  // Process mode: the emptyDir is the working directory (entered as root,
  // before the user is set: the test's directory is under /root, 0700). An
  // image has no /data until the volume is mounted: runc is given no cwd
  // there and the scripts change to it.
  if (oci()) {
    probe.mutable_exec()->set_command(
        3, absl::StrCat("cd ", mnt, " && ", probe.exec().command(3)));
  } else {
    builder.WorkingDir(mnt);
  }
  api::PodAssignment a = builder.ReadinessProbe(probe).Build();
  if (oci()) {
    api::Container* c = a.mutable_pod()->mutable_spec()->mutable_containers(0);
    c->set_command(3, absl::StrCat("cd ", mnt, " && ", c->command(3)));
  }
  PodSc(a)->set_run_as_non_root(true);
  PodSc(a)->set_run_as_user(1000);
  PodSc(a)->set_run_as_group(1000);
  api::SecurityContext* sc = ContainerSc(a, 0);
  sc->set_allow_privilege_escalation(false);
  sc->mutable_capabilities()->add_drop("ALL");
  ASSERT_THAT(StartAssignment(a), IsOk());
  absl::StatusOr<PodState> ready =
      WaitForPod(*runtime_, "probe-identity", PodReady, kTimeout);
  ASSERT_THAT(ready.status(), IsOk())
      << ReadFileToString(
             absl::StrCat(work_dir_, "/pods/probe-identity/", kShimLogFile))
             .value_or("no shim log");
  const std::string dir = VolumeDir("probe-identity", "data");
  // The first probe may have run before the container wrote its report.
  absl::StatusOr<std::string> container;
  const absl::Time deadline = absl::Now() + kTimeout;
  do {
    container = ReadFileToString(dir + "/container");
    if (!container.ok()) absl::SleepFor(absl::Milliseconds(10));
  } while (!container.ok() && absl::Now() < deadline);
  ASSERT_THAT(container.status(), IsOk());
  absl::StatusOr<std::string> probed = ReadFileToString(dir + "/probe");
  // Not in the pod's emptyDir: the probe wrote elsewhere (the host's own
  // directory beneath the mount, as root before issue 40).
  ASSERT_THAT(probed.status(), IsOk())
      << "host dir holds: "
      << ReadFileToString(root_ + "/data/probe").value_or("nothing");
  EXPECT_EQ(StatusField(*probed, "CapEff"), "0000000000000000") << *probed;
  EXPECT_TRUE(absl::StartsWith(*probed, "1000\n")) << *probed;
  EXPECT_EQ(*probed, *container);
  EXPECT_NE(access((root_ + "/data/probe").c_str(), F_OK), 0);
}

TEST_P(SecurityContextTest, PrivilegedGetsEveryCapability) {
  api::PodAssignment a =
      PodBuilder("priv")
          .Container("main", Busybox("cat /proc/self/status"))
          .Build();
  ContainerSc(a, 0)->set_privileged(true);
  ASSERT_THAT(StartAssignment(a), IsOk());
  EXPECT_EQ(WaitFinal("priv").phase(), "Succeeded");
  absl::StatusOr<std::string> host = ReadFileToString("/proc/self/status");
  ASSERT_THAT(host.status(), IsOk());
  EXPECT_EQ(StatusField(Log("priv", "main"), "CapBnd"),
            StatusField(*host, "CapBnd"));
  EXPECT_EQ(StatusField(Log("priv", "main"), "CapEff"),
            StatusField(*host, "CapEff"));
}

TEST_P(SecurityContextTest, RunAsNonRootRefusesRoot) {
  api::PodAssignment a =
      PodBuilder("nonroot").Container("main", Busybox("echo ran")).Build();
  PodSc(a)->set_run_as_non_root(true);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("nonroot");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.reason(), "CreateContainerConfigError");
  ASSERT_EQ(s.container_statuses_size(), 1);
  EXPECT_EQ(s.container_statuses(0).flat_state(), "waiting");
  EXPECT_EQ(s.container_statuses(0).reason(), "CreateContainerConfigError");
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr("container has runAsNonRoot and image will run as "
                        "root (pod: \""));
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr("(nonroot)\", container: main)"));
  EXPECT_EQ(Log("nonroot", "main"), "");

  api::PodAssignment b =
      PodBuilder("nonroot0").Container("main", Busybox("echo ran")).Build();
  PodSc(b)->set_run_as_non_root(true);
  ContainerSc(b, 0)->set_run_as_user(0);
  ASSERT_THAT(StartAssignment(b), IsOk());
  s = WaitFinal("nonroot0");
  EXPECT_EQ(s.container_statuses(0).reason(), "CreateContainerConfigError");
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr("container's runAsUser breaks non-root policy"));

  // A non-root user passes.
  api::PodAssignment c =
      PodBuilder("nonroot-ok").Container("main", Busybox("echo ran")).Build();
  PodSc(c)->set_run_as_non_root(true);
  PodSc(c)->set_run_as_user(1000);
  ASSERT_THAT(StartAssignment(c), IsOk());
  EXPECT_EQ(WaitFinal("nonroot-ok").phase(), "Succeeded");
  EXPECT_EQ(Log("nonroot-ok", "main"), "ran\n");
}

TEST_P(SecurityContextTest, ReadOnlyRootFilesystemKeepsVolumesWritable) {
  // Process mode mounts at host paths that exist; both modes see the same.
  const std::string mnt = oci() ? "/scratch" : root_ + "/scratch";
  ASSERT_EQ(mkdir((root_ + "/scratch").c_str(), 0755), 0);
  const std::string probe = "/jobset-readonly-root-probe";
  api::PodAssignment a =
      PodBuilder("ro")
          .EmptyDirVolume("scratch")
          .Container("main",
                     Busybox(absl::StrCat(
                         "if /bin/busybox touch ", probe,
                         " 2>/dev/null; then echo root-writable; else echo "
                         "root-readonly; fi; echo data > ",
                         mnt, "/f && echo volume-writable")))
          .Mount("scratch", mnt)
          .Build();
  ContainerSc(a, 0)->set_read_only_root_filesystem(true);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("ro");
  (void)unlink(probe.c_str());  // had it been written on the host's root
  EXPECT_EQ(s.phase(), "Succeeded") << s.message();
  EXPECT_EQ(Log("ro", "main"), "root-readonly\nvolume-writable\n");
  absl::StatusOr<std::string> written =
      ReadFileToString(VolumeDir("ro", "scratch") + "/f");
  ASSERT_THAT(written.status(), IsOk());
  EXPECT_EQ(*written, "data\n");
}

TEST_P(SecurityContextTest, FsGroupOwnsTheEmptyDir) {
  const std::string mnt = oci() ? "/data" : root_ + "/data";
  ASSERT_EQ(mkdir((root_ + "/data").c_str(), 0755), 0);
  api::PodAssignment a =
      PodBuilder("fsgroup")
          .EmptyDirVolume("data")
          .Container("main", Busybox(absl::StrCat("echo hi > ", mnt, "/f")))
          .Mount("data", mnt)
          .Build();
  PodSc(a)->set_run_as_user(1000);
  PodSc(a)->set_fs_group(2000);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("fsgroup");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message() << Log("fsgroup", "main");
  struct stat st;
  ASSERT_EQ(stat(VolumeDir("fsgroup", "data").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 2000u);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  ASSERT_EQ(stat((VolumeDir("fsgroup", "data") + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 2000u);  // the setgid directory's group
}

// Progress heartbeats (docs/agent.md): a container of another user than
// root, its root read-only, writes $JOBSET_PROGRESS_FILE (each mode shows the
// file at its own path), which lands in the pod's own progress directory on
// the host, Runtime::ProgressDir.
TEST_P(SecurityContextTest, WritesItsProgressFileToThePodsDirectory) {
  api::PodAssignment a =
      PodBuilder("progress")
          .Container("main", Busybox("echo 'step=7 checkpoint_step=5' > "
                                     "\"$JOBSET_PROGRESS_FILE\""))
          .Build();
  ContainerSc(a, 0)->set_run_as_user(1234);
  ContainerSc(a, 0)->set_read_only_root_filesystem(true);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("progress");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message() << Log("progress", "main");
  const std::string dir = runtime_->ProgressDir("progress");
  EXPECT_EQ(dir, work_dir_ + "/pods/progress/progress");
  absl::StatusOr<std::string> line = ReadFileToString(dir + "/progress");
  ASSERT_THAT(line.status(), IsOk());
  EXPECT_EQ(*line, "step=7 checkpoint_step=5\n");
  EXPECT_EQ(runtime_->ProgressDir("../escape"), "");
}

TEST_P(SecurityContextTest, MemoryEmptyDirIsASizedTmpfsAtDevShm) {
  api::PodAssignment a =
      PodBuilder("shm")
          .EmptyDirVolume("shm")
          .Container("main", Busybox("cat /proc/self/mounts; echo x > "
                                     "/dev/shm/f && echo shm-writable"))
          .Mount("shm", "/dev/shm")
          .Build();
  api::EmptyDirVolumeSource* e =
      a.mutable_pod()->mutable_spec()->mutable_volumes(0)->mutable_empty_dir();
  e->set_medium("Memory");
  e->set_size_limit("64Mi");
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("shm");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message();
  const std::string log = Log("shm", "main");
  std::string shm_line;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    if (f.size() > 3 && f[1] == "/dev/shm") shm_line = std::string(line);
  }
  EXPECT_THAT(shm_line, HasSubstr(" tmpfs ")) << log;
  EXPECT_THAT(shm_line, HasSubstr("size=65536k")) << log;
  EXPECT_THAT(log, HasSubstr("shm-writable\n"));
  // The tmpfs lived in the shim's mount namespace: the host sees a plain
  // directory, and nothing written to it. (The cri runtime mounts it in the
  // agent's, where containerd can see it, until Remove.)
  if (!cri()) {
    EXPECT_NE(access((VolumeDir("shm", "shm") + "/f").c_str(), F_OK), 0);
  }
}

// A secret volume (a key with the defaultMode 0640 jobsetd applied, an item
// at a nested path with mode 0400) and a configMap volume, read by a
// non-root user with an fsGroup: kubelet's modes (fsGroup adds 0440) and
// read-only mounts; secrets on a tmpfs that never reaches the host's disk.
TEST_P(SecurityContextTest, SecretAndConfigMapVolumesAreReadOnlyFiles) {
  const std::string creds = oci() ? "/creds" : root_ + "/creds";
  const std::string conf = oci() ? "/conf" : root_ + "/conf";
  ASSERT_EQ(mkdir((root_ + "/creds").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/conf").c_str(), 0755), 0);
  const std::string bb = "/bin/busybox";
  std::string script = absl::StrCat(
      "cd ", creds, " && ", bb, " cat token && echo && ", bb,
      " cat tls/key && echo && ", bb, " stat -c '%a %n' token tls/key && cd ",
      conf, " && ", bb, " cat app.yaml && ", bb, " stat -c '%a %n' app.yaml; ",
      "for d in ", creds, " ", conf,
      "; do if (echo x > $d/new) 2>/dev/null; then echo $d writable; else "
      "echo $d read-only; fi; done; ",
      bb, " id -u");
  // A subPath of a configMap (process mode refuses subPaths).
  if (oci()) {
    absl::StrAppend(&script,
                    "; if (echo x > /app.yaml) 2>/dev/null; then echo "
                    "subpath writable; else echo subpath read-only; fi; ",
                    bb, " cat /app.yaml");
  }
  PodBuilder builder("config");
  builder.Container("main", Busybox(script))
      .Mount("creds", creds)
      .Mount("conf", conf);
  if (oci()) builder.Mount("conf", "/app.yaml", "app.yaml");
  api::PodAssignment a = builder.Build();
  api::PodSpec* spec = a.mutable_pod()->mutable_spec();
  api::Volume* v = spec->add_volumes();
  v->set_name("creds");
  v->mutable_secret()->set_secret_name("db");
  v->mutable_secret()->set_default_mode(0640);
  api::KeyToPath* item = v->mutable_secret()->add_items();
  item->set_key("password");
  item->set_path("tls/key");
  item->set_mode(0400);
  v->mutable_secret()->add_items()->set_key("token");
  v = spec->add_volumes();
  v->set_name("conf");
  v->mutable_config_map()->set_name("app");
  // What jobsetd resolved and sends.
  api::ConfigVolume* secret = a.add_config_volumes();
  secret->set_name("creds");
  secret->set_secret(true);
  api::ConfigFile* f = secret->add_files();
  f->set_path("token");
  f->set_data("tok-123");
  f->set_mode(0640);
  f = secret->add_files();
  f->set_path("tls/key");
  f->set_data("key-456");
  f->set_mode(0400);
  api::ConfigVolume* config = a.add_config_volumes();
  config->set_name("conf");
  f = config->add_files();
  f->set_path("app.yaml");
  f->set_data("a: 1\n");
  f->set_mode(0644);
  PodSc(a)->set_run_as_user(1000);
  PodSc(a)->set_fs_group(2000);
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("config");
  const std::string log = Log("config", "main");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message() << log;
  std::string want = absl::StrCat(
      "tok-123\nkey-456\n640 token\n440 tls/key\na: 1\n644 app.yaml\n", creds,
      " read-only\n", conf, " read-only\n1000\n");
  if (oci()) absl::StrAppend(&want, "subpath read-only\na: 1\n");
  EXPECT_EQ(log, want);
  // The configMap is a directory on the host; the secret was a tmpfs in the
  // shim's mount namespace, gone with it. (The cri runtime mounts it in the
  // agent's, where containerd sees it, until Remove.)
  EXPECT_EQ(
      ReadFileToString(VolumeDir("config", "conf") + "/app.yaml").value_or(""),
      "a: 1\n");
  if (!cri()) {
    EXPECT_NE(access((VolumeDir("config", "creds") + "/token").c_str(), F_OK),
              0);
  }
}

TEST_P(SecurityContextTest, HostPathTypeFailureIsTheContainersStartError) {
  api::PodAssignment a = PodBuilder("hosttype")
                             .Container("main", Busybox("echo ran"))
                             .HostPathVolume(root_)
                             .Build();
  a.mutable_pod()
      ->mutable_spec()
      ->mutable_volumes(0)
      ->mutable_host_path()
      ->set_type("File");
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("hosttype");
  EXPECT_EQ(s.phase(), "Failed");
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr(absl::StrCat("hostPath type check failed: ", root_,
                                     " is not a file")));
  EXPECT_EQ(Log("hosttype", "main"), "");
  // The runtime still runs pods.
  ASSERT_THAT(Start(PodBuilder("after").Container("main", Busybox("echo ok"))),
              IsOk());
  EXPECT_EQ(WaitFinal("after").phase(), "Succeeded");
}

// Makes `dev` and character devices with /dev/null's numbers (1, 3) named
// `names` in it, so that nothing real is touched.
void MakeStandInNodes(const std::string& dev,
                      const std::vector<std::string>& names) {
  ASSERT_EQ(mkdir(dev.c_str(), 0755), 0) << strerror(errno);
  for (const std::string& name : names) {
    const std::string node = absl::StrCat(dev, "/", name);
    ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0)
        << node << ": " << strerror(errno);
  }
}

TEST_P(SecurityContextTest, GetsTheDeviceNodesOfItsAssignedGpusOnly) {
  if (!oci()) {
    GTEST_SKIP()
        << "process mode does not isolate /dev: a container sees the "
           "host's nodes, and only CUDA_VISIBLE_DEVICES names its GPUs";
  }
  // Stand-ins with /dev/null's numbers, so nothing real is touched.
  const std::string dev = DeviceRoot(work_dir_);
  MakeStandInNodes(dev, {"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"});
  // A stand-in driver: no CDI spec, so its libraries are mounted, read-only.
  const std::string lib = work_dir_ + "-driver/usr/lib/x86_64-linux-gnu";
  std::filesystem::create_directories(lib);
  { std::ofstream(lib + "/libcuda.so.1") << "stand-in libcuda\n"; }
  api::PodAssignment a =
      PodBuilder("gpus")
          .Container("main",
                     Busybox("/bin/busybox ls -1 /dev && echo x > "
                             "/dev/nvidia1 && echo written && "
                             "/bin/busybox cat "
                             "/usr/lib/x86_64-linux-gnu/libcuda.so.1 && "
                             "! echo y 2>/dev/null > "
                             "/usr/lib/x86_64-linux-gnu/libcuda.so.1 && "
                             "echo read-only"))
          .Build();
  // The agent gave it GPU 1; the pod's env asking for all changes nothing.
  a.mutable_devices()->add_nvidia_gpus(1);
  api::EnvVar* all =
      a.mutable_pod()->mutable_spec()->mutable_containers(0)->add_env();
  all->set_name("NVIDIA_VISIBLE_DEVICES");
  all->set_value("all");
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("gpus");
  const std::string log = Log("gpus", "main");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message() << "\n" << log;
  std::vector<std::string> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
  auto has = [&](const std::string& name) {
    return std::find(lines.begin(), lines.end(), name) != lines.end();
  };
  EXPECT_TRUE(has("nvidia1")) << log;
  EXPECT_TRUE(has("nvidiactl")) << log;
  EXPECT_TRUE(has("nvidia-uvm")) << log;
  EXPECT_FALSE(has("nvidia0")) << log;
  EXPECT_TRUE(has("written")) << log;  // it is /dev/null underneath
  EXPECT_TRUE(has("stand-in libcuda")) << log;
  EXPECT_TRUE(has("read-only")) << log;
}

// Where the NVIDIA container toolkit wrote a CDI spec, its edits for the
// assigned GPU: its device nodes, mounts and env (the env over the pod's).
TEST_P(SecurityContextTest, ACdiSpecsEditsReachTheContainer) {
  if (!oci()) GTEST_SKIP() << "process mode runs no container config";
  const std::string dev = DeviceRoot(work_dir_);
  MakeStandInNodes(dev, {"nvidia0", "nvidia-caps-imex"});
  const std::string files = work_dir_ + "-cdi-files";
  std::filesystem::create_directories(files);
  { std::ofstream(files + "/libcuda.so.1") << "from the CDI spec\n"; }
  std::filesystem::create_directories(work_dir_ + "-cdi");
  std::ofstream(work_dir_ + "-cdi/nvidia.yaml") << absl::StrCat(
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n"
      "  containerEdits:\n    deviceNodes:\n"
      "    - {path: /dev/nvidia-caps/imex, hostPath: ",
      dev,
      "/nvidia-caps-imex}\n"
      "containerEdits:\n  env: [DRIVER_FROM=cdi]\n  mounts:\n"
      "  - {hostPath: ",
      files,
      "/libcuda.so.1, containerPath: "
      "/usr/lib64/libcuda.so.1, options: [ro, nosuid, nodev, bind]}\n");
  api::PodAssignment a =
      PodBuilder("cdi")
          .Container("main", Busybox("/bin/busybox ls -1 /dev/nvidia-caps; "
                                     "/bin/busybox cat /usr/lib64/libcuda.so.1;"
                                     " echo driver=$DRIVER_FROM"))
          .Build();
  a.mutable_devices()->add_nvidia_gpus(0);
  api::EnvVar* mine =
      a.mutable_pod()->mutable_spec()->mutable_containers(0)->add_env();
  mine->set_name("DRIVER_FROM");
  mine->set_value("pod");
  ASSERT_THAT(StartAssignment(a), IsOk());
  api::PodStatus s = WaitFinal("cdi");
  const std::string log = Log("cdi", "main");
  EXPECT_EQ(s.phase(), "Succeeded") << s.message() << "\n" << log;
  EXPECT_EQ(log, "imex\nfrom the CDI spec\ndriver=cdi\n");

  // A GPU the spec does not name: the container's start error.
  api::PodAssignment b =
      PodBuilder("cdi-missing").Container("main", Busybox("echo ran")).Build();
  b.mutable_devices()->add_nvidia_gpus(3);
  ASSERT_THAT(StartAssignment(b), IsOk());
  s = WaitFinal("cdi-missing");
  EXPECT_EQ(s.phase(), "Failed");
  ASSERT_EQ(s.container_statuses_size(), 1);
  EXPECT_EQ(s.container_statuses(0).reason(), "StartError");
  EXPECT_THAT(s.container_statuses(0).message(),
              HasSubstr("no CDI spec has device \"nvidia.com/gpu=3\""));
}

// What only registry images have: Kubernetes' image semantics through CRI.
class CriImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = CriEnvironment::Get()->Unavailable();
    if (!why.empty()) GTEST_SKIP() << "cri: " << why;
    static int counter = 0;
    work_dir_ =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/cri-image-", ++counter);
    absl::StatusOr<std::unique_ptr<Runtime>> r = MakeCriRuntime(work_dir_);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = std::move(*r);
  }
  void TearDown() override {
    for (const std::string& uid : started_) {
      EXPECT_THAT(runtime_->Remove(uid), IsOk());
    }
  }

  absl::Status Start(const std::string& uid, const std::string& image,
                     const std::string& policy,
                     std::vector<std::string> command = {},
                     std::vector<std::string> args = {}) {
    api::PodAssignment a = PodBuilder(uid).Container("main", command).Build();
    api::Container* c = a.mutable_pod()->mutable_spec()->mutable_containers(0);
    c->set_image(image);
    c->set_image_pull_policy(policy);
    for (const std::string& arg : args) c->add_args(arg);
    started_.push_back(uid);
    return runtime_->Start(a);
  }

  // Waits until the container is waiting with `reason`.
  absl::StatusOr<PodState> WaitReason(const std::string& uid,
                                      const std::string& reason) {
    return WaitForPod(
        *runtime_, uid,
        [&](const api::PodStatus& s) {
          return s.container_statuses_size() == 1 &&
                 s.container_statuses(0).reason() == reason;
        },
        kTimeout);
  }

  std::string Log(const std::string& uid) {
    absl::StatusOr<std::string> text =
        ReadFileToString(runtime_->LogPath(uid, "main"));
    size_t consumed = 0;
    return text.ok() ? cri::DecodeCriLog(*text, &consumed) : "";
  }

  std::string work_dir_;
  std::unique_ptr<Runtime> runtime_;
  std::vector<std::string> started_;
};

TEST_F(CriImageTest, EntrypointCmdUserWorkdirAndEnvComeFromTheImage) {
  const std::string image = CriEnvironment::Get()->entry_image();
  ASSERT_THAT(Start("img", image, "IfNotPresent"), IsOk());
  absl::StatusOr<PodState> s = WaitForPod(*runtime_, "img", IsFinal, kTimeout);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.phase(), "Succeeded");
  // ENTRYPOINT + CMD.
  EXPECT_THAT(Log("img"),
              HasSubstr(Counted("arg", "/bin/helper") + Counted("arg", "argv") +
                        Counted("arg", "from-cmd") + "end\n"));
  // args replace CMD; command replaces ENTRYPOINT (and CMD).
  ASSERT_THAT(Start("args", image, "IfNotPresent", {}, {"argv", "mine"}),
              IsOk());
  ASSERT_THAT(Start("cmd", image, "IfNotPresent", {"/bin/helper", "env"}),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "args", IsFinal, kTimeout).status(),
              IsOk());
  ASSERT_THAT(WaitForPod(*runtime_, "cmd", IsFinal, kTimeout).status(), IsOk());
  EXPECT_THAT(Log("args"),
              HasSubstr(Counted("arg", "/bin/helper") + Counted("arg", "argv") +
                        Counted("arg", "mine") + "end\n"));
  const std::string env = Log("cmd");
  EXPECT_THAT(env, HasSubstr(Counted("env", "FROM_IMAGE=1")));
  EXPECT_THAT(env, HasSubstr(Counted("env", "OVERRIDE_ME=image")));
}

TEST_F(CriImageTest, AMissingImageWaitsWithKubernetesReasons) {
  const std::string missing =
      absl::StrCat(CriEnvironment::Get()->registry(), "/jobset-test/nope:1");
  ASSERT_THAT(Start("nope", missing, "IfNotPresent", {"/bin/helper"}), IsOk());
  // The first failure is ErrImagePull; within the back-off (10 s) it is
  // ImagePullBackOff. The pod waits, Pending.
  absl::StatusOr<PodState> s = WaitReason("nope", "ImagePullBackOff");
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.phase(), "Pending");
  EXPECT_EQ(s->status.container_statuses(0).flat_state(), "waiting");
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr(absl::StrCat("Back-off pulling image \"", missing,
                                     "\": ErrImagePull: ")));
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr("not found"));

  // A tag the registry does not have, of an image it has.
  const std::string image = CriEnvironment::Get()->image();
  const std::string no_tag =
      absl::StrCat(image.substr(0, image.rfind(':')), ":no-such-tag");
  ASSERT_THAT(Start("notag", no_tag, "IfNotPresent", {"/bin/helper"}), IsOk());
  s = WaitReason("notag", "ImagePullBackOff");
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.phase(), "Pending");
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr(absl::StrCat("Back-off pulling image \"", no_tag,
                                     "\": ErrImagePull: ")));
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr("not found"));
  // Kubelet's events for it, in order.
  std::vector<std::string> reasons;
  std::map<std::string, std::vector<api::PodEvent>> events =
      runtime_->TakeEvents();
  for (const api::PodEvent& e : events["notag"]) {
    reasons.push_back(absl::StrCat(e.type(), " ", e.reason()));
  }
  EXPECT_THAT(reasons,
              ::testing::IsSupersetOf(
                  {"Normal Pulling", "Warning Failed", "Normal BackOff"}));
  ASSERT_THAT(runtime_->Stop("notag", absl::Seconds(1)), IsOk());

  ASSERT_THAT(Start("never", missing, "Never", {"/bin/helper"}), IsOk());
  s = WaitReason("never", "ErrImageNeverPull");
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.container_statuses(0).message(),
            absl::StrCat("Container image \"", missing,
                         "\" is not present with pull policy of Never"));

  ASSERT_THAT(Start("badref", "Busybox:1", "IfNotPresent", {"/bin/helper"}),
              IsOk());
  s = WaitReason("badref", "InvalidImageName");
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr("Failed to apply default image tag \"Busybox:1\""));
  // A stop ends a waiting pod at once.
  ASSERT_THAT(runtime_->Stop("nope", absl::Seconds(1)), IsOk());
  s = WaitForPod(*runtime_, "nope", IsFinal, kTimeout);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.reason(), "Stopped");
}

TEST_F(CriImageTest, RunAsNonRootIsCheckedAgainstTheImageUser) {
  const std::string image = CriEnvironment::Get()->entry_image();
  api::PodAssignment a =
      PodBuilder("nonroot").Container("main", {"/bin/busybox", "id"}).Build();
  api::Container* c = a.mutable_pod()->mutable_spec()->mutable_containers(0);
  c->set_image(image);
  c->set_image_pull_policy("IfNotPresent");
  c->mutable_security_context()->set_run_as_non_root(true);
  started_.push_back("nonroot");
  ASSERT_THAT(runtime_->Start(a), IsOk());
  absl::StatusOr<PodState> s =
      WaitForPod(*runtime_, "nonroot", IsFinal, kTimeout);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.phase(), "Succeeded") << s->status.ShortDebugString();
  // The image's uid, and (as kubelet sends it) gid 0.
  EXPECT_THAT(Log("nonroot"), HasSubstr("uid=1234 gid=0"));

  // The root image with runAsNonRoot: kubelet's refusal.
  c->set_image(CriEnvironment::Get()->image());
  a.mutable_pod()->mutable_metadata()->set_uid("rootimg");
  started_.push_back("rootimg");
  ASSERT_THAT(runtime_->Start(a), IsOk());
  s = WaitForPod(*runtime_, "rootimg", IsFinal, kTimeout);
  ASSERT_THAT(s.status(), IsOk());
  EXPECT_EQ(s->status.phase(), "Failed");
  EXPECT_EQ(s->status.container_statuses(0).reason(),
            "CreateContainerConfigError");
  EXPECT_THAT(s->status.container_statuses(0).message(),
              HasSubstr("container has runAsNonRoot and image will run as "
                        "root"));
}

// Issue 40: outside privileged namespaces a container that sets no
// runAsUser on an image that runs as root (it names no user) runs as the
// agent's --default_pod_uid, its group too, as in the process and oci
// runtimes, and so passes runAsNonRoot; an image that names a non-root user
// runs as it (and, as kubelet sends it, gid 0).
TEST_F(CriImageTest, TheDefaultPodUidReplacesOnlyARootImageUser) {
  const std::pair<std::string, std::string> cases[] = {
      {CriEnvironment::Get()->image(), "65534\n65534\n"},
      {CriEnvironment::Get()->entry_image(), "1234\n0\n"},
  };
  int n = 0;
  for (const auto& [image, want] : cases) {
    SCOPED_TRACE(image);
    const std::string uid = absl::StrCat("defuid-", ++n);
    api::PodAssignment a =
        PodBuilder(uid)
            .SecurityLevel("restricted")
            .Container("main", {"/bin/busybox", "sh", "-c",
                                "/bin/busybox id -u; /bin/busybox id -g"})
            .Build();
    api::Container* c = a.mutable_pod()->mutable_spec()->mutable_containers(0);
    c->set_image(image);
    c->set_image_pull_policy("IfNotPresent");
    c->mutable_security_context()->set_run_as_non_root(true);
    started_.push_back(uid);
    ASSERT_THAT(runtime_->Start(a), IsOk());
    absl::StatusOr<PodState> s = WaitForPod(*runtime_, uid, IsFinal, kTimeout);
    ASSERT_THAT(s.status(), IsOk());
    EXPECT_EQ(s->status.phase(), "Succeeded") << s->status.ShortDebugString();
    EXPECT_EQ(Log(uid), want);
  }
}

// imagePullSecrets: an image on a registry with basic auth is pulled with
// the credential whose key matches it, each matching one in turn; without
// one the pod waits, ErrImagePull then ImagePullBackOff.
TEST_F(CriImageTest, APrivateRegistryIsPulledWithTheMatchingCredential) {
  const std::string dir =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/cri-private-registry");
  ASSERT_THAT(BuildBusyboxRootfs(dir + "/rootfs"), IsOk());
  absl::StatusOr<std::unique_ptr<TestRegistry>> registry =
      TestRegistry::Start(dir + "/registry", "alice", "s3cret");
  ASSERT_THAT(registry.status(), IsOk());
  ImageConfig config;
  config.entrypoint = {"/bin/sh", "-c", "echo pulled with credentials"};
  config.env = {"PATH=/bin"};
  absl::StatusOr<std::string> image =
      (*registry)->Push(dir + "/rootfs", config, "private/bb", "1");
  ASSERT_THAT(image.status(), IsOk());
  const std::string address = (*registry)->address();

  // {key, username, password} each. Always: every pod pulls, whatever an
  // earlier one left in the runtime's image store.
  auto start = [&](const std::string& uid,
                   const std::vector<std::vector<std::string>>& creds) {
    api::PodAssignment a = PodBuilder(uid).Container("main", {}).Build();
    api::Container* c = a.mutable_pod()->mutable_spec()->mutable_containers(0);
    c->set_image(*image);
    c->set_image_pull_policy("Always");
    for (const std::vector<std::string>& cred : creds) {
      api::RegistryCredential* r = a.add_pull_credentials();
      r->set_server(cred.at(0));
      r->set_username(cred.at(1));
      r->set_password(cred.at(2));
    }
    started_.push_back(uid);
    return runtime_->Start(a);
  };
  auto expect_unauthorized = [&](const std::string& uid) {
    absl::StatusOr<PodState> s = WaitReason(uid, "ImagePullBackOff");
    ASSERT_THAT(s.status(), IsOk());
    EXPECT_EQ(s->status.phase(), "Pending");
    EXPECT_EQ(s->status.container_statuses(0).flat_state(), "waiting");
    EXPECT_THAT(s->status.container_statuses(0).message(),
                HasSubstr(absl::StrCat("Back-off pulling image \"", *image,
                                       "\": ErrImagePull: ")));
    EXPECT_THAT(s->status.container_statuses(0).message(),
                HasSubstr("401 Unauthorized"));
  };
  auto expect_pulled = [&](const std::string& uid) {
    absl::StatusOr<PodState> s = WaitForPod(*runtime_, uid, IsFinal, kTimeout);
    ASSERT_THAT(s.status(), IsOk());
    EXPECT_EQ(s->status.phase(), "Succeeded") << s->status.ShortDebugString();
    EXPECT_EQ(Log(uid), "pulled with credentials\n");
  };

  // Anonymous: no credentials at all.
  ASSERT_THAT(start("anonymous", {}), IsOk());
  expect_unauthorized("anonymous");
  // A wrong password, and the right one under a key for another port (which
  // must not be sent).
  ASSERT_THAT(start("wrong", {{address, "alice", "wrong"},
                              {"127.0.0.1:1", "alice", "s3cret"}}),
              IsOk());
  expect_unauthorized("wrong");
  // The right credential under the key "127.0.0.1:PORT".
  ASSERT_THAT(start("right", {{address, "alice", "s3cret"}}), IsOk());
  expect_pulled("right");
  // Under "http://127.0.0.1:PORT", after a more specific key's wrong one
  // failed: each matching credential is tried in turn.
  ASSERT_THAT(
      start("scheme", {{absl::StrCat("http://", address), "alice", "s3cret"},
                       {absl::StrCat(address, "/private"), "alice", "wrong"}}),
      IsOk());
  expect_pulled("scheme");
  // The pods that could not pull are still waiting, and stop at once.
  EXPECT_EQ(runtime_->List().size(), 4u);
  for (const char* uid : {"anonymous", "wrong"}) {
    ASSERT_THAT(runtime_->Stop(uid, absl::Seconds(1)), IsOk());
    absl::StatusOr<PodState> s = WaitForPod(*runtime_, uid, IsFinal, kTimeout);
    ASSERT_THAT(s.status(), IsOk());
    EXPECT_EQ(s->status.reason(), "Stopped");
  }
}

std::string ProcessUnavailable() { return ""; }
std::string CriUnavailable() { return CriEnvironment::Get()->Unavailable(); }
std::string OciUnavailable() {
  absl::Status s = OciAvailable();
  return s.ok() ? "" : std::string(s.message());
}

// Every runtime, for each suite.
const auto kRuntimes = ::testing::Values(
    RuntimeFactory{"process",
                   [](const std::string& w, const std::string& i, int64_t cap) {
                     return MakeShimRuntime(ShimRuntime::Mode::kProcess, w, i,
                                            cap);
                   },
                   ProcessUnavailable, false},
    RuntimeFactory{"oci",
                   [](const std::string& w, const std::string& i, int64_t cap) {
                     return MakeShimRuntime(ShimRuntime::Mode::kOci, w, i, cap);
                   },
                   OciUnavailable, true},
    RuntimeFactory{"cri",
                   [](const std::string& w, const std::string&, int64_t cap) {
                     return MakeCriRuntime(w, cap);
                   },
                   CriUnavailable, true, false, true},
    RuntimeFactory{"fake",
                   [](const std::string& w, const std::string&, int64_t) {
                     return MakeFakeRuntime(w);
                   },
                   ProcessUnavailable, false, true});

std::string RuntimeName(const ::testing::TestParamInfo<RuntimeFactory>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RuntimeContractTest, kRuntimes, RuntimeName);
INSTANTIATE_TEST_SUITE_P(Runtimes, SecurityContextTest, kRuntimes, RuntimeName);

}  // namespace
}  // namespace jobset::agent
