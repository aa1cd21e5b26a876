#ifndef JOBSET_TESTS_FAILPOINT_LOAD_H_
#define JOBSET_TESTS_FAILPOINT_LOAD_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/acknowledged.h"
#include "tests/cluster_credentials.h"

namespace jobset::testing {

// The load failpoint_e2e_test runs against a jobsetd armed to crash: clients
// that create JobSets and update a register each, a monitor of the
// workload's JobSets, a snapshot saver; and the JobSets they send.

// The workload's JobSets (pods on the agents) live here, the bulk ones in
// fp-0, fp-1, ... (suspended: no pods), the registers in fp-reg.
inline constexpr char kWorkNamespace[] = "fp-work";
inline constexpr char kRegisterNamespace[] = "fp-reg";
// The register's label, which each Update sets to the next generation.
inline constexpr char kGenerationLabel[] = "fp-gen";

// The register's generation (kGenerationLabel); 0 without one.
int64_t Generation(const api::JobSet& jobset);

// A bulk client's `seq`th JobSet: suspended, a name nobody else uses, a spec
// that differs from its neighbours'.
api::JobSet BulkJobSet(int client, int seq);

// A round's workload: two pods that succeed (w<round>-ok), two JobSets whose
// one pod fails (w<round>-fail-<i>), each restarted twice and then Failed.
// Every pod appends "NAME ATTEMPT HOSTNAME" to the file `launches` (in
// `pod_dir`, which is mounted into it) when it starts.
std::vector<api::JobSet> WorkloadJobSets(int round, const std::string& pod_dir,
                                         const std::string& launches);

// The lines WorkloadJobSets' JobSet `name` leaves in `launches` when every
// pod of every attempt started exactly once.
std::vector<std::string> ExpectedLaunches(absl::string_view name);

// What a client sent and was told, across rounds. Used by its round's thread
// while the round runs and by the test's thread between rounds.
struct Client {
  int id = 0;
  bool bulk = true;  // Creates BulkJobSets and updates its register.
  int next_seq = 0;
  std::vector<api::JobSet> todo;         // Created first, in order.
  std::vector<std::string> sent;         // Keys of the Creates sent this round.
  std::vector<api::JobSet> acked;        // What this round's Creates returned.
  std::optional<api::JobSet> in_flight;  // A Create whose outcome is unknown.
  api::JobSet reg;                       // The register, as created.
  int64_t reg_acked = 0;                 // The last generation acknowledged
  int64_t reg_sent = 0;                  // and the last one sent.
};

// The most a JobSet was seen at: restarts, and its terminal state.
struct Seen {
  int32_t restarts = 0;
  std::string terminal;
};

// True for the codes a call gets when jobsetd dies under it: the outcome is
// unknown.
bool OutcomeUnknown(grpc::StatusCode code);

// Lists the JobSets of namespace `ns` (of every namespace if empty) into
// `*items`, page by page; the first error.
grpc::Status ListJobSets(api::JobSetService::Stub& stub, absl::string_view ns,
                         std::vector<api::JobSet>* items);

// Runs the load against the jobsetd at `address`. Each call returns when
// jobsetd stops answering, when `stop` is set, or at its bounds (a count and
// `max_round`). Thread-safe (each call has its own channel).
class FailpointLoad {
 public:
  FailpointLoad(std::string address, ClusterCredentials credentials,
                absl::Duration max_round)
      : address_(std::move(address)),
        credentials_(std::move(credentials)),
        max_round_(max_round) {}

  std::unique_ptr<api::JobSetService::Stub> NewStub() const;

  // Sends `client`'s todo, then (bulk) Creates and register Updates. A call
  // whose outcome is unknown ends the run, left in `in_flight` (a Create)
  // or between reg_acked and reg_sent (an Update); any other error is a
  // test failure.
  void RunClient(Client& client, const std::atomic<bool>& stop) const;
  // Lists kWorkNamespace every 100 ms, noting the most each JobSet was seen
  // at in `*seen`.
  void Monitor(const std::atomic<bool>& stop,
               std::map<std::string, Seen>* seen) const;
  // Saves snapshots (AccessService.SaveSnapshot, read to the end); returns
  // how many completed.
  int SaveSnapshots(const std::atomic<bool>& stop) const;

 private:
  const std::string address_;
  const ClusterCredentials credentials_;
  const absl::Duration max_round_;
};

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_FAILPOINT_LOAD_H_
