#ifndef JOBSET_TESTS_ACKNOWLEDGED_H_
#define JOBSET_TESTS_ACKNOWLEDGED_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/jobset.pb.h"

namespace jobset::testing {

// What clients were told against what jobsetd's store holds, for the tests
// that crash jobsetd under clients (crash_test, failpoint_e2e_test).

// "namespace/name".
std::string Key(const api::JobSet& jobset);
// The revision of a resourceVersion; -1 if it is not a number.
int64_t Revision(absl::string_view resource_version);

// Each way `listed` (key -> the JobSet read back) breaks what a Create told
// its client (`acked`, key -> the JobSet in its response): gone, another spec
// or uid, or a revision older than the acknowledged one (only the controller
// writes after a Create, so a revision moves forward, never back). One line
// per problem, naming the key.
std::vector<std::string> AcknowledgedMismatches(
    const std::map<std::string, api::JobSet>& acked,
    const std::map<std::string, api::JobSet>& listed);

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_ACKNOWLEDGED_H_
