// version [--client] [-o json|yaml], as kubectl version.
#include "common/version.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "common/json_quote.h"

namespace jobset::cli {
namespace {

// {"major": ..., "minor": ..., "gitVersion": ..., "platform": ...} at
// `indent`.
std::string VersionJson(const api::VersionInfo& v, absl::string_view indent) {
  return absl::StrCat(
      "{\n", indent, "  \"major\": ", JsonQuote(v.major()), ",\n", indent,
      "  \"minor\": ", JsonQuote(v.minor()), ",\n", indent,
      "  \"gitVersion\": ", JsonQuote(v.git_version()), ",\n", indent,
      "  \"platform\": ", JsonQuote(v.platform()), "\n", indent, "}");
}

std::string VersionYaml(const api::VersionInfo& v) {
  // JSON strings are YAML's double-quoted scalars.
  return absl::StrCat("  gitVersion: ", v.git_version(),
                      "\n  major: ", JsonQuote(v.major()),
                      "\n  minor: ", JsonQuote(v.minor()),
                      "\n  platform: ", v.platform(), "\n");
}

api::VersionInfo ClientVersion() {
  api::VersionInfo v;
  v.set_major(std::string(kVersionMajor));
  v.set_minor(std::string(kVersionMinor));
  v.set_git_version(std::string(kGitVersion));
  v.set_platform(std::string(kPlatform));
  return v;
}

}  // namespace

int PrintVersion(const Invocation& invocation, const Io& io, Client* client) {
  const std::string output = invocation.Get("output", "");
  if (!output.empty() && output != "json" && output != "yaml") {
    *io.err << "error: --output must be 'yaml' or 'json'\n";
    return kExitUsage;
  }
  absl::StatusOr<api::VersionInfo> server = absl::UnavailableError("not asked");
  if (client != nullptr) server = client->GetVersion();
  const api::VersionInfo mine = ClientVersion();
  if (output == "json") {
    *io.out << "{\n  \"clientVersion\": " << VersionJson(mine, "  ");
    if (server.ok()) {
      *io.out << ",\n  \"serverVersion\": " << VersionJson(*server, "  ");
    }
    *io.out << "\n}\n";
  } else if (output == "yaml") {
    *io.out << "clientVersion:\n" << VersionYaml(mine);
    if (server.ok()) *io.out << "serverVersion:\n" << VersionYaml(*server);
  } else {
    *io.out << "Client Version: " << mine.git_version() << "\n";
    if (server.ok()) {
      *io.out << "Server Version: " << server->git_version() << "\n";
    }
  }
  if (client != nullptr && !server.ok()) {
    *io.err << "error: " << server.status().message() << "\n";
    return ExitCodeFor(server.status());
  }
  return kExitOk;
}

}  // namespace jobset::cli
