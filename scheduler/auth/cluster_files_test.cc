#include "scheduler/auth/cluster_files.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int Mode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777)
                                      : -1;
}

class ClusterFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(
        tmp != nullptr ? tmp : "/tmp", "/cluster-files-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(
                  absl::StrCat("rm -rf ", dir_, " && mkdir -p ", dir_).c_str()),
              0);
    auto access = AccessStore::Load(&store_);
    ASSERT_THAT(access.status(), IsOk());
    access_ = *std::move(access);
  }

  std::string dir_;
  store::MemoryStore store_;
  std::unique_ptr<AccessStore> access_;
};

TEST_F(ClusterFilesTest, FirstStartMakesEverythingAndLaterStartsKeepIt) {
  auto pki = LoadOrCreatePki(dir_, {"sched.example", "10.0.0.5"}, kNow);
  ASSERT_THAT(pki.status(), IsOk());
  EXPECT_EQ(Mode(dir_ + "/pki"), 0700);
  EXPECT_EQ(Mode(dir_ + "/pki/ca.key"), 0600);
  EXPECT_EQ(Mode(dir_ + "/pki/server.key"), 0600);
  auto server = auth::ParseCertificate(pki->server.cert_pem);
  ASSERT_THAT(server.status(), IsOk());
  EXPECT_THAT(server->dns_names, Contains("server.jobsetd"));
  EXPECT_THAT(server->dns_names, Contains("sched.example"));
  EXPECT_THAT(server->ip_addresses, Contains("10.0.0.5"));
  EXPECT_THAT(server->ip_addresses, Contains("127.0.0.1"));
  EXPECT_TRUE(server->server_auth);
  EXPECT_THAT(
      auth::VerifyCertificate(pki->server.cert_pem, pki->ca.cert_pem, kNow),
      IsOk());

  auto again = LoadOrCreatePki(dir_, {"sched.example"}, kNow + absl::Hours(1));
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->ca.cert_pem, pki->ca.cert_pem);
  EXPECT_EQ(again->server.cert_pem, pki->server.cert_pem);
  EXPECT_EQ(again->ca_hash, pki->ca_hash);
  // A new name, or a certificate near its end, gets a new one from the CA.
  auto renamed = LoadOrCreatePki(dir_, {"other.example"}, kNow);
  ASSERT_THAT(renamed.status(), IsOk());
  EXPECT_EQ(renamed->ca.cert_pem, pki->ca.cert_pem);
  EXPECT_NE(renamed->server.cert_pem, pki->server.cert_pem);
  auto late =
      LoadOrCreatePki(dir_, {"other.example"}, kNow + absl::Hours(24 * 340));
  ASSERT_THAT(late.status(), IsOk());
  EXPECT_NE(late->server.cert_pem, renamed->server.cert_pem);
}

TEST_F(ClusterFilesTest, AMissingCaKeyIsNotReplacedSilently) {
  ASSERT_THAT(LoadOrCreatePki(dir_, {}, kNow).status(), IsOk());
  ASSERT_EQ(std::remove((dir_ + "/pki/ca.key").c_str()), 0);
  EXPECT_THAT(
      LoadOrCreatePki(dir_, {}, kNow).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ca.key")));
}

TEST_F(ClusterFilesTest, AdminConfKeepsAWorkingTokenAndFollowsTheAddress) {
  auto pki = LoadOrCreatePki(dir_, {}, kNow);
  ASSERT_THAT(pki.status(), IsOk());
  ASSERT_THAT(WriteAdminConfig(dir_, *pki, access_.get(), "127.0.0.1:7070",
                               false, kNow),
              IsOk());
  const std::string first = Read(dir_ + "/admin.conf");
  EXPECT_EQ(Mode(dir_ + "/admin.conf"), 0600);
  EXPECT_THAT(first, HasSubstr("server: https://127.0.0.1:7070"));
  EXPECT_THAT(first, HasSubstr("tls-server-name: server.jobsetd"));
  ASSERT_THAT(WriteAdminConfig(dir_, *pki, access_.get(), "127.0.0.1:7171",
                               false, kNow),
              IsOk());
  const std::string second = Read(dir_ + "/admin.conf");
  EXPECT_THAT(second, HasSubstr("server: https://127.0.0.1:7171"));
  auto token_of = [](const std::string& conf) {
    size_t at = conf.find("token: ");
    return conf.substr(at + 7, conf.find('\n', at) - at - 7);
  };
  EXPECT_EQ(token_of(first), token_of(second));
  auto user = access_->AuthenticateToken(token_of(second), kNow);
  ASSERT_THAT(user.status(), IsOk());
  EXPECT_THAT(user->groups, Contains("system:masters"));
  // Deleted, the token is replaced by a new one.
  ASSERT_THAT(access_->DeleteToken("admin").status(), IsOk());
  ASSERT_THAT(WriteAdminConfig(dir_, *pki, access_.get(), "127.0.0.1:7171",
                               false, kNow),
              IsOk());
  const std::string third = Read(dir_ + "/admin.conf");
  EXPECT_NE(token_of(third), token_of(second));
  EXPECT_THAT(access_->AuthenticateToken(token_of(third), kNow).status(),
              IsOk());
}

// Replicas keep an administrator token each: one replica writing its
// admin.conf never replaces the token in another's.
TEST_F(ClusterFilesTest, ReplicasKeepAnAdminTokenEach) {
  auto pki = LoadOrCreatePki(dir_, {}, kNow);
  ASSERT_THAT(pki.status(), IsOk());
  const std::string other_dir = dir_ + "/other-replica";
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p ", other_dir).c_str()), 0);
  const std::string name_a = ReplicaAdminTokenName("host-a", dir_);
  const std::string name_b = ReplicaAdminTokenName("host-a", other_dir);
  EXPECT_THAT(name_a, MatchesRegex("admin-[0-9a-f]{8}"));
  EXPECT_NE(name_a, name_b);
  EXPECT_NE(name_a, ReplicaAdminTokenName("host-b", dir_));
  EXPECT_EQ(name_a, ReplicaAdminTokenName("host-a", dir_ + "/./"));
  ASSERT_THAT(WriteAdminConfig(dir_, *pki, access_.get(), "127.0.0.1:7070",
                               false, kNow, name_a),
              IsOk());
  ASSERT_THAT(WriteAdminConfig(other_dir, *pki, access_.get(), "127.0.0.1:7171",
                               false, kNow, name_b),
              IsOk());
  for (const std::string& conf :
       {Read(dir_ + "/admin.conf"), Read(other_dir + "/admin.conf")}) {
    const size_t at = conf.find("token: ");
    const std::string token = conf.substr(at + 7, conf.find('\n', at) - at - 7);
    EXPECT_THAT(access_->AuthenticateToken(token, kNow).status(), IsOk());
  }
}

// With the CA shared through the store, pki/ takes it and the serving
// certificate is issued from it; a pki/ holding another CA is refused.
TEST_F(ClusterFilesTest, TheClusterCaIsWrittenToPkiAndServedUnder) {
  auto cluster_ca = auth::CreateCa("jobsetd-ca", kNow);
  ASSERT_THAT(cluster_ca.status(), IsOk());
  {
    auto none = ReadPkiCa(dir_);
    ASSERT_THAT(none.status(), IsOk());
    EXPECT_FALSE(none->has_value());
  }
  auto pki = LoadOrCreatePki(dir_, {}, kNow, *cluster_ca);
  ASSERT_THAT(pki.status(), IsOk());
  EXPECT_EQ(pki->ca.cert_pem, cluster_ca->cert_pem);
  EXPECT_THAT(
      auth::VerifyCertificate(pki->server.cert_pem, cluster_ca->cert_pem, kNow),
      IsOk());
  auto read = ReadPkiCa(dir_);
  ASSERT_THAT(read.status(), IsOk());
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->key_pem, cluster_ca->key_pem);
  EXPECT_EQ(Mode(dir_ + "/pki/ca.key"), 0600);

  auto other_ca = auth::CreateCa("jobsetd-ca", kNow);
  ASSERT_THAT(other_ca.status(), IsOk());
  EXPECT_THAT(LoadOrCreatePki(dir_, {}, kNow, *other_ca).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not the cluster's CA")));
}

TEST_F(ClusterFilesTest, TheJoinTokenPinsTheCaAndIsRemadeWhenStale) {
  auto pki = LoadOrCreatePki(dir_, {}, kNow);
  ASSERT_THAT(pki.status(), IsOk());
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow), IsOk());
  const std::string first = Read(dir_ + "/join-token");
  EXPECT_EQ(Mode(dir_ + "/join-token"), 0600);
  auto token = auth::ParseJoinToken(first);
  ASSERT_THAT(token.status(), IsOk());
  EXPECT_EQ(token->ca_hash, pki->ca_hash);
  EXPECT_THAT(
      access_->CheckJoinCredential(auth::FormatToken(token->credential), kNow),
      IsOk());
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow), IsOk());
  EXPECT_EQ(Read(dir_ + "/join-token"), first);
  // Rotated elsewhere (the file is stale): remade.
  ASSERT_THAT(access_->RotateJoinCredential(std::nullopt, kNow).status(),
              IsOk());
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow), IsOk());
  auto remade = auth::ParseJoinToken(Read(dir_ + "/join-token"));
  ASSERT_THAT(remade.status(), IsOk());
  EXPECT_THAT(
      access_->CheckJoinCredential(auth::FormatToken(remade->credential), kNow),
      IsOk());
}

// Issue 40: the join token expires (--join_token_ttl), and a restart
// neither revives nor lengthens it.
TEST_F(ClusterFilesTest, TheJoinTokenExpiresAfterItsTtlAcrossRestarts) {
  auto pki = LoadOrCreatePki(dir_, {}, kNow);
  ASSERT_THAT(pki.status(), IsOk());
  const absl::Duration ttl = absl::Hours(24);
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow, ttl), IsOk());
  auto first = auth::ParseJoinToken(Read(dir_ + "/join-token"));
  ASSERT_THAT(first.status(), IsOk());
  const std::string credential = auth::FormatToken(first->credential);
  // Restarted within the TTL: the same token, and no longer-lived.
  ASSERT_THAT(
      WriteJoinToken(dir_, *pki, access_.get(), kNow + absl::Hours(12), ttl),
      IsOk());
  EXPECT_EQ(auth::FormatToken(
                auth::ParseJoinToken(Read(dir_ + "/join-token"))->credential),
            credential);
  EXPECT_THAT(access_->CheckJoinCredential(credential, kNow + absl::Hours(23)),
              IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(credential, kNow + ttl),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "join token is invalid or expired"));
  // Restarted after it: refused still, and a new one written.
  ASSERT_THAT(
      WriteJoinToken(dir_, *pki, access_.get(), kNow + absl::Hours(30), ttl),
      IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(credential, kNow + absl::Hours(30)),
              StatusIs(absl::StatusCode::kUnauthenticated));
  auto fresh = auth::ParseJoinToken(Read(dir_ + "/join-token"));
  ASSERT_THAT(fresh.status(), IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(auth::FormatToken(fresh->credential),
                                           kNow + absl::Hours(30)),
              IsOk());
  // One made without a TTL (an older jobsetd) gets one at the next start.
  ASSERT_THAT(access_->RotateJoinCredential(std::nullopt, kNow).status(),
              IsOk());
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow), IsOk());
  auto forever = auth::ParseJoinToken(Read(dir_ + "/join-token"));
  ASSERT_THAT(forever.status(), IsOk());
  const std::string old = auth::FormatToken(forever->credential);
  ASSERT_THAT(WriteJoinToken(dir_, *pki, access_.get(), kNow, ttl), IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(old, kNow + ttl),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

}  // namespace
}  // namespace jobset::scheduler
