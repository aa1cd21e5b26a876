#include "agent/runtime/cri/cri_container.h"

#include <vector>

namespace jobset::agent::cri {

CriContainer::CriContainer(const api::Container& spec, bool init,
                           absl::Duration pull_backoff_start,
                           absl::Duration pull_backoff_cap)
    : spec(spec),
      init(init),
      record(NewContainer(init)),
      pull(spec.image(), PullPolicyOf(spec.image_pull_policy(), spec.image()),
           pull_backoff_start, pull_backoff_cap) {
  if (!init && spec.has_readiness_probe()) {
    probe_settings = ProbeSettingsOf(spec.readiness_probe());
  }
}

std::vector<CriContainer*> PodContainers::All() {
  std::vector<CriContainer*> all;
  for (CriContainer& c : inits) all.push_back(&c);
  for (CriContainer& c : mains) all.push_back(&c);
  return all;
}

std::vector<const ContainerRecord*> PodContainers::MainRecords() const {
  std::vector<const ContainerRecord*> records;
  for (const CriContainer& c : mains) records.push_back(&c.record);
  return records;
}

}  // namespace jobset::agent::cri
