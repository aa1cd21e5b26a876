#include "scheduler/auth/audit_log.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_quote.h"
#include "common/uid.h"

namespace jobset::scheduler {
namespace {

bool IsRead(absl::string_view verb) {
  return verb == "get" || verb == "list" || verb == "watch";
}

// metav1.MicroTime as Kubernetes writes it: RFC 3339, UTC, microseconds.
std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

// The version kube-apiserver serves each group at (the JobSet API's is
// api/defaults.h's kApiVersion; Kueue's, the one jobsetd stores,
// api/kueue_manifest.h's kKueueApiVersion).
absl::string_view VersionOf(absl::string_view group) {
  if (group == "jobset.x-k8s.io") return "v1alpha2";
  if (group == "kueue.x-k8s.io") return "v1beta1";
  if (group == "visibility.kueue.x-k8s.io") return "v1beta1";
  return "v1";  // core, batch, rbac.authorization.k8s.io
}

// A path segment with every byte but RFC 3986's unreserved ones, ':' and
// '@' percent-encoded, so that a name cannot add a segment.
std::string PathSegment(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~' || c == ':' || c == '@') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

// Appends `"key":"value"` (and a comma before it unless first) when value is
// not empty.
void AppendField(std::string* json, absl::string_view key,
                 absl::string_view value) {
  if (value.empty()) return;
  if (json->back() != '{') json->push_back(',');
  absl::StrAppend(json, "\"", key, "\":", JsonQuote(value));
}

std::string UserJson(const AuditRecord& r) {
  if (!r.authenticated) return "{}";
  std::string json = "{";
  AppendField(&json, "username", r.user.name);
  if (!r.user.groups.empty()) {
    std::vector<std::string> groups;
    for (const std::string& g : r.user.groups) groups.push_back(JsonQuote(g));
    absl::StrAppend(&json, json.back() == '{' ? "" : ",", "\"groups\":[",
                    absl::StrJoin(groups, ","), "]");
  }
  // As kube-apiserver's authenticators say which credential it was
  // (X509SHA256=... there; the serial here, which revocation names).
  std::string credential;
  if (r.authn_method == "cert" && !r.credential_id.empty()) {
    credential = absl::StrCat("X509SerialNumber=", r.credential_id);
  } else if (r.authn_method == "token" && !r.credential_id.empty()) {
    credential = absl::StrCat("TokenID=", r.credential_id);
  }
  if (!credential.empty()) {
    absl::StrAppend(&json, json.back() == '{' ? "" : ",",
                    "\"extra\":{\"authentication.kubernetes.io/"
                    "credential-id\":[",
                    JsonQuote(credential), "]}");
  }
  json.push_back('}');
  return json;
}

std::string ObjectRef(const auth::Attributes& a) {
  std::string json = "{";
  AppendField(&json, "resource", a.resource);
  AppendField(&json, "namespace", a.namespace_);
  AppendField(&json, "name", a.name);
  AppendField(&json, "apiGroup", a.api_group);
  AppendField(&json, "apiVersion", VersionOf(a.api_group));
  AppendField(&json, "subresource", a.subresource);
  json.push_back('}');
  return json;
}

// metav1.Status as kube-apiserver's audit writes it: the code alone on
// success; status, message, reason and details (the object, for the reasons
// that concern one) on failure.
std::string ResponseStatus(const AuditRecord& r, const grpc::Status& status) {
  AuditLog::HttpStatus http =
      AuditLog::ToHttpStatus(status.error_code(), r.attrs.verb);
  if (status.ok()) {
    return absl::StrCat("{\"metadata\":{},\"code\":", http.code, "}");
  }
  std::string json = "{\"metadata\":{},\"status\":\"Failure\"";
  AppendField(&json, "message", status.error_message());
  AppendField(&json, "reason", http.reason);
  if (http.reason == "Forbidden" || http.reason == "NotFound" ||
      http.reason == "AlreadyExists" || http.reason == "Conflict" ||
      http.reason == "Invalid") {
    std::string details = "{";
    AppendField(&details, "name", r.attrs.name);
    AppendField(&details, "group", r.attrs.api_group);
    AppendField(&details, "kind", r.attrs.resource);
    details.push_back('}');
    if (details != "{}") absl::StrAppend(&json, ",\"details\":", details);
  }
  absl::StrAppend(&json, ",\"code\":", http.code, "}");
  return json;
}

// Annotations, in key order as Go writes a map.
std::string Annotations(const AuditRecord& r, absl::string_view method) {
  std::string json = "{";
  if (r.authenticated) {
    absl::StrAppend(&json, "\"authorization.k8s.io/decision\":",
                    JsonQuote(r.allowed ? "allow" : "forbid"),
                    ",\"authorization.k8s.io/reason\":", JsonQuote(r.reason));
  }
  AppendField(&json, "jobsetd.x-k8s.io/grpc-method", method);
  json.push_back('}');
  return json;
}

class AuditInterceptor final : public grpc::experimental::Interceptor {
 public:
  AuditInterceptor(AuditLog* log, grpc::experimental::ServerRpcInfo* info)
      : log_(log), context_(info->server_context()), method_(info->method()) {}

  // A call that ends without sending its status (none does but one torn
  // down with the server) is logged as cancelled.
  ~AuditInterceptor() override {
    log_->Finish(context_, method_,
                 grpc::Status(grpc::StatusCode::CANCELLED,
                              "the call ended before its status was sent"));
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      log_->Finish(context_, method_, methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  AuditLog* const log_;
  const grpc::ServerContextBase* const context_;
  const std::string method_;
};

class AuditInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit AuditInterceptorFactory(AuditLog* log) : log_(log) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new AuditInterceptor(log_, info);
  }

 private:
  AuditLog* const log_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(
    const std::string& path, bool audit_reads, Clock* clock) {
  int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--audit_log=", path, ": cannot open: ", std::strerror(errno)));
  }
  std::FILE* file = ::fdopen(fd, "a");
  if (file == nullptr) {
    ::close(fd);
    return absl::InternalError(
        absl::StrCat("--audit_log=", path, ": fdopen: ", std::strerror(errno)));
  }
  return absl::WrapUnique(new AuditLog(file, audit_reads, clock));
}

AuditLog::~AuditLog() { std::fclose(file_); }

void AuditLog::Begin(const grpc::ServerContextBase* context,
                     AuditRecord record) {
  // Refused reads are always logged: someone probing is a security signal.
  if (!audit_reads_ && record.allowed && IsRead(record.attrs.verb)) return;
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = open_.try_emplace(context);
  if (!inserted) {
    record.audit_id = std::move(it->second.audit_id);
    record.received = it->second.received;
  }
  if (record.audit_id.empty()) record.audit_id = NewUid();
  it->second = std::move(record);
}

void AuditLog::Finish(const grpc::ServerContextBase* context,
                      absl::string_view method, const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(context);
  if (it == open_.end()) return;
  std::string line = Format(it->second, method, status, clock_->Now());
  open_.erase(it);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
AuditLog::InterceptorFactory() {
  return std::make_unique<AuditInterceptorFactory>(this);
}

AuditLog::HttpStatus AuditLog::ToHttpStatus(grpc::StatusCode code,
                                            absl::string_view verb) {
  // k8s.io/apimachinery/pkg/api/errors: each reason and its code.
  switch (code) {
    case grpc::StatusCode::OK:
      return {verb == "create" ? 201 : 200, ""};
    case grpc::StatusCode::CANCELLED:
      return {499, ""};  // the client went away (no Kubernetes reason)
    case grpc::StatusCode::INVALID_ARGUMENT:
      return {422, "Invalid"};  // a field of the object is wrong
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return {400, "BadRequest"};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {504, "Timeout"};
    case grpc::StatusCode::NOT_FOUND:
      return {404, "NotFound"};
    case grpc::StatusCode::ALREADY_EXISTS:
      return {409, "AlreadyExists"};
    case grpc::StatusCode::ABORTED:
      return {409, "Conflict"};
    case grpc::StatusCode::PERMISSION_DENIED:
      return {403, "Forbidden"};
    case grpc::StatusCode::UNAUTHENTICATED:
      return {401, "Unauthorized"};
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return {429, "TooManyRequests"};
    case grpc::StatusCode::UNIMPLEMENTED:
      return {405, "MethodNotAllowed"};
    case grpc::StatusCode::UNAVAILABLE:
      return {503, "ServiceUnavailable"};
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return {500, "InternalError"};
  }
}

std::string AuditLog::RequestUri(const auth::Attributes& a) {
  std::string uri =
      a.api_group.empty()
          ? "/api/v1"
          : absl::StrCat("/apis/", a.api_group, "/", VersionOf(a.api_group));
  if (!a.namespace_.empty()) {
    absl::StrAppend(&uri, "/namespaces/", PathSegment(a.namespace_));
  }
  absl::StrAppend(&uri, "/", PathSegment(a.resource));
  // A create is a POST to the collection, the name in the body.
  if (!a.name.empty() && (a.verb != "create" || !a.subresource.empty())) {
    absl::StrAppend(&uri, "/", PathSegment(a.name));
  }
  if (!a.subresource.empty()) {
    absl::StrAppend(&uri, "/", PathSegment(a.subresource));
  }
  if (a.verb == "watch") uri.append("?watch=true");
  return uri;
}

std::string AuditLog::Format(const AuditRecord& r, absl::string_view method,
                             const grpc::Status& status, absl::Time done) {
  std::string json = absl::StrCat(
      "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\","
      "\"level\":\"Metadata\",\"auditID\":",
      JsonQuote(r.audit_id), ",\"stage\":\"ResponseComplete\",\"requestURI\":",
      JsonQuote(RequestUri(r.attrs)), ",\"verb\":", JsonQuote(r.attrs.verb),
      ",\"user\":", UserJson(r));
  if (!r.source_ip.empty()) {
    absl::StrAppend(&json, ",\"sourceIPs\":[", JsonQuote(r.source_ip), "]");
  }
  AppendField(&json, "userAgent", r.user_agent);
  absl::StrAppend(
      &json, ",\"objectRef\":", ObjectRef(r.attrs),
      ",\"responseStatus\":", ResponseStatus(r, status),
      ",\"requestReceivedTimestamp\":", JsonQuote(Timestamp(r.received)),
      ",\"stageTimestamp\":", JsonQuote(Timestamp(done)),
      ",\"annotations\":", Annotations(r, method), "}");
  return json;
}

}  // namespace jobset::scheduler
