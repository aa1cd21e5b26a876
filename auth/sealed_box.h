#ifndef JOBSET_AUTH_SEALED_BOX_H_
#define JOBSET_AUTH_SEALED_BOX_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::auth {

// Authenticated encryption of a small secret (the cluster CA's key) under a
// passphrase every jobsetd replica is given (--cluster_secret_file), so that
// it can sit in a store others can read (etcd, a snapshot file): k3s's
// model for its bootstrap data. AES-256-GCM, with the key derived from the
// passphrase by PBKDF2-HMAC-SHA256 (kSealIterations) over a random 16-byte
// salt; a random 12-byte nonce. `associated_data` is authenticated, not
// encrypted: what the sealed text belongs to (the CA certificate), so it
// cannot be moved onto another record.
//
// The sealed form: "jobsetd-seal-v1\n" | salt | nonce | ciphertext | tag.
// Thread-safe (no state).

inline constexpr int kSealIterations = 200'000;
// A passphrase shorter than this is refused: it is the only thing between
// a reader of the store and the CA's key.
inline constexpr size_t kMinSealPassphraseBytes = 32;
// The largest plaintext sealed or unsealed (a CA key is about 250 bytes).
inline constexpr size_t kMaxSealedPlaintextBytes = 64 << 10;

// Seals `plaintext`. kInvalidArgument for a short passphrase or an
// oversized plaintext.
absl::StatusOr<std::string> Seal(absl::string_view passphrase,
                                 absl::string_view plaintext,
                                 absl::string_view associated_data);

// Opens what Seal made with the same passphrase and associated data.
// kInvalidArgument when `sealed` is not in the sealed form (truncated,
// another version); kPermissionDenied when it does not open: another
// passphrase, other associated data, or altered bytes (GCM cannot tell
// these apart).
absl::StatusOr<std::string> Unseal(absl::string_view passphrase,
                                   absl::string_view sealed,
                                   absl::string_view associated_data);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_SEALED_BOX_H_
