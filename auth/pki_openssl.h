#ifndef JOBSET_AUTH_PKI_OPENSSL_H_
#define JOBSET_AUTH_PKI_OPENSSL_H_

// What auth/pki.cc (making keys and certificates) and auth/pki_inspect.cc
// (reading and verifying them) share: owning pointers to OpenSSL objects,
// OpenSSL's error queue as an absl::Status, and bounded PEM reading and
// writing. Internal to the :pki library. Thread-safe (OpenSSL 3's error
// queue is per thread).

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <cstddef>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::auth::pki_internal {

// Every PEM input is bounded: a certificate chain or a CSR is a few KiB.
inline constexpr size_t kMaxPemBytes = 64 * 1024;

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
inline void FreeOpenSslBytes(unsigned char* p) { OPENSSL_free(p); }
using OpenSslBytesPtr =
    std::unique_ptr<unsigned char, Deleter<unsigned char, FreeOpenSslBytes>>;

// Takes every error OpenSSL queued on this thread (so that none is left for
// a later, unrelated call to report) and returns the first one's text.
std::string DrainOpenSslErrors();
// `what`, with OpenSSL's first queued error after it; the queue drained.
absl::Status OpenSslError(absl::StatusCode code, absl::string_view what);
// OpenSslError with kInternal, kInvalidArgument.
absl::Status Internal(absl::string_view what);
absl::Status Invalid(absl::string_view what);

// The first certificate of `pem`; every certificate (at least one); an
// unencrypted private key; a certificate request. `what` names the input in
// errors; an empty input, one over kMaxPemBytes, or one that does not parse
// is kInvalidArgument.
absl::StatusOr<X509Ptr> ReadCertificate(absl::string_view pem,
                                        absl::string_view what);
absl::StatusOr<std::vector<X509Ptr>> ReadCertificates(absl::string_view pem,
                                                      absl::string_view what);
absl::StatusOr<PkeyPtr> ReadPrivateKey(absl::string_view pem,
                                       absl::string_view what);
absl::StatusOr<X509ReqPtr> ReadCsr(absl::string_view pem,
                                   absl::string_view what);
// The label of the first "-----BEGIN <label>-----" line, or "".
std::string FirstPemLabel(absl::string_view pem);
// kInvalidArgument "<what> must be an ECDSA P-256 key" unless it is one.
absl::Status CheckP256(const EVP_PKEY* key, absl::string_view what);

// A memory BIO's contents; a key (PKCS#8) or a certificate as PEM.
absl::StatusOr<std::string> BioContents(BIO* bio);
absl::StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key);
absl::StatusOr<std::string> CertificatePem(X509* cert);
absl::StatusOr<PkeyPtr> NewP256Key();
std::string LowerHex(const unsigned char* data, size_t length);
// `t` as an X.509 time (1950 to 9999), else kInvalidArgument naming `what`.
absl::StatusOr<time_t> ToCertTime(absl::Time t, absl::string_view what);

}  // namespace jobset::auth::pki_internal

#endif  // JOBSET_AUTH_PKI_OPENSSL_H_
