#ifndef JOBSET_CLI_KUBECONFIG_H_
#define JOBSET_CLI_KUBECONFIG_H_

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::cli {

// The client config file: kubeconfig's shape (apiVersion v1, kind Config,
// clusters, users, contexts, current-context). Keys jobsetctl does not use
// are ignored. Paths are made relative to the file's directory when read;
// the *-data fields stay base64 here (decoded by ResolveConnection).
struct ClusterEntry {
  std::string server;
  std::string certificate_authority;       // A path.
  std::string certificate_authority_data;  // Base64 PEM.
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
};

struct UserEntry {
  std::string token;
  std::string token_file;
  std::string client_certificate;
  std::string client_certificate_data;
  std::string client_key;
  std::string client_key_data;
};

struct ContextEntry {
  std::string cluster;
  std::string user;
  std::string namespace_;
};

struct Kubeconfig {
  std::map<std::string, ClusterEntry> clusters;
  std::map<std::string, UserEntry> users;
  std::map<std::string, ContextEntry> contexts;
  std::string current_context;
  // The files read, first first (for messages); empty when none was.
  std::vector<std::string> files;
};

// The largest config file read.
inline constexpr size_t kMaxConfigBytes = 1 << 20;

// Parses one config file's text; `path` names it in errors and is the base
// of relative paths. kInvalidArgument naming the entry and field.
absl::StatusOr<Kubeconfig> ParseKubeconfig(absl::string_view text,
                                           absl::string_view path);

// The files to read, in order: `flag` (--config) alone when given, else the
// colon-separated `env` ($JOBSETCONFIG), else <home>/.config/jobset/config
// when it exists. Empty when there is none.
std::vector<std::string> ConfigFiles(const std::optional<std::string>& flag,
                                     const char* env, const char* home);

// Reads and merges `files` first-wins per map key (as KUBECONFIG): the first
// file's current-context wins. `explicit_file` (from --config) must exist;
// files from $JOBSETCONFIG that do not exist are skipped. Writes a warning
// to `warnings` (may be null) for each file group- or world-readable.
absl::StatusOr<Kubeconfig> LoadKubeconfig(const std::vector<std::string>& files,
                                          bool explicit_file,
                                          std::ostream* warnings);

// What the command line overrides.
struct Overrides {
  std::optional<std::string> context;
  std::optional<std::string> server;  // --server, else $JOBSET_SERVER.
  std::optional<std::string> token;
  std::optional<std::string> namespace_;
};

// How to reach jobsetd, resolved.
struct Connection {
  std::string address;  // host:port for gRPC.
  bool tls = false;
  std::string ca_pem;
  std::string server_name;  // tls-server-name; empty: none.
  std::string token;
  std::string cert_pem;
  std::string key_pem;
  std::string namespace_;  // Empty: "default".
  bool insecure_skip_tls_verify = false;
  // The config file for messages ("" when none was read).
  std::string config_path;
};

// Resolves the connection of the context (override, else current-context).
// With no config file read, --server alone is the server (nothing at all
// means 127.0.0.1:7070). A server without a scheme is TLS; http:// is
// plaintext, loopback only, and refused with a bearer token: a token is only
// ever sent over TLS.
absl::StatusOr<Connection> ResolveConnection(const Kubeconfig& config,
                                             const Overrides& overrides);

// Writing a config (kubeconfig_edit.cc).

// The merged config as YAML for `config view`: secrets and *-data as
// REDACTED / DATA+OMITTED unless `raw`; `minify`: only the current context
// and what it names.
absl::StatusOr<std::string> KubeconfigYaml(const Kubeconfig& config,
                                           bool minify, bool raw);

// Edits the file at `path` in place (created 0600 when missing), keeping
// every other key: sets current-context.
absl::Status WriteCurrentContext(const std::string& path,
                                 const std::string& name);

// Creates or updates context `name` in the file at `path`: the given fields
// replace those of the context.
absl::Status WriteContext(const std::string& path, const std::string& name,
                          const std::optional<std::string>& cluster,
                          const std::optional<std::string>& user,
                          const std::optional<std::string>& namespace_);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_KUBECONFIG_H_
