#include "scheduler/auth/access_store.h"

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "auth/tokens.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
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
  request.add_groups("system:nodes");
  EXPECT_THAT(
      access_->CreateToken(request, "admin", kNow).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("groups[0]")));
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
  ASSERT_THAT(
      access_->RecordJoin("n1", secret, "aa01", kNow + absl::Hours(1), kNow),
      IsOk());
  EXPECT_THAT(access_->RecordJoin("n1", "another-secret-0000", "aa02",
                                  kNow + absl::Hours(1), kNow),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("node name \"n1\" is already registered")));
  ASSERT_THAT(access_->RecordRenewal("n1", "aa03", kNow + absl::Hours(2)),
              IsOk());
  EXPECT_THAT(access_->RecordRenewal("n2", "aa04", kNow),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(access_->RevokeNode("n1"), IsOk());
  EXPECT_TRUE(access_->IsRevoked("aa01"));
  EXPECT_TRUE(access_->IsRevoked("aa03"));
  EXPECT_FALSE(access_->IsRevoked("aa02"));  // Never issued.
  Reload();
  EXPECT_TRUE(access_->IsRevoked("aa01"));
  // The name is free again: a new node may join under it.
  EXPECT_THAT(access_->RecordJoin("n1", "another-secret-0000", "aa05",
                                  kNow + absl::Hours(1), kNow),
              IsOk());
  EXPECT_THAT(access_->RevokeNode("n9"), StatusIs(absl::StatusCode::kNotFound));
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
