// config view|use-context|set-context|get-contexts|current-context: reads
// and edits the client config file (cli/kubeconfig.h); no server involved.
#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "cli/kubeconfig.h"
#include "cli/output.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

int ConfigUsage(const ConfigContext& c, absl::string_view message) {
  *c.io.err << "error: " << message << "\nSee 'jobsetctl config --help'.\n";
  return kExitUsage;
}

int ConfigFail(const ConfigContext& c, const absl::Status& status) {
  *c.io.err << "error: " << status.message() << "\n";
  return kExitApiError;
}

// The file edits go to: the first of the lookup, else
// ~/.config/jobset/config (its directory made 0700).
absl::StatusOr<std::string> EditedFile(const ConfigContext& c) {
  if (!c.files.empty()) return c.files.front();
  if (c.home == nullptr || *c.home == '\0') {
    return absl::FailedPreconditionError(
        "no config file to edit: pass --config or set $JOBSETCONFIG or HOME");
  }
  const std::string dir = absl::StrCat(c.home, "/.config");
  mkdir(dir.c_str(), 0700);
  mkdir(absl::StrCat(dir, "/jobset").c_str(), 0700);
  return absl::StrCat(dir, "/jobset/config");
}

}  // namespace

int RunConfig(const ConfigContext& c) {
  const std::vector<std::string>& args = c.invocation.args;
  const std::string& sub = args[0];
  absl::StatusOr<Kubeconfig> config =
      LoadKubeconfig(c.files, c.explicit_file, c.io.err);
  if (!config.ok()) return ConfigFail(c, config.status());
  if (c.invocation.Has("context")) {
    config->current_context = c.invocation.Get("context", "");
  }
  auto no_args = [&]() -> bool { return args.size() == 1; };
  if (sub == "view") {
    if (!no_args()) return ConfigUsage(c, "config view takes no arguments");
    absl::StatusOr<std::string> yaml = KubeconfigYaml(
        *config, c.invocation.Has("minify"), c.invocation.Has("raw"));
    if (!yaml.ok()) return ConfigFail(c, yaml.status());
    *c.io.out << *yaml;
    return kExitOk;
  }
  if (sub == "current-context") {
    if (!no_args()) {
      return ConfigUsage(c, "config current-context takes no arguments");
    }
    if (config->current_context.empty()) {
      return ConfigFail(c, absl::NotFoundError("current-context is not set"));
    }
    *c.io.out << config->current_context << "\n";
    return kExitOk;
  }
  if (sub == "get-contexts") {
    std::vector<Row> rows = {
        {"CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"}};
    for (const auto& [name, context] : config->contexts) {
      if (args.size() > 1 && name != args[1]) continue;
      rows.push_back({name == config->current_context ? "*" : "", name,
                      context.cluster, context.user, context.namespace_});
    }
    if (args.size() > 1 && rows.size() == 1) {
      return ConfigFail(c, absl::NotFoundError(absl::StrCat("context ", args[1],
                                                            " not found")));
    }
    *c.io.out << FormatTable(rows);
    return kExitOk;
  }
  if (sub == "use-context") {
    if (args.size() != 2) return ConfigUsage(c, "config use-context NAME");
    if (config->contexts.find(args[1]) == config->contexts.end()) {
      return ConfigFail(
          c, absl::NotFoundError(absl::StrCat(
                 "no context exists with the name: ", Quote(args[1]))));
    }
    absl::StatusOr<std::string> file = EditedFile(c);
    if (!file.ok()) return ConfigFail(c, file.status());
    if (absl::Status s = WriteCurrentContext(*file, args[1]); !s.ok()) {
      return ConfigFail(c, s);
    }
    *c.io.out << "Switched to context " << Quote(args[1]) << ".\n";
    return kExitOk;
  }
  if (sub == "set-context") {
    std::string name;
    if (c.invocation.Has("current")) {
      if (args.size() != 1) {
        return ConfigUsage(c, "config set-context takes NAME or --current");
      }
      name = config->current_context;
      if (name.empty()) {
        return ConfigFail(c, absl::NotFoundError("no current context is set"));
      }
    } else {
      if (args.size() != 2) {
        return ConfigUsage(c, "config set-context takes NAME or --current");
      }
      name = args[1];
    }
    auto flag = [&](absl::string_view f) -> std::optional<std::string> {
      if (!c.invocation.Has(f)) return std::nullopt;
      return c.invocation.Get(f, "");
    };
    const bool exists = config->contexts.count(name) > 0;
    absl::StatusOr<std::string> file = EditedFile(c);
    if (!file.ok()) return ConfigFail(c, file.status());
    if (absl::Status s = WriteContext(*file, name, flag("cluster"),
                                      flag("user"), flag("namespace"));
        !s.ok()) {
      return ConfigFail(c, s);
    }
    *c.io.out << "Context " << Quote(name) << " "
              << (exists ? "modified" : "created") << ".\n";
    return kExitOk;
  }
  return ConfigUsage(
      c, absl::StrCat("unknown config command ", Quote(sub),
                      " (use view, use-context, set-context, get-contexts "
                      "or current-context)"));
}

}  // namespace jobset::cli
