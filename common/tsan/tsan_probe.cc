// tsan_probe MODE: a few lines of threads that ThreadSanitizer must, or must
// not, report; absl_sync_annotations_test runs it under --config=tsan.
//
//   race          two threads write an int with nothing between them: a race
//   mutex         the same under absl::MutexLock
//   reader        a writer under Lock, readers under ReaderLock
//   lock_when     two threads take turns with LockWhen(Condition) on a field
//                 that each Condition reads in the other's Unlock
//   await         the same with Await
//   condvar       a value handed over with CondVar::Wait and Signal
//   notification  a value handed over with Notify and WaitForNotification
//   notified_flag the same, the reader spinning on HasBeenNotified()
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace {

constexpr int kRounds = 200;

int Race() {
  int counter = 0;
  std::thread a([&] { ++counter; });
  std::thread b([&] { ++counter; });
  a.join();
  b.join();
  return counter == 0;  // Uses the value; 0 either way.
}

int Guarded() {
  absl::Mutex mu;
  int counter = 0;
  auto add = [&] {
    for (int i = 0; i < kRounds; ++i) {
      absl::MutexLock lock(&mu);
      ++counter;
    }
  };
  std::thread a(add);
  std::thread b(add);
  a.join();
  b.join();
  return counter == 2 * kRounds ? 0 : 1;
}

int Reader() {
  absl::Mutex mu;
  int value = 0;
  long sum = 0;
  std::thread writer([&] {
    for (int i = 0; i < kRounds; ++i) {
      absl::MutexLock lock(&mu);
      ++value;
    }
  });
  auto read = [&] {
    long local = 0;
    for (int i = 0; i < kRounds; ++i) {
      absl::ReaderMutexLock lock(&mu);
      local += value;
    }
    absl::MutexLock lock(&mu);
    sum += local;
  };
  std::thread r1(read);
  std::thread r2(read);
  writer.join();
  r1.join();
  r2.join();
  return sum >= 0 ? 0 : 1;
}

// Two players take turns: each waits until `turn` names it, then passes the
// turn. absl evaluates a waiter's Condition in the thread that unlocks.
struct Turns {
  absl::Mutex mu;
  int turn = 0;  // Guarded by mu; a plain int so tsan checks every access.
  int moves = 0;
};

struct Player {
  Turns* turns;
  int me;
  static bool MyTurn(Player* p) { return p->turns->turn == p->me; }
};

int TakeTurns(bool await) {
  Turns turns;
  auto play = [&](int me) {
    Player player{&turns, me};
    for (int i = 0; i < kRounds; ++i) {
      if (await) {
        absl::MutexLock lock(&turns.mu);
        turns.mu.Await(absl::Condition(&Player::MyTurn, &player));
        turns.turn = 1 - me;
        ++turns.moves;
      } else {
        turns.mu.LockWhen(absl::Condition(&Player::MyTurn, &player));
        turns.turn = 1 - me;
        ++turns.moves;
        turns.mu.Unlock();
      }
    }
  };
  std::thread a(play, 0);
  std::thread b(play, 1);
  a.join();
  b.join();
  return turns.moves == 2 * kRounds ? 0 : 1;
}

int CondVar() {
  absl::Mutex mu;
  absl::CondVar cv;
  int slot = 0;  // 0: empty.
  long received = 0;
  std::thread consumer([&] {
    for (int i = 0; i < kRounds; ++i) {
      absl::MutexLock lock(&mu);
      while (slot == 0) cv.Wait(&mu);
      received += slot;
      slot = 0;
      cv.SignalAll();
    }
  });
  for (int i = 1; i <= kRounds; ++i) {
    absl::MutexLock lock(&mu);
    while (slot != 0) cv.Wait(&mu);
    slot = i;
    cv.Signal();
  }
  consumer.join();
  return received == static_cast<long>(kRounds) * (kRounds + 1) / 2 ? 0 : 1;
}

int Notification(bool spin) {
  int value = 0;
  absl::Notification done;
  std::thread producer([&] {
    value = 42;
    done.Notify();
  });
  if (spin) {
    while (!done.HasBeenNotified()) std::this_thread::yield();
  } else {
    done.WaitForNotification();
  }
  const int seen = value;
  producer.join();
  return seen == 42 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "race") == 0) return Race();
  if (std::strcmp(mode, "mutex") == 0) return Guarded();
  if (std::strcmp(mode, "reader") == 0) return Reader();
  if (std::strcmp(mode, "lock_when") == 0) return TakeTurns(false);
  if (std::strcmp(mode, "await") == 0) return TakeTurns(true);
  if (std::strcmp(mode, "condvar") == 0) return CondVar();
  if (std::strcmp(mode, "notification") == 0) return Notification(false);
  if (std::strcmp(mode, "notified_flag") == 0) return Notification(true);
  std::fprintf(stderr, "tsan_probe: unknown mode \"%s\"\n", mode);
  return 2;
}
