#ifndef JOBSET_CLI_CMD_KINDS_H_
#define JOBSET_CLI_CMD_KINDS_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/output.h"
#include "google/protobuf/message.h"

// The one table of the resource kinds jobsetctl knows: their names and
// aliases, scope, API group, the Client calls behind each verb and the
// columns of `get`. Every verb reads it; a new kind is one row (kinds.cc)
// plus its calls.
namespace jobset::cli {

// One object a verb read (a JobSet, Pod, Node, TokenInfo, Role, ...), with
// what every verb needs of it.
struct Object {
  std::shared_ptr<const google::protobuf::Message> message;
  std::string namespace_;  // "" for cluster-scoped kinds.
  std::string name;
  std::string resource_version;
};

// Wraps `item`; its name and namespace come from metadata, or name().
template <typename T>
Object MakeObject(T item) {
  Object object;
  if constexpr (requires { item.metadata(); }) {
    object.namespace_ = item.metadata().namespace_();
    object.name = item.metadata().name();
    object.resource_version = item.metadata().resource_version();
  } else {
    object.name = item.name();
  }
  object.message = std::make_shared<const T>(std::move(item));
  return object;
}

// Returns the objects' messages as T (which they are).
template <typename T>
std::vector<T> MessagesAs(const std::vector<Object>& objects) {
  std::vector<T> items;
  items.reserve(objects.size());
  for (const Object& o : objects) {
    items.push_back(static_cast<const T&>(*o.message));
  }
  return items;
}

// What a list asks for. Each kind's list call uses what applies to it.
struct ListOptions {
  std::string namespace_ = "";  // -n, else the context's.
  bool all_namespaces = false;
  std::string label_selector = "";  // Applied by jobsetd where it can.
  std::string jobset = "";          // --jobset: one JobSet's children.
};

struct ListResult {
  std::vector<Object> items;
  std::string resource_version;
};

// What apply/create -f (and create secret|configmap) ask of an apply call.
struct ApplyOptions {
  bool create_only = false;
  bool dry_run = false;
};

// What an apply call did.
struct Applied {
  enum Outcome { kCreated, kConfigured, kUnchanged, kAlreadyExists };
  Outcome outcome = kCreated;
  std::string name;  // As jobsetd named it (generateName).
  std::vector<std::string> warnings;
  bool sent = true;  // False: a dry run answered without asking jobsetd.
};

// The Client calls behind the verbs; null where a kind lacks the verb.
struct KindCalls {
  // get NAME, describe: one object by namespace (ignored when cluster-
  // scoped) and name.
  absl::StatusOr<Object> (*get)(Client&, const std::string& ns,
                                const std::string& name) = nullptr;
  // get: every object the options select (all pages).
  absl::StatusOr<ListResult> (*list)(Client&, const ListOptions&) = nullptr;
  // get -w: jobsetd's watch from `resource_version` until `on_event`
  // returns false or `deadline`; events are "ADDED", "MODIFIED", "DELETED".
  absl::Status (*watch)(
      Client&, const ListOptions&, const std::string& resource_version,
      absl::Time deadline,
      const std::function<bool(const std::string& type, const Object&)>&
          on_event) = nullptr;
  // apply|create -f: `object` is the manifest's message (api::JobSet,
  // api::RbacObject, api::Namespace, api::Secret, api::ConfigMap).
  absl::StatusOr<Applied> (*apply)(Client&,
                                   const google::protobuf::Message& object,
                                   const ApplyOptions&) = nullptr;
  // delete NAME, delete -f.
  absl::Status (*remove)(Client&, const std::string& ns,
                         const std::string& name) = nullptr;
  // describe NAME: the text kubectl describe prints.
  absl::StatusOr<std::string> (*describe)(Client&, const std::string& ns,
                                          const std::string& name,
                                          absl::Time now) = nullptr;
};

// What `get` accepts for a kind.
struct GetSupport {
  // --field-selector's fields (applied to the objects' JSON); none: the
  // flag is refused.
  std::vector<std::string> fields = {};
  bool selectors = true;       // -l and --field-selector at all.
  bool by_name = true;         // get KIND NAME.
  bool all_namespaces = true;  // -A (cluster-scoped kinds ignore it).
  bool by_jobset = false;      // --jobset NAME.
  bool poll_watch = false;     // -w by listing every second (no watch call).
};

// One row of the table. Plain data, immutable once built: thread-safe.
struct KindInfo {
  std::string plural = {};    // Canonical: "jobsets".
  std::string singular = {};  // "jobset".
  // Short names and group-qualified names, as kubectl accepts them: "js",
  // "jobsets.jobset.x-k8s.io" (matched case-insensitively, as are plural
  // and singular).
  std::vector<std::string> aliases = {};
  bool namespaced = true;
  // The API group in kubectl's resource names ("jobset.x-k8s.io", "batch";
  // "" for the core group).
  std::string group = {};
  // -o json|yaml: "jobset.x-k8s.io/v1alpha2" and "JobSet" ("" for kinds
  // jobsetd has no Kubernetes shape for: tokens).
  std::string api_version = {};
  std::string kind = {};
  GetSupport get = {};
  KindCalls calls = {};
  // get's table (the header first); `wide` for -o wide.
  std::vector<Row> (*rows)(const std::vector<Object>&, absl::Time now,
                           bool wide) = nullptr;

  // kubectl's name for one object's kind: "jobset.jobset.x-k8s.io", "pod"
  // (as in `-o name` and "... deleted").
  std::string Resource() const;
  // The plural with its group: "jobs.batch", "pods" (as in "not found").
  std::string GroupResource() const;
};

// Returns the table, in the order kinds are listed to users.
const std::vector<KindInfo>& Kinds();

// Returns the kind a user's word names (plural, singular, alias; any case),
// or null.
const KindInfo* FindKind(absl::string_view name);

// Returns the kind whose manifests say `kind` ("Role"), or null.
const KindInfo* FindKindOfManifest(absl::string_view kind);

// Returns the row of `plural`, which must be in the table.
const KindInfo& KindNamed(absl::string_view plural);

// The kinds `has` holds for, as "a, b and c" (`last` joins the last two).
std::string KindList(const std::function<bool(const KindInfo&)>& has,
                     absl::string_view last = "and");

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_KINDS_H_
