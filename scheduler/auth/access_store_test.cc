#include "scheduler/auth/access_store.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "auth/tokens.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

api::RbacObject ViewBinding(const std::string& ns, const std::string& user) {
  api::RbacObject object;
  api::RoleBinding* b = object.mutable_binding();
  b->set_api_version("rbac.authorization.k8s.io/v1");
  b->set_kind("RoleBinding");
  b->mutable_metadata()->set_name("view-" + user);
  b->mutable_metadata()->set_namespace_(ns);
  api::Subject* s = b->add_subjects();
  s->set_kind("User");
  s->set_api_group("rbac.authorization.k8s.io");
  s->set_name(user);
  b->mutable_role_ref()->set_api_group("rbac.authorization.k8s.io");
  b->mutable_role_ref()->set_kind("ClusterRole");
  b->mutable_role_ref()->set_name("view");
  return object;
}

class AccessStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reload(); }
  // As after a restart: everything from the store.
  void Reload() {
    auto loaded = AccessStore::Load(&store_);
    ASSERT_THAT(loaded.status(), IsOk());
    access_ = *std::move(loaded);
  }

  store::MemoryStore store_;
  std::unique_ptr<AccessStore> access_;
};

TEST_F(AccessStoreTest, ATokenAuthenticatesItsUserUntilItExpires) {
  api::CreateTokenRequest request;
  request.set_name("alice");
  request.add_groups("team-a");
  request.mutable_ttl()->set_seconds(3600);
  auto created = access_->CreateToken(request, "admin", kNow);
  ASSERT_THAT(created.status(), IsOk());
  EXPECT_EQ(created->info().created_by(), "admin");
  auto user = access_->AuthenticateToken(created->token(), kNow);
  ASSERT_THAT(user.status(), IsOk());
  EXPECT_EQ(user->name, "alice");
  EXPECT_THAT(user->groups, ElementsAre("team-a", "system:authenticated"));
  EXPECT_THAT(
      access_->AuthenticateToken(created->token(), kNow + absl::Seconds(3600))
          .status(),
      StatusIs(absl::StatusCode::kUnauthenticated, "invalid or expired token"));
  // Only the hash is stored: the secret is nowhere in the store.
  auto secret = auth::ParseToken(created->token());
  ASSERT_THAT(secret.status(), IsOk());
  auto stored = store_.Get("auth/tokens/alice");
  ASSERT_THAT(stored.status(), IsOk());
  ASSERT_TRUE(stored->has_value());
  EXPECT_THAT((*stored)->value, ::testing::Not(HasSubstr(secret->secret)));
  // And it survives a restart.
  Reload();
  EXPECT_THAT(access_->AuthenticateToken(created->token(), kNow).status(),
              IsOk());
}

TEST_F(AccessStoreTest, BadTokensAllGetTheSameAnswer) {
  api::CreateTokenRequest request;
  request.set_name("bob");
  auto created = access_->CreateToken(request, "admin", kNow);
  ASSERT_THAT(created.status(), IsOk());
  std::string wrong = created->token();
  wrong.back() = wrong.back() == 'x' ? 'y' : 'x';
  for (const std::string& token :
       {wrong, std::string("nope"), std::string("aaaaaaaa.") + wrong}) {
    EXPECT_THAT(access_->AuthenticateToken(token, kNow).status(),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         "invalid or expired token"));
  }
  ASSERT_THAT(access_->DeleteToken("bob").status(), IsOk());
  EXPECT_THAT(access_->AuthenticateToken(created->token(), kNow).status(),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(access_->DeleteToken("bob").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(AccessStoreTest, TokenRequestsAreChecked) {
  api::CreateTokenRequest request;
  request.set_name("system:node:n1");
  EXPECT_THAT(
      access_->CreateToken(request, "admin", kNow).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
  request.set_name("a b");
  EXPECT_THAT(access_->CreateToken(request, "admin", kNow).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name")));
  request.set_name("carol");
  for (const char* group :
       {"system:nodes", "system:masters", "system:authenticated"}) {
    request.clear_groups();
    request.add_groups("team-a");
    request.add_groups(group);
    EXPECT_THAT(access_->CreateToken(request, "admin", kNow).status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("groups[1]: \"", group,
                                                "\" may not be granted"))));
  }
  request.clear_groups();
  request.mutable_ttl()->set_seconds(24 * 3600 * 400);
  EXPECT_THAT(access_->CreateToken(request, "admin", kNow).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl")));
  request.clear_ttl();
  ASSERT_THAT(access_->CreateToken(request, "admin", kNow).status(), IsOk());
  EXPECT_THAT(access_->CreateToken(request, "admin", kNow).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST_F(AccessStoreTest, TheJoinCredentialRotatesAndExpires) {
  auto first = access_->RotateJoinCredential(std::nullopt, kNow);
  ASSERT_THAT(first.status(), IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(auth::FormatToken(*first), kNow),
              IsOk());
  auto second = access_->RotateJoinCredential(kNow + absl::Hours(1), kNow);
  ASSERT_THAT(second.status(), IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(auth::FormatToken(*first), kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "join token is invalid or expired"));
  Reload();
  EXPECT_THAT(access_->CheckJoinCredential(auth::FormatToken(*second), kNow),
              IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(auth::FormatToken(*second),
                                           kNow + absl::Hours(1)),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

TEST_F(AccessStoreTest, ANodeNameIsBoundToItsSecretUntilRevoked) {
  const std::string secret = "0123456789abcdef0123";
  absl::StatusOr<int64_t> generation = access_->JoinGeneration("n1", secret);
  ASSERT_THAT(generation.status(), IsOk());
  ASSERT_THAT(access_->RecordJoin("n1", secret, *generation, "aa01",
                                  kNow + absl::Hours(1), kNow),
              IsOk());
  EXPECT_THAT(access_->JoinGeneration("n1", "another-secret-0000").status(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("node name \"n1\" is already registered")));
  EXPECT_THAT(access_->RecordJoin("n1", "another-secret-0000", *generation,
                                  "aa02", kNow + absl::Hours(1), kNow),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("node name \"n1\" is already registered")));
  ASSERT_THAT(access_->RecordRenewal("n1", *generation, "aa03",
                                     kNow + absl::Hours(2), kNow),
              IsOk());
  EXPECT_THAT(access_->RecordRenewal("n2", 1, "aa04", kNow, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("node \"n2\" was deleted")));
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  EXPECT_TRUE(access_->IsRevoked("aa01"));
  EXPECT_TRUE(access_->IsRevoked("aa03"));
  EXPECT_FALSE(access_->IsRevoked("aa02"));  // Never issued.
  Reload();
  EXPECT_TRUE(access_->IsRevoked("aa01"));
  // The name is free again: a new node may join under it.
  absl::StatusOr<int64_t> again =
      access_->JoinGeneration("n1", "another-secret-0000");
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_THAT(access_->RecordJoin("n1", "another-secret-0000", *again, "aa05",
                                  kNow + absl::Hours(1), kNow),
              IsOk());
  EXPECT_THAT(access_->RevokeNode("n9"), StatusIs(absl::StatusCode::kNotFound));
}

// Issue 40: renewed eight times (as many serials as were kept), deleted,
// and back with the first certificate.
TEST_F(AccessStoreTest, ADeletedNodeStaysOutHoweverManyRenewals) {
  const std::string secret = "0123456789abcdef0123";
  absl::StatusOr<int64_t> first = access_->JoinGeneration("n1", secret);
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_THAT(access_->RecordJoin("n1", secret, *first, "aa00",
                                  kNow + absl::Hours(720), kNow),
              IsOk());
  EXPECT_THAT(access_->CheckNodeCertificate("n1", *first), IsOk());
  for (int i = 1; i <= 8; ++i) {
    const absl::Time now = kNow + i * kMinRenewalInterval;
    ASSERT_THAT(access_->CheckRenewal("n1", now), IsOkAndHolds(*first));
    ASSERT_THAT(access_->RecordRenewal("n1", *first, absl::StrCat("aa0", i),
                                       now + absl::Hours(720), now),
                IsOk());
  }
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  EXPECT_FALSE(access_->IsRevoked("aa00"));  // Past the kept serials...
  for (int reloads = 0; reloads < 2; ++reloads) {
    // ... and refused all the same, after a restart too.
    EXPECT_THAT(access_->CheckNodeCertificate("n1", *first),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         HasSubstr("certificate has been revoked: node \"n1\" "
                                   "was deleted")));
    EXPECT_THAT(access_->CheckRenewal("n1", kNow + absl::Hours(100)).status(),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         HasSubstr("certificate has been revoked")));
    Reload();
  }
  // Only a new join brings the name back, as a later generation.
  absl::StatusOr<int64_t> second = access_->JoinGeneration("n1", secret);
  ASSERT_THAT(second.status(), IsOk());
  EXPECT_GT(*second, *first);
  ASSERT_THAT(access_->RecordJoin("n1", secret, *second, "bb00",
                                  kNow + absl::Hours(720), kNow),
              IsOk());
  EXPECT_THAT(access_->CheckNodeCertificate("n1", *second), IsOk());
  EXPECT_THAT(access_->CheckNodeCertificate("n1", *first),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("certificate has been revoked: it is of an "
                                 "earlier join of node \"n1\"")));
  // A certificate of before generations is of none.
  EXPECT_THAT(access_->CheckNodeCertificate("n1", 0),
              StatusIs(absl::StatusCode::kUnauthenticated));
  // Generations are never given twice, across deletes and restarts.
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  Reload();
  absl::StatusOr<int64_t> third = access_->JoinGeneration("n1", secret);
  ASSERT_THAT(third.status(), IsOk());
  EXPECT_GT(*third, *second);
  // A join that raced a delete and a new join is not recorded.
  ASSERT_THAT(access_->RecordJoin("n1", secret, *third, "cc00",
                                  kNow + absl::Hours(720), kNow),
              IsOk());
  EXPECT_THAT(access_->RecordJoin("n1", secret, *second, "cc01",
                                  kNow + absl::Hours(720), kNow),
              StatusIs(absl::StatusCode::kAborted));
}

TEST_F(AccessStoreTest, RenewalsAreRateLimited) {
  const std::string secret = "0123456789abcdef0123";
  absl::StatusOr<int64_t> generation = access_->JoinGeneration("n1", secret);
  ASSERT_THAT(generation.status(), IsOk());
  ASSERT_THAT(access_->RecordJoin("n1", secret, *generation, "aa00",
                                  kNow + absl::Hours(720), kNow),
              IsOk());
  // The first renewal may come at once (a node that lost its reply).
  ASSERT_THAT(access_->RecordRenewal("n1", *generation, "aa01",
                                     kNow + absl::Hours(720), kNow),
              IsOk());
  const absl::Time soon = kNow + kMinRenewalInterval - absl::Seconds(30);
  for (int reloads = 0; reloads < 2; ++reloads) {
    EXPECT_THAT(access_->CheckRenewal("n1", soon).status(),
                StatusIs(absl::StatusCode::kResourceExhausted,
                         HasSubstr("node \"n1\" renewed its certificate at "
                                   "2027-01-15T08:00:00Z; a node may renew "
                                   "once per 1h: try again in 30s")));
    EXPECT_THAT(access_->RecordRenewal("n1", *generation, "aa02",
                                       soon + absl::Hours(720), soon),
                StatusIs(absl::StatusCode::kResourceExhausted));
    Reload();
  }
  const absl::Time later = kNow + kMinRenewalInterval;
  EXPECT_THAT(access_->CheckRenewal("n1", later), IsOkAndHolds(*generation));
  EXPECT_THAT(access_->RecordRenewal("n1", *generation, "aa02",
                                     later + absl::Hours(720), later),
              IsOk());
}

TEST(NodeGenerationTest, IsReadFromTheCertificatesUris) {
  EXPECT_THAT(NodeGenerationOf({}), IsOkAndHolds(0));
  EXPECT_THAT(NodeGenerationOf({"jobsetd://node/n1"}), IsOkAndHolds(0));
  EXPECT_THAT(NodeGenerationOf({"jobsetd://node/n1", NodeGenerationUri(7)}),
              IsOkAndHolds(7));
  for (const char* bad :
       {"jobsetd://node-generation/", "jobsetd://node-generation/x",
        "jobsetd://node-generation/0", "jobsetd://node-generation/-3",
        "jobsetd://node-generation/99999999999999999999"}) {
    EXPECT_THAT(NodeGenerationOf({bad}),
                StatusIs(absl::StatusCode::kUnauthenticated,
                         HasSubstr("malformed node generation")))
        << bad;
  }
}

// Issue 40: a token for a user or group grants what they are bound to, so
// minting one is binding.
TEST_F(AccessStoreTest, ATokenMayGrantOnlyWhatItsCreatorMayBind) {
  api::RbacObject ops = ViewBinding("team-a", "unused");
  api::RoleBinding* b = ops.mutable_binding();
  b->set_kind("ClusterRoleBinding");
  b->mutable_metadata()->set_name("ops-admin");
  b->mutable_metadata()->clear_namespace_();
  b->mutable_subjects(0)->set_kind("Group");
  b->mutable_subjects(0)->set_name("ops");
  b->mutable_role_ref()->set_name("cluster-admin");
  ASSERT_THAT(access_->PutRbac(ops).status(), IsOk());
  ASSERT_THAT(access_->PutRbac(ViewBinding("team-a", "viewer")).status(),
              IsOk());
  // Holds view in team-a only.
  ASSERT_THAT(access_->PutRbac(ViewBinding("team-a", "maker")).status(),
              IsOk());
  auth::UserInfo maker{.name = "maker", .groups = {"system:authenticated"}};
  api::CreateTokenRequest request;
  request.set_name("x");
  request.add_groups("ops");
  EXPECT_THAT(access_->CheckCanGrantToken(maker, request),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("ClusterRoleBinding \"ops-admin\" would "
                                 "grant it what the creator may not bind")));
  request.clear_groups();
  request.add_groups("nobody-binds-this");
  EXPECT_THAT(access_->CheckCanGrantToken(maker, request), IsOk());
  // The user's own bindings count as the groups' do: view in team-a the
  // maker holds, cluster-admin it does not.
  request.set_name("viewer");
  EXPECT_THAT(access_->CheckCanGrantToken(maker, request), IsOk());
  request.set_name("x");
  request.add_groups("ops");
  auth::UserInfo admin{.name = "admin",
                       .groups = {"system:masters", "system:authenticated"}};
  EXPECT_THAT(access_->CheckCanGrantToken(admin, request), IsOk());
}

TEST_F(AccessStoreTest, AJoinCredentialsExpiryIsOnlyBroughtForward) {
  auto credential = access_->RotateJoinCredential(std::nullopt, kNow);
  ASSERT_THAT(credential.status(), IsOk());
  const std::string token = auth::FormatToken(*credential);
  ASSERT_THAT(access_->LimitJoinCredentialExpiry(kNow + absl::Hours(24)),
              IsOk());
  ASSERT_THAT(access_->LimitJoinCredentialExpiry(kNow + absl::Hours(48)),
              IsOk());
  Reload();
  EXPECT_THAT(access_->CheckJoinCredential(token, kNow + absl::Hours(23)),
              IsOk());
  EXPECT_THAT(access_->CheckJoinCredential(token, kNow + absl::Hours(24)),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "join token is invalid or expired"));
}

TEST_F(AccessStoreTest, RbacObjectsAreCheckedStoredAndReloaded) {
  auth::UserInfo v{.name = "v", .groups = {"system:authenticated"}};
  auth::Attributes list{.verb = "list",
                        .api_group = "jobset.x-k8s.io",
                        .resource = "jobsets",
                        .namespace_ = "team-a"};
  EXPECT_FALSE(access_->Allows(v, list));
  ASSERT_THAT(access_->PutRbac(ViewBinding("team-a", "v")).status(), IsOk());
  EXPECT_TRUE(access_->Allows(v, list));
  Reload();
  EXPECT_TRUE(access_->Allows(v, list));
  api::RbacObject bad = ViewBinding("", "v");  // A RoleBinding needs one.
  EXPECT_THAT(access_->PutRbac(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  api::RbacObjectRef ref;
  ref.set_kind("RoleBinding");
  ref.set_namespace_("team-a");
  ref.set_name("view-v");
  ASSERT_THAT(access_->RemoveRbac(ref).status(), IsOk());
  Reload();
  EXPECT_FALSE(access_->Allows(v, list));
  EXPECT_THAT(access_->ListRbac("RoleBinding", "team-a"), IsEmpty());
}

// Built-in roles are the binary's, never the store's: a cluster upgraded
// from a version whose view knew no Kueue objects (or that somehow stored
// its own view) gets the new rules at its next start.
TEST_F(AccessStoreTest, BuiltInRolesComeFromTheBinaryAfterAnUpgrade) {
  ASSERT_THAT(access_->PutRbac(ViewBinding("team-a", "v")).status(), IsOk());
  api::RbacObject old_view;
  api::Role* role = old_view.mutable_role();
  role->set_api_version("rbac.authorization.k8s.io/v1");
  role->set_kind("ClusterRole");
  role->mutable_metadata()->set_name("view");
  api::PolicyRule* rule = role->add_rules();
  rule->add_verbs("get");
  rule->add_api_groups("jobset.x-k8s.io");
  rule->add_resources("jobsets");
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put("rbac/ClusterRole//view",
                                             old_view.SerializeAsString()))
                  .status(),
              IsOk());
  Reload();
  auth::UserInfo v{.name = "v", .groups = {"system:authenticated"}};
  for (absl::string_view verb : {"get", "list", "watch"}) {
    EXPECT_TRUE(access_->Allows(v, {.verb = std::string(verb),
                                    .api_group = "kueue.x-k8s.io",
                                    .resource = "localqueues",
                                    .namespace_ = "team-a"}))
        << verb;
  }
  EXPECT_TRUE(access_->Allows(v, {.verb = "list",
                                  .api_group = "jobset.x-k8s.io",
                                  .resource = "jobsets",
                                  .namespace_ = "team-a"}));
  EXPECT_FALSE(access_->Allows(v, {.verb = "create",
                                   .api_group = "kueue.x-k8s.io",
                                   .resource = "localqueues",
                                   .namespace_ = "team-a"}));
}

TEST_F(AccessStoreTest, AStoredRecordThatDoesNotDecodeIsSkipped) {
  ASSERT_THAT(access_->PutRbac(ViewBinding("team-a", "v")).status(), IsOk());
  ASSERT_THAT(store_
                  .Commit(store::Batch()
                              .Put("auth/tokens/x", "\xff\xff")
                              .Put("rbac/RoleBinding/team-b/y", "\xff")
                              .Put("auth/join", "\xff"))
                  .status(),
              IsOk());
  Reload();
  EXPECT_THAT(access_->ListTokens(), IsEmpty());
  EXPECT_EQ(access_->ListRbac("RoleBinding", "").size(), 1);
  EXPECT_THAT(access_->CheckJoinCredential("abcdef.0123456789abcdef", kNow),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

}  // namespace
}  // namespace jobset::scheduler
