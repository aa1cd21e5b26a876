#include "common/log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace jobset {
namespace {

char Letter(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return 'I';
    case LogSeverity::kWarning:
      return 'W';
    case LogSeverity::kError:
      return 'E';
    case LogSeverity::kFatal:
      return 'F';
  }
  return '?';
}

}  // namespace

std::string FormatLogLine(LogSeverity severity, absl::string_view file,
                          int line, absl::string_view message) {
  if (size_t slash = file.rfind('/'); slash != absl::string_view::npos) {
    file.remove_prefix(slash + 1);
  }
  // Log lines carry the wall time, like every other log on the host: this is
  // the one place outside RealClock that reads it.
  return absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                       absl::UTCTimeZone()),
                      " ", std::string(1, Letter(severity)), " ", file, ":",
                      line, "] ", message);
}

LogMessage::LogMessage(LogSeverity severity, const char* file, int line)
    : severity_(severity), file_(file), line_(line) {}

LogMessage::~LogMessage() {
  std::string text =
      absl::StrCat(FormatLogLine(severity_, file_, line_, stream_.str()), "\n");
  absl::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // Nowhere to report it.
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (severity_ == LogSeverity::kFatal) std::abort();
}

}  // namespace jobset
