#include "api/pod_config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/config_objects.h"
#include "api/names.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace jobset::api {
namespace {

// Kubernetes' SecretVolumeSourceDefaultMode and
// ConfigMapVolumeSourceDefaultMode.
constexpr int32_t kDefaultFileMode = 0644;

absl::Status ConfigError(absl::string_view message) {
  return absl::FailedPreconditionError(message);
}

std::string SecretNotFound(absl::string_view name) {
  return absl::StrCat("secret \"", name, "\" not found");
}

std::string ConfigMapNotFound(absl::string_view name) {
  return absl::StrCat("configmap \"", name, "\" not found");
}

// A Secret's or ConfigMap's keys and values, by key.
using Data = std::map<std::string, const std::string*>;

Data SecretData(const Secret& secret) {
  Data data;
  for (const auto& [key, value] : secret.data()) data[key] = &value;
  return data;
}

Data ConfigMapData(const ConfigMap& config_map) {
  Data data;
  for (const auto& [key, value] : config_map.data()) data[key] = &value;
  // Validation keeps a key out of both maps.
  for (const auto& [key, value] : config_map.binary_data()) data[key] = &value;
  return data;
}

// One object a reference names, found or not.
struct Found {
  bool exists = false;
  Data data;
};

class Resolver {
 public:
  Resolver(absl::string_view ns, const ConfigObjects& objects, bool best_effort)
      : ns_(ns), objects_(objects), best_effort_(best_effort) {}

  Found FindSecret(const std::string& name) const {
    auto it = objects_.secrets.find(name);
    if (it == objects_.secrets.end() || it->second == nullptr) return {};
    return {true, SecretData(*it->second)};
  }
  Found FindConfigMap(const std::string& name) const {
    auto it = objects_.config_maps.find(name);
    if (it == objects_.config_maps.end() || it->second == nullptr) return {};
    return {true, ConfigMapData(*it->second)};
  }
  bool Optional(bool optional) const { return optional || best_effort_; }

  // Resolves a secretKeyRef or configMapKeyRef.
  absl::StatusOr<std::optional<std::string>> KeyRef(bool secret,
                                                    const std::string& name,
                                                    const std::string& key,
                                                    bool optional) const {
    const Found found = secret ? FindSecret(name) : FindConfigMap(name);
    if (!found.exists) {
      if (Optional(optional)) return std::nullopt;
      return ConfigError(secret ? SecretNotFound(name)
                                : ConfigMapNotFound(name));
    }
    auto it = found.data.find(key);
    if (it == found.data.end()) {
      if (Optional(optional)) return std::nullopt;
      return ConfigError(absl::StrCat("couldn't find key ", key, " in ",
                                      secret ? "Secret " : "ConfigMap ", ns_,
                                      "/", name));
    }
    return *it->second;
  }

  absl::Status ResolveEnv(const Container& container,
                          ContainerConfigEnv* out) const {
    std::map<std::string, std::string> from;
    for (const EnvFromSource& source : container.env_from()) {
      const bool secret = source.has_secret_ref();
      const std::string& name =
          secret ? source.secret_ref().name() : source.config_map_ref().name();
      const bool optional = secret ? source.secret_ref().optional()
                                   : source.config_map_ref().optional();
      const Found found = secret ? FindSecret(name) : FindConfigMap(name);
      if (!found.exists) {
        if (Optional(optional)) continue;
        return ConfigError(secret ? SecretNotFound(name)
                                  : ConfigMapNotFound(name));
      }
      for (const auto& [key, value] : found.data) {
        std::string var = absl::StrCat(source.prefix(), key);
        // As kubelet did before relaxed names: keys that make no valid
        // variable name are skipped.
        if (!IsStrictEnvVarName(var)) continue;
        from[std::move(var)] = *value;
      }
    }
    out->from.assign(from.begin(), from.end());
    for (int i = 0; i < container.env_size(); ++i) {
      const EnvVarSource& source = container.env(i).value_from();
      if (source.has_secret_key_ref()) {
        const SecretKeySelector& ref = source.secret_key_ref();
        absl::StatusOr<std::optional<std::string>> value =
            KeyRef(true, ref.name(), ref.key(), ref.optional());
        if (!value.ok()) return value.status();
        out->values[i] = *std::move(value);
      } else if (source.has_config_map_key_ref()) {
        const ConfigMapKeySelector& ref = source.config_map_key_ref();
        absl::StatusOr<std::optional<std::string>> value =
            KeyRef(false, ref.name(), ref.key(), ref.optional());
        if (!value.ok()) return value.status();
        out->values[i] = *std::move(value);
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<ConfigVolume>> ResolveVolume(
      const Volume& volume) const {
    const bool secret = volume.has_secret();
    if (!secret && !volume.has_config_map()) return std::nullopt;
    const std::string& name =
        secret ? volume.secret().secret_name() : volume.config_map().name();
    const auto& items =
        secret ? volume.secret().items() : volume.config_map().items();
    const bool optional =
        secret ? volume.secret().optional() : volume.config_map().optional();
    const bool has_mode = secret ? volume.secret().has_default_mode()
                                 : volume.config_map().has_default_mode();
    const int32_t mode = !has_mode
                             ? kDefaultFileMode
                             : (secret ? volume.secret().default_mode()
                                       : volume.config_map().default_mode());
    auto mount_error = [&](absl::string_view detail) {
      return ConfigError(absl::StrCat("MountVolume.SetUp failed for volume \"",
                                      volume.name(), "\" : ", detail));
    };
    ConfigVolume out;
    out.set_name(volume.name());
    out.set_secret(secret);
    const Found found = secret ? FindSecret(name) : FindConfigMap(name);
    if (!found.exists) {
      if (Optional(optional)) return out;  // An empty volume.
      return mount_error(secret ? SecretNotFound(name)
                                : ConfigMapNotFound(name));
    }
    if (items.empty()) {
      for (const auto& [key, value] : found.data) {
        ConfigFile* file = out.add_files();
        file->set_path(key);
        file->set_data(*value);
        file->set_mode(mode);
      }
      return out;
    }
    for (const KeyToPath& item : items) {
      auto it = found.data.find(item.key());
      if (it == found.data.end()) {
        if (Optional(optional)) continue;
        return mount_error(
            secret
                ? absl::StrCat("references non-existent secret key: ",
                               item.key())
                : absl::StrCat("configmap references non-existent config key: ",
                               item.key()));
      }
      ConfigFile* file = out.add_files();
      file->set_path(item.path());
      file->set_data(*it->second);
      file->set_mode(item.has_mode() ? item.mode() : mode);
    }
    return out;
  }

 private:
  const std::string ns_;
  const ConfigObjects& objects_;
  const bool best_effort_;
};

// Decodes an entry's `auth`, base64 of "user:pass", padded or not.
bool DecodeAuth(const std::string& auth, std::string* user,
                std::string* password) {
  std::string padded = auth;
  if (padded.size() % 4 != 0) padded.append(4 - padded.size() % 4, '=');
  std::string decoded;
  if (!absl::Base64Unescape(padded, &decoded)) return false;
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  *user = decoded.substr(0, colon);
  *password = decoded.substr(colon + 1);
  return true;
}

std::string StringField(const google::protobuf::Struct& entry,
                        const std::string& field) {
  auto it = entry.fields().find(field);
  if (it == entry.fields().end() || !it->second.has_string_value()) return "";
  return it->second.string_value();
}

}  // namespace

ConfigReferences ReferencedConfigObjects(const PodSpec& spec) {
  ConfigReferences refs;
  for (const Volume& v : spec.volumes()) {
    if (v.has_secret()) refs.secrets.insert(v.secret().secret_name());
    if (v.has_config_map()) refs.config_maps.insert(v.config_map().name());
  }
  for (const LocalObjectReference& ref : spec.image_pull_secrets())
    refs.secrets.insert(ref.name());
  for (const auto* containers : {&spec.init_containers(), &spec.containers()}) {
    for (const Container& c : *containers) {
      for (const EnvFromSource& from : c.env_from()) {
        if (from.has_secret_ref())
          refs.secrets.insert(from.secret_ref().name());
        if (from.has_config_map_ref())
          refs.config_maps.insert(from.config_map_ref().name());
      }
      for (const EnvVar& var : c.env()) {
        const EnvVarSource& source = var.value_from();
        if (source.has_secret_key_ref())
          refs.secrets.insert(source.secret_key_ref().name());
        if (source.has_config_map_key_ref())
          refs.config_maps.insert(source.config_map_key_ref().name());
      }
    }
  }
  return refs;
}

absl::StatusOr<std::vector<RegistryCredential>> ParseDockerConfigSecret(
    const Secret& secret) {
  const bool json = secret.type() == kSecretTypeDockerConfigJson;
  if (!json && secret.type() != kSecretTypeDockercfg) {
    return std::vector<RegistryCredential>();
  }
  const char* key = json ? kDockerConfigJsonKey : kDockercfgKey;
  const std::string where =
      absl::StrCat("secret \"", secret.metadata().name(), "\" (", key, ")");
  auto data = secret.data().find(key);
  if (data == secret.data().end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the key is missing"));
  }
  google::protobuf::Struct parsed;
  // The parser's message may quote the input: it is not passed on.
  if (!google::protobuf::util::JsonStringToMessage(data->second, &parsed)
           .ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a JSON object"));
  }
  const google::protobuf::Struct* auths = &parsed;
  if (json) {
    auto it = parsed.fields().find("auths");
    if (it == parsed.fields().end() || !it->second.has_struct_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": no \"auths\" object"));
    }
    auths = &it->second.struct_value();
  }
  std::vector<RegistryCredential> out;
  for (const auto& [server, value] : auths->fields()) {
    if (!value.has_struct_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the entry of registry \"", server, "\" is not an object"));
    }
    const google::protobuf::Struct& entry = value.struct_value();
    RegistryCredential& credential = out.emplace_back();
    credential.set_server(server);
    const std::string auth = StringField(entry, "auth");
    if (!auth.empty()) {
      std::string user, password;
      if (!DecodeAuth(auth, &user, &password)) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": the auth of registry \"", server,
                         "\" is not base64 of username:password"));
      }
      credential.set_username(std::move(user));
      credential.set_password(std::move(password));
    } else {
      credential.set_username(StringField(entry, "username"));
      credential.set_password(StringField(entry, "password"));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const RegistryCredential& a, const RegistryCredential& b) {
              return a.server() < b.server();
            });
  return out;
}

int64_t PodConfigBytes(const PodConfig& config) {
  int64_t bytes = 0;
  for (const auto& [container, env] : config.env) {
    for (const auto& [name, value] : env.from)
      bytes += static_cast<int64_t>(name.size() + value.size());
    for (const auto& [i, value] : env.values)
      bytes += value.has_value() ? static_cast<int64_t>(value->size()) : 0;
  }
  for (const ConfigVolume& v : config.volumes) {
    for (const ConfigFile& f : v.files())
      bytes += static_cast<int64_t>(f.path().size() + f.data().size());
  }
  for (const RegistryCredential& c : config.pull_credentials) {
    bytes += static_cast<int64_t>(c.server().size() + c.username().size() +
                                  c.password().size());
  }
  return bytes;
}

absl::StatusOr<PodConfig> ResolvePodConfig(absl::string_view ns,
                                           const PodSpec& spec,
                                           const ConfigObjects& objects,
                                           bool best_effort) {
  const Resolver resolver(ns, objects, best_effort);
  PodConfig config;
  // Kubelet mounts the volumes before it starts any container.
  for (const Volume& volume : spec.volumes()) {
    absl::StatusOr<std::optional<ConfigVolume>> resolved =
        resolver.ResolveVolume(volume);
    if (!resolved.ok()) return resolved.status();
    if (resolved->has_value()) config.volumes.push_back(**std::move(resolved));
  }
  std::vector<std::string> missing;
  for (const LocalObjectReference& ref : spec.image_pull_secrets()) {
    auto it = objects.secrets.find(ref.name());
    if (it == objects.secrets.end() || it->second == nullptr) {
      missing.push_back(ref.name());
      continue;
    }
    absl::StatusOr<std::vector<RegistryCredential>> credentials =
        ParseDockerConfigSecret(*it->second);
    if (!credentials.ok()) {
      if (best_effort) continue;
      return ConfigError(credentials.status().message());
    }
    for (RegistryCredential& c : *credentials)
      config.pull_credentials.push_back(std::move(c));
  }
  if (!missing.empty()) {
    // kubelet's FailedToRetrieveImagePullSecret: the pull goes on without.
    config.warnings.push_back(
        absl::StrCat("Unable to retrieve some image pull secrets (",
                     absl::StrJoin(missing, ", "),
                     "); attempting to pull the image may not succeed."));
  }
  for (const auto* containers : {&spec.init_containers(), &spec.containers()}) {
    for (const Container& c : *containers) {
      ContainerConfigEnv env;
      if (absl::Status resolved = resolver.ResolveEnv(c, &env); !resolved.ok())
        return resolved;
      if (!env.from.empty() || !env.values.empty())
        config.env[c.name()] = std::move(env);
    }
  }
  if (const int64_t bytes = PodConfigBytes(config);
      bytes > kMaxPodConfigBytes && !best_effort) {
    return ConfigError(absl::StrCat(
        "the pod's values and files from Secrets and ConfigMaps take ", bytes,
        " bytes; jobsetd sends at most ", kMaxPodConfigBytes, " per pod"));
  }
  return config;
}

}  // namespace jobset::api
