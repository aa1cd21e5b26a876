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

// What the walk does where a component is missing.
enum class Missing {
  kStop,         // CheckHostPathHasNoSymlinks: no descriptor, OK
  kNotFound,     // OpenHostPath
  kDirectories,  // HostPathCreate::kDirectories
  kFile,         // HostPathCreate::kFile
};

// Makes `name` in `dir` as `missing` asks (`last`: the path's last
// component). EEXIST is success: whatever is there now is opened and
// checked by the caller like any other component.
absl::Status MakeAt(int dir, const std::string& name, bool last,
                    Missing missing, absl::string_view path,
                    const std::string& walked) {
  if (missing == Missing::kDirectories) {
    if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("hostPath: mkdir ", walked, ": ", strerror(errno)));
    }
    return absl::OkStatus();
  }
  if (!last) {  // FileOrCreate makes no parents.
    return absl::InternalError(
        absl::StrCat("hostPath: creating ", path, ": ", strerror(ENOENT)));
  }
  const int fd =
      ::openat(dir, name.c_str(),
               O_CREAT | O_EXCL | O_NOFOLLOW | O_RDONLY | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("hostPath: creating ", path, ": ", strerror(errno)));
  }
  if (fd >= 0) ::close(fd);
  return absl::OkStatus();
}

// The walk of CheckHostPathHasNoSymlinks, OpenHostPath and
// OpenOrCreateHostPath: the last component open, or, when a component does
// not exist, what `missing` says.
absl::StatusOr<ScopedFd> Walk(absl::string_view path, Missing missing) {
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
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string part(parts[i]);
    absl::StrAppend(&walked, "/", part);
    ScopedFd next(
        ::openat(dir.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0 && errno == ENOENT &&
        (missing == Missing::kDirectories || missing == Missing::kFile)) {
      if (absl::Status s = MakeAt(dir.get(), part, i + 1 == parts.size(),
                                  missing, path, walked);
          !s.ok()) {
        return s;
      }
      next = ScopedFd(
          ::openat(dir.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    }
    if (next.get() < 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        return Refused(path, absl::StrCat("cannot open ", Quote(walked), ": ",
                                          strerror(errno)));
      }
      if (missing != Missing::kStop) {
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
  return Walk(path, Missing::kStop).status();
}

absl::StatusOr<ScopedFd> OpenHostPath(absl::string_view path) {
  return Walk(path, Missing::kNotFound);
}

absl::StatusOr<ScopedFd> OpenOrCreateHostPath(absl::string_view path,
                                              HostPathCreate create) {
  return Walk(path, create == HostPathCreate::kDirectories
                        ? Missing::kDirectories
                        : Missing::kFile);
}

}  // namespace jobset::agent
