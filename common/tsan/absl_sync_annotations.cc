// Tells ThreadSanitizer about Abseil's synchronization, for tsan test binaries
// only (bazel test --config=tsan links this library into every binary).
//
// Debian's Abseil is a shared library built without -fsanitize=thread, so the
// tsan annotations inside absl::Mutex are compiled out: tsan sees neither the
// lock nor the unlock and reports every pair of accesses guarded by an
// absl::Mutex as a data race. This file defines the Mutex, CondVar and
// Notification entry points in the test binary itself. The dynamic linker
// binds every call to them (ours, and those from gRPC's and Abseil's own
// shared libraries) to these definitions, which forward to the real ones,
// found with dlsym(RTLD_NEXT, mangled name), and tell tsan the
// happens-before edge each one makes:
//
//   unlock: __tsan_release(mu) before the real Unlock;
//   lock:   __tsan_acquire(mu) after the real Lock (or a successful TryLock).
//
// Writers release into `mu`; readers release into `mu + 1`, so that two
// readers are not ordered by their read locks. A writer's lock acquires both;
// a reader's lock acquires `mu` only.
//
// absl::Mutex evaluates a waiter's Condition in whichever thread holds the
// lock at that moment, also inside another thread's Unlock (after that
// thread's release above). So LockWhen and Await pass absl a wrapper that
// acquires before, and releases after, evaluating the caller's Condition: its
// reads then happen before the next holder's writes.
//
// Imprecisions, each of which can hide a race but never reports a false one:
// Await and CondVar::Wait do not know whether the caller holds the lock as a
// writer or a reader, so they release and acquire as a writer; a sync object
// at a stack address outlives its frame.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#ifndef __SANITIZE_THREAD__
#if defined(__has_feature)
#if !__has_feature(thread_sanitizer)
#error "common/tsan/absl_sync_annotations.cc is for -fsanitize=thread builds"
#endif
#else
#error "common/tsan/absl_sync_annotations.cc is for -fsanitize=thread builds"
#endif
#endif

namespace {

// Returns the definition of `mangled` that this binary's own hides: the one in
// libabsl_synchronization.so. Aborts when there is none (another Abseil: check
// the names with `nm -D libabsl_synchronization.so`).
template <typename Fn>
Fn Real(const char* mangled) {
  void* fn = dlsym(RTLD_NEXT, mangled);
  if (fn == nullptr) {
    std::fprintf(stderr, "absl_sync_annotations: no %s in Abseil: %s\n",
                 mangled, dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// Looks each real function up once, on first use.
#define REAL(type, mangled)                     \
  static const auto real = Real<type>(mangled); \
  (void)0

void* WriterSync(const absl::Mutex* mu) { return const_cast<absl::Mutex*>(mu); }
void* ReaderSync(const absl::Mutex* mu) {
  return const_cast<char*>(reinterpret_cast<const char*>(mu)) + 1;
}

void AcquireAsWriter(const absl::Mutex* mu) {
  __tsan_acquire(WriterSync(mu));
  __tsan_acquire(ReaderSync(mu));
}
void AcquireAsReader(const absl::Mutex* mu) { __tsan_acquire(WriterSync(mu)); }

// A Condition that orders its evaluation with the lock's other holders.
struct AnnotatedCondition {
  AnnotatedCondition(const absl::Mutex* mu, const absl::Condition* cond)
      : mu(mu),
        cond(cond),
        wrapper(&AnnotatedCondition::Eval, static_cast<void*>(this)) {
    // The waiter built this and the caller's Condition before it waits;
    // another thread's Unlock may evaluate them, without the lock having
    // passed between the two.
    __tsan_release(this);
  }

  static bool Eval(void* arg) {
    __tsan_acquire(arg);
    const auto* self = static_cast<AnnotatedCondition*>(arg);
    AcquireAsWriter(self->mu);
    const bool result = self->cond->Eval();
    __tsan_release(WriterSync(self->mu));
    return result;
  }

  const absl::Mutex* const mu;
  const absl::Condition* const cond;
  const absl::Condition wrapper;
};

// Notification's flag, which its inline HasBeenNotified() reads with an
// instrumented acquire load: Notify releases into it too.
void* NotifiedFlag(const absl::Notification* n) {
  static_assert(sizeof(absl::Notification) == 2 * sizeof(absl::Mutex),
                "absl::Notification is { Mutex mutex_; atomic<bool> "
                "notified_yet_; } no more");
  return const_cast<char*>(reinterpret_cast<const char*>(n)) +
         sizeof(absl::Mutex);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

// Mutex: exclusive.

void Mutex::Lock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  real(this);
  AcquireAsWriter(this);
}

void Mutex::Unlock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_release(WriterSync(this));
  real(this);
}

bool Mutex::TryLock() {
  REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) AcquireAsWriter(this);
  return locked;
}

// Mutex: shared.

void Mutex::ReaderLock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  AcquireAsReader(this);
}

void Mutex::ReaderUnlock() {
  REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_release(ReaderSync(this));
  real(this);
}

bool Mutex::ReaderTryLock() {
  REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) AcquireAsReader(this);
  return locked;
}

// Mutex: conditions. Each holds the lock when it returns, whatever the result.

void Mutex::LockWhen(const Condition& cond) {
  REAL(void (*)(Mutex*, const Condition&),
       "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  const AnnotatedCondition annotated(this, &cond);
  real(this, annotated.wrapper);
  AcquireAsWriter(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  REAL(bool (*)(Mutex*, const Condition&, Duration),
       "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_"
       "8DurationE");
  const AnnotatedCondition annotated(this, &cond);
  const bool result = real(this, annotated.wrapper, timeout);
  AcquireAsWriter(this);
  return result;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  REAL(bool (*)(Mutex*, const Condition&, Time),
       "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_"
       "4TimeE");
  const AnnotatedCondition annotated(this, &cond);
  const bool result = real(this, annotated.wrapper, deadline);
  AcquireAsWriter(this);
  return result;
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  REAL(void (*)(Mutex*, const Condition&),
       "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  const AnnotatedCondition annotated(this, &cond);
  real(this, annotated.wrapper);
  AcquireAsReader(this);
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  REAL(bool (*)(Mutex*, const Condition&, Duration),
       "_ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_"
       "9ConditionENS0_8DurationE");
  const AnnotatedCondition annotated(this, &cond);
  const bool result = real(this, annotated.wrapper, timeout);
  AcquireAsReader(this);
  return result;
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  REAL(bool (*)(Mutex*, const Condition&, Time),
       "_ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_"
       "9ConditionENS0_4TimeE");
  const AnnotatedCondition annotated(this, &cond);
  const bool result = real(this, annotated.wrapper, deadline);
  AcquireAsReader(this);
  return result;
}

// Await releases the lock while it waits and holds it again when it returns.

void Mutex::Await(const Condition& cond) {
  REAL(void (*)(Mutex*, const Condition&),
       "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  const AnnotatedCondition annotated(this, &cond);
  __tsan_release(WriterSync(this));
  real(this, annotated.wrapper);
  AcquireAsWriter(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  REAL(bool (*)(Mutex*, const Condition&, Duration),
       "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_"
       "8DurationE");
  const AnnotatedCondition annotated(this, &cond);
  __tsan_release(WriterSync(this));
  const bool result = real(this, annotated.wrapper, timeout);
  AcquireAsWriter(this);
  return result;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  REAL(bool (*)(Mutex*, const Condition&, Time),
       "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_"
       "4TimeE");
  const AnnotatedCondition annotated(this, &cond);
  __tsan_release(WriterSync(this));
  const bool result = real(this, annotated.wrapper, deadline);
  AcquireAsWriter(this);
  return result;
}

// CondVar: Wait* release `mu` and hold it again when they return; a Signal
// also orders what came before it with the waiter it wakes.

void CondVar::Wait(Mutex* mu) {
  REAL(void (*)(CondVar*, Mutex*),
       "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  __tsan_release(WriterSync(mu));
  real(this, mu);
  AcquireAsWriter(mu);
  __tsan_acquire(this);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  REAL(bool (*)(CondVar*, Mutex*, Duration),
       "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(WriterSync(mu));
  const bool result = real(this, mu, timeout);
  AcquireAsWriter(mu);
  __tsan_acquire(this);
  return result;
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  REAL(bool (*)(CondVar*, Mutex*, Time),
       "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(WriterSync(mu));
  const bool result = real(this, mu, deadline);
  AcquireAsWriter(mu);
  __tsan_acquire(this);
  return result;
}

void CondVar::Signal() {
  REAL(void (*)(CondVar*), "_ZN4absl7debian37CondVar6SignalEv");
  __tsan_release(this);
  real(this);
}

void CondVar::SignalAll() {
  REAL(void (*)(CondVar*), "_ZN4absl7debian37CondVar9SignalAllEv");
  __tsan_release(this);
  real(this);
}

// Notification: Notify happens before every wait that sees it.

void Notification::Notify() {
  REAL(void (*)(Notification*), "_ZN4absl7debian312Notification6NotifyEv");
  __tsan_release(this);
  __tsan_release(NotifiedFlag(this));
  real(this);
}

void Notification::WaitForNotification() const {
  REAL(void (*)(const Notification*),
       "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  REAL(bool (*)(const Notification*, Duration),
       "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_"
       "8DurationE");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  REAL(bool (*)(const Notification*, Time),
       "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_"
       "4TimeE");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
