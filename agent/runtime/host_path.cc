#include "agent/runtime/host_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/quote.h"

namespace jobset::agent {
namespace {

absl::Status Refused(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("hostPath ", Quote(path), ": ", why));
}

}  // namespace

absl::Status CheckHostPathHasNoSymlinks(absl::string_view path) {
  if (path.empty() || path[0] != '/') {
    return Refused(path, "must be an absolute path");
  }
  std::vector<absl::string_view> parts =
      absl::StrSplit(path, '/', absl::SkipEmpty());
  for (absl::string_view part : parts) {
    if (part == "." || part == "..") {
      return Refused(path, "must not contain '.' or '..' components");
    }
  }
  int dir = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Refused(path, absl::StrCat("open /: ", strerror(errno)));
  std::string walked;
  absl::Status result = absl::OkStatus();
  for (absl::string_view part : parts) {
    absl::StrAppend(&walked, "/", part);
    const int next = ::openat(dir, std::string(part).c_str(),
                              O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      // Nothing there (yet): nothing to follow below it either.
      if (errno != ENOENT && errno != ENOTDIR) {
        result = Refused(path, absl::StrCat("cannot open ", Quote(walked), ": ",
                                            strerror(errno)));
      }
      break;
    }
    ::close(dir);
    dir = next;
    struct stat st;
    if (::fstat(dir, &st) != 0) {
      result = Refused(path, absl::StrCat("cannot stat ", Quote(walked), ": ",
                                          strerror(errno)));
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      result = Refused(
          path, absl::StrCat(Quote(walked),
                             " is a symbolic link (hostPath must name the real "
                             "path: --allowed_host_paths compares the text)"));
      break;
    }
  }
  ::close(dir);
  return result;
}

}  // namespace jobset::agent
