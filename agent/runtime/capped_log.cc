#include "agent/runtime/capped_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace jobset::agent {

CappedLog::CappedLog(std::string path, int64_t cap)
    : path_(std::move(path)), cap_(cap) {
  Open(false);
}

CappedLog::~CappedLog() {
  if (fd_ >= 0) close(fd_);
}

void CappedLog::Write(const char* data, size_t n) {
  if (fd_ < 0) return;
  if (cap_ > 0 && static_cast<int64_t>(n) > cap_) {
    data += n - static_cast<size_t>(cap_);
    n = static_cast<size_t>(cap_);
  }
  if (cap_ > 0 && size_ + static_cast<int64_t>(n) > cap_ && size_ > 0) {
    close(fd_);
    (void)rename(path_.c_str(), absl::StrCat(path_, ".1").c_str());
    Open(true);
    if (fd_ < 0) return;
  }
  while (n > 0) {
    const ssize_t w = write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
    size_ += w;
  }
}

void CappedLog::Open(bool truncate) {
  fd_ =
      open(path_.c_str(),
           O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0),
           0600);
  struct stat st;
  size_ = (fd_ >= 0 && fstat(fd_, &st) == 0) ? st.st_size : 0;
}

ContainerOutput::ContainerOutput(std::string log_path, int64_t cap)
    : log_(std::move(log_path), cap) {}

ContainerOutput::~ContainerOutput() { Close(); }

void ContainerOutput::Attach(int fd) {
  Close();
  fd_ = fd;
}

void ContainerOutput::DrainAndClose() {
  Drain();
  Close();
}

void ContainerOutput::Drain() {
  if (fd_ < 0) return;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n > 0) {
      log_.Write(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) Close();
    return;
  }
}

void ContainerOutput::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace jobset::agent
