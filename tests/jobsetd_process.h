#ifndef JOBSET_TESTS_JOBSETD_PROCESS_H_
#define JOBSET_TESTS_JOBSETD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace jobset::testing {

// A jobsetd server running as a child process, for end-to-end tests:
//
//   auto jobsetd = JobsetdProcess::Start(
//       {.binary = JobsetdProcess::DefaultBinary(),
//        .args = {"--listen=127.0.0.1:0", absl::StrCat("--data_dir=", dir)}});
//   ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
//   auto channel = grpc::CreateChannel((*jobsetd)->address(), ...);
//   ...
//   ASSERT_TRUE((*jobsetd)->Kill(SIGKILL).ok());
//
// Start() returns once jobsetd has printed its "jobsetd serving on ADDRESS"
// line. The child's stdout is a pipe read by this class; its stderr is
// appended to Options::stderr_path. Only the pid this class started is ever
// signalled. The destructor SIGKILLs and reaps the child if it still runs.
// Thread-compatible.
class JobsetdProcess {
 public:
  struct Options {
    // Path of the jobsetd binary.
    std::string binary;
    // Flags passed to jobsetd, e.g. "--listen=127.0.0.1:0".
    std::vector<std::string> args;
    // File that jobsetd's stderr is appended to; empty: /dev/null.
    std::string stderr_path;
    // How long jobsetd may take to print its "serving on" line.
    absl::Duration startup_timeout = absl::Seconds(20);
    // The line that says the child is ready. Other daemons (jobset-agent)
    // are started with their own; address() is parsed only from jobsetd's.
    std::string ready_prefix = "jobsetd serving on ";
    // NAME=VALUE entries added to the child's environment (this process's),
    // each in place of a variable of the same name; e.g. a failpoint spec
    // (common/failpoint.h).
    std::vector<std::string> env = {};
  };

  // The ready line of a replica that starts as a follower (--store=etcd,
  // another replica leading): start it with this as ready_prefix, then
  // address() is where it answers redirects, and AwaitLeading waits until
  // it leads.
  static constexpr char kFollowerPrefix[] = "jobsetd follower on ";

  // Returns the jobsetd built by //scheduler:jobsetd in this test's runfiles
  // ($TEST_SRCDIR/$TEST_WORKSPACE/scheduler/jobsetd).
  static std::string DefaultBinary();

  // Starts jobsetd and waits for its "serving on" line. On an error the child
  // has been killed and reaped; the message includes the tail of its stderr.
  static absl::StatusOr<std::unique_ptr<JobsetdProcess>> Start(
      const Options& options);

  JobsetdProcess(const JobsetdProcess&) = delete;
  JobsetdProcess& operator=(const JobsetdProcess&) = delete;
  ~JobsetdProcess();

  // Returns the address jobsetd serves on, "127.0.0.1:PORT".
  const std::string& address() const { return address_; }
  // Returns the store revision jobsetd reported when it started serving.
  int64_t start_revision() const { return start_revision_; }
  pid_t pid() const { return pid_; }

  // Waits for the "serving on" line of a replica started as a follower: it
  // leads and serves (address() and start_revision() are then its).
  absl::Status AwaitLeading(absl::Duration timeout);

  // Sends `signal` to the child. FailedPrecondition once it has been reaped.
  absl::Status Kill(int signal);

  // Waits up to `timeout` for the child to exit, reaps it and returns its
  // wait status (use WIFEXITED and friends). Returns the same status again
  // when called after the child was reaped; DeadlineExceeded on timeout.
  absl::StatusOr<int> Wait(absl::Duration timeout = absl::Seconds(20));

  // Returns the last `max_bytes` bytes of the child's stderr file.
  std::string StderrTail(size_t max_bytes = 4096) const;

  // Returns what the child wrote to stdout so far (read without blocking).
  std::string Stdout();

 private:
  JobsetdProcess(pid_t pid, int stdout_fd, std::string stderr_path,
                 std::string ready_prefix)
      : pid_(pid),
        stdout_fd_(stdout_fd),
        stderr_path_(std::move(stderr_path)),
        ready_prefix_(std::move(ready_prefix)) {}

  // Appends what the child wrote to stdout_, waiting until something arrives
  // or `deadline`; returns false at end of file.
  bool ReadStdout(absl::Time deadline);
  // Reads stdout until a complete "serving on" line or `deadline`.
  absl::Status AwaitServing(absl::Time deadline);
  // Reads stdout until a complete line starting with `prefix`, or
  // `deadline`; parses jobsetd's serving and follower lines.
  absl::Status AwaitLine(absl::string_view prefix, absl::Time deadline);

  pid_t pid_;
  int stdout_fd_;
  const std::string stderr_path_;
  const std::string ready_prefix_;
  std::string stdout_;
  std::string address_;
  int64_t start_revision_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
};

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_JOBSETD_PROCESS_H_
