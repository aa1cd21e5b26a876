#ifndef JOBSET_AUTH_PKI_TESTING_H_
#define JOBSET_AUTH_PKI_TESTING_H_

// What the tests of auth/pki.h share: status matchers, OpenSSL readers and
// writers independent of the code under test, a CA, and node and server
// leaf requests.

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "auth/pki.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth::testing {

inline const absl::Status& StatusOf(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}
MATCHER(IsOk, "is OK") {
  *result_listener << "status is " << StatusOf(arg);
  return StatusOf(arg).ok();
}
MATCHER_P2(StatusIs, code, message, "") {
  const absl::Status& status = StatusOf(arg);
  *result_listener << "status is " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(message, std::string(status.message()),
                                       result_listener);
}

inline const absl::Time kNow = absl::FromCivil(
    absl::CivilSecond(2026, 12, 2, 3, 0, 0), absl::UTCTimeZone());

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct ReqFree {
  void operator()(X509_REQ* r) const { X509_REQ_free(r); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free_all(b); }
};

inline std::unique_ptr<X509, X509Free> ReadX509(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), pem.size()));
  return std::unique_ptr<X509, X509Free>(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

inline std::unique_ptr<EVP_PKEY, PkeyFree> ReadKey(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), pem.size()));
  return std::unique_ptr<EVP_PKEY, PkeyFree>(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

inline std::string WriteReq(X509_REQ* req) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

inline std::string WriteKey(EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                                nullptr);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

inline KeyAndCert MakeCa(absl::string_view name = "jobsetd-ca",
                         absl::Time now = kNow) {
  absl::StatusOr<KeyAndCert> ca = CreateCa(name, now);
  EXPECT_THAT(ca, IsOk());
  return ca.ok() ? *ca : KeyAndCert{};
}

inline LeafRequest NodeRequest(const std::string& node) {
  LeafRequest request;
  request.common_name = "system:node:" + node;
  request.organizations = {"system:nodes"};
  request.uris = {"jobsetd://node/" + node};
  request.client_auth = true;
  request.validity = kNodeCertValidity;
  return request;
}

inline LeafRequest ServerRequest() {
  LeafRequest request;
  request.common_name = "jobsetd";
  request.dns_names = {"server.jobsetd", "localhost"};
  request.ip_addresses = {"127.0.0.1", "::1"};
  request.server_auth = true;
  request.client_auth = true;
  request.validity = kServerCertValidity;
  return request;
}

inline bool IsLowerHexWithoutLeadingZero(const std::string& s) {
  if (s.empty() || s[0] == '0') return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace jobset::auth::testing

#endif  // JOBSET_AUTH_PKI_TESTING_H_
