#ifndef JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_
#define JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_

#include <optional>
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

// Reads the CA of <data_dir>/pki: nullopt when there is none yet;
// kFailedPrecondition when only one of ca.crt and ca.key is there, or the
// key is not the certificate's.
absl::StatusOr<std::optional<auth::KeyAndCert>> ReadPkiCa(
    const std::string& data_dir);

// Loads the CA and serving certificate from <data_dir>/pki, creating what
// is missing. With `cluster_ca` (the CA shared through the store,
// shared_ca.h), that CA is the one used and written to pki/ when missing
// there (the caller has checked that pki/ holds no other). The serving
// certificate is issued again when it lacks one of `sans` (DNS names or IP
// literals; kServerName, localhost and 127.0.0.1 are always added), expires
// within 30 days, or is not the CA's.
absl::StatusOr<ClusterPki> LoadOrCreatePki(
    const std::string& data_dir, std::vector<std::string> sans, absl::Time now,
    const std::optional<auth::KeyAndCert>& cluster_ca = std::nullopt);

// Writes <data_dir>/admin.conf for `server_address` ("host:port"): with the
// token of the admin.conf already there if it still authenticates, else
// with a new administrator token named `token_name`
// (AccessStore::ResetAdminToken). TLS unless `insecure` (then "http://", no
// CA).
absl::Status WriteAdminConfig(const std::string& data_dir,
                              const ClusterPki& pki, AccessStore* access,
                              const std::string& server_address, bool insecure,
                              absl::Time now,
                              absl::string_view token_name = "admin");

// The name of the administrator token a replica sharing its store with
// others writes to its own admin.conf: "admin-" and 8 hex digits of a hash
// of `host` and `data_dir`, stable across its restarts and apart from
// every other replica's, so that one replica's first start never replaces
// the token in another's admin.conf.
std::string ReplicaAdminTokenName(absl::string_view host,
                                  const std::string& data_dir);

// Writes <data_dir>/join-token unless it is there and still valid, making a
// new join credential if needed, valid for `ttl` from `now` (nullopt: it
// never expires). A kept credential's stored expiry is brought forward to
// now + `ttl` if it is later: a shorter TTL holds after a restart, and a
// restart never lengthens one.
absl::Status WriteJoinToken(const std::string& data_dir, const ClusterPki& pki,
                            AccessStore* access, absl::Time now,
                            std::optional<absl::Duration> ttl = std::nullopt);

// Reads the file at `path`, at most `max_bytes` of it (kInvalidArgument,
// naming the path, when it is larger); nullopt when it does not exist.
absl::StatusOr<std::optional<std::string>> ReadSmallFile(
    const std::string& path, size_t max_bytes = 1 << 20);

// Writes `contents` to `path` whole with `mode`.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_CLUSTER_FILES_H_
