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
#include "auth/pki_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth {
namespace {

using ::jobset::auth::testing::BioFree;
using ::jobset::auth::testing::IsLowerHexWithoutLeadingZero;
using ::jobset::auth::testing::IsOk;
using ::jobset::auth::testing::kNow;
using ::jobset::auth::testing::MakeCa;
using ::jobset::auth::testing::NodeRequest;
using ::jobset::auth::testing::PkeyFree;
using ::jobset::auth::testing::ReadKey;
using ::jobset::auth::testing::ReadX509;
using ::jobset::auth::testing::ReqFree;
using ::jobset::auth::testing::ServerRequest;
using ::jobset::auth::testing::StatusIs;
using ::jobset::auth::testing::WriteKey;
using ::jobset::auth::testing::WriteReq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

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

}  // namespace
}  // namespace jobset::auth
