#include "agent/runtime/host_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
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

// The walk of CheckHostPathHasNoSymlinks and OpenHostPath: the last
// component open, or, when a component does not exist, kNotFound with
// `must_exist` and else no descriptor.
absl::StatusOr<ScopedFd> Walk(absl::string_view path, bool must_exist) {
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
  ScopedFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    return Refused(path, absl::StrCat("open /: ", strerror(errno)));
  }
  std::string walked;
  for (absl::string_view part : parts) {
    absl::StrAppend(&walked, "/", part);
    ScopedFd next(::openat(dir.get(), std::string(part).c_str(),
                           O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        return Refused(path, absl::StrCat("cannot open ", Quote(walked), ": ",
                                          strerror(errno)));
      }
      if (must_exist) {
        return absl::NotFoundError(absl::StrCat(
            "hostPath ", Quote(path), ": ", Quote(walked), " does not exist"));
      }
      // Nothing there (yet): nothing to follow below it either.
      return ScopedFd();
    }
    dir = std::move(next);
    struct stat st;
    if (::fstat(dir.get(), &st) != 0) {
      return Refused(path, absl::StrCat("cannot stat ", Quote(walked), ": ",
                                        strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      return Refused(
          path, absl::StrCat(Quote(walked),
                             " is a symbolic link (hostPath must name the real "
                             "path: --allowed_host_paths compares the text)"));
    }
  }
  return dir;
}

}  // namespace

absl::Status CheckHostPathHasNoSymlinks(absl::string_view path) {
  return Walk(path, /*must_exist=*/false).status();
}

absl::StatusOr<ScopedFd> OpenHostPath(absl::string_view path) {
  return Walk(path, /*must_exist=*/true);
}

}  // namespace jobset::agent
