#include "agent/runtime/cdi_spec.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/pod_files.h"
#include "yaml-cpp/yaml.h"

namespace jobset::agent {
namespace {

constexpr size_t kMaxEntries = 4096;
constexpr int64_t kMaxSpecBytes = 4 << 20;

absl::Status Bad(const std::string& path, const std::string& field,
                 absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("CDI spec ", path, ": ", field, ": ", why));
}

// The scalar at `node[key]`, "" when absent; an error when not a scalar.
absl::StatusOr<std::string> Scalar(const YAML::Node& node, const char* key,
                                   const std::string& path,
                                   const std::string& field) {
  const YAML::Node v = node[key];
  if (!v.IsDefined() || v.IsNull()) return std::string();
  if (!v.IsScalar()) return Bad(path, field, "is not a string");
  return v.Scalar();
}

// The sequence at `node[key]` (empty when absent), at most kMaxEntries.
absl::StatusOr<YAML::Node> Sequence(const YAML::Node& node, const char* key,
                                    const std::string& path,
                                    const std::string& field) {
  const YAML::Node v = node[key];
  if (!v.IsDefined() || v.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
  if (!v.IsSequence()) return Bad(path, field, "is not a list");
  if (v.size() > kMaxEntries) {
    return Bad(path, field,
               absl::StrCat(v.size(), " entries, more than ", kMaxEntries));
  }
  return v;
}

absl::Status CheckAbsolute(const std::string& value, const std::string& path,
                           const std::string& field) {
  if (value.empty() || value[0] != '/') {
    return Bad(path, field, absl::StrCat("\"", value, "\" is not absolute"));
  }
  if (value.find('\0') != std::string::npos) {
    return Bad(path, field, "holds a NUL");
  }
  return absl::OkStatus();
}

// The absolute path at `node[key]`; `fallback` when absent.
absl::StatusOr<std::string> AbsolutePath(const YAML::Node& node,
                                         const char* key,
                                         const std::string& path,
                                         const std::string& item,
                                         const std::string& fallback = "") {
  const std::string field = absl::StrCat(item, ".", key);
  absl::StatusOr<std::string> v = Scalar(node, key, path, field);
  if (!v.ok()) return v.status();
  if (v->empty()) *v = fallback;
  if (absl::Status s = CheckAbsolute(*v, path, field); !s.ok()) return s;
  return v;
}

bool ValidDeviceName(const std::string& name) {
  if (name.empty() || name.size() > 255 || !absl::ascii_isalnum(name[0])) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' ||
           c == '-';
  });
}

// "vendor/class": vendor a DNS-like name, class alphanumeric, '-' and '_'.
bool ValidKind(const std::string& kind) {
  const size_t slash = kind.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == kind.size() ||
      kind.size() > 255) {
    return false;
  }
  for (size_t i = 0; i < kind.size(); ++i) {
    const char c = kind[i];
    if (i == slash) continue;
    const bool ok = absl::ascii_isalnum(c) || c == '-' || c == '_' ||
                    (i < slash && c == '.');
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<CdiEdits> ParseEdits(const YAML::Node& node,
                                    const std::string& path,
                                    const std::string& field) {
  CdiEdits edits;
  if (!node.IsDefined() || node.IsNull()) return edits;
  if (!node.IsMap()) return Bad(path, field, "is not a mapping");
  absl::StatusOr<YAML::Node> env = Sequence(node, "env", path, field + ".env");
  if (!env.ok()) return env.status();
  for (size_t i = 0; i < env->size(); ++i) {
    const std::string f = absl::StrCat(field, ".env[", i, "]");
    const YAML::Node e = (*env)[i];
    if (!e.IsScalar()) return Bad(path, f, "is not a string");
    const std::string& kv = e.Scalar();
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 ||
        kv.find('\0') != std::string::npos) {
      return Bad(path, f, absl::StrCat("\"", kv, "\" is not NAME=VALUE"));
    }
    edits.env.push_back(kv);
  }
  absl::StatusOr<YAML::Node> nodes =
      Sequence(node, "deviceNodes", path, field + ".deviceNodes");
  if (!nodes.ok()) return nodes.status();
  for (size_t i = 0; i < nodes->size(); ++i) {
    const std::string f = absl::StrCat(field, ".deviceNodes[", i, "]");
    const YAML::Node n = (*nodes)[i];
    if (!n.IsMap()) return Bad(path, f, "is not a mapping");
    absl::StatusOr<std::string> p = AbsolutePath(n, "path", path, f);
    if (!p.ok()) return p.status();
    absl::StatusOr<std::string> host = AbsolutePath(n, "hostPath", path, f, *p);
    if (!host.ok()) return host.status();
    edits.device_nodes.push_back({*p, *host});
  }
  absl::StatusOr<YAML::Node> mounts =
      Sequence(node, "mounts", path, field + ".mounts");
  if (!mounts.ok()) return mounts.status();
  for (size_t i = 0; i < mounts->size(); ++i) {
    const std::string f = absl::StrCat(field, ".mounts[", i, "]");
    const YAML::Node m = (*mounts)[i];
    if (!m.IsMap()) return Bad(path, f, "is not a mapping");
    CdiMount mount;
    absl::StatusOr<std::string> host = AbsolutePath(m, "hostPath", path, f);
    if (!host.ok()) return host.status();
    absl::StatusOr<std::string> in = AbsolutePath(m, "containerPath", path, f);
    if (!in.ok()) return in.status();
    mount.host_path = *host;
    mount.container_path = *in;
    absl::StatusOr<YAML::Node> options =
        Sequence(m, "options", path, f + ".options");
    if (!options.ok()) return options.status();
    for (size_t j = 0; j < options->size(); ++j) {
      const YAML::Node o = (*options)[j];
      if (!o.IsScalar()) {
        return Bad(path, absl::StrCat(f, ".options[", j, "]"),
                   "is not a string");
      }
      if (o.Scalar() == "ro") mount.read_only = true;
      if (o.Scalar() == "rw") mount.read_only = false;
    }
    edits.mounts.push_back(std::move(mount));
  }
  absl::StatusOr<YAML::Node> hooks =
      Sequence(node, "hooks", path, field + ".hooks");
  if (!hooks.ok()) return hooks.status();
  edits.hooks = static_cast<int>(hooks->size());
  for (size_t i = 0; i < hooks->size(); ++i) {
    const std::string f = absl::StrCat(field, ".hooks[", i, "]");
    const YAML::Node h = (*hooks)[i];
    if (!h.IsMap()) return Bad(path, f, "is not a mapping");
    absl::StatusOr<YAML::Node> args = Sequence(h, "args", path, f + ".args");
    if (!args.ok()) return args.status();
    std::vector<std::string> argv;
    for (size_t j = 0; j < args->size(); ++j) {
      const YAML::Node a = (*args)[j];
      if (!a.IsScalar()) {
        return Bad(path, absl::StrCat(f, ".args[", j, "]"), "is not a string");
      }
      argv.push_back(a.Scalar());
    }
    if (std::find(argv.begin(), argv.end(), "create-symlinks") == argv.end()) {
      continue;
    }
    for (size_t j = 0; j < argv.size(); ++j) {
      std::string link;
      if (argv[j] == "--link" && j + 1 < argv.size()) {
        link = argv[++j];
      } else if (absl::StartsWith(argv[j], "--link=")) {
        link = argv[j].substr(7);
      } else {
        continue;
      }
      const size_t sep = link.find("::");
      if (sep == std::string::npos || sep == 0 || sep + 2 == link.size()) {
        return Bad(path, f + ".args",
                   absl::StrCat("\"", link, "\" is not TARGET::LINK"));
      }
      std::string target = link.substr(0, sep);
      const std::string at = link.substr(sep + 2);
      if (absl::Status s = CheckAbsolute(at, path, f + ".args"); !s.ok()) {
        return s;
      }
      if (target[0] != '/') {
        target = absl::StrCat(at.substr(0, at.rfind('/') + 1), target);
      }
      edits.symlinks.emplace_back(std::move(target), at);
    }
  }
  return edits;
}

void Append(const CdiEdits& from, CdiEdits* to) {
  to->env.insert(to->env.end(), from.env.begin(), from.env.end());
  to->device_nodes.insert(to->device_nodes.end(), from.device_nodes.begin(),
                          from.device_nodes.end());
  to->mounts.insert(to->mounts.end(), from.mounts.begin(), from.mounts.end());
  to->symlinks.insert(to->symlinks.end(), from.symlinks.begin(),
                      from.symlinks.end());
  to->hooks += from.hooks;
}

}  // namespace

absl::StatusOr<CdiSpec> ParseCdiSpec(const std::string& text,
                                     const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);  // JSON is YAML too.
  } catch (const std::exception& e) {
    return Bad(path, "(file)", absl::StrCat("does not parse: ", e.what()));
  }
  try {
    if (!root.IsMap()) return Bad(path, "(file)", "is not a mapping");
    CdiSpec spec;
    spec.path = path;
    absl::StatusOr<std::string> version =
        Scalar(root, "cdiVersion", path, "cdiVersion");
    if (!version.ok()) return version.status();
    if (version->empty()) return Bad(path, "cdiVersion", "is missing");
    absl::StatusOr<std::string> kind = Scalar(root, "kind", path, "kind");
    if (!kind.ok()) return kind.status();
    if (!ValidKind(*kind)) {
      return Bad(path, "kind",
                 absl::StrCat("\"", *kind, "\" is not vendor/class"));
    }
    spec.kind = *kind;
    absl::StatusOr<CdiEdits> edits =
        ParseEdits(root["containerEdits"], path, "containerEdits");
    if (!edits.ok()) return edits.status();
    spec.edits = *std::move(edits);
    absl::StatusOr<YAML::Node> devices =
        Sequence(root, "devices", path, "devices");
    if (!devices.ok()) return devices.status();
    std::set<std::string> names;
    for (size_t i = 0; i < devices->size(); ++i) {
      const std::string f = absl::StrCat("devices[", i, "]");
      const YAML::Node d = (*devices)[i];
      if (!d.IsMap()) return Bad(path, f, "is not a mapping");
      CdiDevice device;
      absl::StatusOr<std::string> name = Scalar(d, "name", path, f + ".name");
      if (!name.ok()) return name.status();
      if (!ValidDeviceName(*name)) {
        return Bad(path, f + ".name",
                   absl::StrCat("\"", *name, "\" is not a device name"));
      }
      if (!names.insert(*name).second) {
        return Bad(path, f + ".name",
                   absl::StrCat("\"", *name, "\" appears twice"));
      }
      device.name = *name;
      absl::StatusOr<CdiEdits> de =
          ParseEdits(d["containerEdits"], path, f + ".containerEdits");
      if (!de.ok()) return de.status();
      device.edits = *std::move(de);
      spec.devices.push_back(std::move(device));
    }
    return spec;
  } catch (const std::exception& e) {  // yaml-cpp's conversions
    return Bad(path, "(file)", e.what());
  }
}

absl::StatusOr<std::vector<CdiSpec>> LoadCdiSpecs(
    const std::vector<std::string>& dirs, const std::string& kind) {
  std::vector<CdiSpec> specs;
  for (const std::string& dir : dirs) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> files;
    while (struct dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (absl::EndsWith(name, ".yaml") || absl::EndsWith(name, ".yml") ||
          absl::EndsWith(name, ".json")) {
        files.push_back(name);
      }
      if (files.size() > kMaxEntries) break;
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    for (const std::string& name : files) {
      const std::string path = absl::StrCat(dir, "/", name);
      struct stat st;
      if (stat(path.c_str(), &st) == 0 && st.st_size > kMaxSpecBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("CDI spec ", path, ": ", st.st_size,
                         " bytes, more than ", kMaxSpecBytes));
      }
      absl::StatusOr<std::string> text = ReadFileToString(path);
      if (!text.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("CDI spec ", path, ": ", text.status().message()));
      }
      absl::StatusOr<CdiSpec> spec = ParseCdiSpec(*text, path);
      if (!spec.ok()) return spec.status();
      if (spec->kind == kind) specs.push_back(*std::move(spec));
    }
  }
  return specs;
}

absl::StatusOr<CdiEdits> CdiEditsFor(const std::vector<CdiSpec>& specs,
                                     const std::vector<std::string>& names) {
  // Each name from the last spec that has it.
  std::map<size_t, std::vector<const CdiDevice*>> chosen;  // spec -> devices
  for (const std::string& name : names) {
    const CdiDevice* found = nullptr;
    size_t from = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      for (const CdiDevice& d : specs[i].devices) {
        if (d.name == name) {
          found = &d;
          from = i;
        }
      }
    }
    if (found == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          "no CDI spec has device \"",
          specs.empty() ? std::string("?") : specs[0].kind, "=", name, "\""));
    }
    std::vector<const CdiDevice*>& list = chosen[from];
    if (std::find(list.begin(), list.end(), found) == list.end()) {
      list.push_back(found);
    }
  }
  CdiEdits out;
  for (const auto& [index, devices] : chosen) {
    Append(specs[index].edits, &out);
    for (const CdiDevice* d : devices) Append(d->edits, &out);
  }
  return out;
}

}  // namespace jobset::agent
