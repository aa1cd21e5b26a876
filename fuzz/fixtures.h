#ifndef JOBSET_FUZZ_FIXTURES_H_
#define JOBSET_FUZZ_FIXTURES_H_

// What the controller-driving fuzz targets and their seed generator share.

#include <string>

#include "proto/jobset.pb.h"

namespace jobset::fuzz {

// JobSet `name` in "default", as the API stores it (defaulted, with a uid and
// a creation time): ReplicatedJob "workers" of two one-pod Jobs (Never,
// backoffLimit 0) that restart together on any failure, up to 3 times.
api::JobSet TwoPodJobSet(const std::string& name);

}  // namespace jobset::fuzz

#endif  // JOBSET_FUZZ_FIXTURES_H_
