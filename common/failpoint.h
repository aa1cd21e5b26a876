#ifndef JOBSET_COMMON_FAILPOINT_H_
#define JOBSET_COMMON_FAILPOINT_H_

// Failpoints: named places where a test build of jobsetd can be made to
// crash, pause or fail, so that a test crashes it exactly between two steps
// (docs/failpoints.md; the T-FAILPOINT design of etcd's gofail and RocksDB's
// kill points).
//
//   absl::StatusOr<int64_t> Save(...) {
//     ...
//     JOBSET_FAILPOINT("server.create.after_commit");  // may return an error
//   }
//   void Trim(...) {
//     JOBSET_FAILPOINT_VOID("store.history.trim");     // abort or sleep only
//   }
//
// JOBSET_FAILPOINT is for functions that return absl::Status or
// absl::StatusOr<T> (an armed error(...) returns from the enclosing
// function); JOBSET_FAILPOINT_VOID for any other (abort and sleep only).
// Every point is declared once, in kPoints below, with the macro its site
// uses: a name not there, or used with the other macro, does not compile.
//
// Armed by the environment variable JOBSET_FAILPOINTS, read once, at
// InitFromEnvironment() or at the first hit of any point:
//
//   JOBSET_FAILPOINTS='server.create.after_commit=3*off->abort;store.history.trim=50%sleep(100)'
//
//   spec   := entry (';' entry)*
//   entry  := POINT '=' terms
//   terms  := term ('->' term)*
//   term   := [P '%'] [N '*'] action
//   action := off | abort | crash | sleep(MS) | error(CODE)
//
// The terms are etcd gofail's: each hit runs the first term, in order, whose
// P% chance comes up and whose N* count is not spent (the count goes down
// only when the chance came up); a hit no term takes does nothing. `abort`
// (or `crash`) kills the process as kill -9 does (SIGKILL: no destructor,
// no core file), after one log line naming the point; `sleep(MS)` pauses the
// hitting thread (MS in milliseconds, or an absl duration such as 2s);
// `error(CODE)` makes JOBSET_FAILPOINT return an absl::Status with CODE
// (absl's code name in snake case: unavailable, internal, aborted, ...);
// `off` does nothing (so `3*off->abort` lets 3 hits pass, then aborts).
//
// Off and free in release: an opt build (bazel -c opt, which defines
// JOBSET_FAILPOINTS_OFF through //common:failpoint) compiles every point to
// nothing, and there InitFromEnvironment refuses a set JOBSET_FAILPOINTS.
// In a test build, a point that is not armed costs one relaxed atomic load.
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::failpoint {

// The environment variable that arms failpoints.
inline constexpr char kEnvironmentVariable[] = "JOBSET_FAILPOINTS";

#ifdef JOBSET_FAILPOINTS_OFF
inline constexpr bool kCompiledIn = false;
#else
inline constexpr bool kCompiledIn = true;
#endif

// How a point's site can fail: returning an absl::Status (JOBSET_FAILPOINT),
// or not at all (JOBSET_FAILPOINT_VOID).
enum class Site { kStatus, kVoid };

struct Point {
  const char* name;
  Site site;
};

// Every failpoint, once. Where each sits and what a crash there tests:
// docs/failpoints.md.
inline constexpr Point kPoints[] = {
    // scheduler/server/jobset_api.cc: a Create or Update validated,
    // defaulted and admitted; nothing written yet.
    {"server.create.after_validate", Site::kStatus},
    {"server.update.after_validate", Site::kStatus},
    // scheduler/server/jobset_api.cc: the batch is committed (synced); the
    // client has no answer yet.
    {"server.create.after_commit", Site::kStatus},
    {"server.update.after_commit", Site::kStatus},
    // scheduler/controller/applier.cc: a pass that decided a restart-all
    // (status.restarts grew) is committed; no agent has been told.
    {"controller.restart.after_commit", Site::kStatus},
    // scheduler/controller/applier.cc: a pass that placed pods is committed;
    // their assignments have not gone to the agent hub.
    {"controller.placement.after_commit", Site::kStatus},
    // scheduler/agents/agent_hub.cc: an agent reported a pod's exit; the
    // report has not reached the controller (nor the store).
    {"agents.exit_report.before_persist", Site::kVoid},
    // store/history.cc: the watch history is dropping its oldest event.
    {"store.history.trim", Site::kVoid},
    // store/snapshot.cc: a snapshot is being written, at each key.
    {"store.snapshot.add", Site::kStatus},
};

inline constexpr int kNumPoints = static_cast<int>(std::size(kPoints));

// Reads JOBSET_FAILPOINTS and arms what it says, once per process (later
// calls return the first call's answer). kInvalidArgument for a malformed
// spec, naming what is wrong and every known point; kFailedPrecondition
// when the variable is set in a build without failpoints. A binary calls
// it at startup to refuse a typo; one that does not reads the variable at
// the first hit, and dies (FATAL) on a malformed spec there.
absl::Status InitFromEnvironment();

// Checks `spec` (the grammar above) without arming anything.
absl::Status Validate(absl::string_view spec);

// Arms `spec` in this process in place of whatever was armed (an empty spec
// disarms every point); for unit tests. kFailedPrecondition in a build
// without failpoints.
absl::Status SetForTesting(absl::string_view spec);

// How many times point `name` was hit while armed since it was last armed
// (a point that is not armed is not counted: that is its one atomic load).
int64_t HitsForTesting(absl::string_view name);

// Every point's name, in kPoints' order.
std::vector<std::string> PointNames();

namespace internal {

// A point's state, per point: the variable not read yet (every hit takes the
// slow path once), off, or armed.
enum : uint8_t { kUnread = 0, kOff = 1, kArmed = 2 };
inline std::atomic<uint8_t> states[kNumPoints];

// Returns the index of point `name` in kPoints; does not compile when
// `name` is not there or its site is another.
consteval int IndexOf(std::string_view name, Site site) {
  for (int i = 0; i < kNumPoints; ++i) {
    if (std::string_view(kPoints[i].name) != name) continue;
    if (kPoints[i].site != site) {
      throw "failpoint used with the other macro: see its Site in kPoints";
    }
    return i;
  }
  throw "unknown failpoint: declare it in kPoints (common/failpoint.h)";
}

// The fast path: false for a point that is off.
inline bool MayAct(int index) {
  return states[index].load(std::memory_order_relaxed) != kOff;
}

// The slow path: reads the variable if not yet read, counts the hit and runs
// the action its terms choose. Returns the error of an error(...) action.
absl::Status Hit(int index);

}  // namespace internal
}  // namespace jobset::failpoint

#ifdef JOBSET_FAILPOINTS_OFF

// Nothing but the compile-time check of the name.
#define JOBSET_FAILPOINT(name)                                        \
  do {                                                                \
    static_assert(::jobset::failpoint::internal::IndexOf(             \
                      name, ::jobset::failpoint::Site::kStatus) >= 0, \
                  name);                                              \
  } while (false)
#define JOBSET_FAILPOINT_VOID(name)                                 \
  do {                                                              \
    static_assert(::jobset::failpoint::internal::IndexOf(           \
                      name, ::jobset::failpoint::Site::kVoid) >= 0, \
                  name);                                            \
  } while (false)

#else

// Returns from the enclosing function (absl::Status or absl::StatusOr<T>)
// with the error of an armed error(...) action; aborts or sleeps as armed.
#define JOBSET_FAILPOINT(name)                                                \
  do {                                                                        \
    constexpr int jobset_failpoint_index =                                    \
        ::jobset::failpoint::internal::IndexOf(                               \
            name, ::jobset::failpoint::Site::kStatus);                        \
    if (ABSL_PREDICT_FALSE(                                                   \
            ::jobset::failpoint::internal::MayAct(jobset_failpoint_index))) { \
      ::absl::Status jobset_failpoint_status =                                \
          ::jobset::failpoint::internal::Hit(jobset_failpoint_index);         \
      if (!jobset_failpoint_status.ok()) return jobset_failpoint_status;      \
    }                                                                         \
  } while (false)

// Aborts or sleeps as armed; for sites that cannot return an error.
#define JOBSET_FAILPOINT_VOID(name)                                           \
  do {                                                                        \
    constexpr int jobset_failpoint_index =                                    \
        ::jobset::failpoint::internal::IndexOf(                               \
            name, ::jobset::failpoint::Site::kVoid);                          \
    if (ABSL_PREDICT_FALSE(                                                   \
            ::jobset::failpoint::internal::MayAct(jobset_failpoint_index))) { \
      ::jobset::failpoint::internal::Hit(jobset_failpoint_index)              \
          .IgnoreError();                                                     \
    }                                                                         \
  } while (false)

#endif  // JOBSET_FAILPOINTS_OFF

#endif  // JOBSET_COMMON_FAILPOINT_H_
