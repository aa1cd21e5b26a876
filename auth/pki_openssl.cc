#include "auth/pki_openssl.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace jobset::auth::pki_internal {
namespace {

// Never prompts: an encrypted key cannot be read (OpenSSL's default
// callback would ask on the terminal).
int NoPassword(char*, int, int, void*) { return 0; }

absl::StatusOr<BioPtr> ReadBio(absl::string_view pem, absl::string_view what) {
  if (pem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  }
  if (pem.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is larger than ", kMaxPemBytes, " bytes (", pem.size(), ")"));
  }
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return Internal("BIO_new_mem_buf failed");
  return bio;
}

}  // namespace

std::string DrainOpenSslErrors() {
  std::string first;
  unsigned long error;
  while ((error = ERR_get_error()) != 0) {
    if (!first.empty()) continue;
    if (const char* reason = ERR_reason_error_string(error);
        reason != nullptr) {
      first = reason;
    } else {
      char buf[256];
      ERR_error_string_n(error, buf, sizeof(buf));
      first = buf;
    }
  }
  return first;
}

absl::Status OpenSslError(absl::StatusCode code, absl::string_view what) {
  const std::string detail = DrainOpenSslErrors();
  if (detail.empty()) return absl::Status(code, what);
  return absl::Status(code, absl::StrCat(what, ": ", detail));
}

absl::Status Internal(absl::string_view what) {
  return OpenSslError(absl::StatusCode::kInternal, what);
}

absl::Status Invalid(absl::string_view what) {
  return OpenSslError(absl::StatusCode::kInvalidArgument, what);
}

absl::StatusOr<X509Ptr> ReadCertificate(absl::string_view pem,
                                        absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadBio(pem, what);
  if (!bio.ok()) return bio.status();
  X509Ptr cert(PEM_read_bio_X509(bio->get(), nullptr, NoPassword, nullptr));
  if (cert == nullptr) {
    return Invalid(absl::StrCat(what, " is not a PEM certificate"));
  }
  return cert;
}

// Every certificate in `pem` (at least one).
absl::StatusOr<std::vector<X509Ptr>> ReadCertificates(absl::string_view pem,
                                                      absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadBio(pem, what);
  if (!bio.ok()) return bio.status();
  std::vector<X509Ptr> certs;
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio->get(), nullptr, NoPassword, nullptr));
    if (cert == nullptr) break;
    certs.push_back(std::move(cert));
  }
  if (certs.empty()) {
    return Invalid(absl::StrCat(what, " is not a PEM certificate"));
  }
  // The read that ended the loop queued "no start line".
  DrainOpenSslErrors();
  return certs;
}

absl::StatusOr<PkeyPtr> ReadPrivateKey(absl::string_view pem,
                                       absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadBio(pem, what);
  if (!bio.ok()) return bio.status();
  PkeyPtr key(
      PEM_read_bio_PrivateKey(bio->get(), nullptr, NoPassword, nullptr));
  if (key == nullptr) {
    return Invalid(
        absl::StrCat(what, " is not an unencrypted PEM private key"));
  }
  return key;
}

absl::StatusOr<X509ReqPtr> ReadCsr(absl::string_view pem,
                                   absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadBio(pem, what);
  if (!bio.ok()) return bio.status();
  X509ReqPtr req(
      PEM_read_bio_X509_REQ(bio->get(), nullptr, NoPassword, nullptr));
  if (req == nullptr) {
    return Invalid(absl::StrCat(what, " is not a PEM certificate request"));
  }
  return req;
}

// The label of the first "-----BEGIN <label>-----" line, or "".
std::string FirstPemLabel(absl::string_view pem) {
  constexpr absl::string_view kBegin = "-----BEGIN ";
  const size_t begin = pem.find(kBegin);
  if (begin == absl::string_view::npos) return "";
  const absl::string_view rest = pem.substr(begin + kBegin.size());
  const size_t end = rest.find("-----");
  if (end == absl::string_view::npos) return "";
  return std::string(rest.substr(0, end));
}

absl::Status CheckP256(const EVP_PKEY* key, absl::string_view what) {
  char group[64] = {0};
  size_t group_length = 0;
  if (EVP_PKEY_is_a(key, "EC") != 1 ||
      EVP_PKEY_get_group_name(key, group, sizeof(group), &group_length) != 1 ||
      OBJ_sn2nid(group) != NID_X9_62_prime256v1) {
    DrainOpenSslErrors();
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an ECDSA P-256 key"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> BioContents(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  if (length <= 0 || data == nullptr) return Internal("writing PEM failed");
  return std::string(data, static_cast<size_t>(length));
}

absl::StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                    nullptr, nullptr) != 1) {
    return Internal("writing the private key failed");
  }
  return BioContents(bio.get());
}

absl::StatusOr<std::string> CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return Internal("writing the certificate failed");
  }
  return BioContents(bio.get());
}

absl::StatusOr<PkeyPtr> NewP256Key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return Internal("generating a P-256 key failed");
  return key;
}

std::string LowerHex(const unsigned char* data, size_t length) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (size_t i = 0; i < length; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

absl::StatusOr<time_t> ToCertTime(absl::Time t, absl::string_view what) {
  // X.509 times run from 1950 to 9999 (UTCTime, then GeneralizedTime).
  static const absl::Time kEarliest = absl::FromCivil(
      absl::CivilSecond(1950, 1, 1, 0, 0, 0), absl::UTCTimeZone());
  static const absl::Time kLatest = absl::FromCivil(
      absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone());
  if (t < kEarliest || t > kLatest) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is outside the years 1950 to 9999"));
  }
  return absl::ToTimeT(t);
}

}  // namespace jobset::auth::pki_internal
