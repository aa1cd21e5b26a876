// apply -f, and create -f / delete -f: every document of a file, in the
// file's order, each by its kind's apply or remove call (cli/cmd/kinds.h).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/config_objects.h"
#include "api/kueue_manifest.h"
#include "api/manifest.h"
#include "api/namespace_manifest.h"
#include "api/rbac_manifest.h"
#include "cli/cmd/verbs.h"
#include "cli/kueue_output.h"
#include "cli/manifest_split.h"
#include "cli/ordered_pool.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// JobSet requests of one -f file in flight at once, over the one channel.
constexpr int kMaxInFlight = 32;

// Sets the namespace of a namespaced object from -n / the context when it
// has none; an object naming another namespace than -n is refused, as
// kubectl does.
absl::Status DefaultNamespace(const Context& ctx, api::ObjectMeta* meta) {
  if (meta->namespace_().empty()) {
    meta->set_namespace_(ctx.ns);
  } else if (ctx.invocation.Has("namespace") && meta->namespace_() != ctx.ns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the namespace from the provided object ", Quote(meta->namespace_()),
        " does not match the namespace ", Quote(ctx.ns),
        ". You must pass '--namespace=", meta->namespace_(),
        "' to perform this operation."));
  }
  return absl::OkStatus();
}

// One document of the file other than a JobSet (RBAC, Namespace, Secret,
// ConfigMap, Kueue's objects): its kind, message, that message's metadata
// and the reader's warnings (fields jobsetd ignores).
struct Document {
  const KindInfo* kind = nullptr;
  std::unique_ptr<google::protobuf::Message> object;
  api::ObjectMeta* meta = nullptr;
  std::vector<std::string> warnings;
};

template <typename T>
Document MakeDocument(const KindInfo* kind, T object) {
  Document doc;
  doc.kind = kind;
  auto owned = std::make_unique<T>(std::move(object));
  if constexpr (std::is_same_v<T, api::RbacObject>) {
    doc.meta = owned->has_role() ? owned->mutable_role()->mutable_metadata()
                                 : owned->mutable_binding()->mutable_metadata();
  } else if constexpr (std::is_same_v<T, api::KueueObject>) {
    doc.meta = MutableKueueMetadata(owned.get());
  } else {
    doc.meta = owned->mutable_metadata();
  }
  doc.object = std::move(owned);
  return doc;
}

// Checks a Secret or ConfigMap of a file before anything is sent, in the
// namespace it will go to.
template <typename T>
absl::Status Validate(const Context& ctx, T object) {
  if (object.metadata().namespace_().empty()) {
    object.mutable_metadata()->set_namespace_(ctx.ns);
  }
  if constexpr (std::is_same_v<T, api::Secret>) {
    return api::ValidateSecret(object);
  } else {
    return api::ValidateConfigMap(object);
  }
}

}  // namespace

int ApplyObject(const Context& ctx, const KindInfo& kind,
                google::protobuf::Message& object, api::ObjectMeta* meta,
                FileMode mode, bool dry_run) {
  if (kind.namespaced) {
    if (absl::Status s = DefaultNamespace(ctx, meta); !s.ok()) {
      return Fail(ctx, s);
    }
  }
  const std::string resource = kind.Resource();
  const std::string display =
      meta->name().empty() ? absl::StrCat(meta->generate_name(), "<generated>")
                           : meta->name();
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: " << resource << "/" << display << ": "
                << status.message() << "\n";
    return ExitCodeFor(status);
  };
  if (mode == FileMode::kDelete) {
    if (absl::Status s =
            kind.calls.remove(ctx.client, meta->namespace_(), meta->name());
        !s.ok()) {
      return failed(s);
    }
    *ctx.io.out << resource << " " << Quote(meta->name()) << " deleted\n";
    return kExitOk;
  }
  absl::StatusOr<Applied> applied = kind.calls.apply(
      ctx.client, object,
      {.create_only = mode == FileMode::kCreate, .dry_run = dry_run});
  if (!applied.ok()) return failed(applied.status());
  // jobsetd's warnings, as kubectl prints an API server's Warning headers.
  for (const std::string& warning : applied->warnings) {
    *ctx.io.err << "Warning: " << resource << "/" << applied->name << ": "
                << warning << "\n";
  }
  const char* what = "";
  switch (applied->outcome) {
    case Applied::kAlreadyExists:
      *ctx.io.err << "error: " << resource << " " << Quote(applied->name)
                  << " already exists\n";
      return kExitApiError;
    case Applied::kCreated:
      what = " created";
      break;
    case Applied::kConfigured:
      what = " configured";
      break;
    case Applied::kUnchanged:
      what = " unchanged";
      break;
  }
  *ctx.io.out << resource << "/" << applied->name << what
              << (!dry_run        ? ""
                  : applied->sent ? " (dry run)"
                                  : " (dry run, not sent)")
              << "\n";
  return kExitOk;
}

int Apply(const Context& ctx) { return ApplyFile(ctx, FileMode::kApply); }

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
      return Fail(ctx,
                  absl::NotFoundError(absl::StrCat("cannot read ", Quote(file),
                                                   ": ", strerror(errno))));
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
  // Document number -> the other objects, read (and Namespaces, Secrets and
  // ConfigMaps checked) before anything is sent.
  std::map<int, Document> ordered;
  auto take = [&](const RbacDocument& doc, auto parsed,
                  std::vector<std::string> warnings = {}) {
    if (!parsed.ok()) {
      *ctx.io.err << "error: " << shown << ": manifest document "
                  << doc.document << ": " << parsed.status().message() << "\n";
      return false;
    }
    using T = std::decay_t<decltype(*parsed)>;
    const KindInfo* kind = nullptr;
    if constexpr (std::is_same_v<T, api::RbacObject>) {
      kind = FindKindOfManifest(parsed->has_role() ? parsed->role().kind()
                                                   : parsed->binding().kind());
    } else if constexpr (std::is_same_v<T, api::KueueObject>) {
      kind = FindKindOfManifest(KueueKind(*parsed));
    } else if constexpr (std::is_same_v<T, api::Namespace>) {
      kind = &KindNamed("namespaces");
    } else if constexpr (std::is_same_v<T, api::Secret>) {
      kind = &KindNamed("secrets");
    } else {
      kind = &KindNamed("configmaps");
    }
    if (kind == nullptr) {
      *ctx.io.err << "error: " << shown << ": manifest document "
                  << doc.document << ": no kind jobsetctl knows\n";
      return false;
    }
    ordered[doc.document] = MakeDocument(kind, *std::move(parsed));
    ordered[doc.document].warnings = std::move(warnings);
    return true;
  };
  for (const RbacDocument& doc : split.rbac) {
    if (!take(doc, api::ParseRbacDocument(doc.text))) return kExitApiError;
  }
  for (const RbacDocument& doc : split.namespaces) {
    absl::StatusOr<api::Namespace> ns = api::ParseNamespaceDocument(doc.text);
    if (ns.ok() && mode != FileMode::kDelete) {
      if (absl::Status s = api::ValidateNamespace(*ns); !s.ok()) ns = s;
    }
    if (!take(doc, std::move(ns))) return kExitApiError;
  }
  // Secrets and ConfigMaps: normalized (stringData into data) and checked
  // here, so that a bad one fails the file before anything is sent.
  for (const RbacDocument& doc : split.secrets) {
    absl::StatusOr<api::Secret> secret = api::ParseSecretDocument(doc.text);
    if (secret.ok()) secret = api::NormalizeSecret(*std::move(secret));
    if (secret.ok() && mode != FileMode::kDelete) {
      if (absl::Status s = Validate(ctx, *secret); !s.ok()) secret = s;
    }
    if (!take(doc, std::move(secret))) return kExitApiError;
  }
  for (const RbacDocument& doc : split.config_maps) {
    absl::StatusOr<api::ConfigMap> cm = api::ParseConfigMapDocument(doc.text);
    if (cm.ok() && mode != FileMode::kDelete) {
      if (absl::Status s = Validate(ctx, *cm); !s.ok()) cm = s;
    }
    if (!take(doc, std::move(cm))) return kExitApiError;
  }
  // Kueue's objects: defaulted and validated by jobsetd (the shape is
  // checked here, before anything is sent).
  for (const RbacDocument& doc : split.kueue) {
    std::vector<std::string> warnings;
    absl::StatusOr<api::KueueObject> parsed =
        api::ParseKueueDocument(doc.text, &warnings);
    if (!take(doc, std::move(parsed), std::move(warnings))) {
      return kExitApiError;
    }
  }
  if (objects->empty() && ordered.empty()) {
    *ctx.io.err << "error: no objects passed to " << verb << "\n";
    return kExitApiError;
  }
  const bool dry_run = ctx.invocation.Has("dry-run");
  const KindInfo& jobsets = KindNamed("jobsets");
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
          const Context own{ctx.invocation, ctx.client, io, ctx.clock, ctx.ns};
          api::JobSet& jobset = p.object->jobset;
          if (mode != FileMode::kDelete) {
            for (const std::string& warning : p.object->warnings) {
              p.err << "Warning: " << jobsets.Resource() << "/"
                    << jobset.metadata().name() << ": " << warning << "\n";
            }
          }
          p.code = ApplyObject(own, jobsets, jobset, jobset.mutable_metadata(),
                               mode, dry_run);
        },
        [&](int i) {
          *ctx.io.err << wave[i].err.str();
          *ctx.io.out << wave[i].out.str();
          record(wave[i].code);
        });
    wave.clear();
    wave_names.clear();
  };
  // In the file's order: the other objects one at a time, each after every
  // document before it is done (a RoleBinding may name a Role above it);
  // the JobSets between them concurrently, except that a JobSet named again
  // waits for the earlier document of that name (create, then configure).
  auto next = ordered.begin();
  auto flush_ordered_before = [&](int document) {
    if (next == ordered.end() || next->first >= document) return;
    flush_wave();
    for (; next != ordered.end() && next->first < document; ++next) {
      Document& doc = next->second;
      if (mode != FileMode::kDelete) {
        for (const std::string& warning : doc.warnings) {
          *ctx.io.err << "Warning: " << doc.kind->Resource() << "/"
                      << doc.meta->name() << ": " << warning << "\n";
        }
      }
      record(ApplyObject(ctx, *doc.kind, *doc.object, doc.meta, mode, dry_run));
    }
  };
  for (api::ManifestObject& object : *objects) {
    flush_ordered_before(object.document);
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
  flush_ordered_before(std::numeric_limits<int>::max());
  return exit_code;
}

}  // namespace jobset::cli
