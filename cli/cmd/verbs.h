#ifndef JOBSET_CLI_CMD_VERBS_H_
#define JOBSET_CLI_CMD_VERBS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/cmd/context.h"
#include "cli/cmd/kinds.h"

// jobsetctl's verbs, one file each under cli/cmd/ (as kubectl's pkg/cmd):
// each takes the command's Context and returns the exit status, printing
// results to ctx.io.out and errors to ctx.io.err. commands.cc routes to
// them.
namespace jobset::cli {

// Whether the first argument names JobSets (suspend, resume, wait, watch
// and delete --all apply to JobSets only).
bool NamesJobSets(const Context& ctx);
// Prints that the verb supports JobSets only; returns kExitUsage.
int JobSetsOnly(const Context& ctx);

// apply.cc: apply -f, and what create -f and delete -f do with a file.
enum class FileMode { kApply, kCreate, kDelete };
int Apply(const Context& ctx);
int ApplyFile(const Context& ctx, FileMode mode);
// Applies, creates or deletes one object of `kind` (`object` is its
// manifest message, `meta` that message's metadata); prints what happened.
int ApplyObject(const Context& ctx, const KindInfo& kind,
                google::protobuf::Message& object, api::ObjectMeta* meta,
                FileMode mode, bool dry_run);

// get.cc
int Get(const Context& ctx);

// pending_workloads.cc: get pendingworkloads (Kueue's visibility API), which
// get routes there by NamesPendingWorkloads; the verbs that take a kind
// refuse it with PendingWorkloadsReadOnly (a usage error).
bool NamesPendingWorkloads(absl::string_view word);
int GetPendingWorkloads(const Context& ctx);
int PendingWorkloadsReadOnly(const Context& ctx);

// watch.cc: watch [jobsets] [NAME]; get -w.
int Watch(const Context& ctx);
// Streams the kind's watch (calls.watch) from `resource_version` as table
// rows (with an EVENT column when `event_column`; the header first when
// `header`) or as -o asks, of the object `name` only when given. After
// falling behind jobsetd's history (OUT_OF_RANGE), watches again from the
// current state, showing only what changed since it was shown (`shown`:
// what the caller printed already).
int StreamWatch(const Context& ctx, const KindInfo& kind,
                const std::string& name, const std::string& resource_version,
                bool event_column, bool header,
                const std::vector<Object>& shown);
// get -w for kinds jobsetd has no watch for: lists with `fetch` every
// second and prints what is new or changed since `shown`, until --timeout.
int PollWatch(
    const Context& ctx, const KindInfo& kind, const std::vector<Object>& shown,
    const std::function<absl::StatusOr<std::vector<Object>>()>& fetch);

// wait.cc
int Wait(const Context& ctx);

// describe.cc
int Describe(const Context& ctx);

// delete.cc
int Delete(const Context& ctx);

// suspend.cc: suspend|resume jobset NAME.
int SetSuspend(const Context& ctx, bool suspend);

// node.cc: cordon|uncordon|drain NODE; label|taint node NAME ...
// (node_edits.h reads their arguments).
int NodeVerb(const Context& ctx);

// logs.cc
int Logs(const Context& ctx);

// create.cc: create -f, token, secret, configmap.
int Create(const Context& ctx);

// token.cc: create token NAME; token rotate-join.
int CreateToken(const Context& ctx);
int Token(const Context& ctx);

// admin.cc: admin snapshot save FILE.
int Admin(const Context& ctx);

// auth.cc: auth can-i, auth whoami.
int Auth(const Context& ctx);

// version.cc: prints the versions as kubectl version does; `client` is
// null with --client (the client's is printed even when the server cannot
// be asked).
int PrintVersion(const Invocation& invocation, const Io& io, Client* client);

// config.cc: config view|use-context|set-context|get-contexts|
// current-context (no server involved).
struct ConfigContext {
  const Invocation& invocation;
  const Io& io;
  std::vector<std::string> files;  // The config files' lookup.
  bool explicit_file;              // --config given.
  const char* home;                // $HOME (may be null).
};
int RunConfig(const ConfigContext& c);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_VERBS_H_
