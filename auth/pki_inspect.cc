#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <ctime>
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
#include "auth/pki.h"
#include "auth/pki_openssl.h"

// Reading, checking and verifying keys and certificates (auth/pki.h); making
// them is auth/pki.cc.

namespace jobset::auth {
namespace {

using pki_internal::BasicConstraintsPtr;
using pki_internal::BignumPtr;
using pki_internal::DrainOpenSslErrors;
using pki_internal::ExtendedKeyUsagePtr;
using pki_internal::GeneralNamesPtr;
using pki_internal::Internal;
using pki_internal::Invalid;
using pki_internal::LowerHex;
using pki_internal::OpenSslBytesPtr;
using pki_internal::PkeyPtr;
using pki_internal::ReadCertificate;
using pki_internal::ReadCertificates;
using pki_internal::ReadPrivateKey;
using pki_internal::ToCertTime;
using pki_internal::X509Ptr;
using pki_internal::X509StoreCtxPtr;
using pki_internal::X509StorePtr;

absl::StatusOr<absl::Time> FromAsn1Time(const ASN1_TIME* t,
                                        absl::string_view what) {
  struct tm tm = {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    return Invalid(absl::StrCat("certificate's ", what, " cannot be read"));
  }
  return absl::FromCivil(
      absl::CivilSecond(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                        tm.tm_hour, tm.tm_min, tm.tm_sec),
      absl::UTCTimeZone());
}

// Decodes extension `nid` of `cert`: nullptr with OK if it is absent, an
// error if it is present twice or cannot be decoded.
absl::StatusOr<void*> DecodeExtension(const X509* cert, int nid) {
  int critical = -1;
  void* decoded = X509_get_ext_d2i(cert, nid, &critical, nullptr);
  if (decoded != nullptr) return decoded;
  if (critical == -1) {
    DrainOpenSslErrors();
    return nullptr;
  }
  if (critical == -2) {
    return Invalid(absl::StrCat("certificate has more than one ",
                                OBJ_nid2sn(nid), " extension"));
  }
  return Invalid(absl::StrCat("certificate's ", OBJ_nid2sn(nid),
                              " extension cannot be decoded"));
}

absl::StatusOr<std::string> Asn1StringToUtf8(const ASN1_STRING* value,
                                             absl::string_view what) {
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, value);
  if (length < 0) {
    return Invalid(absl::StrCat("certificate's ", what, " cannot be read"));
  }
  OpenSslBytesPtr owned(utf8);
  return std::string(reinterpret_cast<const char*>(utf8), length);
}

}  // namespace

absl::StatusOr<CertificateInfo> ParseCertificate(absl::string_view cert_pem) {
  ERR_clear_error();
  absl::StatusOr<X509Ptr> cert = ReadCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  X509* x = cert->get();
  CertificateInfo info;

  const X509_NAME* subject = X509_get_subject_name(x);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid != NID_commonName && nid != NID_organizationName) continue;
    absl::StatusOr<std::string> value = Asn1StringToUtf8(
        X509_NAME_ENTRY_get_data(entry), nid == NID_commonName ? "CN" : "O");
    if (!value.ok()) return value.status();
    if (nid == NID_organizationName) {
      info.organizations.push_back(*std::move(value));
    } else if (info.common_name.empty()) {
      info.common_name = *std::move(value);
    }
  }

  BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), nullptr));
  if (serial == nullptr) {
    return Invalid("certificate's serial number cannot be read");
  }
  char* hex = BN_bn2hex(serial.get());
  if (hex == nullptr) return Internal("BN_bn2hex failed");
  info.serial = absl::AsciiStrToLower(hex);
  OPENSSL_free(hex);
  // BN_bn2hex writes whole bytes ("0a1b"); the serial is the number ("a1b").
  const size_t digits = !info.serial.empty() && info.serial[0] == '-' ? 1 : 0;
  const size_t first = info.serial.find_first_not_of('0', digits);
  info.serial.erase(digits, first == std::string::npos
                                ? info.serial.size() - digits - 1
                                : first - digits);

  absl::StatusOr<absl::Time> not_before =
      FromAsn1Time(X509_get0_notBefore(x), "notBefore");
  if (!not_before.ok()) return not_before.status();
  info.not_before = *not_before;
  absl::StatusOr<absl::Time> not_after =
      FromAsn1Time(X509_get0_notAfter(x), "notAfter");
  if (!not_after.ok()) return not_after.status();
  info.not_after = *not_after;

  absl::StatusOr<void*> constraints = DecodeExtension(x, NID_basic_constraints);
  if (!constraints.ok()) return constraints.status();
  BasicConstraintsPtr basic(static_cast<BASIC_CONSTRAINTS*>(*constraints));
  info.is_ca = basic != nullptr && basic->ca != 0;

  absl::StatusOr<void*> usages = DecodeExtension(x, NID_ext_key_usage);
  if (!usages.ok()) return usages.status();
  ExtendedKeyUsagePtr eku(static_cast<EXTENDED_KEY_USAGE*>(*usages));
  if (eku != nullptr) {
    for (int i = 0; i < sk_ASN1_OBJECT_num(eku.get()); ++i) {
      const int nid = OBJ_obj2nid(sk_ASN1_OBJECT_value(eku.get(), i));
      if (nid == NID_server_auth) info.server_auth = true;
      if (nid == NID_client_auth) info.client_auth = true;
    }
  }

  absl::StatusOr<void*> alt_names = DecodeExtension(x, NID_subject_alt_name);
  if (!alt_names.ok()) return alt_names.status();
  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(*alt_names));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
      int type = 0;
      const void* value = GENERAL_NAME_get0_value(name, &type);
      const ASN1_STRING* s = static_cast<const ASN1_STRING*>(value);
      if (type == GEN_DNS || type == GEN_URI) {
        std::string text(
            reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
            ASN1_STRING_length(s));
        (type == GEN_DNS ? info.dns_names : info.uris)
            .push_back(std::move(text));
      } else if (type == GEN_IPADD) {
        const int length = ASN1_STRING_length(s);
        if (length != 4 && length != 16) {
          return absl::InvalidArgumentError(
              "certificate has an IP subjectAltName that is neither IPv4 nor "
              "IPv6");
        }
        char text[INET6_ADDRSTRLEN] = {0};
        if (inet_ntop(length == 4 ? AF_INET : AF_INET6,
                      ASN1_STRING_get0_data(s), text,
                      sizeof(text)) == nullptr) {
          return absl::InvalidArgumentError(
              "certificate's IP subjectAltName cannot be read");
        }
        info.ip_addresses.emplace_back(text);
      }
    }
  }
  return info;
}

absl::StatusOr<std::string> SpkiSha256(absl::string_view cert_pem) {
  ERR_clear_error();
  absl::StatusOr<X509Ptr> cert = ReadCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  EVP_PKEY* key = X509_get0_pubkey(cert->get());
  if (key == nullptr) return Invalid("certificate's public key cannot be read");
  unsigned char* der = nullptr;
  const int length = i2d_PUBKEY(key, &der);
  if (length <= 0) return Internal("encoding the public key failed");
  OpenSslBytesPtr owned(der);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  if (EVP_Digest(der, static_cast<size_t>(length), digest, &digest_length,
                 EVP_sha256(), nullptr) != 1) {
    return Internal("SHA-256 failed");
  }
  return LowerHex(digest, digest_length);
}

absl::Status VerifyCertificate(absl::string_view cert_pem,
                               absl::string_view ca_pem, absl::Time now) {
  ERR_clear_error();
  absl::StatusOr<X509Ptr> cert = ReadCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::vector<X509Ptr>> roots =
      ReadCertificates(ca_pem, "CA certificate");
  if (!roots.ok()) return roots.status();
  absl::StatusOr<time_t> at = ToCertTime(now, "verification time");
  if (!at.ok()) return at.status();

  X509StorePtr store(X509_STORE_new());
  if (store == nullptr) return Internal("X509_STORE_new failed");
  for (const X509Ptr& root : *roots) {
    if (X509_STORE_add_cert(store.get(), root.get()) != 1) {
      return Internal("adding the CA certificate failed");
    }
  }
  X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (ctx == nullptr ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert->get(), nullptr) != 1) {
    return Internal("X509_STORE_CTX_init failed");
  }
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()), *at);
  if (X509_verify_cert(ctx.get()) == 1) {
    DrainOpenSslErrors();
    return absl::OkStatus();
  }
  const int error = X509_STORE_CTX_get_error(ctx.get());
  DrainOpenSslErrors();
  switch (error) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return absl::UnauthenticatedError("certificate has expired");
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return absl::UnauthenticatedError("certificate is not yet valid");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return absl::UnauthenticatedError(
          "certificate signed by unknown authority");
    default:
      return absl::UnauthenticatedError(
          absl::StrCat("certificate does not verify: ",
                       X509_verify_cert_error_string(error)));
  }
}

absl::Status CheckKeyMatchesCertificate(absl::string_view key_pem,
                                        absl::string_view cert_pem) {
  ERR_clear_error();
  absl::StatusOr<PkeyPtr> key = ReadPrivateKey(key_pem, "key_pem");
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert = ReadCertificate(cert_pem, "cert_pem");
  if (!cert.ok()) return cert.status();
  const EVP_PKEY* public_key = X509_get0_pubkey(cert->get());
  if (public_key == nullptr || EVP_PKEY_eq(public_key, key->get()) != 1) {
    DrainOpenSslErrors();
    return absl::InvalidArgumentError(
        "private key does not match the certificate's public key");
  }
  return absl::OkStatus();
}

}  // namespace jobset::auth
