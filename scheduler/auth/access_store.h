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

// The least time between two renewals of a node's certificate (which lives
// 30 days and is renewed at 70-90% of that).
inline constexpr absl::Duration kMinRenewalInterval = absl::Hours(1);

// The URI SAN that names a node certificate's generation.
std::string NodeGenerationUri(int64_t generation);
// The generation a certificate's URI SANs name; 0 if none does (issued
// before generations); kUnauthenticated if one is malformed.
absl::StatusOr<int64_t> NodeGenerationOf(const std::vector<std::string>& uris);

// CreateToken's checks of `request` (see there), kInvalidArgument naming
// the field.
absl::Status ValidateCreateTokenRequest(const api::CreateTokenRequest& request);

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
  // digits and "-._@:"; not "system:..."), groups (none "system:...": those
  // are Kubernetes' own, system:masters above all) and ttl (at most 8760h;
  // unset 720h); kAlreadyExists if the name has a token.
  absl::StatusOr<api::CreateTokenResponse> CreateToken(
      const api::CreateTokenRequest& request, absl::string_view created_by,
      absl::Time now);
  // The bootstrap administrator's token (user `name`, "admin" unless
  // replicas each keep their own, in system:masters, no expiry), replacing
  // any earlier one of that name; returned once.
  absl::StatusOr<std::string> ResetAdminToken(absl::Time now,
                                              absl::string_view name = "admin");
  // OK if the token with this id exists and is unexpired at `now`;
  // kUnauthenticated otherwise (for streams opened with it).
  absl::Status CheckTokenStands(absl::string_view id, absl::Time now) const;
  // Whether a token with this id exists (the failure limiter counts a
  // known id's failures apart from an address's guesses).
  bool HasTokenId(absl::string_view id) const;
  // The check of a create of `request` by `caller`: a token for a user and
  // groups grants what their bindings grant, so `caller` must be allowed to
  // make each of those bindings (Kubernetes' escalation check, with
  // "bind"); kPermissionDenied in kube-apiserver's words otherwise.
  absl::Status CheckCanGrantToken(const auth::UserInfo& caller,
                                  const api::CreateTokenRequest& request) const;
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
  // Brings the join credential's expiry forward to `latest` if it expires
  // later or never (a shorter --join_token_ttl after a restart); the
  // stored record changes, the credential does not.
  absl::Status LimitJoinCredentialExpiry(absl::Time latest);
  // kUnauthenticated "join token is invalid or expired" unless `credential`
  // is the current join credential and unexpired at `now`.
  absl::Status CheckJoinCredential(absl::string_view credential,
                                   absl::Time now) const;

  // ---- nodes ----
  //
  // A node is its join: each join of a name that is not joined gets a new
  // generation, higher than any before it, and every certificate issued
  // under it carries it (NodeGenerationUri). A certificate authenticates
  // only while its node is joined and of that generation: a delete keeps out
  // every certificate ever issued to the name, however many renewals there
  // were, until a new join with the join token.

  // The generation the certificate of a join of `name` carries: the node's
  // if it joined before with the same `node_secret`, else a new one
  // (recorded before it is returned, so never given twice).
  // kPermissionDenied `node name "b" is already registered` if it joined
  // with another secret.
  absl::StatusOr<int64_t> JoinGeneration(absl::string_view name,
                                         absl::string_view node_secret);
  // Records that `name` joined with `node_secret` and got `serial` of
  // `generation` (from JoinGeneration; kAborted if the node joined anew in
  // between). A name that joined before must bring the same secret, else
  // kPermissionDenied `node name "b" is already registered`.
  absl::Status RecordJoin(absl::string_view name, absl::string_view node_secret,
                          int64_t generation, absl::string_view serial,
                          absl::Time not_after, absl::Time now);
  // The generation a renewed certificate of `name` carries, if one may be
  // issued at `now`: kResourceExhausted naming the wait within
  // kMinRenewalInterval of the last renewal; CheckNodeCertificate's error if
  // `name` is not joined.
  absl::StatusOr<int64_t> CheckRenewal(absl::string_view name,
                                       absl::Time now) const;
  // Records a renewed certificate of `name` (CheckRenewal's checks again,
  // and `generation` must still be the node's).
  absl::Status RecordRenewal(absl::string_view name, int64_t generation,
                             absl::string_view serial, absl::Time not_after,
                             absl::Time now);
  // Revokes every certificate issued to `name` and forgets it (it must join
  // again). kNotFound if it never joined.
  absl::Status RevokeNode(absl::string_view name);
  // OK if a certificate of node `name` carrying `generation` (0: none) is
  // of its current join; else kUnauthenticated "certificate has been
  // revoked: ..." saying why (the agent stops retrying on "revoked").
  absl::Status CheckNodeCertificate(absl::string_view name,
                                    int64_t generation) const;
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
  // kResourceExhausted if `node` renewed less than kMinRenewalInterval
  // before `now`.
  absl::Status CheckRenewalLocked(const api::NodeIdentity& node,
                                  absl::Time now) const
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
  // The last node generation given ("auth/node-generation").
  int64_t last_generation_ ABSL_GUARDED_BY(mu_) = 0;
  auth::RbacPolicy rbac_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_ACCESS_STORE_H_
