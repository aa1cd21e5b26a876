#ifndef JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_
#define JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_

// The JobSets of testdata/, loaded for the tests of this package. Test-only.

#include <string>

#include "proto/jobset.pb.h"

namespace jobset::scheduler::queues::testing {

// Returns testdata/<file> loaded with api::LoadManifest (one JobSet);
// records a test failure and returns an empty JobSet when it does not load.
api::JobSet LoadTestData(const std::string& file);

// Returns kueue-semantics §8.5 (testdata/llm-pretrain.yaml): a CPU driver
// plus GPU workers, queued in research-queue with priority class
// experiment. No uid, no creationTimestamp.
inline api::JobSet LlmPretrain() { return LoadTestData("llm-pretrain.yaml"); }

}  // namespace jobset::scheduler::queues::testing

#endif  // JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_
