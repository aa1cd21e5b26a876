#ifndef JOBSET_API_POD_PHASE_H_
#define JOBSET_API_POD_PHASE_H_

namespace jobset::api {

// Kubernetes' pod phases (PodStatus.phase), spelled as the API spells them.
// The proto field is a string, as in Kubernetes; code compares it with
// these, never with literals.
inline constexpr char kPodPending[] = "Pending";
inline constexpr char kPodRunning[] = "Running";
inline constexpr char kPodSucceeded[] = "Succeeded";
inline constexpr char kPodFailed[] = "Failed";

}  // namespace jobset::api

#endif  // JOBSET_API_POD_PHASE_H_
