#include "agent/runtime/cri/log_rotation.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/cri/cri_config.h"
#include "common/log.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

void RotateLogPastCap(const CriClient& client, const std::string& logs_dir,
                      const std::string& name, const std::string& container_id,
                      int64_t cap_bytes, absl::string_view uid) {
  if (cap_bytes <= 0) return;
  const std::string log = absl::StrCat(logs_dir, "/", ContainerLogName(name));
  struct stat st;
  if (stat(log.c_str(), &st) != 0 || st.st_size <= cap_bytes) return;
  // As kubelet: rename, then have the runtime reopen its log_path.
  const std::string old = log + ".1";
  if (rename(log.c_str(), old.c_str()) != 0) {
    JOBSET_LOG(WARNING) << "pod " << uid << ": rotating " << log << ": "
                        << strerror(errno);
    return;
  }
  v1::ReopenContainerLogRequest request;
  request.set_container_id(container_id);
  if (absl::StatusOr<v1::ReopenContainerLogResponse> r =
          client.ReopenContainerLog(request);
      !r.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid << ": rotating " << log << ": "
                        << r.status();
    if (rename(old.c_str(), log.c_str()) != 0) {
      JOBSET_LOG(WARNING) << "pod " << uid << ": renaming " << old
                          << " back: " << strerror(errno);
    }
  }
}

}  // namespace jobset::agent::cri
