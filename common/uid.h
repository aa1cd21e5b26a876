#ifndef JOBSET_COMMON_UID_H_
#define JOBSET_COMMON_UID_H_

#include <array>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset {

// Returns a random RFC 4122 version-4 UUID ("8-4-4-4-12" lowercase hex), the
// form of Kubernetes' metadata.uid. Thread-safe.
std::string NewUid();

// A UUID's 16 bytes, and its text form ("8-4-4-4-12" lowercase hex).
using UidBytes = std::array<char, 16>;
std::string FormatUid(const UidBytes& bytes);
// The bytes of `uid` if it is exactly in that text form (so that FormatUid
// gives it back), else nullopt.
std::optional<UidBytes> ParseUid(absl::string_view uid);

}  // namespace jobset

#endif  // JOBSET_COMMON_UID_H_
