#include "scheduler/auth/access_service.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/tokens.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "store/keys.h"
#include "store/snapshot.h"

namespace jobset::scheduler {
namespace {

constexpr absl::Duration kMaxJoinTtl = absl::Hours(24 * 3650);

grpc::Status Denied(const absl::Status& status) { return ToGrpcStatus(status); }

auth::Attributes TokenAttrs(absl::string_view verb, absl::string_view name) {
  return {.verb = std::string(verb),
          .api_group = std::string(auth::kJobSetGroup),
          .resource = "tokens",
          .name = std::string(name)};
}

// "Role" -> "roles", ...; empty for another kind.
absl::Status UnknownKind(absl::string_view kind) {
  return absl::InvalidArgumentError(absl::StrCat(
      "kind: Unsupported value: \"", kind,
      "\": supported values: \"Role\", \"ClusterRole\", \"RoleBinding\", "
      "\"ClusterRoleBinding\""));
}

auth::Attributes RbacAttrs(absl::string_view verb, absl::string_view kind,
                           absl::string_view ns, absl::string_view name) {
  return {.verb = std::string(verb),
          .api_group = std::string(auth::kRbacGroup),
          .resource = std::string(auth::ResourceOfRbacKind(kind)),
          .namespace_ = std::string(ns),
          .name = std::string(name)};
}

constexpr size_t kSnapshotChunkBytes = 1 << 20;

}  // namespace

grpc::Status AccessServiceImpl::SaveSnapshot(
    grpc::ServerContext* context, const api::SaveSnapshotRequest*,
    grpc::ServerWriter<api::SnapshotChunk>* writer) {
  // Its own verb ("save"): no read grant reaches every Secret at once.
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, auth::SaveSnapshotAttributes());
  std::string pending;
  auto send = [&](absl::string_view bytes) -> absl::Status {
    api::SnapshotChunk chunk;
    chunk.set_data(std::string(bytes));
    if (!writer->Write(chunk)) {
      return absl::CancelledError("snapshot: the client went away");
    }
    return absl::OkStatus();
  };
  store::SnapshotWriter snapshot([&](absl::string_view bytes) {
    pending.append(bytes.data(), bytes.size());
    while (pending.size() >= kSnapshotChunkBytes) {
      JOBSET_RETURN_IF_ERROR(
          send(absl::string_view(pending).substr(0, kSnapshotChunkBytes)));
      pending.erase(0, kSnapshotChunkBytes);
    }
    return absl::OkStatus();
  });
  bool begun = false;
  absl::StatusOr<int64_t> read = store_->ReadAll(
      "",
      [&](int64_t revision) {
        // What was sent cannot be taken back: a read that must start over
        // (etcd compacted its revision) fails the call instead.
        if (begun) {
          return absl::AbortedError(
              "snapshot: the store compacted the revision being read; try "
              "again");
        }
        begun = true;
        return snapshot.Begin(revision);
      },
      [&](const store::KeyValue& kv) {
        // Leader-election keys are bound to leases of the etcd they were
        // made on; a restored cluster elects its own.
        if (absl::StartsWith(kv.key, store::keys::kLeader)) {
          return absl::OkStatus();
        }
        if (context->IsCancelled()) {
          return absl::CancelledError("snapshot: the call was cancelled");
        }
        return snapshot.Add(kv.key, kv.value);
      });
  if (!read.ok()) return ToGrpcStatus(read.status());
  absl::StatusOr<store::SnapshotInfo> info = snapshot.Finish();
  if (!info.ok()) return ToGrpcStatus(info.status());
  api::SnapshotChunk last;
  last.set_data(std::move(pending));
  last.set_last(true);
  last.set_revision(info->revision);
  last.set_keys(info->keys);
  last.set_bytes(info->bytes);
  if (!writer->Write(last)) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "snapshot: the client went away");
  }
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::CreateToken(
    grpc::ServerContext* context, const api::CreateTokenRequest* request,
    api::CreateTokenResponse* response) {
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, TokenAttrs("create", request->name()));
  if (!caller.ok()) return Denied(caller.status());
  // What the token's user and groups are bound to, the caller must be able
  // to bind: minting a token is granting.
  if (absl::Status valid = ValidateCreateTokenRequest(*request); !valid.ok()) {
    return ToGrpcStatus(valid);
  }
  if (absl::Status can =
          auth_->access()->CheckCanGrantToken(caller->user, *request);
      !can.ok()) {
    return ToGrpcStatus(can);
  }
  absl::StatusOr<api::CreateTokenResponse> created =
      auth_->access()->CreateToken(*request, caller->user.name,
                                   auth_->clock()->Now());
  if (!created.ok()) return ToGrpcStatus(created.status());
  *response = *std::move(created);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ListTokens(grpc::ServerContext* context,
                                           const api::ListTokensRequest*,
                                           api::ListTokensResponse* response) {
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, TokenAttrs("list", ""));
  if (!caller.ok()) return Denied(caller.status());
  for (api::TokenInfo& info : auth_->access()->ListTokens()) {
    *response->add_tokens() = std::move(info);
  }
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::DeleteToken(
    grpc::ServerContext* context, const api::DeleteTokenRequest* request,
    api::TokenInfo* response) {
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, TokenAttrs("delete", request->name()));
  if (!caller.ok()) return Denied(caller.status());
  absl::StatusOr<api::TokenInfo> deleted =
      auth_->access()->DeleteToken(request->name());
  if (!deleted.ok()) return ToGrpcStatus(deleted.status());
  *response = *std::move(deleted);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::RotateJoinToken(
    grpc::ServerContext* context, const api::RotateJoinTokenRequest* request,
    api::RotateJoinTokenResponse* response) {
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, TokenAttrs("update", "join"));
  if (!caller.ok()) return Denied(caller.status());
  const absl::Time now = auth_->clock()->Now();
  std::optional<absl::Time> expires;
  if (join_token_ttl_.has_value()) expires = now + *join_token_ttl_;
  if (request->has_ttl()) {
    absl::Duration ttl = absl::Seconds(request->ttl().seconds());
    if (ttl <= absl::ZeroDuration() || ttl > kMaxJoinTtl) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("ttl: must be more than 0 and at most ",
                                       absl::FormatDuration(kMaxJoinTtl)));
    }
    expires = now + ttl;
  }
  absl::StatusOr<auth::TokenParts> credential =
      auth_->access()->RotateJoinCredential(expires, now);
  if (!credential.ok()) return ToGrpcStatus(credential.status());
  std::string token = auth::FormatJoinToken(
      {.ca_hash = pki_->ca_hash, .credential = *credential});
  // The file follows; the rotation stands even if it cannot be written.
  (void)WriteFileAtomically(absl::StrCat(data_dir_, "/join-token"),
                            absl::StrCat(token, "\n"), 0600);
  response->set_join_token(std::move(token));
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ApplyRbac(grpc::ServerContext* context,
                                          const api::RbacObject* request,
                                          api::RbacObject* response) {
  std::string kind;
  const api::ObjectMeta* meta = nullptr;
  if (request->has_role()) {
    kind = request->role().kind();
    meta = &request->role().metadata();
  } else if (request->has_binding()) {
    kind = request->binding().kind();
    meta = &request->binding().metadata();
  } else {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "object: Required value: a role or a binding");
  }
  if (auth::ResourceOfRbacKind(kind).empty())
    return ToGrpcStatus(UnknownKind(kind));
  const bool exists = [&] {
    for (const api::RbacObject& o :
         auth_->access()->ListRbac(kind, meta->namespace_())) {
      const api::ObjectMeta& m =
          o.has_role() ? o.role().metadata() : o.binding().metadata();
      if (m.name() == meta->name()) return true;
    }
    return false;
  }();
  absl::StatusOr<Caller> caller =
      auth_->Authorize(context, RbacAttrs(exists ? "update" : "create", kind,
                                          meta->namespace_(), meta->name()));
  if (!caller.ok()) return Denied(caller.status());
  // Kubernetes' escalation check: grant only what you hold, refused in
  // kube-apiserver's words with every permission not held.
  if (absl::Status can = auth_->access()->CheckCanApply(caller->user, *request);
      !can.ok()) {
    return ToGrpcStatus(can);
  }
  absl::StatusOr<api::RbacObject> stored = auth_->access()->PutRbac(*request);
  if (!stored.ok()) return ToGrpcStatus(stored.status());
  *response = *std::move(stored);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::DeleteRbac(grpc::ServerContext* context,
                                           const api::RbacObjectRef* request,
                                           api::RbacObject* response) {
  if (auth::ResourceOfRbacKind(request->kind()).empty()) {
    return ToGrpcStatus(UnknownKind(request->kind()));
  }
  absl::StatusOr<Caller> caller = auth_->Authorize(
      context, RbacAttrs("delete", request->kind(), request->namespace_(),
                         request->name()));
  if (!caller.ok()) return Denied(caller.status());
  absl::StatusOr<api::RbacObject> removed =
      auth_->access()->RemoveRbac(*request);
  if (!removed.ok()) return ToGrpcStatus(removed.status());
  *response = *std::move(removed);
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ListRbac(grpc::ServerContext* context,
                                         const api::ListRbacRequest* request,
                                         api::ListRbacResponse* response) {
  if (auth::ResourceOfRbacKind(request->kind()).empty()) {
    return ToGrpcStatus(UnknownKind(request->kind()));
  }
  absl::StatusOr<Caller> caller = auth_->Authorize(
      context, RbacAttrs("list", request->kind(), request->namespace_(), ""));
  if (!caller.ok()) return Denied(caller.status());
  for (api::RbacObject& o :
       auth_->access()->ListRbac(request->kind(), request->namespace_())) {
    *response->add_objects() = std::move(o);
  }
  return grpc::Status::OK;
}

grpc::Status AccessServiceImpl::ReviewAccess(
    grpc::ServerContext* context, const api::AccessReview* request,
    api::AccessReviewResult* response) {
  absl::StatusOr<Caller> caller = auth_->Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auth::Attributes attrs;
  attrs.verb = absl::AsciiStrToLower(request->verb());
  std::vector<std::string> parts =
      absl::StrSplit(request->resource(), absl::MaxSplits('/', 1));
  attrs.resource = parts[0];
  if (parts.size() > 1) attrs.subresource = parts[1];
  attrs.api_group = request->api_group().empty()
                        ? auth::ApiGroupOf(attrs.resource)
                        : request->api_group();
  attrs.namespace_ =
      auth::IsClusterScoped(attrs.resource) ? "" : request->namespace_();
  attrs.name = request->name();
  std::string reason;
  bool allowed = auth_->Allows(*caller, attrs, &reason);
  response->set_allowed(allowed);
  response->set_reason(allowed ? reason
                               : auth::ForbiddenMessage(caller->user, attrs));
  response->set_user(caller->user.name);
  for (const std::string& g : caller->user.groups) response->add_groups(g);
  return grpc::Status::OK;
}

}  // namespace jobset::scheduler
