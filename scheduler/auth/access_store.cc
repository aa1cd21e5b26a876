#include "scheduler/auth/access_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "store/decode.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

constexpr absl::string_view kTokensPrefix = "auth/tokens/";
constexpr absl::string_view kJoinKey = "auth/join";
constexpr absl::string_view kNodesPrefix = "auth/nodes/";
constexpr absl::string_view kRevokedPrefix = "auth/revoked/";
constexpr absl::string_view kGenerationKey = "auth/node-generation";
constexpr absl::string_view kGenerationUriPrefix = "jobsetd://node-generation/";
constexpr absl::string_view kRbacPrefix = "rbac/";

constexpr absl::Duration kDefaultTokenTtl = absl::Hours(720);
constexpr absl::Duration kMaxTokenTtl = absl::Hours(8760);
constexpr int kMaxGroups = 64;
constexpr size_t kMaxNameBytes = 253;
// Certificates a node keeps at once (renewals replace the oldest).
constexpr int kMaxCertificatesPerNode = 8;

constexpr absl::string_view kInvalidToken = "invalid or expired token";
constexpr absl::string_view kInvalidJoinToken =
    "join token is invalid or expired";

int64_t Seconds(absl::Time t) { return absl::ToUnixSeconds(t); }
absl::Time FromSeconds(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds());
}

// A Kubernetes user or group name as jobsetd accepts it.
absl::Status CheckPrincipal(absl::string_view field, absl::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": must be 1 to ", kMaxNameBytes, " bytes, got ", name.size()));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
        c != '.' && c != '_' && c != '@' && c != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": \"", name,
                       "\" may hold only letters, digits and \"-._@:\""));
    }
  }
  return absl::OkStatus();
}

std::string RbacKey(absl::string_view kind, absl::string_view ns,
                    absl::string_view name) {
  return absl::StrCat(kRbacPrefix, kind, "/", ns, "/", name);
}

api::RbacObjectRef RefOf(const api::RbacObject& object) {
  api::RbacObjectRef ref;
  const api::ObjectMeta& meta = object.has_role() ? object.role().metadata()
                                                  : object.binding().metadata();
  ref.set_kind(object.has_role() ? object.role().kind()
                                 : object.binding().kind());
  ref.set_namespace_(meta.namespace_());
  ref.set_name(meta.name());
  return ref;
}

// Records a certificate issued to `node`, forgetting the oldest beyond
// kMaxCertificatesPerNode.
void AddCertificate(api::NodeIdentity& node, absl::string_view serial,
                    absl::Time not_after) {
  while (node.certificates_size() >= kMaxCertificatesPerNode) {
    node.mutable_certificates()->DeleteSubrange(0, 1);
  }
  api::NodeIdentity::Issued* issued = node.add_certificates();
  issued->set_serial(std::string(serial));
  issued->mutable_not_after()->set_seconds(Seconds(not_after));
}

// kUnauthenticated with the wording the agent stops retrying on.
absl::Status Revoked(absl::string_view why) {
  return absl::UnauthenticatedError(
      absl::StrCat("certificate has been revoked: ", why));
}

// kPermissionDenied: the name is another node's.
absl::Status NameTaken(absl::string_view name) {
  return absl::PermissionDeniedError(absl::StrCat(
      "node name \"", name,
      "\" is already registered (by a node with another node secret; "
      "`jobsetctl delete node ",
      name, "` frees the name)"));
}

// A certificate of `name`, which is not joined: it was deleted.
absl::Status NotJoined(absl::string_view name) {
  return Revoked(absl::StrCat("node \"", name,
                              "\" was deleted (or never joined); join again "
                              "with a join token (--join_token_file)"));
}

}  // namespace

std::string NodeGenerationUri(int64_t generation) {
  return absl::StrCat(kGenerationUriPrefix, generation);
}

absl::StatusOr<int64_t> NodeGenerationOf(const std::vector<std::string>& uris) {
  for (const std::string& uri : uris) {
    absl::string_view rest = uri;
    if (!absl::ConsumePrefix(&rest, kGenerationUriPrefix)) continue;
    int64_t generation = 0;
    if (!absl::SimpleAtoi(rest, &generation) || generation <= 0) {
      return absl::UnauthenticatedError(absl::StrCat(
          "certificate names a malformed node generation (URI SAN ", uri, ")"));
    }
    return generation;
  }
  return 0;
}

absl::StatusOr<std::unique_ptr<AccessStore>> AccessStore::Load(
    store::Store* store) {
  auto access = absl::WrapUnique(new AccessStore(store));
  JOBSET_RETURN_IF_ERROR(access->LoadAll());
  return access;
}

// A stored record that does not decode is skipped, never a reason not to
// start: each kind fails closed without it (a token that does not
// authenticate, a binding that grants nothing; a revocation is its key).
static absl::Status Skipped(const store::KeyValue& kv,
                            const absl::Status& why) {
  JOBSET_LOG(ERROR) << "skipping stored identity record " << kv.key << ": "
                    << why;
  return absl::OkStatus();
}

absl::Status AccessStore::LoadAll() {
  absl::MutexLock lock(&mu_);
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      *store_, kTokensPrefix,
      [&](const store::KeyValue& kv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto token = store::DecodeValue<api::StoredToken>(kv);
        if (!token.ok()) return Skipped(kv, token.status());
        token_names_[token->info().id()] = token->info().name();
        tokens_[token->info().name()] = *std::move(token);
        return absl::OkStatus();
      }));
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> join,
                          store_->Get(kJoinKey));
  if (join.has_value()) {
    auto decoded = store::DecodeValue<api::StoredJoinToken>(*join);
    if (decoded.ok()) {
      join_ = *std::move(decoded);
    } else {
      JOBSET_RETURN_IF_ERROR(Skipped(*join, decoded.status()));
    }
  }
  JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> generation,
                          store_->Get(kGenerationKey));
  if (generation.has_value()) {
    int64_t last = 0;
    if (absl::SimpleAtoi(generation->value, &last)) {
      last_generation_ = last;
    } else {
      // Never a reason to give a generation twice: each one given was
      // committed to this key, so its last write's revision is at least
      // the last one given (and the nodes' own bound it below).
      JOBSET_RETURN_IF_ERROR(Skipped(
          *generation, absl::DataLossError("not a decimal generation")));
      last_generation_ = generation->mod_revision;
    }
  }
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      *store_, kNodesPrefix,
      [&](const store::KeyValue& kv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto node = store::DecodeValue<api::NodeIdentity>(kv);
        if (!node.ok()) return Skipped(kv, node.status());
        last_generation_ = std::max(last_generation_, node->generation());
        nodes_[node->name()] = *std::move(node);
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      *store_, kRevokedPrefix,
      [&](const store::KeyValue& kv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        revoked_.insert(kv.key.substr(kRevokedPrefix.size()));
        return absl::OkStatus();
      }));
  return store::ScanAll(
      *store_, kRbacPrefix,
      [&](const store::KeyValue& kv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto object = store::DecodeValue<api::RbacObject>(kv);
        if (!object.ok()) return Skipped(kv, object.status());
        if (absl::Status put = rbac_.Put(*object); !put.ok()) {
          return Skipped(kv, put);
        }
        return absl::OkStatus();
      });
}

absl::Status AccessStore::CommitPut(absl::string_view key,
                                    const google::protobuf::Message& value) {
  store::Batch batch;
  batch.Put(key, value.SerializeAsString());
  return store_->Commit(batch).status();
}

absl::Status AccessStore::CommitDelete(absl::string_view key) {
  store::Batch batch;
  batch.Delete(key);
  return store_->Commit(batch).status();
}

// ---- tokens ----

absl::StatusOr<api::CreateTokenResponse> AccessStore::StoreToken(
    api::TokenInfo info, absl::Time now) {
  auth::TokenParts parts = auth::NewUserToken();
  while (token_names_.contains(parts.id)) parts = auth::NewUserToken();
  info.set_id(parts.id);
  info.mutable_creation_timestamp()->set_seconds(Seconds(now));
  api::StoredToken stored;
  *stored.mutable_info() = info;
  stored.set_secret_sha256(auth::Sha256Hex(parts.secret));
  JOBSET_RETURN_IF_ERROR(
      CommitPut(absl::StrCat(kTokensPrefix, info.name()), stored));
  if (auto old = tokens_.find(info.name()); old != tokens_.end()) {
    token_names_.erase(old->second.info().id());
  }
  token_names_[parts.id] = info.name();
  tokens_[info.name()] = std::move(stored);
  api::CreateTokenResponse response;
  *response.mutable_info() = std::move(info);
  response.set_token(auth::FormatToken(parts));
  return response;
}

absl::Status ValidateCreateTokenRequest(
    const api::CreateTokenRequest& request) {
  JOBSET_RETURN_IF_ERROR(CheckPrincipal("name", request.name()));
  if (absl::StartsWith(request.name(), "system:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: \"", request.name(),
                     "\": names starting with \"system:\" are reserved"));
  }
  if (request.groups_size() > kMaxGroups) {
    return absl::InvalidArgumentError(absl::StrCat(
        "groups: at most ", kMaxGroups, ", got ", request.groups_size()));
  }
  for (int i = 0; i < request.groups_size(); ++i) {
    JOBSET_RETURN_IF_ERROR(
        CheckPrincipal(absl::StrCat("groups[", i, "]"), request.groups(i)));
    // Kubernetes' own groups are not for tokens: system:masters is
    // cluster-admin past every RBAC check, system:nodes is for node
    // certificates, the others jobsetd adds itself.
    if (absl::StartsWith(request.groups(i), "system:")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "groups[", i, "]: \"", request.groups(i),
          "\" may not be granted by a token (groups starting with "
          "\"system:\" are reserved; bind a role to a group of your own "
          "instead)"));
    }
  }
  if (request.has_ttl()) {
    absl::Duration ttl = absl::Seconds(request.ttl().seconds());
    if (ttl <= absl::ZeroDuration() || ttl > kMaxTokenTtl) {
      return absl::InvalidArgumentError(
          absl::StrCat("ttl: must be more than 0 and at most ",
                       absl::FormatDuration(kMaxTokenTtl), ", got ",
                       absl::FormatDuration(ttl)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<api::CreateTokenResponse> AccessStore::CreateToken(
    const api::CreateTokenRequest& request, absl::string_view created_by,
    absl::Time now) {
  JOBSET_RETURN_IF_ERROR(ValidateCreateTokenRequest(request));
  const absl::Duration ttl = request.has_ttl()
                                 ? absl::Seconds(request.ttl().seconds())
                                 : kDefaultTokenTtl;
  absl::MutexLock lock(&mu_);
  if (tokens_.contains(request.name())) {
    return absl::AlreadyExistsError(
        absl::StrCat("tokens \"", request.name(),
                     "\" already exists (delete it first to issue a new one)"));
  }
  api::TokenInfo info;
  info.set_name(request.name());
  *info.mutable_groups() = request.groups();
  info.mutable_expiration_timestamp()->set_seconds(Seconds(now + ttl));
  info.set_created_by(std::string(created_by));
  return StoreToken(std::move(info), now);
}

absl::StatusOr<std::string> AccessStore::ResetAdminToken(
    absl::Time now, absl::string_view name) {
  api::TokenInfo info;
  info.set_name(std::string(name));
  info.add_groups(std::string(auth::kMastersGroup));
  info.set_created_by("jobsetd");
  absl::MutexLock lock(&mu_);
  JOBSET_ASSIGN_OR_RETURN(api::CreateTokenResponse created,
                          StoreToken(std::move(info), now));
  return created.token();
}

absl::Status AccessStore::CheckTokenStands(absl::string_view id,
                                           absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto name = token_names_.find(id);
  if (name == token_names_.end()) {
    return absl::UnauthenticatedError(
        absl::StrCat(kInvalidToken, ": the token was deleted"));
  }
  const api::StoredToken& stored = tokens_.at(name->second);
  if (stored.info().has_expiration_timestamp() &&
      FromSeconds(stored.info().expiration_timestamp()) <= now) {
    return absl::UnauthenticatedError(
        absl::StrCat(kInvalidToken, ": the token has expired"));
  }
  return absl::OkStatus();
}

bool AccessStore::HasTokenId(absl::string_view id) const {
  absl::MutexLock lock(&mu_);
  return token_names_.contains(id);
}

absl::Status AccessStore::CheckCanGrantToken(
    const auth::UserInfo& caller,
    const api::CreateTokenRequest& request) const {
  for (const std::string& group : caller.groups) {
    if (group == auth::kMastersGroup) return absl::OkStatus();  // a shortcut
  }
  absl::ReaderMutexLock lock(&mu_);
  for (const api::RbacObject& object : rbac_.List("", "")) {
    if (!object.has_binding()) continue;
    bool names_it = false;
    for (const api::Subject& subject : object.binding().subjects()) {
      if (subject.kind() == "User") {
        names_it = names_it || subject.name() == request.name();
      } else if (subject.kind() == "Group") {
        for (const std::string& group : request.groups()) {
          names_it = names_it || subject.name() == group;
        }
      }
    }
    if (!names_it) continue;
    // As if the caller made this binding: it must hold what it grants (or
    // may "bind" its role).
    if (absl::Status can = rbac_.CheckCanApply(caller, object); !can.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "tokens \"", request.name(), "\" is forbidden: its ",
          object.binding().kind(), " \"", object.binding().metadata().name(),
          "\" would grant it what the creator may not bind: ", can.message()));
    }
  }
  return absl::OkStatus();
}

std::vector<api::TokenInfo> AccessStore::ListTokens() const {
  absl::MutexLock lock(&mu_);
  std::vector<api::TokenInfo> out;
  out.reserve(tokens_.size());
  for (const auto& [name, token] : tokens_) out.push_back(token.info());
  return out;
}

absl::StatusOr<api::TokenInfo> AccessStore::DeleteToken(
    absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = tokens_.find(std::string(name));
  if (it == tokens_.end()) {
    return absl::NotFoundError(absl::StrCat("tokens \"", name, "\" not found"));
  }
  JOBSET_RETURN_IF_ERROR(CommitDelete(absl::StrCat(kTokensPrefix, name)));
  api::TokenInfo info = it->second.info();
  token_names_.erase(info.id());
  tokens_.erase(it);
  return info;
}

absl::StatusOr<auth::UserInfo> AccessStore::AuthenticateToken(
    absl::string_view token, absl::Time now) const {
  absl::StatusOr<auth::TokenParts> parts = auth::ParseToken(token);
  if (!parts.ok()) return absl::UnauthenticatedError(kInvalidToken);
  absl::MutexLock lock(&mu_);
  auto name = token_names_.find(parts->id);
  if (name == token_names_.end()) {
    return absl::UnauthenticatedError(kInvalidToken);
  }
  const api::StoredToken& stored = tokens_.at(name->second);
  if (!auth::ConstantTimeEquals(auth::Sha256Hex(parts->secret),
                                stored.secret_sha256()) ||
      (stored.info().has_expiration_timestamp() &&
       FromSeconds(stored.info().expiration_timestamp()) <= now)) {
    return absl::UnauthenticatedError(kInvalidToken);
  }
  auth::UserInfo user;
  user.name = stored.info().name();
  user.groups.assign(stored.info().groups().begin(),
                     stored.info().groups().end());
  user.groups.emplace_back(auth::kAuthenticatedGroup);
  return user;
}

// ---- the join token ----

absl::StatusOr<auth::TokenParts> AccessStore::RotateJoinCredential(
    std::optional<absl::Time> expires, absl::Time now) {
  auth::TokenParts parts = auth::NewJoinCredential();
  api::StoredJoinToken join;
  join.set_id(parts.id);
  join.set_secret_sha256(auth::Sha256Hex(parts.secret));
  join.mutable_creation_timestamp()->set_seconds(Seconds(now));
  if (expires.has_value()) {
    join.mutable_expiration_timestamp()->set_seconds(Seconds(*expires));
  }
  absl::MutexLock lock(&mu_);
  JOBSET_RETURN_IF_ERROR(CommitPut(kJoinKey, join));
  join_ = std::move(join);
  return parts;
}

absl::Status AccessStore::LimitJoinCredentialExpiry(absl::Time latest) {
  absl::MutexLock lock(&mu_);
  if (!join_.has_value() ||
      (join_->has_expiration_timestamp() &&
       FromSeconds(join_->expiration_timestamp()) <= latest)) {
    return absl::OkStatus();
  }
  api::StoredJoinToken join = *join_;
  join.mutable_expiration_timestamp()->set_seconds(Seconds(latest));
  JOBSET_RETURN_IF_ERROR(CommitPut(kJoinKey, join));
  join_ = std::move(join);
  return absl::OkStatus();
}

absl::Status AccessStore::CheckJoinCredential(absl::string_view credential,
                                              absl::Time now) const {
  absl::StatusOr<auth::TokenParts> parts = auth::ParseToken(credential);
  absl::MutexLock lock(&mu_);
  if (!parts.ok() || !join_.has_value() || parts->id != join_->id() ||
      !auth::ConstantTimeEquals(auth::Sha256Hex(parts->secret),
                                join_->secret_sha256()) ||
      (join_->has_expiration_timestamp() &&
       FromSeconds(join_->expiration_timestamp()) <= now)) {
    return absl::UnauthenticatedError(kInvalidJoinToken);
  }
  return absl::OkStatus();
}

// ---- nodes ----

absl::StatusOr<int64_t> AccessStore::JoinGeneration(
    absl::string_view name, absl::string_view node_secret) {
  absl::MutexLock lock(&mu_);
  if (auto it = nodes_.find(std::string(name)); it != nodes_.end()) {
    if (!auth::ConstantTimeEquals(auth::Sha256Hex(node_secret),
                                  it->second.node_secret_sha256())) {
      return NameTaken(name);
    }
    return it->second.generation();
  }
  const int64_t next = last_generation_ + 1;
  store::Batch batch;
  batch.Put(kGenerationKey, absl::StrCat(next));
  JOBSET_RETURN_IF_ERROR(store_->Commit(batch).status());
  last_generation_ = next;
  return next;
}

absl::Status AccessStore::RecordJoin(absl::string_view name,
                                     absl::string_view node_secret,
                                     int64_t generation,
                                     absl::string_view serial,
                                     absl::Time not_after, absl::Time now) {
  absl::MutexLock lock(&mu_);
  api::NodeIdentity node;
  std::string secret_hash = auth::Sha256Hex(node_secret);
  if (auto it = nodes_.find(std::string(name)); it != nodes_.end()) {
    if (!auth::ConstantTimeEquals(secret_hash,
                                  it->second.node_secret_sha256())) {
      return NameTaken(name);
    }
    if (it->second.generation() != generation) {
      return absl::AbortedError(absl::StrCat(
          "node \"", name, "\" joined again meanwhile (generation ",
          it->second.generation(), ", not ", generation, "); join again"));
    }
    node = it->second;
  } else {
    node.set_name(std::string(name));
    node.set_node_secret_sha256(secret_hash);
    node.mutable_join_timestamp()->set_seconds(Seconds(now));
    node.set_generation(generation);
  }
  AddCertificate(node, serial, not_after);
  JOBSET_RETURN_IF_ERROR(CommitPut(absl::StrCat(kNodesPrefix, name), node));
  nodes_[std::string(name)] = std::move(node);
  return absl::OkStatus();
}

absl::Status AccessStore::CheckRenewalLocked(const api::NodeIdentity& node,
                                             absl::Time now) const {
  if (!node.has_renewal_timestamp()) return absl::OkStatus();
  const absl::Time last = FromSeconds(node.renewal_timestamp());
  if (now - last >= kMinRenewalInterval) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "node \"", node.name(), "\" renewed its certificate at ",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", last, absl::UTCTimeZone()),
      "; a node may renew once per ", absl::FormatDuration(kMinRenewalInterval),
      ": try again in ",
      absl::FormatDuration(
          absl::Ceil(kMinRenewalInterval - (now - last), absl::Seconds(1)))));
}

absl::StatusOr<int64_t> AccessStore::CheckRenewal(absl::string_view name,
                                                  absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) return NotJoined(name);
  JOBSET_RETURN_IF_ERROR(CheckRenewalLocked(it->second, now));
  return it->second.generation();
}

absl::Status AccessStore::RecordRenewal(absl::string_view name,
                                        int64_t generation,
                                        absl::string_view serial,
                                        absl::Time not_after, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) return NotJoined(name);
  if (it->second.generation() != generation) {
    return Revoked(absl::StrCat("node \"", name,
                                "\" joined again while this renewal was "
                                "issued; use the new join's certificate"));
  }
  JOBSET_RETURN_IF_ERROR(CheckRenewalLocked(it->second, now));
  api::NodeIdentity node = it->second;
  AddCertificate(node, serial, not_after);
  node.mutable_renewal_timestamp()->set_seconds(Seconds(now));
  JOBSET_RETURN_IF_ERROR(CommitPut(absl::StrCat(kNodesPrefix, name), node));
  it->second = std::move(node);
  return absl::OkStatus();
}

absl::Status AccessStore::RevokeNode(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("node \"", name, "\" has not joined"));
  }
  // Forgetting the node is the revocation (CheckNodeCertificate); the
  // serials it kept are recorded too, for certificates of before
  // generations.
  store::Batch batch;
  for (const api::NodeIdentity::Issued& issued : it->second.certificates()) {
    api::RevokedCertificate revoked;
    revoked.set_serial(issued.serial());
    revoked.set_node_name(std::string(name));
    *revoked.mutable_not_after() = issued.not_after();
    batch.Put(absl::StrCat(kRevokedPrefix, issued.serial()),
              revoked.SerializeAsString());
  }
  batch.Delete(absl::StrCat(kNodesPrefix, name));
  JOBSET_RETURN_IF_ERROR(store_->Commit(batch).status());
  for (const api::NodeIdentity::Issued& issued : it->second.certificates()) {
    revoked_.insert(issued.serial());
  }
  nodes_.erase(it);
  return absl::OkStatus();
}

absl::Status AccessStore::CheckNodeCertificate(absl::string_view name,
                                               int64_t generation) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) return NotJoined(name);
  if (it->second.generation() != generation) {
    return Revoked(absl::StrCat(
        "it is of an earlier join of node \"", name, "\" (generation ",
        generation, "; the node was deleted and joined again as generation ",
        it->second.generation(), ")"));
  }
  return absl::OkStatus();
}

bool AccessStore::IsRevoked(absl::string_view serial) const {
  absl::MutexLock lock(&mu_);
  return revoked_.contains(serial);
}

// ---- RBAC ----

absl::StatusOr<api::RbacObject> AccessStore::PutRbac(
    const api::RbacObject& object) {
  JOBSET_RETURN_IF_ERROR(auth::ValidateRbacObject(object));
  api::RbacObjectRef ref = RefOf(object);
  absl::MutexLock lock(&mu_);
  // Put checks what only the policy knows (built-ins) before the commit.
  auth::RbacPolicy trial = rbac_;
  JOBSET_RETURN_IF_ERROR(trial.Put(object));
  JOBSET_RETURN_IF_ERROR(
      CommitPut(RbacKey(ref.kind(), ref.namespace_(), ref.name()), object));
  rbac_ = std::move(trial);
  return object;
}

absl::StatusOr<api::RbacObject> AccessStore::RemoveRbac(
    const api::RbacObjectRef& ref) {
  absl::MutexLock lock(&mu_);
  auth::RbacPolicy trial = rbac_;
  JOBSET_ASSIGN_OR_RETURN(api::RbacObject removed, trial.Remove(ref));
  JOBSET_RETURN_IF_ERROR(
      CommitDelete(RbacKey(ref.kind(), ref.namespace_(), ref.name())));
  rbac_ = std::move(trial);
  return removed;
}

std::vector<api::RbacObject> AccessStore::ListRbac(
    absl::string_view kind, absl::string_view namespace_) const {
  absl::MutexLock lock(&mu_);
  return rbac_.List(kind, namespace_);
}

bool AccessStore::Allows(const auth::UserInfo& user,
                         const auth::Attributes& attrs,
                         std::string* reason) const {
  absl::ReaderMutexLock lock(&mu_);
  return rbac_.Allows(user, attrs, reason);
}

absl::Status AccessStore::CheckCanApply(const auth::UserInfo& user,
                                        const api::RbacObject& object) const {
  absl::ReaderMutexLock lock(&mu_);
  return rbac_.CheckCanApply(user, object);
}

}  // namespace jobset::scheduler
