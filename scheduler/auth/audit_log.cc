#include "scheduler/auth/audit_log.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_quote.h"
#include "common/uid.h"

namespace jobset::scheduler {
namespace {

bool Mutates(absl::string_view verb) {
  return verb != "get" && verb != "list" && verb != "watch";
}

std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

class AuditInterceptor final : public grpc::experimental::Interceptor {
 public:
  AuditInterceptor(AuditLog* log, grpc::experimental::ServerRpcInfo* info)
      : log_(log), info_(info) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      log_->Finish(info_->server_context(), info_->method(),
                   methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  AuditLog* const log_;
  grpc::experimental::ServerRpcInfo* const info_;
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
  if (!audit_reads_ && record.allowed && !Mutates(record.attrs.verb)) return;
  absl::MutexLock lock(&mu_);
  open_[context] = std::move(record);
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

std::string AuditLog::Format(const AuditRecord& r, absl::string_view method,
                             const grpc::Status& status, absl::Time done) {
  std::vector<std::string> groups;
  for (const std::string& g : r.groups) groups.push_back(JsonQuote(g));
  std::string resource = r.attrs.resource;
  std::string object =
      absl::StrCat("{\"resource\":", JsonQuote(r.attrs.resource),
                   ",\"apiGroup\":", JsonQuote(r.attrs.api_group));
  if (!r.attrs.subresource.empty()) {
    absl::StrAppend(&object,
                    ",\"subresource\":", JsonQuote(r.attrs.subresource));
  }
  if (!r.attrs.namespace_.empty()) {
    absl::StrAppend(&object, ",\"namespace\":", JsonQuote(r.attrs.namespace_));
  }
  if (!r.attrs.name.empty()) {
    absl::StrAppend(&object, ",\"name\":", JsonQuote(r.attrs.name));
  }
  object.push_back('}');
  std::string annotations =
      absl::StrCat("{\"authorization.decision\":",
                   JsonQuote(r.allowed ? "allow" : "forbid"));
  if (!r.authn_method.empty()) {
    absl::StrAppend(&annotations,
                    ",\"authn.method\":", JsonQuote(r.authn_method));
  }
  if (!r.credential_id.empty()) {
    absl::StrAppend(&annotations,
                    ",\"authn.credentialID\":", JsonQuote(r.credential_id));
  }
  annotations.push_back('}');
  return absl::StrCat(
      "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\","
      "\"level\":\"Metadata\",\"auditID\":",
      JsonQuote(NewUid()),
      ",\"stage\":\"ResponseComplete\",\"verb\":", JsonQuote(r.attrs.verb),
      ",\"method\":", JsonQuote(method),
      ",\"user\":{\"username\":", JsonQuote(r.user), ",\"groups\":[",
      absl::StrJoin(groups, ","), "]},\"sourceIPs\":[", JsonQuote(r.source_ip),
      "],\"objectRef\":", object,
      ",\"responseStatus\":{\"code\":", static_cast<int>(status.error_code()),
      status.ok()
          ? ""
          : absl::StrCat(",\"message\":", JsonQuote(status.error_message())),
      "},\"requestReceivedTimestamp\":", JsonQuote(Timestamp(r.received)),
      ",\"stageTimestamp\":", JsonQuote(Timestamp(done)),
      ",\"annotations\":", annotations, "}");
}

}  // namespace jobset::scheduler
