#include "scheduler/auth/shared_ca.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/pki.h"
#include "auth/sealed_box.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/auth.pb.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);
const std::string kSecret = "a-cluster-secret-of-at-least-32-bytes!";

TEST(SharedCaTest, TheFirstPublishesAndTheOthersServeUnderItsCa) {
  store::MemoryStore store;
  auto first = LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cert_pem, first->cert_pem);
  EXPECT_EQ(second->key_pem, first->key_pem);
  // The same data dir again (its pki/ holds that CA): accepted.
  EXPECT_TRUE(LoadOrPublishSharedCa(&store, kSecret, *first, kNow).ok());

  // What the store holds: the certificate, and never the key in the clear.
  auto stored = store.Get(store::keys::kSharedCa);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->value.find(first->key_pem), std::string::npos);
  EXPECT_EQ((*stored)->value.find("PRIVATE KEY"), std::string::npos);
}

TEST(SharedCaTest, AnExistingDataDirsCaIsPublished) {
  store::MemoryStore store;
  auto local = auth::CreateCa("jobsetd-ca", kNow);
  ASSERT_TRUE(local.ok());
  auto published = LoadOrPublishSharedCa(&store, kSecret, *local, kNow);
  ASSERT_TRUE(published.ok()) << published.status();
  EXPECT_EQ(published->cert_pem, local->cert_pem);
  auto other = LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->cert_pem, local->cert_pem);
}

TEST(SharedCaTest, ADataDirOfAnotherClusterIsRefused) {
  store::MemoryStore store;
  ASSERT_TRUE(LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow).ok());
  auto foreign = auth::CreateCa("jobsetd-ca", kNow);
  ASSERT_TRUE(foreign.ok());
  auto refused = LoadOrPublishSharedCa(&store, kSecret, *foreign, kNow);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("made for another cluster"));
}

TEST(SharedCaTest, AnotherSecretIsRefusedNamingTheFlag) {
  store::MemoryStore store;
  ASSERT_TRUE(LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow).ok());
  auto refused =
      LoadOrPublishSharedCa(&store, kSecret + "-other", std::nullopt, kNow);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("same --cluster_secret_file"));
}

// The store as a hostile input: every malformed record is kDataLoss naming
// the key, never a crash and never a CA made up over it.
TEST(SharedCaTest, AMalformedRecordIsRefused) {
  auto ca = auth::CreateCa("jobsetd-ca", kNow);
  auto other = auth::CreateCa("jobsetd-ca", kNow);
  ASSERT_TRUE(ca.ok() && other.ok());
  api::SharedCa wrong_key;  // Sealed right, but another CA's key.
  wrong_key.set_cert_pem(ca->cert_pem);
  wrong_key.set_sealed_key(*auth::Seal(kSecret, other->key_pem, ca->cert_pem));
  api::SharedCa not_a_ca;
  not_a_ca.set_cert_pem("-----BEGIN CERTIFICATE-----\nAAAA\n");
  api::SharedCa truncated;
  truncated.set_cert_pem(ca->cert_pem);
  truncated.set_sealed_key("jobsetd-seal-v1\nshort");
  for (const std::string& value :
       {std::string("\xff\xff\xff garbage"), wrong_key.SerializeAsString(),
        not_a_ca.SerializeAsString(), truncated.SerializeAsString()}) {
    store::MemoryStore store;
    store::Batch batch;
    batch.Put(store::keys::kSharedCa, value);
    ASSERT_TRUE(store.Commit(batch).ok());
    auto loaded = LoadOrPublishSharedCa(&store, kSecret, std::nullopt, kNow);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss)
        << loaded.status();
    EXPECT_THAT(loaded.status().message(), HasSubstr("auth/ca"));
  }
}

// A store where another replica publishes its CA between this one's read
// and its create.
class RacingStore : public store::ForwardingStore {
 public:
  RacingStore(store::Store* inner, std::string rival)
      : ForwardingStore(inner), rival_(std::move(rival)) {}
  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    if (!rival_.empty()) {
      store::Batch theirs;
      theirs.Create(store::keys::kSharedCa, rival_);
      rival_.clear();
      if (absl::Status s = inner()->Commit(theirs).status(); !s.ok()) return s;
    }
    return inner()->Commit(batch);
  }

 private:
  std::string rival_;
};

TEST(SharedCaTest, TheReplicaThatPublishesSecondTakesTheWinnersCa) {
  store::MemoryStore winner_store;
  auto winner =
      LoadOrPublishSharedCa(&winner_store, kSecret, std::nullopt, kNow);
  ASSERT_TRUE(winner.ok());
  auto record = winner_store.Get(store::keys::kSharedCa);
  ASSERT_TRUE(record.ok() && record->has_value());

  store::MemoryStore memory;
  RacingStore racing(&memory, (*record)->value);
  auto loser = LoadOrPublishSharedCa(&racing, kSecret, std::nullopt, kNow);
  ASSERT_TRUE(loser.ok()) << loser.status();
  EXPECT_EQ(loser->cert_pem, winner->cert_pem);
}

TEST(SharedCaTest, TheSecretFileIsCheckedAndTrimmed) {
  const std::string dir = ::testing::TempDir();
  const std::string good = absl::StrCat(dir, "/secret");
  const std::string short_one = absl::StrCat(dir, "/short");
  std::FILE* f = std::fopen(good.c_str(), "w");
  std::fputs((kSecret + "\n").c_str(), f);
  std::fclose(f);
  f = std::fopen(short_one.c_str(), "w");
  std::fputs("too short\n", f);
  std::fclose(f);
  auto secret = ReadClusterSecret(good);
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ(*secret, kSecret);
  EXPECT_THAT(ReadClusterSecret(short_one).status().message(),
              HasSubstr("at least 32 bytes are needed, it has 9"));
  EXPECT_EQ(ReadClusterSecret(dir + "/missing").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace jobset::scheduler
