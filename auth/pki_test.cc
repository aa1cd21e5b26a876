#include "auth/pki.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// //common:status_matchers is not visible to //auth; these two suffice.
const absl::Status& StatusOf(const absl::Status& status) { return status; }
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

const absl::Time kNow = absl::FromCivil(absl::CivilSecond(2026, 12, 2, 3, 0, 0),
                                        absl::UTCTimeZone());

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

std::unique_ptr<X509, X509Free> ReadX509(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), pem.size()));
  return std::unique_ptr<X509, X509Free>(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

std::unique_ptr<EVP_PKEY, PkeyFree> ReadKey(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), pem.size()));
  return std::unique_ptr<EVP_PKEY, PkeyFree>(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

std::string WriteReq(X509_REQ* req) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

std::string WriteKey(EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PKCS8PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                                nullptr);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

KeyAndCert MakeCa(absl::string_view name = "jobsetd-ca",
                  absl::Time now = kNow) {
  absl::StatusOr<KeyAndCert> ca = CreateCa(name, now);
  EXPECT_THAT(ca, IsOk());
  return ca.ok() ? *ca : KeyAndCert{};
}

LeafRequest NodeRequest(const std::string& node) {
  LeafRequest request;
  request.common_name = "system:node:" + node;
  request.organizations = {"system:nodes"};
  request.uris = {"jobsetd://node/" + node};
  request.client_auth = true;
  request.validity = kNodeCertValidity;
  return request;
}

LeafRequest ServerRequest() {
  LeafRequest request;
  request.common_name = "jobsetd";
  request.dns_names = {"server.jobsetd", "localhost"};
  request.ip_addresses = {"127.0.0.1", "::1"};
  request.server_auth = true;
  request.client_auth = true;
  request.validity = kServerCertValidity;
  return request;
}

bool IsLowerHexWithoutLeadingZero(const std::string& s) {
  if (s.empty() || s[0] == '0') return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

TEST(GeneratePrivateKeyTest, IsPkcs8P256) {
  absl::StatusOr<std::string> pem = GeneratePrivateKey();
  ASSERT_THAT(pem, IsOk());
  EXPECT_THAT(*pem, HasSubstr("-----BEGIN PRIVATE KEY-----"));
  auto key = ReadKey(*pem);
  ASSERT_NE(key, nullptr);
  char group[64] = {0};
  size_t length = 0;
  ASSERT_EQ(EVP_PKEY_get_group_name(key.get(), group, sizeof(group), &length),
            1);
  EXPECT_EQ(std::string(group), "prime256v1");
  absl::StatusOr<std::string> other = GeneratePrivateKey();
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(*pem, *other);
}

TEST(CreateCaTest, RoundTripsThroughParseCertificate) {
  const KeyAndCert ca = MakeCa("jobsetd-ca");
  absl::StatusOr<CertificateInfo> info = ParseCertificate(ca.cert_pem);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "jobsetd-ca");
  EXPECT_THAT(info->organizations, IsEmpty());
  EXPECT_TRUE(info->is_ca);
  EXPECT_FALSE(info->server_auth);
  EXPECT_FALSE(info->client_auth);
  EXPECT_EQ(info->not_before, kNow - kClockSkew);
  EXPECT_EQ(info->not_after, kNow + kCaValidity);
  EXPECT_TRUE(IsLowerHexWithoutLeadingZero(info->serial)) << info->serial;
  EXPECT_THAT(info->dns_names, IsEmpty());
  EXPECT_THAT(CheckKeyMatchesCertificate(ca.key_pem, ca.cert_pem), IsOk());
  EXPECT_THAT(VerifyCertificate(ca.cert_pem, ca.cert_pem, kNow), IsOk());

  auto x509 = ReadX509(ca.cert_pem);
  ASSERT_NE(x509, nullptr);
  EXPECT_EQ(X509_get_version(x509.get()), 2);  // v3
  EXPECT_EQ(X509_get_signature_nid(x509.get()), NID_ecdsa_with_SHA256);
  EXPECT_EQ(X509_get_key_usage(x509.get()), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
  EXPECT_EQ(X509_get_pathlen(x509.get()), 0);
  EXPECT_NE(X509_get0_subject_key_id(x509.get()), nullptr);
  EXPECT_NE(X509_get0_authority_key_id(x509.get()), nullptr);
}

TEST(CreateCaTest, HonoursValidityAndRefusesBadArguments) {
  absl::StatusOr<KeyAndCert> ca = CreateCa("short", kNow, absl::Hours(1));
  ASSERT_THAT(ca, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(ca->cert_pem);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->not_after, kNow + absl::Hours(1));

  EXPECT_THAT(CreateCa("", kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(CreateCa("bad\nname", kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("printable ASCII")));
  EXPECT_THAT(
      CreateCa("ca", kNow, absl::ZeroDuration()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("validity")));
  EXPECT_THAT(
      CreateCa("ca", kNow, -absl::Hours(1)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("validity")));
  EXPECT_THAT(CreateCa("ca", absl::InfiniteFuture()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("9999")));
  EXPECT_THAT(CreateCa("ca", kNow, absl::Hours(24 * 365 * 9000)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("9999")));
}

TEST(IssueCertificateTest, ServerCertificate) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> server =
      IssueKeyAndCertificate(ca, ServerRequest(), kNow);
  ASSERT_THAT(server, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(server->cert_pem);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "jobsetd");
  EXPECT_FALSE(info->is_ca);
  EXPECT_TRUE(info->server_auth);
  EXPECT_TRUE(info->client_auth);
  EXPECT_THAT(info->dns_names, ElementsAre("server.jobsetd", "localhost"));
  EXPECT_THAT(info->ip_addresses, ElementsAre("127.0.0.1", "::1"));
  EXPECT_THAT(info->uris, IsEmpty());
  EXPECT_EQ(info->not_before, kNow - kClockSkew);
  EXPECT_EQ(info->not_after, kNow + kServerCertValidity);
  absl::StatusOr<CertificateInfo> ca_info = ParseCertificate(ca.cert_pem);
  ASSERT_THAT(ca_info, IsOk());
  EXPECT_TRUE(IsLowerHexWithoutLeadingZero(info->serial)) << info->serial;
  EXPECT_NE(info->serial, ca_info->serial);

  EXPECT_THAT(VerifyCertificate(server->cert_pem, ca.cert_pem, kNow), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(server->key_pem, server->cert_pem),
              IsOk());

  auto x509 = ReadX509(server->cert_pem);
  ASSERT_NE(x509, nullptr);
  EXPECT_EQ(X509_get_version(x509.get()), 2);
  EXPECT_EQ(X509_get_key_usage(x509.get()), KU_DIGITAL_SIGNATURE);
  EXPECT_EQ(X509_check_host(x509.get(), "server.jobsetd", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(x509.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_purpose(x509.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  EXPECT_EQ(X509_check_purpose(x509.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_NE(X509_get0_authority_key_id(x509.get()), nullptr);
  auto ca_x509 = ReadX509(ca.cert_pem);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(x509.get()),
                                  X509_get0_subject_key_id(ca_x509.get())),
            0);
}

TEST(IssueCertificateTest, NodeCertificateFromCsr) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<std::string> node_key = GeneratePrivateKey();
  ASSERT_THAT(node_key, IsOk());
  absl::StatusOr<std::string> csr =
      CreateCsr(*node_key, "system:node:a", "system:nodes");
  ASSERT_THAT(csr, IsOk());
  EXPECT_THAT(*csr, HasSubstr("-----BEGIN CERTIFICATE REQUEST-----"));

  absl::StatusOr<std::string> cert =
      IssueCertificate(ca, *csr, NodeRequest("a"), kNow);
  ASSERT_THAT(cert, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(*cert);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "system:node:a");
  EXPECT_THAT(info->organizations, ElementsAre("system:nodes"));
  EXPECT_THAT(info->uris, ElementsAre("jobsetd://node/a"));
  EXPECT_THAT(info->dns_names, IsEmpty());
  EXPECT_THAT(info->ip_addresses, IsEmpty());
  EXPECT_FALSE(info->is_ca);
  EXPECT_FALSE(info->server_auth);
  EXPECT_TRUE(info->client_auth);
  EXPECT_EQ(info->not_after, kNow + kNodeCertValidity);
  EXPECT_THAT(CheckKeyMatchesCertificate(*node_key, *cert), IsOk());
  EXPECT_THAT(VerifyCertificate(*cert, ca.cert_pem, kNow), IsOk());
  auto x509 = ReadX509(*cert);
  ASSERT_NE(x509, nullptr);
  // A node certificate cannot pose as the server (EKU clientAuth only).
  EXPECT_EQ(X509_check_purpose(x509.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_EQ(X509_check_purpose(x509.get(), X509_PURPOSE_SSL_SERVER, 0), 0);

  // Issued twice, the serials differ.
  absl::StatusOr<std::string> again =
      IssueCertificate(ca, *csr, NodeRequest("a"), kNow);
  ASSERT_THAT(again, IsOk());
  absl::StatusOr<CertificateInfo> again_info = ParseCertificate(*again);
  ASSERT_THAT(again_info, IsOk());
  EXPECT_NE(info->serial, again_info->serial);
}

TEST(IssueCertificateTest, SeveralOrganizationsInOrderAndLongNames) {
  const KeyAndCert ca = MakeCa();
  // Past X.520's 64-character CN limit: node names may be 253 characters.
  const std::string node(253, 'n');
  LeafRequest request = NodeRequest(node);
  request.organizations = {"system:nodes", "team-a", "team-b"};
  absl::StatusOr<KeyAndCert> issued = IssueKeyAndCertificate(ca, request, kNow);
  ASSERT_THAT(issued, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(issued->cert_pem);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "system:node:" + node);
  EXPECT_THAT(info->organizations,
              ElementsAre("system:nodes", "team-a", "team-b"));
  EXPECT_THAT(VerifyCertificate(issued->cert_pem, ca.cert_pem, kNow), IsOk());
}

// A CSR as a hostile agent would build it: asks for CA:TRUE, serverAuth,
// server.jobsetd and an IP, as another node in system:masters.
std::string HostileCsr(EVP_PKEY* key) {
  std::unique_ptr<X509_REQ, ReqFree> req(X509_REQ_new());
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  X509_NAME_add_entry_by_txt(
      name, "O", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("system:masters"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("system:node:b"), -1, -1, 0);
  X509_REQ_set_pubkey(req.get(), key);
  STACK_OF(X509_EXTENSION)* extensions = sk_X509_EXTENSION_new_null();
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, nullptr, nullptr, req.get(), nullptr, 0);
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:TRUE"},
           {NID_ext_key_usage, "serverAuth,clientAuth"},
           {NID_subject_alt_name, "DNS:server.jobsetd,IP:10.0.0.1"},
       }) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    EXPECT_NE(extension, nullptr);
    sk_X509_EXTENSION_push(extensions, extension);
  }
  EXPECT_EQ(X509_REQ_add_extensions(req.get(), extensions), 1);
  sk_X509_EXTENSION_pop_free(extensions, X509_EXTENSION_free);
  EXPECT_GT(X509_REQ_sign(req.get(), key, EVP_sha256()), 0);
  return WriteReq(req.get());
}

TEST(IssueCertificateTest, UsesNothingFromTheCsrButItsKey) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<std::string> node_key = GeneratePrivateKey();
  ASSERT_THAT(node_key, IsOk());
  auto key = ReadKey(*node_key);
  ASSERT_NE(key, nullptr);
  const std::string csr = HostileCsr(key.get());

  absl::StatusOr<std::string> cert =
      IssueCertificate(ca, csr, NodeRequest("a"), kNow);
  ASSERT_THAT(cert, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(*cert);
  ASSERT_THAT(info, IsOk());
  EXPECT_FALSE(info->is_ca);
  EXPECT_FALSE(info->server_auth);
  EXPECT_TRUE(info->client_auth);
  EXPECT_THAT(info->dns_names, IsEmpty());
  EXPECT_THAT(info->ip_addresses, IsEmpty());
  EXPECT_EQ(info->common_name, "system:node:a");
  EXPECT_THAT(info->organizations, ElementsAre("system:nodes"));
  EXPECT_THAT(CheckKeyMatchesCertificate(*node_key, *cert), IsOk());
  auto x509 = ReadX509(*cert);
  ASSERT_NE(x509, nullptr);
  EXPECT_EQ(X509_check_host(x509.get(), "server.jobsetd", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ca(x509.get()), 0);
}

TEST(IssueCertificateTest, RefusesCsrWhoseSignatureDoesNotVerify) {
  const KeyAndCert ca = MakeCa();
  auto signer = ReadKey(*GeneratePrivateKey());
  auto victim = ReadKey(*GeneratePrivateKey());
  ASSERT_NE(signer, nullptr);
  ASSERT_NE(victim, nullptr);

  // Someone else's public key, signed with ours: no proof of possession.
  std::unique_ptr<X509_REQ, ReqFree> req(X509_REQ_new());
  X509_REQ_set_pubkey(req.get(), victim.get());
  ASSERT_GT(X509_REQ_sign(req.get(), signer.get(), EVP_sha256()), 0);
  EXPECT_THAT(IssueCertificate(ca, WriteReq(req.get()), NodeRequest("a"), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("signature does not verify")));

  // A valid CSR with one bit of its signature flipped.
  std::unique_ptr<X509_REQ, ReqFree> flipped(X509_REQ_new());
  X509_REQ_set_pubkey(flipped.get(), signer.get());
  ASSERT_GT(X509_REQ_sign(flipped.get(), signer.get(), EVP_sha256()), 0);
  const ASN1_BIT_STRING* signature = nullptr;
  X509_REQ_get0_signature(flipped.get(), &signature, nullptr);
  ASSERT_NE(signature, nullptr);
  ASSERT_GT(ASN1_STRING_length(signature), 10);
  const_cast<unsigned char*>(ASN1_STRING_get0_data(signature))[10] ^= 0x01;
  EXPECT_THAT(
      IssueCertificate(ca, WriteReq(flipped.get()), NodeRequest("a"), kNow),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("signature does not verify")));
}

TEST(IssueCertificateTest, RefusesKeysOtherThanP256) {
  const KeyAndCert ca = MakeCa();
  std::unique_ptr<EVP_PKEY, PkeyFree> rsa(EVP_RSA_gen(1024));
  ASSERT_NE(rsa, nullptr);
  std::unique_ptr<X509_REQ, ReqFree> req(X509_REQ_new());
  X509_REQ_set_pubkey(req.get(), rsa.get());
  ASSERT_GT(X509_REQ_sign(req.get(), rsa.get(), EVP_sha256()), 0);
  EXPECT_THAT(IssueCertificate(ca, WriteReq(req.get()), NodeRequest("a"), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("P-256")));
  EXPECT_THAT(IssueCertificate(ca, WriteKey(rsa.get()), NodeRequest("a"), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("P-256")));
}

TEST(IssueCertificateTest, ValidatesTheRequest) {
  const KeyAndCert ca = MakeCa();
  const std::string key = *GeneratePrivateKey();
  struct Case {
    std::string name;
    void (*edit)(LeafRequest&);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"empty CN", [](LeafRequest& r) { r.common_name = ""; }, "common_name"},
      {"CN with newline", [](LeafRequest& r) { r.common_name = "a\nb"; },
       "common_name"},
      {"empty O", [](LeafRequest& r) { r.organizations = {""}; },
       "organizations[0]"},
      {"too many O", [](LeafRequest& r) { r.organizations.assign(65, "team"); },
       "organizations"},
      {"CN too long",
       [](LeafRequest& r) { r.common_name = std::string(1025, 'a'); },
       "common_name"},
      {"no EKU", [](LeafRequest& r) { r.client_auth = r.server_auth = false; },
       "server_auth or client_auth"},
      {"bad IP", [](LeafRequest& r) { r.ip_addresses = {"1.2.3"}; },
       "ip_addresses[0]"},
      {"hostname as IP",
       [](LeafRequest& r) {
         r.ip_addresses = {"::1", "localhost"};
       },
       "ip_addresses[1]"},
      {"IP with NUL",
       [](LeafRequest& r) {
         r.ip_addresses = {std::string("10.0.0.1\0,DNS:x", 15)};
       },
       "ip_addresses[0]"},
      {"empty DNS", [](LeafRequest& r) { r.dns_names = {""}; }, "dns_names[0]"},
      {"DNS with comma",
       [](LeafRequest& r) { r.dns_names = {"a,DNS:server.jobsetd"}; },
       "dns_names[0]"},
      {"DNS with newline", [](LeafRequest& r) { r.dns_names = {"a\nb"}; },
       "dns_names[0]"},
      {"DNS with space", [](LeafRequest& r) { r.dns_names = {"a b"}; },
       "dns_names[0]"},
      {"long DNS",
       [](LeafRequest& r) { r.dns_names = {std::string(254, 'a')}; },
       "dns_names[0]"},
      {"URI with space",
       [](LeafRequest& r) { r.uris = {"jobsetd://node/a b"}; }, "uris[0]"},
      {"relative URI", [](LeafRequest& r) { r.uris = {"node"}; }, "uris[0]"},
      {"too many SANs",
       [](LeafRequest& r) { r.dns_names.assign(1000, "a.example"); },
       "subject alternative names"},
      {"zero validity",
       [](LeafRequest& r) { r.validity = absl::ZeroDuration(); }, "validity"},
      {"infinite validity",
       [](LeafRequest& r) { r.validity = absl::InfiniteDuration(); },
       "validity"},
  };
  for (const Case& c : cases) {
    LeafRequest request = NodeRequest("a");
    c.edit(request);
    EXPECT_THAT(
        IssueCertificate(ca, key, request, kNow),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
}

TEST(IssueCertificateTest, RefusesBadCa) {
  const KeyAndCert ca = MakeCa();
  const KeyAndCert other = MakeCa("other");
  const std::string key = *GeneratePrivateKey();
  EXPECT_THAT(IssueCertificate({other.key_pem, ca.cert_pem}, key,
                               NodeRequest("a"), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("does not match")));
  absl::StatusOr<KeyAndCert> leaf =
      IssueKeyAndCertificate(ca, ServerRequest(), kNow);
  ASSERT_THAT(leaf, IsOk());
  EXPECT_THAT(
      IssueCertificate(*leaf, key, NodeRequest("a"), kNow),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a CA")));
  EXPECT_THAT(
      IssueCertificate({"", ca.cert_pem}, key, NodeRequest("a"), kNow),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("CA key")));
  EXPECT_THAT(IssueCertificate({ca.key_pem, "x"}, key, NodeRequest("a"), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CA certificate")));
}

TEST(VerifyCertificateTest, ChecksTimeAndIssuer) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  EXPECT_THAT(VerifyCertificate(node->cert_pem, ca.cert_pem, kNow), IsOk());
  EXPECT_THAT(VerifyCertificate(node->cert_pem, ca.cert_pem,
                                kNow - kClockSkew + absl::Seconds(1)),
              IsOk());
  EXPECT_THAT(VerifyCertificate(node->cert_pem, ca.cert_pem,
                                kNow + kNodeCertValidity - absl::Seconds(1)),
              IsOk());
  EXPECT_THAT(
      VerifyCertificate(node->cert_pem, ca.cert_pem,
                        kNow + kNodeCertValidity + absl::Hours(1)),
      StatusIs(absl::StatusCode::kUnauthenticated, "certificate has expired"));
  EXPECT_THAT(
      VerifyCertificate(node->cert_pem, ca.cert_pem, kNow - absl::Hours(1)),
      StatusIs(absl::StatusCode::kUnauthenticated,
               "certificate is not yet valid"));

  // Another CA, even one with the same name.
  const KeyAndCert same_name = MakeCa("jobsetd-ca");
  const KeyAndCert other = MakeCa("other-ca");
  for (const KeyAndCert* wrong : {&same_name, &other}) {
    EXPECT_THAT(VerifyCertificate(node->cert_pem, wrong->cert_pem, kNow),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         "certificate signed by unknown authority"));
  }
  // A self-signed CA is not trusted by another.
  EXPECT_THAT(VerifyCertificate(other.cert_pem, ca.cert_pem, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate signed by unknown authority"));
  // Any CA of a bundle will do.
  EXPECT_THAT(
      VerifyCertificate(node->cert_pem, other.cert_pem + ca.cert_pem, kNow),
      IsOk());
}

TEST(VerifyCertificateTest, ExpiredCa) {
  absl::StatusOr<KeyAndCert> ca = CreateCa("short", kNow, absl::Hours(1));
  ASSERT_THAT(ca, IsOk());
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(*ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  EXPECT_THAT(VerifyCertificate(node->cert_pem, ca->cert_pem, kNow), IsOk());
  EXPECT_THAT(
      VerifyCertificate(node->cert_pem, ca->cert_pem, kNow + absl::Hours(2)),
      StatusIs(absl::StatusCode::kUnauthenticated, "certificate has expired"));
}

TEST(VerifyCertificateTest, RefusesTamperedCertificate) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  auto x509 = ReadX509(node->cert_pem);
  ASSERT_NE(x509, nullptr);
  const ASN1_BIT_STRING* signature = nullptr;
  X509_get0_signature(&signature, nullptr, x509.get());
  ASSERT_NE(signature, nullptr);
  ASSERT_GT(ASN1_STRING_length(signature), 10);
  const_cast<unsigned char*>(ASN1_STRING_get0_data(signature))[10] ^= 0x01;
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  ASSERT_EQ(PEM_write_bio_X509(bio.get(), x509.get()), 1);
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  const std::string tampered(data, length);
  ASSERT_NE(tampered, node->cert_pem);
  EXPECT_THAT(ParseCertificate(tampered), IsOk());
  EXPECT_THAT(VerifyCertificate(tampered, ca.cert_pem, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate signed by unknown authority"));
}

// SHA-256 of `cert_pem`'s public key by the openssl command, or "" if it
// cannot be run.
std::string SpkiSha256ByOpensslCommand(const std::string& cert_pem) {
  const char* dir = std::getenv("TEST_TMPDIR");
  if (dir == nullptr) return "";
  const std::string path = absl::StrCat(dir, "/spki_cert.pem");
  std::ofstream(path) << cert_pem;
  const std::string command =
      absl::StrCat("/usr/bin/openssl x509 -pubkey -noout -in '", path,
                   "' | /usr/bin/openssl pkey -pubin -outform der | sha256sum");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buf[128] = {0};
  const size_t n = fread(buf, 1, sizeof(buf) - 1, pipe);
  pclose(pipe);
  std::remove(path.c_str());
  return n >= 64 ? std::string(buf, 64) : "";
}

TEST(SpkiSha256Test, MatchesTheOpensslCommand) {
  if (std::FILE* f = std::fopen("/usr/bin/openssl", "r"); f != nullptr) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no /usr/bin/openssl";
  }
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<std::string> pin = SpkiSha256(ca.cert_pem);
  ASSERT_THAT(pin, IsOk());
  EXPECT_EQ(pin->size(), 64u);
  EXPECT_EQ(*pin, SpkiSha256ByOpensslCommand(ca.cert_pem));
}

TEST(SpkiSha256Test, DependsOnlyOnTheKey) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<std::string> ca_pin = SpkiSha256(ca.cert_pem);
  ASSERT_THAT(ca_pin, IsOk());
  for (char c : *ca_pin) {
    EXPECT_TRUE(absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f')) << *ca_pin;
  }
  // Two more certificates for the CA's own key: same pin.
  absl::StatusOr<std::string> first =
      IssueCertificate(ca, ca.key_pem, ServerRequest(), kNow);
  absl::StatusOr<std::string> second =
      IssueCertificate(ca, ca.key_pem, NodeRequest("x"), kNow + absl::Hours(5));
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(SpkiSha256(*first).value_or(""), *ca_pin);
  EXPECT_EQ(SpkiSha256(*second).value_or(""), *ca_pin);
  // Another key: another pin.
  const KeyAndCert other = MakeCa();
  EXPECT_NE(SpkiSha256(other.cert_pem).value_or(*ca_pin), *ca_pin);
}

TEST(CheckKeyMatchesCertificateTest, MatchesOnlyItsOwnKey) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(node->key_pem, node->cert_pem),
              IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(ca.key_pem, node->cert_pem),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("does not match")));
  EXPECT_THAT(
      CheckKeyMatchesCertificate(node->cert_pem, node->cert_pem),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("private key")));
  EXPECT_THAT(
      CheckKeyMatchesCertificate(node->key_pem, node->key_pem),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("certificate")));
}

TEST(CreateCsrTest, SignsWithTheKeyAndNamesTheSubject) {
  const std::string key_pem = *GeneratePrivateKey();
  absl::StatusOr<std::string> csr = CreateCsr(key_pem, "system:node:a", "");
  ASSERT_THAT(csr, IsOk());
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(csr->data(), csr->size()));
  std::unique_ptr<X509_REQ, ReqFree> req(
      PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  ASSERT_NE(req, nullptr);
  auto key = ReadKey(key_pem);
  EXPECT_EQ(X509_REQ_verify(req.get(), key.get()), 1);
  X509_NAME* subject = X509_REQ_get_subject_name(req.get());
  EXPECT_EQ(X509_NAME_entry_count(subject), 1);  // no empty O
  char cn[64] = {0};
  EXPECT_GT(X509_NAME_get_text_by_NID(subject, NID_commonName, cn, sizeof(cn)),
            0);
  EXPECT_EQ(std::string(cn), "system:node:a");

  EXPECT_THAT(
      CreateCsr(key_pem, "", "o"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("common_name")));
  EXPECT_THAT(
      CreateCsr(key_pem, "cn", "o\x01"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("organization")));
  EXPECT_THAT(
      CreateCsr("junk", "cn", "o"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key_pem")));
}

TEST(ParseCertificateTest, ReadsOnlyTheFirstCertificate) {
  const KeyAndCert first = MakeCa("first");
  const KeyAndCert second = MakeCa("second");
  absl::StatusOr<CertificateInfo> info =
      ParseCertificate(first.cert_pem + second.cert_pem);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "first");
}

// A certificate with serial `serial`, signed by a throwaway key.
std::string CertificateWithSerial(long serial) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_EC_gen("P-256"));
  std::unique_ptr<X509, X509Free> x509(X509_new());
  X509_set_version(x509.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x509.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(x509.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(x509.get()), 3600);
  X509_set_pubkey(x509.get(), key.get());
  EXPECT_GT(X509_sign(x509.get(), key.get(), EVP_sha256()), 0);
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), x509.get());
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

TEST(ParseCertificateTest, SerialIsLowercaseHexWithoutLeadingZeros) {
  for (const auto& [serial, hex] : std::vector<std::pair<long, std::string>>{
           {0x0a1b, "a1b"}, {0xabcd, "abcd"}, {0x1, "1"}, {0, "0"}}) {
    absl::StatusOr<CertificateInfo> info =
        ParseCertificate(CertificateWithSerial(serial));
    ASSERT_THAT(info, IsOk());
    EXPECT_EQ(info->serial, hex);
    // No subject, no extensions: all empty, nothing assumed.
    EXPECT_EQ(info->common_name, "");
    EXPECT_FALSE(info->is_ca);
    EXPECT_FALSE(info->server_auth);
    EXPECT_FALSE(info->client_auth);
  }
}

// Inputs that are not what they claim, for every function that reads PEM.
TEST(GarbageTest, EveryReaderRefusesIt) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  const std::string csr = *CreateCsr(node->key_pem, "system:node:a", "");

  // An encrypted key is refused without prompting for a password.
  std::string encrypted;
  {
    auto key = ReadKey(node->key_pem);
    std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
    ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(
                  bio.get(), key.get(), EVP_aes_256_cbc(), nullptr, 0, nullptr,
                  const_cast<char*>("password")),
              1);
    char* data = nullptr;
    long length = BIO_get_mem_data(bio.get(), &data);
    encrypted.assign(data, length);
  }
  std::string huge = "-----BEGIN CERTIFICATE-----\n";
  while (huge.size() < 65 * 1024) huge += std::string(64, 'A') + "\n";
  huge += "-----END CERTIFICATE-----\n";
  const std::string truncated_cert =
      node->cert_pem.substr(0, node->cert_pem.size() / 2);
  const std::string truncated_key =
      node->key_pem.substr(0, node->key_pem.size() / 2);
  const std::string binary("\0\x01\x02-----BEGIN \xff", 14);

  const std::vector<std::string> not_certificates = {
      "",  "garbage", truncated_cert, huge, binary, node->key_pem,
      csr, encrypted,
  };
  for (const std::string& bad : not_certificates) {
    SCOPED_TRACE(bad.substr(0, 40));
    EXPECT_THAT(ParseCertificate(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(SpkiSha256(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(VerifyCertificate(bad, ca.cert_pem, kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(VerifyCertificate(node->cert_pem, bad, kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(CheckKeyMatchesCertificate(node->key_pem, bad),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(IssueCertificate({ca.key_pem, bad}, node->key_pem,
                                 NodeRequest("a"), kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
  }
  const std::vector<std::string> not_keys = {
      "",     "garbage",      truncated_key, huge,
      binary, node->cert_pem, csr,           encrypted,
  };
  for (const std::string& bad : not_keys) {
    SCOPED_TRACE(bad.substr(0, 40));
    EXPECT_THAT(CheckKeyMatchesCertificate(bad, node->cert_pem),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(CreateCsr(bad, "cn", ""),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
    EXPECT_THAT(IssueCertificate({bad, ca.cert_pem}, node->key_pem,
                                 NodeRequest("a"), kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
  }
  const std::vector<std::string> not_key_sources = {
      "",
      "garbage",
      truncated_key,
      csr.substr(0, csr.size() / 2),
      huge,
      binary,
      node->cert_pem,
      encrypted,
      "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE "
      "REQUEST-----\n",
      "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
  };
  for (const std::string& bad : not_key_sources) {
    SCOPED_TRACE(bad.substr(0, 40));
    EXPECT_THAT(IssueCertificate(ca, bad, NodeRequest("a"), kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
  }
  EXPECT_THAT(ParseCertificate(huge),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("65536")));
  EXPECT_THAT(ParseCertificate(""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(ParseCertificate("garbage"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a PEM certificate")));
  EXPECT_THAT(
      VerifyCertificate(node->cert_pem, ca.cert_pem, absl::InfiniteFuture()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("time")));
  // After all of that, nothing is left in OpenSSL's error queue.
  EXPECT_EQ(ERR_peek_error(), 0u);
}

// `der` as PEM with `label`, whatever the bytes are.
std::string Pem(const char* label, const std::string& der) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio(bio.get(), label, "",
                reinterpret_cast<const unsigned char*>(der.data()), der.size());
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, length);
}

// The DER inside the first PEM block of `pem`.
std::string Der(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), pem.size()));
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long length = 0;
  EXPECT_EQ(PEM_read_bio(bio.get(), &name, &header, &data, &length), 1);
  std::string der(reinterpret_cast<char*>(data), length);
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  return der;
}

// Every byte of a certificate and of a CSR changed in turn, and each prefix:
// never a crash, and only the codes the header promises.
TEST(GarbageTest, MutatedDerNeverCrashes) {
  const KeyAndCert ca = MakeCa();
  absl::StatusOr<KeyAndCert> node =
      IssueKeyAndCertificate(ca, NodeRequest("a"), kNow);
  ASSERT_THAT(node, IsOk());
  const std::string cert_der = Der(node->cert_pem);
  const std::string csr_der =
      Der(*CreateCsr(node->key_pem, "system:node:a", "system:nodes"));
  ASSERT_FALSE(cert_der.empty());
  ASSERT_FALSE(csr_der.empty());
  const auto invalid_or_ok = ::testing::AnyOf(
      IsOk(), StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())));
  const auto refused = ::testing::AnyOf(
      StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())),
      StatusIs(absl::StatusCode::kUnauthenticated, Not(IsEmpty())));
  int cert_parsed = 0;
  for (size_t i = 0; i < cert_der.size(); ++i) {
    for (const unsigned char flip : {0x01, 0xff}) {
      std::string der = cert_der;
      der[i] = static_cast<char>(der[i] ^ flip);
      const std::string pem = Pem("CERTIFICATE", der);
      absl::StatusOr<CertificateInfo> info = ParseCertificate(pem);
      EXPECT_THAT(info, invalid_or_ok) << "byte " << i;
      if (info.ok()) ++cert_parsed;
      EXPECT_THAT(SpkiSha256(pem), invalid_or_ok) << "byte " << i;
      // Changed anywhere, it no longer verifies (signed bytes, signature,
      // or the algorithm that names how).
      if (flip != 0x01) continue;
      EXPECT_THAT(VerifyCertificate(pem, ca.cert_pem, kNow), refused)
          << "byte " << i;
      EXPECT_THAT(VerifyCertificate(node->cert_pem, pem, kNow), refused)
          << "byte " << i;
    }
    EXPECT_THAT(ParseCertificate(Pem("CERTIFICATE", cert_der.substr(0, i))),
                StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())))
        << "prefix " << i;
  }
  // Some changes still parse (a flipped bit in a key or a signature).
  EXPECT_GT(cert_parsed, 0);
  for (size_t i = 0; i < csr_der.size(); ++i) {
    for (const unsigned char flip : {0x01, 0xff}) {
      std::string der = csr_der;
      der[i] = static_cast<char>(der[i] ^ flip);
      EXPECT_THAT(IssueCertificate(ca, Pem("CERTIFICATE REQUEST", der),
                                   NodeRequest("a"), kNow),
                  invalid_or_ok)
          << "byte " << i;
    }
    EXPECT_THAT(
        IssueCertificate(ca, Pem("CERTIFICATE REQUEST", csr_der.substr(0, i)),
                         NodeRequest("a"), kNow),
        StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())))
        << "prefix " << i;
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

}  // namespace
}  // namespace jobset::auth
