// LabelSelector::Parse on arbitrary text: never crashes, and an accepted
// selector's canonical form parses back to an equal selector whose
// canonical form is the same (ToString is a fixed point), and matching is
// total on a few label sets.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/label_selector.h"
#include "google/protobuf/map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using jobset::api::LabelSelector;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<LabelSelector> selector = LabelSelector::Parse(text);
  if (!selector.ok()) return 0;
  const std::string canonical = selector->ToString();
  absl::StatusOr<LabelSelector> again = LabelSelector::Parse(canonical);
  if (!again.ok() || !(*again == *selector) || again->ToString() != canonical) {
    __builtin_trap();  // Not a round trip: libFuzzer saves the input.
  }
  google::protobuf::Map<std::string, std::string> labels;
  (void)selector->Matches(labels);
  // Every key the selector names, with each value it names (or "").
  for (const LabelSelector::Requirement& r : selector->requirements()) {
    labels[r.key] = r.values.empty() ? "" : r.values.front();
    (void)r.Matches(labels);
  }
  (void)selector->Matches(labels);
  return 0;
}
