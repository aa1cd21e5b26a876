#ifndef JOBSET_FUZZ_STEPS_H_
#define JOBSET_FUZZ_STEPS_H_

// The framing of the message fuzzers' inputs: one input drives several steps.
// Each step is [op: 1 byte][length: 2 bytes, little-endian][payload]; a
// payload cut short by the end of the input takes what is left. At most
// kMaxSteps steps are read, so that one input stays fast.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace jobset::fuzz {

inline constexpr int kMaxSteps = 64;

struct Step {
  uint8_t op = 0;
  absl::string_view payload;
};

// Reads the steps of a fuzz input. Thread-compatible.
class StepReader {
 public:
  StepReader(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  // Reads the next step into `*step`; false when the input is used up.
  bool Next(Step* step) {
    if (rest_.empty() || steps_ == kMaxSteps) return false;
    ++steps_;
    step->op = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    size_t length = 0;
    for (int i = 0; i < 2 && !rest_.empty(); ++i) {
      length |= static_cast<size_t>(static_cast<uint8_t>(rest_[0])) << (8 * i);
      rest_.remove_prefix(1);
    }
    step->payload = rest_.substr(0, length);
    rest_.remove_prefix(step->payload.size());
    return true;
  }

 private:
  absl::string_view rest_;
  int steps_ = 0;
};

// Appends step (`op`, `payload`) to `out`, as StepReader reads it.
inline void AppendStep(uint8_t op, absl::string_view payload,
                       std::string* out) {
  const size_t length = payload.size() < 0xffff ? payload.size() : 0xffff;
  out->push_back(static_cast<char>(op));
  out->push_back(static_cast<char>(length & 0xff));
  out->push_back(static_cast<char>(length >> 8));
  out->append(payload.data(), length);
}

// The first byte of `payload` as a number (0 when empty).
inline uint8_t FirstByte(absl::string_view payload) {
  return payload.empty() ? 0 : static_cast<uint8_t>(payload[0]);
}

// Replaces a pod uid "#<byte>" with one of `known` (the byte picks it, modulo
// their number; "#" alone is the first), so that fuzzed messages name the
// target's real pods. Leaves any other uid, and all when `known` is empty.
inline void ResolvePodUid(const std::vector<std::string>& known,
                          std::string* uid) {
  if (known.empty() || uid->empty() || (*uid)[0] != '#') return;
  const size_t pick = uid->size() > 1 ? static_cast<uint8_t>((*uid)[1]) : 0;
  *uid = known[pick % known.size()];
}

}  // namespace jobset::fuzz

#endif  // JOBSET_FUZZ_STEPS_H_
