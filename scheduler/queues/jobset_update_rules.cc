#include "scheduler/queues/jobset_update_rules.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "api/names.h"
#include "common/quote.h"
#include "scheduler/queues/jobset_workload.h"

namespace jobset::scheduler::queues {
namespace {

// apivalidation.FieldImmutableErrorMsg.
constexpr absl::string_view kImmutable = "field is immutable";

std::string LabelPath(absl::string_view label) {
  return api::Key("metadata.labels", label);
}

// Returns the label's value, "" when absent (Go's map read).
std::string Label(const api::JobSet& jobset, absl::string_view key) {
  const auto& labels = jobset.metadata().labels();
  auto it = labels.find(std::string(key));
  return it == labels.end() ? "" : it->second;
}

bool HasLabel(const api::JobSet& jobset, absl::string_view key) {
  return jobset.metadata().labels().contains(std::string(key));
}

bool IsSuspended(const api::JobSet& jobset) {
  return jobset.spec().has_suspend() && jobset.spec().suspend();
}

// ValidateImmutableField for strings.
void Immutable(absl::string_view path, absl::string_view new_value,
               absl::string_view old_value, api::FieldErrors* errors) {
  if (new_value != old_value) errors->Invalid(path, new_value, kImmutable);
}

// Go's strconv.Atoi: the value, or its error text.
struct Atoi {
  int64_t value = 0;
  std::string error;  // "" when it parsed
};

Atoi ParseAtoi(absl::string_view text) {
  absl::string_view digits = text;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    digits.remove_prefix(1);
  }
  Atoi out;
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    out.error =
        absl::StrCat("strconv.Atoi: parsing ", Quote(text), ": invalid syntax");
  } else if (!absl::SimpleAtoi(text, &out.value)) {
    out.error = absl::StrCat("strconv.Atoi: parsing ", Quote(text),
                             ": value out of range");
  }
  return out;
}

void CheckCreate(const api::JobSet& jobset,
                 const KueueValidationOptions& options,
                 api::FieldErrors* errors) {
  // ValidateQueueName.
  if (HasLabel(jobset, kQueueNameLabel)) {
    const std::string value = Label(jobset, kQueueNameLabel);
    const std::vector<std::string> problems = api::IsDns1123Subdomain(value);
    if (!problems.empty()) {
      errors->Invalid(LabelPath(kQueueNameLabel), value,
                      absl::StrJoin(problems, ","));
    }
  }
  // validateCreateForMaxExecTime.
  if (HasLabel(jobset, kMaxExecTimeSecondsLabel)) {
    const std::string text = Label(jobset, kMaxExecTimeSecondsLabel);
    const Atoi parsed = ParseAtoi(text);
    if (!parsed.error.empty()) {
      errors->Invalid(LabelPath(kMaxExecTimeSecondsLabel), text, parsed.error);
    } else if (parsed.value <= 0) {
      errors->Invalid(LabelPath(kMaxExecTimeSecondsLabel), parsed.value,
                      "should be greater than 0");
    }
  }
  // jobsetd: what upstream would leave suspended for good.
  const int rjobs = jobset.spec().replicated_jobs_size();
  if (rjobs > kMaxPodSets &&
      IsManaged(jobset, options.manage_jobs_without_queue_name)) {
    errors->Add(
        "spec.replicatedJobs",
        absl::StrCat("Too many: ", rjobs, ": must have at most ", kMaxPodSets,
                     " items when queued by Kueue (one Workload "
                     "podSet each)"));
  }
}

std::string ObjectName(const api::JobSet& jobset) {
  const api::ObjectMeta& meta = jobset.metadata();
  return absl::StrCat(
      "JobSet ",
      Quote(meta.name().empty() ? meta.generate_name() : meta.name()));
}

}  // namespace

absl::Status ValidateKueueJobSetCreate(const api::JobSet& jobset,
                                       const KueueValidationOptions& options) {
  api::FieldErrors errors;
  CheckCreate(jobset, options, &errors);
  return errors.ToStatus(ObjectName(jobset));
}

absl::Status ValidateKueueJobSetUpdate(const api::JobSet& old_jobset,
                                       const api::JobSet& new_jobset,
                                       const KueueValidationOptions& options) {
  api::FieldErrors errors;
  const bool new_suspended = IsSuspended(new_jobset);

  // validateUpdateForQueueName.
  const std::string old_queue = Label(old_jobset, kQueueNameLabel);
  const std::string new_queue = Label(new_jobset, kQueueNameLabel);
  if (!new_suspended) {
    Immutable(LabelPath(kQueueNameLabel), new_queue, old_queue, &errors);
  }
  if (new_queue.empty() && !old_queue.empty() &&
      options.default_local_queue_exists) {
    errors.Invalid(LabelPath(kQueueNameLabel), "",
                   "queue-name must not be empty in namespace with default "
                   "queue");
  }

  // validateUpdateForMaxExecTime.
  if (!new_suspended || !IsSuspended(old_jobset)) {
    Immutable(LabelPath(kMaxExecTimeSecondsLabel),
              Label(new_jobset, kMaxExecTimeSecondsLabel),
              Label(old_jobset, kMaxExecTimeSecondsLabel), &errors);
  }

  // ValidateUpdateForWorkloadPriorityClassName: one error at most.
  const std::string old_class = Label(old_jobset, kPriorityClassLabel);
  const std::string new_class = Label(new_jobset, kPriorityClassLabel);
  if (!new_suspended && old_class.empty() && !new_class.empty()) {
    errors.Invalid(LabelPath(kPriorityClassLabel), new_class,
                   "WorkloadPriorityClass cannot be added to a non-suspended "
                   "workload");
  } else if (new_class.empty() && !old_class.empty()) {
    errors.Invalid(LabelPath(kPriorityClassLabel), new_class,
                   "WorkloadPriorityClass cannot be removed from a workload");
  }

  CheckCreate(new_jobset, options, &errors);
  return errors.ToStatus(ObjectName(new_jobset));
}

}  // namespace jobset::scheduler::queues
