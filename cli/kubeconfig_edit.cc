// The writers of the client config: `config view`'s YAML and the in-place
// edits of `config use-context` and `config set-context`. Declared in
// kubeconfig.h; reading and resolving a config is kubeconfig.cc.

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/kubeconfig.h"
#include "cli/kubeconfig_internal.h"
#include "common/quote.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace {

using kubeconfig_internal::LoadYaml;
using kubeconfig_internal::ReadBounded;

void Put(YAML::Emitter& out, const char* key, const std::string& value) {
  if (value.empty()) return;
  out << YAML::Key << key << YAML::Value << value;
}

std::string Secret(const std::string& value, bool raw, const char* mask) {
  return raw || value.empty() ? value : std::string(mask);
}

absl::StatusOr<YAML::Node> LoadForEdit(const std::string& path) {
  std::ifstream probe(path);
  if (!probe) {
    YAML::Node root(YAML::NodeType::Map);
    root["apiVersion"] = "v1";
    root["kind"] = "Config";
    return root;
  }
  absl::StatusOr<std::string> text = ReadBounded(path, "config");
  if (!text.ok()) return text.status();
  absl::StatusOr<YAML::Node> root = LoadYaml(*text, path);
  if (!root.ok()) return root.status();
  if (root->IsNull()) return YAML::Node(YAML::NodeType::Map);
  if (!root->IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must be a mapping (kind: Config)"));
  }
  return root;
}

absl::Status Save(const std::string& path, const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", Quote(tmp), ": ", strerror(errno)));
    }
    file << out.c_str() << "\n";
    if (!file.flush()) {
      return absl::InternalError(absl::StrCat("cannot write ", Quote(tmp)));
    }
  }
  chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = strerror(errno);
    std::remove(tmp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot replace ", Quote(path), ": ", why));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> KubeconfigYaml(const Kubeconfig& config,
                                           bool minify, bool raw) {
  std::map<std::string, ContextEntry> contexts = config.contexts;
  std::map<std::string, ClusterEntry> clusters = config.clusters;
  std::map<std::string, UserEntry> users = config.users;
  if (minify) {
    if (config.current_context.empty()) {
      return absl::InvalidArgumentError(
          "current-context must exist in order "
          "to minify");
    }
    auto it = config.contexts.find(config.current_context);
    if (it == config.contexts.end()) {
      return absl::NotFoundError(
          absl::StrCat("cannot locate context ", config.current_context));
    }
    contexts = {*it};
    clusters.clear();
    users.clear();
    if (auto c = config.clusters.find(it->second.cluster);
        c != config.clusters.end()) {
      clusters.insert(*c);
    }
    if (auto u = config.users.find(it->second.user); u != config.users.end()) {
      users.insert(*u);
    }
  }
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, c] : clusters) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
    out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
    Put(out, "server", c.server);
    Put(out, "certificate-authority", c.certificate_authority);
    Put(out, "certificate-authority-data",
        Secret(c.certificate_authority_data, raw, "DATA+OMITTED"));
    Put(out, "tls-server-name", c.tls_server_name);
    if (c.insecure_skip_tls_verify) {
      out << YAML::Key << "insecure-skip-tls-verify" << YAML::Value << true;
    }
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, c] : contexts) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
    out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
    Put(out, "cluster", c.cluster);
    Put(out, "user", c.user);
    Put(out, "namespace", c.namespace_);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value
      << config.current_context;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, u] : users) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
    out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
    Put(out, "token", Secret(u.token, raw, "REDACTED"));
    Put(out, "tokenFile", u.token_file);
    Put(out, "client-certificate", u.client_certificate);
    Put(out, "client-certificate-data",
        Secret(u.client_certificate_data, raw, "DATA+OMITTED"));
    Put(out, "client-key", u.client_key);
    Put(out, "client-key-data", Secret(u.client_key_data, raw, "DATA+OMITTED"));
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return absl::StrCat(out.c_str(), "\n");
}

absl::Status WriteCurrentContext(const std::string& path,
                                 const std::string& name) {
  absl::StatusOr<YAML::Node> root = LoadForEdit(path);
  if (!root.ok()) return root.status();
  try {
    (*root)["current-context"] = name;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.msg));
  }
  return Save(path, *root);
}

absl::Status WriteContext(const std::string& path, const std::string& name,
                          const std::optional<std::string>& cluster,
                          const std::optional<std::string>& user,
                          const std::optional<std::string>& namespace_) {
  absl::StatusOr<YAML::Node> root = LoadForEdit(path);
  if (!root.ok()) return root.status();
  try {
    YAML::Node contexts = (*root)["contexts"];
    if (contexts.IsDefined() && !contexts.IsNull() && !contexts.IsSequence()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": contexts must be a list"));
    }
    YAML::Node body;
    bool found = false;
    if (contexts.IsSequence()) {
      for (size_t i = 0; i < contexts.size(); ++i) {
        YAML::Node entry = contexts[i];
        if (entry.IsMap() && entry["name"].IsScalar() &&
            entry["name"].Scalar() == name) {
          if (!entry["context"].IsMap()) {
            entry["context"] = YAML::Node(YAML::NodeType::Map);
          }
          body = entry["context"];
          found = true;
          break;
        }
      }
    }
    if (!found) {
      YAML::Node entry(YAML::NodeType::Map);
      entry["name"] = name;
      entry["context"] = YAML::Node(YAML::NodeType::Map);
      body = entry["context"];
      if (!contexts.IsSequence()) {
        (*root)["contexts"] = YAML::Node(YAML::NodeType::Sequence);
      }
      (*root)["contexts"].push_back(entry);
    }
    if (cluster.has_value()) body["cluster"] = *cluster;
    if (user.has_value()) body["user"] = *user;
    if (namespace_.has_value()) body["namespace"] = *namespace_;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.msg));
  }
  return Save(path, *root);
}

}  // namespace jobset::cli
