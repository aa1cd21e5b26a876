#ifndef JOBSET_AGENT_RUNTIME_READINESS_PROBE_H_
#define JOBSET_AGENT_RUNTIME_READINESS_PROBE_H_

// A container's readiness probe in jobset-pod-shim: exec (a child process
// the shim reaps), tcpSocket and httpGet (run inline; each blocks for at most
// the probe's timeout). Thread-compatible.

#include <sys/types.h>

#include <string>

#include "absl/time/time.h"
#include "agent/runtime/container_launcher.h"
#include "agent/runtime/container_lifecycle.h"
#include "common/clock.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// Returns the port number `port` names: a number, or one of the container's
// named ports; -1 if neither.
int ResolvePort(const api::Container& spec, const std::string& port);

// Returns whether a TCP connection to host:port ("" is 127.0.0.1) opens
// before `timeout` (by `clock`); with `http_path`, whether an HTTP/1.0 GET of
// it answers 200-399 in that time.
bool ProbeSocket(const std::string& host, int port,
                 const std::string* http_path, absl::Duration timeout,
                 const Clock& clock);

// The readiness probe of one container and its results so far. A container
// without a probe has an inert one.
class ReadinessProbe {
 public:
  explicit ReadinessProbe(const api::Container& spec);

  bool configured() const { return configured_; }
  bool ready() const { return record_.ready; }

  // The container started at `now`: results start over, the first probe
  // after the initial delay.
  void ContainerStarted(absl::Time now);
  // The container exited: not ready, no more probes.
  void ContainerExited();
  // Probes when one is due (and kills an exec probe past its timeout);
  // `launcher` starts exec probes in the container (running as
  // `container_pid`).
  void Tick(const api::Container& spec, pid_t container_pid,
            const ContainerLauncher& launcher, const Clock& clock,
            absl::Time now);
  // Returns whether `pid` was this probe's exec process, recording its
  // result if so.
  bool Reaped(pid_t pid, int wait_status, absl::Time now);
  // Kills a running exec probe (the pod is stopping).
  void Kill();
  // The earliest time Tick has something to do (InfiniteFuture: none).
  absl::Time NextWake() const;

 private:
  void Record(bool ok) { record_ = Probed(record_, settings_, ok); }

  const bool configured_;
  const api::Probe probe_;
  const ProbeSettings settings_;
  ProbeRecord record_;
  absl::Time next_probe_ = absl::InfiniteFuture();
  pid_t exec_pid_ = 0;
  absl::Time exec_deadline_ = absl::InfiniteFuture();
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_READINESS_PROBE_H_
