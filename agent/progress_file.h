#ifndef JOBSET_AGENT_PROGRESS_FILE_H_
#define JOBSET_AGENT_PROGRESS_FILE_H_

// A pod's progress file (docs/agent.md, "Progress heartbeats"; our
// addition), as the agent reads it: lines of "step=<n>", optionally followed
// by " checkpoint_step=<n>", the last complete one counting. The pod writes
// it, so nothing in it is trusted: the reader follows no link, opens nothing
// but a regular file, never blocks, reads at most the last
// kProgressTailBytes, and the parser refuses anything but that grammar.
// Thread-compatible free functions.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset::agent {

// Of the file, only this many bytes at its end are read.
inline constexpr size_t kProgressTailBytes = 4096;
// A line longer than this (its newline aside) is refused.
inline constexpr size_t kMaxProgressLineBytes = 256;
// The largest step (and checkpoint step) taken: 2^62.
inline constexpr int64_t kMaxProgressStep = int64_t{1} << 62;

// Why an input was ignored; each is a label value of
// jobset_agent_progress_rejected_total{reason}.
enum class ProgressReject {
  kNone,
  kNotAFile,    // a link, fifo, directory, device, or a hard link
  kUnreadable,  // open or read failed (permissions, I/O)
  kTooLong,     // a line over kMaxProgressLineBytes
  kMalformed,   // not "step=<n>[ checkpoint_step=<n>]"
  kNegative,    // a negative step or checkpoint step
  kOutOfRange,  // a number over kMaxProgressStep
  kCheckpointAfterStep,
  kDecreasing,  // a step below the last one of the same pod instance
};

// The label value: "not_a_file", "unreadable", "too_long", "malformed",
// "negative", "out_of_range", "checkpoint_after_step", "decreasing" ("" for
// kNone).
absl::string_view ProgressRejectName(ProgressReject reject);

// What the end of a progress file says.
struct ProgressInput {
  // kNone and no `line`: nothing to use yet (no file, or no complete line),
  // and nothing wrong.
  ProgressReject reject = ProgressReject::kNone;
  // The last complete line (surrounding blanks cut), at most
  // kMaxProgressLineBytes of it: tells a new input from the one seen last.
  std::string line;
  // When the line was taken (reject kNone and a line):
  int64_t step = 0;
  int64_t checkpoint_step = 0;  // 0: none given

  bool has_line() const {
    return reject == ProgressReject::kNone && !line.empty();
  }
};

// Parses `tail`, the last bytes of a progress file; `whole` says that it is
// the whole file (else the first line in it may have begun before it).
// Only lines ending in '\n' count (a last one without is being written); the
// last of them is taken, spaces, tabs and a '\r' around it cut. Pure.
ProgressInput ParseProgressTail(absl::string_view tail, bool whole);

// Reads the progress file `name` in the directory open as `dir_fd` (one the
// agent opened itself, never a path the pod could redirect) and parses its
// tail: opened O_PATH|O_NOFOLLOW and checked to be a regular file with one
// link before it is opened to read (through /proc/self/fd, O_NONBLOCK), so
// that a link, fifo or device planted in its place is never opened.
// A missing file is nothing (no line, no reject).
ProgressInput ReadProgressFile(int dir_fd, const char* name);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_PROGRESS_FILE_H_
