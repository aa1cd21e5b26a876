#include "cli/args.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

constexpr absl::string_view kDefaultServer = "127.0.0.1:7070";

FlagSpec Switch(std::string name, char short_name, std::string help) {
  return {std::move(name), short_name, false, "", std::move(help)};
}

FlagSpec Valued(std::string name, char short_name, std::string value_name,
                std::string help) {
  return {std::move(name), short_name, true, std::move(value_name),
          std::move(help)};
}

const FlagSpec* FindLong(absl::string_view name, const std::vector<FlagSpec>& a,
                         const std::vector<FlagSpec>& b) {
  const std::string normalized = absl::StrReplaceAll(name, {{"_", "-"}});
  for (const auto* flags : {&a, &b}) {
    for (const FlagSpec& flag : *flags) {
      if (flag.name == normalized) return &flag;
    }
  }
  return nullptr;
}

const FlagSpec* FindShort(char c, const std::vector<FlagSpec>& a,
                          const std::vector<FlagSpec>& b) {
  for (const auto* flags : {&a, &b}) {
    for (const FlagSpec& flag : *flags) {
      if (flag.short_name != '\0' && flag.short_name == c) return &flag;
    }
  }
  return nullptr;
}

absl::Status UsageError(absl::string_view message, const CommandSpec* command) {
  return absl::InvalidArgumentError(absl::StrCat(
      message, "\nSee 'jobsetctl ",
      command == nullptr ? "" : absl::StrCat(command->verb, " "), "--help'."));
}

void AppendFlags(const std::vector<FlagSpec>& flags, std::string* out) {
  for (const FlagSpec& flag : flags) {
    std::string names = flag.short_name == '\0'
                            ? absl::StrCat("    --", flag.name)
                            : absl::StrCat("-", std::string(1, flag.short_name),
                                           ", --", flag.name);
    if (flag.has_value) absl::StrAppend(&names, "=", flag.value_name);
    absl::StrAppend(out, "  ", names,
                    std::string(names.size() < 34 ? 34 - names.size() : 1, ' '),
                    flag.help, "\n");
  }
}

}  // namespace

std::string Invocation::Get(absl::string_view name,
                            absl::string_view fallback) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? std::string(fallback) : it->second;
}

std::vector<std::string> Invocation::GetAll(absl::string_view name) const {
  auto it = values.find(std::string(name));
  return it == values.end() ? std::vector<std::string>() : it->second;
}

const std::vector<FlagSpec>& GlobalFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      Valued("server", '\0', "URL",
             "https://HOST:PORT, http://HOST:PORT (loopback) or HOST:PORT "
             "(default: $JOBSET_SERVER, else the context's, else "
             "127.0.0.1:7070)"),
      Valued("config", '\0', "FILE",
             "the client config (default $JOBSETCONFIG, else "
             "~/.config/jobset/config)"),
      Valued("context", '\0', "NAME", "the config's context to use"),
      Valued("token", '\0', "TOKEN", "bearer token (overrides the config)"),
      Valued("namespace", 'n', "NAMESPACE",
             "the namespace (default: the context's, else default)"),
      Valued("request-timeout", '\0', "DURATION",
             "deadline of each request, retries through a failover included "
             "(default 30s)"),
      Switch("help", 'h', "show help"),
  };
  return *flags;
}

const std::vector<CommandSpec>& Commands() {
  static const auto* commands = new std::vector<CommandSpec>{
      {"apply",
       "apply -f FILE|- [--dry-run]",
       "Create or update JobSets, Namespaces, RBAC and Kueue objects from a "
       "YAML or JSON manifest (several documents allowed; upstream JobSet and "
       "Kueue manifests load unchanged).",
       {Valued("filename", 'f', "FILE", "manifest file, or - for stdin"),
        Switch("dry-run", '\0', "default and validate on the server only")},
       0,
       0},
      {"create",
       "create -f FILE|- | create token NAME [--groups=a,b] [--ttl=720h] | "
       "create secret generic NAME [--from-literal=K=V] [--from-file=[K=]PATH] "
       "[--type=T] | create secret docker-registry NAME --docker-server=S "
       "--docker-username=U --docker-password=P [--docker-email=E] | create "
       "configmap NAME [--from-literal=K=V] [--from-file=[K=]PATH]",
       "Create JobSets, Namespaces, Secrets, ConfigMaps, RBAC and Kueue "
       "objects from a manifest, a Secret or ConfigMap from literals and files "
       "(as kubectl's generators), or a user's bearer token (printed once).",
       {Valued("filename", 'f', "FILE", "manifest file, or - for stdin"),
        Switch("dry-run", '\0', "default and validate on the server only"),
        Valued("groups", '\0', "GROUPS", "token: comma-separated groups"),
        Valued("ttl", '\0', "DURATION", "token: lifetime (default 720h)"),
        Valued("from-literal", '\0', "KEY=VALUE",
               "secret, configmap: a key and its value (repeatable)"),
        Valued("from-file", '\0', "[KEY=]PATH",
               "secret, configmap: a file (key: its name) or a directory's "
               "files (repeatable)"),
        Valued("type", '\0', "TYPE", "secret generic: the type (Opaque)"),
        Valued("docker-server", '\0', "SERVER",
               "docker-registry: the registry (https://index.docker.io/v1/)"),
        Valued("docker-username", '\0', "USER", "docker-registry: user name"),
        Valued("docker-password", '\0', "PASSWORD",
               "docker-registry: password"),
        Valued("docker-email", '\0', "EMAIL", "docker-registry: email")},
       0,
       3},
      {"get",
       "get jobsets|jobs|pods|nodes|events|namespaces|secrets|configmaps|"
       "resourceflavors|clusterqueues|cohorts|localqueues|"
       "workloadpriorityclasses|workloads|tokens|roles|"
       "rolebindings|clusterroles|clusterrolebindings [NAME] "
       "[-o json|yaml|name|wide|jsonpath=TEMPLATE] [-l SELECTOR] "
       "[--field-selector=SELECTOR] [--jobset NAME] [-w] [-A] | get "
       "pendingworkloads --clusterqueue CQ|--localqueue LQ [--limit N] "
       "[--offset N] [-o ...]",
       "Show resources as a table, or as JSON/YAML/names/JSONPath with -o; "
       "pendingworkloads: Kueue's queue of a ClusterQueue or LocalQueue, "
       "with each Workload's 0-based position.",
       {Valued("output", 'o', "FORMAT",
               "json, yaml, name, wide or jsonpath=TEMPLATE"),
        Switch("all-namespaces", 'A', "every namespace"),
        Valued("selector", 'l', "SELECTOR",
               "label selector: app=x,tier!=db,env in (a,b),!legacy"),
        Valued("field-selector", '\0', "SELECTOR",
               "metadata.name, metadata.namespace, status.phase (pods, "
               "jobsets), spec.nodeName (pods) with =, == or !="),
        Valued("jobset", '\0', "NAME", "only the children of this JobSet"),
        Switch("watch", 'w',
               "after listing, stream changes (jobs, pods, nodes and events "
               "are polled every second)"),
        Valued("timeout", '\0', "DURATION",
               "stop watching after this long (default: until interrupted)"),
        Valued("clusterqueue", '\0', "CQ",
               "pendingworkloads: those of this ClusterQueue"),
        Valued("localqueue", '\0', "LQ",
               "pendingworkloads: those of this LocalQueue (of -n's "
               "namespace)"),
        Valued("limit", '\0', "N",
               "pendingworkloads: at most N (0: 1000; at most 10000)"),
        Valued("offset", '\0', "N", "pendingworkloads: skip the first N")},
       1,
       2},
      {"describe",
       "describe jobset|node|secret|configmap|KUEUE-KIND NAME",
       "Show a JobSet in detail (conditions, replicated jobs, pods and their "
       "nodes, why pods are pending, its Kueue Workload and place in the "
       "queue, recent events), a node (conditions, "
       "taints, capacity, what its pods request), or one of Kueue's objects "
       "(resourceflavor, clusterqueue, cohort, localqueue, "
       "workloadpriorityclass, workload: spec and status).",
       {},
       2,
       2},
      {"delete",
       "delete jobset|namespace|secret|configmap|token|node|KUEUE-KIND NAME | "
       "delete "
       "jobsets --all|-l "
       "SELECTOR "
       "[-A] | delete -f FILE|-",
       "Delete a JobSet, a user's token, a node (its identity; the agent must "
       "join again), one of Kueue's objects, every JobSet of the namespace "
       "(--all) or those a label selector matches (-l), or the objects of a "
       "manifest.",
       {Valued("filename", 'f', "FILE", "manifest file, or - for stdin"),
        Switch("all", '\0', "jobsets: every JobSet of the namespace"),
        Valued("selector", 'l', "SELECTOR",
               "jobsets: those whose labels match"),
        Switch("all-namespaces", 'A', "with --all or -l: every namespace")},
       0,
       2},
      {"suspend",
       "suspend jobset NAME",
       "Suspend a JobSet (spec.suspend=true): its pods are stopped.",
       {},
       2,
       2},
      {"resume",
       "resume jobset NAME",
       "Resume a suspended JobSet (spec.suspend=false).",
       {},
       2,
       2},
      {"wait",
       "wait jobset NAME --for=condition=Completed|Failed [--timeout=60s]",
       "Wait until a JobSet's condition is True. Exits 4 on timeout and 5 "
       "when the JobSet ends otherwise (the other terminal condition, or "
       "deleted).",
       {Valued("for", '\0', "condition=TYPE",
               "the condition to wait for, e.g. condition=Completed"),
        Valued("timeout", '\0', "DURATION", "how long to wait (default 60s)")},
       2,
       2},
      {"watch",
       "watch [jobsets] [NAME]",
       "Stream changes to the JobSets of the namespace (as get jobsets -w).",
       {Valued("timeout", '\0', "DURATION",
               "stop after this long (default: until interrupted)")},
       0,
       2},
      {"cordon",
       "cordon NODE",
       "Mark a node unschedulable: it keeps its pods and gets no new ones.",
       {},
       1,
       1},
      {"uncordon", "uncordon NODE", "Mark a node schedulable again.", {}, 1, 1},
      {"drain",
       "drain NODE",
       "Cordon a node and stop its pods; their JobSets' failure policies "
       "decide what follows.",
       {},
       1,
       1},
      {"label",
       "label node NAME KEY=VALUE|KEY- ... [--overwrite]",
       "Set or remove a node's labels, kept over what its agent reports "
       "(labels under node-restriction.kubernetes.io/ and jobsetd.io/ only "
       "an admin sets).",
       {Switch("overwrite", '\0', "change a label that has another value")},
       2,
       1 + 2 * 256},
      {"taint",
       "taint node NAME KEY[=VALUE]:EFFECT|KEY[:EFFECT]- ... [--overwrite]",
       "Add or remove a node's taints (NoSchedule, PreferNoSchedule, "
       "NoExecute); its agent cannot change them.",
       {Switch("overwrite", '\0',
               "replace a taint of the same key and effect")},
       2,
       1 + 2 * 64},
      {"config",
       "config view [--minify] [--raw] | use-context NAME | set-context "
       "[NAME|--current] [--cluster=C] [--user=U] [-n NS] | get-contexts | "
       "current-context",
       "Show or edit the client config (kubeconfig-shaped; the first file of "
       "--config, $JOBSETCONFIG or ~/.config/jobset/config).",
       {Switch("minify", '\0', "view: only the current context"),
        Switch("raw", '\0', "view: show tokens and certificate data"),
        Valued("cluster", '\0', "NAME", "set-context: the cluster"),
        Valued("user", '\0', "NAME", "set-context: the user"),
        Switch("current", '\0', "set-context: the current context")},
       1,
       2},
      {"token",
       "token rotate-join [--ttl=DURATION]",
       "Replace the join token agents join with (printed once); joined nodes "
       "keep their certificates.",
       {Valued("ttl", '\0', "DURATION", "lifetime (default: none)")},
       1,
       1},
      {"admin",
       "admin snapshot save FILE [--force]",
       "Save a consistent snapshot of jobsetd's whole store (every key at "
       "one revision; cluster-admin only) to FILE, mode 0600, written "
       "atomically; jobsetd --restore_from=FILE starts from it.",
       {Switch("force", '\0', "replace FILE if it exists"),
        Valued("timeout", '\0', "DURATION",
               "how long the snapshot may take (default 10m)")},
       3,
       3},
      {"auth",
       "auth can-i VERB RESOURCE [NAME] [-A] | auth whoami",
       "Ask whether you may do VERB on RESOURCE (prints yes or no; exit 0 or "
       "1), or who jobsetd takes you for.",
       {Switch("all-namespaces", 'A', "can-i: in every namespace")},
       1,
       4},
      {"logs",
       "logs POD [-c CONTAINER] [-f] [--attempt N | -p]",
       "Print a pod's output, read from its node's agent; -f follows it until "
       "the pod ends. --attempt N (or -p, the attempt before the current "
       "one) reads the pod of an earlier restart attempt of its JobSet: POD "
       "is a current pod (its Job and index pick that attempt's) or the old "
       "pod's own name; jobsetd keeps the last --attempt_history attempts.",
       {Valued("container", 'c', "CONTAINER", "the container"),
        Switch("follow", 'f', "keep printing while the pod runs"),
        Valued("attempt", '\0', "N",
               "an earlier restart attempt's pod (0 is the first)"),
        Switch("previous", 'p', "the attempt before the current one")},
       1,
       1},
      {"version",
       "version [--client] [-o json|yaml]",
       "Print the client's version and, unless --client, jobsetd's.",
       {Switch("client", '\0', "the client's version only"),
        Valued("output", 'o', "FORMAT", "json or yaml")},
       0,
       0},
      {"completion",
       "completion bash|zsh",
       "Print a shell completion script: source <(jobsetctl completion "
       "bash).",
       {},
       1,
       1},
  };
  return *commands;
}

absl::StatusOr<Invocation> ParseCommandLine(
    const std::vector<std::string>& args,
    const std::vector<CommandSpec>& commands) {
  Invocation invocation;
  static const std::vector<FlagSpec> kNoFlags;
  std::vector<std::string> positional;
  // Flags are resolved against the command's once the verb is known; until
  // then only global flags are allowed (as kubectl requires).
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      if (invocation.command == nullptr && !flags_done) {
        for (const CommandSpec& command : commands) {
          if (command.verb == arg) invocation.command = &command;
        }
        if (invocation.command == nullptr) {
          return UsageError(absl::StrCat("unknown command ", Quote(arg)),
                            nullptr);
        }
        continue;
      }
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    const std::vector<FlagSpec>& command_flags =
        invocation.command == nullptr ? kNoFlags : invocation.command->flags;
    const FlagSpec* flag = nullptr;
    std::optional<std::string> value;
    std::string shown;
    if (absl::StartsWith(arg, "--")) {
      absl::string_view body = absl::string_view(arg).substr(2);
      const size_t eq = body.find('=');
      if (eq != absl::string_view::npos) {
        value = std::string(body.substr(eq + 1));
        body = body.substr(0, eq);
      }
      shown = absl::StrCat("--", body);
      flag = FindLong(body, GlobalFlags(), command_flags);
    } else {
      // -n NS, -nNS, -n=NS; a single letter each.
      shown = arg.substr(0, 2);
      flag = FindShort(arg[1], GlobalFlags(), command_flags);
      if (arg.size() > 2) {
        value = arg[2] == '=' ? arg.substr(3) : arg.substr(2);
      }
    }
    if (flag == nullptr) {
      return UsageError(absl::StrCat("unknown flag: ", shown),
                        invocation.command);
    }
    if (flag->has_value) {
      if (!value.has_value()) {
        if (i + 1 >= args.size()) {
          return UsageError(absl::StrCat("flag needs an argument: ", shown, " ",
                                         flag->value_name),
                            invocation.command);
        }
        value = args[++i];
      }
    } else if (value.has_value()) {
      std::string lower = absl::AsciiStrToLower(*value);
      if (lower != "true" && lower != "false") {
        return UsageError(absl::StrCat("flag ", shown,
                                       " takes no value (or true/false), got ",
                                       Quote(*value)),
                          invocation.command);
      }
      if (lower == "false") {
        invocation.flags.erase(flag->name);
        continue;
      }
      value = "true";
    } else {
      value = "true";
    }
    invocation.flags[flag->name] = *value;
    invocation.values[flag->name].push_back(*value);
  }
  invocation.help = invocation.Has("help");
  invocation.args = std::move(positional);
  if (invocation.help || invocation.command == nullptr) return invocation;
  const CommandSpec& command = *invocation.command;
  const int n = static_cast<int>(invocation.args.size());
  if (n < command.min_args || n > command.max_args) {
    return UsageError(
        absl::StrCat(
            n < command.min_args ? "missing arguments" : "too many arguments",
            " for ", Quote(command.verb), ": usage: jobsetctl ", command.usage),
        &command);
  }
  return invocation;
}

std::string HelpText(const CommandSpec* command,
                     const std::vector<CommandSpec>& commands) {
  std::string out;
  if (command == nullptr) {
    absl::StrAppend(&out,
                    "jobsetctl controls jobsetd, the JobSet gang scheduler.\n\n"
                    "Usage: jobsetctl [global flags] COMMAND [ARGS] [flags]\n\n"
                    "Commands:\n");
    for (const CommandSpec& c : commands) {
      // The first sentence of the summary.
      absl::string_view summary = c.summary;
      if (const size_t end = summary.find(". "); end != summary.npos) {
        summary = summary.substr(0, end + 1);
      }
      absl::StrAppend(&out, "  ", c.verb, std::string(12 - c.verb.size(), ' '),
                      summary, "\n");
    }
    absl::StrAppend(&out, "\nGlobal flags:\n");
    AppendFlags(GlobalFlags(), &out);
    absl::StrAppend(
        &out,
        "\nExit status: 0 ok, 1 error from jobsetd, 2 usage error, "
        "3 jobsetd unreachable,\n4 wait timed out, 5 wait cannot "
        "succeed (other terminal state).\n"
        "Use \"jobsetctl COMMAND --help\" for a command's flags.\n");
    return out;
  }
  absl::StrAppend(&out, command->summary, "\n\nUsage: jobsetctl ",
                  command->usage, "\n");
  if (!command->flags.empty()) {
    absl::StrAppend(&out, "\nFlags:\n");
    AppendFlags(command->flags, &out);
  }
  absl::StrAppend(&out, "\nGlobal flags:\n");
  AppendFlags(GlobalFlags(), &out);
  return out;
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 absl::string_view value) {
  absl::Duration d;
  int64_t seconds;
  if (absl::SimpleAtoi(value, &seconds) && seconds >= 0) {
    return absl::Seconds(seconds);
  }
  if (!absl::ParseDuration(value, &d) || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": invalid duration ", Quote(value),
                     " (use e.g. 30s, 5m, 1h)"));
  }
  return d;
}

std::string ServerAddress(const Invocation& invocation, const char* env) {
  if (invocation.Has("server")) return invocation.Get("server", "");
  if (env != nullptr && *env != '\0') return env;
  return std::string(kDefaultServer);
}

}  // namespace jobset::cli
