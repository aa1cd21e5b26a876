#include "agent/host.h"

#include <glob.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/quantity.h"

namespace jobset::agent {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";
constexpr char kTpu[] = "google.com/tpu";
constexpr char kJobNameLabel[] = "batch.kubernetes.io/job-name";
constexpr char kCompletionIndexLabel[] =
    "batch.kubernetes.io/job-completion-index";

void SetEnvIfAbsent(api::Container* c, const std::string& name,
                    const std::string& value) {
  for (const api::EnvVar& v : c->env()) {
    if (v.name() == name) return;
  }
  api::EnvVar* v = c->add_env();
  v->set_name(name);
  v->set_value(value);
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    absl::string_view flag, absl::string_view text) {
  std::map<std::string, std::string> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": \"", item, "\" is not key=value"));
    }
    out[kv[0]] = kv[1];
  }
  return out;
}

absl::StatusOr<std::vector<api::Taint>> ParseTaints(absl::string_view text) {
  std::vector<api::Taint> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("--taints: \"", item, "\" is not key[=value]:Effect"));
    }
    if (parts[1] != "NoSchedule" && parts[1] != "PreferNoSchedule" &&
        parts[1] != "NoExecute") {
      return absl::InvalidArgumentError(
          absl::StrCat("--taints: \"", item, "\": effect \"", parts[1],
                       "\" is not NoSchedule, PreferNoSchedule or NoExecute"));
    }
    std::vector<std::string> kv =
        absl::StrSplit(parts[0], absl::MaxSplits('=', 1));
    if (kv[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--taints: \"", item, "\" has no key"));
    }
    api::Taint& t = out.emplace_back();
    t.set_key(kv[0]);
    if (kv.size() == 2) t.set_value(kv[1]);
    t.set_effect(parts[1]);
  }
  return out;
}

Accelerators ParseNvidiaSmi(absl::string_view output) {
  Accelerators a;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    ++a.nvidia_gpus;
    if (a.nvidia_model.empty()) a.nvidia_model = std::string(line);
  }
  return a;
}

Accelerators DetectAccelerators() {
  Accelerators a;
  for (const char* smi : {"/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi"}) {
    if (access(smi, X_OK) != 0) continue;
    const std::string cmd = absl::StrCat(
        smi, " --query-gpu=name --format=csv,noheader 2>/dev/null");
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (pipe == nullptr) break;
    std::string output;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0)
      output.append(buf, n);
    a = ParseNvidiaSmi(output);
    break;
  }
  glob_t g;
  if (glob("/dev/accel[0-9]*", 0, nullptr, &g) == 0) {
    a.tpu_chips = static_cast<int>(g.gl_pathc);
  }
  globfree(&g);
  return a;
}

void DescribeHost(const Accelerators& accelerators,
                  const std::map<std::string, std::string>& given,
                  api::NodeRegistration* registration) {
  auto& capacity = *registration->mutable_capacity();
  capacity["cpu"] = absl::StrCat(sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemTotal:") {
      capacity["memory"] = absl::StrCat(kib, "Ki");
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  auto& labels = *registration->mutable_labels();
  if (accelerators.nvidia_gpus > 0) {
    capacity[kGpu] = absl::StrCat(accelerators.nvidia_gpus);
    labels["nvidia.com/gpu.count"] = absl::StrCat(accelerators.nvidia_gpus);
    std::string model = accelerators.nvidia_model;
    for (char& ch : model) {
      if (!absl::ascii_isalnum(ch) && ch != '.' && ch != '_' && ch != '-')
        ch = '-';
    }
    labels["nvidia.com/gpu.product"] = model.substr(0, 63);
    registration->add_accelerators(accelerators.nvidia_model);
  }
  if (accelerators.tpu_chips > 0) {
    capacity[kTpu] = absl::StrCat(accelerators.tpu_chips);
    labels["google.com/tpu.count"] = absl::StrCat(accelerators.tpu_chips);
    registration->add_accelerators("tpu");
  }
  for (const auto& [k, v] : given) capacity[k] = v;
}

absl::StatusOr<std::vector<int>> PickDevices(int count, int total,
                                             const std::set<int>& used) {
  std::vector<int> out;
  for (int i = 0; i < total && static_cast<int>(out.size()) < count; ++i) {
    if (!used.contains(i)) out.push_back(i);
  }
  if (static_cast<int>(out.size()) < count) {
    return absl::ResourceExhaustedError(
        absl::StrCat("asks for ", count, " devices; ", total - used.size(),
                     " of ", total, " are free"));
  }
  return out;
}

int ExtendedRequest(const api::PodSpec& spec, absl::string_view name) {
  int total = 0;
  for (const api::Container& c : spec.containers()) {
    const auto& limits = c.resources().limits();
    const auto& requests = c.resources().requests();
    auto it = limits.find(std::string(name));
    if (it == limits.end()) it = requests.find(std::string(name));
    if (it == requests.end()) continue;
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(it->second);
    if (q.ok()) total += static_cast<int>(q->Value());
  }
  return total;
}

void AddAcceleratorEnv(const std::vector<int>& gpus,
                       api::PodAssignment* assignment) {
  api::Pod* pod = assignment->mutable_pod();
  if (!gpus.empty()) {
    const std::string devices = absl::StrJoin(gpus, ",");
    for (api::Container& c : *pod->mutable_spec()->mutable_containers()) {
      SetEnvIfAbsent(&c, "CUDA_VISIBLE_DEVICES", devices);
      SetEnvIfAbsent(&c, "NVIDIA_VISIBLE_DEVICES", devices);
    }
  }
  if (ExtendedRequest(pod->spec(), kTpu) > 0) {
    const auto& labels = pod->metadata().labels();
    auto job = labels.find(kJobNameLabel);
    auto index = labels.find(kCompletionIndexLabel);
    std::map<int, std::string> hostnames;  // by completion index
    if (job != labels.end()) {
      const std::string prefix = absl::StrCat(job->second, "-");
      for (const api::HostEntry& e : assignment->hosts()) {
        for (const std::string& name : e.names()) {
          absl::string_view rest = name;
          int i = 0;
          if (absl::ConsumePrefix(&rest, prefix) && absl::SimpleAtoi(rest, &i))
            hostnames[i] = name;
        }
      }
    }
    std::vector<std::string> ordered;
    for (auto& [i, name] : hostnames) ordered.push_back(name);
    for (api::Container& c : *pod->mutable_spec()->mutable_containers()) {
      if (index != labels.end())
        SetEnvIfAbsent(&c, "TPU_WORKER_ID", index->second);
      SetEnvIfAbsent(&c, "TPU_WORKER_HOSTNAMES", absl::StrJoin(ordered, ","));
    }
  }
}

void SetPodDevices(const std::vector<int>& gpus,
                   api::PodAssignment* assignment) {
  api::PodDevices* devices = assignment->mutable_devices();
  devices->Clear();
  devices->mutable_nvidia_gpus()->Add(gpus.begin(), gpus.end());
  devices->set_tpus(ExtendedRequest(assignment->pod().spec(), kTpu) > 0);
}

}  // namespace jobset::agent
