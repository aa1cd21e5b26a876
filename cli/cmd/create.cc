// create -f FILE; create secret generic|docker-registry NAME, create
// configmap NAME (kubectl's generators); create token NAME (token.cc).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/config_objects.h"
#include "cli/cmd/verbs.h"
#include "common/json_quote.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// Whether `s` is valid UTF-8 (a ConfigMap's data must be; other bytes go to
// binaryData, as kubectl does).
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      extra = 0;
      cp = c;
    } else if ((c >> 5) == 0x6) {
      extra = 1;
      cp = c & 0x1f;
    } else if ((c >> 4) == 0xe) {
      extra = 2;
      cp = c & 0x0f;
    } else if ((c >> 3) == 0x1e) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= static_cast<size_t>(extra)) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// One key and value of --from-literal or --from-file.
struct Source {
  std::string key;
  std::string value;
  std::string flag;  // "--from-file=a=b", for errors.
};

// Reads a file for --from-file: a regular file of at most
// api::kMaxConfigDataBytes.
absl::StatusOr<std::string> ReadSourceFile(const std::string& flag,
                                           const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": cannot read ", Quote(path), ": ", error.message()));
  }
  if (size > static_cast<uintmax_t>(api::kMaxConfigDataBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": ", Quote(path), " is ", size, " bytes, more than the ",
        api::kMaxConfigDataBytes, " a Secret or ConfigMap may hold"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": cannot read ", Quote(path), ": ", strerror(errno)));
  }
  return ReadAll(in);
}

// The keys and values --from-literal and --from-file give, checked as
// kubectl checks them (`kind` "Secret" or "ConfigMap" for its messages).
absl::StatusOr<std::vector<Source>> ReadSources(const Context& ctx,
                                                absl::string_view kind) {
  std::vector<Source> sources;
  for (const std::string& literal : ctx.invocation.GetAll("from-literal")) {
    const std::string flag = absl::StrCat("--from-literal=", literal);
    const size_t eq = literal.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": invalid literal source ", Quote(literal),
                       ", expected key=value"));
    }
    sources.push_back({literal.substr(0, eq), literal.substr(eq + 1), flag});
  }
  for (const std::string& file : ctx.invocation.GetAll("from-file")) {
    const std::string flag = absl::StrCat("--from-file=", file);
    std::string key;
    std::string path = file;
    if (const size_t eq = file.find('='); eq != std::string::npos) {
      key = file.substr(0, eq);
      path = file.substr(eq + 1);
      if (key.empty() || path.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, ": key names or file paths cannot be empty"));
      }
    }
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      if (!key.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": cannot give a key name for a directory path"));
      }
      std::vector<std::string> files;
      for (const auto& entry :
           std::filesystem::directory_iterator(path, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
      if (error) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": cannot read ", Quote(path), ": ", error.message()));
      }
      std::sort(files.begin(), files.end());
      for (const std::string& f : files) {
        absl::StatusOr<std::string> value = ReadSourceFile(flag, f);
        if (!value.ok()) return value.status();
        sources.push_back(
            {std::filesystem::path(f).filename().string(), *value, flag});
      }
      continue;
    }
    absl::StatusOr<std::string> value = ReadSourceFile(flag, path);
    if (!value.ok()) return value.status();
    if (key.empty()) key = std::filesystem::path(path).filename().string();
    sources.push_back({key, *std::move(value), flag});
  }
  std::set<std::string> seen;
  int64_t total = 0;
  for (const Source& source : sources) {
    if (std::vector<std::string> bad = api::IsConfigKey(source.key);
        !bad.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source.flag, ": ", Quote(source.key.substr(0, 253)),
                       " is not a valid key name for a ", kind, ": ",
                       absl::StrJoin(bad, "; ")));
    }
    if (!seen.insert(source.key).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          source.flag, ": cannot add key ", source.key,
          ", another key by that name already exists in the ", kind));
    }
    total += static_cast<int64_t>(source.value.size());
  }
  if (total > api::kMaxConfigDataBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the values of --from-literal and --from-file take ",
                     total, " bytes, more than the ", api::kMaxConfigDataBytes,
                     " a ", kind, " may hold"));
  }
  return sources;
}

// {"auths":{SERVER:{"username":U,"password":P,"email":E,"auth":base64(U:P)}}}
// as kubectl create secret docker-registry writes it (email only when set).
std::string DockerConfigJson(const std::string& server, const std::string& user,
                             const std::string& password,
                             const std::string& email) {
  std::string entry = absl::StrCat("{\"username\":", JsonQuote(user),
                                   ",\"password\":", JsonQuote(password));
  if (!email.empty()) absl::StrAppend(&entry, ",\"email\":", JsonQuote(email));
  absl::StrAppend(
      &entry, ",\"auth\":",
      JsonQuote(absl::Base64Escape(absl::StrCat(user, ":", password))), "}");
  return absl::StrCat("{\"auths\":{", JsonQuote(server), ":", entry, "}}");
}

// create secret generic|docker-registry NAME.
int CreateSecret(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args.size() != 3 ||
      (args[1] != "generic" && args[1] != "docker-registry")) {
    return Usage(ctx,
                 "usage: jobsetctl create secret generic NAME "
                 "[--from-literal=K=V] [--from-file=[K=]PATH] [--type=T], or "
                 "create secret docker-registry NAME --docker-server=S "
                 "--docker-username=U --docker-password=P");
  }
  api::Secret secret;
  secret.set_api_version("v1");
  secret.set_kind("Secret");
  secret.mutable_metadata()->set_name(args[2]);
  secret.mutable_metadata()->set_namespace_(ctx.ns);
  if (args[1] == "generic") {
    absl::StatusOr<std::vector<Source>> sources = ReadSources(ctx, "Secret");
    if (!sources.ok()) return Fail(ctx, sources.status());
    for (Source& source : *sources) {
      (*secret.mutable_data())[source.key] = std::move(source.value);
    }
    secret.set_type(ctx.invocation.Get("type", ""));
  } else {
    for (absl::string_view flag : {"from-literal", "from-file", "type"}) {
      if (ctx.invocation.Has(flag)) {
        return Usage(ctx, absl::StrCat("--", flag,
                                       " does not apply to docker-registry"));
      }
    }
    const std::string user = ctx.invocation.Get("docker-username", "");
    const std::string password = ctx.invocation.Get("docker-password", "");
    const std::string server =
        ctx.invocation.Get("docker-server", "https://index.docker.io/v1/");
    if (user.empty() || password.empty() || server.empty()) {
      return Usage(ctx,
                   "the combination of --docker-username, --docker-password "
                   "and --docker-server is required");
    }
    (*secret.mutable_data())[api::kDockerConfigJsonKey] = DockerConfigJson(
        server, user, password, ctx.invocation.Get("docker-email", ""));
    secret.set_type(api::kSecretTypeDockerConfigJson);
  }
  secret = api::NormalizeSecret(std::move(secret));
  if (absl::Status s = api::ValidateSecret(secret); !s.ok()) {
    return Fail(ctx, s);
  }
  return ApplyObject(ctx, KindNamed("secrets"), secret,
                     secret.mutable_metadata(), FileMode::kCreate,
                     ctx.invocation.Has("dry-run"));
}

// create configmap NAME.
int CreateConfigMap(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args.size() != 2) {
    return Usage(ctx,
                 "usage: jobsetctl create configmap NAME [--from-literal=K=V] "
                 "[--from-file=[K=]PATH]");
  }
  for (absl::string_view flag : {"type", "docker-server", "docker-username",
                                 "docker-password", "docker-email"}) {
    if (ctx.invocation.Has(flag)) {
      return Usage(ctx,
                   absl::StrCat("--", flag, " does not apply to configmaps"));
    }
  }
  api::ConfigMap config_map;
  config_map.set_api_version("v1");
  config_map.set_kind("ConfigMap");
  config_map.mutable_metadata()->set_name(args[1]);
  config_map.mutable_metadata()->set_namespace_(ctx.ns);
  absl::StatusOr<std::vector<Source>> sources = ReadSources(ctx, "ConfigMap");
  if (!sources.ok()) return Fail(ctx, sources.status());
  for (Source& source : *sources) {
    auto* map = IsUtf8(source.value) ? config_map.mutable_data()
                                     : config_map.mutable_binary_data();
    (*map)[source.key] = std::move(source.value);
  }
  if (absl::Status s = api::ValidateConfigMap(config_map); !s.ok()) {
    return Fail(ctx, s);
  }
  return ApplyObject(ctx, KindNamed("configmaps"), config_map,
                     config_map.mutable_metadata(), FileMode::kCreate,
                     ctx.invocation.Has("dry-run"));
}

}  // namespace

int Create(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (ctx.invocation.Has("filename")) {
    if (!args.empty()) return Usage(ctx, "create -f takes no arguments");
    return ApplyFile(ctx, FileMode::kCreate);
  }
  const KindInfo* kind = args.empty() ? nullptr : FindKind(args[0]);
  if (kind == &KindNamed("secrets")) return CreateSecret(ctx);
  if (kind == &KindNamed("configmaps")) return CreateConfigMap(ctx);
  if (kind == &KindNamed("tokens")) return CreateToken(ctx);
  return Usage(ctx,
               "create takes -f FILE, or: create token NAME, create secret "
               "generic|docker-registry NAME, create configmap NAME");
}

}  // namespace jobset::cli
