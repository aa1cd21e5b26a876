#include "api/template_validation.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "api/capabilities.h"
#include "api/config_objects.h"
#include "api/image_reference.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "api/quantity.h"
#include "common/quote.h"

// The checks and messages follow Kubernetes' own validation of a Job
// (pkg/apis/batch/validation) and its pod template (pkg/apis/core/validation),
// restricted to the fields jobsetd keeps. Values Kubernetes would default
// before validating (an empty restartPolicy, completionMode, protocol, probe
// scheme, ...) are accepted as they are. Where jobsetd is stricter than
// Kubernetes (absolute host and mount paths, probe port names, Gt/Lt
// integers, emptyDir media, FailIndex), a comment at the check says so.

namespace jobset::api {
namespace {

using ::google::protobuf::RepeatedPtrField;

constexpr int64_t kMaxParallelismForIndexedJob = 100000;
constexpr int kMaxPodFailurePolicyRules = 20;
constexpr int kMaxOnExitCodesValues = 255;
constexpr int kMaxOnPodConditionsPatterns = 20;
constexpr int kMaxPortNameLength = 15;

constexpr absl::string_view kNonNegative = "must be greater than or equal to 0";
constexpr absl::string_view kPortRange =
    "must be between 1 and 65535, inclusive";

constexpr absl::string_view kCompletionModes[] = {"NonIndexed", "Indexed"};
constexpr absl::string_view kJobRestartPolicies[] = {"OnFailure", "Never"};
constexpr absl::string_view kPodFailurePolicyActions[] = {"Count", "FailJob",
                                                          "Ignore"};
constexpr absl::string_view kOnExitCodesOperators[] = {"In", "NotIn"};
constexpr absl::string_view kConditionStatuses[] = {"False", "True", "Unknown"};
constexpr absl::string_view kPortProtocols[] = {"SCTP", "TCP", "UDP"};
constexpr absl::string_view kStandardContainerResources[] = {
    "cpu", "ephemeral-storage", "memory"};
constexpr absl::string_view kHostPathTypes[] = {
    "",       "DirectoryOrCreate", "Directory",  "FileOrCreate", "File",
    "Socket", "CharDevice",        "BlockDevice"};
constexpr absl::string_view kEmptyDirMedia[] = {"", "Memory"};
constexpr absl::string_view kHttpSchemes[] = {"HTTP", "HTTPS"};
constexpr absl::string_view kProcMountTypes[] = {"Default", "Unmasked"};
constexpr absl::string_view kProfileTypes[] = {"Localhost", "RuntimeDefault",
                                               "Unconfined"};
constexpr absl::string_view kFsGroupChangePolicies[] = {"OnRootMismatch",
                                                        "Always"};
constexpr absl::string_view kSupplementalGroupsPolicies[] = {"Merge", "Strict"};
constexpr int kMaxLocalhostProfileLength = 4095;
constexpr absl::string_view kTolerationOperators[] = {"Equal", "Exists"};
constexpr absl::string_view kTaintEffects[] = {"NoSchedule", "PreferNoSchedule",
                                               "NoExecute"};
// The downward API paths an env var may read (subscripted forms included).
constexpr absl::string_view kEnvFieldPaths[] = {"metadata.name",
                                                "metadata.namespace",
                                                "metadata.uid",
                                                "metadata.labels['<key>']",
                                                "metadata.annotations['<key>']",
                                                "spec.nodeName",
                                                "spec.serviceAccountName",
                                                "status.hostIP",
                                                "status.hostIPs",
                                                "status.podIP",
                                                "status.podIPs"};

// ---------------------------------------------------------------------------
// Shared helpers.

bool IsOneOf(absl::string_view value,
             absl::Span<const absl::string_view> allowed) {
  return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

// Reports every message of a names.h check as an Invalid error for `value`.
void AddInvalid(absl::string_view path, absl::string_view value,
                const std::vector<std::string>& messages, FieldErrors* errors) {
  for (const std::string& message : messages) {
    errors->Invalid(path, value, message);
  }
}

// Kubernetes' "Invalid value" without a value (field.OmitValueType).
void InvalidNoValue(absl::string_view path, absl::string_view detail,
                    FieldErrors* errors) {
  errors->Add(path, absl::StrCat("Invalid value: ", detail));
}

// Kubernetes' field.NotFound.
void NotFound(absl::string_view path, absl::string_view value,
              FieldErrors* errors) {
  errors->Add(path, absl::StrCat("Not found: ", Quote(value)));
}

void CheckNonNegative(int64_t value, absl::string_view path,
                      FieldErrors* errors) {
  if (value < 0) errors->Invalid(path, value, kNonNegative);
}

bool IsValidPortNum(int64_t port) { return port >= 1 && port <= 65535; }

// Checks an IANA_SVC_NAME (RFC 6335), Kubernetes' IsValidPortName: at most 15
// characters of [-a-z0-9], at least one letter, no leading, trailing or
// doubled hyphen.
std::vector<std::string> IsValidPortName(absl::string_view port) {
  std::vector<std::string> problems;
  if (port.size() > kMaxPortNameLength) {
    problems.push_back(absl::StrCat("must be no more than ", kMaxPortNameLength,
                                    " characters"));
  }
  if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) {
        return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
      })) {
    problems.push_back(
        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens "
        "(-)");
  }
  if (std::none_of(port.begin(), port.end(),
                   [](char c) { return absl::ascii_islower(c); })) {
    problems.push_back("must contain at least one letter (a-z)");
  }
  if (absl::StrContains(port, "--")) {
    problems.push_back("must not contain consecutive hyphens");
  }
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    problems.push_back("must not begin or end with a hyphen");
  }
  return problems;
}

// Returns true when a '/'-separated path has a ".." element.
bool HasBacksteps(absl::string_view path) {
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return true;
  }
  return false;
}

// Proto maps iterate in no fixed order; errors are reported in key order.
std::map<absl::string_view, absl::string_view> Sorted(const StringMap& map) {
  std::map<absl::string_view, absl::string_view> sorted;
  for (const auto& [key, value] : map) sorted.emplace(key, value);
  return sorted;
}

// ---------------------------------------------------------------------------
// Metadata.

void ValidateObjectMeta(const ObjectMeta& meta, absl::string_view path,
                        const Limits& limits, FieldErrors* errors) {
  ValidateLabels(meta.labels(), Child(path, "labels"), errors,
                 limits.max_label_bytes);
  ValidateAnnotations(meta.annotations(), Child(path, "annotations"), errors,
                      limits.max_annotation_bytes);
}

// ---------------------------------------------------------------------------
// Job spec.

// Checks the Job's counts, deadline and completion mode.
void ValidateJobSpecFields(const JobSpec& spec, absl::string_view path,
                           FieldErrors* errors) {
  if (spec.has_parallelism()) {
    CheckNonNegative(spec.parallelism(), Child(path, "parallelism"), errors);
  }
  if (spec.has_completions()) {
    CheckNonNegative(spec.completions(), Child(path, "completions"), errors);
  }
  if (spec.has_active_deadline_seconds()) {
    CheckNonNegative(spec.active_deadline_seconds(),
                     Child(path, "activeDeadlineSeconds"), errors);
  }
  if (spec.has_backoff_limit()) {
    CheckNonNegative(spec.backoff_limit(), Child(path, "backoffLimit"), errors);
  }
  const std::string& mode = spec.completion_mode();
  if (!mode.empty() && !IsOneOf(mode, kCompletionModes)) {
    errors->NotSupported(Child(path, "completionMode"), mode, kCompletionModes);
  }
  // JobSet defaults an empty completionMode to Indexed.
  if (mode.empty() || mode == "Indexed") {
    // Kubernetes defaults completions (and parallelism) to 1 only when both
    // are unset, so an Indexed Job that sets parallelism needs completions.
    if (!spec.has_completions() && spec.has_parallelism()) {
      errors->Required(Child(path, "completions"),
                       "when completion mode is Indexed");
    }
    if (spec.has_parallelism() &&
        spec.parallelism() > kMaxParallelismForIndexedJob) {
      errors->Invalid(Child(path, "parallelism"), spec.parallelism(),
                      absl::StrCat("must be less than or equal to ",
                                   kMaxParallelismForIndexedJob,
                                   " when completion mode is Indexed"));
    }
  }
}

// ---------------------------------------------------------------------------
// Pod failure policy.

std::set<std::string> ContainerNames(const PodSpec& pod) {
  std::set<std::string> names;
  for (const Container& c : pod.containers()) names.insert(c.name());
  for (const Container& c : pod.init_containers()) names.insert(c.name());
  return names;
}

void ValidateOnExitCodes(const PodFailurePolicyOnExitCodesRequirement& req,
                         const std::set<std::string>& container_names,
                         absl::string_view path, FieldErrors* errors) {
  const std::string operator_path = Child(path, "operator");
  if (req.operator_().empty()) {
    errors->Required(operator_path, R"(valid values: ["In" "NotIn"])");
  } else if (!IsOneOf(req.operator_(), kOnExitCodesOperators)) {
    errors->NotSupported(operator_path, req.operator_(), kOnExitCodesOperators);
  }
  if (!req.container_name().empty() &&
      !container_names.contains(req.container_name())) {
    errors->Invalid(Child(path, "containerName"), req.container_name(),
                    "must be one of the container or initContainer names in "
                    "the pod template");
  }
  const std::string values_path = Child(path, "values");
  const auto& values = req.values();
  if (values.empty()) {
    InvalidNoValue(values_path, "[]: at least one value is required", errors);
  } else if (values.size() > kMaxOnExitCodesValues) {
    errors->TooMany(values_path, values.size(), kMaxOnExitCodesValues);
  }
  std::set<int32_t> seen;
  for (int j = 0; j < values.size(); ++j) {
    const std::string value_path = Index(values_path, j);
    if (req.operator_() == "In" && values[j] == 0) {
      errors->Invalid(value_path, 0, "must not be 0 for the In operator");
    }
    if (!seen.insert(values[j]).second) {
      errors->Add(value_path, absl::StrCat("Duplicate value: ", values[j]));
    }
  }
  if (!std::is_sorted(values.begin(), values.end())) {
    InvalidNoValue(
        values_path,
        absl::StrCat("[", absl::StrJoin(values, ", "), "]: must be ordered"),
        errors);
  }
}

void ValidateOnPodConditions(
    const RepeatedPtrField<PodFailurePolicyOnPodConditionsPattern>& patterns,
    absl::string_view path, FieldErrors* errors) {
  if (patterns.size() > kMaxOnPodConditionsPatterns) {
    errors->TooMany(path, patterns.size(), kMaxOnPodConditionsPatterns);
  }
  for (int j = 0; j < patterns.size(); ++j) {
    const PodFailurePolicyOnPodConditionsPattern& pattern = patterns[j];
    const std::string pattern_path = Index(path, j);
    const std::string type_path = Child(pattern_path, "type");
    if (pattern.type().empty()) {
      errors->Required(type_path);
    } else {
      AddInvalid(type_path, pattern.type(), IsQualifiedName(pattern.type()),
                 errors);
    }
    // An empty status is defaulted to True.
    if (!pattern.status().empty() &&
        !IsOneOf(pattern.status(), kConditionStatuses)) {
      errors->NotSupported(Child(pattern_path, "status"), pattern.status(),
                           kConditionStatuses);
    }
  }
}

void ValidatePodFailurePolicyRule(const PodFailurePolicyRule& rule,
                                  const std::set<std::string>& container_names,
                                  absl::string_view path, FieldErrors* errors) {
  const std::string action_path = Child(path, "action");
  if (rule.action().empty()) {
    errors->Required(action_path,
                     R"(valid values: ["Count" "FailJob" "Ignore"])");
  } else if (rule.action() == "FailIndex") {
    // Kubernetes accepts FailIndex together with backoffLimitPerIndex, which
    // jobsetd does not implement.
    errors->Forbidden(action_path,
                      "FailIndex requires backoffLimitPerIndex, which is not "
                      "supported");
  } else if (!IsOneOf(rule.action(), kPodFailurePolicyActions)) {
    errors->NotSupported(action_path, rule.action(), kPodFailurePolicyActions);
  }
  const bool has_exit_codes = rule.has_on_exit_codes();
  const bool has_conditions = !rule.on_pod_conditions().empty();
  if (has_exit_codes) {
    ValidateOnExitCodes(rule.on_exit_codes(), container_names,
                        Child(path, "onExitCodes"), errors);
  }
  if (has_conditions) {
    ValidateOnPodConditions(rule.on_pod_conditions(),
                            Child(path, "onPodConditions"), errors);
  }
  if (has_exit_codes && has_conditions) {
    InvalidNoValue(
        path,
        "specifying both OnExitCodes and OnPodConditions is not supported",
        errors);
  } else if (!has_exit_codes && !has_conditions) {
    InvalidNoValue(
        path, "specifying one of OnExitCodes and OnPodConditions is required",
        errors);
  }
}

// Checks spec.podFailurePolicy; `path` is the Job spec's path.
void ValidatePodFailurePolicy(const JobSpec& spec, absl::string_view path,
                              FieldErrors* errors) {
  const std::string rules_path =
      Child(Child(path, "podFailurePolicy"), "rules");
  const auto& rules = spec.pod_failure_policy().rules();
  if (rules.size() > kMaxPodFailurePolicyRules) {
    errors->TooMany(rules_path, rules.size(), kMaxPodFailurePolicyRules);
  }
  const std::set<std::string> container_names =
      ContainerNames(spec.template_().spec());
  for (int i = 0; i < rules.size(); ++i) {
    ValidatePodFailurePolicyRule(rules[i], container_names,
                                 Index(rules_path, i), errors);
  }
}

// Checks the pod restartPolicy against what a Job allows; `path` is the pod
// spec's path. An empty policy is defaulted to OnFailure by JobSet.
void ValidateJobRestartPolicy(const JobSpec& spec, absl::string_view path,
                              FieldErrors* errors) {
  const std::string& policy = spec.template_().spec().restart_policy();
  const std::string policy_path = Child(path, "restartPolicy");
  if (!policy.empty() && !IsOneOf(policy, kJobRestartPolicies)) {
    errors->NotSupported(policy_path, policy, kJobRestartPolicies);
  } else if (spec.has_pod_failure_policy() && policy != "Never") {
    errors->Invalid(policy_path, policy,
                    R"(only "Never" is supported when podFailurePolicy is )"
                    "specified");
  }
}

// ---------------------------------------------------------------------------
// Environment.

// Kubernetes' relaxed env var names: printable ASCII other than '='.
bool IsEnvVarName(absl::string_view name) {
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= ' ' && c <= '~' && c != '='; });
}

// Splits "metadata.labels['key']" into its path and subscript; returns false
// for a path without a subscript (Kubernetes' SplitMaybeSubscriptedPath).
bool SplitSubscriptedPath(absl::string_view field_path, absl::string_view* path,
                          absl::string_view* subscript) {
  if (!absl::ConsumeSuffix(&field_path, "']")) return false;
  const size_t open = field_path.find("['");
  if (open == absl::string_view::npos || open == 0) return false;
  *path = field_path.substr(0, open);
  *subscript = field_path.substr(open + 2);
  return true;
}

void ValidateFieldRef(const ObjectFieldSelector& ref, absl::string_view path,
                      FieldErrors* errors) {
  // An empty apiVersion is defaulted to v1.
  if (!ref.api_version().empty() && ref.api_version() != "v1") {
    errors->NotSupported(Child(path, "apiVersion"), ref.api_version(), {"v1"});
  }
  const std::string field_path_path = Child(path, "fieldPath");
  if (ref.field_path().empty()) {
    errors->Required(field_path_path);
    return;
  }
  absl::string_view base;
  absl::string_view subscript;
  if (SplitSubscriptedPath(ref.field_path(), &base, &subscript)) {
    if (base == "metadata.annotations") {
      AddInvalid(path, subscript,
                 IsQualifiedName(absl::AsciiStrToLower(subscript)), errors);
    } else if (base == "metadata.labels") {
      AddInvalid(path, subscript, IsQualifiedName(subscript), errors);
    } else {
      errors->Invalid(path, base, "does not support subscript");
    }
  } else if (!IsOneOf(ref.field_path(), kEnvFieldPaths)) {
    errors->NotSupported(field_path_path, ref.field_path(), kEnvFieldPaths);
  }
}

// Kubernetes' IsEnvVarName (without RelaxedEnvironmentVariableValidation),
// for envFrom's prefix: [-._a-zA-Z][-._a-zA-Z0-9]*. Stricter than the
// relaxed rule jobsetd applies to env names: a prefix is put before keys,
// and jobsetd skips keys that would not make such a name (as kubelet did).
constexpr absl::string_view kEnvVarNameMessage = kStrictEnvVarNameMessage;

// Checks a configMapKeyRef or secretKeyRef (Kubernetes'
// validateConfigMapKeySelector / validateSecretKeySelector).
void ValidateKeySelector(absl::string_view name, absl::string_view key,
                         absl::string_view path, FieldErrors* errors) {
  AddInvalid(Child(path, "name"), name, IsDns1123Subdomain(name), errors);
  if (key.empty()) {
    errors->Required(Child(path, "key"));
  } else {
    AddInvalid(Child(path, "key"), key, IsConfigKey(key), errors);
  }
}

void ValidateEnv(const RepeatedPtrField<EnvVar>& env, absl::string_view path,
                 FieldErrors* errors) {
  for (int i = 0; i < env.size(); ++i) {
    const EnvVar& var = env[i];
    const std::string var_path = Index(path, i);
    const std::string name_path = Child(var_path, "name");
    if (var.name().empty()) {
      errors->Required(name_path);
    } else if (!IsEnvVarName(var.name())) {
      errors->Invalid(name_path, var.name(),
                      "a valid environment variable name must consist only of "
                      "printable ASCII characters other than '='");
    }
    if (!var.has_value_from()) continue;
    const std::string from_path = Child(var_path, "valueFrom");
    const EnvVarSource& from = var.value_from();
    const int sources = from.has_field_ref() + from.has_config_map_key_ref() +
                        from.has_secret_key_ref();
    if (from.has_field_ref()) {
      ValidateFieldRef(from.field_ref(), Child(from_path, "fieldRef"), errors);
    }
    if (from.has_config_map_key_ref()) {
      ValidateKeySelector(from.config_map_key_ref().name(),
                          from.config_map_key_ref().key(),
                          Child(from_path, "configMapKeyRef"), errors);
    }
    if (from.has_secret_key_ref()) {
      ValidateKeySelector(from.secret_key_ref().name(),
                          from.secret_key_ref().key(),
                          Child(from_path, "secretKeyRef"), errors);
    }
    if (sources == 0) {
      errors->Invalid(from_path, "",
                      "must specify one of: `fieldRef`, `resourceFieldRef`, "
                      "`configMapKeyRef` or `secretKeyRef`");
    } else if (!var.value().empty()) {
      errors->Invalid(from_path, "",
                      "may not be specified when `value` is not empty");
    } else if (sources > 1) {
      errors->Invalid(from_path, "",
                      "may not have more than one field specified at a time");
    }
  }
}

// Checks the name of a ConfigMap or Secret an env var, envFrom or volume
// refers to: a DNS-1123 subdomain (Kubernetes' ValidateConfigMapName and
// ValidateSecretName).
void ValidateObjectName(absl::string_view name, absl::string_view path,
                        FieldErrors* errors) {
  AddInvalid(path, name, IsDns1123Subdomain(name), errors);
}

void ValidateEnvFrom(const RepeatedPtrField<EnvFromSource>& env_from,
                     absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < env_from.size(); ++i) {
    const EnvFromSource& source = env_from[i];
    const std::string source_path = Index(path, i);
    if (!source.prefix().empty() && !IsStrictEnvVarName(source.prefix())) {
      errors->Invalid(Child(source_path, "prefix"), source.prefix(),
                      kEnvVarNameMessage);
    }
    for (const auto& [has, name, field] :
         {std::make_tuple(source.has_config_map_ref(),
                          &source.config_map_ref().name(), "configMapRef"),
          std::make_tuple(source.has_secret_ref(), &source.secret_ref().name(),
                          "secretRef")}) {
      if (!has) continue;
      const std::string name_path = Child(Child(source_path, field), "name");
      if (name->empty()) {
        errors->Required(name_path);
      } else {
        ValidateObjectName(*name, name_path, errors);
      }
    }
    const int sources = source.has_config_map_ref() + source.has_secret_ref();
    // Kubernetes names the list, not the entry, here.
    if (sources == 0) {
      errors->Invalid(path, "",
                      "must specify one of: `configMapRef` or "
                      "`secretRef`");
    } else if (sources > 1) {
      errors->Invalid(path, "",
                      "may not have more than one field specified at a time");
    }
  }
}

// ---------------------------------------------------------------------------
// Resources.

bool IsHugePagesResource(absl::string_view name) {
  return absl::StartsWith(name, "hugepages-");
}

// cpu, memory, ... and kubernetes.io/-prefixed names.
bool IsNativeResource(absl::string_view name) {
  return !absl::StrContains(name, '/') ||
         absl::StrContains(name, "kubernetes.io/");
}

// Domain-prefixed resources outside kubernetes.io, e.g. nvidia.com/gpu.
bool IsExtendedResource(absl::string_view name) {
  return !IsNativeResource(name) && !absl::StartsWith(name, "requests.") &&
         IsQualifiedName(absl::StrCat("requests.", name)).empty();
}

// Requests of these may be below their limits.
bool IsOvercommitAllowed(absl::string_view name) {
  return IsNativeResource(name) && !IsHugePagesResource(name);
}

void ValidateResourceName(absl::string_view name, absl::string_view path,
                          FieldErrors* errors) {
  const std::vector<std::string> problems = IsQualifiedName(name);
  if (!problems.empty()) {
    AddInvalid(path, name, problems, errors);
  } else if (!absl::StrContains(name, '/')) {
    if (!IsOneOf(name, kStandardContainerResources) &&
        !IsHugePagesResource(name)) {
      errors->Invalid(path, name, "must be a standard resource for containers");
    }
  } else if (!IsNativeResource(name) && !IsExtendedResource(name)) {
    errors->Invalid(path, name,
                    "doesn't follow extended resource name standard");
  }
}

// Parses and checks one request or limit; returns it when it parses.
std::optional<Quantity> ValidateResourceQuantity(absl::string_view name,
                                                 absl::string_view text,
                                                 absl::string_view path,
                                                 FieldErrors* errors) {
  absl::StatusOr<Quantity> quantity = ParseQuantity(text);
  if (!quantity.ok()) {
    errors->Invalid(path, text, quantity.status().message());
    return std::nullopt;
  }
  if (*quantity < Quantity()) {
    errors->Invalid(path, text, kNonNegative);
  } else if (IsExtendedResource(name) && quantity->MilliValue() % 1000 != 0) {
    errors->Invalid(path, text, "must be an integer");
  }
  return *quantity;
}

void ValidateResources(const ResourceRequirements& resources,
                       absl::string_view path, FieldErrors* errors) {
  const std::string limits_path = Child(path, "limits");
  const std::string requests_path = Child(path, "requests");
  std::map<absl::string_view, Quantity> limits;
  for (const auto& [name, text] : Sorted(resources.limits())) {
    const std::string limit_path = Key(limits_path, name);
    ValidateResourceName(name, limit_path, errors);
    if (std::optional<Quantity> limit =
            ValidateResourceQuantity(name, text, limit_path, errors)) {
      limits.emplace(name, *limit);
    }
  }
  for (const auto& [name, text] : Sorted(resources.requests())) {
    const std::string request_path = Key(requests_path, name);
    ValidateResourceName(name, request_path, errors);
    const std::optional<Quantity> request =
        ValidateResourceQuantity(name, text, request_path, errors);
    const auto limit_text = resources.limits().find(std::string(name));
    if (limit_text == resources.limits().end()) {
      if (!IsOvercommitAllowed(name)) {
        errors->Required(Key(limits_path, name),
                         "Limit must be set for non overcommitable resources");
      }
      continue;
    }
    const auto limit = limits.find(name);
    if (!request.has_value() || limit == limits.end()) continue;
    if (!IsOvercommitAllowed(name) && *request != limit->second) {
      errors->Invalid(request_path, text,
                      absl::StrCat("must be equal to ", name, " limit of ",
                                   limit_text->second));
    } else if (*request > limit->second) {
      errors->Invalid(request_path, text,
                      absl::StrCat("must be less than or equal to ", name,
                                   " limit of ", limit_text->second));
    }
  }
}

// ---------------------------------------------------------------------------
// Ports.

// Returns "<containers>[i].ports[j].hostPort".
std::string HostPortPath(absl::string_view containers_path, int i, int j) {
  return Child(Index(Child(Index(containers_path, i), "ports"), j), "hostPort");
}

void ValidatePorts(const RepeatedPtrField<ContainerPort>& ports,
                   absl::string_view path, FieldErrors* errors) {
  std::set<absl::string_view> names;
  for (int i = 0; i < ports.size(); ++i) {
    const ContainerPort& port = ports[i];
    const std::string port_path = Index(path, i);
    if (!port.name().empty()) {
      const std::string name_path = Child(port_path, "name");
      const std::vector<std::string> problems = IsValidPortName(port.name());
      if (!problems.empty()) {
        AddInvalid(name_path, port.name(), problems, errors);
      } else if (!names.insert(port.name()).second) {
        errors->Duplicate(name_path, port.name());
      }
    }
    const std::string container_port_path = Child(port_path, "containerPort");
    if (port.container_port() == 0) {
      errors->Required(container_port_path);
    } else if (!IsValidPortNum(port.container_port())) {
      errors->Invalid(container_port_path, port.container_port(), kPortRange);
    }
    if (port.host_port() != 0 && !IsValidPortNum(port.host_port())) {
      errors->Invalid(Child(port_path, "hostPort"), port.host_port(),
                      kPortRange);
    }
    // An empty protocol is defaulted to TCP.
    if (!port.protocol().empty() && !IsOneOf(port.protocol(), kPortProtocols)) {
      errors->NotSupported(Child(port_path, "protocol"), port.protocol(),
                           kPortProtocols);
    }
  }
}

// With hostNetwork, a container's hostPorts must equal its containerPorts
// (Kubernetes defaults an unset hostPort to the containerPort).
void ValidateHostNetworkPorts(const RepeatedPtrField<Container>& containers,
                              absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < containers.size(); ++i) {
    const auto& ports = containers[i].ports();
    for (int j = 0; j < ports.size(); ++j) {
      if (ports[j].host_port() != 0 &&
          ports[j].host_port() != ports[j].container_port()) {
        errors->Invalid(
            HostPortPath(path, i, j), ports[j].host_port(),
            "must match `containerPort` when `hostNetwork` is true");
      }
    }
  }
}

// Checks host ports across the pod: with hostNetwork they must equal the
// container ports, and no two app containers may bind the same host port.
// `path` is the pod spec's path.
void ValidateHostPorts(const PodSpec& pod, absl::string_view path,
                       FieldErrors* errors) {
  const std::string containers_path = Child(path, "containers");
  if (pod.host_network()) {
    ValidateHostNetworkPorts(pod.containers(), containers_path, errors);
    ValidateHostNetworkPorts(pod.init_containers(),
                             Child(path, "initContainers"), errors);
  }
  std::set<std::string> bound;
  for (int i = 0; i < pod.containers_size(); ++i) {
    const auto& ports = pod.containers(i).ports();
    for (int j = 0; j < ports.size(); ++j) {
      const ContainerPort& port = ports[j];
      const int32_t host_port = pod.host_network() && port.host_port() == 0
                                    ? port.container_port()
                                    : port.host_port();
      if (host_port == 0) continue;
      const std::string key =
          absl::StrCat(port.protocol().empty() ? "TCP" : port.protocol(), "/",
                       port.host_ip(), "/", host_port);
      if (!bound.insert(key).second) {
        errors->Duplicate(HostPortPath(containers_path, i, j), key);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Volumes.

// Checks a hostPath source. Kubernetes only forbids "..": jobsetd mounts the
// path from the host as it is, so it must also be absolute.
void ValidateHostPath(const HostPathVolumeSource& host_path,
                      absl::string_view path, FieldErrors* errors) {
  const std::string path_path = Child(path, "path");
  if (host_path.path().empty()) {
    errors->Required(path_path);
  } else if (!absl::StartsWith(host_path.path(), "/")) {
    errors->Invalid(path_path, host_path.path(), "must be an absolute path");
  }
  if (HasBacksteps(host_path.path())) {
    errors->Invalid(path_path, host_path.path(), "must not contain '..'");
  }
  if (!IsOneOf(host_path.type(), kHostPathTypes)) {
    errors->NotSupported(Child(path, "type"), host_path.type(), kHostPathTypes);
  }
}

// Checks an emptyDir source. jobsetd backs it by a directory or by tmpfs
// ("Memory"); Kubernetes' HugePages media are not supported.
void ValidateEmptyDir(const EmptyDirVolumeSource& empty_dir,
                      absl::string_view path, FieldErrors* errors) {
  if (!IsOneOf(empty_dir.medium(), kEmptyDirMedia)) {
    errors->NotSupported(Child(path, "medium"), empty_dir.medium(),
                         kEmptyDirMedia);
  }
  if (empty_dir.size_limit().empty()) return;
  const std::string size_path = Child(path, "sizeLimit");
  absl::StatusOr<Quantity> size = ParseQuantity(empty_dir.size_limit());
  if (!size.ok()) {
    errors->Invalid(size_path, empty_dir.size_limit(), size.status().message());
  } else if (*size < Quantity()) {
    errors->Forbidden(size_path,
                      "SizeLimit field must be a valid resource quantity");
  }
}

constexpr absl::string_view kFileModeMessage =
    "must be a number between 0 and 0777 (octal), both inclusive";

void CheckFileMode(int32_t mode, absl::string_view path, FieldErrors* errors) {
  if (mode < 0 || mode > 0777) errors->Invalid(path, mode, kFileModeMessage);
}

// Checks a secret or configMap volume's defaultMode and items (Kubernetes'
// validateKeyToPath and ValidateLocalNonReservedPath).
void ValidateProjection(const RepeatedPtrField<KeyToPath>& items,
                        bool has_default_mode, int32_t default_mode,
                        absl::string_view path, FieldErrors* errors) {
  if (has_default_mode) {
    CheckFileMode(default_mode, Child(path, "defaultMode"), errors);
  }
  const std::string items_path = Child(path, "items");
  for (int i = 0; i < items.size(); ++i) {
    const KeyToPath& item = items[i];
    const std::string item_path = Index(items_path, i);
    if (item.key().empty()) errors->Required(Child(item_path, "key"));
    const std::string path_path = Child(item_path, "path");
    if (item.path().empty()) errors->Required(path_path);
    if (absl::StartsWith(item.path(), "/")) {
      errors->Invalid(path_path, item.path(), "must be a relative path");
    }
    if (HasBacksteps(item.path())) {
      errors->Invalid(path_path, item.path(), "must not contain '..'");
    } else if (absl::StartsWith(item.path(), "..")) {
      errors->Invalid(path_path, item.path(), "must not start with '..'");
    }
    if (item.has_mode()) {
      CheckFileMode(item.mode(), Child(item_path, "mode"), errors);
    }
  }
}

void ValidateVolumes(const RepeatedPtrField<Volume>& volumes,
                     absl::string_view path, FieldErrors* errors) {
  std::set<absl::string_view> names;
  for (int i = 0; i < volumes.size(); ++i) {
    const Volume& volume = volumes[i];
    const std::string volume_path = Index(path, i);
    const std::string name_path = Child(volume_path, "name");
    if (volume.name().empty()) {
      errors->Required(name_path);
    } else {
      AddInvalid(name_path, volume.name(), IsDns1123Label(volume.name()),
                 errors);
      if (!names.insert(volume.name()).second) {
        errors->Duplicate(name_path, volume.name());
      }
    }
    // Kubernetes' validateVolumeSource: the sources in its order, the
    // first one set is checked and every further one is Forbidden.
    int sources = 0;
    auto one = [&](bool has, absl::string_view field, auto check) {
      if (!has) return;
      const std::string source_path = Child(volume_path, field);
      if (sources++ > 0) {
        errors->Forbidden(source_path,
                          "may not specify more than 1 volume type");
      } else {
        check(source_path);
      }
    };
    one(volume.has_empty_dir(), "emptyDir", [&](const std::string& p) {
      ValidateEmptyDir(volume.empty_dir(), p, errors);
    });
    one(volume.has_host_path(), "hostPath", [&](const std::string& p) {
      ValidateHostPath(volume.host_path(), p, errors);
    });
    one(volume.has_secret(), "secret", [&](const std::string& p) {
      const SecretVolumeSource& secret = volume.secret();
      if (secret.secret_name().empty()) {
        errors->Required(Child(p, "secretName"));
      } else {
        ValidateObjectName(secret.secret_name(), Child(p, "secretName"),
                           errors);
      }
      ValidateProjection(secret.items(), secret.has_default_mode(),
                         secret.default_mode(), p, errors);
    });
    one(volume.has_config_map(), "configMap", [&](const std::string& p) {
      const ConfigMapVolumeSource& config_map = volume.config_map();
      if (config_map.name().empty()) {
        errors->Required(Child(p, "name"));
      } else {
        ValidateObjectName(config_map.name(), Child(p, "name"), errors);
      }
      ValidateProjection(config_map.items(), config_map.has_default_mode(),
                         config_map.default_mode(), p, errors);
    });
    if (sources == 0) {
      errors->Required(volume_path, "must specify a volume type");
    }
  }
}

std::set<std::string> VolumeNames(const PodSpec& pod) {
  std::set<std::string> names;
  for (const Volume& volume : pod.volumes()) names.insert(volume.name());
  return names;
}

// Checks a container's mounts. Kubernetes leaves mountPath syntax to the
// runtime; jobsetd requires an absolute path up front.
void ValidateVolumeMounts(const RepeatedPtrField<VolumeMount>& mounts,
                          const std::set<std::string>& volume_names,
                          absl::string_view path, FieldErrors* errors) {
  std::set<absl::string_view> mount_paths;
  for (int i = 0; i < mounts.size(); ++i) {
    const VolumeMount& mount = mounts[i];
    const std::string mount_path = Index(path, i);
    const std::string name_path = Child(mount_path, "name");
    if (mount.name().empty()) {
      errors->Required(name_path);
    } else if (!volume_names.contains(mount.name())) {
      NotFound(name_path, mount.name(), errors);
    }
    const std::string mount_path_path = Child(mount_path, "mountPath");
    if (mount.mount_path().empty()) {
      errors->Required(mount_path_path);
    } else if (!absl::StartsWith(mount.mount_path(), "/")) {
      errors->Invalid(mount_path_path, mount.mount_path(),
                      "must be an absolute path");
    } else if (!mount_paths.insert(mount.mount_path()).second) {
      errors->Invalid(mount_path_path, mount.mount_path(), "must be unique");
    }
    if (mount.sub_path().empty()) continue;
    const std::string sub_path_path = Child(mount_path, "subPath");
    if (absl::StartsWith(mount.sub_path(), "/")) {
      errors->Invalid(sub_path_path, mount.sub_path(),
                      "must be a relative path");
    }
    if (HasBacksteps(mount.sub_path())) {
      errors->Invalid(sub_path_path, mount.sub_path(), "must not contain '..'");
    }
  }
}

// ---------------------------------------------------------------------------
// Probes.

// Checks a probe's port: a number in 1..65535 or the name of one of the
// container's ports (Kubernetes checks only the name's syntax and fails the
// probe at run time; jobsetd resolves it at admission).
void ValidateProbePort(absl::string_view port, const Container& container,
                       absl::string_view path, FieldErrors* errors) {
  if (port.empty()) {
    errors->Required(path);
    return;
  }
  int64_t number = 0;
  if (absl::SimpleAtoi(port, &number)) {
    if (!IsValidPortNum(number)) errors->Invalid(path, number, kPortRange);
    return;
  }
  const std::vector<std::string> problems = IsValidPortName(port);
  if (!problems.empty()) {
    AddInvalid(path, port, problems, errors);
    return;
  }
  const auto& ports = container.ports();
  if (std::none_of(ports.begin(), ports.end(), [port](const ContainerPort& p) {
        return p.name() == port;
      })) {
    errors->Invalid(path, port, "must be the name of a port of the container");
  }
}

// Kubernetes' IsHTTPHeaderName: [-A-Za-z0-9]+.
bool IsHttpHeaderName(absl::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-';
  });
}

void ValidateHttpGet(const HTTPGetAction& http, const Container& container,
                     absl::string_view path, FieldErrors* errors) {
  ValidateProbePort(http.port(), container, Child(path, "port"), errors);
  // An empty scheme is defaulted to HTTP, an empty path to "/".
  if (!http.scheme().empty() && !IsOneOf(http.scheme(), kHttpSchemes)) {
    errors->NotSupported(Child(path, "scheme"), http.scheme(), kHttpSchemes);
  }
  for (const HTTPHeader& header : http.http_headers()) {
    if (!IsHttpHeaderName(header.name())) {
      errors->Invalid(Child(path, "httpHeaders"), header.name(),
                      "a valid HTTP header must consist of alphanumeric "
                      "characters or '-' (e.g. 'X-Header-Name', regex used "
                      "for validation is '[-A-Za-z0-9]+')");
    }
  }
}

void ValidateProbe(const Probe& probe, const Container& container,
                   absl::string_view path, FieldErrors* errors) {
  int handlers = 0;
  if (probe.has_exec()) {
    ++handlers;
    if (probe.exec().command().empty()) {
      errors->Required(Child(Child(path, "exec"), "command"));
    }
  }
  if (probe.has_http_get()) {
    if (handlers++ > 0) {
      errors->Forbidden(Child(path, "httpGet"),
                        "may not specify more than 1 handler type");
    } else {
      ValidateHttpGet(probe.http_get(), container, Child(path, "httpGet"),
                      errors);
    }
  }
  if (probe.has_tcp_socket()) {
    if (handlers++ > 0) {
      errors->Forbidden(Child(path, "tcpSocket"),
                        "may not specify more than 1 handler type");
    } else {
      ValidateProbePort(probe.tcp_socket().port(), container,
                        Child(Child(path, "tcpSocket"), "port"), errors);
    }
  }
  if (handlers == 0) errors->Required(path, "must specify a handler type");
  CheckNonNegative(probe.initial_delay_seconds(),
                   Child(path, "initialDelaySeconds"), errors);
  CheckNonNegative(probe.timeout_seconds(), Child(path, "timeoutSeconds"),
                   errors);
  CheckNonNegative(probe.period_seconds(), Child(path, "periodSeconds"),
                   errors);
  CheckNonNegative(probe.success_threshold(), Child(path, "successThreshold"),
                   errors);
  CheckNonNegative(probe.failure_threshold(), Child(path, "failureThreshold"),
                   errors);
}

// ---------------------------------------------------------------------------
// Security contexts (ValidatePodSecurityContext, ValidateSecurityContext).

// Kubernetes' IsValidUserID / IsValidGroupID.
void CheckId(int64_t id, absl::string_view path, FieldErrors* errors) {
  if (id < 0 || id > kMaxUserId) {
    errors->Invalid(
        path, id,
        absl::StrCat("must be between 0 and ", kMaxUserId, ", inclusive"));
  }
}

// A seccomp or AppArmor profile: `kind` is "seccomp" or "AppArmor".
template <typename Profile>
void ValidateProfile(const Profile& profile, absl::string_view kind,
                     absl::string_view path, FieldErrors* errors) {
  const std::string type_path = Child(path, "type");
  const std::string localhost_path = Child(path, "localhostProfile");
  if (profile.type().empty()) {
    errors->Required(type_path, "type is required when profile is set");
  } else if (!IsOneOf(profile.type(), kProfileTypes)) {
    errors->NotSupported(type_path, profile.type(), kProfileTypes);
  }
  if (profile.type() == "Localhost") {
    if (profile.localhost_profile().empty()) {
      errors->Required(localhost_path, absl::StrCat("must be set when ", kind,
                                                    " type is Localhost"));
    } else if (profile.localhost_profile().size() >
               kMaxLocalhostProfileLength) {
      errors->TooLong(localhost_path, kMaxLocalhostProfileLength);
    }
    // jobsetd is stricter: the profile is a path relative to the node's
    // profile directory, so it may not climb out of it.
    if (absl::StartsWith(profile.localhost_profile(), "/") ||
        HasBacksteps(profile.localhost_profile())) {
      errors->Invalid(localhost_path, profile.localhost_profile(),
                      "must be a relative path without '..'");
    }
  } else if (!profile.localhost_profile().empty()) {
    errors->Invalid(
        localhost_path, profile.localhost_profile(),
        absl::StrCat("can only be set when ", kind, " type is Localhost"));
  }
}

// Capability names: jobsetd is stricter than Kubernetes (which takes any
// string): a name must be a Linux capability, with or without "CAP_", or
// "ALL".
void ValidateCapabilityNames(const RepeatedPtrField<std::string>& names,
                             absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < names.size(); ++i) {
    if (names[i] == "ALL" || CapabilityNumber(names[i]).has_value()) continue;
    errors->Invalid(Index(path, i), names[i],
                    "must be a Linux capability name (e.g. NET_ADMIN or "
                    "CAP_NET_ADMIN) or ALL");
  }
}

void ValidatePodSecurityContext(const PodSecurityContext& sc,
                                absl::string_view path, FieldErrors* errors) {
  if (sc.has_run_as_user()) {
    CheckId(sc.run_as_user(), Child(path, "runAsUser"), errors);
  }
  if (sc.has_run_as_group()) {
    CheckId(sc.run_as_group(), Child(path, "runAsGroup"), errors);
  }
  if (sc.has_fs_group()) CheckId(sc.fs_group(), Child(path, "fsGroup"), errors);
  const std::string groups_path = Child(path, "supplementalGroups");
  for (int i = 0; i < sc.supplemental_groups_size(); ++i) {
    CheckId(sc.supplemental_groups(i), Index(groups_path, i), errors);
  }
  if (!sc.fs_group_change_policy().empty() &&
      !IsOneOf(sc.fs_group_change_policy(), kFsGroupChangePolicies)) {
    errors->NotSupported(Child(path, "fsGroupChangePolicy"),
                         sc.fs_group_change_policy(), kFsGroupChangePolicies);
  }
  if (!sc.supplemental_groups_policy().empty() &&
      !IsOneOf(sc.supplemental_groups_policy(), kSupplementalGroupsPolicies)) {
    errors->NotSupported(Child(path, "supplementalGroupsPolicy"),
                         sc.supplemental_groups_policy(),
                         kSupplementalGroupsPolicies);
  }
  if (sc.has_seccomp_profile()) {
    ValidateProfile(sc.seccomp_profile(), "seccomp",
                    Child(path, "seccompProfile"), errors);
  }
  if (sc.has_app_armor_profile()) {
    ValidateProfile(sc.app_armor_profile(), "AppArmor",
                    Child(path, "appArmorProfile"), errors);
  }
  const std::string sysctls_path = Child(path, "sysctls");
  std::set<std::string> sysctl_names;
  for (int i = 0; i < sc.sysctls_size(); ++i) {
    const std::string name_path = Child(Index(sysctls_path, i), "name");
    const std::string& name = sc.sysctls(i).name();
    if (name.empty()) {
      errors->Required(name_path);
    } else if (!sysctl_names.insert(name).second) {
      errors->Duplicate(name_path, name);
    }
  }
}

void ValidateSecurityContext(const SecurityContext& sc, absl::string_view path,
                             FieldErrors* errors) {
  if (sc.has_run_as_user()) {
    CheckId(sc.run_as_user(), Child(path, "runAsUser"), errors);
  }
  if (sc.has_run_as_group()) {
    CheckId(sc.run_as_group(), Child(path, "runAsGroup"), errors);
  }
  if (!sc.proc_mount().empty() && !IsOneOf(sc.proc_mount(), kProcMountTypes)) {
    errors->NotSupported(Child(path, "procMount"), sc.proc_mount(),
                         kProcMountTypes);
  }
  const std::string caps_path = Child(path, "capabilities");
  ValidateCapabilityNames(sc.capabilities().add(), Child(caps_path, "add"),
                          errors);
  ValidateCapabilityNames(sc.capabilities().drop(), Child(caps_path, "drop"),
                          errors);
  if (sc.has_seccomp_profile()) {
    ValidateProfile(sc.seccomp_profile(), "seccomp",
                    Child(path, "seccompProfile"), errors);
  }
  if (sc.has_app_armor_profile()) {
    ValidateProfile(sc.app_armor_profile(), "AppArmor",
                    Child(path, "appArmorProfile"), errors);
  }
  if (sc.has_allow_privilege_escalation() && !sc.allow_privilege_escalation()) {
    if (sc.privileged()) {
      InvalidNoValue(path,
                     "cannot set `allowPrivilegeEscalation` to false and "
                     "`privileged` to true",
                     errors);
    }
    for (const std::string& cap : sc.capabilities().add()) {
      if (cap == "CAP_SYS_ADMIN" || cap == "SYS_ADMIN") {
        InvalidNoValue(path,
                       "cannot set `allowPrivilegeEscalation` to false and "
                       "`capabilities.Add` CAP_SYS_ADMIN",
                       errors);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Containers.

// Checks what app and init containers share; names are checked for
// uniqueness by the caller.
void ValidateContainer(const Container& container,
                       const std::set<std::string>& volume_names,
                       absl::string_view path, FieldErrors* errors) {
  const std::string name_path = Child(path, "name");
  if (container.name().empty()) {
    errors->Required(name_path);
  } else {
    AddInvalid(name_path, container.name(), IsDns1123Label(container.name()),
               errors);
  }
  if (container.image().empty()) {
    errors->Required(Child(path, "image"));
  } else if (absl::StripAsciiWhitespace(container.image()) !=
             container.image()) {
    errors->Invalid(Child(path, "image"), container.image(),
                    "must not have leading or trailing whitespace");
  }
  if (const std::string& policy = container.image_pull_policy();
      !policy.empty() && !IsOneOf(policy, kPullPolicies)) {
    errors->NotSupported(Child(path, "imagePullPolicy"), policy, kPullPolicies);
  }
  ValidatePorts(container.ports(), Child(path, "ports"), errors);
  ValidateEnvFrom(container.env_from(), Child(path, "envFrom"), errors);
  ValidateEnv(container.env(), Child(path, "env"), errors);
  ValidateVolumeMounts(container.volume_mounts(), volume_names,
                       Child(path, "volumeMounts"), errors);
  ValidateResources(container.resources(), Child(path, "resources"), errors);
  if (container.has_security_context()) {
    ValidateSecurityContext(container.security_context(),
                            Child(path, "securityContext"), errors);
  }
}

// Checks containers and initContainers; `path` is the pod spec's path.
void ValidateContainers(const PodSpec& pod, absl::string_view path,
                        FieldErrors* errors) {
  const std::set<std::string> volume_names = VolumeNames(pod);
  // Names are unique across app and init containers.
  std::set<absl::string_view> names;
  const std::string containers_path = Child(path, "containers");
  if (pod.containers().empty()) errors->Required(containers_path);
  for (int i = 0; i < pod.containers_size(); ++i) {
    const Container& container = pod.containers(i);
    const std::string container_path = Index(containers_path, i);
    ValidateContainer(container, volume_names, container_path, errors);
    if (!container.name().empty() && !names.insert(container.name()).second) {
      errors->Duplicate(Child(container_path, "name"), container.name());
    }
    if (container.has_readiness_probe()) {
      ValidateProbe(container.readiness_probe(), container,
                    Child(container_path, "readinessProbe"), errors);
    }
  }
  const std::string init_path = Child(path, "initContainers");
  for (int i = 0; i < pod.init_containers_size(); ++i) {
    const Container& container = pod.init_containers(i);
    const std::string container_path = Index(init_path, i);
    ValidateContainer(container, volume_names, container_path, errors);
    if (!container.name().empty() && !names.insert(container.name()).second) {
      errors->Duplicate(Child(container_path, "name"), container.name());
    }
    if (container.has_readiness_probe()) {
      errors->Forbidden(Child(container_path, "readinessProbe"),
                        "may not be set for init containers");
    }
  }
}

// ---------------------------------------------------------------------------
// Scheduling constraints.

void ValidateNodeSelectorRequirement(const NodeSelectorRequirement& req,
                                     absl::string_view path,
                                     FieldErrors* errors) {
  const std::string values_path = Child(path, "values");
  const std::string& op = req.operator_();
  if (op == "In" || op == "NotIn") {
    if (req.values().empty()) {
      errors->Required(values_path,
                       "must be specified when `operator` is 'In' or 'NotIn'");
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!req.values().empty()) {
      errors->Forbidden(values_path,
                        "may not be specified when `operator` is 'Exists' or "
                        "'DoesNotExist'");
    }
  } else if (op == "Gt" || op == "Lt") {
    int64_t number = 0;
    if (req.values_size() != 1) {
      errors->Required(values_path,
                       "must be specified single value when `operator` is "
                       "'Lt' or 'Gt'");
    } else if (!absl::SimpleAtoi(req.values(0), &number)) {
      // Kubernetes finds this out only when matching nodes.
      errors->Invalid(Index(values_path, 0), req.values(0),
                      "must be an integer");
    }
  } else {
    errors->Invalid(Child(path, "operator"), op,
                    "not a valid selector operator");
  }
  AddInvalid(Child(path, "key"), req.key(), IsQualifiedName(req.key()), errors);
  for (int k = 0; k < req.values_size(); ++k) {
    AddInvalid(Index(values_path, k), req.values(k),
               IsValidLabelValue(req.values(k)), errors);
  }
}

void ValidateNodeAffinity(const Affinity& affinity, absl::string_view path,
                          FieldErrors* errors) {
  const NodeAffinity& node_affinity = affinity.node_affinity();
  if (!node_affinity
           .has_required_during_scheduling_ignored_during_execution()) {
    return;
  }
  const std::string terms_path =
      Child(path,
            "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms");
  const auto& terms =
      node_affinity.required_during_scheduling_ignored_during_execution()
          .node_selector_terms();
  if (terms.empty()) {
    errors->Required(terms_path, "must have at least one node selector term");
  }
  for (int i = 0; i < terms.size(); ++i) {
    const auto& expressions = terms[i].match_expressions();
    for (int j = 0; j < expressions.size(); ++j) {
      ValidateNodeSelectorRequirement(
          expressions[j],
          Index(Child(Index(terms_path, i), "matchExpressions"), j), errors);
    }
  }
}

void ValidateTolerations(const RepeatedPtrField<Toleration>& tolerations,
                         absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < tolerations.size(); ++i) {
    const Toleration& toleration = tolerations[i];
    const std::string toleration_path = Index(path, i);
    const std::string operator_path = Child(toleration_path, "operator");
    const std::string effect_path = Child(toleration_path, "effect");
    if (!toleration.key().empty()) {
      AddInvalid(Child(toleration_path, "key"), toleration.key(),
                 IsQualifiedName(toleration.key()), errors);
    } else if (toleration.operator_() != "Exists") {
      errors->Invalid(operator_path, toleration.operator_(),
                      "operator must be Exists when `key` is empty, which "
                      "means \"match all values and all keys\"");
    }
    if (toleration.has_toleration_seconds() &&
        toleration.effect() != "NoExecute") {
      errors->Invalid(effect_path, toleration.effect(),
                      "effect must be 'NoExecute' when `tolerationSeconds` is "
                      "set");
    }
    // An empty operator means Equal.
    if (toleration.operator_().empty() || toleration.operator_() == "Equal") {
      const std::vector<std::string> problems =
          IsValidLabelValue(toleration.value());
      if (!problems.empty()) {
        errors->Invalid(operator_path, toleration.value(),
                        absl::StrJoin(problems, ";"));
      }
    } else if (toleration.operator_() == "Exists") {
      if (!toleration.value().empty()) {
        errors->Invalid(operator_path, toleration.value(),
                        "value must be empty when `operator` is 'Exists'");
      }
    } else {
      errors->NotSupported(operator_path, toleration.operator_(),
                           kTolerationOperators);
    }
    // An empty effect matches all effects.
    if (!toleration.effect().empty() &&
        !IsOneOf(toleration.effect(), kTaintEffects)) {
      errors->NotSupported(effect_path, toleration.effect(), kTaintEffects);
    }
  }
}

// Checks nodeSelector, node affinity and tolerations; `path` is the pod
// spec's path.
void ValidateSchedulingConstraints(const PodSpec& pod, absl::string_view path,
                                   FieldErrors* errors) {
  ValidateLabels(pod.node_selector(), Child(path, "nodeSelector"), errors);
  if (pod.has_affinity()) {
    ValidateNodeAffinity(pod.affinity(), Child(path, "affinity"), errors);
  }
  ValidateTolerations(pod.tolerations(), Child(path, "tolerations"), errors);
}

// ---------------------------------------------------------------------------
// Pod spec.

// Checks the pod spec except restartPolicy, which depends on the Job.
void ValidatePodSpec(const PodSpec& pod, absl::string_view path,
                     FieldErrors* errors) {
  ValidateVolumes(pod.volumes(), Child(path, "volumes"), errors);
  // Kubernetes only warns about an empty name; jobsetd reads each Secret.
  const std::string pull_path = Child(path, "imagePullSecrets");
  for (int i = 0; i < pod.image_pull_secrets_size(); ++i) {
    const std::string name_path = Child(Index(pull_path, i), "name");
    const std::string& name = pod.image_pull_secrets(i).name();
    if (name.empty()) {
      errors->Required(name_path);
    } else {
      ValidateObjectName(name, name_path, errors);
    }
  }
  ValidateContainers(pod, path, errors);
  if (pod.has_security_context()) {
    ValidatePodSecurityContext(pod.security_context(),
                               Child(path, "securityContext"), errors);
  }
  ValidateHostPorts(pod, path, errors);
  ValidateSchedulingConstraints(pod, path, errors);
  if (pod.has_termination_grace_period_seconds()) {
    CheckNonNegative(pod.termination_grace_period_seconds(),
                     Child(path, "terminationGracePeriodSeconds"), errors);
  }
  if (!pod.hostname().empty()) {
    AddInvalid(Child(path, "hostname"), pod.hostname(),
               IsDns1123Label(pod.hostname()), errors);
  }
  if (!pod.subdomain().empty()) {
    AddInvalid(Child(path, "subdomain"), pod.subdomain(),
               IsDns1123Label(pod.subdomain()), errors);
  }
  if (!pod.priority_class_name().empty()) {
    AddInvalid(Child(path, "priorityClassName"), pod.priority_class_name(),
               IsDns1123Subdomain(pod.priority_class_name()), errors);
  }
  if (!pod.node_name().empty()) {
    AddInvalid(Child(path, "nodeName"), pod.node_name(),
               IsDns1123Subdomain(pod.node_name()), errors);
  }
}

// ---------------------------------------------------------------------------
// jobsetd's limits (validation_limits.h).

// Returns the bytes execve copies for `container`'s command and args: each
// string and its terminating NUL.
int64_t CommandBytes(const Container& container) {
  int64_t bytes = 0;
  for (const std::string& arg : container.command()) bytes += arg.size() + 1;
  for (const std::string& arg : container.args()) bytes += arg.size() + 1;
  return bytes;
}

void ValidateContainerLimits(const Container& container, absl::string_view path,
                             const Limits& limits, FieldErrors* errors) {
  if (container.env_size() > limits.max_env_per_container) {
    TooManyForLimit(Child(path, "env"), container.env_size(),
                    limits.max_env_per_container, "max_env_per_container",
                    errors);
  }
  if (container.ports_size() > limits.max_ports_per_container) {
    TooManyForLimit(Child(path, "ports"), container.ports_size(),
                    limits.max_ports_per_container, "max_ports_per_container",
                    errors);
  }
  if (const int64_t bytes = CommandBytes(container);
      bytes > limits.max_command_bytes) {
    TooLongForLimit(Child(path, container.args().empty() ? "command" : "args"),
                    bytes, limits.max_command_bytes, "max_command_bytes",
                    errors);
  }
}

// Checks the counts and sizes of `pod` against `limits`; `path` is the pod
// spec's path.
void ValidatePodLimits(const PodSpec& pod, absl::string_view path,
                       const Limits& limits, FieldErrors* errors) {
  const std::string containers_path = Child(path, "containers");
  if (pod.containers_size() > limits.max_containers_per_pod) {
    TooManyForLimit(containers_path, pod.containers_size(),
                    limits.max_containers_per_pod, "max_containers_per_pod",
                    errors);
  }
  const std::string init_path = Child(path, "initContainers");
  if (pod.init_containers_size() > limits.max_init_containers_per_pod) {
    TooManyForLimit(init_path, pod.init_containers_size(),
                    limits.max_init_containers_per_pod,
                    "max_init_containers_per_pod", errors);
  }
  if (pod.volumes_size() > limits.max_volumes_per_pod) {
    TooManyForLimit(Child(path, "volumes"), pod.volumes_size(),
                    limits.max_volumes_per_pod, "max_volumes_per_pod", errors);
  }
  for (int i = 0; i < pod.containers_size(); ++i) {
    ValidateContainerLimits(pod.containers(i), Index(containers_path, i),
                            limits, errors);
  }
  for (int i = 0; i < pod.init_containers_size(); ++i) {
    ValidateContainerLimits(pod.init_containers(i), Index(init_path, i), limits,
                            errors);
  }
}

}  // namespace

void ValidateJobTemplateMetadata(const JobTemplateSpec& tmpl,
                                 absl::string_view path, const Limits& limits,
                                 FieldErrors* errors) {
  ValidateObjectMeta(tmpl.metadata(), Child(path, "metadata"), limits, errors);
  ValidateObjectMeta(tmpl.spec().template_().metadata(),
                     Child(path, "spec.template.metadata"), limits, errors);
}

void ValidateJobTemplate(const JobTemplateSpec& tmpl, absl::string_view path,
                         const Limits& limits, FieldErrors* errors) {
  ValidateObjectMeta(tmpl.metadata(), Child(path, "metadata"), limits, errors);
  const JobSpec& spec = tmpl.spec();
  const std::string spec_path = Child(path, "spec");
  ValidateJobSpecFields(spec, spec_path, errors);
  if (spec.has_pod_failure_policy()) {
    ValidatePodFailurePolicy(spec, spec_path, errors);
  }
  const std::string template_path = Child(spec_path, "template");
  ValidateObjectMeta(spec.template_().metadata(),
                     Child(template_path, "metadata"), limits, errors);
  const std::string pod_spec_path = Child(template_path, "spec");
  ValidatePodSpec(spec.template_().spec(), pod_spec_path, errors);
  ValidatePodLimits(spec.template_().spec(), pod_spec_path, limits, errors);
  ValidateJobRestartPolicy(spec, pod_spec_path, errors);
}

}  // namespace jobset::api
