#include "auth/tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jobset::auth {
namespace {

constexpr absl::string_view kLowerDigits =
    "abcdefghijklmnopqrstuvwxyz0123456789";
constexpr absl::string_view kAlphanumeric =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr absl::string_view kJoinTokenPrefix = "JS1";
constexpr absl::string_view kJoinTokenSeparator = "::";
constexpr int kCaHashLength = 64;
// Longer than either shape; a bound so that nothing large is scanned.
constexpr size_t kMaxTokenLength = 256;

// A secret that cannot be drawn must not be made up: without a working
// RAND_bytes nothing here is safe, so this is a crash, not an error.
[[noreturn]] void DieOnRandFailure() {
  std::fprintf(stderr, "jobset::auth: RAND_bytes failed\n");
  std::abort();
}

bool AllOf(absl::string_view text, bool (*allowed)(char)) {
  for (char c : text) {
    if (!allowed(c)) return false;
  }
  return true;
}

bool IsLowerOrDigit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlphanumeric(char c) { return absl::ascii_isalnum(c); }
bool IsLowerHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

}  // namespace

std::string RandomString(int length, absl::string_view alphabet) {
  std::string out;
  if (length <= 0 || alphabet.empty()) return out;
  out.reserve(length);
  const uint64_t n = alphabet.size();
  // Draws of 32 bits at or above `limit` are thrown away so that every
  // character is equally likely (a plain modulo would favour the first
  // 2^32 mod n characters).
  const uint64_t limit = ((uint64_t{1} << 32) / n) * n;
  unsigned char buf[256];
  size_t pos = sizeof(buf);
  while (out.size() < static_cast<size_t>(length)) {
    if (pos + 4 > sizeof(buf)) {
      if (RAND_bytes(buf, sizeof(buf)) != 1) DieOnRandFailure();
      pos = 0;
    }
    const uint64_t draw = (uint64_t{buf[pos]} << 24) |
                          (uint64_t{buf[pos + 1]} << 16) |
                          (uint64_t{buf[pos + 2]} << 8) | buf[pos + 3];
    pos += 4;
    if (draw >= limit) continue;
    out.push_back(alphabet[draw % n]);
  }
  OPENSSL_cleanse(buf, sizeof(buf));
  return out;
}

TokenParts NewUserToken() {
  return TokenParts{RandomString(8, kLowerDigits),
                    RandomString(32, kAlphanumeric)};
}

TokenParts NewJoinCredential() {
  return TokenParts{RandomString(6, kLowerDigits),
                    RandomString(16, kLowerDigits)};
}

std::string FormatToken(const TokenParts& token) {
  return absl::StrCat(token.id, ".", token.secret);
}

absl::StatusOr<TokenParts> ParseToken(absl::string_view text) {
  // No message below quotes `text`: any part of it may be a secret.
  constexpr absl::string_view kShapes =
      "[a-z0-9]{6}.[a-z0-9]{16} or [a-z0-9]{8}.[A-Za-z0-9]{32}";
  if (text.empty()) return absl::InvalidArgumentError("token is empty");
  if (text.size() > kMaxTokenLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("token is longer than ", kMaxTokenLength, " characters"));
  }
  const size_t dot = text.find('.');
  if (dot == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("token must be <id>.<secret> (", kShapes, "): no '.'"));
  }
  const absl::string_view id = text.substr(0, dot);
  const absl::string_view secret = text.substr(dot + 1);
  if (id.size() == 6 && AllOf(id, IsLowerOrDigit)) {
    if (secret.size() == 16 && AllOf(secret, IsLowerOrDigit)) {
      return TokenParts{std::string(id), std::string(secret)};
    }
    return absl::InvalidArgumentError(
        "token with a 6-character id must have a secret of 16 characters of "
        "[a-z0-9]");
  }
  if (id.size() == 8 && AllOf(id, IsLowerOrDigit)) {
    if (secret.size() == 32 && AllOf(secret, IsAlphanumeric)) {
      return TokenParts{std::string(id), std::string(secret)};
    }
    return absl::InvalidArgumentError(
        "token with an 8-character id must have a secret of 32 characters of "
        "[A-Za-z0-9]");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "token id must be 6 or 8 characters of [a-z0-9] (", kShapes, ")"));
}

std::string FormatJoinToken(const JoinToken& token) {
  return absl::StrCat(kJoinTokenPrefix, token.ca_hash, kJoinTokenSeparator,
                      FormatToken(token.credential));
}

absl::StatusOr<JoinToken> ParseJoinToken(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return absl::InvalidArgumentError("join token is empty");
  if (text.size() > kMaxTokenLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "join token is longer than ", kMaxTokenLength, " characters"));
  }
  if (!absl::StartsWith(text, kJoinTokenPrefix)) {
    return absl::InvalidArgumentError(
        "join token must start with JS1 (JS1<CA hash>::<id>.<secret>)");
  }
  text.remove_prefix(kJoinTokenPrefix.size());
  const size_t separator = text.find(kJoinTokenSeparator);
  const absl::string_view ca_hash =
      separator == absl::string_view::npos ? text : text.substr(0, separator);
  if (ca_hash.size() != kCaHashLength || !AllOf(ca_hash, IsLowerHex)) {
    return absl::InvalidArgumentError(
        "join token's CA hash must be 64 lowercase hex digits after JS1");
  }
  if (separator == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "join token must have '::' and a credential after the CA hash");
  }
  absl::StatusOr<TokenParts> credential =
      ParseToken(text.substr(separator + kJoinTokenSeparator.size()));
  if (!credential.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "join token's credential: ", credential.status().message()));
  }
  return JoinToken{std::string(ca_hash), *std::move(credential)};
}

std::string Sha256Hex(absl::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &digest_length, EVP_sha256(),
                 nullptr) != 1) {
    std::fprintf(stderr, "jobset::auth: EVP_Digest(SHA-256) failed\n");
    std::abort();
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest_length);
  for (unsigned int i = 0; i < digest_length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace jobset::auth
