#ifndef JOBSET_AUTH_PKI_H_
#define JOBSET_AUTH_PKI_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::auth {

// Keys and X.509 certificates, made in process with OpenSSL 3 (never by
// running the openssl command). Every key is ECDSA P-256; every certificate
// is X.509 v3 signed with SHA-256 and has a random 128-bit serial. All PEM
// in and out. Inputs (a CSR from an agent, a certificate read from disk or
// received from a server) are distrusted: malformed PEM is kInvalidArgument
// naming what could not be read, never a crash.

// Validities.
inline constexpr absl::Duration kCaValidity = absl::Hours(24 * 3650);
inline constexpr absl::Duration kServerCertValidity = absl::Hours(24 * 365);
inline constexpr absl::Duration kNodeCertValidity = absl::Hours(24 * 30);
// Certificates start this long before `now`, for clocks slightly apart.
inline constexpr absl::Duration kClockSkew = absl::Minutes(5);

struct KeyAndCert {
  std::string key_pem = {};   // PKCS#8 PEM private key
  std::string cert_pem = {};  // PEM certificate
};

// What a certificate says, as ParseCertificate reads it.
struct CertificateInfo {
  std::string common_name = {};
  std::vector<std::string> organizations = {};  // subject O, in order
  std::string serial = {};  // lowercase hex, no leading zeros
  absl::Time not_before;
  absl::Time not_after;
  bool is_ca = false;        // basicConstraints CA:TRUE
  bool server_auth = false;  // extendedKeyUsage serverAuth
  bool client_auth = false;  // extendedKeyUsage clientAuth
  std::vector<std::string> dns_names = {};
  std::vector<std::string> ip_addresses = {};  // text form
  std::vector<std::string> uris = {};
};

// A new private key (P-256), PEM.
absl::StatusOr<std::string> GeneratePrivateKey();

// A self-signed CA: CN `common_name`, CA:TRUE (pathlen 0), keyCertSign and
// cRLSign, valid from now - kClockSkew for `validity`.
absl::StatusOr<KeyAndCert> CreateCa(absl::string_view common_name,
                                    absl::Time now,
                                    absl::Duration validity = kCaValidity);

// What a leaf certificate is issued for. Only these fields are put in it.
struct LeafRequest {
  std::string common_name = {};
  std::vector<std::string> organizations = {};
  std::vector<std::string> dns_names = {};
  std::vector<std::string> ip_addresses = {};  // each must parse as IPv4/IPv6
  std::vector<std::string> uris = {};
  bool server_auth = false;  // EKU serverAuth (and digitalSignature)
  bool client_auth = false;  // EKU clientAuth
  absl::Duration validity = kNodeCertValidity;
};

// Issues `request` for `public_key_source`'s public key, signed by `ca`.
// `public_key_source` is a PEM private key (ours) or a PEM CSR (an
// agent's): a CSR's signature must verify (proof that its sender holds the
// key), else kInvalidArgument; nothing else from the CSR (its subject, its
// extensions: CA:TRUE, serverAuth, SANs) is used. CA:FALSE always.
absl::StatusOr<std::string> IssueCertificate(
    const KeyAndCert& ca, absl::string_view public_key_source,
    const LeafRequest& request, absl::Time now);

// A new key and a certificate for it: IssueCertificate over
// GeneratePrivateKey.
absl::StatusOr<KeyAndCert> IssueKeyAndCertificate(const KeyAndCert& ca,
                                                  const LeafRequest& request,
                                                  absl::Time now);

// A PKCS#10 request signed with `key_pem`, subject CN `common_name` and O
// `organization` (may be empty).
absl::StatusOr<std::string> CreateCsr(absl::string_view key_pem,
                                      absl::string_view common_name,
                                      absl::string_view organization);

// Reads the first certificate of `cert_pem`.
absl::StatusOr<CertificateInfo> ParseCertificate(absl::string_view cert_pem);

// SHA-256 over the DER SubjectPublicKeyInfo of the first certificate in
// `cert_pem`, 64 lowercase hex digits: kubeadm's CA pin, equal to
// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | sha256sum`.
absl::StatusOr<std::string> SpkiSha256(absl::string_view cert_pem);

// Whether `cert_pem` is signed by `ca_pem` and valid at `now`; an error
// naming why not ("certificate has expired", "certificate signed by unknown
// authority", ...).
absl::Status VerifyCertificate(absl::string_view cert_pem,
                               absl::string_view ca_pem, absl::Time now);

// Whether `key_pem` is the private key of `cert_pem`'s public key.
absl::Status CheckKeyMatchesCertificate(absl::string_view key_pem,
                                        absl::string_view cert_pem);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_PKI_H_
