#include "common/uid.h"

#include <cstdint>

#include "absl/random/random.h"

namespace jobset {
namespace {

constexpr size_t kTextSize = 36;

bool IsDash(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string NewUid() {
  thread_local absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen);
  uint64_t lo = absl::Uniform<uint64_t>(gen);
  // Version 4 in the third group, variant 1 (10xx) in the fourth.
  hi = (hi & ~uint64_t{0xf000}) | 0x4000;
  lo = (lo & ~(uint64_t{0xc} << 60)) | (uint64_t{0x8} << 60);
  UidBytes bytes;
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>(hi >> (56 - 8 * i));
    bytes[8 + i] = static_cast<char>(lo >> (56 - 8 * i));
  }
  return FormatUid(bytes);
}

// Written out by hand: this runs once per pod, and a formatter is slower.
std::string FormatUid(const UidBytes& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Where each byte's two digits go, around the dashes.
  static constexpr uint8_t kAt[16] = {0,  2,  4,  6,  9,  11, 14, 16,
                                      19, 21, 24, 26, 28, 30, 32, 34};
  std::string out(kTextSize, '-');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    out[kAt[i]] = kHex[byte >> 4];
    out[kAt[i] + 1] = kHex[byte & 0xf];
  }
  return out;
}

std::optional<UidBytes> ParseUid(absl::string_view uid) {
  if (uid.size() != kTextSize) return std::nullopt;
  UidBytes out{};
  size_t nibble = 0;
  for (size_t i = 0; i < uid.size(); ++i) {
    if (IsDash(i)) {
      if (uid[i] != '-') return std::nullopt;
      continue;
    }
    const int v = Nibble(uid[i]);
    if (v < 0) return std::nullopt;
    auto& byte = out[nibble / 2];
    byte = static_cast<char>(
        nibble % 2 == 0 ? v << 4 : static_cast<unsigned char>(byte) | v);
    ++nibble;
  }
  return out;
}

}  // namespace jobset
