#include "cli/commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "api/config_objects.h"
#include "api/defaults.h"
#include "api/label_selector.h"
#include "api/manifest.h"
#include "api/namespace_manifest.h"
#include "api/rbac_manifest.h"
#include "cli/completion.h"
#include "cli/describe.h"
#include "cli/jsonpath.h"
#include "cli/kubeconfig.h"
#include "cli/manifest_split.h"
#include "cli/ordered_pool.h"
#include "cli/output.h"
#include "cli/selectors.h"
#include "common/json_quote.h"
#include "common/version.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::cli {
namespace {

// Whether two JobSets agree on what apply owns: labels, annotations and spec
// (the controller may have written status in between).
bool SameApplied(const api::JobSet& a, const api::JobSet& b) {
  auto owned = [](const api::JobSet& js) {
    api::JobSet out;
    *out.mutable_metadata()->mutable_labels() = js.metadata().labels();
    *out.mutable_metadata()->mutable_annotations() =
        js.metadata().annotations();
    *out.mutable_spec() = js.spec();
    return out;
  };
  return google::protobuf::util::MessageDifferencer::Equals(owned(a), owned(b));
}

using ::google::protobuf::util::MessageDifferencer;

constexpr absl::string_view kJobSetResource = "jobset.jobset.x-k8s.io";
constexpr absl::Duration kDefaultRequestTimeout = absl::Seconds(10);
constexpr absl::Duration kDefaultWaitTimeout = absl::Seconds(60);
// JobSet requests of one -f file in flight at once, over the one channel.
constexpr int kMaxInFlight = 32;

// A command's context: the invocation, the client and the streams.
struct Context {
  const Invocation& invocation;
  Client& client;
  const Io& io;
  std::string ns;
};

int Fail(const Context& ctx, const absl::Status& status) {
  *ctx.io.err << "error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

int Usage(const Context& ctx, absl::string_view message) {
  *ctx.io.err << "error: " << message << "\nSee 'jobsetctl "
              << ctx.invocation.command->verb << " --help'.\n";
  return kExitUsage;
}

std::string ReadAll(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// Checks that the first argument names JobSets.
bool IsJobSetType(const Context& ctx) {
  std::optional<std::string> type = CanonicalType(ctx.invocation.args[0]);
  return type.has_value() && *type == "jobsets";
}

int RequireJobSetType(const Context& ctx) {
  return Usage(ctx, absl::StrCat("\"", ctx.invocation.command->verb,
                                 "\" supports jobsets only, got \"",
                                 ctx.invocation.args[0], "\""));
}

// ---- apply ----

// Sets the namespace of a namespaced object from -n / the context when it
// has none; an object naming another namespace than -n is refused, as
// kubectl does.
absl::Status DefaultNamespace(const Context& ctx, api::ObjectMeta* meta) {
  if (meta->namespace_().empty()) {
    meta->set_namespace_(ctx.ns);
  } else if (ctx.invocation.Has("namespace") && meta->namespace_() != ctx.ns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the namespace from the provided object \"", meta->namespace_(),
        "\" does not match the namespace \"", ctx.ns,
        "\". You must pass '--namespace=", meta->namespace_(),
        "' to perform this operation."));
  }
  return absl::OkStatus();
}

// Prints the warnings jobsetd returned (as kubectl prints an API server's
// Warning headers).
void PrintServerWarnings(const Context& ctx,
                         const api::CreateJobSetResponse& created) {
  for (const std::string& warning : created.warnings()) {
    *ctx.io.err << "Warning: " << kJobSetResource << "/"
                << created.jobset().metadata().name() << ": " << warning
                << "\n";
  }
}

// Applies one manifest object; prints what happened. Returns the exit code.
int ApplyOne(const Context& ctx, api::JobSet jobset, bool dry_run) {
  api::ObjectMeta* meta = jobset.mutable_metadata();
  if (absl::Status s = DefaultNamespace(ctx, meta); !s.ok()) {
    return Fail(ctx, s);
  }
  const std::string suffix = dry_run ? " (dry run)" : "";
  const std::string display =
      meta->name().empty() ? absl::StrCat(meta->generate_name(), "<generated>")
                           : meta->name();
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: " << kJobSetResource << "/" << display << ": "
                << status.message() << "\n";
    return ExitCodeFor(status);
  };

  absl::StatusOr<api::JobSet> existing =
      absl::NotFoundError("no name: generateName");
  if (!meta->name().empty()) {
    api::GetJobSetRequest get;
    get.set_namespace_(meta->namespace_());
    get.set_name(meta->name());
    existing = ctx.client.Get(get);
  }
  if (!existing.ok() &&
      existing.status().code() != absl::StatusCode::kNotFound) {
    return failed(existing.status());
  }
  if (!existing.ok()) {
    api::CreateJobSetRequest create;
    *create.mutable_jobset() = std::move(jobset);
    create.set_dry_run(dry_run);
    absl::StatusOr<api::CreateJobSetResponse> created =
        ctx.client.Create(create);
    if (!created.ok()) return failed(created.status());
    PrintServerWarnings(ctx, *created);
    *ctx.io.out << kJobSetResource << "/" << created->jobset().metadata().name()
                << (created->created() ? " created" : " unchanged") << suffix
                << "\n";
    return kExitOk;
  }
  // It exists: replace labels, annotations and spec (apply's "configure").
  api::UpdateJobSetRequest update;
  *update.mutable_jobset() = std::move(jobset);
  update.set_dry_run(dry_run);
  absl::StatusOr<api::JobSet> updated = ctx.client.Update(update);
  if (!updated.ok()) return failed(updated.status());
  const bool same = SameApplied(*updated, *existing);
  *ctx.io.out << kJobSetResource << "/" << updated->metadata().name()
              << (same ? " unchanged" : " configured") << suffix << "\n";
  return kExitOk;
}

// What -f does with each object of the file.
enum class FileMode { kApply, kCreate, kDelete };

// Creates one JobSet (create -f): AlreadyExists when it exists.
int CreateOne(const Context& ctx, api::JobSet jobset, bool dry_run) {
  if (absl::Status s = DefaultNamespace(ctx, jobset.mutable_metadata());
      !s.ok()) {
    return Fail(ctx, s);
  }
  const std::string name = jobset.metadata().name();
  api::CreateJobSetRequest create;
  *create.mutable_jobset() = std::move(jobset);
  create.set_dry_run(dry_run);
  absl::StatusOr<api::CreateJobSetResponse> created = ctx.client.Create(create);
  if (!created.ok()) {
    *ctx.io.err << "error: " << kJobSetResource << "/" << name << ": "
                << created.status().message() << "\n";
    return ExitCodeFor(created.status());
  }
  PrintServerWarnings(ctx, *created);
  if (!created->created()) {
    *ctx.io.err << "error: " << kJobSetResource << " \""
                << created->jobset().metadata().name() << "\" already exists\n";
    return kExitApiError;
  }
  *ctx.io.out << kJobSetResource << "/" << created->jobset().metadata().name()
              << " created" << (dry_run ? " (dry run)" : "") << "\n";
  return kExitOk;
}

int DeleteOne(const Context& ctx, api::JobSet jobset) {
  if (absl::Status s = DefaultNamespace(ctx, jobset.mutable_metadata());
      !s.ok()) {
    return Fail(ctx, s);
  }
  api::DeleteJobSetRequest request;
  request.set_namespace_(jobset.metadata().namespace_());
  request.set_name(jobset.metadata().name());
  absl::StatusOr<api::JobSet> deleted = ctx.client.Delete(request);
  if (!deleted.ok()) return Fail(ctx, deleted.status());
  *ctx.io.out << kJobSetResource << " \"" << request.name() << "\" deleted\n";
  return kExitOk;
}

bool NamespacedRbac(absl::string_view kind) {
  return kind == "Role" || kind == "RoleBinding";
}

// "role.rbac.authorization.k8s.io" for "Role".
std::string RbacResource(absl::string_view kind) {
  return absl::StrCat(absl::AsciiStrToLower(kind),
                      ".rbac.authorization.k8s.io");
}

// Applies, creates or deletes one RBAC object.
int RbacOne(const Context& ctx, api::RbacObject object, FileMode mode,
            bool dry_run) {
  api::ObjectMeta* meta = object.has_role()
                              ? object.mutable_role()->mutable_metadata()
                              : object.mutable_binding()->mutable_metadata();
  const std::string kind =
      object.has_role() ? object.role().kind() : object.binding().kind();
  if (NamespacedRbac(kind)) {
    if (absl::Status s = DefaultNamespace(ctx, meta); !s.ok()) {
      return Fail(ctx, s);
    }
  }
  const std::string resource = RbacResource(kind);
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: " << resource << "/" << meta->name() << ": "
                << status.message() << "\n";
    return ExitCodeFor(status);
  };
  if (mode == FileMode::kDelete) {
    api::RbacObjectRef ref;
    ref.set_kind(kind);
    if (NamespacedRbac(kind)) ref.set_namespace_(meta->namespace_());
    ref.set_name(meta->name());
    absl::StatusOr<api::RbacObject> deleted = ctx.client.DeleteRbac(ref);
    if (!deleted.ok()) return failed(deleted.status());
    *ctx.io.out << resource << " \"" << meta->name() << "\" deleted\n";
    return kExitOk;
  }
  // Whether it exists decides created/configured (and create's refusal).
  bool exists = false;
  api::ListRbacRequest list;
  list.set_kind(kind);
  if (NamespacedRbac(kind)) list.set_namespace_(meta->namespace_());
  absl::StatusOr<api::ListRbacResponse> listed = ctx.client.ListRbac(list);
  if (listed.ok()) {
    for (const api::RbacObject& o : listed->objects()) {
      const api::ObjectMeta& m =
          o.has_role() ? o.role().metadata() : o.binding().metadata();
      if (m.name() == meta->name()) exists = true;
    }
  } else if (ExitCodeFor(listed.status()) == kExitUnreachable) {
    return failed(listed.status());
  }
  if (mode == FileMode::kCreate && exists) {
    *ctx.io.err << "error: " << resource << " \"" << meta->name()
                << "\" already exists\n";
    return kExitApiError;
  }
  const std::string what = exists ? " configured" : " created";
  if (dry_run) {
    // AccessService has no server-side dry run: nothing is sent.
    *ctx.io.out << resource << "/" << meta->name() << what
                << " (dry run, not sent)\n";
    return kExitOk;
  }
  absl::StatusOr<api::RbacObject> applied = ctx.client.ApplyRbac(object);
  if (!applied.ok()) return failed(applied.status());
  *ctx.io.out << resource << "/" << meta->name() << what << "\n";
  return kExitOk;
}

// Applies, creates or deletes one v1 Namespace object.
int NamespaceOne(const Context& ctx, const api::Namespace& ns, FileMode mode,
                 bool dry_run) {
  const std::string& name = ns.metadata().name();
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: namespace/" << name << ": " << status.message()
                << "\n";
    return ExitCodeFor(status);
  };
  if (mode == FileMode::kDelete) {
    absl::StatusOr<api::Namespace> deleted = ctx.client.DeleteNamespace(name);
    if (!deleted.ok()) return failed(deleted.status());
    *ctx.io.out << "namespace \"" << name << "\" deleted\n";
    return kExitOk;
  }
  api::ApplyNamespaceRequest request;
  *request.mutable_namespace_() = ns;
  request.set_create_only(mode == FileMode::kCreate);
  request.set_dry_run(dry_run);
  absl::StatusOr<api::ApplyNamespaceResponse> applied =
      ctx.client.ApplyNamespace(request);
  if (!applied.ok()) return failed(applied.status());
  const char* what = applied->created()     ? " created"
                     : applied->unchanged() ? " unchanged"
                                            : " configured";
  *ctx.io.out << "namespace/" << name << what << (dry_run ? " (dry run)" : "")
              << "\n";
  return kExitOk;
}

// Applies, creates or deletes one v1 Secret or ConfigMap: `resource` is
// "secret" or "configmap"; `apply(object, create_only, dry_run)` returns
// {created, unchanged}; `remove(namespace, name)` deletes.
template <typename T, typename ApplyFn, typename DeleteFn>
int ConfigObjectOne(const Context& ctx, T object, absl::string_view resource,
                    FileMode mode, bool dry_run, ApplyFn apply,
                    DeleteFn remove) {
  api::ObjectMeta* meta = object.mutable_metadata();
  if (absl::Status s = DefaultNamespace(ctx, meta); !s.ok()) {
    return Fail(ctx, s);
  }
  const std::string name = meta->name();
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: " << resource << "/" << name << ": "
                << status.message() << "\n";
    return ExitCodeFor(status);
  };
  if (mode == FileMode::kDelete) {
    absl::Status deleted = remove(meta->namespace_(), name);
    if (!deleted.ok()) return failed(deleted);
    *ctx.io.out << resource << " \"" << name << "\" deleted\n";
    return kExitOk;
  }
  absl::StatusOr<std::pair<bool, bool>> applied =
      apply(std::move(object), mode == FileMode::kCreate, dry_run);
  if (!applied.ok()) return failed(applied.status());
  const char* what = applied->first    ? " created"
                     : applied->second ? " unchanged"
                                       : " configured";
  *ctx.io.out << resource << "/" << name << what
              << (dry_run ? " (dry run)" : "") << "\n";
  return kExitOk;
}

int SecretOne(const Context& ctx, api::Secret secret, FileMode mode,
              bool dry_run) {
  return ConfigObjectOne(
      ctx, std::move(secret), "secret", mode, dry_run,
      [&](api::Secret object, bool create_only,
          bool dry) -> absl::StatusOr<std::pair<bool, bool>> {
        api::ApplySecretRequest request;
        *request.mutable_secret() = std::move(object);
        request.set_create_only(create_only);
        request.set_dry_run(dry);
        absl::StatusOr<api::ApplySecretResponse> response =
            ctx.client.ApplySecret(request);
        if (!response.ok()) return response.status();
        return std::make_pair(response->created(), response->unchanged());
      },
      [&](const std::string& ns, const std::string& name) {
        return ctx.client.DeleteSecret(ns, name).status();
      });
}

int ConfigMapOne(const Context& ctx, api::ConfigMap config_map, FileMode mode,
                 bool dry_run) {
  return ConfigObjectOne(
      ctx, std::move(config_map), "configmap", mode, dry_run,
      [&](api::ConfigMap object, bool create_only,
          bool dry) -> absl::StatusOr<std::pair<bool, bool>> {
        api::ApplyConfigMapRequest request;
        *request.mutable_config_map() = std::move(object);
        request.set_create_only(create_only);
        request.set_dry_run(dry);
        absl::StatusOr<api::ApplyConfigMapResponse> response =
            ctx.client.ApplyConfigMap(request);
        if (!response.ok()) return response.status();
        return std::make_pair(response->created(), response->unchanged());
      },
      [&](const std::string& ns, const std::string& name) {
        return ctx.client.DeleteConfigMap(ns, name).status();
      });
}

// Validates a Secret or ConfigMap of a file before anything is sent, in the
// namespace it will go to.
absl::Status ValidateConfigObject(const Context& ctx, api::Secret secret) {
  if (secret.metadata().namespace_().empty()) {
    secret.mutable_metadata()->set_namespace_(ctx.ns);
  }
  return api::ValidateSecret(secret);
}
absl::Status ValidateConfigObject(const Context& ctx,
                                  api::ConfigMap config_map) {
  if (config_map.metadata().namespace_().empty()) {
    config_map.mutable_metadata()->set_namespace_(ctx.ns);
  }
  return api::ValidateConfigMap(config_map);
}

int ApplyFile(const Context& ctx, FileMode mode) {
  const std::string verb = ctx.invocation.command->verb;
  if (!ctx.invocation.Has("filename")) {
    return Usage(ctx, "must specify -f FILE (or -f - for standard input)");
  }
  const std::string file = ctx.invocation.Get("filename", "");
  std::string text;
  if (file == "-") {
    text = ReadAll(*ctx.io.in);
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      return Fail(ctx, absl::NotFoundError(absl::StrCat(
                           "cannot read \"", file, "\": ", strerror(errno))));
    }
    text = ReadAll(in);
  }
  const std::string shown = file == "-" ? "<stdin>" : file;
  SplitDocuments split = SplitByKind(text);
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(split.rest);
  if (!objects.ok()) {
    *ctx.io.err << "error: " << shown << ": " << objects.status().message()
                << "\n";
    return kExitApiError;
  }
  // Document number -> RBAC or Namespace object, read before anything is
  // sent.
  std::map<int, std::variant<api::RbacObject, api::Namespace, api::Secret,
                             api::ConfigMap>>
      rbac;
  for (const RbacDocument& doc : split.rbac) {
    absl::StatusOr<api::RbacObject> object = api::ParseRbacDocument(doc.text);
    if (!object.ok()) {
      *ctx.io.err << "error: " << shown << ": manifest document "
                  << doc.document << ": " << object.status().message() << "\n";
      return kExitApiError;
    }
    rbac[doc.document] = *std::move(object);
  }
  for (const RbacDocument& doc : split.namespaces) {
    absl::StatusOr<api::Namespace> ns = api::ParseNamespaceDocument(doc.text);
    if (ns.ok() && mode != FileMode::kDelete) {
      if (absl::Status s = api::ValidateNamespace(*ns); !s.ok()) ns = s;
    }
    if (!ns.ok()) {
      *ctx.io.err << "error: " << shown << ": manifest document "
                  << doc.document << ": " << ns.status().message() << "\n";
      return kExitApiError;
    }
    rbac[doc.document] = *std::move(ns);
  }
  // Secrets and ConfigMaps: normalized (stringData into data) and checked
  // here, so that a bad one fails the file before anything is sent.
  auto take = [&](const RbacDocument& doc, auto parsed) {
    if (parsed.ok() && mode != FileMode::kDelete) {
      if (absl::Status s = ValidateConfigObject(ctx, *parsed); !s.ok()) {
        parsed = s;
      }
    }
    if (!parsed.ok()) {
      *ctx.io.err << "error: " << shown << ": manifest document "
                  << doc.document << ": " << parsed.status().message() << "\n";
      return false;
    }
    rbac[doc.document] = *std::move(parsed);
    return true;
  };
  for (const RbacDocument& doc : split.secrets) {
    absl::StatusOr<api::Secret> secret = api::ParseSecretDocument(doc.text);
    if (secret.ok()) secret = api::NormalizeSecret(*std::move(secret));
    if (!take(doc, std::move(secret))) return kExitApiError;
  }
  for (const RbacDocument& doc : split.config_maps) {
    if (!take(doc, api::ParseConfigMapDocument(doc.text))) {
      return kExitApiError;
    }
  }
  if (objects->empty() && rbac.empty()) {
    *ctx.io.err << "error: no objects passed to " << verb << "\n";
    return kExitApiError;
  }
  const bool dry_run = ctx.invocation.Has("dry-run");
  int exit_code = kExitOk;
  auto record = [&](int code) {
    // Unreachable wins: nothing else can have worked either.
    if (code != kExitOk && exit_code != kExitUnreachable) exit_code = code;
  };
  // One JobSet of the file: sent on a worker thread, its lines kept until
  // every earlier document's are printed.
  struct Pending {
    explicit Pending(api::ManifestObject* o) : object(o) {}
    api::ManifestObject* object;
    std::ostringstream out;
    std::ostringstream err;
    int code = kExitOk;
  };
  std::vector<Pending> wave;
  std::set<std::pair<std::string, std::string>> wave_names;
  // Sends the wave's JobSets, up to kMaxInFlight at once, and prints their
  // results in the file's order.
  auto flush_wave = [&] {
    RunOrdered(
        static_cast<int>(wave.size()), kMaxInFlight,
        [&](int i) {
          Pending& p = wave[i];
          const Io io{ctx.io.in, &p.out, &p.err};
          const Context own{ctx.invocation, ctx.client, io, ctx.ns};
          api::JobSet& jobset = p.object->jobset;
          if (mode != FileMode::kDelete) {
            for (const std::string& warning : p.object->warnings) {
              p.err << "Warning: " << kJobSetResource << "/"
                    << jobset.metadata().name() << ": " << warning << "\n";
            }
          }
          switch (mode) {
            case FileMode::kApply:
              p.code = ApplyOne(own, std::move(jobset), dry_run);
              break;
            case FileMode::kCreate:
              p.code = CreateOne(own, std::move(jobset), dry_run);
              break;
            case FileMode::kDelete:
              p.code = DeleteOne(own, std::move(jobset));
              break;
          }
        },
        [&](int i) {
          *ctx.io.err << wave[i].err.str();
          *ctx.io.out << wave[i].out.str();
          record(wave[i].code);
        });
    wave.clear();
    wave_names.clear();
  };
  // In the file's order: RBAC objects one at a time, each after every
  // document before it is done (a RoleBinding may name a Role above it);
  // the JobSets between them concurrently, except that a JobSet named again
  // waits for the earlier document of that name (create, then configure).
  auto next_rbac = rbac.begin();
  auto flush_rbac_before = [&](int document) {
    if (next_rbac == rbac.end() || next_rbac->first >= document) return;
    flush_wave();
    for (; next_rbac != rbac.end() && next_rbac->first < document;
         ++next_rbac) {
      if (const auto* ns = std::get_if<api::Namespace>(&next_rbac->second)) {
        record(NamespaceOne(ctx, *ns, mode, dry_run));
      } else if (const auto* secret =
                     std::get_if<api::Secret>(&next_rbac->second)) {
        record(SecretOne(ctx, *secret, mode, dry_run));
      } else if (const auto* cm =
                     std::get_if<api::ConfigMap>(&next_rbac->second)) {
        record(ConfigMapOne(ctx, *cm, mode, dry_run));
      } else {
        record(RbacOne(ctx, std::get<api::RbacObject>(next_rbac->second), mode,
                       dry_run));
      }
    }
  };
  for (api::ManifestObject& object : *objects) {
    flush_rbac_before(object.document);
    const api::ObjectMeta& meta = object.jobset.metadata();
    if (!meta.name().empty()) {
      std::pair<std::string, std::string> key{
          meta.namespace_().empty() ? ctx.ns : meta.namespace_(), meta.name()};
      if (wave_names.count(key) > 0) flush_wave();
      wave_names.insert(std::move(key));
    }
    wave.emplace_back(&object);
  }
  flush_wave();
  flush_rbac_before(std::numeric_limits<int>::max());
  return exit_code;
}

int Apply(const Context& ctx) { return ApplyFile(ctx, FileMode::kApply); }

// ---- get ----

struct Kind {
  std::string api_version;
  std::string kind;
  std::string name_prefix;  // For -o name.
};

Kind KindOf(absl::string_view type) {
  if (type == "jobsets")
    return {api::kApiVersion, api::kKind, "jobset.jobset.x-k8s.io/"};
  if (type == "jobs") return {"batch/v1", "Job", "job.batch/"};
  if (type == "pods") return {"v1", "Pod", "pod/"};
  if (type == "events") return {"events.k8s.io/v1", "Event", "event/"};
  if (type == "tokens") return {"", "", "token/"};
  if (type == "namespaces") return {"v1", "Namespace", "namespace/"};
  if (type == "secrets") return {"v1", "Secret", "secret/"};
  if (type == "configmaps") return {"v1", "ConfigMap", "configmap/"};
  if (type == "roles") {
    return {"rbac.authorization.k8s.io/v1", "Role",
            "role.rbac.authorization.k8s.io/"};
  }
  if (type == "clusterroles") {
    return {"rbac.authorization.k8s.io/v1", "ClusterRole",
            "clusterrole.rbac.authorization.k8s.io/"};
  }
  if (type == "rolebindings") {
    return {"rbac.authorization.k8s.io/v1", "RoleBinding",
            "rolebinding.rbac.authorization.k8s.io/"};
  }
  if (type == "clusterrolebindings") {
    return {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
            "clusterrolebinding.rbac.authorization.k8s.io/"};
  }
  return {"v1", "Node", "node/"};
}

// Prints `items` as asked by -o. `name_of` gives an item's name.
template <typename T, typename NameOf>
int PrintObjects(const Context& ctx, absl::string_view type,
                 const std::vector<T>& items, bool single,
                 const std::vector<Row>& table, NameOf name_of) {
  // A named object the selectors filtered out prints as an empty list.
  if (items.empty()) single = false;
  const std::string output = ctx.invocation.Get("output", "");
  const Kind kind = KindOf(type);
  if (output == "json" || output == "yaml") {
    const bool yaml = output == "yaml";
    if (single) {
      *ctx.io.out << (yaml ? ToYaml(items[0], kind.api_version, kind.kind)
                           : ToJson(items[0], kind.api_version, kind.kind));
    } else {
      std::vector<const google::protobuf::Message*> pointers;
      for (const T& item : items) pointers.push_back(&item);
      *ctx.io.out << ToList(pointers, kind.api_version, kind.kind, yaml);
    }
    return kExitOk;
  }
  if (output == "name") {
    for (const T& item : items) {
      *ctx.io.out << kind.name_prefix << name_of(item) << "\n";
    }
    return kExitOk;
  }
  if (absl::StartsWith(output, "jsonpath=")) {
    std::string json;
    if (single) {
      json = ToJson(items[0], kind.api_version, kind.kind);
    } else {
      std::vector<const google::protobuf::Message*> pointers;
      for (const T& item : items) pointers.push_back(&item);
      json = ToList(pointers, kind.api_version, kind.kind, /*yaml=*/false);
    }
    absl::StatusOr<std::string> text =
        RenderJsonPath(absl::StripPrefix(output, "jsonpath="), json);
    if (!text.ok()) return Fail(ctx, text.status());
    *ctx.io.out << *text;
    return kExitOk;
  }
  if (items.empty()) {
    if (ctx.invocation.Has("all-namespaces") || type == "nodes" ||
        type == "namespaces") {
      *ctx.io.err << "No resources found\n";
    } else {
      *ctx.io.err << "No resources found in " << ctx.ns << " namespace.\n";
    }
    return kExitOk;
  }
  *ctx.io.out << FormatTable(table);
  return kExitOk;
}

template <typename T>
std::vector<T> Items(const google::protobuf::RepeatedPtrField<T>& field) {
  return std::vector<T>(field.begin(), field.end());
}

// Keeps only the item named `name`; kNotFound when there is none.
template <typename T>
absl::Status FilterByName(std::vector<T>* items, absl::string_view name,
                          absl::string_view resource) {
  if (name.empty()) return absl::OkStatus();
  std::vector<T> kept;
  for (T& item : *items) {
    if (item.metadata().name() == name) kept.push_back(std::move(item));
  }
  *items = std::move(kept);
  if (items->empty()) {
    return absl::NotFoundError(
        absl::StrCat(resource, " \"", name, "\" not found"));
  }
  return absl::OkStatus();
}

// ---- selectors, namespaces and polled watches ----

// What -l/--selector and --field-selector of a get or delete ask for.
struct Selection {
  api::LabelSelector labels;
  FieldSelector fields;
  bool Empty() const { return labels.Empty() && fields.Empty(); }
};

absl::StatusOr<Selection> ParseSelection(const Context& ctx,
                                         absl::string_view type) {
  Selection selection;
  absl::StatusOr<api::LabelSelector> labels =
      api::LabelSelector::Parse(ctx.invocation.Get("selector", ""));
  if (!labels.ok()) return labels.status();
  selection.labels = *std::move(labels);
  absl::StatusOr<FieldSelector> fields = FieldSelector::Parse(
      ctx.invocation.Get("field-selector", ""), SupportedFields(type));
  if (!fields.ok()) return fields.status();
  selection.fields = *std::move(fields);
  return selection;
}

// Returns the JSON form of one item, as `-o json` prints it.
template <typename T>
std::string ItemJson(const T& item, absl::string_view type) {
  const Kind kind = KindOf(type);
  return ToJson(item, kind.api_version, kind.kind);
}

// Keeps the items `selection` matches (on their JSON form, so that every
// type is filtered on the fields and labels it prints).
template <typename T>
std::vector<T> Select(const Selection& selection, absl::string_view type,
                      std::vector<T> items) {
  if (selection.Empty()) return items;
  std::vector<T> kept;
  for (T& item : items) {
    absl::StatusOr<google::protobuf::Value> json =
        ParseJsonValue(ItemJson(item, type));
    if (!json.ok()) continue;  // ToJson always writes JSON; never here.
    if (selection.labels.Matches(LabelsOf(*json)) &&
        selection.fields.Matches(*json)) {
      kept.push_back(std::move(item));
    }
  }
  return kept;
}

// The namespaces a get reads: -n's, or with -A every namespace that holds
// a JobSet (jobs, pods and events exist only under JobSets; jobsetd lists
// them per namespace).
absl::StatusOr<std::vector<std::string>> Namespaces(const Context& ctx) {
  if (!ctx.invocation.Has("all-namespaces")) return std::vector{ctx.ns};
  api::ListJobSetsRequest request;
  request.set_all_namespaces(true);
  absl::StatusOr<api::ListJobSetsResponse> list = ctx.client.List(request);
  if (!list.ok()) return list.status();
  std::set<std::string> namespaces;
  for (const api::JobSet& jobset : list->items()) {
    namespaces.insert(jobset.metadata().namespace_());
  }
  return std::vector<std::string>(namespaces.begin(), namespaces.end());
}

// Lists with `fetch(namespace)` in each namespace of Namespaces().
template <typename T, typename Fetch>
absl::StatusOr<std::vector<T>> AcrossNamespaces(const Context& ctx,
                                                Fetch fetch) {
  absl::StatusOr<std::vector<std::string>> namespaces = Namespaces(ctx);
  if (!namespaces.ok()) return namespaces.status();
  std::vector<T> items;
  for (const std::string& ns : *namespaces) {
    absl::StatusOr<std::vector<T>> some = fetch(ns);
    if (!some.ok()) return some.status();
    std::move(some->begin(), some->end(), std::back_inserter(items));
  }
  return items;
}

// With -A, puts kubectl's NAMESPACE column first.
template <typename T>
std::vector<Row> WithNamespaces(const Context& ctx, std::vector<Row> rows,
                                const std::vector<T>& items) {
  if (!ctx.invocation.Has("all-namespaces") ||
      rows.size() != items.size() + 1) {
    return rows;
  }
  rows[0].insert(rows[0].begin(), "NAMESPACE");
  for (size_t i = 0; i < items.size(); ++i) {
    rows[i + 1].insert(rows[i + 1].begin(), items[i].metadata().namespace_());
  }
  return rows;
}

// Prints one item of a watch as -o asks: a table row (columns are not
// aligned across rows while streaming, as with kubectl get -w), JSON,
// YAML, its name or the JSONPath template.
template <typename T, typename RowsOf, typename NameOf>
int PrintWatched(const Context& ctx, absl::string_view type, const T& item,
                 RowsOf rows_of, NameOf name_of) {
  const std::string output = ctx.invocation.Get("output", "");
  const Kind kind = KindOf(type);
  if (output == "json") {
    *ctx.io.out << ToJson(item, kind.api_version, kind.kind);
  } else if (output == "yaml") {
    *ctx.io.out << "---\n" << ToYaml(item, kind.api_version, kind.kind);
  } else if (output == "name") {
    *ctx.io.out << kind.name_prefix << name_of(item) << "\n";
  } else if (absl::StartsWith(output, "jsonpath=")) {
    absl::StatusOr<std::string> text =
        RenderJsonPath(absl::StripPrefix(output, "jsonpath="),
                       ToJson(item, kind.api_version, kind.kind));
    if (!text.ok()) return Fail(ctx, text.status());
    *ctx.io.out << *text;
  } else {
    std::vector<Row> rows = rows_of(std::vector<T>{item});
    if (rows.size() > 1) *ctx.io.out << FormatTable({rows[1]});
  }
  ctx.io.out->flush();
  return kExitOk;
}

absl::StatusOr<absl::Time> WatchDeadline(const Context& ctx);

// How often a client-side watch lists again.
constexpr absl::Duration kPollInterval = absl::Seconds(1);

// `get -w` for the types jobsetd has no watch for (jobs, pods, nodes,
// events): lists every kPollInterval and prints the items that are new or
// changed since they were last shown (`shown`: what the caller printed).
// Deletions are not shown, as kubectl get -w without
// --output-watch-events. Ends at --timeout (exit 0) or on an error.
template <typename T, typename Fetch, typename RowsOf, typename NameOf>
int PollWatch(const Context& ctx, absl::string_view type,
              const std::vector<T>& shown, Fetch fetch, RowsOf rows_of,
              NameOf name_of) {
  absl::StatusOr<absl::Time> deadline = WatchDeadline(ctx);
  if (!deadline.ok()) return Usage(ctx, deadline.status().message());
  auto key_of = [&](const T& item) {
    if constexpr (requires { item.metadata().namespace_(); }) {
      return absl::StrCat(item.metadata().namespace_(), "/", name_of(item));
    } else {
      return std::string(name_of(item));
    }
  };
  std::map<std::string, std::string> last;
  for (const T& item : shown) last[key_of(item)] = ItemJson(item, type);
  while (true) {
    const absl::Duration left = *deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return kExitOk;
    absl::SleepFor(std::min(left, kPollInterval));
    if (absl::Now() >= *deadline) return kExitOk;
    absl::StatusOr<std::vector<T>> items = fetch();
    if (!items.ok()) return Fail(ctx, items.status());
    for (const T& item : *items) {
      std::string json = ItemJson(item, type);
      auto [it, added] = last.try_emplace(key_of(item), json);
      if (!added && it->second == json) continue;
      it->second = std::move(json);
      if (int code = PrintWatched(ctx, type, item, rows_of, name_of);
          code != kExitOk) {
        return code;
      }
    }
  }
}

// How often one `get -w` or `watch` starts over after falling behind.
constexpr int kMaxRelists = 1'000;

absl::StatusOr<absl::Time> WatchDeadline(const Context& ctx) {
  if (!ctx.invocation.Has("timeout")) return absl::InfiniteFuture();
  absl::StatusOr<absl::Duration> timeout =
      ParseDurationFlag("timeout", ctx.invocation.Get("timeout", ""));
  if (!timeout.ok()) return timeout.status();
  return absl::Now() + *timeout;
}

// Streams JobSet changes as table rows (with an EVENT column when
// `event_column`) or as JSON/YAML objects, from `resource_version`. When the
// watch falls behind jobsetd's history (OUT_OF_RANGE), watches again from
// the current state, showing only what changed since it was last shown
// (`shown_before`: what the caller printed already).
int StreamJobSets(const Context& ctx, absl::string_view name,
                  const std::string& resource_version, bool event_column,
                  bool header, const std::vector<api::JobSet>& shown_before) {
  absl::StatusOr<absl::Time> deadline = WatchDeadline(ctx);
  if (!deadline.ok()) return Usage(ctx, deadline.status().message());
  const std::string output = ctx.invocation.Get("output", "");
  if (header) {
    Row head = JobSetRows({}, absl::Now())[0];
    if (ctx.invocation.Has("all-namespaces")) {
      head.insert(head.begin(), "NAMESPACE");
    }
    if (event_column) head.insert(head.begin(), "EVENT");
    *ctx.io.out << FormatTable({head}) << std::flush;
  }
  absl::StatusOr<Selection> selection = ParseSelection(ctx, "jobsets");
  if (!selection.ok()) return Fail(ctx, selection.status());
  api::WatchJobSetsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_all_namespaces(ctx.invocation.Has("all-namespaces"));
  request.set_label_selector(ctx.invocation.Get("selector", ""));
  request.set_resource_version(resource_version);
  // The resourceVersion each JobSet was last shown at: after a relist, what
  // was shown already is not shown again.
  std::map<std::string, std::string> shown;
  for (const api::JobSet& jobset : shown_before) {
    shown[absl::StrCat(jobset.metadata().namespace_(), "/",
                       jobset.metadata().name())] =
        jobset.metadata().resource_version();
  }
  auto on_event = [&](const api::WatchEvent& event) {
    if (!name.empty() && event.object().metadata().name() != name) {
      return true;
    }
    if (Select(*selection, "jobsets", std::vector{event.object()}).empty()) {
      return true;
    }
    const std::string object_name =
        absl::StrCat(event.object().metadata().namespace_(), "/",
                     event.object().metadata().name());
    const std::string& version = event.object().metadata().resource_version();
    if (event.type() == "DELETED") {
      shown.erase(object_name);
    } else {
      auto [it, added] = shown.try_emplace(object_name, version);
      if (!added && it->second == version) return true;  // Relisted.
      it->second = version;
    }
    if (!output.empty() && output != "wide") {
      return PrintWatched(
                 ctx, "jobsets", event.object(),
                 [](const std::vector<api::JobSet>& items) {
                   return JobSetRows(items, absl::Now());
                 },
                 [](const api::JobSet& js) { return js.metadata().name(); }) ==
             kExitOk;
    }
    Row row = JobSetRows({event.object()}, absl::Now())[1];
    if (ctx.invocation.Has("all-namespaces")) {
      row.insert(row.begin(), event.object().metadata().namespace_());
    }
    if (event_column) row.insert(row.begin(), event.type());
    // Each row alone: columns are not aligned across rows while
    // streaming, as with kubectl get -w.
    *ctx.io.out << FormatTable({row}) << std::flush;
    return true;
  };
  absl::Status status;
  for (int relists = 0;; ++relists) {
    status = ctx.client.Watch(request, *deadline, on_event);
    if (status.code() != absl::StatusCode::kOutOfRange ||
        relists >= kMaxRelists) {
      break;
    }
    // The watch fell behind the history jobsetd keeps (Kubernetes' 410
    // Gone): watch again without a resourceVersion, which lists the current
    // state first, and go on from there.
    request.clear_resource_version();
  }
  if (status.code() == absl::StatusCode::kDeadlineExceeded &&
      *deadline != absl::InfiniteFuture()) {
    return kExitOk;  // --timeout ended the watch as asked.
  }
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

int GetJobSets(const Context& ctx, const std::string& name) {
  std::vector<api::JobSet> items;
  std::string resource_version;
  if (!name.empty()) {
    api::GetJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(name);
    absl::StatusOr<api::JobSet> got = ctx.client.Get(request);
    if (!got.ok()) return Fail(ctx, got.status());
    resource_version = got->metadata().resource_version();
    items.push_back(*std::move(got));
  } else {
    api::ListJobSetsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_all_namespaces(ctx.invocation.Has("all-namespaces"));
    request.set_label_selector(ctx.invocation.Get("selector", ""));
    absl::StatusOr<api::ListJobSetsResponse> list = ctx.client.List(request);
    if (!list.ok()) return Fail(ctx, list.status());
    resource_version = list->resource_version();
    items = Items(list->items());
  }
  absl::StatusOr<Selection> selection = ParseSelection(ctx, "jobsets");
  if (!selection.ok()) return Fail(ctx, selection.status());
  items = Select(*selection, "jobsets", std::move(items));
  const bool watch = ctx.invocation.Has("watch");
  const std::string output = ctx.invocation.Get("output", "");
  if (watch && items.empty() && output.empty()) {
    // Still print the header, then stream.
    return StreamJobSets(ctx, name, resource_version, false, true, items);
  }
  int code =
      PrintObjects(ctx, "jobsets", items, !name.empty(),
                   WithNamespaces(ctx, JobSetRows(items, absl::Now()), items),
                   [](const api::JobSet& js) { return js.metadata().name(); });
  if (code != kExitOk || !watch) return code;
  return StreamJobSets(ctx, name, resource_version, false, false, items);
}

int GetTokens(const Context& ctx, const std::string& name) {
  absl::StatusOr<api::ListTokensResponse> list = ctx.client.ListTokens();
  if (!list.ok()) return Fail(ctx, list.status());
  std::vector<api::TokenInfo> items;
  for (const api::TokenInfo& token : list->tokens()) {
    if (name.empty() || token.name() == name) items.push_back(token);
  }
  if (!name.empty() && items.empty()) {
    return Fail(ctx, absl::NotFoundError(
                         absl::StrCat("tokens \"", name, "\" not found")));
  }
  if (items.empty() && ctx.invocation.Get("output", "").empty()) {
    *ctx.io.err << "No resources found\n";
    return kExitOk;
  }
  return PrintObjects(ctx, "tokens", items, !name.empty(),
                      TokenRows(items, absl::Now()),
                      [](const api::TokenInfo& t) { return t.name(); });
}

// Roles, cluster roles and their bindings (AccessService.ListRbac).
int GetRbac(const Context& ctx, const std::string& type,
            const std::string& name) {
  const Kind kind = KindOf(type);
  const bool namespaced = type == "roles" || type == "rolebindings";
  const bool all = ctx.invocation.Has("all-namespaces");
  api::ListRbacRequest request;
  request.set_kind(kind.kind);
  if (namespaced && !all) request.set_namespace_(ctx.ns);
  absl::StatusOr<api::ListRbacResponse> list = ctx.client.ListRbac(request);
  if (!list.ok()) return Fail(ctx, list.status());
  std::vector<api::RbacObject> objects;
  for (const api::RbacObject& o : list->objects()) {
    const api::ObjectMeta& meta =
        o.has_role() ? o.role().metadata() : o.binding().metadata();
    if (name.empty() || meta.name() == name) objects.push_back(o);
  }
  if (!name.empty() && objects.empty()) {
    return Fail(
        ctx, absl::NotFoundError(absl::StrCat(
                 type, ".rbac.authorization.k8s.io \"", name, "\" not found")));
  }
  if (objects.empty() && ctx.invocation.Get("output", "").empty()) {
    if (namespaced && !all) {
      *ctx.io.err << "No resources found in " << ctx.ns << " namespace.\n";
    } else {
      *ctx.io.err << "No resources found\n";
    }
    return kExitOk;
  }
  const std::vector<Row> rows =
      RbacRows(objects, namespaced && all, absl::Now());
  auto name_of = [](const auto& item) { return item.metadata().name(); };
  if (type == "roles" || type == "clusterroles") {
    std::vector<api::Role> items;
    for (const api::RbacObject& o : objects) items.push_back(o.role());
    return PrintObjects(ctx, type, items, !name.empty(), rows, name_of);
  }
  std::vector<api::RoleBinding> items;
  for (const api::RbacObject& o : objects) items.push_back(o.binding());
  return PrintObjects(ctx, type, items, !name.empty(), rows, name_of);
}

// get jobs|pods|events: the items `list` returns in each namespace asked
// for (of one JobSet with --jobset), narrowed to NAME (`resource` names it
// when it is missing) and the selectors, printed as `rows` makes them, then
// polled with -w.
template <typename Request, typename Response, typename RowsOf>
int GetJobSetChildren(const Context& ctx, absl::string_view type,
                      const std::string& name, const std::string& jobset,
                      const Selection& selection, bool watch,
                      absl::string_view resource,
                      absl::StatusOr<Response> (Client::*list)(const Request&),
                      RowsOf rows) {
  using Item = std::decay_t<decltype(Response().items(0))>;
  auto fetch = [&]() -> absl::StatusOr<std::vector<Item>> {
    absl::StatusOr<std::vector<Item>> items = AcrossNamespaces<Item>(
        ctx, [&](const std::string& ns) -> absl::StatusOr<std::vector<Item>> {
          Request request;
          request.set_namespace_(ns);
          request.set_jobset(jobset);
          absl::StatusOr<Response> listed = (ctx.client.*list)(request);
          if (!listed.ok()) return listed.status();
          return Items(listed->items());
        });
    if (!items.ok()) return items.status();
    if (absl::Status s = FilterByName(&*items, name, resource); !s.ok()) {
      return s;
    }
    return Select(selection, type, *std::move(items));
  };
  absl::StatusOr<std::vector<Item>> items = fetch();
  if (!items.ok()) return Fail(ctx, items.status());
  auto rows_of = [&](const std::vector<Item>& some) {
    return WithNamespaces(ctx, rows(some), some);
  };
  auto name_of = [](const Item& item) { return item.metadata().name(); };
  int code =
      PrintObjects(ctx, type, *items, !name.empty(), rows_of(*items), name_of);
  if (code != kExitOk || !watch) return code;
  return PollWatch(ctx, type, *items, fetch, rows_of, name_of);
}

int Get(const Context& ctx) {
  std::optional<std::string> type = CanonicalType(ctx.invocation.args[0]);
  if (!type.has_value()) {
    return Usage(
        ctx, absl::StrCat("unknown resource type \"", ctx.invocation.args[0],
                          "\" (use jobsets, jobs, pods, nodes, events, "
                          "namespaces, tokens, roles, rolebindings, "
                          "clusterroles or clusterrolebindings)"));
  }
  const std::string output = ctx.invocation.Get("output", "");
  if (output == "jsonpath" || output == "jsonpath=") {
    return Fail(ctx, absl::InvalidArgumentError(
                         "template format specified but no template given"));
  }
  if (absl::StartsWith(output, "jsonpath=")) {
    const absl::string_view text = absl::StripPrefix(output, "jsonpath=");
    if (absl::StatusOr<JsonPath> parsed = JsonPath::Parse(text); !parsed.ok()) {
      return Fail(ctx, absl::InvalidArgumentError(
                           absl::StrCat("error parsing jsonpath ", text, ", ",
                                        parsed.status().message())));
    }
  } else if (!output.empty() && output != "json" && output != "yaml" &&
             output != "name" && output != "wide") {
    return Usage(ctx, absl::StrCat("unknown output format \"", output,
                                   "\" (use json, yaml, name, wide or "
                                   "jsonpath=TEMPLATE)"));
  }
  const std::string name =
      ctx.invocation.args.size() > 1 ? ctx.invocation.args[1] : "";
  const bool access_type = *type == "tokens" || *type == "roles" ||
                           *type == "rolebindings" || *type == "clusterroles" ||
                           *type == "clusterrolebindings";
  if (ctx.invocation.Has("watch") && access_type) {
    return Usage(ctx, absl::StrCat("-w/--watch does not apply to ", *type));
  }
  if (access_type && (ctx.invocation.Has("selector") ||
                      ctx.invocation.Has("field-selector"))) {
    return Usage(
        ctx, absl::StrCat("-l and --field-selector do not apply to ", *type));
  }
  if (!name.empty() && ctx.invocation.Has("selector")) {
    return Usage(ctx, "name cannot be provided when a selector is specified");
  }
  if (!name.empty() && ctx.invocation.Has("all-namespaces") &&
      *type != "nodes") {
    return Usage(ctx,
                 "a resource cannot be retrieved by name across all "
                 "namespaces");
  }
  const std::string jobset = ctx.invocation.Get("jobset", "");
  if (!jobset.empty() && *type != "jobs" && *type != "pods" &&
      *type != "events") {
    return Usage(ctx, absl::StrCat("--jobset does not apply to ", *type));
  }
  const bool namespaced_rbac = *type == "roles" || *type == "rolebindings";
  absl::StatusOr<Selection> selection = ParseSelection(ctx, *type);
  if (!selection.ok()) return Fail(ctx, selection.status());
  const bool watch = ctx.invocation.Has("watch");
  if (*type == "tokens") return GetTokens(ctx, name);
  if (namespaced_rbac || *type == "clusterroles" ||
      *type == "clusterrolebindings") {
    return GetRbac(ctx, *type, name);
  }
  auto name_of = [](const auto& item) { return item.metadata().name(); };
  if (*type == "jobsets") return GetJobSets(ctx, name);
  if (*type == "namespaces") {
    if (watch) return Usage(ctx, "-w/--watch does not apply to namespaces");
    if (ctx.invocation.Has("field-selector")) {
      return Usage(ctx, "--field-selector does not apply to namespaces");
    }
    std::vector<api::Namespace> items;
    if (!name.empty()) {
      absl::StatusOr<api::Namespace> ns = ctx.client.GetNamespace(name);
      if (!ns.ok()) return Fail(ctx, ns.status());
      items.push_back(*std::move(ns));
    } else {
      api::ListNamespacesRequest request;
      request.set_label_selector(ctx.invocation.Get("selector", ""));
      absl::StatusOr<api::ListNamespacesResponse> list =
          ctx.client.ListNamespaces(request);
      if (!list.ok()) return Fail(ctx, list.status());
      items = Items(list->items());
    }
    return PrintObjects(ctx, *type, items, !name.empty(),
                        NamespaceRows(items, absl::Now()), name_of);
  }
  if (*type == "secrets" || *type == "configmaps") {
    if (watch) {
      return Usage(ctx, absl::StrCat("-w/--watch does not apply to ", *type));
    }
    if (ctx.invocation.Has("all-namespaces")) {
      return Usage(ctx, absl::StrCat("-A/--all-namespaces does not apply to ",
                                     *type, " (use -n NAMESPACE)"));
    }
    if (*type == "secrets") {
      std::vector<api::Secret> items;
      if (!name.empty()) {
        absl::StatusOr<api::Secret> got = ctx.client.GetSecret(ctx.ns, name);
        if (!got.ok()) return Fail(ctx, got.status());
        items.push_back(*std::move(got));
      } else {
        api::ListSecretsRequest request;
        request.set_namespace_(ctx.ns);
        request.set_label_selector(ctx.invocation.Get("selector", ""));
        absl::StatusOr<api::ListSecretsResponse> list =
            ctx.client.ListSecrets(request);
        if (!list.ok()) return Fail(ctx, list.status());
        items = Items(list->items());
      }
      items = Select(*selection, *type, std::move(items));
      return PrintObjects(ctx, *type, items, !name.empty(),
                          SecretRows(items, absl::Now()), name_of);
    }
    std::vector<api::ConfigMap> items;
    if (!name.empty()) {
      absl::StatusOr<api::ConfigMap> got =
          ctx.client.GetConfigMap(ctx.ns, name);
      if (!got.ok()) return Fail(ctx, got.status());
      items.push_back(*std::move(got));
    } else {
      api::ListConfigMapsRequest request;
      request.set_namespace_(ctx.ns);
      request.set_label_selector(ctx.invocation.Get("selector", ""));
      absl::StatusOr<api::ListConfigMapsResponse> list =
          ctx.client.ListConfigMaps(request);
      if (!list.ok()) return Fail(ctx, list.status());
      items = Items(list->items());
    }
    items = Select(*selection, *type, std::move(items));
    return PrintObjects(ctx, *type, items, !name.empty(),
                        ConfigMapRows(items, absl::Now()), name_of);
  }
  if (*type == "jobs") {
    return GetJobSetChildren(ctx, *type, name, jobset, *selection, watch,
                             "jobs.batch", &Client::ListJobs,
                             [](const std::vector<api::Job>& jobs) {
                               return JobRows(jobs, absl::Now());
                             });
  }
  if (*type == "pods") {
    const bool wide = output == "wide";
    return GetJobSetChildren(ctx, *type, name, jobset, *selection, watch,
                             "pods", &Client::ListPods,
                             [wide](const std::vector<api::Pod>& pods) {
                               return PodRows(pods, absl::Now(), wide);
                             });
  }
  if (*type == "events") {
    if (!name.empty()) return Usage(ctx, "get events takes no NAME");
    return GetJobSetChildren(ctx, *type, name, jobset, *selection, watch,
                             "events", &Client::ListEvents,
                             [](const std::vector<api::Event>& events) {
                               return EventRows(events, absl::Now());
                             });
  }
  // Nodes.
  auto fetch_nodes = [&]() -> absl::StatusOr<std::vector<api::Node>> {
    std::vector<api::Node> items;
    if (!name.empty()) {
      absl::StatusOr<api::Node> node = ctx.client.GetNode(name);
      if (!node.ok()) return node.status();
      items.push_back(*std::move(node));
    } else {
      absl::StatusOr<api::ListNodesResponse> list = ctx.client.ListNodes();
      if (!list.ok()) return list.status();
      items = Items(list->items());
    }
    return Select(*selection, "nodes", std::move(items));
  };
  absl::StatusOr<std::vector<api::Node>> listed = fetch_nodes();
  if (!listed.ok()) return Fail(ctx, listed.status());
  std::vector<api::Node> items = *std::move(listed);
  auto node_rows = [&](const std::vector<api::Node>& nodes) {
    return NodeRows(nodes, absl::Now(), output == "wide");
  };
  if (items.empty() && (output.empty() || output == "wide") && !watch) {
    *ctx.io.err << "No resources found\n";  // Nodes have no namespace.
    return kExitOk;
  }
  int code =
      PrintObjects(ctx, *type, items, !name.empty(), node_rows(items), name_of);
  if (code != kExitOk || !watch) return code;
  return PollWatch(ctx, *type, items, fetch_nodes, node_rows, name_of);
}

// ---- the JobSet verbs ----

int Describe(const Context& ctx) {
  if (CanonicalType(ctx.invocation.args[0]) == "nodes") {
    absl::StatusOr<api::Node> node = ctx.client.GetNode(ctx.invocation.args[1]);
    if (!node.ok()) return Fail(ctx, node.status());
    *ctx.io.out << DescribeNode(*node, absl::Now());
    return kExitOk;
  }
  if (CanonicalType(ctx.invocation.args[0]) == "secrets") {
    absl::StatusOr<api::Secret> secret =
        ctx.client.GetSecret(ctx.ns, ctx.invocation.args[1]);
    if (!secret.ok()) return Fail(ctx, secret.status());
    *ctx.io.out << DescribeSecret(*secret);
    return kExitOk;
  }
  if (CanonicalType(ctx.invocation.args[0]) == "configmaps") {
    absl::StatusOr<api::ConfigMap> config_map =
        ctx.client.GetConfigMap(ctx.ns, ctx.invocation.args[1]);
    if (!config_map.ok()) return Fail(ctx, config_map.status());
    *ctx.io.out << DescribeConfigMap(*config_map);
    return kExitOk;
  }
  if (!IsJobSetType(ctx)) {
    return Usage(ctx, absl::StrCat("\"describe\" supports jobsets, nodes, "
                                   "secrets and configmaps, got \"",
                                   ctx.invocation.args[0], "\""));
  }
  const std::string& name = ctx.invocation.args[1];
  api::GetJobSetRequest get;
  get.set_namespace_(ctx.ns);
  get.set_name(name);
  absl::StatusOr<api::JobSet> jobset = ctx.client.Get(get);
  if (!jobset.ok()) return Fail(ctx, jobset.status());
  api::ListPodsRequest pods_request;
  pods_request.set_namespace_(ctx.ns);
  pods_request.set_jobset(name);
  absl::StatusOr<api::ListPodsResponse> pods =
      ctx.client.ListPods(pods_request);
  if (!pods.ok()) return Fail(ctx, pods.status());
  api::ListEventsRequest events_request;
  events_request.set_namespace_(ctx.ns);
  events_request.set_jobset(name);
  absl::StatusOr<api::ListEventsResponse> events =
      ctx.client.ListEvents(events_request);
  if (!events.ok()) return Fail(ctx, events.status());
  *ctx.io.out << DescribeJobSet(*jobset, Items(pods->items()),
                                Items(events->items()), absl::Now());
  return kExitOk;
}

// delete jobsets --all | -l SELECTOR [-A]: lists what matches, then
// deletes each (one already gone meanwhile is passed over).
int DeleteSelected(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  const bool all = ctx.invocation.Has("all");
  if (all && ctx.invocation.Has("selector")) {
    return Usage(ctx, "setting 'all' parameter but found a non empty selector");
  }
  if (args.size() > 1) {
    return Usage(ctx, all ? "name cannot be provided when --all is specified"
                          : "name cannot be provided when a selector is "
                            "specified");
  }
  if (args.empty() || !IsJobSetType(ctx)) {
    return Usage(ctx,
                 "--all and -l apply to jobsets only (delete jobsets "
                 "--all)");
  }
  api::ListJobSetsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_all_namespaces(ctx.invocation.Has("all-namespaces"));
  request.set_label_selector(ctx.invocation.Get("selector", ""));
  absl::StatusOr<api::ListJobSetsResponse> list = ctx.client.List(request);
  if (!list.ok()) return Fail(ctx, list.status());
  if (list->items().empty()) {
    *ctx.io.err << "No resources found\n";
    return kExitOk;
  }
  int exit_code = kExitOk;
  for (const api::JobSet& jobset : list->items()) {
    api::DeleteJobSetRequest del;
    del.set_namespace_(jobset.metadata().namespace_());
    del.set_name(jobset.metadata().name());
    absl::StatusOr<api::JobSet> deleted = ctx.client.Delete(del);
    if (!deleted.ok()) {
      if (deleted.status().code() == absl::StatusCode::kNotFound) continue;
      exit_code = Fail(ctx, deleted.status());
      if (exit_code == kExitUnreachable) return exit_code;
      continue;
    }
    *ctx.io.out << kJobSetResource << " \"" << del.name() << "\" deleted\n";
  }
  return exit_code;
}

int Delete(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (ctx.invocation.Has("filename")) {
    if (!args.empty()) return Usage(ctx, "delete -f takes no arguments");
    return ApplyFile(ctx, FileMode::kDelete);
  }
  if (ctx.invocation.Has("all") || ctx.invocation.Has("selector")) {
    return DeleteSelected(ctx);
  }
  if (args.size() == 1 && CanonicalType(args[0]).has_value()) {
    return Usage(ctx, "resource(s) were provided, but no name was specified");
  }
  if (args.size() != 2) {
    return Usage(
        ctx, absl::StrCat("usage: jobsetctl ", ctx.invocation.command->usage));
  }
  std::optional<std::string> type = CanonicalType(args[0]);
  if (type == "tokens") {
    absl::StatusOr<api::TokenInfo> deleted = ctx.client.DeleteToken(args[1]);
    if (!deleted.ok()) return Fail(ctx, deleted.status());
    *ctx.io.out << "token \"" << args[1] << "\" deleted\n";
    return kExitOk;
  }
  if (type == "namespaces") {
    absl::StatusOr<api::Namespace> deleted =
        ctx.client.DeleteNamespace(args[1]);
    if (!deleted.ok()) return Fail(ctx, deleted.status());
    *ctx.io.out << "namespace \"" << args[1] << "\" deleted\n";
    return kExitOk;
  }
  if (type == "secrets") {
    absl::StatusOr<api::Secret> deleted =
        ctx.client.DeleteSecret(ctx.ns, args[1]);
    if (!deleted.ok()) return Fail(ctx, deleted.status());
    *ctx.io.out << "secret \"" << args[1] << "\" deleted\n";
    return kExitOk;
  }
  if (type == "configmaps") {
    absl::StatusOr<api::ConfigMap> deleted =
        ctx.client.DeleteConfigMap(ctx.ns, args[1]);
    if (!deleted.ok()) return Fail(ctx, deleted.status());
    *ctx.io.out << "configmap \"" << args[1] << "\" deleted\n";
    return kExitOk;
  }
  if (type == "nodes") {
    absl::StatusOr<api::Node> deleted = ctx.client.DeleteNode(args[1]);
    if (!deleted.ok()) return Fail(ctx, deleted.status());
    *ctx.io.out << "node \"" << args[1] << "\" deleted\n";
    return kExitOk;
  }
  if (!IsJobSetType(ctx)) {
    return Usage(ctx, absl::StrCat("\"delete\" supports jobsets, namespaces, "
                                   "secrets, configmaps, tokens and nodes "
                                   "(or -f FILE), got \"",
                                   args[0], "\""));
  }
  api::DeleteJobSetRequest request;
  request.set_namespace_(ctx.ns);
  request.set_name(ctx.invocation.args[1]);
  absl::StatusOr<api::JobSet> deleted = ctx.client.Delete(request);
  if (!deleted.ok()) return Fail(ctx, deleted.status());
  *ctx.io.out << kJobSetResource << " \"" << request.name() << "\" deleted\n";
  return kExitOk;
}

int SetSuspend(const Context& ctx, bool suspend) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  absl::StatusOr<api::JobSet> result;
  if (suspend) {
    api::SuspendJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(ctx.invocation.args[1]);
    result = ctx.client.Suspend(request);
  } else {
    api::ResumeJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(ctx.invocation.args[1]);
    result = ctx.client.Resume(request);
  }
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << kJobSetResource << "/" << result->metadata().name()
              << (suspend ? " suspended" : " resumed") << "\n";
  return kExitOk;
}

int Watch(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  std::string name;
  if (!args.empty()) {
    std::optional<std::string> type = CanonicalType(args[0]);
    if (type.has_value() && *type == "jobsets") {
      if (args.size() > 1) name = args[1];
    } else if (args.size() == 1) {
      name = args[0];  // watch NAME
    } else {
      return RequireJobSetType(ctx);
    }
  }
  return StreamJobSets(ctx, name, "", /*event_column=*/true, /*header=*/true,
                       /*shown_before=*/{});
}

// What a JobSet's state means for `wait`.
enum class WaitState { kMet, kCannotBeMet, kNotYet };

WaitState Evaluate(const api::JobSet& jobset, absl::string_view type,
                   absl::string_view value, std::string* why) {
  for (const api::Condition& c : jobset.status().conditions()) {
    if (absl::EqualsIgnoreCase(c.type(), type) &&
        absl::EqualsIgnoreCase(c.status(), value)) {
      return WaitState::kMet;
    }
  }
  for (const api::Condition& c : jobset.status().conditions()) {
    if ((c.type() == "Completed" || c.type() == "Failed") &&
        c.status() == "True") {
      *why = absl::StrCat("jobset ", jobset.metadata().name(), " is ", c.type(),
                          " (", c.reason(), c.message().empty() ? "" : ": ",
                          c.message(), ")");
      return WaitState::kCannotBeMet;
    }
  }
  return WaitState::kNotYet;
}

int Wait(const Context& ctx) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  const std::string& name = ctx.invocation.args[1];
  const std::string for_flag = ctx.invocation.Get("for", "");
  absl::string_view condition = for_flag;
  // --for=condition=TYPE[=VALUE], VALUE defaulting to True.
  if (!absl::ConsumePrefix(&condition, "condition=") || condition.empty()) {
    return Usage(
        ctx, "--for must be condition=TYPE (e.g. --for=condition=Completed)");
  }
  std::vector<std::string> parts = absl::StrSplit(condition, '=');
  if (parts.size() > 2 || parts[0].empty()) {
    return Usage(ctx, absl::StrCat("bad --for condition \"", condition, "\""));
  }
  const std::string type = parts[0];
  const std::string value = parts.size() == 2 ? parts[1] : "True";
  absl::Duration timeout = kDefaultWaitTimeout;
  if (ctx.invocation.Has("timeout")) {
    absl::StatusOr<absl::Duration> parsed =
        ParseDurationFlag("timeout", ctx.invocation.Get("timeout", ""));
    if (!parsed.ok()) return Usage(ctx, parsed.status().message());
    timeout = *parsed;
  }
  const absl::Time deadline = absl::Now() + timeout;
  auto met = [&] {
    *ctx.io.out << kJobSetResource << "/" << name << " condition met\n";
    return kExitOk;
  };
  auto cannot = [&](const std::string& why) {
    *ctx.io.err << "error: condition " << type << "=" << value
                << " cannot be met: " << why << "\n";
    return kExitWaitFailed;
  };
  auto timed_out = [&] {
    *ctx.io.err << "error: timed out after " << absl::FormatDuration(timeout)
                << " waiting for the condition " << type << "=" << value
                << " on " << kJobSetResource << "/" << name << "\n";
    return kExitWaitTimeout;
  };

  api::GetJobSetRequest get;
  get.set_namespace_(ctx.ns);
  get.set_name(name);
  absl::StatusOr<api::JobSet> jobset = ctx.client.Get(get);
  if (!jobset.ok()) return Fail(ctx, jobset.status());
  std::string why;
  switch (Evaluate(*jobset, type, value, &why)) {
    case WaitState::kMet:
      return met();
    case WaitState::kCannotBeMet:
      return cannot(why);
    case WaitState::kNotYet:
      break;
  }
  std::string resource_version = jobset->metadata().resource_version();
  while (true) {
    WaitState state = WaitState::kNotYet;
    bool deleted = false;
    api::WatchJobSetsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_resource_version(resource_version);
    absl::Status status =
        ctx.client.Watch(request, deadline, [&](const api::WatchEvent& event) {
          if (event.object().metadata().name() != name) return true;
          if (event.type() == "DELETED") {
            deleted = true;
            return false;
          }
          state = Evaluate(event.object(), type, value, &why);
          return state == WaitState::kNotYet;
        });
    if (deleted) return cannot(absl::StrCat("jobset ", name, " was deleted"));
    if (state == WaitState::kMet) return met();
    if (state == WaitState::kCannotBeMet) return cannot(why);
    if (status.code() == absl::StatusCode::kDeadlineExceeded ||
        absl::Now() >= deadline) {
      return timed_out();
    }
    if (status.code() == absl::StatusCode::kOutOfRange) {
      // The history was compacted: start over from the current state (the
      // watch lists it first).
      resource_version.clear();
      continue;
    }
    if (!status.ok()) return Fail(ctx, status);
    // The server ended the stream: it is shutting down.
    return Fail(ctx, absl::UnavailableError(
                         absl::StrCat("jobsetd at ", ctx.client.address(),
                                      " ended the watch (shutting down?)")));
  }
}

int NodeVerb(const Context& ctx) {
  const std::string& verb = ctx.invocation.command->verb;
  const std::string& node = ctx.invocation.args[0];
  absl::StatusOr<api::Node> result =
      verb == "cordon"     ? ctx.client.CordonNode(node)
      : verb == "uncordon" ? ctx.client.UncordonNode(node)
                           : ctx.client.DrainNode(node);
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << "node/" << node << " "
              << (verb == "cordon"     ? "cordoned"
                  : verb == "uncordon" ? "uncordoned"
                                       : "drained")
              << "\n";
  return kExitOk;
}

int Logs(const Context& ctx) {
  api::GetPodLogsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_pod(ctx.invocation.args[0]);
  request.set_container(ctx.invocation.Get("container", ""));
  request.set_follow(ctx.invocation.Has("follow"));
  absl::Status status = ctx.client.Logs(request, [&](const std::string& data) {
    *ctx.io.out << data;
    ctx.io.out->flush();
  });
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

// ---- version ----

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
  return absl::StrCat("  gitVersion: ", v.git_version(), "\n  major: \"",
                      v.major(), "\"\n  minor: \"", v.minor(),
                      "\"\n  platform: ", v.platform(), "\n");
}

api::VersionInfo ClientVersion() {
  api::VersionInfo v;
  v.set_major(std::string(kVersionMajor));
  v.set_minor(std::string(kVersionMinor));
  v.set_git_version(std::string(kGitVersion));
  v.set_platform(std::string(kPlatform));
  return v;
}

// Prints the versions as kubectl version does; `server` is null with
// --client. The client's is printed even when the server cannot be asked.
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

// ---- create, token, auth ----

// --ttl (a positive duration), when given, into `request`'s ttl.
template <typename Request>
absl::Status SetTtl(const Context& ctx, Request* request) {
  if (!ctx.invocation.Has("ttl")) return absl::OkStatus();
  absl::StatusOr<absl::Duration> parsed =
      ParseDurationFlag("ttl", ctx.invocation.Get("ttl", ""));
  if (!parsed.ok()) return parsed.status();
  if (*parsed <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--ttl must be positive");
  }
  request->mutable_ttl()->set_seconds(absl::ToInt64Seconds(*parsed));
  return absl::OkStatus();
}

// ---- create secret, create configmap (kubectl's generators) ----

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
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read \"", path, "\": ", error.message()));
  }
  if (size > static_cast<uintmax_t>(api::kMaxConfigDataBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": \"", path, "\" is ", size, " bytes, more than the ",
        api::kMaxConfigDataBytes, " a Secret or ConfigMap may hold"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read \"", path, "\": ", strerror(errno)));
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
          absl::StrCat(flag, ": invalid literal source \"", literal,
                       "\", expected key=value"));
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
            flag, ": cannot read \"", path, "\": ", error.message()));
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
          absl::StrCat(source.flag, ": \"", source.key.substr(0, 253),
                       "\" is not a valid key name for a ", kind, ": ",
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
  return SecretOne(ctx, std::move(secret), FileMode::kCreate,
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
  return ConfigMapOne(ctx, std::move(config_map), FileMode::kCreate,
                      ctx.invocation.Has("dry-run"));
}

int Create(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (ctx.invocation.Has("filename")) {
    if (!args.empty()) return Usage(ctx, "create -f takes no arguments");
    return ApplyFile(ctx, FileMode::kCreate);
  }
  if (!args.empty() && CanonicalType(args[0]) == "secrets") {
    return CreateSecret(ctx);
  }
  if (!args.empty() && CanonicalType(args[0]) == "configmaps") {
    return CreateConfigMap(ctx);
  }
  if (args.empty() || CanonicalType(args[0]) != "tokens") {
    return Usage(ctx,
                 "create takes -f FILE, or: create token NAME, create secret "
                 "generic|docker-registry NAME, create configmap NAME");
  }
  if (args.size() > 2) return Usage(ctx, "create token takes one NAME");
  if (args.size() != 2) return Usage(ctx, "create token needs a NAME");
  api::CreateTokenRequest request;
  request.set_name(args[1]);
  for (absl::string_view group : absl::StrSplit(
           ctx.invocation.Get("groups", ""), ',', absl::SkipEmpty())) {
    request.add_groups(std::string(group));
  }
  if (absl::Status ttl = SetTtl(ctx, &request); !ttl.ok()) {
    return Usage(ctx, ttl.message());
  }
  absl::StatusOr<api::CreateTokenResponse> created =
      ctx.client.CreateToken(request);
  if (!created.ok()) return Fail(ctx, created.status());
  *ctx.io.out << created->token() << "\n";
  *ctx.io.err << "token/" << args[1]
              << " created; it cannot be shown again (jobsetd keeps only its "
                 "hash)\n";
  return kExitOk;
}

int Token(const Context& ctx) {
  if (ctx.invocation.args[0] != "rotate-join") {
    return Usage(
        ctx, absl::StrCat("unknown token command \"", ctx.invocation.args[0],
                          "\" (use rotate-join)"));
  }
  api::RotateJoinTokenRequest request;
  if (absl::Status ttl = SetTtl(ctx, &request); !ttl.ok()) {
    return Usage(ctx, ttl.message());
  }
  absl::StatusOr<api::RotateJoinTokenResponse> rotated =
      ctx.client.RotateJoinToken(request);
  if (!rotated.ok()) return Fail(ctx, rotated.status());
  *ctx.io.out << rotated->join_token() << "\n";
  *ctx.io.err << "join token rotated; agents joining from now on need this "
                 "one (it cannot be shown again)\n";
  return kExitOk;
}

// A human size: "1.2 MiB", "567 B".
std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof(out), "%.1f %s", value, units[unit]);
  return out;
}

// admin snapshot save FILE: the chunks go to FILE.tmp (0600, created here,
// never through a symlink), which is fsync'd and renamed over FILE only
// once the last chunk has come and its size agrees; the directory is
// fsync'd too. An existing FILE is kept unless --force.
int Admin(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args[0] != "snapshot" || args[1] != "save") {
    return Usage(ctx, absl::StrCat("unknown admin command \"", args[0], " ",
                                   args[1], "\" (use snapshot save FILE)"));
  }
  const std::string& path = args[2];
  absl::Duration timeout = absl::Minutes(10);
  if (const std::string given = ctx.invocation.Get("timeout", "");
      !given.empty() && (!absl::ParseDuration(given, &timeout) ||
                         timeout <= absl::ZeroDuration())) {
    return Usage(ctx, absl::StrCat("--timeout=", given, ": not a duration"));
  }
  struct stat st;
  if (!ctx.invocation.Has("force") && lstat(path.c_str(), &st) == 0) {
    *ctx.io.err << "error: " << path << " exists; pass --force to replace it\n";
    return kExitApiError;
  }
  const std::string tmp = absl::StrCat(path, ".tmp");
  unlink(tmp.c_str());
  const int fd = open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *ctx.io.err << "error: " << tmp
                << ": cannot create: " << std::strerror(errno) << "\n";
    return kExitApiError;
  }
  std::string write_error;
  uint64_t written = 0;
  api::SnapshotChunk last;
  absl::Status saved = ctx.client.SaveSnapshot(
      absl::Now() + timeout, [&](const api::SnapshotChunk& chunk) {
        const std::string& data = chunk.data();
        for (size_t done = 0; done < data.size();) {
          const ssize_t n = write(fd, data.data() + done, data.size() - done);
          if (n < 0) {
            if (errno == EINTR) continue;
            write_error = absl::StrCat(tmp, ": write: ", std::strerror(errno));
            return false;
          }
          done += static_cast<size_t>(n);
        }
        written += data.size();
        if (chunk.last()) last = chunk;
        return !chunk.last();
      });
  if (saved.ok() && write_error.empty()) {
    if (!last.last()) {
      write_error = "the snapshot stream ended before its last chunk";
    } else if (last.bytes() != written) {
      write_error = absl::StrCat("jobsetd sent ", last.bytes(), " bytes but ",
                                 written, " arrived");
    } else if (fsync(fd) != 0) {
      write_error = absl::StrCat(tmp, ": fsync: ", std::strerror(errno));
    }
  }
  if (close(fd) != 0 && write_error.empty() && saved.ok()) {
    write_error = absl::StrCat(tmp, ": close: ", std::strerror(errno));
  }
  if (saved.ok() && write_error.empty() &&
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    write_error =
        absl::StrCat("rename ", tmp, " to ", path, ": ", std::strerror(errno));
  }
  if (!saved.ok() || !write_error.empty()) {
    unlink(tmp.c_str());
    if (!saved.ok()) return Fail(ctx, saved);
    *ctx.io.err << "error: " << write_error << "\n";
    return kExitApiError;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  *ctx.io.out << "snapshot of revision " << last.revision() << " ("
              << last.keys() << " keys, " << HumanBytes(last.bytes())
              << ") saved to " << path << "\n";
  return kExitOk;
}

// Splits what `auth can-i` is given ("jobsets", "jobsets.jobset.x-k8s.io",
// "pods/log", "js") into resource and API group.
void AccessResource(absl::string_view given, api::AccessReview* review) {
  std::string resource(given);
  std::string subresource;
  if (const size_t slash = resource.find('/'); slash != resource.npos) {
    subresource = resource.substr(slash);
    resource.resize(slash);
  }
  if (const size_t dot = resource.find('.'); dot != resource.npos) {
    review->set_api_group(resource.substr(dot + 1));
    resource.resize(dot);
  }
  if (std::optional<std::string> canonical = CanonicalType(resource)) {
    resource = *canonical;
  }
  review->set_resource(absl::StrCat(resource, subresource));
}

int Auth(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args[0] == "whoami") {
    if (args.size() != 1) return Usage(ctx, "auth whoami takes no arguments");
    api::AccessReview review;
    review.set_verb("get");
    review.set_resource("jobsets");
    review.set_namespace_(ctx.ns);
    absl::StatusOr<api::AccessReviewResult> result =
        ctx.client.ReviewAccess(review);
    if (!result.ok()) return Fail(ctx, result.status());
    *ctx.io.out << FormatTable(
        {{"ATTRIBUTE", "VALUE"},
         {"Username", result->user()},
         {"Groups",
          absl::StrCat("[", absl::StrJoin(result->groups(), " "), "]")}});
    return kExitOk;
  }
  if (args[0] != "can-i") {
    return Usage(ctx, absl::StrCat("unknown auth command \"", args[0],
                                   "\" (use can-i or whoami)"));
  }
  if (args.size() < 3) {
    return Usage(ctx, "usage: jobsetctl auth can-i VERB RESOURCE [NAME]");
  }
  api::AccessReview review;
  review.set_verb(args[1]);
  AccessResource(args[2], &review);
  if (args.size() == 4) review.set_name(args[3]);
  if (!ctx.invocation.Has("all-namespaces")) review.set_namespace_(ctx.ns);
  absl::StatusOr<api::AccessReviewResult> result =
      ctx.client.ReviewAccess(review);
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << (result->allowed() ? "yes" : "no") << "\n";
  if (!result->allowed() && !result->reason().empty()) {
    *ctx.io.err << result->reason() << "\n";
  }
  return result->allowed() ? kExitOk : kExitApiError;
}

// ---- config (no server involved) ----

struct ConfigContext {
  const Invocation& invocation;
  const Io& io;
  std::vector<std::string> files;
  bool explicit_file;
  const char* home;
};

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
                 "no context exists with the name: \"", args[1], "\"")));
    }
    absl::StatusOr<std::string> file = EditedFile(c);
    if (!file.ok()) return ConfigFail(c, file.status());
    if (absl::Status s = WriteCurrentContext(*file, args[1]); !s.ok()) {
      return ConfigFail(c, s);
    }
    *c.io.out << "Switched to context \"" << args[1] << "\".\n";
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
    *c.io.out << "Context \"" << name << "\" "
              << (exists ? "modified" : "created") << ".\n";
    return kExitOk;
  }
  return ConfigUsage(
      c, absl::StrCat("unknown config command \"", sub,
                      "\" (use view, use-context, set-context, get-contexts "
                      "or current-context)"));
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    return kExitUnreachable;
  }
  return kExitApiError;
}

int RunCommand(const Invocation& invocation, Client& client, const Io& io) {
  return RunCommand(invocation, client, io, api::kDefaultNamespace);
}

int RunCommand(const Invocation& invocation, Client& client, const Io& io,
               absl::string_view default_namespace) {
  Context ctx{invocation, client, io,
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
  if (verb == "cordon" || verb == "uncordon" || verb == "drain") {
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
  return Usage(ctx, absl::StrCat("no such command \"", verb, "\""));
}

int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io) {
  Environment env;
  env.server = server_env;
  return Main(args, env, io);
}

int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io) {
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
    absl::StatusOr<std::string> script =
        CompletionScript(invocation->args[0], Commands());
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
  Client client(*std::move(connection), timeout);
  return RunCommand(*invocation, client, io, ns);
}

}  // namespace jobset::cli
