// admin snapshot save FILE [--force] [--timeout=10m]: a consistent snapshot
// of jobsetd's whole store (AccessService.SaveSnapshot), written safely.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// A human size: "1.2 MiB", "567 B".
std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof(out), "%.1f %s", value, units[unit]);
  return out;
}

}  // namespace

// admin snapshot save FILE: the chunks go to FILE.tmp (0600, created here,
// never through a symlink), which is fsync'd and renamed over FILE only
// once the last chunk has come and its size agrees; the directory is
// fsync'd too. An existing FILE is kept unless --force.
int Admin(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args[0] != "snapshot" || args[1] != "save") {
    return Usage(ctx, absl::StrCat("unknown admin command ",
                                   Quote(absl::StrCat(args[0], " ", args[1])),
                                   " (use snapshot save FILE)"));
  }
  const std::string& path = args[2];
  absl::Duration timeout = absl::Minutes(10);
  if (const std::string given = ctx.invocation.Get("timeout", "");
      !given.empty() && (!absl::ParseDuration(given, &timeout) ||
                         timeout <= absl::ZeroDuration())) {
    return Usage(ctx, absl::StrCat("--timeout=", given, ": not a duration"));
  }
  struct stat st;
  if (!ctx.invocation.Has("force") && lstat(path.c_str(), &st) == 0) {
    *ctx.io.err << "error: " << path << " exists; pass --force to replace it\n";
    return kExitApiError;
  }
  const std::string tmp = absl::StrCat(path, ".tmp");
  unlink(tmp.c_str());
  const int fd = open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *ctx.io.err << "error: " << tmp
                << ": cannot create: " << std::strerror(errno) << "\n";
    return kExitApiError;
  }
  std::string write_error;
  uint64_t written = 0;
  api::SnapshotChunk last;
  absl::Status saved = ctx.client.SaveSnapshot(
      ctx.clock.Now() + timeout, [&](const api::SnapshotChunk& chunk) {
        const std::string& data = chunk.data();
        for (size_t done = 0; done < data.size();) {
          const ssize_t n = write(fd, data.data() + done, data.size() - done);
          if (n < 0) {
            if (errno == EINTR) continue;
            write_error = absl::StrCat(tmp, ": write: ", std::strerror(errno));
            return false;
          }
          done += static_cast<size_t>(n);
        }
        written += data.size();
        if (chunk.last()) last = chunk;
        return !chunk.last();
      });
  if (saved.ok() && write_error.empty()) {
    if (!last.last()) {
      write_error = "the snapshot stream ended before its last chunk";
    } else if (last.bytes() != written) {
      write_error = absl::StrCat("jobsetd sent ", last.bytes(), " bytes but ",
                                 written, " arrived");
    } else if (fsync(fd) != 0) {
      write_error = absl::StrCat(tmp, ": fsync: ", std::strerror(errno));
    }
  }
  if (close(fd) != 0 && write_error.empty() && saved.ok()) {
    write_error = absl::StrCat(tmp, ": close: ", std::strerror(errno));
  }
  if (saved.ok() && write_error.empty() &&
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    write_error =
        absl::StrCat("rename ", tmp, " to ", path, ": ", std::strerror(errno));
  }
  if (!saved.ok() || !write_error.empty()) {
    unlink(tmp.c_str());
    if (!saved.ok()) return Fail(ctx, saved);
    *ctx.io.err << "error: " << write_error << "\n";
    return kExitApiError;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  *ctx.io.out << "snapshot of revision " << last.revision() << " ("
              << last.keys() << " keys, " << HumanBytes(last.bytes())
              << ") saved to " << path << "\n";
  return kExitOk;
}

}  // namespace jobset::cli
