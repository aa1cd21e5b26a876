#include "agent/identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/pod_files.h"
#include "api/names.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "common/log.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "proto/auth.grpc.pb.h"

namespace jobset::agent {
namespace {

constexpr char kKeyFile[] = "node.key";
constexpr char kNextKeyFile[] = "node.key.next";
constexpr char kCertFile[] = "node.crt";
constexpr char kCaFile[] = "ca.crt";
constexpr char kSecretFile[] = "node-secret";
constexpr char kOrganization[] = "system:nodes";
constexpr int kSecretLength = 32;
constexpr char kSecretAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
// No PEM key or certificate of ours comes near this; a larger file is not
// one.
constexpr off_t kMaxFileBytes = 1 << 20;
constexpr char kRejoinHint[] = "re-join needed (--join_token_file)";

std::string PathIn(absl::string_view dir, absl::string_view file) {
  return absl::StrCat(dir, "/", file);
}

absl::Status ErrnoError(absl::string_view what, absl::string_view path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Reads `path` (a regular file of at most kMaxFileBytes); kNotFound if it is
// not there.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(path);
    return ErrnoError("reading", path);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    absl::Status s = ErrnoError("reading", path);
    close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxFileBytes) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a regular file of at most ", kMaxFileBytes, " bytes"));
  }
  std::string data;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoError("reading", path);
      close(fd);
      return s;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > static_cast<size_t>(kMaxFileBytes)) {
      close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": larger than ", kMaxFileBytes, " bytes"));
    }
  }
  close(fd);
  return data;
}

// Writes `data` to dir/file with `mode`, so that a crash leaves the old file
// or the new one (pod_files' WriteFileAtomic).
absl::Status WriteFileAtomically(const std::string& dir, absl::string_view file,
                                 absl::string_view data, mode_t mode) {
  return WriteFileAtomic(PathIn(dir, file), data, mode);
}

absl::Status MakePrivateDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("creating", dir);
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return ErrnoError("reading", dir);
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": not a directory"));
  }
  if ((st.st_mode & 0777) != 0700 && chmod(dir.c_str(), 0700) != 0) {
    return ErrnoError("chmod", dir);
  }
  return absl::OkStatus();
}

// The node secret, made (and stored) the first time.
absl::StatusOr<std::string> NodeSecret(const std::string& dir) {
  const std::string path = PathIn(dir, kSecretFile);
  absl::StatusOr<std::string> secret = ReadSmallFile(path);
  if (secret.ok()) {
    std::string s(absl::StripAsciiWhitespace(*secret));
    if (s.size() != kSecretLength ||
        s.find_first_not_of(kSecretAlphabet) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": not a node secret (", kSecretLength,
          " characters of [A-Za-z0-9]); restore it, or remove it and ask the "
          "administrator to delete this node from jobsetd first"));
    }
    return s;
  }
  if (!absl::IsNotFound(secret.status())) return secret.status();
  std::string s = auth::RandomString(kSecretLength, kSecretAlphabet);
  if (absl::Status w = WriteFileAtomically(dir, kSecretFile, s, 0600);
      !w.ok()) {
    return w;
  }
  return s;
}

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

bool Retryable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(RealDeadline(timeout)));
}

std::unique_ptr<api::IdentityService::Stub> IdentityStub(
    const std::string& target, const std::string& server_name,
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride(server_name);
  return api::IdentityService::NewStub(
      grpc::CreateCustomChannel(target, std::move(credentials), args));
}

// How many "-----BEGIN" lines `pem` holds.
size_t CountPemBlocks(absl::string_view pem) {
  size_t n = 0;
  for (size_t at = pem.find("-----BEGIN"); at != absl::string_view::npos;
       at = pem.find("-----BEGIN", at + 1)) {
    ++n;
  }
  return n;
}

// TLS that accepts any server certificate: only for GetClusterInfo, whose
// answer is checked against the join token's pin before it is trusted.
std::shared_ptr<grpc::ChannelCredentials> UnverifiedTls() {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_verify_server_certs(false);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

// Checks that `cert_pem` (from jobsetd) is `key_pem`'s certificate for
// `common_name`, signed by `ca_pem` and valid at `now`; returns its
// validity.
absl::StatusOr<auth::CertificateInfo> CheckIssued(absl::string_view cert_pem,
                                                  absl::string_view key_pem,
                                                  absl::string_view ca_pem,
                                                  absl::string_view common_name,
                                                  absl::Time now) {
  absl::StatusOr<auth::CertificateInfo> info = auth::ParseCertificate(cert_pem);
  if (!info.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("jobsetd sent a certificate that cannot be read: ",
                     info.status().message()));
  }
  if (info->common_name != common_name) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jobsetd sent a certificate for CN \"",
        absl::CHexEscape(info->common_name), "\", not ", common_name));
  }
  if (absl::Status s = auth::VerifyCertificate(cert_pem, ca_pem, now);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("jobsetd sent a certificate that does not verify "
                     "against the cluster CA: ",
                     s.message()));
  }
  if (absl::Status s = auth::CheckKeyMatchesCertificate(key_pem, cert_pem);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jobsetd sent a certificate for another key: ", s.message()));
  }
  return info;
}

}  // namespace

std::string Identity::CommonName(absl::string_view node_name) {
  return absl::StrCat("system:node:", node_name);
}

Identity::Identity(Options options, Replicas replicas, Clock* clock,
                   Files files, absl::Time not_before, absl::Time not_after)
    : options_(std::move(options)),
      replicas_(std::move(replicas)),
      clock_(clock),
      files_(std::move(files)),
      not_after_(not_after),
      renew_at_(RenewalTime(not_before, not_after)),
      backoff_(options_.renew_min_backoff) {}

Identity::~Identity() { StopRenewing(); }

absl::Time Identity::RenewalTime(absl::Time not_before, absl::Time not_after) {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen;
  double fraction;
  {
    absl::MutexLock lock(&mu);
    fraction = absl::Uniform(*gen, 0.7, 0.9);
  }
  return not_before + (not_after - not_before) * fraction;
}

absl::StatusOr<std::unique_ptr<Identity>> Identity::Load(Options options,
                                                         Clock* clock) {
  const std::string& dir = options.pki_dir;
  const std::string key_path = PathIn(dir, kKeyFile);
  const std::string next_path = PathIn(dir, kNextKeyFile);
  const std::string cert_path = PathIn(dir, kCertFile);
  const std::string ca_path = PathIn(dir, kCaFile);
  Files files;
  for (auto [path, pem] : {std::pair{&cert_path, &files.cert_pem},
                           std::pair{&ca_path, &files.ca_pem}}) {
    absl::StatusOr<std::string> data = ReadSmallFile(*path);
    if (!data.ok()) return data.status();
    *pem = *std::move(data);
  }
  // A renewal stores the new key as node.key.next, then node.crt, then
  // renames node.key.next: a crash in between leaves node.key.next, the key
  // of node.crt if that was already replaced.
  if (absl::StatusOr<std::string> next = ReadSmallFile(next_path); next.ok()) {
    if (auth::CheckKeyMatchesCertificate(*next, files.cert_pem).ok()) {
      if (rename(next_path.c_str(), key_path.c_str()) != 0) {
        return ErrnoError("renaming", next_path);
      }
    } else {
      unlink(next_path.c_str());
    }
  }
  absl::StatusOr<std::string> key = ReadSmallFile(key_path);
  if (!key.ok()) return key.status();
  files.key_pem = *std::move(key);

  absl::StatusOr<auth::CertificateInfo> ca =
      auth::ParseCertificate(files.ca_pem);
  if (!ca.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ca_path, " is not a certificate: ", ca.status().message(),
                     " (move the pki directory away to join afresh)"));
  }
  absl::StatusOr<auth::CertificateInfo> cert =
      auth::ParseCertificate(files.cert_pem);
  if (!cert.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_path, " is not a certificate: ", cert.status().message(),
        " (move the pki directory away to join afresh)"));
  }
  if (absl::Status s =
          auth::CheckKeyMatchesCertificate(files.key_pem, files.cert_pem);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        key_path, " is not the key of ", cert_path, ": ", s.message(),
        " (move the pki directory away to join afresh)"));
  }
  const std::string want = CommonName(options.node_name);
  if (cert->common_name != want) {
    return absl::FailedPreconditionError(absl::StrCat(
        cert_path, " is for \"", absl::CHexEscape(cert->common_name),
        "\", not ", want, " (--node_name); ", kRejoinHint));
  }
  const absl::Time now = clock->Now();
  if (now >= cert->not_after) {
    return absl::FailedPreconditionError(
        absl::StrCat("node certificate expired at ",
                     absl::FormatTime(cert->not_after), "; ", kRejoinHint));
  }
  if (absl::Status s =
          auth::VerifyCertificate(files.cert_pem, files.ca_pem, now);
      !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(cert_path, " does not verify against ", ca_path, ": ",
                     s.message(), "; ", kRejoinHint));
  }
  absl::StatusOr<Replicas> replicas =
      Replicas::Parse("--scheduler", options.scheduler);
  if (!replicas.ok()) return replicas.status();
  return std::unique_ptr<Identity>(
      new Identity(std::move(options), *std::move(replicas), clock,
                   std::move(files), cert->not_before, cert->not_after));
}

absl::StatusOr<std::unique_ptr<Identity>> Identity::Open(
    Options options, absl::string_view join_token, Clock* clock) {
  absl::StatusOr<std::unique_ptr<Identity>> loaded = Load(options, clock);
  if (loaded.ok() || absl::IsInvalidArgument(loaded.status())) return loaded;
  const bool missing = absl::IsNotFound(loaded.status());
  if (join_token.empty()) {
    if (missing) {
      return absl::NotFoundError(absl::StrCat(
          "no node certificate in ", options.pki_dir,
          " and no --join_token_file: join with the cluster's join token "
          "(jobsetd writes it to <data_dir>/join-token)"));
    }
    return loaded.status();
  }
  if (!missing) {
    JOBSET_LOG(WARNING) << loaded.status().message() << "; joining again";
  }
  return Join(std::move(options), join_token, clock);
}

absl::StatusOr<std::unique_ptr<Identity>> Identity::Join(
    Options options, absl::string_view join_token, Clock* clock) {
  absl::StatusOr<auth::JoinToken> token = auth::ParseJoinToken(join_token);
  if (!token.ok()) {
    absl::string_view message = token.status().message();
    return absl::InvalidArgumentError(
        absl::StartsWith(message, "join token")
            ? std::string(message)
            : absl::StrCat("join token: ", message));
  }
  if (options.node_name.empty()) {
    return absl::InvalidArgumentError("join: the node name is empty");
  }
  absl::StatusOr<Replicas> replicas =
      Replicas::Parse("--scheduler", options.scheduler);
  if (!replicas.ok()) return replicas.status();
  const std::string& dir = options.pki_dir;
  if (absl::Status s = MakePrivateDir(dir); !s.ok()) return s;
  absl::StatusOr<std::string> secret = NodeSecret(dir);
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::string> key = auth::GeneratePrivateKey();
  if (!key.ok()) return key.status();
  const std::string common_name = CommonName(options.node_name);
  absl::StatusOr<std::string> csr =
      auth::CreateCsr(*key, common_name, kOrganization);
  if (!csr.ok()) return csr.status();

  // Network waits are real time, as gRPC's are.
  const absl::Time deadline = RealClock::Get()->Now() + options.join_timeout;
  absl::Duration backoff = options.min_backoff;
  grpc::Status last;
  std::string target;  // The replica of the last attempt.
  while (true) {
    // A follower's redirect is followed at once, an unreachable replica
    // left for the next after the backoff.
    bool redirected = false;
    target = replicas->current();
    // 1. The CA, from a server not yet trusted.
    std::string ca_pem;
    {
      auto stub = IdentityStub(target, options.server_name, UnverifiedTls());
      grpc::ClientContext context;
      SetDeadline(&context, options.call_timeout);
      api::ClusterInfo info;
      last = stub->GetClusterInfo(&context, api::ClusterInfoRequest(), &info);
      if (!last.ok() && !Retryable(last)) {
        return absl::Status(FromGrpc(last).code(),
                            absl::StrCat("GetClusterInfo from ", target, ": ",
                                         last.error_message()));
      }
      if (!last.ok()) redirected = replicas->After(context, last);
      ca_pem = info.ca_pem();
    }
    if (last.ok()) {
      // 2. Nothing secret goes out unless the CA is the one pinned. It must
      // be alone: the pin covers the first certificate only, and any other
      // in the bundle would be trusted as a root too (an impostor's CA
      // appended after the real one).
      if (size_t blocks = CountPemBlocks(ca_pem); blocks != 1) {
        return absl::PermissionDeniedError(
            absl::StrCat("the server at ", target, " offers ", blocks,
                         " PEM blocks as its CA; a join token pins exactly one "
                         "certificate"));
      }
      absl::StatusOr<std::string> offered = auth::SpkiSha256(ca_pem);
      if (!offered.ok()) {
        return absl::PermissionDeniedError(absl::StrCat(
            "the server at ", target,
            " offers a CA that cannot be read: ", offered.status().message()));
      }
      if (*offered != token->ca_hash) {
        return absl::PermissionDeniedError(absl::StrCat(
            "CA hash mismatch: the join token pins sha256:", token->ca_hash,
            ", the server offers sha256:", *offered));
      }
      // 3. The join, over TLS verified against that CA.
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = ca_pem;
      auto stub =
          IdentityStub(target, options.server_name, grpc::SslCredentials(ssl));
      grpc::ClientContext context;
      SetDeadline(&context, options.call_timeout);
      api::JoinNodeRequest request;
      request.set_token(auth::FormatToken(token->credential));
      request.set_node_name(options.node_name);
      request.set_csr_pem(*csr);
      request.set_node_secret(*secret);
      api::NodeCertificate reply;
      last = stub->JoinNode(&context, request, &reply);
      if (last.ok()) {
        const absl::Time now = clock->Now();
        absl::StatusOr<auth::CertificateInfo> info =
            CheckIssued(reply.cert_pem(), *key, ca_pem, common_name, now);
        if (!info.ok()) return info.status();
        // ca.crt first: node.key and node.crt are what Load looks at last.
        for (auto [file, data] :
             {std::pair{kCaFile, &ca_pem}, std::pair{kKeyFile, &*key},
              std::pair{kCertFile, reply.mutable_cert_pem()}}) {
          absl::Status w = WriteFileAtomically(dir, file, *data, 0600);
          if (!w.ok()) return w;
        }
        unlink(PathIn(dir, kNextKeyFile).c_str());
        JOBSET_LOG(INFO) << "joined jobsetd at " << target << " as "
                         << common_name << "; certificate valid until "
                         << absl::FormatTime(info->not_after);
        Files files{*std::move(key), reply.cert_pem(), std::move(ca_pem)};
        replicas->Reached();
        return std::unique_ptr<Identity>(
            new Identity(std::move(options), *std::move(replicas), clock,
                         std::move(files), info->not_before, info->not_after));
      }
      if (!Retryable(last)) {
        return absl::Status(
            FromGrpc(last).code(),
            absl::StrCat("jobsetd at ", target,
                         " refused the join: ", last.error_message()));
      }
      redirected = replicas->After(context, last);
    }
    if (redirected) continue;
    const absl::Time now = RealClock::Get()->Now();
    if (now + backoff > deadline) break;
    JOBSET_LOG(WARNING) << "joining: cannot reach jobsetd at " << target << ": "
                        << last.error_message() << "; retrying in " << backoff;
    RealClock::Get()->SleepUntil(now + backoff);
    backoff = std::min(backoff * 2, options.max_backoff);
  }
  return absl::UnavailableError(absl::StrCat(
      "joining: cannot reach jobsetd at ", replicas->all(), " within ",
      absl::FormatDuration(options.join_timeout), ": ", last.error_message()));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
Identity::ChannelCredentials() {
  absl::MutexLock lock(&mu_);
  grpc::SslCredentialsOptions ssl;
  for (auto [file, pem] : {std::pair{kCaFile, &ssl.pem_root_certs},
                           std::pair{kKeyFile, &ssl.pem_private_key},
                           std::pair{kCertFile, &ssl.pem_cert_chain}}) {
    absl::StatusOr<std::string> data =
        ReadSmallFile(PathIn(options_.pki_dir, file));
    if (!data.ok()) return data.status();
    *pem = *std::move(data);
  }
  if (absl::Status s = auth::CheckKeyMatchesCertificate(ssl.pem_private_key,
                                                        ssl.pem_cert_chain);
      !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(PathIn(options_.pki_dir, kKeyFile), " is not the key of ",
                     PathIn(options_.pki_dir, kCertFile), ": ", s.message()));
  }
  return grpc::SslCredentials(ssl);
}

grpc::ChannelArguments Identity::ChannelArguments() const {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride(options_.server_name);
  return args;
}

absl::StatusOr<bool> Identity::RenewIfDue(absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (now >= not_after_) {
    return absl::FailedPreconditionError(
        absl::StrCat("node certificate expired at ",
                     absl::FormatTime(not_after_), "; ", kRejoinHint));
  }
  if (now < renew_at_ || now < retry_at_) return false;
  if (absl::Status s = RenewNow(now); !s.ok()) {
    retry_at_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, options_.renew_max_backoff);
    return s;
  }
  retry_at_ = absl::InfinitePast();
  backoff_ = options_.renew_min_backoff;
  return true;
}

absl::Status Identity::RenewNow(absl::Time now) {
  // The lock is held through the call (at most call_timeout): only
  // ChannelCredentials waits on it, and it must not read the files half
  // swapped.
  absl::StatusOr<std::string> key = auth::GeneratePrivateKey();
  if (!key.ok()) return key.status();
  const std::string common_name = CommonName(options_.node_name);
  absl::StatusOr<std::string> csr =
      auth::CreateCsr(*key, common_name, kOrganization);
  if (!csr.ok()) return csr.status();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = files_.ca_pem;
  ssl.pem_private_key = files_.key_pem;
  ssl.pem_cert_chain = files_.cert_pem;
  api::RenewNodeCertificateRequest request;
  request.set_csr_pem(*csr);
  api::NodeCertificate reply;
  while (true) {
    const std::string target = replicas_.current();
    auto stub =
        IdentityStub(target, options_.server_name, grpc::SslCredentials(ssl));
    grpc::ClientContext context;
    SetDeadline(&context, options_.call_timeout);
    grpc::Status status = stub->RenewNodeCertificate(&context, request, &reply);
    if (status.ok()) break;
    // A follower's redirect is followed at once; anything else waits for
    // RenewLoop's backoff (with the next replica, if this one was not
    // reached).
    if (replicas_.After(context, status)) continue;
    return absl::Status(FromGrpc(status).code(),
                        absl::StrCat("renewing the node certificate at ",
                                     target, ": ", status.error_message()));
  }
  replicas_.Reached();
  absl::StatusOr<auth::CertificateInfo> info =
      CheckIssued(reply.cert_pem(), *key, files_.ca_pem, common_name, now);
  if (!info.ok()) return info.status();
  const std::string& dir = options_.pki_dir;
  // See Load: node.key.next, node.crt, then node.key.
  if (absl::Status s = WriteFileAtomically(dir, kNextKeyFile, *key, 0600);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          WriteFileAtomically(dir, kCertFile, reply.cert_pem(), 0600);
      !s.ok()) {
    unlink(PathIn(dir, kNextKeyFile).c_str());
    return s;
  }
  if (rename(PathIn(dir, kNextKeyFile).c_str(),
             PathIn(dir, kKeyFile).c_str()) != 0) {
    // Load finishes it (node.key.next matches node.crt).
    return ErrnoError("renaming", PathIn(dir, kNextKeyFile));
  }
  if (absl::Status s = FsyncDir(dir); !s.ok()) return s;
  files_.key_pem = *std::move(key);
  files_.cert_pem = reply.cert_pem();
  not_after_ = info->not_after;
  renew_at_ = RenewalTime(info->not_before, info->not_after);
  JOBSET_LOG(INFO) << "renewed the node certificate (serial " << info->serial
                   << "), valid until " << absl::FormatTime(not_after_)
                   << "; it is used from the next connection";
  return absl::OkStatus();
}

void Identity::StartRenewing(absl::Duration poll) {
  renew_thread_ = std::thread([this, poll] { RenewLoop(poll); });
}

void Identity::StopRenewing() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (renew_thread_.joinable()) renew_thread_.join();
}

void Identity::RenewLoop(absl::Duration poll) {
  bool expired_logged = false;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), poll)) return;
    }
    absl::StatusOr<bool> renewed = RenewIfDue(clock_->Now());
    if (renewed.ok()) continue;
    if (absl::IsFailedPrecondition(renewed.status())) {
      if (!expired_logged) JOBSET_LOG(ERROR) << renewed.status().message();
      expired_logged = true;
    } else {
      JOBSET_LOG(WARNING) << renewed.status().message() << " (retrying)";
    }
  }
}

absl::Time Identity::not_after() {
  absl::MutexLock lock(&mu_);
  return not_after_;
}

absl::Time Identity::renew_at() {
  absl::MutexLock lock(&mu_);
  return renew_at_;
}

std::string Identity::cert_pem() {
  absl::MutexLock lock(&mu_);
  return files_.cert_pem;
}

bool Identity::AwaitCertificateOtherThan(const std::string& pem,
                                         absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto changed = [this, &pem]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return files_.cert_pem != pem;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
}

bool IsLoopbackTarget(absl::string_view target) {
  std::string host;
  if (absl::StartsWith(target, "[")) {
    size_t close = target.find(']');
    if (close == absl::string_view::npos) return false;
    host = std::string(target.substr(1, close - 1));
  } else {
    size_t colon = target.rfind(':');
    host = std::string(
        colon == absl::string_view::npos ? target : target.substr(0, colon));
  }
  return api::IsLoopbackHost(host);
}

}  // namespace jobset::agent
