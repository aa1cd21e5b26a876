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
#include "auth/pki.h"
#include "auth/pki_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth {
namespace {

using ::jobset::auth::testing::BioFree;
using ::jobset::auth::testing::IsOk;
using ::jobset::auth::testing::kNow;
using ::jobset::auth::testing::MakeCa;
using ::jobset::auth::testing::NodeRequest;
using ::jobset::auth::testing::PkeyFree;
using ::jobset::auth::testing::ReadKey;
using ::jobset::auth::testing::ReadX509;
using ::jobset::auth::testing::ServerRequest;
using ::jobset::auth::testing::StatusIs;
using ::jobset::auth::testing::X509Free;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

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
