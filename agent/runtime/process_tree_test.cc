#include "agent/runtime/process_tree.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

// A child that sleeps until killed; its pid.
pid_t SpawnSleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    while (true) pause();
  }
  return pid;
}

void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

char StateOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size()
             ? '?'
             : line[paren + 2];
}

TEST(DescendantsTest, NoChildrenIsEmpty) {
  EXPECT_THAT(Descendants(getpid()), IsEmpty());
  EXPECT_THAT(DescendantsByScan(getpid()), IsEmpty());
}

TEST(DescendantsTest, FindsChildrenAndGrandchildrenAndNothingElse) {
  // child -> grandchild, both sleeping; the grandchild's pid comes back
  // through a pipe.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    const pid_t grandchild = SpawnSleeper();
    (void)!write(fds[1], &grandchild, sizeof grandchild);
    while (true) pause();
  }
  pid_t grandchild = 0;
  ASSERT_EQ(read(fds[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  close(fds[0]);
  close(fds[1]);
  const pid_t sibling = SpawnSleeper();

  EXPECT_THAT(Descendants(getpid()),
              UnorderedElementsAre(child, grandchild, sibling));
  EXPECT_THAT(Descendants(child), UnorderedElementsAre(grandchild));
  EXPECT_THAT(Descendants(grandchild), IsEmpty());
  EXPECT_THAT(Descendants(getpid()),
              UnorderedElementsAreArray(DescendantsByScan(getpid())));

  kill(grandchild, SIGKILL);
  KillAndReap(child);
  KillAndReap(sibling);
}

TEST(DescendantsTest, LeavesOutZombies) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  for (int i = 0; i < 2000 && StateOf(child) != 'Z'; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(StateOf(child), 'Z');
  EXPECT_THAT(Descendants(getpid()), IsEmpty());
  EXPECT_THAT(DescendantsByScan(getpid()), IsEmpty());
  waitpid(child, nullptr, 0);
}

TEST(DescendantsTest, FindsAChildForkedByAnotherThread) {
  // The kernel lists a child under the thread that forked it.
  std::atomic<pid_t> child{0};
  std::atomic<bool> stop{false};
  std::thread forker([&] {
    child = SpawnSleeper();
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (child == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_THAT(Descendants(getpid()), UnorderedElementsAre(child.load()));
  stop = true;
  forker.join();
  KillAndReap(child);
}

TEST(DescendantsTest, ASubreaperFindsTheOrphansOfItsChildren) {
  // As the shim: a child subreaper whose child double-forks and exits. The
  // check runs in a forked process (the subreaper setting is per process);
  // its exit code says what it saw.
  const pid_t reaper = fork();
  if (reaper == 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int fds[2];
    if (pipe(fds) != 0) _exit(10);
    const pid_t middle = fork();
    if (middle == 0) {
      const pid_t orphan = SpawnSleeper();
      (void)!write(fds[1], &orphan, sizeof orphan);
      _exit(0);
    }
    pid_t orphan = 0;
    if (read(fds[0], &orphan, sizeof orphan) != sizeof orphan) _exit(11);
    waitpid(middle, nullptr, 0);  // the orphan is now the reaper's child
    const std::vector<pid_t> found = Descendants(getpid());
    kill(orphan, SIGKILL);
    waitpid(orphan, nullptr, 0);
    _exit(found == std::vector<pid_t>{orphan} ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(reaper, &status, 0), reaper);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(DescendantsTest, AGoneProcessHasNone) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  EXPECT_THAT(Descendants(child), IsEmpty());
}

}  // namespace
}  // namespace jobset::agent
