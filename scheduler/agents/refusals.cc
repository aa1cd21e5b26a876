#include "scheduler/agents/refusals.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "scheduler/agents/agent_input.h"
#include "scheduler/metrics.h"

namespace jobset::scheduler {

void Refusals::Refused(absl::string_view reason, absl::string_view detail,
                       absl::Time now) {
  ++refused_;
  if (metrics_ != nullptr) {
    metrics_->refused_reports.Add({{"reason", std::string(reason)}})
        .Increment();
  }
  // At most one line per kWarningInterval: a flood of bad reports must not
  // become a flood of log lines.
  if (now - last_warning_ < kWarningInterval) {
    ++unlogged_;
    return;
  }
  last_warning_ = now;
  JOBSET_LOG(WARNING) << "agent hub: refused (" << reason
                      << "): " << CutUtf8(detail, 1024)
                      << (unlogged_ > 0
                              ? absl::StrCat(" (and ", unlogged_,
                                             " more since the last line)")
                              : "");
  unlogged_ = 0;
}

void Refusals::Fenced() {
  ++fenced_;
  if (metrics_ != nullptr) metrics_->fenced_reports.Increment();
}

}  // namespace jobset::scheduler
