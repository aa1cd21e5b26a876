#include "auth/pki.h"

#include <arpa/inet.h>
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
#include <sys/socket.h>

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

namespace jobset::auth {
namespace {

// Every PEM input is bounded: a certificate chain or a CSR is a few KiB.
constexpr size_t kMaxPemBytes = 64 * 1024;
// Bounds on what a leaf request may carry.
constexpr size_t kMaxNameLength = 1024;
constexpr size_t kMaxOrganizations = 64;
constexpr size_t kMaxSans = 256;
constexpr size_t kMaxDnsNameLength = 253;
constexpr size_t kMaxUriLength = 2048;
constexpr int kSerialBytes = 16;

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using X509ReqPtr = std::unique_ptr<X509_REQ, Deleter<X509_REQ, X509_REQ_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using Asn1IntegerPtr =
    std::unique_ptr<ASN1_INTEGER, Deleter<ASN1_INTEGER, ASN1_INTEGER_free>>;
using X509ExtensionPtr =
    std::unique_ptr<X509_EXTENSION,
                    Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using X509StorePtr =
    std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using X509StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX,
                    Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
using BasicConstraintsPtr =
    std::unique_ptr<BASIC_CONSTRAINTS,
                    Deleter<BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free>>;
using ExtendedKeyUsagePtr =
    std::unique_ptr<EXTENDED_KEY_USAGE,
                    Deleter<EXTENDED_KEY_USAGE, EXTENDED_KEY_USAGE_free>>;
using GeneralNamesPtr =
    std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, GENERAL_NAMES_free>>;
using GeneralNamePtr =
    std::unique_ptr<GENERAL_NAME, Deleter<GENERAL_NAME, GENERAL_NAME_free>>;
void FreeOpenSslBytes(unsigned char* p) { OPENSSL_free(p); }
using OpenSslBytesPtr =
    std::unique_ptr<unsigned char, Deleter<unsigned char, FreeOpenSslBytes>>;

// Takes every error OpenSSL queued on this thread (so that none is left for
// a later, unrelated call to report) and returns the first one's text.
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

bool IsPrintableAscii(absl::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// Names go in as UTF8String without OpenSSL's X.520 length limits (64 for
// CN), which node names past 52 characters would exceed; Kubernetes does not
// limit them either. Printable ASCII only, so that what a peer reads back
// is what was put in.
absl::Status CheckNameValue(absl::string_view value, absl::string_view field) {
  if (value.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is longer than ", kMaxNameLength, " characters"));
  }
  if (!IsPrintableAscii(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be printable ASCII"));
  }
  return absl::OkStatus();
}

absl::Status AddNameEntry(X509_NAME* name, const char* field,
                          absl::string_view value) {
  if (X509_NAME_add_entry_by_txt(
          name, field, V_ASN1_UTF8STRING,
          reinterpret_cast<const unsigned char*>(value.data()),
          static_cast<int>(value.size()), -1, 0) != 1) {
    return Internal(absl::StrCat("setting subject ", field, " failed"));
  }
  return absl::OkStatus();
}

absl::Status SetSubject(X509_NAME* name, absl::string_view common_name,
                        const std::vector<std::string>& organizations) {
  // Written O first, then CN, as Kubernetes' and Go's certificates are.
  for (const std::string& organization : organizations) {
    if (absl::Status s = AddNameEntry(name, "O", organization); !s.ok()) {
      return s;
    }
  }
  if (!common_name.empty()) {
    if (absl::Status s = AddNameEntry(name, "CN", common_name); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
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

absl::Status SetValidity(X509* cert, absl::Time now, absl::Duration validity) {
  if (validity <= absl::ZeroDuration() ||
      validity == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("validity must be positive and finite");
  }
  absl::StatusOr<time_t> not_before =
      ToCertTime(now - kClockSkew, "not before");
  if (!not_before.ok()) return not_before.status();
  absl::StatusOr<time_t> not_after = ToCertTime(now + validity, "not after");
  if (!not_after.ok()) return not_after.status();
  if (ASN1_TIME_set(X509_getm_notBefore(cert), *not_before) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert), *not_after) == nullptr) {
    return Internal("setting the validity failed");
  }
  return absl::OkStatus();
}

absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[kSerialBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return Internal("RAND_bytes failed");
  }
  bytes[0] &= 0x7f;  // DER INTEGERs are signed; serials must be positive
  BignumPtr bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (bn == nullptr) return Internal("BN_bin2bn failed");
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (serial == nullptr || X509_set_serialNumber(cert, serial.get()) != 1) {
    return Internal("setting the serial number failed");
  }
  return absl::OkStatus();
}

// Adds one extension from its OpenSSL configuration text; `issuer` is the
// signing certificate (for authorityKeyIdentifier), `cert` the one made.
absl::Status AddExtension(X509* issuer, X509* cert, int nid,
                          const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (extension == nullptr || X509_add_ext(cert, extension.get(), -1) != 1) {
    return Internal(
        absl::StrCat("adding extension ", OBJ_nid2sn(nid), " failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<GeneralNamePtr> Ia5Name(int type, absl::string_view value) {
  GeneralNamePtr name(GENERAL_NAME_new());
  ASN1_IA5STRING* text = ASN1_IA5STRING_new();
  if (name == nullptr || text == nullptr ||
      ASN1_STRING_set(text, value.data(), static_cast<int>(value.size())) !=
          1) {
    ASN1_IA5STRING_free(text);
    return Internal("building a subjectAltName failed");
  }
  GENERAL_NAME_set0_value(name.get(), type, text);
  return name;
}

// The subjectAltName extension, built as ASN.1 rather than from
// configuration text, so that no value can smuggle in another entry.
absl::Status AddSubjectAltNames(X509* cert, const LeafRequest& request) {
  if (request.dns_names.empty() && request.ip_addresses.empty() &&
      request.uris.empty()) {
    return absl::OkStatus();
  }
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (names == nullptr) return Internal("building subjectAltName failed");
  auto push = [&](GeneralNamePtr name) -> absl::Status {
    if (sk_GENERAL_NAME_push(names.get(), name.get()) <= 0) {
      return Internal("building subjectAltName failed");
    }
    name.release();
    return absl::OkStatus();
  };
  for (const std::string& dns : request.dns_names) {
    absl::StatusOr<GeneralNamePtr> name = Ia5Name(GEN_DNS, dns);
    if (!name.ok()) return name.status();
    if (absl::Status s = push(*std::move(name)); !s.ok()) return s;
  }
  for (const std::string& ip : request.ip_addresses) {
    unsigned char bytes[16];
    int length = 0;
    if (inet_pton(AF_INET, ip.c_str(), bytes) == 1) {
      length = 4;
    } else if (inet_pton(AF_INET6, ip.c_str(), bytes) == 1) {
      length = 16;
    } else {
      return absl::InternalError("IP SAN was not validated");
    }
    GeneralNamePtr name(GENERAL_NAME_new());
    ASN1_OCTET_STRING* octets = ASN1_OCTET_STRING_new();
    if (name == nullptr || octets == nullptr ||
        ASN1_OCTET_STRING_set(octets, bytes, length) != 1) {
      ASN1_OCTET_STRING_free(octets);
      return Internal("building an IP subjectAltName failed");
    }
    GENERAL_NAME_set0_value(name.get(), GEN_IPADD, octets);
    if (absl::Status s = push(std::move(name)); !s.ok()) return s;
  }
  for (const std::string& uri : request.uris) {
    absl::StatusOr<GeneralNamePtr> name = Ia5Name(GEN_URI, uri);
    if (!name.ok()) return name.status();
    if (absl::Status s = push(*std::move(name)); !s.ok()) return s;
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0,
                        X509V3_ADD_APPEND) != 1) {
    return Internal("adding subjectAltName failed");
  }
  return absl::OkStatus();
}

absl::Status ValidateLeafRequest(const LeafRequest& request) {
  if (request.common_name.empty()) {
    return absl::InvalidArgumentError("common_name is empty");
  }
  if (absl::Status s = CheckNameValue(request.common_name, "common_name");
      !s.ok()) {
    return s;
  }
  if (request.organizations.size() > kMaxOrganizations) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", kMaxOrganizations, " organizations"));
  }
  for (size_t i = 0; i < request.organizations.size(); ++i) {
    const std::string field = absl::StrCat("organizations[", i, "]");
    if (request.organizations[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
    }
    if (absl::Status s = CheckNameValue(request.organizations[i], field);
        !s.ok()) {
      return s;
    }
  }
  if (!request.server_auth && !request.client_auth) {
    return absl::InvalidArgumentError(
        "a leaf certificate needs server_auth or client_auth");
  }
  if (request.dns_names.size() + request.ip_addresses.size() +
          request.uris.size() >
      kMaxSans) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", kMaxSans, " subject alternative names"));
  }
  for (size_t i = 0; i < request.dns_names.size(); ++i) {
    const std::string& dns = request.dns_names[i];
    if (dns.empty() || dns.size() > kMaxDnsNameLength ||
        !IsPrintableAscii(dns) || dns.find(',') != std::string::npos ||
        dns.find(' ') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("dns_names[", i, "] must be 1 to ", kMaxDnsNameLength,
                       " printable ASCII characters without spaces or commas"));
    }
  }
  for (size_t i = 0; i < request.ip_addresses.size(); ++i) {
    const std::string& ip = request.ip_addresses[i];
    unsigned char bytes[16];
    // inet_pton reads up to the first NUL: "10.0.0.1\0x" must not pass.
    const bool parses = ip.find('\0') == std::string::npos &&
                        (inet_pton(AF_INET, ip.c_str(), bytes) == 1 ||
                         inet_pton(AF_INET6, ip.c_str(), bytes) == 1);
    if (!parses) {
      return absl::InvalidArgumentError(
          absl::StrCat("ip_addresses[", i, "] is not an IPv4 or IPv6 address"));
    }
  }
  for (size_t i = 0; i < request.uris.size(); ++i) {
    const std::string& uri = request.uris[i];
    if (uri.empty() || uri.size() > kMaxUriLength || !IsPrintableAscii(uri) ||
        uri.find(' ') != std::string::npos ||
        uri.find(':') == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("uris[", i,
                       "] must be an absolute URI of printable ASCII "
                       "without spaces"));
    }
  }
  return absl::OkStatus();
}

// The public key a leaf certificate is issued for: a private key's, or a
// CSR's once its signature proves that the sender holds the private key.
absl::StatusOr<PkeyPtr> PublicKeyOf(absl::string_view source) {
  const std::string label = FirstPemLabel(source);
  if (label == "CERTIFICATE REQUEST" || label == "NEW CERTIFICATE REQUEST") {
    absl::StatusOr<X509ReqPtr> req = ReadCsr(source, "certificate request");
    if (!req.ok()) return req.status();
    PkeyPtr key(X509_REQ_get_pubkey(req->get()));
    if (key == nullptr) {
      return Invalid("certificate request's public key cannot be read");
    }
    if (X509_REQ_verify(req->get(), key.get()) != 1) {
      return Invalid("certificate request's signature does not verify");
    }
    if (absl::Status s =
            CheckP256(key.get(), "certificate request's public key");
        !s.ok()) {
      return s;
    }
    return key;
  }
  if (label.size() >= 11 &&
      absl::string_view(label).substr(label.size() - 11) == "PRIVATE KEY") {
    absl::StatusOr<PkeyPtr> key = ReadPrivateKey(source, "private key");
    if (!key.ok()) return key.status();
    if (absl::Status s = CheckP256(key->get(), "private key"); !s.ok()) {
      return s;
    }
    return key;
  }
  if (source.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "public key source is larger than ", kMaxPemBytes, " bytes"));
  }
  return absl::InvalidArgumentError(
      "public key source is neither a PEM private key nor a PEM certificate "
      "request");
}

// The CA's key and certificate, checked to belong together and to be a CA.
struct Ca {
  PkeyPtr key;
  X509Ptr cert;
};

absl::StatusOr<Ca> ReadCa(const KeyAndCert& ca) {
  absl::StatusOr<PkeyPtr> key = ReadPrivateKey(ca.key_pem, "CA key");
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert = ReadCertificate(ca.cert_pem, "CA certificate");
  if (!cert.ok()) return cert.status();
  const EVP_PKEY* public_key = X509_get0_pubkey(cert->get());
  if (public_key == nullptr || EVP_PKEY_eq(public_key, key->get()) != 1) {
    DrainOpenSslErrors();
    return absl::InvalidArgumentError(
        "CA key does not match the CA certificate's public key");
  }
  int critical = -1;
  BasicConstraintsPtr constraints(
      static_cast<BASIC_CONSTRAINTS*>(X509_get_ext_d2i(
          cert->get(), NID_basic_constraints, &critical, nullptr)));
  if (constraints == nullptr || constraints->ca == 0) {
    DrainOpenSslErrors();
    return absl::InvalidArgumentError(
        "CA certificate is not a CA (no basicConstraints CA:TRUE)");
  }
  return Ca{*std::move(key), *std::move(cert)};
}

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

absl::StatusOr<std::string> GeneratePrivateKey() {
  ERR_clear_error();
  absl::StatusOr<PkeyPtr> key = NewP256Key();
  if (!key.ok()) return key.status();
  return PrivateKeyPem(key->get());
}

absl::StatusOr<KeyAndCert> CreateCa(absl::string_view common_name,
                                    absl::Time now, absl::Duration validity) {
  ERR_clear_error();
  if (common_name.empty()) {
    return absl::InvalidArgumentError("CA common_name is empty");
  }
  if (absl::Status s = CheckNameValue(common_name, "CA common_name"); !s.ok()) {
    return s;
  }
  absl::StatusOr<PkeyPtr> key = NewP256Key();
  if (!key.ok()) return key.status();
  X509Ptr cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return Internal("X509_new failed");
  }
  if (absl::Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  if (absl::Status s = SetValidity(cert.get(), now, validity); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          SetSubject(X509_get_subject_name(cert.get()), common_name, {});
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) !=
          1 ||
      X509_set_pubkey(cert.get(), key->get()) != 1) {
    return Internal("building the CA certificate failed");
  }
  // subjectKeyIdentifier before authorityKeyIdentifier, which copies it.
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
           {NID_key_usage, "critical,keyCertSign,cRLSign"},
           {NID_subject_key_identifier, "hash"},
           {NID_authority_key_identifier, "keyid:always"},
       }) {
    if (absl::Status s = AddExtension(cert.get(), cert.get(), nid, value);
        !s.ok()) {
      return s;
    }
  }
  if (X509_sign(cert.get(), key->get(), EVP_sha256()) <= 0) {
    return Internal("signing the CA certificate failed");
  }
  absl::StatusOr<std::string> key_pem = PrivateKeyPem(key->get());
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<std::string> cert_pem = CertificatePem(cert.get());
  if (!cert_pem.ok()) return cert_pem.status();
  return KeyAndCert{*std::move(key_pem), *std::move(cert_pem)};
}

absl::StatusOr<std::string> IssueCertificate(
    const KeyAndCert& ca, absl::string_view public_key_source,
    const LeafRequest& request, absl::Time now) {
  ERR_clear_error();
  if (absl::Status s = ValidateLeafRequest(request); !s.ok()) return s;
  absl::StatusOr<Ca> issuer = ReadCa(ca);
  if (!issuer.ok()) return issuer.status();
  absl::StatusOr<PkeyPtr> public_key = PublicKeyOf(public_key_source);
  if (!public_key.ok()) return public_key.status();

  X509Ptr cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return Internal("X509_new failed");
  }
  if (absl::Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  if (absl::Status s = SetValidity(cert.get(), now, request.validity);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetSubject(X509_get_subject_name(cert.get()),
                                  request.common_name, request.organizations);
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(cert.get(),
                           X509_get_subject_name(issuer->cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), public_key->get()) != 1) {
    return Internal("building the certificate failed");
  }
  const char* extended_key_usage = request.server_auth && request.client_auth
                                       ? "serverAuth,clientAuth"
                                   : request.server_auth ? "serverAuth"
                                                         : "clientAuth";
  // ECDSA keys sign in TLS (either side), so digitalSignature is the one
  // key usage a leaf needs.
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature"},
           {NID_ext_key_usage, extended_key_usage},
           {NID_subject_key_identifier, "hash"},
           // "keyid", not "keyid:always": a CA made elsewhere may lack a
           // subjectKeyIdentifier, and then the leaf goes without.
           {NID_authority_key_identifier, "keyid"},
       }) {
    if (absl::Status s =
            AddExtension(issuer->cert.get(), cert.get(), nid, value);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = AddSubjectAltNames(cert.get(), request); !s.ok()) {
    return s;
  }
  if (X509_sign(cert.get(), issuer->key.get(), EVP_sha256()) <= 0) {
    return Internal("signing the certificate failed");
  }
  return CertificatePem(cert.get());
}

absl::StatusOr<KeyAndCert> IssueKeyAndCertificate(const KeyAndCert& ca,
                                                  const LeafRequest& request,
                                                  absl::Time now) {
  absl::StatusOr<std::string> key_pem = GeneratePrivateKey();
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<std::string> cert_pem =
      IssueCertificate(ca, *key_pem, request, now);
  if (!cert_pem.ok()) return cert_pem.status();
  return KeyAndCert{*std::move(key_pem), *std::move(cert_pem)};
}

absl::StatusOr<std::string> CreateCsr(absl::string_view key_pem,
                                      absl::string_view common_name,
                                      absl::string_view organization) {
  ERR_clear_error();
  if (common_name.empty()) {
    return absl::InvalidArgumentError("common_name is empty");
  }
  if (absl::Status s = CheckNameValue(common_name, "common_name"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckNameValue(organization, "organization"); !s.ok()) {
    return s;
  }
  absl::StatusOr<PkeyPtr> key = ReadPrivateKey(key_pem, "key_pem");
  if (!key.ok()) return key.status();
  X509ReqPtr req(X509_REQ_new());
  if (req == nullptr ||
      X509_REQ_set_version(req.get(), X509_REQ_VERSION_1) != 1) {
    return Internal("X509_REQ_new failed");
  }
  std::vector<std::string> organizations;
  if (!organization.empty()) organizations.emplace_back(organization);
  if (absl::Status s = SetSubject(X509_REQ_get_subject_name(req.get()),
                                  common_name, organizations);
      !s.ok()) {
    return s;
  }
  if (X509_REQ_set_pubkey(req.get(), key->get()) != 1 ||
      X509_REQ_sign(req.get(), key->get(), EVP_sha256()) <= 0) {
    return Internal("signing the certificate request failed");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509_REQ(bio.get(), req.get()) != 1) {
    return Internal("writing the certificate request failed");
  }
  return BioContents(bio.get());
}

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
