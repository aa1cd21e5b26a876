#ifndef JOBSET_COMMON_LOG_H_
#define JOBSET_COMMON_LOG_H_

// jobsetd's one logging facility: every binary (jobsetd, jobset-agent,
// jobset-pod-shim, jobsetctl, the benches) writes its diagnostics through it.
//
//   JOBSET_LOG(WARNING) << "node " << name << " lost: " << status;
//
// Each message is one line on stderr, written with a single write(2) so that
// lines from several threads never interleave:
//
//   2026-12-01T19:28:01.123Z W controller.cc:109] node node-1 lost: ...
//
// FATAL (and a failed JOBSET_CHECK) writes its line and aborts (a broken
// invariant; jobsetd is rebuilt from the store on restart). Thread-safe.

#include <sstream>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset {

enum class LogSeverity { kInfo, kWarning, kError, kFatal };

// Formats one line (time, severity letter, file base name and line, message)
// without the trailing newline. Pure, for tests.
std::string FormatLogLine(LogSeverity severity, absl::string_view file,
                          int line, absl::string_view message);

// Collects one message and writes it when destroyed. Use JOBSET_LOG.
class LogMessage {
 public:
  LogMessage(LogSeverity severity, const char* file, int line);
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  // Writes the line; aborts for kFatal.
  ~LogMessage();

  std::ostream& stream() { return stream_; }

 private:
  const LogSeverity severity_;
  const char* const file_;
  const int line_;
  std::ostringstream stream_;
};

// The names JOBSET_LOG takes.
namespace log_severity {
inline constexpr LogSeverity INFO = LogSeverity::kInfo;
inline constexpr LogSeverity WARNING = LogSeverity::kWarning;
inline constexpr LogSeverity ERROR = LogSeverity::kError;
inline constexpr LogSeverity FATAL = LogSeverity::kFatal;
}  // namespace log_severity

}  // namespace jobset

// Aborts with a FATAL line naming `condition` when it is false (a broken
// invariant): JOBSET_CHECK(placed == wanted) << "room miscounted";
#define JOBSET_CHECK(condition) \
  while (!(condition)) JOBSET_LOG(FATAL) << "check failed: " #condition " "

#define JOBSET_LOG(severity)                                                 \
  ::jobset::LogMessage(::jobset::log_severity::severity, __FILE__, __LINE__) \
      .stream()

#endif  // JOBSET_COMMON_LOG_H_
