#include "auth/sealed_box.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth {
namespace {

using ::testing::HasSubstr;

const std::string kPassphrase = "0123456789abcdef0123456789abcdef-cluster";
constexpr absl::string_view kCert = "-----BEGIN CERTIFICATE-----\nca\n";

TEST(SealedBoxTest, OpensWithTheSamePassphraseAndAssociatedData) {
  auto sealed = Seal(kPassphrase, "the CA key", kCert);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_EQ(sealed->find("the CA key"), std::string::npos);
  auto opened = Unseal(kPassphrase, *sealed, kCert);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, "the CA key");
}

TEST(SealedBoxTest, EachSealIsFreshlySalted) {
  auto a = Seal(kPassphrase, "same", kCert);
  auto b = Seal(kPassphrase, "same", kCert);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(SealedBoxTest, AnotherPassphraseOrAssociatedDataDoesNotOpen) {
  auto sealed = Seal(kPassphrase, "the CA key", kCert);
  ASSERT_TRUE(sealed.ok());
  auto other = Unseal(kPassphrase + "x", *sealed, kCert);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(other.status().message(), HasSubstr("does not open"));
  EXPECT_EQ(Unseal(kPassphrase, *sealed, "another certificate").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(SealedBoxTest, EveryAlteredByteIsRefused) {
  auto sealed = Seal(kPassphrase, "k", kCert);
  ASSERT_TRUE(sealed.ok());
  // Past the header: salt, nonce, ciphertext and tag are each authenticated.
  for (size_t i = 16; i < sealed->size(); i += 7) {
    std::string altered = *sealed;
    altered[i] ^= 0x01;
    EXPECT_FALSE(Unseal(kPassphrase, altered, kCert).ok()) << "byte " << i;
  }
}

TEST(SealedBoxTest, HostileInputIsAnErrorNamingWhy) {
  auto sealed = Seal(kPassphrase, "k", kCert);
  ASSERT_TRUE(sealed.ok());
  for (const std::string& bad :
       {std::string(), std::string("garbage"), sealed->substr(0, 20),
        std::string("jobsetd-seal-v1\n") + std::string(1 << 20, 'x')}) {
    auto opened = Unseal(kPassphrase, bad, kCert);
    EXPECT_EQ(opened.status().code(), absl::StatusCode::kInvalidArgument)
        << bad.size();
  }
}

TEST(SealedBoxTest, AShortPassphraseOrLargePlaintextIsRefused) {
  EXPECT_THAT(Seal("short", "k", kCert).status().message(),
              HasSubstr("at least 32 bytes, got 5"));
  EXPECT_EQ(
      Seal(kPassphrase, std::string(kMaxSealedPlaintextBytes + 1, 'k'), kCert)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace jobset::auth
