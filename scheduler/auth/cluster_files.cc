#include "scheduler/auth/cluster_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/names.h"
#include "auth/tokens.h"
#include "common/status_macros.h"

namespace jobset::scheduler {
namespace {

constexpr absl::Duration kReissueBefore = absl::Hours(24 * 30);

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno("cannot create", path);
  }
  if (::chmod(path.c_str(), 0700) != 0) return Errno("cannot chmod", path);
  return absl::OkStatus();
}

bool ServerCertCovers(const auth::CertificateInfo& cert,
                      const std::vector<std::string>& sans) {
  for (const std::string& san : sans) {
    const std::vector<std::string>& have =
        api::IsIpLiteral(san) ? cert.ip_addresses : cert.dns_names;
    if (!absl::c_linear_search(have, san)) return false;
  }
  return true;
}

// The token of an admin.conf this file wrote ("    token: <t>").
std::string TokenIn(absl::string_view config) {
  for (absl::string_view line : absl::StrSplit(config, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "token:")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ReadSmallFile(
    const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    return Errno("cannot read", path);
  }
  std::string data;
  data.resize(max_bytes + 1);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (data.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
  }
  return data;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode) {
  const std::string tmp = absl::StrCat(path, ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Errno("cannot create", tmp);
  bool ok = ::fchmod(fd, mode) == 0;
  size_t done = 0;
  while (ok && done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status error = Errno("cannot write", path);
    ::unlink(tmp.c_str());
    return error;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<auth::KeyAndCert>> ReadPkiCa(
    const std::string& data_dir) {
  const std::string dir = absl::StrCat(data_dir, "/pki");
  JOBSET_ASSIGN_OR_RETURN(auto ca_cert, ReadSmallFile(dir + "/ca.crt"));
  JOBSET_ASSIGN_OR_RETURN(auto ca_key, ReadSmallFile(dir + "/ca.key"));
  if (ca_cert.has_value() != ca_key.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir,
        ": has one of ca.crt and ca.key but not the other; restore the "
        "missing one (a new CA would orphan every node certificate)"));
  }
  if (!ca_cert.has_value()) return std::nullopt;
  auth::KeyAndCert ca{.key_pem = *ca_key, .cert_pem = *ca_cert};
  if (absl::Status match =
          auth::CheckKeyMatchesCertificate(ca.key_pem, ca.cert_pem);
      !match.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, "/ca.key does not belong to ca.crt: ", match.message()));
  }
  return ca;
}

absl::StatusOr<ClusterPki> LoadOrCreatePki(
    const std::string& data_dir, std::vector<std::string> sans, absl::Time now,
    const std::optional<auth::KeyAndCert>& cluster_ca) {
  for (const char* always : {kServerName, "localhost", "127.0.0.1"}) {
    if (!absl::c_linear_search(sans, always)) sans.emplace_back(always);
  }
  const std::string dir = absl::StrCat(data_dir, "/pki");
  JOBSET_RETURN_IF_ERROR(MakeDir(dir));
  ClusterPki pki;
  JOBSET_ASSIGN_OR_RETURN(std::optional<auth::KeyAndCert> ca,
                          ReadPkiCa(data_dir));
  if (ca.has_value() && cluster_ca.has_value() &&
      ca->cert_pem != cluster_ca->cert_pem) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, "/ca.crt is not the cluster's CA"));
  }
  if (ca.has_value()) {
    pki.ca = *std::move(ca);
  } else {
    if (cluster_ca.has_value()) {
      pki.ca = *cluster_ca;
    } else {
      JOBSET_ASSIGN_OR_RETURN(pki.ca, auth::CreateCa("jobsetd-ca", now));
    }
    JOBSET_RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/ca.key", pki.ca.key_pem, 0600));
    JOBSET_RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/ca.crt", pki.ca.cert_pem, 0644));
  }
  JOBSET_ASSIGN_OR_RETURN(pki.ca_hash, auth::SpkiSha256(pki.ca.cert_pem));

  JOBSET_ASSIGN_OR_RETURN(auto server_cert, ReadSmallFile(dir + "/server.crt"));
  JOBSET_ASSIGN_OR_RETURN(auto server_key, ReadSmallFile(dir + "/server.key"));
  bool reuse =
      server_cert.has_value() && server_key.has_value() &&
      auth::VerifyCertificate(*server_cert, pki.ca.cert_pem, now).ok() &&
      auth::CheckKeyMatchesCertificate(*server_key, *server_cert).ok();
  if (reuse) {
    absl::StatusOr<auth::CertificateInfo> info =
        auth::ParseCertificate(*server_cert);
    reuse = info.ok() && info->not_after - now > kReissueBefore &&
            ServerCertCovers(*info, sans);
  }
  if (reuse) {
    pki.server = {.key_pem = *server_key, .cert_pem = *server_cert};
    return pki;
  }
  auth::LeafRequest request{.common_name = "jobsetd",
                            .server_auth = true,
                            .validity = auth::kServerCertValidity};
  for (const std::string& san : sans) {
    (api::IsIpLiteral(san) ? request.ip_addresses : request.dns_names)
        .push_back(san);
  }
  JOBSET_ASSIGN_OR_RETURN(pki.server,
                          auth::IssueKeyAndCertificate(pki.ca, request, now));
  JOBSET_RETURN_IF_ERROR(
      WriteFileAtomically(dir + "/server.key", pki.server.key_pem, 0600));
  JOBSET_RETURN_IF_ERROR(
      WriteFileAtomically(dir + "/server.crt", pki.server.cert_pem, 0644));
  return pki;
}

std::string ReplicaAdminTokenName(absl::string_view host,
                                  const std::string& data_dir) {
  std::error_code error;
  std::filesystem::path path = std::filesystem::absolute(data_dir, error);
  if (error) path = data_dir;
  std::string normal = path.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return absl::StrCat(
      "admin-", auth::Sha256Hex(absl::StrCat(host, ":", normal)).substr(0, 8));
}

absl::Status WriteAdminConfig(const std::string& data_dir,
                              const ClusterPki& pki, AccessStore* access,
                              const std::string& server_address, bool insecure,
                              absl::Time now, absl::string_view token_name) {
  const std::string path = absl::StrCat(data_dir, "/admin.conf");
  JOBSET_ASSIGN_OR_RETURN(std::optional<std::string> old, ReadSmallFile(path));
  std::string token = old.has_value() ? TokenIn(*old) : "";
  if (token.empty() || !access->AuthenticateToken(token, now).ok()) {
    JOBSET_ASSIGN_OR_RETURN(token, access->ResetAdminToken(now, token_name));
  }
  std::string cluster =
      insecure ? absl::StrCat("    server: http://", server_address, "\n")
               : absl::StrCat("    server: https://", server_address, "\n",
                              "    certificate-authority-data: ",
                              absl::Base64Escape(pki.ca.cert_pem), "\n",
                              "    tls-server-name: ", kServerName, "\n");
  std::string config = absl::StrCat(
      "# Written by jobsetd: a cluster-admin credential (group "
      "system:masters).\n"
      "# Keep it private; `jobsetctl --config=<this file>` uses it.\n"
      "apiVersion: v1\n"
      "kind: Config\n"
      "clusters:\n"
      "- name: jobsetd\n"
      "  cluster:\n",
      cluster,
      "users:\n"
      "- name: admin\n"
      "  user:\n"
      "    token: ",
      token,
      "\n"
      "contexts:\n"
      "- name: admin@jobsetd\n"
      "  context:\n"
      "    cluster: jobsetd\n"
      "    user: admin\n"
      "    namespace: default\n"
      "current-context: admin@jobsetd\n");
  return WriteFileAtomically(path, config, 0600);
}

absl::Status WriteJoinToken(const std::string& data_dir, const ClusterPki& pki,
                            AccessStore* access, absl::Time now,
                            std::optional<absl::Duration> ttl) {
  const std::string path = absl::StrCat(data_dir, "/join-token");
  JOBSET_ASSIGN_OR_RETURN(std::optional<std::string> old, ReadSmallFile(path));
  if (old.has_value()) {
    absl::StatusOr<auth::JoinToken> token = auth::ParseJoinToken(*old);
    if (token.ok() && token->ca_hash == pki.ca_hash &&
        access->CheckJoinCredential(auth::FormatToken(token->credential), now)
            .ok()) {
      return ttl.has_value() ? access->LimitJoinCredentialExpiry(now + *ttl)
                             : absl::OkStatus();
    }
  }
  std::optional<absl::Time> expires;
  if (ttl.has_value()) expires = now + *ttl;
  JOBSET_ASSIGN_OR_RETURN(auth::TokenParts credential,
                          access->RotateJoinCredential(expires, now));
  return WriteFileAtomically(
      path,
      absl::StrCat(auth::FormatJoinToken(
                       {.ca_hash = pki.ca_hash, .credential = credential}),
                   "\n"),
      0600);
}

}  // namespace jobset::scheduler
