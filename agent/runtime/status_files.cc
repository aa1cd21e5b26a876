#include "agent/runtime/status_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/runtime/pod_files.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

// A non-negative number of milliseconds in the file at `path`.
std::optional<int64_t> ReadMillis(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  int64_t ms = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &ms) ||
      ms < 0) {
    return std::nullopt;
  }
  return ms;
}

}  // namespace

void StatusFile::Write(const api::PodStatus& status, bool force) {
  std::string bytes;
  status.SerializeToString(&bytes);
  if (!force && bytes == last_written_) return;
  absl::Status s =
      WriteFileAtomic(path_, bytes, 0600,
                      IsFinalPhase(status.phase()) ? Durability::kHostCrash
                                                   : Durability::kProcessCrash);
  if (!s.ok()) {
    JOBSET_LOG(ERROR) << "writing status: " << s.message();
    return;
  }
  last_written_ = std::move(bytes);
}

absl::Status WriteShimPid(const std::string& pod_dir) {
  absl::StatusOr<uint64_t> start = ProcStartTime(getpid());
  if (!start.ok()) return start.status();
  return WriteFileAtomic(absl::StrCat(pod_dir, "/", kShimPidFile),
                         FormatProcessId({getpid(), *start}), 0600,
                         Durability::kProcessCrash);
}

bool StopRequested(const std::string& pod_dir) {
  return ReadFileToString(absl::StrCat(pod_dir, "/", kStopFile)).ok();
}

std::optional<absl::Duration> StopGrace(const std::string& pod_dir) {
  std::optional<int64_t> ms = ReadMillis(absl::StrCat(pod_dir, "/", kStopFile));
  if (!ms.has_value()) return std::nullopt;
  return absl::Milliseconds(*ms);
}

bool LeaseWatch::Due(absl::Time now) {
  if (path_.empty() || now < next_check_) return false;
  next_check_ = now + absl::Milliseconds(100);
  return true;
}

std::optional<std::string> LeaseWatch::Expired(absl::Time now) const {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) return std::nullopt;  // No lease.
  std::optional<int64_t> ms = ReadMillis(path_);
  if (!ms.has_value() || *ms <= 0) return std::nullopt;
  const absl::Time renewed = absl::TimeFromTimespec(st.st_mtim);
  const absl::Duration lease = absl::Milliseconds(*ms);
  if (now - renewed <= lease) return std::nullopt;
  return absl::StrCat("the agent has not renewed its lease for ",
                      absl::FormatDuration(now - renewed), " (lease ",
                      absl::FormatDuration(lease), ")");
}

absl::Time LeaseWatch::next_check() const {
  return path_.empty() ? absl::InfiniteFuture() : next_check_;
}

}  // namespace jobset::agent
