#ifndef JOBSET_SCHEDULER_POLICY_FLAGS_H_
#define JOBSET_SCHEDULER_POLICY_FLAGS_H_

// jobsetd's flags for Kueue's configuration (manageJobsWithoutQueueName,
// waitForPodsReady, fairSharing) and for bad-host quarantine, read and
// checked in one place.

#include <string>

#include "api/features.h"
#include "scheduler/controller/controller_core.h"

namespace jobset::scheduler {

// Sets `features`' Kueue switches and `quarantine` from the flags; false
// with `error` naming a flag and its bad value.
bool PolicyFromFlags(api::Features* features,
                     ControllerCore::Options::Quarantine* quarantine,
                     std::string* error);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_POLICY_FLAGS_H_
