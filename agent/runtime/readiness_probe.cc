#include "agent/runtime/readiness_probe.h"

#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"

namespace jobset::agent {

int ResolvePort(const api::Container& spec, const std::string& port) {
  int number = 0;
  if (absl::SimpleAtoi(port, &number)) return number;
  for (const api::ContainerPort& p : spec.ports()) {
    if (p.name() == port) return p.container_port();
  }
  return -1;
}

bool ProbeSocket(const std::string& host, int port,
                 const std::string* http_path, absl::Duration timeout,
                 const Clock& clock) {
  const absl::Time deadline = clock.Now() + timeout;
  if (port <= 0 || port > 65535) return false;
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* addrs = nullptr;
  const std::string h = host.empty() ? "127.0.0.1" : host;
  if (getaddrinfo(h.c_str(), absl::StrCat(port).c_str(), &hints, &addrs) != 0) {
    return false;
  }
  const int fd =
      socket(addrs->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool ok = false;
  // poll(2) waits in real time; its timeout is what the clock has left.
  auto wait_for = [&](short events) {
    const int ms =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - clock.Now()));
    if (ms <= 0) return false;
    struct pollfd pfd = {fd, events, 0};
    return poll(&pfd, 1, ms) == 1;
  };
  if (fd >= 0) {
    int rc = connect(fd, addrs->ai_addr, addrs->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && wait_for(POLLOUT)) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
    }
    if (rc == 0 && http_path == nullptr) ok = true;
    if (rc == 0 && http_path != nullptr) {
      const std::string request =
          absl::StrCat("GET ", http_path->empty() ? "/" : *http_path,
                       " HTTP/1.0\r\nHost: ", h, ":", port,
                       "\r\nUser-Agent: jobset-pod-shim\r\n\r\n");
      (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      std::string response;
      char buf[512];
      while (response.find("\r\n") == std::string::npos &&
             response.size() < 4096 && wait_for(POLLIN)) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        response.append(buf, static_cast<size_t>(n));
      }
      // "HTTP/1.1 200 OK"
      std::vector<absl::string_view> parts =
          absl::StrSplit(response.substr(0, response.find("\r\n")), ' ');
      int code = 0;
      ok = parts.size() >= 2 && absl::StartsWith(parts[0], "HTTP/") &&
           absl::SimpleAtoi(parts[1], &code) && code >= 200 && code < 400;
    }
    close(fd);
  }
  freeaddrinfo(addrs);
  return ok;
}

ReadinessProbe::ReadinessProbe(const api::Container& spec)
    : configured_(spec.has_readiness_probe()),
      probe_(spec.readiness_probe()),
      settings_(ProbeSettingsOf(spec.readiness_probe())) {}

void ReadinessProbe::ContainerStarted(absl::Time now) {
  record_ = ProbeRecord();
  if (configured_) next_probe_ = now + settings_.initial_delay;
}

void ReadinessProbe::ContainerExited() {
  record_.ready = false;
  next_probe_ = absl::InfiniteFuture();
}

void ReadinessProbe::Tick(const api::Container& spec, pid_t container_pid,
                          const ContainerLauncher& launcher, const Clock& clock,
                          absl::Time now) {
  if (!configured_) return;
  if (exec_pid_ > 0) {
    if (now >= exec_deadline_) kill(exec_pid_, SIGKILL);
    return;
  }
  if (now < next_probe_) return;
  next_probe_ = now + settings_.period;
  if (probe_.has_exec()) {
    std::vector<std::string> command(probe_.exec().command().begin(),
                                     probe_.exec().command().end());
    if (command.empty()) {
      Record(false);
      return;
    }
    absl::StatusOr<pid_t> pid =
        launcher.StartProbe(spec, container_pid, command);
    if (!pid.ok()) {
      JOBSET_LOG(WARNING) << "readiness probe of container " << spec.name()
                          << ": " << pid.status().message();
      Record(false);
      return;
    }
    exec_pid_ = *pid;
    exec_deadline_ = now + settings_.timeout;
    return;
  }
  if (probe_.has_tcp_socket()) {
    Record(ProbeSocket(probe_.tcp_socket().host(),
                       ResolvePort(spec, probe_.tcp_socket().port()), nullptr,
                       settings_.timeout, clock));
    return;
  }
  if (probe_.has_http_get()) {
    Record(ProbeSocket(probe_.http_get().host(),
                       ResolvePort(spec, probe_.http_get().port()),
                       &probe_.http_get().path(), settings_.timeout, clock));
    return;
  }
  Record(true);  // A probe with no handler: nothing to check.
}

bool ReadinessProbe::Reaped(pid_t pid, int wait_status, absl::Time now) {
  if (exec_pid_ == 0 || pid != exec_pid_) return false;
  exec_pid_ = 0;
  const bool timed_out = now >= exec_deadline_;
  Record(!timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
  return true;
}

void ReadinessProbe::Kill() {
  if (exec_pid_ > 0) kill(exec_pid_, SIGKILL);
}

absl::Time ReadinessProbe::NextWake() const {
  absl::Time wake = next_probe_;
  if (exec_pid_ > 0) wake = std::min(wake, exec_deadline_);
  return wake;
}

}  // namespace jobset::agent
