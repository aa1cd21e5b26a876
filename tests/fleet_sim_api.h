#ifndef JOBSET_TESTS_FLEET_SIM_API_H_
#define JOBSET_TESTS_FLEET_SIM_API_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.grpc.pb.h"

// The fleet simulator's side of the user API (tests/fleet_sim.cc): JobSets
// created, read and deleted as an administrator does (jobsetd's admin
// token, over TLS), nodes listed, and a watch that sees JobSets finish.
namespace jobset::testing::fleet {

// The label every JobSet of a scenario carries: fleet-sim-run=<scenario>.
inline constexpr char kRunLabel[] = "fleet-sim-run";

// What the simulator's JobSets look like: `jobs` Jobs of `pods_per_job`
// pods (restartPolicy Never, backoffLimit 0: a failed pod fails its Job),
// each pod requesting `cpu` and `gpus` nvidia.com/gpu, running the
// workload `run_seconds` (unset: until stopped; fleet_sim_support.h) and
// exiting `exit_code`. `max_restarts`: the failure policy's maxRestarts
// (a failed Job restarts the whole JobSet). `exclusive`: one Job per
// topology domain (cloud.google.com/gke-nodepool, a slice).
struct JobSetShape {
  std::string ns = "default";
  std::string name;
  std::string run;  // kRunLabel's value
  int jobs = 1;
  int pods_per_job = 1;
  std::string cpu = "1";
  int gpus = 0;
  std::optional<double> run_seconds;
  int exit_code = 0;
  int max_restarts = 0;
  bool exclusive = false;
};
api::JobSet BuildJobSet(const JobSetShape& shape);

// How a batch of calls went.
struct BatchResult {
  int ok = 0;
  int failed = 0;
  absl::Duration took;
  std::vector<std::string> errors;  // the first few
};

// JobSets and nodes as jobsetd's administrator reads and writes them.
// Thread-safe.
class AdminClient {
 public:
  AdminClient(std::string address, std::string ca_pem, std::string token);

  // Creates every JobSet of `jobsets`, `concurrency` calls in flight (each
  // on a connection of its own), until `deadline`.
  BatchResult CreateAll(const std::vector<api::JobSet>& jobsets,
                        int concurrency, absl::Time deadline);
  // Deletes every (namespace, name) of `keys` the same way; NotFound counts
  // as deleted.
  BatchResult DeleteAll(
      const std::vector<std::pair<std::string, std::string>>& keys,
      int concurrency, absl::Time deadline);
  // Every JobSet labelled kRunLabel=`run`, in all namespaces.
  absl::StatusOr<std::vector<api::JobSet>> List(const std::string& run);
  // Nodes jobsetd knows and how many of them are Ready.
  struct NodeCount {
    int nodes = 0;
    int ready = 0;
  };
  absl::StatusOr<NodeCount> CountNodes();

  std::shared_ptr<grpc::Channel> NewChannel() const;

 private:
  const std::string address_;
  const std::string ca_pem_;
  const std::string token_;
  const std::shared_ptr<grpc::Channel> channel_;
};

// Reads counter or gauge `name` (no labels) from jobsetd's /metrics on
// 127.0.0.1:`port` (--metrics_listen).
absl::StatusOr<double> ScrapeMetric(int port, const std::string& name);

// A watch of the JobSets labelled kRunLabel=`run` (all namespaces) on a
// thread of its own, noting when each reaches a terminal state
// (status.terminalState). A watch that ends is opened again (it lists
// anew). Thread-safe.
class TerminalWatch {
 public:
  TerminalWatch(const AdminClient& client, std::string run);
  ~TerminalWatch();  // Stop
  TerminalWatch(const TerminalWatch&) = delete;
  TerminalWatch& operator=(const TerminalWatch&) = delete;

  // Returns once the watch is open (or after 10 s).
  void Start();
  void Stop();

  // Waits until `count` JobSets are terminal or `deadline`; how many are.
  int AwaitTerminal(int count, absl::Time deadline);
  // When the last JobSet seen terminal became so (as this watch saw it).
  absl::Time last_terminal();
  // JobSets terminal as Failed.
  int failed();
  // Whether JobSet `key` ("namespace/name") was seen terminal: nullopt if
  // not, else whether it Failed.
  std::optional<bool> Terminal(const std::string& key);
  std::vector<std::string> errors();

 private:
  void Loop();

  const std::shared_ptr<grpc::Channel> channel_;
  const std::string run_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::flat_hash_map<std::string, bool> terminal_ ABSL_GUARDED_BY(mu_);
  absl::Time last_terminal_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_API_H_
