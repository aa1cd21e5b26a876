#ifndef JOBSET_AGENT_RUNTIME_CAPPED_LOG_H_
#define JOBSET_AGENT_RUNTIME_CAPPED_LOG_H_

// A container's log: its output pipe drained into a size-capped file.
// Thread-compatible.

#include <cstddef>
#include <cstdint>
#include <string>

namespace jobset::agent {

// A size-capped log file: when the next write would pass the cap, the file is
// renamed to <path>.1 (replacing an older one) and started again. A cap of 0
// means none. A file that cannot be opened swallows what is written.
class CappedLog {
 public:
  CappedLog(std::string path, int64_t cap);
  CappedLog(const CappedLog&) = delete;
  CappedLog& operator=(const CappedLog&) = delete;
  ~CappedLog();

  // Appends `n` bytes (only the last `cap` of them if `n` passes the cap).
  void Write(const char* data, size_t n);

 private:
  void Open(bool truncate);

  std::string path_;
  int64_t cap_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// The read end of a container's output pipe and the log it goes to.
class ContainerOutput {
 public:
  ContainerOutput(std::string log_path, int64_t cap);
  ContainerOutput(const ContainerOutput&) = delete;
  ContainerOutput& operator=(const ContainerOutput&) = delete;
  ~ContainerOutput();

  // Takes the (non-blocking) read end of a new attempt's pipe. Call
  // DrainAndClose first if an earlier attempt's pipe may be open.
  void Attach(int fd);
  // Copies everything the pipe holds now into the log; closes the pipe at
  // its end.
  void Drain();
  // Drains the pipe and closes it (what an earlier attempt's leftovers
  // write later is not the next attempt's).
  void DrainAndClose();
  // The pipe, or -1 once closed (for poll).
  int fd() const { return fd_; }

 private:
  void Close();

  CappedLog log_;
  int fd_ = -1;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CAPPED_LOG_H_
