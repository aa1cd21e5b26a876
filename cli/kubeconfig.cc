#include "cli/kubeconfig.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/names.h"
#include "cli/kubeconfig_internal.h"
#include "common/quote.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace kubeconfig_internal {

absl::StatusOr<std::string> ReadBounded(const std::string& path,
                                        absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read ", what, " ", Quote(path), ": ", strerror(errno)));
  }
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", Quote(path), " is larger than ", kMaxConfigBytes, " bytes"));
  }
  return text;
}

absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text,
                                    absl::string_view path) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not valid YAML: line ", e.mark.line + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not valid YAML: ", e.what()));
  }
}

}  // namespace kubeconfig_internal

namespace {

using kubeconfig_internal::LoadYaml;
using kubeconfig_internal::ReadBounded;

constexpr absl::string_view kDefaultServer = "127.0.0.1:7070";

std::string Dir(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return "";
  return std::string(path.substr(0, slash + 1));
}

std::string Relative(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || dir.empty()) return path;
  return absl::StrCat(dir, path);
}

// Reads the scalar `key` of `map` into `out`; an error names `where`.
absl::Status ReadString(const YAML::Node& map, absl::string_view key,
                        absl::string_view where, std::string* out) {
  const YAML::Node node = map[std::string(key)];
  if (!node.IsDefined() || node.IsNull()) return absl::OkStatus();
  if (!node.IsScalar()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".", key, ": must be a string"));
  }
  *out = node.Scalar();
  return absl::OkStatus();
}

absl::Status ReadBool(const YAML::Node& map, absl::string_view key,
                      absl::string_view where, bool* out) {
  std::string value;
  if (absl::Status s = ReadString(map, key, where, &value); !s.ok()) return s;
  if (value.empty()) return absl::OkStatus();
  if (!absl::SimpleAtob(value, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ".", key, ": must be true or false, got ", Quote(value)));
  }
  return absl::OkStatus();
}

// Calls `each(name, body, where)` for the entries of the list `key`
// ({name, <body_key>: {...}}).
template <typename Each>
absl::Status ForEntries(const YAML::Node& root, absl::string_view key,
                        absl::string_view body_key, absl::string_view path,
                        Each each) {
  const YAML::Node list = root[std::string(key)];
  if (!list.IsDefined() || list.IsNull()) return absl::OkStatus();
  if (!list.IsSequence()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", key, " must be a list"));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node entry = list[i];
    const std::string where = absl::StrCat(path, ": ", key, "[", i, "]");
    if (!entry.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": must be a mapping"));
    }
    std::string name;
    if (absl::Status s = ReadString(entry, "name", where, &name); !s.ok()) {
      return s;
    }
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": has no name"));
    }
    YAML::Node body = entry[std::string(body_key)];
    if (body.IsDefined() && !body.IsNull() && !body.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".", body_key, ": must be a mapping"));
    }
    if (!body.IsDefined() || body.IsNull())
      body = YAML::Node(YAML::NodeType::Map);
    if (absl::Status s =
            each(name, body,
                 absl::StrCat(path, ": ", key.substr(0, key.size() - 1), " ",
                              Quote(name)));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Splits "https://host:port" into scheme ("" when none) and host:port. A
// list of replicas ("https://a:7070,https://b:7070", or
// "https://a:7070,b:7070") gives the addresses comma-separated
// (common/replicas.h); every entry must have the first one's scheme, or none.
absl::Status SplitServer(absl::string_view server, std::string* scheme,
                         std::string* address) {
  scheme->clear();
  address->clear();
  bool first = true;
  for (absl::string_view entry : absl::StrSplit(server, ',')) {
    std::string entry_scheme;
    if (const size_t at = entry.find("://"); at != absl::string_view::npos) {
      entry_scheme = absl::AsciiStrToLower(entry.substr(0, at));
      entry = entry.substr(at + 3);
    }
    if (first) {
      *scheme = entry_scheme;
    } else if (!entry_scheme.empty() && entry_scheme != *scheme) {
      return absl::InvalidArgumentError(
          absl::StrCat("server ", Quote(server),
                       ": every replica's address must use the "
                       "first one's scheme (",
                       scheme->empty() ? "none" : *scheme, ")"));
    }
    absl::ConsumeSuffix(&entry, "/");
    if (!first) address->push_back(',');
    absl::StrAppend(address, entry);
    first = false;
  }
  return absl::OkStatus();
}

std::string HostOf(absl::string_view address) {
  if (absl::StartsWith(address, "[")) {
    const size_t end = address.find(']');
    return std::string(
        address.substr(1, end == address.npos ? address.npos : end - 1));
  }
  const size_t colon = address.rfind(':');
  // More than one colon without brackets: a bare IPv6 address.
  if (colon != address.npos && address.find(':') == colon) {
    return std::string(address.substr(0, colon));
  }
  return std::string(address);
}

// Whether every address of a comma-separated list is on this host.
bool AllLoopback(absl::string_view addresses) {
  for (absl::string_view address : absl::StrSplit(addresses, ',')) {
    if (!api::IsLoopbackHost(HostOf(address))) return false;
  }
  return true;
}

// Refuses a bearer token over plaintext: gRPC's own call credentials need a
// secure channel, and a token read off the wire is the user. A plaintext
// jobsetd (--insecure, loopback only) takes every caller as cluster-admin
// and needs no token.
absl::Status RefuseTokenInPlaintext(const Connection& conn,
                                    absl::string_view server) {
  if (conn.tls || conn.token.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "server ", Quote(server),
      ": a bearer token is only sent over TLS; use https:// (or no scheme), "
      "or leave the token out for a plaintext jobsetd --insecure"));
}

absl::StatusOr<std::string> Decode(const std::string& data,
                                   absl::string_view field,
                                   absl::string_view owner) {
  std::string out;
  std::string compact;
  for (char c : data) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) compact += c;
  }
  if (!absl::Base64Unescape(compact, &out)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " of ", owner, " is not base64"));
  }
  return out;
}

// The *-data field when set, else the file `path` (relative paths were
// resolved when read), else "".
absl::StatusOr<std::string> DataOrFile(const std::string& data,
                                       const std::string& path,
                                       absl::string_view data_field,
                                       absl::string_view owner) {
  if (!data.empty()) return Decode(data, data_field, owner);
  if (path.empty()) return std::string();
  return ReadBounded(path, absl::StrCat(absl::StripSuffix(data_field, "-data"),
                                        " of ", owner));
}

}  // namespace

absl::StatusOr<Kubeconfig> ParseKubeconfig(absl::string_view text,
                                           absl::string_view path) {
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is larger than ", kMaxConfigBytes, " bytes"));
  }
  absl::StatusOr<YAML::Node> root = LoadYaml(text, path);
  if (!root.ok()) return root.status();
  Kubeconfig config;
  config.files.push_back(std::string(path));
  if (root->IsNull()) return config;
  if (!root->IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must be a mapping (kind: Config)"));
  }
  const std::string dir = Dir(path);
  try {
    std::string kind;
    if (absl::Status s = ReadString(*root, "kind", path, &kind); !s.ok()) {
      return s;
    }
    if (!kind.empty() && kind != "Config") {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": kind must be Config, got ", Quote(kind)));
    }
    if (absl::Status s =
            ReadString(*root, "current-context", path, &config.current_context);
        !s.ok()) {
      return s;
    }
    absl::Status s = ForEntries(
        *root, "clusters", "cluster", path,
        [&](const std::string& name, const YAML::Node& body,
            const std::string& where) -> absl::Status {
          ClusterEntry c;
          for (auto [key, out] :
               std::initializer_list<std::pair<const char*, std::string*>>{
                   {"server", &c.server},
                   {"certificate-authority", &c.certificate_authority},
                   {"certificate-authority-data",
                    &c.certificate_authority_data},
                   {"tls-server-name", &c.tls_server_name}}) {
            if (absl::Status s = ReadString(body, key, where, out); !s.ok()) {
              return s;
            }
          }
          if (absl::Status s = ReadBool(body, "insecure-skip-tls-verify", where,
                                        &c.insecure_skip_tls_verify);
              !s.ok()) {
            return s;
          }
          c.certificate_authority = Relative(dir, c.certificate_authority);
          config.clusters.try_emplace(name, std::move(c));
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
    s = ForEntries(
        *root, "users", "user", path,
        [&](const std::string& name, const YAML::Node& body,
            const std::string& where) -> absl::Status {
          UserEntry u;
          for (auto [key, out] :
               std::initializer_list<std::pair<const char*, std::string*>>{
                   {"token", &u.token},
                   {"tokenFile", &u.token_file},
                   {"client-certificate", &u.client_certificate},
                   {"client-certificate-data", &u.client_certificate_data},
                   {"client-key", &u.client_key},
                   {"client-key-data", &u.client_key_data}}) {
            if (absl::Status s = ReadString(body, key, where, out); !s.ok()) {
              return s;
            }
          }
          u.token_file = Relative(dir, u.token_file);
          u.client_certificate = Relative(dir, u.client_certificate);
          u.client_key = Relative(dir, u.client_key);
          config.users.try_emplace(name, std::move(u));
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
    s = ForEntries(
        *root, "contexts", "context", path,
        [&](const std::string& name, const YAML::Node& body,
            const std::string& where) -> absl::Status {
          ContextEntry c;
          for (auto [key, out] :
               std::initializer_list<std::pair<const char*, std::string*>>{
                   {"cluster", &c.cluster},
                   {"user", &c.user},
                   {"namespace", &c.namespace_}}) {
            if (absl::Status s = ReadString(body, key, where, out); !s.ok()) {
              return s;
            }
          }
          config.contexts.try_emplace(name, std::move(c));
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot be read: ", e.msg));
  }
  return config;
}

std::vector<std::string> ConfigFiles(const std::optional<std::string>& flag,
                                     const char* env, const char* home) {
  if (flag.has_value()) return {*flag};
  std::vector<std::string> files;
  if (env != nullptr && *env != '\0') {
    for (absl::string_view part : absl::StrSplit(env, ':', absl::SkipEmpty())) {
      files.push_back(std::string(part));
    }
    return files;
  }
  if (home != nullptr && *home != '\0') {
    const std::string path = absl::StrCat(home, "/.config/jobset/config");
    struct stat st;
    if (stat(path.c_str(), &st) == 0) files.push_back(path);
  }
  return files;
}

absl::StatusOr<Kubeconfig> LoadKubeconfig(const std::vector<std::string>& files,
                                          bool explicit_file,
                                          std::ostream* warnings) {
  Kubeconfig merged;
  for (const std::string& file : files) {
    struct stat st;
    if (stat(file.c_str(), &st) != 0) {
      if (explicit_file) {
        return absl::NotFoundError(absl::StrCat(
            "cannot read config ", Quote(file), ": ", strerror(errno)));
      }
      continue;
    }
    if ((st.st_mode & 077) != 0 && warnings != nullptr) {
      *warnings << "Warning: " << file
                << " is readable by group or others; it may hold credentials "
                   "(chmod 600 it)\n";
    }
    absl::StatusOr<std::string> text = ReadBounded(file, "config");
    if (!text.ok()) return text.status();
    absl::StatusOr<Kubeconfig> one = ParseKubeconfig(*text, file);
    if (!one.ok()) return one.status();
    merged.files.push_back(file);
    merged.clusters.merge(one->clusters);
    merged.users.merge(one->users);
    merged.contexts.merge(one->contexts);
    if (merged.current_context.empty()) {
      merged.current_context = one->current_context;
    }
  }
  return merged;
}

absl::StatusOr<Connection> ResolveConnection(const Kubeconfig& config,
                                             const Overrides& overrides) {
  Connection conn;
  conn.config_path = config.files.empty() ? "" : config.files.front();
  if (config.files.empty() && !overrides.context.has_value()) {
    // No config: --server alone, TLS unless it says http://.
    const std::string server =
        overrides.server.value_or(std::string(kDefaultServer));
    std::string scheme;
    if (absl::Status s = SplitServer(server, &scheme, &conn.address); !s.ok()) {
      return s;
    }
    if (scheme == "https" || scheme.empty()) {
      conn.tls = true;
      conn.server_name = "server.jobsetd";
    } else if (scheme == "http" && !AllLoopback(conn.address)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "server ", Quote(server),
          ": http:// (plaintext) is only allowed to a loopback address "
          "(jobsetd --insecure); use https://"));
    } else if (scheme != "http") {
      return absl::InvalidArgumentError(
          absl::StrCat("server ", Quote(server),
                       ": the scheme must be https:// or http://"));
    }
    conn.token = overrides.token.value_or("");
    if (absl::Status s = RefuseTokenInPlaintext(conn, server); !s.ok()) {
      return s;
    }
    conn.namespace_ = overrides.namespace_.value_or("");
    return conn;
  }
  const std::string file =
      config.files.empty() ? "the config" : config.files[0];
  const std::string context_name =
      overrides.context.value_or(config.current_context);
  if (context_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no current-context in ", file, "; pass --context"));
  }
  auto context = config.contexts.find(context_name);
  if (context == config.contexts.end()) {
    return absl::NotFoundError(
        absl::StrCat("context ", Quote(context_name), " not found in ", file));
  }
  const ContextEntry& ctx = context->second;
  ClusterEntry cluster;
  if (!ctx.cluster.empty()) {
    auto it = config.clusters.find(ctx.cluster);
    if (it == config.clusters.end()) {
      return absl::NotFoundError(
          absl::StrCat("cluster ", Quote(ctx.cluster), " (of context ",
                       Quote(context_name), ") not found in ", file));
    }
    cluster = it->second;
  } else if (!overrides.server.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context ", Quote(context_name), " names no cluster in ", file));
  }
  UserEntry user;
  if (!ctx.user.empty()) {
    auto it = config.users.find(ctx.user);
    if (it == config.users.end()) {
      return absl::NotFoundError(
          absl::StrCat("user ", Quote(ctx.user), " (of context ",
                       Quote(context_name), ") not found in ", file));
    }
    user = it->second;
  }
  const std::string cluster_owner =
      absl::StrCat("cluster ", Quote(ctx.cluster));
  const std::string user_owner = absl::StrCat("user ", Quote(ctx.user));
  const std::string server = overrides.server.value_or(cluster.server);
  if (server.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cluster_owner, " has no server in ", file));
  }
  std::string scheme;
  if (absl::Status s = SplitServer(server, &scheme, &conn.address); !s.ok()) {
    return s;
  }
  if (conn.address.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("server ", Quote(server), " has no host:port"));
  }
  const bool loopback = AllLoopback(conn.address);
  absl::StatusOr<std::string> ca = DataOrFile(
      cluster.certificate_authority_data, cluster.certificate_authority,
      "certificate-authority-data", cluster_owner);
  if (!ca.ok()) return ca.status();
  conn.ca_pem = *std::move(ca);
  if (scheme == "https") {
    conn.tls = true;
  } else if (scheme == "http") {
    if (!loopback) {
      return absl::InvalidArgumentError(absl::StrCat(
          "server ", Quote(server),
          ": http:// (plaintext) is only allowed to a loopback address "
          "(jobsetd --insecure); use https://"));
    }
    conn.tls = false;
  } else if (scheme.empty()) {
    // As the issue asks (and unlike client-go, which picks http:// when no
    // CA is set): a bare host:port is TLS, so a token never goes in plaintext
    // by accident.
    conn.tls = true;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "server ", Quote(server), ": the scheme must be https:// or http://"));
  }
  if (cluster.insecure_skip_tls_verify) {
    if (!loopback) {
      return absl::InvalidArgumentError(absl::StrCat(
          "insecure-skip-tls-verify of ", cluster_owner,
          " is only allowed for a loopback server, not ", Quote(server)));
    }
    conn.insecure_skip_tls_verify = true;
  }
  conn.server_name = cluster.tls_server_name;
  if (overrides.token.has_value()) {
    conn.token = *overrides.token;
  } else if (!user.token.empty()) {
    conn.token = user.token;
  } else if (!user.token_file.empty()) {
    absl::StatusOr<std::string> token =
        ReadBounded(user.token_file, absl::StrCat("tokenFile of ", user_owner));
    if (!token.ok()) return token.status();
    conn.token = std::string(absl::StripAsciiWhitespace(*token));
  }
  if (absl::Status s = RefuseTokenInPlaintext(conn, server); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> cert =
      DataOrFile(user.client_certificate_data, user.client_certificate,
                 "client-certificate-data", user_owner);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = DataOrFile(
      user.client_key_data, user.client_key, "client-key-data", user_owner);
  if (!key.ok()) return key.status();
  if (cert->empty() != key->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(user_owner,
                     " needs both a client certificate and a "
                     "client key, or neither"));
  }
  conn.cert_pem = *std::move(cert);
  conn.key_pem = *std::move(key);
  conn.namespace_ = overrides.namespace_.value_or(ctx.namespace_);
  return conn;
}

}  // namespace jobset::cli
