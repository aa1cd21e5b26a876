#include "tests/jobsetd_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace jobset::testing {
namespace {

constexpr absl::string_view kServingOn = "jobsetd serving on ";
constexpr absl::string_view kFollowerOn = JobsetdProcess::kFollowerPrefix;
// How often Wait() looks at the child once its stdout is closed.
constexpr absl::Duration kPollInterval = absl::Milliseconds(5);

absl::Status ErrnoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by ", strsignal(WTERMSIG(status)));
  }
  return absl::StrCat("wait status ", status);
}

// Parses "jobsetd serving on ADDRESS (data DIR, revision N[, ...])".
bool ParseServingLine(absl::string_view line, std::string* address,
                      int64_t* revision) {
  if (!absl::ConsumePrefix(&line, kServingOn)) return false;
  const size_t space = line.find(' ');
  if (space == absl::string_view::npos || space == 0) return false;
  *address = std::string(line.substr(0, space));
  const size_t at = line.rfind("revision ");
  if (at == absl::string_view::npos) return false;
  absl::string_view number = line.substr(at + strlen("revision "));
  number = number.substr(0, number.find_first_of(",)"));
  return absl::SimpleAtoi(number, revision);
}

}  // namespace

std::string JobsetdProcess::DefaultBinary() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir == nullptr ? "." : srcdir, "/",
                      workspace == nullptr ? "jobsetd" : workspace,
                      "/scheduler/jobsetd");
}

absl::StatusOr<std::unique_ptr<JobsetdProcess>> JobsetdProcess::Start(
    const Options& options) {
  // Everything the child needs is prepared before fork(): between fork and
  // exec a multithreaded parent's child may only make async-signal-safe calls.
  std::vector<std::string> argv_strings = {options.binary};
  argv_strings.insert(argv_strings.end(), options.args.begin(),
                      options.args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = options.env;
  for (char** var = environ; *var != nullptr; ++var) {
    const absl::string_view entry(*var);
    const absl::string_view name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(
            options.env.begin(), options.env.end(),
            [&](const std::string& e) { return absl::StartsWith(e, name); })) {
      env_strings.emplace_back(entry);
    }
  }
  std::vector<char*> envp;
  for (std::string& var : env_strings) envp.push_back(var.data());
  envp.push_back(nullptr);

  const std::string stderr_path =
      options.stderr_path.empty() ? "/dev/null" : options.stderr_path;
  const int stderr_fd = open(stderr_path.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (stderr_fd < 0) return ErrnoError(absl::StrCat("open ", stderr_path));
  const int stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (stdin_fd < 0) {
    close(stderr_fd);
    return ErrnoError("open /dev/null");
  }
  int out[2];
  int exec_error[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(stderr_fd);
    close(stdin_fd);
    return ErrnoError("pipe2");
  }
  if (pipe2(exec_error, O_CLOEXEC) != 0) {
    close(stderr_fd);
    close(stdin_fd);
    close(out[0]);
    close(out[1]);
    return ErrnoError("pipe2");
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Dies with the test, so that a crashed or timed-out test leaves no
    // jobsetd holding its data directory.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (dup2(stdin_fd, 0) < 0 || dup2(out[1], 1) < 0 ||
        dup2(stderr_fd, 2) < 0) {
      const int error = errno;
      (void)!write(exec_error[1], &error, sizeof(error));
      _exit(127);
    }
    execve(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(exec_error[1], &error, sizeof(error));
    _exit(127);
  }
  const int fork_errno = errno;
  close(stderr_fd);
  close(stdin_fd);
  close(out[1]);
  close(exec_error[1]);
  if (pid < 0) {
    close(out[0]);
    close(exec_error[0]);
    errno = fork_errno;
    return ErrnoError("fork");
  }
  // The process object owns the pid from here: its destructor reaps it.
  std::unique_ptr<JobsetdProcess> process(new JobsetdProcess(
      pid, out[0], options.stderr_path, options.ready_prefix));

  // exec() closes the error pipe; anything read from it is exec's errno.
  int error = 0;
  ssize_t n;
  do {
    n = read(exec_error[0], &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  close(exec_error[0]);
  if (n == sizeof(error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot execute ", options.binary, ": ", strerror(error)));
  }
  if (fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK) != 0) {
    return ErrnoError("fcntl");
  }

  absl::Status serving =
      process->AwaitServing(absl::Now() + options.startup_timeout);
  if (!serving.ok()) {
    // Reaped now, so that the status can say how the child ended.
    process->Kill(SIGKILL).IgnoreError();
    absl::StatusOr<int> status = process->Wait();
    return absl::Status(
        serving.code(),
        absl::StrCat(serving.message(), " (jobsetd ",
                     status.ok() ? DescribeWaitStatus(*status)
                                 : std::string(status.status().message()),
                     "); stdout:\n", process->stdout_, "\nstderr tail:\n",
                     process->StderrTail()));
  }
  return process;
}

JobsetdProcess::~JobsetdProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(stdout_fd_);
}

bool JobsetdProcess::ReadStdout(absl::Time deadline) {
  for (bool got_data = false;;) {
    char buffer[4096];
    const ssize_t n = read(stdout_fd_, buffer, sizeof(buffer));
    if (n > 0) {
      stdout_.append(buffer, static_cast<size_t>(n));
      got_data = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return false;
    if (got_data) return true;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    pollfd fd = {.fd = stdout_fd_, .events = POLLIN, .revents = 0};
    const int ready =
        poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready == 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

absl::Status JobsetdProcess::AwaitLeading(absl::Duration timeout) {
  return AwaitLine(kServingOn, absl::Now() + timeout);
}

absl::Status JobsetdProcess::AwaitServing(absl::Time deadline) {
  return AwaitLine(ready_prefix_, deadline);
}

absl::Status JobsetdProcess::AwaitLine(absl::string_view prefix,
                                       absl::Time deadline) {
  size_t scanned = 0;
  while (true) {
    for (size_t end; (end = stdout_.find('\n', scanned)) != std::string::npos;
         scanned = end + 1) {
      absl::string_view line(stdout_.data() + scanned, end - scanned);
      if (!absl::StartsWith(line, prefix)) continue;
      if (prefix == kFollowerOn) {
        // "jobsetd follower on ADDRESS (advertised as ...), campaigning"
        absl::string_view rest = line.substr(prefix.size());
        address_ = std::string(rest.substr(0, rest.find(' ')));
        return absl::OkStatus();
      }
      if (prefix != kServingOn) return absl::OkStatus();
      if (!ParseServingLine(line, &address_, &start_revision_)) {
        return absl::InternalError(
            absl::StrCat("cannot parse jobsetd's line \"", line, "\""));
      }
      return absl::OkStatus();
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no \"", prefix, "\" line in time"));
    }
    if (!ReadStdout(deadline)) {
      return absl::UnavailableError(
          "the child closed its stdout before it was ready");
    }
  }
}

absl::Status JobsetdProcess::Kill(int signal) {
  if (reaped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("jobsetd (pid ", pid_, ") was already reaped"));
  }
  if (kill(pid_, signal) != 0) {
    return ErrnoError(absl::StrCat("kill ", pid_));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> JobsetdProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  bool stdout_open = true;
  while (!reaped_) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      wait_status_ = status;
      break;
    }
    if (done < 0 && errno != EINTR) return ErrnoError("waitpid");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("jobsetd (pid ", pid_, ") did not exit within ",
                       absl::FormatDuration(timeout)));
    }
    // Draining stdout meanwhile keeps the child from blocking on a full pipe.
    if (stdout_open) {
      stdout_open = ReadStdout(std::min(deadline, absl::Now() + kPollInterval));
    } else {
      absl::SleepFor(kPollInterval);
    }
  }
  ReadStdout(absl::Now());
  return wait_status_;
}

std::string JobsetdProcess::StderrTail(size_t max_bytes) const {
  if (stderr_path_.empty()) return "";
  std::ifstream file(stderr_path_, std::ios::binary | std::ios::ate);
  if (!file) return absl::StrCat("(cannot read ", stderr_path_, ")");
  const std::streamoff size = file.tellg();
  const std::streamoff start = std::max<std::streamoff>(
      0, size - static_cast<std::streamoff>(max_bytes));
  file.seekg(start);
  std::ostringstream tail;
  tail << file.rdbuf();
  return tail.str();
}

std::string JobsetdProcess::Stdout() {
  if (!reaped_) ReadStdout(absl::Now());
  return stdout_;
}

}  // namespace jobset::testing
