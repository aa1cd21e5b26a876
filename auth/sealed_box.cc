#include "auth/sealed_box.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace jobset::auth {
namespace {

constexpr absl::string_view kMagic = "jobsetd-seal-v1\n";
constexpr size_t kSaltBytes = 16;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kKeyBytes = 32;

using CipherContext =
    std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

const unsigned char* Bytes(absl::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// The AES key for `passphrase` and `salt`. OpenSSL failing here is a broken
// library, not an input: crash rather than seal with a bad key.
std::string DeriveKey(absl::string_view passphrase, absl::string_view salt) {
  std::string key(kKeyBytes, '\0');
  if (PKCS5_PBKDF2_HMAC(passphrase.data(), static_cast<int>(passphrase.size()),
                        Bytes(salt), static_cast<int>(salt.size()),
                        kSealIterations, EVP_sha256(),
                        static_cast<int>(kKeyBytes),
                        reinterpret_cast<unsigned char*>(key.data())) != 1) {
    std::fprintf(stderr, "jobset::auth: PKCS5_PBKDF2_HMAC failed\n");
    std::abort();
  }
  return key;
}

absl::Status CheckPassphrase(absl::string_view passphrase) {
  if (passphrase.size() < kMinSealPassphraseBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the cluster secret must be at least ",
                     kMinSealPassphraseBytes, " bytes, got ", passphrase.size(),
                     " (e.g. head -c 32 /dev/urandom | base64)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Seal(absl::string_view passphrase,
                                 absl::string_view plaintext,
                                 absl::string_view associated_data) {
  if (absl::Status s = CheckPassphrase(passphrase); !s.ok()) return s;
  if (plaintext.size() > kMaxSealedPlaintextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("sealing at most ", kMaxSealedPlaintextBytes,
                     " bytes, got ", plaintext.size()));
  }
  std::string out(kMagic);
  // Every pointer below stays valid: no resize reallocates past this.
  out.reserve(kMagic.size() + kSaltBytes + kNonceBytes + plaintext.size() +
              kTagBytes);
  const size_t salt_at = out.size();
  out.resize(salt_at + kSaltBytes + kNonceBytes);
  auto* random = reinterpret_cast<unsigned char*>(out.data() + salt_at);
  if (RAND_bytes(random, static_cast<int>(kSaltBytes + kNonceBytes)) != 1) {
    return absl::InternalError("RAND_bytes failed");
  }
  const std::string key =
      DeriveKey(passphrase, absl::string_view(out).substr(salt_at, kSaltBytes));
  const unsigned char* nonce = random + kSaltBytes;

  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  const size_t text_at = out.size();
  out.resize(text_at + plaintext.size() + kTagBytes);
  auto* text = reinterpret_cast<unsigned char*>(out.data() + text_at);
  int n = 0;
  int total = 0;
  bool ok =
      ctx != nullptr &&
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr,
                         nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes,
                          nullptr) == 1 &&
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), nonce) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, Bytes(associated_data),
                        static_cast<int>(associated_data.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), text, &n, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) == 1;
  total = n;
  ok = ok && EVP_EncryptFinal_ex(ctx.get(), text + total, &n) == 1;
  total += n;
  ok = ok && static_cast<size_t>(total) == plaintext.size() &&
       EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                           text + total) == 1;
  if (!ok) return absl::InternalError("AES-256-GCM encryption failed");
  return out;
}

absl::StatusOr<std::string> Unseal(absl::string_view passphrase,
                                   absl::string_view sealed,
                                   absl::string_view associated_data) {
  if (absl::Status s = CheckPassphrase(passphrase); !s.ok()) return s;
  if (!absl::ConsumePrefix(&sealed, kMagic)) {
    return absl::InvalidArgumentError(
        "not a sealed secret (it does not start with \"jobsetd-seal-v1\")");
  }
  if (sealed.size() < kSaltBytes + kNonceBytes + kTagBytes ||
      sealed.size() >
          kSaltBytes + kNonceBytes + kTagBytes + kMaxSealedPlaintextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a sealed secret of ", sealed.size(),
                     " bytes after its header: truncated or too large"));
  }
  const absl::string_view salt = sealed.substr(0, kSaltBytes);
  const absl::string_view nonce = sealed.substr(kSaltBytes, kNonceBytes);
  const absl::string_view text =
      sealed.substr(kSaltBytes + kNonceBytes,
                    sealed.size() - kSaltBytes - kNonceBytes - kTagBytes);
  std::string tag(sealed.substr(sealed.size() - kTagBytes));
  const std::string key = DeriveKey(passphrase, salt);

  CipherContext ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(text.size(), '\0');
  auto* plain = reinterpret_cast<unsigned char*>(out.data());
  int n = 0;
  int total = 0;
  bool ok = ctx != nullptr &&
            EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr,
                               nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes,
                                nullptr) == 1 &&
            EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key),
                               Bytes(nonce)) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &n, Bytes(associated_data),
                              static_cast<int>(associated_data.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), plain, &n, Bytes(text),
                              static_cast<int>(text.size())) == 1;
  total = n;
  if (!ok || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes,
                                 tag.data()) != 1) {
    return absl::InternalError("AES-256-GCM decryption could not start");
  }
  if (EVP_DecryptFinal_ex(ctx.get(), plain + total, &n) != 1) {
    return absl::PermissionDeniedError(
        "the sealed secret does not open with this cluster secret (another "
        "secret than the one it was sealed with, or altered bytes)");
  }
  out.resize(static_cast<size_t>(total + n));
  return out;
}

}  // namespace jobset::auth
