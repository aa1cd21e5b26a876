#include "common/uid.h"

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace jobset {

std::string NewUid() {
  thread_local absl::BitGen gen;
  const uint64_t hi = absl::Uniform<uint64_t>(gen);
  const uint64_t lo = absl::Uniform<uint64_t>(gen);
  // Version 4 in the third group, variant 1 in the fourth.
  return absl::StrFormat("%08x-%04x-4%03x-%04x-%012x", hi >> 32,
                         (hi >> 16) & 0xffff, hi & 0x0fff,
                         0x8000 | ((lo >> 48) & 0x3fff), lo & 0xffffffffffff);
}

}  // namespace jobset
