#ifndef JOBSET_AUTH_TOKENS_H_
#define JOBSET_AUTH_TOKENS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::auth {

// Secrets that authenticate: users' bearer tokens and the agents' join
// token. Each is "<id>.<secret>": the id names the stored record and may be
// shown; the secret is random (OpenSSL's RAND_bytes) and only its SHA-256 is
// stored.

struct TokenParts {
  std::string id = {};
  std::string secret = {};
};

// A user's bearer token: id 8 characters of [a-z0-9], secret 32 of
// [A-Za-z0-9] (190 bits).
TokenParts NewUserToken();
// A join token's credential, kubeadm's shape: id [a-z0-9]{6}, secret
// [a-z0-9]{16}.
TokenParts NewJoinCredential();

std::string FormatToken(const TokenParts& token);  // "<id>.<secret>"
// Reads "<id>.<secret>" of either shape; kInvalidArgument (never echoing
// the secret) if it is neither.
absl::StatusOr<TokenParts> ParseToken(absl::string_view text);

// The join token an operator hands to agents, k3s's shape with our prefix:
// "JS1<ca_hash>::<id>.<secret>", ca_hash being SpkiSha256 of the cluster CA.
struct JoinToken {
  std::string ca_hash = {};  // 64 lowercase hex digits
  TokenParts credential;
};
std::string FormatJoinToken(const JoinToken& token);
// Surrounding whitespace (a trailing newline in a file) is ignored.
absl::StatusOr<JoinToken> ParseJoinToken(absl::string_view text);

// SHA-256 of `text`, 64 lowercase hex digits.
std::string Sha256Hex(absl::string_view text);
// Compares in time independent of where they differ (CRYPTO_memcmp).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);
// `length` characters drawn uniformly from `alphabet` with RAND_bytes.
std::string RandomString(int length, absl::string_view alphabet);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_TOKENS_H_
