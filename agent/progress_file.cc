#include "agent/progress_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/runtime/scoped_fd.h"

namespace jobset::agent {
namespace {

ProgressInput Rejected(ProgressReject reject, absl::string_view line) {
  ProgressInput in;
  in.reject = reject;
  // Enough of it to tell it from the next input (the end: a line too long
  // grows there).
  if (line.size() > kMaxProgressLineBytes)
    line = line.substr(line.size() - kMaxProgressLineBytes);
  in.line = std::string(line);
  return in;
}

// Parses "<digits>" (a '-' before them: kNegative) at the front of `*text`,
// consuming it.
ProgressReject ConsumeNumber(absl::string_view* text, int64_t* out) {
  const bool negative = absl::ConsumePrefix(text, "-");
  size_t n = 0;
  while (n < text->size() && absl::ascii_isdigit((*text)[n])) ++n;
  if (n == 0) return ProgressReject::kMalformed;
  // More digits than 2^62 has (19) are out of range whatever they say.
  if (n > 19) return ProgressReject::kOutOfRange;
  uint64_t value = 0;
  for (size_t i = 0; i < n; ++i) value = value * 10 + ((*text)[i] - '0');
  text->remove_prefix(n);
  if (negative)
    return value == 0 ? ProgressReject::kMalformed : ProgressReject::kNegative;
  if (value > static_cast<uint64_t>(kMaxProgressStep))
    return ProgressReject::kOutOfRange;
  *out = static_cast<int64_t>(value);
  return ProgressReject::kNone;
}

const char* KindOf(mode_t mode, nlink_t links) {
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  return links != 1 ? "hard link" : "file";
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

absl::string_view ProgressRejectName(ProgressReject reject) {
  switch (reject) {
    case ProgressReject::kNone:
      return "";
    case ProgressReject::kNotAFile:
      return "not_a_file";
    case ProgressReject::kUnreadable:
      return "unreadable";
    case ProgressReject::kTooLong:
      return "too_long";
    case ProgressReject::kMalformed:
      return "malformed";
    case ProgressReject::kNegative:
      return "negative";
    case ProgressReject::kOutOfRange:
      return "out_of_range";
    case ProgressReject::kCheckpointAfterStep:
      return "checkpoint_after_step";
    case ProgressReject::kDecreasing:
      return "decreasing";
  }
  return "";
}

ProgressInput ParseProgressTail(absl::string_view tail, bool whole) {
  // Whatever follows the last newline is a line still being written.
  size_t end = tail.rfind('\n');
  if (end == absl::string_view::npos) {
    // No complete line at all; one already too long to ever be taken is
    // refused now (a file of one huge line without a newline).
    if (tail.size() > kMaxProgressLineBytes)
      return Rejected(ProgressReject::kTooLong, tail);
    return ProgressInput{};
  }
  // The last complete line that is not blank.
  absl::string_view line;
  while (true) {
    const size_t before =
        end == 0 ? absl::string_view::npos : tail.rfind('\n', end - 1);
    if (before == absl::string_view::npos && !whole) {
      // The line began before the tail read: longer than the tail itself.
      return Rejected(ProgressReject::kTooLong, tail.substr(0, end));
    }
    const size_t begin = before == absl::string_view::npos ? 0 : before + 1;
    const absl::string_view raw = tail.substr(begin, end - begin);
    if (raw.size() > kMaxProgressLineBytes)
      return Rejected(ProgressReject::kTooLong, raw);
    line = Trim(raw);
    if (!line.empty()) break;
    if (before == absl::string_view::npos) return ProgressInput{};
    end = before;
  }
  ProgressInput in;
  in.line = std::string(line);
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, "step="))
    return Rejected(ProgressReject::kMalformed, line);
  if (ProgressReject r = ConsumeNumber(&rest, &in.step);
      r != ProgressReject::kNone) {
    return Rejected(r, line);
  }
  if (!rest.empty()) {
    // One or more blanks, then the checkpoint, then nothing.
    const size_t blanks = rest.find_first_not_of(" \t");
    if (blanks == 0 || blanks == absl::string_view::npos)
      return Rejected(ProgressReject::kMalformed, line);
    rest.remove_prefix(blanks);
    if (!absl::ConsumePrefix(&rest, "checkpoint_step="))
      return Rejected(ProgressReject::kMalformed, line);
    if (ProgressReject r = ConsumeNumber(&rest, &in.checkpoint_step);
        r != ProgressReject::kNone) {
      return Rejected(r, line);
    }
    if (!rest.empty()) return Rejected(ProgressReject::kMalformed, line);
  }
  if (in.checkpoint_step > in.step)
    return Rejected(ProgressReject::kCheckpointAfterStep, line);
  return in;
}

ProgressInput ReadProgressFile(int dir_fd, const char* name) {
  // O_PATH opens nothing: a fifo does not block, a device's driver is not
  // called, and with O_NOFOLLOW a symlink is the link itself.
  ScopedFd path(openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (path.get() < 0) {
    if (errno == ENOENT) return ProgressInput{};
    return Rejected(ProgressReject::kUnreadable, "");
  }
  struct stat st;
  if (fstat(path.get(), &st) != 0)
    return Rejected(ProgressReject::kUnreadable, "");
  // One link only: a hard link to a file the pod could not read itself
  // (another pod's, the host's) is not read for it.
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
    // What it is and which one: another object in its place is another
    // input.
    return Rejected(
        ProgressReject::kNotAFile,
        absl::StrCat(KindOf(st.st_mode, st.st_nlink), " ", st.st_ino));
  }
  // Reopened for reading through the descriptor: the very file checked,
  // whatever the name means by now.
  const std::string proc = absl::StrCat("/proc/self/fd/", path.get());
  ScopedFd file(open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) return Rejected(ProgressReject::kUnreadable, "");
  struct stat opened;
  if (fstat(file.get(), &opened) != 0 || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino || !S_ISREG(opened.st_mode)) {
    return Rejected(ProgressReject::kUnreadable, "");
  }
  const off_t size = opened.st_size;
  const off_t from = size > static_cast<off_t>(kProgressTailBytes)
                         ? size - kProgressTailBytes
                         : 0;
  std::string tail(kProgressTailBytes, '\0');
  size_t got = 0;
  while (got < tail.size()) {
    const ssize_t n =
        pread(file.get(), tail.data() + got, tail.size() - got, from + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Rejected(ProgressReject::kUnreadable, "");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  tail.resize(got);
  return ParseProgressTail(tail, from == 0);
}

}  // namespace jobset::agent
