#include "tests/fleet_sim_mixer.h"

#include <algorithm>
#include <numeric>

namespace jobset::testing::fleet {

ReportMixer::ReportMixer(const Options& options, uint64_t stream)
    : options_(options),
      // Distinct seeds for neighbouring streams (the golden ratio's bits).
      rng_(options.seed ^ (stream * 0x9e3779b97f4a7c15ULL)) {}

ReportMixer::Out ReportMixer::Report(api::AgentMessage msg, absl::Time now) {
  ++counts_.reports;
  Out out;
  if (options_.duplicates > 0) {
    const int64_t max_us =
        std::max<int64_t>(0, absl::ToInt64Microseconds(options_.max_delay));
    std::uniform_int_distribution<int64_t> delay(0, max_us);
    for (int i = 0; i < options_.duplicates; ++i)
      out.later.emplace_back(now + absl::Microseconds(delay(rng_)), msg);
  }
  Out admitted = Admit(std::move(msg), now);
  out.send = std::move(admitted.send);
  out.flush = admitted.flush;
  return out;
}

ReportMixer::Out ReportMixer::Copy(api::AgentMessage msg, absl::Time now) {
  ++counts_.copies;
  return Admit(std::move(msg), now);
}

ReportMixer::Out ReportMixer::Admit(api::AgentMessage msg, absl::Time now) {
  Out out;
  if (!options_.reorder) {
    out.send.push_back(std::move(msg));
    return out;
  }
  if (held_.empty()) {
    ++window_;
    out.flush.emplace(now + options_.window, window_);
  }
  held_.push_back(std::move(msg));
  if (static_cast<int>(held_.size()) >= std::max(1, options_.window_messages))
    out.send = Shuffled();
  return out;
}

std::vector<api::AgentMessage> ReportMixer::Flush(int64_t window) {
  if (window != window_ || held_.empty()) return {};
  return Shuffled();
}

std::vector<api::AgentMessage> ReportMixer::Shuffled() {
  std::vector<int> order(held_.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng_);
  std::vector<api::AgentMessage> out;
  out.reserve(held_.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != static_cast<int>(i)) ++counts_.displaced;
    out.push_back(std::move(held_[order[i]]));
  }
  held_.clear();
  return out;
}

}  // namespace jobset::testing::fleet
