#include "common/uid.h"

#include "absl/random/random.h"

namespace jobset {

std::string NewUid() {
  thread_local absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen);
  uint64_t lo = absl::Uniform<uint64_t>(gen);
  // Version 4 in the third group, variant 1 (10xx) in the fourth.
  hi = (hi & ~uint64_t{0xf000}) | 0x4000;
  lo = (lo & ~(uint64_t{0xc} << 60)) | (uint64_t{0x8} << 60);
  // Written out by hand: this runs once per pod, and a formatter is slower.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  int pos = 0;
  auto put = [&](uint64_t bits, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i)
      out[pos++] = kHex[(bits >> (4 * i)) & 0xf];
  };
  put(hi >> 32, 8);
  ++pos;
  put(hi >> 16, 4);
  ++pos;
  put(hi, 4);
  ++pos;
  put(lo >> 48, 4);
  ++pos;
  put(lo, 12);
  return out;
}

}  // namespace jobset
