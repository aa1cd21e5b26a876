#include "scheduler/policy_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/quote.h"

ABSL_FLAG(bool, manage_jobs_without_queue_name, false,
          "Kueue's manageJobsWithoutQueueName: JobSets without the "
          "kueue.x-k8s.io/queue-name label are held suspended too, with a "
          "Workload that is admitted once a queue is named");
ABSL_FLAG(bool, wait_for_pods_ready, true,
          "Kueue's waitForPodsReady (on by default, as in Kueue since v0.19): "
          "an admitted JobSet whose pods are not all ready in time is "
          "evicted (PodsReadyTimeout) and queued again after a backoff");
ABSL_FLAG(absl::Duration, wait_for_pods_ready_timeout, absl::Minutes(30),
          "Kueue's waitForPodsReady.timeout: from admission to all pods ready");
ABSL_FLAG(absl::Duration, wait_for_pods_ready_recovery_timeout,
          absl::ZeroDuration(),
          "Kueue's waitForPodsReady.recoveryTimeout: from a pod failing after "
          "all were ready to all ready again; 0: the timeout");
ABSL_FLAG(int32_t, requeuing_backoff_base_seconds, 60,
          "Kueue's requeuingStrategy.backoffBaseSeconds");
ABSL_FLAG(int32_t, requeuing_backoff_max_seconds, 3600,
          "Kueue's requeuingStrategy.backoffMaxSeconds");
ABSL_FLAG(int32_t, requeuing_backoff_limit_count, -1,
          "Kueue's requeuingStrategy.backoffLimitCount: evictions for "
          "PodsReadyTimeout before the Workload is deactivated; -1: no limit");
ABSL_FLAG(bool, fair_sharing, false,
          "Kueue's fairSharing: ClusterQueues of a cohort are admitted and "
          "preempted by their dominant resource share over their "
          "fairSharing.weight instead of by priority alone");
ABSL_FLAG(std::string, fair_sharing_preemption_strategies,
          "LessThanOrEqualToFinalShare,LessThanInitialShare",
          "Kueue's fairSharing.preemptionStrategies, in order: "
          "LessThanOrEqualToFinalShare, LessThanInitialShare, or both in "
          "this order");
ABSL_FLAG(int32_t, quarantine_after, 0,
          "Bad-host quarantine (jobsetd's addition, docs/resilience.md): a "
          "node with this many failures attributed to it (lost, device "
          "errors, lone failures, stragglers; each JobSet attempt once) "
          "within --quarantine_window is tainted "
          "jobsetd.io/quarantined:NoSchedule, and a node's fault no longer "
          "counts against maxRestarts (reason NodeFault); 0: off");
ABSL_FLAG(absl::Duration, quarantine_window, absl::Hours(24),
          "The window --quarantine_after counts over");
ABSL_FLAG(std::vector<std::string>, device_error_exit_codes, {},
          "Container exit codes that mean a device error on the node (a "
          "NodeFault with --quarantine_after), comma-separated");
ABSL_FLAG(std::vector<std::string>, device_error_signals, {},
          "Signals (numbers) that mean a device error on the node, "
          "comma-separated");

namespace jobset::scheduler {
namespace {

// Bad-host quarantine from --quarantine_after and kin; false with `error`
// naming a bad value.
bool QuarantineFromFlags(ControllerCore::Options::Quarantine* q,
                         std::string* error) {
  q->after = absl::GetFlag(FLAGS_quarantine_after);
  q->window = absl::GetFlag(FLAGS_quarantine_window);
  if (q->after < 0 || q->after > 16) {
    *error = absl::StrCat("--quarantine_after=", q->after,
                          ": must be 0 (off) to 16");
    return false;
  }
  if (q->window <= absl::ZeroDuration() || q->window > absl::Hours(24 * 30)) {
    *error =
        absl::StrCat("--quarantine_window=", absl::FormatDuration(q->window),
                     ": must be more than 0 and at most 720h");
    return false;
  }
  for (const auto& [flag, values, out] :
       {std::tuple{"--device_error_exit_codes",
                   absl::GetFlag(FLAGS_device_error_exit_codes),
                   &q->devices.exit_codes},
        std::tuple{"--device_error_signals",
                   absl::GetFlag(FLAGS_device_error_signals),
                   &q->devices.signals}}) {
    for (const std::string& v : values) {
      int32_t n = 0;
      if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 255) {
        *error = absl::StrCat(flag, ": ", Quote(v), " is not a number 1..255");
        return false;
      }
      out->push_back(n);
    }
  }
  return true;
}

// Kueue's fairSharing from --fair_sharing and its strategies; false with
// `error` naming a combination Kueue's configuration refuses.
bool FairSharingFromFlags(api::FairSharingConfig* config, std::string* error) {
  config->enable = absl::GetFlag(FLAGS_fair_sharing);
  const std::string flag =
      absl::GetFlag(FLAGS_fair_sharing_preemption_strategies);
  config->preemption_strategies = absl::StrSplit(flag, ',');
  const std::vector<std::vector<std::string>> allowed = {
      {"LessThanOrEqualToFinalShare"},
      {"LessThanInitialShare"},
      {"LessThanOrEqualToFinalShare", "LessThanInitialShare"}};
  if (std::find(allowed.begin(), allowed.end(),
                config->preemption_strategies) != allowed.end()) {
    return true;
  }
  *error = absl::StrCat(
      "--fair_sharing_preemption_strategies: ", Quote(flag),
      " is not LessThanOrEqualToFinalShare, LessThanInitialShare or "
      "LessThanOrEqualToFinalShare,LessThanInitialShare");
  return false;
}

// Kueue's waitForPodsReady from --wait_for_pods_ready and kin; false with
// `error` naming a flag out of range.
bool WaitForPodsReadyFromFlags(api::WaitForPodsReady* config,
                               std::string* error) {
  config->enable = absl::GetFlag(FLAGS_wait_for_pods_ready);
  config->timeout = absl::GetFlag(FLAGS_wait_for_pods_ready_timeout);
  const absl::Duration recovery =
      absl::GetFlag(FLAGS_wait_for_pods_ready_recovery_timeout);
  config->recovery_timeout =
      recovery == absl::ZeroDuration() ? config->timeout : recovery;
  config->backoff_base_seconds =
      absl::GetFlag(FLAGS_requeuing_backoff_base_seconds);
  config->backoff_max_seconds =
      absl::GetFlag(FLAGS_requeuing_backoff_max_seconds);
  config->backoff_limit_count =
      absl::GetFlag(FLAGS_requeuing_backoff_limit_count);
  if (config->timeout <= absl::ZeroDuration() ||
      recovery < absl::ZeroDuration()) {
    *error =
        "--wait_for_pods_ready_timeout must be positive and "
        "--wait_for_pods_ready_recovery_timeout 0 or more";
  } else if (config->backoff_base_seconds < 1 ||
             config->backoff_max_seconds < config->backoff_base_seconds) {
    *error =
        "--requeuing_backoff_base_seconds must be 1 or more and "
        "--requeuing_backoff_max_seconds at least as much";
  } else if (config->backoff_limit_count < -1) {
    *error = "--requeuing_backoff_limit_count must be -1 (no limit) or more";
  }
  return error->empty();
}

}  // namespace

bool PolicyFromFlags(api::Features* features,
                     ControllerCore::Options::Quarantine* quarantine,
                     std::string* error) {
  features->manage_jobs_without_queue_name =
      absl::GetFlag(FLAGS_manage_jobs_without_queue_name);
  return WaitForPodsReadyFromFlags(&features->wait_for_pods_ready, error) &&
         FairSharingFromFlags(&features->fair_sharing, error) &&
         QuarantineFromFlags(quarantine, error);
}

}  // namespace jobset::scheduler
