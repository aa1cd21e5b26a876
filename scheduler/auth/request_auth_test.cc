// RequestAuth over credentials as a request brings them: certificates made
// by the cluster CA, bearer tokens, and the failure limiter between.
#include "scheduler/auth/request_auth.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "auth/pki.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kSecret[] = "0123456789abcdef0123";
constexpr char kNodeIp[] = "10.0.0.7";

class RequestAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto access = AccessStore::Load(&store_);
    ASSERT_THAT(access.status(), IsOk());
    access_ = *std::move(access);
    auth_ = std::make_unique<RequestAuth>(
        RequestAuth::Options{.access = access_.get(), .clock = &clock_});
    auto ca = auth::CreateCa("test-ca", clock_.Now());
    ASSERT_THAT(ca.status(), IsOk());
    ca_ = *std::move(ca);
  }

  // Joins `name` as IdentityService does; returns its certificate.
  std::string Join(const std::string& name) {
    absl::StatusOr<int64_t> generation = access_->JoinGeneration(name, kSecret);
    EXPECT_THAT(generation.status(), IsOk());
    return Certificate(name, generation.value_or(0), /*record=*/true);
  }

  // A certificate for `name` of `generation`, recorded as issued or not.
  std::string Certificate(const std::string& name, int64_t generation,
                          bool record) {
    auth::LeafRequest request{
        .common_name = "system:node:" + name,
        .organizations = {"system:nodes"},
        .uris = {"jobsetd://node/" + name, NodeGenerationUri(generation)},
        .client_auth = true};
    auto issued = auth::IssueKeyAndCertificate(ca_, request, clock_.Now());
    EXPECT_THAT(issued.status(), IsOk());
    if (!issued.ok()) return "";
    auto info = auth::ParseCertificate(issued->cert_pem);
    EXPECT_THAT(info.status(), IsOk());
    if (record && info.ok()) {
      EXPECT_THAT(access_->RecordJoin(name, kSecret, generation, info->serial,
                                      info->not_after, clock_.Now()),
                  IsOk());
    }
    return issued->cert_pem;
  }

  std::string Token(const std::string& name) {
    api::CreateTokenRequest request;
    request.set_name(name);
    auto created = access_->CreateToken(request, "admin", clock_.Now());
    EXPECT_THAT(created.status(), IsOk());
    return created.ok() ? created->token() : "";
  }

  absl::StatusOr<Caller> WithCertificate(const std::string& ip,
                                         const std::string& pem) {
    return auth_->AuthenticateCredentials({.source_ip = ip, .cert_pem = pem});
  }
  absl::StatusOr<Caller> WithToken(const std::string& ip,
                                   const std::string& token) {
    return auth_->AuthenticateCredentials(
        {.source_ip = ip, .authorization = absl::StrCat("Bearer ", token)});
  }

  FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<AccessStore> access_;
  std::unique_ptr<RequestAuth> auth_;
  auth::KeyAndCert ca_;
};

// Issue 40: a pod shares its node's address; its bad tokens must not lock
// the node's agent out.
TEST_F(RequestAuthTest, BadTokensFromANodesAddressDoNotLockOutItsCertificate) {
  const std::string cert = Join("n1");
  const std::string alice = Token("alice");
  const std::string guess = "aaaaaaaa.0123456789abcdefghijklmnopqrstuv";
  for (int i = 0; i < 100; ++i) {
    ASSERT_THAT(WithToken(kNodeIp, guess).status(),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         "invalid or expired token"))
        << "attempt " << i;
  }
  EXPECT_THAT(WithToken(kNodeIp, guess).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("too many failed authentications from "
                                 "10.0.0.7; try again in 1m")));
  absl::StatusOr<Caller> node = WithCertificate(kNodeIp, cert);
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_EQ(node->node, "n1");
  EXPECT_EQ(node->method, "cert");
  // Another's valid token is not the guesser's either.
  absl::StatusOr<Caller> user = WithToken(kNodeIp, alice);
  ASSERT_THAT(user.status(), IsOk());
  EXPECT_EQ(user->user.name, "alice");
}

// Guesses of one token's secret limit that token from that address, and
// nothing else.
TEST_F(RequestAuthTest, GuessesOfATokensSecretAreCountedOnItsId) {
  const std::string alice = Token("alice");
  const std::string bob = Token("bob");
  std::string wrong = alice;
  wrong.back() = wrong.back() == 'a' ? 'b' : 'a';
  for (int i = 0; i < 100; ++i) {
    ASSERT_THAT(WithToken(kNodeIp, wrong).status(),
                StatusIs(absl::StatusCode::kUnauthenticated));
  }
  EXPECT_THAT(WithToken(kNodeIp, alice).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("from 10.0.0.7 for token ")));
  EXPECT_THAT(WithToken("10.0.0.8", alice).status(), IsOk());
  EXPECT_THAT(WithToken(kNodeIp, bob).status(), IsOk());
  clock_.Advance(absl::Minutes(1));
  EXPECT_THAT(WithToken(kNodeIp, alice).status(), IsOk());
}

// Issue 40: a node is its join; a deleted node's certificates, and those of
// an earlier join, stay out.
TEST_F(RequestAuthTest, ACertificateAuthenticatesOnlyWhileItsJoinStands) {
  const std::string first = Join("n1");
  ASSERT_THAT(WithCertificate(kNodeIp, first).status(), IsOk());
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  EXPECT_THAT(WithCertificate(kNodeIp, first).status(),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("certificate has been revoked: node \"n1\" "
                                 "was deleted")));
  const std::string second = Join("n1");
  EXPECT_THAT(WithCertificate(kNodeIp, second).status(), IsOk());
  EXPECT_THAT(WithCertificate(kNodeIp, first).status(),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("certificate has been revoked: it is of an "
                                 "earlier join")));
  // Refusals of certificates are not guesses: never limited.
  for (int i = 0; i < 150; ++i) {
    ASSERT_THAT(WithCertificate(kNodeIp, first).status(),
                StatusIs(absl::StatusCode::kUnauthenticated));
  }
  EXPECT_THAT(WithCertificate(kNodeIp, second).status(), IsOk());
  // A name that never joined has no certificate that counts.
  EXPECT_THAT(WithCertificate(kNodeIp, Certificate("n2", 99, false)).status(),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("certificate has been revoked")));
}

// Issue 40: a stream opened with a token or certificate (a watch, `logs
// -f`) asks StillValid as it polls.
TEST_F(RequestAuthTest, ACallerStopsBeingValidWhenItsCredentialIsRevoked) {
  absl::StatusOr<Caller> alice = WithToken(kNodeIp, Token("alice"));
  ASSERT_THAT(alice.status(), IsOk());
  EXPECT_THAT(auth_->StillValid(*alice), IsOk());
  ASSERT_THAT(access_->DeleteToken("alice").status(), IsOk());
  EXPECT_THAT(auth_->StillValid(*alice),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "invalid or expired token: the token was deleted"));

  absl::StatusOr<Caller> bob = WithToken(kNodeIp, Token("bob"));
  ASSERT_THAT(bob.status(), IsOk());
  clock_.Advance(absl::Hours(720));  // The default TTL.
  EXPECT_THAT(auth_->StillValid(*bob),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "invalid or expired token: the token has expired"));

  absl::StatusOr<Caller> node = WithCertificate(kNodeIp, Join("n1"));
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_THAT(auth_->StillValid(*node), IsOk());
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  EXPECT_THAT(auth_->StillValid(*node),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("certificate has been revoked")));
}

}  // namespace
}  // namespace jobset::scheduler
