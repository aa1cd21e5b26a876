// Launch latency per pod (Start -> Running) for the shim runtime in process
// and oci modes, and the RSS of one jobset-pod-shim. Prints a table.
//
//   bazel run //agent/runtime:launch_bench -- [pods per mode, default 20]

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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
    api::PodAssignment pod = testing::PodBuilder(uid)
                                 .Container("main", {helper, "sleep", "60000"})
                                 .Build();
    const absl::Time start = absl::Now();
    if (!(*runtime)->Start(pod).ok()) return 1;
    absl::StatusOr<PodState> running = testing::WaitForPod(
        **runtime, uid, testing::IsRunning, absl::Seconds(30));
    if (!running.ok()) {
      printf("%s\n", std::string(running.status().message()).c_str());
      return 1;
    }
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
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
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double m : ms) sum += m;
  printf("%-8s %5d %9.1f %9.1f %9.1f %9.1f %10lld\n", name.c_str(), pods,
         ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back(), sum / ms.size(),
         static_cast<long long>(rss));
  return 0;
}

}  // namespace
}  // namespace jobset::agent

int main(int argc, char** argv) {
  int pods = 20;
  if (argc > 1 && !absl::SimpleAtoi(argv[1], &pods)) pods = 20;
  char tmpl[] = "/tmp/launch_bench.XXXXXX";
  const char* base = mkdtemp(tmpl);
  if (base == nullptr) return 1;
  printf("Start -> Running latency (ms) per pod, polled every 10 ms\n");
  printf("%-8s %5s %9s %9s %9s %9s %10s\n", "mode", "pods", "p50", "p90", "max",
         "mean", "shimRSSKiB");
  int rc = jobset::agent::RunMode(jobset::agent::ShimRuntime::Mode::kProcess,
                                  pods, base);
  rc |= jobset::agent::RunMode(jobset::agent::ShimRuntime::Mode::kOci, pods,
                               base);
  (void)jobset::agent::RemoveTree(base);
  return rc;
}
