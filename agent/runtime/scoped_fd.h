#ifndef JOBSET_AGENT_RUNTIME_SCOPED_FD_H_
#define JOBSET_AGENT_RUNTIME_SCOPED_FD_H_

// An owned file descriptor, closed when it goes. Move-only. -1 owns nothing.
// Thread-compatible.

#include <unistd.h>

#include <utility>

namespace jobset::agent {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  // The descriptor, still owned; -1 when none.
  int get() const { return fd_; }

 private:
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  int fd_ = -1;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_SCOPED_FD_H_
