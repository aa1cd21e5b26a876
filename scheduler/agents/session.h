#ifndef JOBSET_SCHEDULER_AGENTS_SESSION_H_
#define JOBSET_SCHEDULER_AGENTS_SESSION_H_

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/launch_stages.h"
#include "scheduler/controller/agent_fleet.h"

namespace jobset::scheduler {

// One agent's stream, seen from jobsetd: the outbox of what to send it. The
// hub pushes (under its own lock; this class's lock is taken after the
// hub's, never before), the stream (agent_stream.h) pops and writes when
// woken.
// A run or a Welcome is queued as its Assignments and built into the wire
// form (api::PodAssignment) only by Pop, on the writer's thread, so that
// neither the hub nor the controller thread behind it waits for a pod to be
// built. Thread-safe; one thread pops a session, so messages keep their
// order.
class AgentSession {
 public:
  // `cancel` ends the gRPC call. Launch orders it sends are timed by
  // `stages` (null: not timed) with `clock`.
  AgentSession(std::string node, std::function<void()> cancel,
               LaunchStages* stages = nullptr, Clock* clock = RealClock::Get())
      : node_(std::move(node)),
        stages_(stages),
        clock_(clock),
        cancel_(std::move(cancel)) {}

  const std::string& node() const { return node_; }

  // Waits up to `wait` for the next message to send; false once the session
  // is closed (nothing more to send) or on timeout with `*msg` untouched and
  // timed_out set. Run and Welcome messages are built here, on the caller's
  // thread, from the assignments queued for them.
  bool Pop(api::SchedulerMessage* msg, absl::Duration wait,
           bool* timed_out = nullptr);

  // The callback stream's side (agent_stream.h): the next message, built on
  // the caller's thread, without waiting.
  enum class Next { kMessage, kEmpty, kClosed };
  Next TryPop(api::SchedulerMessage* msg);
  // Calls `wake` (never under this session's lock) after each message is
  // queued and when the session closes; once at once if something is
  // already queued. Detach forgets it.
  void SetWake(std::function<void()> wake);

  // The most messages queued for an agent that does not read them: one more
  // closes the session (the agent's stream is cut; when it reconnects its
  // Welcome carries everything it should run).
  static constexpr size_t kMaxQueued = 65536;

  // The hub's side. Each does nothing once the session is closed.
  // Queues `msg` as is.
  void Push(api::SchedulerMessage msg);
  // Queues a run message of `pod`.
  void PushRun(Assignment pod);
  // Queues `welcome` (a Welcome without its pods) with `pods`.
  void PushWelcome(api::SchedulerMessage welcome, std::vector<Assignment> pods);
  // Ends the stream: Pop returns false and the gRPC call, if still running,
  // is cancelled.
  void Close();
  // The gRPC call is over (its context is about to go): closes the session,
  // and a later Close cancels nothing.
  void Detach();

 private:
  // A queued message: `message` as is, or, for a run or a welcome, what Pop
  // completes it with.
  struct Outgoing {
    api::SchedulerMessage message;
    std::optional<Assignment> run;  // Becomes message.run.
    std::vector<Assignment> pods;   // Become message.welcome.pods.
  };

  // Queues `out` (closing the session instead past kMaxQueued) and returns
  // the wake to call once the lock is released.
  std::function<void()> Queue(Outgoing out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Completes `next` into `msg` (outside the lock).
  void Build(Outgoing next, api::SchedulerMessage* msg);
  void CloseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string node_;
  LaunchStages* const stages_;
  Clock* const clock_;
  absl::Mutex mu_;
  // Called under mu_, so that it never races Detach.
  std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
  std::function<void()> wake_ ABSL_GUARDED_BY(mu_);
  std::deque<Outgoing> out_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Builds what the agent gets for `desired`: the full pod (its environment
// with its Secrets' and ConfigMaps' values), its attempt's host table, its
// secret and configMap volumes' files and its registry credentials. Never
// logged. A pure function.
api::PodAssignment ToAssignment(const Assignment& desired);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_SESSION_H_
