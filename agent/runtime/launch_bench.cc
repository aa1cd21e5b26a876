// Launch latency per pod (Start -> Running) for the shim runtime in process
// and oci modes and for the cri runtime on a private containerd (the image
// cached), the RSS of one jobset-pod-shim, and the time a pod of a 100 MiB
// image from a local registry takes to run when the image is not there (and
// under imagePullPolicy Always when it is). Prints a table.
//
//   bazel run -c opt //agent/runtime:launch_bench -- [pods per mode, default
//   20] [process|oci|cri: that runtime only]

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/containerd_test_env.h"
#include "agent/runtime/cri_runtime.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/runtime_test_env.h"
#include "agent/runtime/shim_runtime.h"

namespace jobset::agent {
namespace {

int64_t RssKiB(pid_t pid) {
  absl::StatusOr<std::string> status =
      ReadFileToString(absl::StrCat("/proc/", pid, "/status"));
  if (!status.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(*status, '\n')) {
    if (absl::ConsumePrefix(&line, "VmRSS:")) {
      int64_t kib = 0;
      line = absl::StripAsciiWhitespace(line);
      line = line.substr(0, line.find(' '));
      if (absl::SimpleAtoi(line, &kib)) return kib;
    }
  }
  return -1;
}

// p50, p90, max and mean of `ms` (sorted here), as the table prints them.
void PrintRow(const std::string& name, std::vector<double> ms,
              const std::string& last) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double m : ms) sum += m;
  printf("%-8s %5zu %9.1f %9.1f %9.1f %9.1f %10s\n", name.c_str(), ms.size(),
         ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back(), sum / ms.size(),
         last.c_str());
}

// Starts `pod` and returns the milliseconds until it is Running; -1 (with
// the reason printed) when it is not within `timeout`.
double TimeToRunning(Runtime& runtime, const api::PodAssignment& pod,
                     absl::Duration timeout = absl::Seconds(30)) {
  const std::string& uid = pod.pod().metadata().uid();
  const absl::Time start = absl::Now();
  if (absl::Status s = runtime.Start(pod); !s.ok()) {
    printf("%s: %s\n", uid.c_str(), std::string(s.message()).c_str());
    return -1;
  }
  absl::StatusOr<PodState> running =
      testing::WaitForPod(runtime, uid, testing::IsRunning, timeout);
  if (!running.ok()) {
    printf("%s: %s\n", uid.c_str(),
           std::string(running.status().message()).c_str());
    return -1;
  }
  return absl::ToDoubleMilliseconds(absl::Now() - start);
}

// A copy of `from` with 100 MiB of random bytes (gzip cannot shrink them)
// at /data.bin.
absl::Status BuildBigRootfs(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks,
                        ec);
  if (ec) return absl::InternalError("copy " + from + ": " + ec.message());
  FILE* in = fopen("/dev/urandom", "rb");
  FILE* out = fopen((to + "/data.bin").c_str(), "wb");
  if (in == nullptr || out == nullptr) {
    if (in != nullptr) fclose(in);
    if (out != nullptr) fclose(out);
    return absl::InternalError(absl::StrCat("random data: ", strerror(errno)));
  }
  std::string buf(1 << 20, '\0');
  bool ok = true;
  for (int i = 0; i < 100 && ok; ++i) {
    ok = fread(buf.data(), 1, buf.size(), in) == buf.size() &&
         fwrite(buf.data(), 1, buf.size(), out) == buf.size();
  }
  fclose(in);
  ok = fclose(out) == 0 && ok;
  return ok ? absl::OkStatus() : absl::InternalError("writing data.bin");
}

// The cri runtime (its defaults, as jobset-agent runs it: a 1 s sync) on a
// private containerd and registry.
int RunCri(int pods, const std::string& base) {
  if (std::string why = testing::ContainerdUnavailable(); !why.empty()) {
    printf("%-8s skipped: %s\n", "cri", why.c_str());
    return 0;
  }
  const std::string image_dir = base + "/cri-images";
  absl::Status s = testing::BuildTestImage(
      image_dir, testing::RunfilePath("agent/runtime/test_helper"));
  const std::string rootfs = image_dir + "/testimg/rootfs";
  if (s.ok()) s = BuildBigRootfs(rootfs, base + "/big-rootfs");
  absl::StatusOr<std::unique_ptr<testing::TestRegistry>> registry =
      testing::TestRegistry::Start(base + "/registry");
  if (!s.ok() || !registry.ok()) {
    printf("cri: %s\n",
           std::string((s.ok() ? registry.status() : s).message()).c_str());
    return 1;
  }
  testing::ImageConfig config;
  config.env = {"PATH=/bin"};
  absl::StatusOr<std::string> small =
      (*registry)->Push(rootfs, config, "bench/helper", "1");
  absl::StatusOr<std::string> big =
      (*registry)->Push(base + "/big-rootfs", config, "bench/big", "1");
  absl::StatusOr<std::unique_ptr<testing::TestContainerd>> containerd =
      testing::TestContainerd::Start(base + "/containerd");
  if (!small.ok() || !big.ok() || !containerd.ok()) {
    const absl::Status& e = !small.ok() ? small.status()
                            : !big.ok() ? big.status()
                                        : containerd.status();
    printf("cri: %s\n", std::string(e.message()).c_str());
    return 1;
  }
  int rc = 0;
  {
    CriRuntime::Options options;
    options.work_dir = base + "/cri";
    options.endpoint = (*containerd)->endpoint();
    absl::StatusOr<std::unique_ptr<CriRuntime>> runtime =
        CriRuntime::Create(options);
    if (!runtime.ok()) {
      printf("cri: %s\n", std::string(runtime.status().message()).c_str());
      return 1;
    }
    auto pod = [](const std::string& uid, const std::string& image,
                  const std::string& policy) {
      api::PodAssignment a =
          testing::PodBuilder(uid)
              .Container("main", {"/bin/helper", "sleep", "60000"})
              .Build();
      api::Container* c =
          a.mutable_pod()->mutable_spec()->mutable_containers(0);
      c->set_image(image);
      c->set_image_pull_policy(policy);
      return a;
    };
    std::vector<std::string> started;
    auto run = [&](const std::string& uid, const std::string& image,
                   const std::string& policy) {
      started.push_back(uid);
      return TimeToRunning(**runtime, pod(uid, image, policy),
                           absl::Minutes(5));
    };
    // The first pod pulls the small image; the rest find it cached.
    const double first = run("cri-pull", *small, "IfNotPresent");
    std::vector<double> ms;
    for (int i = 0; i < pods && first >= 0; ++i) {
      const double t = run(absl::StrCat("cri-", i), *small, "IfNotPresent");
      if (t < 0) break;
      ms.push_back(t);
    }
    const double big_cold = run("big-cold", *big, "IfNotPresent");
    const double big_always = run("big-always", *big, "Always");
    if (static_cast<int>(ms.size()) == pods) {
      PrintRow("cri", ms, "-");
      printf("\ncri, Start -> Running (ms), one pod each:\n");
      printf("  small image not yet pulled           %9.1f\n", first);
      printf("  100 MiB image not yet pulled         %9.1f\n", big_cold);
      printf("  100 MiB image present, policy Always %9.1f\n", big_always);
      rc = big_cold < 0 || big_always < 0;
    } else {
      rc = 1;
    }
    for (const std::string& uid : started) (void)(*runtime)->Remove(uid);
  }
  if (absl::Status down = (*containerd)->Shutdown(); !down.ok()) {
    printf("cri: shutdown: %s\n", std::string(down.message()).c_str());
    rc = 1;
  }
  return rc;
}

int RunMode(ShimRuntime::Mode mode, int pods, const std::string& base) {
  const bool oci = mode == ShimRuntime::Mode::kOci;
  const std::string name = oci ? "oci" : "process";
  std::string helper = testing::RunfilePath("agent/runtime/test_helper");
  const std::string image_dir = base + "/images";
  if (oci) {
    absl::Status available = testing::OciAvailable();
    if (!available.ok()) {
      printf("%-8s skipped: %s\n", name.c_str(),
             std::string(available.message()).c_str());
      return 0;
    }
    absl::Status built = testing::BuildTestImage(image_dir, helper);
    if (!built.ok()) {
      printf("%-8s image: %s\n", name.c_str(),
             std::string(built.message()).c_str());
      return 1;
    }
    helper = "/bin/helper";
  } else {
    // A process-mode pod runs in a private root that has the host's system
    // directories only: the helper (a runfile: a symlink into bazel-out)
    // reaches it as a hostPath volume of its real directory.
    char real[PATH_MAX];
    if (realpath(helper.c_str(), real) != nullptr) helper = real;
  }
  ShimRuntime::Options options;
  options.work_dir = base + "/" + name;
  options.shim_path = testing::RunfilePath("agent/runtime/jobset-pod-shim");
  options.mode = mode;
  options.image_dir = image_dir;
  options.cgroup_root = "jobset-bench";
  absl::StatusOr<std::unique_ptr<ShimRuntime>> runtime =
      ShimRuntime::Create(options);
  if (!runtime.ok()) {
    printf("%s\n", std::string(runtime.status().message()).c_str());
    return 1;
  }
  std::vector<double> ms;
  int64_t rss = -1;
  for (int i = 0; i < pods; ++i) {
    const std::string uid = absl::StrCat(name, "-", i);
    testing::PodBuilder builder(uid);
    builder.Container("main", {helper, "sleep", "60000"});
    if (!oci) builder.HostPathVolume(helper.substr(0, helper.rfind('/')));
    const api::PodAssignment pod = builder.Build();
    const double t = TimeToRunning(**runtime, pod);
    if (t < 0) return 1;
    ms.push_back(t);
    if (i == 0) {
      absl::StatusOr<std::string> text = ReadFileToString(
          absl::StrCat(options.work_dir, "/pods/", uid, "/", kShimPidFile));
      if (text.ok()) {
        absl::StatusOr<ProcessId> id = ParseProcessId(*text);
        if (id.ok()) rss = RssKiB(id->pid);
      }
    }
  }
  for (int i = 0; i < pods; ++i) {
    (void)(*runtime)->Remove(absl::StrCat(name, "-", i));
  }
  PrintRow(name, ms, absl::StrCat(rss));
  return 0;
}

}  // namespace
}  // namespace jobset::agent

int main(int argc, char** argv) {
  int pods = 20;
  if (argc > 1 && !absl::SimpleAtoi(argv[1], &pods)) pods = 20;
  const std::string only = argc > 2 ? argv[2] : "";
  if (!only.empty() && only != "process" && only != "oci" && only != "cri") {
    fprintf(stderr,
            "launch_bench: unknown runtime \"%s\" (process, oci, cri)\n",
            only.c_str());
    return 2;
  }
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  char tmpl[] = "/tmp/launch_bench.XXXXXX";
  const char* base = mkdtemp(tmpl);
  if (base == nullptr) return 1;
  printf("Start -> Running latency (ms) per pod, polled every 10 ms\n");
  printf("%-8s %5s %9s %9s %9s %9s %10s\n", "mode", "pods", "p50", "p90", "max",
         "mean", "shimRSSKiB");
  int rc = 0;
  if (wanted("process")) {
    rc |= jobset::agent::RunMode(jobset::agent::ShimRuntime::Mode::kProcess,
                                 pods, base);
  }
  if (wanted("oci")) {
    rc |= jobset::agent::RunMode(jobset::agent::ShimRuntime::Mode::kOci, pods,
                                 base);
  }
  if (wanted("cri")) rc |= jobset::agent::RunCri(pods, base);
  (void)jobset::agent::RemoveTree(base);
  return rc;
}
