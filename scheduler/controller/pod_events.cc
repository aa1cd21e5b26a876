#include "scheduler/controller/pod_events.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace jobset::scheduler {

void PendingPodEvents::Hold(const std::string& pod,
                            const api::PodEvent& event) {
  if (held_.size() >= kMaxHeld) {
    ++dropped_;
    return;
  }
  held_.push_back({pod, event});
}

std::vector<JobSetEvent> PendingPodEvents::Take() {
  struct Group {
    const Held* first;
    std::set<std::string> pods;
  };
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, size_t> index;  // Into groups.
  std::vector<Group> groups;
  for (const Held& h : held_) {
    Key key{h.event.type(), h.event.reason(), h.event.message()};
    auto [it, fresh] = index.try_emplace(std::move(key), groups.size());
    if (fresh) groups.push_back({&h, {}});
    groups[it->second].pods.insert(h.pod);
  }
  std::vector<JobSetEvent> out;
  out.reserve(groups.size() + 1);
  for (const Group& g : groups) {
    std::string message =
        absl::StrCat("pod ", g.first->pod, ": ", g.first->event.message());
    if (const size_t others = g.pods.size() - 1; others > 0) {
      absl::StrAppend(&message, " (and ", others, " more pod",
                      others == 1 ? "" : "s", ")");
    }
    out.push_back(
        {g.first->event.type(), g.first->event.reason(), std::move(message)});
  }
  if (dropped_ > 0) {
    out.push_back(
        {"Warning", "EventsDropped",
         absl::StrCat(dropped_, " pod events were dropped: more than ",
                      kMaxHeld, " between two passes")});
  }
  held_.clear();
  dropped_ = 0;
  return out;
}

}  // namespace jobset::scheduler
