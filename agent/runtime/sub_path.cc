#include "agent/runtime/sub_path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/pod_input.h"
#include "common/quote.h"

namespace jobset::agent {
namespace {

absl::Status Escapes(absl::string_view field, absl::string_view sub_path,
                     absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": invalid value ", Quote(sub_path),
                   ": must resolve beneath the volume (", why, ")"));
}

absl::Status FsError(absl::string_view what, absl::string_view path, int err) {
  std::string message = absl::StrCat(what, " ", path, ": ", strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

// Returns the fd of `path` beneath `dirfd` by openat2, or -1 with errno.
int Openat2(int dirfd, const std::string& path) {
  struct open_how how;
  memset(&how, 0, sizeof(how));
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(
      syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof(how)));
}

// Walks `parts` from `root_fd` (which it closes), creating missing
// directories when `create` and refusing every symlink.
absl::StatusOr<int> Walk(int root_fd, const std::vector<std::string>& parts,
                         bool create, absl::string_view field,
                         absl::string_view sub_path) {
  int fd = root_fd;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    int next = openat(fd, parts[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      if (mkdirat(fd, parts[i].c_str(), 0700) != 0 && errno != EEXIST) {
        const int err = errno;
        close(fd);
        return FsError("mkdir", sub_path, err);
      }
      next = openat(fd, parts[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
    const int err = errno;
    close(fd);
    if (next < 0) return FsError("open", sub_path, err);
    struct stat st;
    if (fstat(next, &st) != 0) {
      const int stat_err = errno;
      close(next);
      return FsError("stat", sub_path, stat_err);
    }
    if (S_ISLNK(st.st_mode)) {
      close(next);
      return Escapes(field, sub_path,
                     absl::StrCat("\"", parts[i], "\" is a symlink"));
    }
    if (!last && !S_ISDIR(st.st_mode)) {
      close(next);
      return FsError("open", sub_path, ENOTDIR);
    }
    fd = next;
  }
  return fd;
}

}  // namespace

absl::StatusOr<int> OpenBeneath(const std::string& root,
                                absl::string_view sub_path,
                                absl::string_view field,
                                BeneathResolver resolver) {
  if (absl::Status s = CheckSubPath(field, sub_path); !s.ok()) return s;
  std::vector<std::string> parts;
  for (absl::string_view p : absl::StrSplit(sub_path, '/')) {
    if (p.empty() || p == ".") continue;
    parts.emplace_back(p);
  }
  const int root_fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return FsError("open", root, errno);
  if (parts.empty()) return root_fd;
  if (resolver == BeneathResolver::kOpenat2) {
    const std::string path(sub_path);
    const int fd = Openat2(root_fd, path);
    if (fd >= 0) {
      close(root_fd);
      return fd;
    }
    const int err = errno;
    if (err == EXDEV || err == ELOOP) {
      close(root_fd);
      return Escapes(
          field, sub_path,
          err == EXDEV ? "a symlink leads out of it" : "too many symlinks");
    }
    // No openat2 (before Linux 5.6): the walk. Missing components: the walk
    // creates them, still refusing symlinks on the way.
    if (err != ENOSYS && err != ENOENT) {
      close(root_fd);
      return FsError("openat2", sub_path, err);
    }
  }
  return Walk(root_fd, parts, /*create=*/true, field, sub_path);
}

}  // namespace jobset::agent
