#ifndef JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_
#define JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/pki.h"
#include "scheduler/auth/access_store.h"

namespace jobset::scheduler {

// The files jobsetd keeps in its data directory for identity, made on first
// start (k3s's model: nothing for the operator to prepare):
//
//   <data_dir>/pki/ca.crt, ca.key          the cluster CA (10 years)
//   <data_dir>/pki/server.crt, server.key  jobsetd's serving certificate
//   <data_dir>/admin.conf                  a cluster-admin client config
//   <data_dir>/join-token                  what agents join with
//
// Keys, admin.conf and join-token are 0600, pki/ 0700; every file is written
// whole (temporary file, fsync, rename).

struct ClusterPki {
  auth::KeyAndCert ca;
  auth::KeyAndCert server;
  std::string ca_hash;  // SpkiSha256 of ca.crt: the join token's pin
};

// The name every jobsetd serving certificate carries, under which agents
// and the admin.conf verify it whatever address they dial.
inline constexpr char kServerName[] = "server.jobsetd";

// Loads the CA and serving certificate from <data_dir>/pki, creating what
// is missing. The serving certificate is issued again when it lacks one of
// `sans` (DNS names or IP literals; kServerName, localhost and 127.0.0.1
// are always added), expires within 30 days, or is not the CA's.
absl::StatusOr<ClusterPki> LoadOrCreatePki(const std::string& data_dir,
                                           std::vector<std::string> sans,
                                           absl::Time now);

// Writes <data_dir>/admin.conf for `server_address` ("host:port"): with the
// token of the admin.conf already there if it still authenticates, else
// with a new administrator token (AccessStore::ResetAdminToken). TLS unless
// `insecure` (then "http://", no CA).
absl::Status WriteAdminConfig(const std::string& data_dir,
                              const ClusterPki& pki, AccessStore* access,
                              const std::string& server_address, bool insecure,
                              absl::Time now);

// Writes <data_dir>/join-token unless it is there and still valid, making a
// new join credential if needed.
absl::Status WriteJoinToken(const std::string& data_dir, const ClusterPki& pki,
                            AccessStore* access, absl::Time now);

// Writes `contents` to `path` whole with `mode`.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_
