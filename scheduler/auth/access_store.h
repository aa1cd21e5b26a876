#ifndef JOBSET_SCHEDULER_AUTH_ACCESS_STORE_H_
#define JOBSET_SCHEDULER_AUTH_ACCESS_STORE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/rbac.h"
#include "auth/tokens.h"
#include "proto/auth.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// jobsetd's identity records: users' bearer tokens, the join token, the
// nodes that joined, revoked certificate serials, and the RBAC objects. Kept
// in the store (under "auth/" and "rbac/") and in memory: every change is
// committed, synced, before the memory copy changes and before it is
// acknowledged, so that a crash loses nothing acknowledged; every request
// reads only the memory copy. Only secrets' SHA-256 are stored. jobsetd is
// the records' only writer. Thread-safe.
class AccessStore {
 public:
  // The stored records (one that does not decode is logged and skipped);
  // an error only if the store cannot be read.
  static absl::StatusOr<std::unique_ptr<AccessStore>> Load(store::Store* store);

  // ---- users' bearer tokens ----

  // Validates the name (a Kubernetes user name: 1-253 bytes of letters,
  // digits and "-._@:"; not "system:..."), groups and ttl (at most 8760h;
  // unset 720h); kAlreadyExists if the name has a token.
  absl::StatusOr<api::CreateTokenResponse> CreateToken(
      const api::CreateTokenRequest& request, absl::string_view created_by,
      absl::Time now);
  // The bootstrap administrator's token (user `name`, "admin" unless
  // replicas each keep their own, in system:masters, no expiry), replacing
  // any earlier one of that name; returned once.
  absl::StatusOr<std::string> ResetAdminToken(absl::Time now,
                                              absl::string_view name = "admin");
  std::vector<api::TokenInfo> ListTokens() const;
  absl::StatusOr<api::TokenInfo> DeleteToken(absl::string_view name);
  // The user `token` ("<id>.<secret>") authenticates at `now`; the same
  // kUnauthenticated "invalid or expired token" whatever is wrong with it.
  absl::StatusOr<auth::UserInfo> AuthenticateToken(absl::string_view token,
                                                   absl::Time now) const;

  // ---- the join token ----

  // Replaces the join credential (nodes already joined keep their
  // certificates); nullopt: it never expires.
  absl::StatusOr<auth::TokenParts> RotateJoinCredential(
      std::optional<absl::Time> expires, absl::Time now);
  // kUnauthenticated "join token is invalid or expired" unless `credential`
  // is the current join credential and unexpired at `now`.
  absl::Status CheckJoinCredential(absl::string_view credential,
                                   absl::Time now) const;

  // ---- nodes ----

  // Records that `name` joined with `node_secret` and got `serial`. A name
  // that joined before must bring the same secret, else kPermissionDenied
  // `node name "b" is already registered`.
  absl::Status RecordJoin(absl::string_view name, absl::string_view node_secret,
                          absl::string_view serial, absl::Time not_after,
                          absl::Time now);
  // Records a renewed certificate of a joined node (kNotFound otherwise).
  absl::Status RecordRenewal(absl::string_view name, absl::string_view serial,
                             absl::Time not_after);
  // Revokes every certificate issued to `name` and forgets it (it must join
  // again). kNotFound if it never joined.
  absl::Status RevokeNode(absl::string_view name);
  bool IsRevoked(absl::string_view serial) const;

  // ---- RBAC ----

  // Validates and stores (create or replace); built-ins are refused.
  absl::StatusOr<api::RbacObject> PutRbac(const api::RbacObject& object);
  absl::StatusOr<api::RbacObject> RemoveRbac(const api::RbacObjectRef& ref);
  std::vector<api::RbacObject> ListRbac(absl::string_view kind,
                                        absl::string_view namespace_) const;
  bool Allows(const auth::UserInfo& user, const auth::Attributes& attrs,
              std::string* reason = nullptr) const;
  // The escalation check of a create or update of `object` (auth/rbac.h).
  absl::Status CheckCanApply(const auth::UserInfo& user,
                             const api::RbacObject& object) const;

 private:
  explicit AccessStore(store::Store* store) : store_(store) {}
  absl::Status LoadAll();
  absl::Status CommitPut(absl::string_view key,
                         const google::protobuf::Message& value);
  absl::Status CommitDelete(absl::string_view key);
  absl::StatusOr<api::CreateTokenResponse> StoreToken(api::TokenInfo info,
                                                      absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::Store* const store_;
  // Writers hold it across their commit, so that the store and the memory
  // copy change in the same order.
  mutable absl::Mutex mu_;
  // By name, and the name of each token id.
  std::map<std::string, api::StoredToken> tokens_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> token_names_
      ABSL_GUARDED_BY(mu_);
  std::optional<api::StoredJoinToken> join_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::NodeIdentity> nodes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> revoked_ ABSL_GUARDED_BY(mu_);
  auth::RbacPolicy rbac_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_ACCESS_STORE_H_
