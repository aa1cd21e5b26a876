#ifndef JOBSET_COMMON_UID_H_
#define JOBSET_COMMON_UID_H_

#include <string>

namespace jobset {

// Returns a random RFC 4122 version-4 UUID ("8-4-4-4-12" lowercase hex), the
// form of Kubernetes' metadata.uid. Thread-safe.
std::string NewUid();

}  // namespace jobset

#endif  // JOBSET_COMMON_UID_H_
