// jobsetctl's dispatcher: reads the command line and the client config,
// connects, and routes each verb to its file under cli/cmd/.
#include "cli/commands.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "cli/cmd/verbs.h"
#include "cli/completion.h"
#include "cli/kubeconfig.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// A call's time, retries included (docs/jobsetctl.md, "Failover"): a
// failover takes up to the leader's lease (jobsetd --leader_lease, 5 s by
// default) to expire, etcd may first elect its own leader (about 2 s), and
// the next replica then loads the store; 30 s rides that out with room to
// spare, so that a create issued meanwhile lands, yet still ends a call to a
// cluster that is down. kubectl's default is 0 (no timeout); the Python
// client's is 30 s too.
constexpr absl::Duration kDefaultRequestTimeout = absl::Seconds(30);

}  // namespace

int RunCommand(const Invocation& invocation, Client& client, const Io& io) {
  return RunCommand(invocation, client, io, api::kDefaultNamespace,
                    *RealClock::Get());
}

int RunCommand(const Invocation& invocation, Client& client, const Io& io,
               absl::string_view default_namespace, Clock& clock) {
  Context ctx{invocation, client, io, clock,
              invocation.Get("namespace", default_namespace.empty()
                                              ? api::kDefaultNamespace
                                              : default_namespace)};
  const std::string& verb = invocation.command->verb;
  if (verb == "apply") return Apply(ctx);
  if (verb == "get") return Get(ctx);
  if (verb == "describe") return Describe(ctx);
  if (verb == "delete") return Delete(ctx);
  if (verb == "suspend") return SetSuspend(ctx, true);
  if (verb == "resume") return SetSuspend(ctx, false);
  if (verb == "wait") return Wait(ctx);
  if (verb == "watch") return Watch(ctx);
  if (verb == "cordon" || verb == "uncordon" || verb == "drain" ||
      verb == "label" || verb == "taint") {
    return NodeVerb(ctx);
  }
  if (verb == "logs") return Logs(ctx);
  if (verb == "create") return Create(ctx);
  if (verb == "token") return Token(ctx);
  if (verb == "admin") return Admin(ctx);
  if (verb == "auth") return Auth(ctx);
  if (verb == "version") {
    return PrintVersion(invocation, io,
                        invocation.Has("client") ? nullptr : &client);
  }
  return Usage(ctx, absl::StrCat("no such command ", Quote(verb)));
}

int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io) {
  return Main(args, env, io, *RealClock::Get());
}

int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io) {
  Environment env;
  env.server = server_env;
  return Main(args, env, io);
}

int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io, Clock& clock) {
  absl::StatusOr<Invocation> invocation = ParseCommandLine(args, Commands());
  if (!invocation.ok()) {
    *io.err << "error: " << invocation.status().message() << "\n";
    return kExitUsage;
  }
  if (invocation->help) {
    *io.out << HelpText(invocation->command, Commands());
    return kExitOk;
  }
  if (invocation->command == nullptr) {
    *io.err << HelpText(nullptr, Commands());
    return kExitUsage;
  }
  absl::Duration timeout = kDefaultRequestTimeout;
  if (invocation->Has("request-timeout")) {
    absl::StatusOr<absl::Duration> parsed = ParseDurationFlag(
        "request-timeout", invocation->Get("request-timeout", ""));
    if (!parsed.ok() || *parsed <= absl::ZeroDuration()) {
      *io.err << "error: "
              << (parsed.ok() ? "--request-timeout must be positive"
                              : parsed.status().message())
              << "\n";
      return kExitUsage;
    }
    timeout = *parsed;
  }
  std::optional<std::string> config_flag;
  if (invocation->Has("config")) config_flag = invocation->Get("config", "");
  const std::vector<std::string> files =
      ConfigFiles(config_flag, env.config, env.home);
  if (invocation->command->verb == "completion") {
    std::vector<std::string> types;
    for (const KindInfo& kind : Kinds()) types.push_back(kind.plural);
    types.push_back("pendingworkloads");  // get's (cmd/pending_workloads.cc).
    absl::StatusOr<std::string> script =
        CompletionScript(invocation->args[0], Commands(), types);
    if (!script.ok()) {
      *io.err << "error: " << script.status().message() << "\n";
      return kExitUsage;
    }
    *io.out << *script;
    return kExitOk;
  }
  if (invocation->command->verb == "version" && invocation->Has("client")) {
    return PrintVersion(*invocation, io, nullptr);
  }
  if (invocation->command->verb == "config") {
    return RunConfig(ConfigContext{*invocation, io, files,
                                   config_flag.has_value(), env.home});
  }
  Overrides overrides;
  auto flag = [&](absl::string_view f) -> std::optional<std::string> {
    if (!invocation->Has(f)) return std::nullopt;
    return invocation->Get(f, "");
  };
  overrides.context = flag("context");
  overrides.server = flag("server");
  if (!overrides.server.has_value() && env.server != nullptr &&
      *env.server != '\0') {
    overrides.server = env.server;
  }
  overrides.token = flag("token");
  overrides.namespace_ = flag("namespace");
  absl::StatusOr<Kubeconfig> config =
      LoadKubeconfig(files, config_flag.has_value(), io.err);
  if (!config.ok()) {
    *io.err << "error: " << config.status().message() << "\n";
    return kExitApiError;
  }
  absl::StatusOr<Connection> connection = ResolveConnection(*config, overrides);
  if (!connection.ok()) {
    *io.err << "error: " << connection.status().message() << "\n";
    return kExitApiError;
  }
  const std::string ns = connection->namespace_;
  Client client(*std::move(connection), timeout, &clock);
  return RunCommand(*invocation, client, io, ns, clock);
}

}  // namespace jobset::cli
