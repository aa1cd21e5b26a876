#ifndef JOBSET_SCHEDULER_AUTH_SHARED_CA_H_
#define JOBSET_SCHEDULER_AUTH_SHARED_CA_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "auth/pki.h"
#include "store/store.h"

namespace jobset::scheduler {

// The cluster CA kept in the store (store key "auth/ca"), so that every
// jobsetd replica sharing one etcd serves under the same CA and accepts the
// same node certificates without copying files between machines; and so
// that a snapshot carries it, and a restore on a new machine needs only the
// snapshot and the secret. The key is sealed (auth/sealed_box.h) with the
// cluster secret every replica is given (--cluster_secret_file): a reader
// of etcd or of a snapshot file learns the certificate, never the key.
// Each replica still issues its own serving certificate from it
// (cluster_files.h), for its own names.

// Reads the cluster secret from `path`: at most 4 KiB, trailing whitespace
// dropped, at least auth::kMinSealPassphraseBytes left.
absl::StatusOr<std::string> ReadClusterSecret(const std::string& path);

// Returns the cluster CA in `store`, unsealed with `secret`. When the store
// has none yet, publishes `local` (the CA of this replica's data dir), or a
// new CA when there is none, and returns it; if another replica published
// first, its CA is returned instead. Refuses (kFailedPrecondition) a
// `local` CA other than the store's: that data dir belongs to another
// cluster, and serving under its CA would orphan every node certificate.
// kPermissionDenied when the stored key does not open with `secret`;
// kDataLoss when the stored record is malformed.
absl::StatusOr<auth::KeyAndCert> LoadOrPublishSharedCa(
    store::Store* store, absl::string_view secret,
    const std::optional<auth::KeyAndCert>& local, absl::Time now);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_SHARED_CA_H_
