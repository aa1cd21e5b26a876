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
#include "auth/pki_openssl.h"

namespace jobset::auth {
namespace {

using pki_internal::Asn1IntegerPtr;
using pki_internal::BasicConstraintsPtr;
using pki_internal::BignumPtr;
using pki_internal::BioContents;
using pki_internal::BioPtr;
using pki_internal::CertificatePem;
using pki_internal::CheckP256;
using pki_internal::DrainOpenSslErrors;
using pki_internal::FirstPemLabel;
using pki_internal::GeneralNamePtr;
using pki_internal::GeneralNamesPtr;
using pki_internal::Internal;
using pki_internal::Invalid;
using pki_internal::kMaxPemBytes;
using pki_internal::NewP256Key;
using pki_internal::PkeyPtr;
using pki_internal::PrivateKeyPem;
using pki_internal::ReadCertificate;
using pki_internal::ReadCsr;
using pki_internal::ReadPrivateKey;
using pki_internal::ToCertTime;
using pki_internal::X509ExtensionPtr;
using pki_internal::X509Ptr;
using pki_internal::X509ReqPtr;

// Bounds on what a leaf request may carry.
constexpr size_t kMaxNameLength = 1024;
constexpr size_t kMaxOrganizations = 64;
constexpr size_t kMaxSans = 256;
constexpr size_t kMaxDnsNameLength = 253;
constexpr size_t kMaxUriLength = 2048;
constexpr int kSerialBytes = 16;

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

}  // namespace jobset::auth
