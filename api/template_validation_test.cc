#include "api/template_validation.h"

#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/k8s.pb.h"

namespace jobset::api {

// Lets GoogleTest print errors as Kubernetes does.
void PrintTo(const FieldError& error, std::ostream* os) {
  *os << error.ToString();
}

namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::string_view kPath = "spec.replicatedJobs[0].template";

// An Indexed Job of two pods, each with one container using a GPU.
JobTemplateSpec ValidTemplate() {
  JobTemplateSpec tmpl;
  JobSpec* job = tmpl.mutable_spec();
  job->set_completion_mode("Indexed");
  job->set_completions(2);
  job->set_parallelism(2);
  PodSpec* pod = job->mutable_template_()->mutable_spec();
  pod->set_restart_policy("OnFailure");
  Container* main = pod->add_containers();
  main->set_name("main");
  main->set_image("python:3.12");
  main->add_command("python");
  main->add_command("train.py");
  auto& requests = *main->mutable_resources()->mutable_requests();
  requests["cpu"] = "500m";
  requests["memory"] = "1Gi";
  requests["nvidia.com/gpu"] = "1";
  auto& limits = *main->mutable_resources()->mutable_limits();
  limits["cpu"] = "1";
  limits["memory"] = "2Gi";
  limits["nvidia.com/gpu"] = "1";
  return tmpl;
}

std::vector<FieldError> Validate(const JobTemplateSpec& tmpl,
                                 absl::string_view path = kPath) {
  FieldErrors errors;
  ValidateJobTemplate(tmpl, path, &errors);
  return errors.errors();
}

// Builders for the mutations below.

JobSpec& Job(JobTemplateSpec& t) { return *t.mutable_spec(); }

PodSpec& Pod(JobTemplateSpec& t) {
  return *t.mutable_spec()->mutable_template_()->mutable_spec();
}

Container& Main(JobTemplateSpec& t) { return *Pod(t).mutable_containers(0); }

Container& AddContainer(absl::string_view name,
                        google::protobuf::RepeatedPtrField<Container>* list) {
  Container* container = list->Add();
  container->set_name(std::string(name));
  container->set_image("busybox");
  return *container;
}

EnvVar& AddEnv(JobTemplateSpec& t, absl::string_view name) {
  EnvVar* var = Main(t).add_env();
  var->set_name(std::string(name));
  return *var;
}

void SetFieldRef(EnvVar& var, absl::string_view field_path) {
  var.mutable_value_from()->mutable_field_ref()->set_field_path(
      std::string(field_path));
}

// Adds a rule with `action` and no criteria; a pod failure policy needs
// restartPolicy Never.
PodFailurePolicyRule& AddRule(JobTemplateSpec& t, absl::string_view action) {
  Pod(t).set_restart_policy("Never");
  PodFailurePolicyRule* rule = Job(t).mutable_pod_failure_policy()->add_rules();
  rule->set_action(std::string(action));
  return *rule;
}

PodFailurePolicyOnExitCodesRequirement& OnExitCodes(
    PodFailurePolicyRule& rule, absl::string_view op,
    std::initializer_list<int> values) {
  PodFailurePolicyOnExitCodesRequirement* codes = rule.mutable_on_exit_codes();
  codes->set_operator_(std::string(op));
  for (int value : values) codes->add_values(value);
  return *codes;
}

PodFailurePolicyOnPodConditionsPattern& OnPodCondition(
    PodFailurePolicyRule& rule, absl::string_view type,
    absl::string_view status) {
  PodFailurePolicyOnPodConditionsPattern* pattern =
      rule.add_on_pod_conditions();
  pattern->set_type(std::string(type));
  pattern->set_status(std::string(status));
  return *pattern;
}

ContainerPort& AddPort(Container& container, absl::string_view name,
                       int container_port) {
  ContainerPort* port = container.add_ports();
  port->set_name(std::string(name));
  port->set_container_port(container_port);
  return *port;
}

Volume& AddHostPathVolume(JobTemplateSpec& t, absl::string_view name,
                          absl::string_view path) {
  Volume* volume = Pod(t).add_volumes();
  volume->set_name(std::string(name));
  volume->mutable_host_path()->set_path(std::string(path));
  return *volume;
}

Volume& AddEmptyDirVolume(JobTemplateSpec& t, absl::string_view name) {
  Volume* volume = Pod(t).add_volumes();
  volume->set_name(std::string(name));
  volume->mutable_empty_dir();
  return *volume;
}

Volume& AddSecretVolume(JobTemplateSpec& t, absl::string_view name,
                        absl::string_view secret) {
  Volume* volume = Pod(t).add_volumes();
  volume->set_name(std::string(name));
  volume->mutable_secret()->set_secret_name(std::string(secret));
  return *volume;
}

VolumeMount& AddMount(JobTemplateSpec& t, absl::string_view name,
                      absl::string_view mount_path) {
  VolumeMount* mount = Main(t).add_volume_mounts();
  mount->set_name(std::string(name));
  mount->set_mount_path(std::string(mount_path));
  return *mount;
}

// Gives the main container a port named "http" and returns its (empty)
// readiness probe.
Probe& Readiness(JobTemplateSpec& t) {
  AddPort(Main(t), "http", 8080);
  return *Main(t).mutable_readiness_probe();
}

NodeSelectorTerm& AddTerm(JobTemplateSpec& t) {
  return *Pod(t)
              .mutable_affinity()
              ->mutable_node_affinity()
              ->mutable_required_during_scheduling_ignored_during_execution()
              ->add_node_selector_terms();
}

// Adds a one-requirement node selector term.
void AddMatchExpression(JobTemplateSpec& t, absl::string_view key,
                        absl::string_view op,
                        std::initializer_list<absl::string_view> values) {
  NodeSelectorRequirement* req = AddTerm(t).add_match_expressions();
  req->set_key(std::string(key));
  req->set_operator_(std::string(op));
  for (absl::string_view value : values) req->add_values(std::string(value));
}

Toleration& AddToleration(JobTemplateSpec& t, absl::string_view key,
                          absl::string_view op, absl::string_view value,
                          absl::string_view effect) {
  Toleration* toleration = Pod(t).add_tolerations();
  toleration->set_key(std::string(key));
  toleration->set_operator_(std::string(op));
  toleration->set_value(std::string(value));
  toleration->set_effect(std::string(effect));
  return *toleration;
}

// One row: a mutation of ValidTemplate() and the single error it must cause,
// or no error when `path` is empty.
struct Case {
  std::string name;
  std::function<void(JobTemplateSpec&)> mutate;
  std::string path = "";     // A substring of the error's path.
  std::string message = "";  // A substring of the error's message.
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class TemplateValidationTest : public ::testing::TestWithParam<Case> {};

TEST_P(TemplateValidationTest, ReportsOnlyTheExpectedError) {
  const Case& c = GetParam();
  JobTemplateSpec tmpl = ValidTemplate();
  c.mutate(tmpl);
  if (c.path.empty()) {
    EXPECT_THAT(Validate(tmpl), IsEmpty());
  } else {
    EXPECT_THAT(
        Validate(tmpl),
        ElementsAre(AllOf(Field(&FieldError::path, HasSubstr(c.path)),
                          Field(&FieldError::message, HasSubstr(c.message)))));
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

std::vector<Case> JobSpecCases() {
  return {
      {"Baseline", [](JobTemplateSpec&) {}},
      {"ZeroCounts",
       [](JobTemplateSpec& t) {
         Job(t).set_parallelism(0);
         Job(t).set_completions(0);
       }},
      {"NegativeParallelism",
       [](JobTemplateSpec& t) { Job(t).set_parallelism(-1); },
       "spec.parallelism", "Invalid value: -1: must be greater than or equal"},
      {"NegativeCompletions",
       [](JobTemplateSpec& t) { Job(t).set_completions(-2); },
       "spec.completions", "must be greater than or equal to 0"},
      {"ZeroBackoffLimit",
       [](JobTemplateSpec& t) { Job(t).set_backoff_limit(0); }},
      {"NegativeBackoffLimit",
       [](JobTemplateSpec& t) { Job(t).set_backoff_limit(-1); },
       "spec.backoffLimit", "must be greater than or equal to 0"},
      {"ActiveDeadline",
       [](JobTemplateSpec& t) { Job(t).set_active_deadline_seconds(3600); }},
      {"NegativeActiveDeadline",
       [](JobTemplateSpec& t) { Job(t).set_active_deadline_seconds(-5); },
       "spec.activeDeadlineSeconds", "must be greater than or equal to 0"},
      {"EmptyCompletionMode",
       [](JobTemplateSpec& t) { Job(t).clear_completion_mode(); }},
      {"UnknownCompletionMode",
       [](JobTemplateSpec& t) { Job(t).set_completion_mode("Random"); },
       "spec.completionMode",
       R"(Unsupported value: "Random": supported values: "NonIndexed", )"
       R"("Indexed")"},
      {"NonIndexedWithoutCompletions",
       [](JobTemplateSpec& t) {
         Job(t).set_completion_mode("NonIndexed");
         Job(t).clear_completions();
       }},
      {"IndexedWithoutCompletions",
       [](JobTemplateSpec& t) { Job(t).clear_completions(); },
       "spec.completions", "Required value: when completion mode is Indexed"},
      {"IndexedWithNeitherCount",
       [](JobTemplateSpec& t) {
         Job(t).clear_completions();
         Job(t).clear_parallelism();
       }},
      {"IndexedParallelismOverLimit",
       [](JobTemplateSpec& t) {
         Job(t).set_parallelism(100001);
         Job(t).set_completions(100001);
       },
       "spec.parallelism",
       "must be less than or equal to 100000 when completion mode is Indexed"},
      {"NonIndexedHighParallelism",
       [](JobTemplateSpec& t) {
         Job(t).set_completion_mode("NonIndexed");
         Job(t).set_parallelism(200000);
       }},
      {"RestartPolicyNever",
       [](JobTemplateSpec& t) { Pod(t).set_restart_policy("Never"); }},
      {"RestartPolicyEmpty",
       [](JobTemplateSpec& t) { Pod(t).clear_restart_policy(); }},
      {"RestartPolicyAlways",
       [](JobTemplateSpec& t) { Pod(t).set_restart_policy("Always"); },
       "spec.template.spec.restartPolicy",
       R"(Unsupported value: "Always": supported values: "OnFailure", )"
       R"("Never")"},
  };
}
INSTANTIATE_TEST_SUITE_P(JobSpec, TemplateValidationTest,
                         ::testing::ValuesIn(JobSpecCases()), CaseName);

std::vector<Case> PodFailurePolicyCases() {
  return {
      {"FailJobOnExitCodes",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {1, 42});
       }},
      {"IgnoreOnPodCondition",
       [](JobTemplateSpec& t) {
         OnPodCondition(AddRule(t, "Ignore"), "DisruptionTarget", "");
       }},
      {"CountOnPodConditionFalse",
       [](JobTemplateSpec& t) {
         OnPodCondition(AddRule(t, "Count"), "example.com/Ready", "False");
       }},
      {"TooManyRules",
       [](JobTemplateSpec& t) {
         for (int i = 0; i < 21; ++i) {
           OnExitCodes(AddRule(t, "FailJob"), "In", {i + 1});
         }
       },
       "spec.podFailurePolicy.rules",
       "Too many: 21: must have at most 20 items"},
      {"EmptyAction",
       [](JobTemplateSpec& t) { OnExitCodes(AddRule(t, ""), "In", {1}); },
       "spec.podFailurePolicy.rules[0].action", "Required value"},
      {"FailIndexAction",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailIndex"), "In", {1});
       },
       "spec.podFailurePolicy.rules[0].action",
       "Forbidden: FailIndex requires backoffLimitPerIndex"},
      {"UnknownAction",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "Restart"), "In", {1});
       },
       "spec.podFailurePolicy.rules[0].action",
       R"(Unsupported value: "Restart")"},
      {"BothCriteria",
       [](JobTemplateSpec& t) {
         PodFailurePolicyRule& rule = AddRule(t, "FailJob");
         OnExitCodes(rule, "In", {1});
         OnPodCondition(rule, "DisruptionTarget", "True");
       },
       "spec.podFailurePolicy.rules[0]",
       "Invalid value: specifying both OnExitCodes and OnPodConditions is not "
       "supported"},
      {"NeitherCriterion", [](JobTemplateSpec& t) { AddRule(t, "FailJob"); },
       "spec.podFailurePolicy.rules[0]",
       "specifying one of OnExitCodes and OnPodConditions is required"},
      {"EmptyOperator",
       [](JobTemplateSpec& t) { OnExitCodes(AddRule(t, "FailJob"), "", {1}); },
       "rules[0].onExitCodes.operator", "Required value"},
      {"UnknownOperator",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "Equals", {1});
       },
       "rules[0].onExitCodes.operator",
       R"(Unsupported value: "Equals": supported values: "In", "NotIn")"},
      {"NotInZero",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "Count"), "NotIn", {0});
       }},
      {"InZero",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {0, 1});
       },
       "rules[0].onExitCodes.values[0]",
       "Invalid value: 0: must not be 0 for the In operator"},
      {"NoExitCodes",
       [](JobTemplateSpec& t) { OnExitCodes(AddRule(t, "FailJob"), "In", {}); },
       "rules[0].onExitCodes.values", "at least one value is required"},
      {"TooManyExitCodes",
       [](JobTemplateSpec& t) {
         PodFailurePolicyOnExitCodesRequirement& codes =
             OnExitCodes(AddRule(t, "FailJob"), "In", {});
         for (int i = 1; i <= 256; ++i) codes.add_values(i);
       },
       "rules[0].onExitCodes.values",
       "Too many: 256: must have at most 255 items"},
      {"DuplicateExitCode",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {3, 3});
       },
       "rules[0].onExitCodes.values[1]", "Duplicate value: 3"},
      {"UnorderedExitCodes",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {42, 1});
       },
       "rules[0].onExitCodes.values", "[42, 1]: must be ordered"},
      {"ExitCodesOfContainer",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {1})
             .set_container_name("main");
       }},
      {"ExitCodesOfInitContainer",
       [](JobTemplateSpec& t) {
         AddContainer("setup", Pod(t).mutable_init_containers());
         OnExitCodes(AddRule(t, "FailJob"), "In", {1})
             .set_container_name("setup");
       }},
      {"ExitCodesOfUnknownContainer",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {1})
             .set_container_name("sidecar");
       },
       "rules[0].onExitCodes.containerName",
       "must be one of the container or initContainer names in the pod "
       "template"},
      {"PodConditionWithoutType",
       [](JobTemplateSpec& t) {
         OnPodCondition(AddRule(t, "Ignore"), "", "True");
       },
       "rules[0].onPodConditions[0].type", "Required value"},
      {"PodConditionBadType",
       [](JobTemplateSpec& t) {
         OnPodCondition(AddRule(t, "Ignore"), "Disruption Target", "True");
       },
       "rules[0].onPodConditions[0].type",
       "must consist of alphanumeric characters"},
      {"PodConditionBadStatus",
       [](JobTemplateSpec& t) {
         OnPodCondition(AddRule(t, "Ignore"), "DisruptionTarget", "Maybe");
       },
       "rules[0].onPodConditions[0].status",
       R"(supported values: "False", "True", "Unknown")"},
      {"PolicyWithRestartOnFailure",
       [](JobTemplateSpec& t) {
         OnExitCodes(AddRule(t, "FailJob"), "In", {1});
         Pod(t).set_restart_policy("OnFailure");
       },
       "spec.template.spec.restartPolicy",
       R"(only "Never" is supported when podFailurePolicy is specified)"},
      {"EmptyPolicyWithRestartOnFailure",
       [](JobTemplateSpec& t) { Job(t).mutable_pod_failure_policy(); },
       "spec.template.spec.restartPolicy", R"(only "Never" is supported)"},
  };
}
INSTANTIATE_TEST_SUITE_P(PodFailurePolicy, TemplateValidationTest,
                         ::testing::ValuesIn(PodFailurePolicyCases()),
                         CaseName);

std::vector<Case> ContainerCases() {
  return {
      {"EveryPullPolicy",
       [](JobTemplateSpec& t) {
         Main(t).set_image_pull_policy("Never");
         AddContainer("b", Pod(t).mutable_containers())
             .set_image_pull_policy("Always");
         AddContainer("c", Pod(t).mutable_init_containers())
             .set_image_pull_policy("IfNotPresent");
       }},
      {"UnknownPullPolicy",
       [](JobTemplateSpec& t) { Main(t).set_image_pull_policy("Sometimes"); },
       "spec.template.spec.containers[0].imagePullPolicy",
       R"(Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never")"},
      {"ImageWithTrailingSpace",
       [](JobTemplateSpec& t) { Main(t).set_image("busybox "); },
       "spec.template.spec.containers[0].image",
       "must not have leading or trailing whitespace"},
      {"NoContainers", [](JobTemplateSpec& t) { Pod(t).clear_containers(); },
       "spec.template.spec.containers", "Required value"},
      {"ContainerWithoutName", [](JobTemplateSpec& t) { Main(t).clear_name(); },
       "spec.template.spec.containers[0].name", "Required value"},
      {"ContainerNameNotDnsLabel",
       [](JobTemplateSpec& t) { Main(t).set_name("Main_1"); },
       "spec.template.spec.containers[0].name",
       R"(Invalid value: "Main_1": a lowercase RFC 1123 label)"},
      {"ContainerWithoutImage",
       [](JobTemplateSpec& t) { Main(t).clear_image(); },
       "spec.template.spec.containers[0].image", "Required value"},
      {"TwoContainers",
       [](JobTemplateSpec& t) {
         AddContainer("sidecar", Pod(t).mutable_containers());
       }},
      {"DuplicateContainerName",
       [](JobTemplateSpec& t) {
         AddContainer("main", Pod(t).mutable_containers());
       },
       "spec.template.spec.containers[1].name", R"(Duplicate value: "main")"},
      {"InitContainer",
       [](JobTemplateSpec& t) {
         AddContainer("setup", Pod(t).mutable_init_containers());
       }},
      {"InitContainerNamedLikeContainer",
       [](JobTemplateSpec& t) {
         AddContainer("main", Pod(t).mutable_init_containers());
       },
       "spec.template.spec.initContainers[0].name",
       R"(Duplicate value: "main")"},
      {"InitContainerWithoutImage",
       [](JobTemplateSpec& t) {
         AddContainer("setup", Pod(t).mutable_init_containers()).clear_image();
       },
       "spec.template.spec.initContainers[0].image", "Required value"},
      {"InitContainerReadinessProbe",
       [](JobTemplateSpec& t) {
         AddContainer("setup", Pod(t).mutable_init_containers())
             .mutable_readiness_probe()
             ->mutable_exec()
             ->add_command("true");
       },
       "spec.template.spec.initContainers[0].readinessProbe",
       "Forbidden: may not be set for init containers"},
  };
}
INSTANTIATE_TEST_SUITE_P(Containers, TemplateValidationTest,
                         ::testing::ValuesIn(ContainerCases()), CaseName);

std::vector<Case> EnvCases() {
  return {
      {"EnvValues",
       [](JobTemplateSpec& t) {
         AddEnv(t, "MY_VAR.1-x").set_value("x");
         AddEnv(t, "1 relaxed name");
       }},
      {"EnvWithoutName",
       [](JobTemplateSpec& t) { AddEnv(t, "").set_value("x"); },
       "containers[0].env[0].name", "Required value"},
      {"EnvNameWithEquals", [](JobTemplateSpec& t) { AddEnv(t, "A=B"); },
       "containers[0].env[0].name",
       "must consist only of printable ASCII characters other than '='"},
      {"EnvNameNotAscii", [](JobTemplateSpec& t) { AddEnv(t, "caf\xc3\xa9"); },
       "containers[0].env[0].name", "printable ASCII characters"},
      {"EnvFromDownwardApi",
       [](JobTemplateSpec& t) {
         SetFieldRef(AddEnv(t, "POD_NAME"), "metadata.name");
         SetFieldRef(AddEnv(t, "POD_IPS"), "status.podIPs");
         SetFieldRef(AddEnv(t, "JOB_INDEX"),
                     "metadata.labels['jobset.sigs.k8s.io/job-index']");
         SetFieldRef(AddEnv(t, "NOTE"),
                     "metadata.annotations['Example.com/Note']");
         EnvVar& v1 = AddEnv(t, "NODE");
         SetFieldRef(v1, "spec.nodeName");
         v1.mutable_value_from()->mutable_field_ref()->set_api_version("v1");
       }},
      {"EnvValueAndValueFrom",
       [](JobTemplateSpec& t) {
         EnvVar& var = AddEnv(t, "NAME");
         var.set_value("x");
         SetFieldRef(var, "metadata.name");
       },
       "containers[0].env[0].valueFrom",
       "may not be specified when `value` is not empty"},
      {"EnvValueFromWithoutSource",
       [](JobTemplateSpec& t) { AddEnv(t, "NAME").mutable_value_from(); },
       "containers[0].env[0].valueFrom", "must specify one of: `fieldRef`"},
      {"EnvFieldRefWithoutPath",
       [](JobTemplateSpec& t) { SetFieldRef(AddEnv(t, "NAME"), ""); },
       "containers[0].env[0].valueFrom.fieldRef.fieldPath", "Required value"},
      {"EnvFieldRefUnsupported",
       [](JobTemplateSpec& t) {
         SetFieldRef(AddEnv(t, "NAME"), "spec.containers");
       },
       "containers[0].env[0].valueFrom.fieldRef.fieldPath",
       R"(Unsupported value: "spec.containers": supported values: )"
       R"("metadata.name")"},
      {"EnvFieldRefBadSubscript",
       [](JobTemplateSpec& t) {
         SetFieldRef(AddEnv(t, "NAME"), "spec.nodeName['x']");
       },
       "containers[0].env[0].valueFrom.fieldRef",
       R"(Invalid value: "spec.nodeName": does not support subscript)"},
      {"EnvFieldRefBadLabelKey",
       [](JobTemplateSpec& t) {
         SetFieldRef(AddEnv(t, "NAME"), "metadata.labels['bad key']");
       },
       "containers[0].env[0].valueFrom.fieldRef",
       R"(Invalid value: "bad key": name part must consist of)"},
      {"EnvFieldRefBadApiVersion",
       [](JobTemplateSpec& t) {
         EnvVar& var = AddEnv(t, "NAME");
         SetFieldRef(var, "metadata.name");
         var.mutable_value_from()->mutable_field_ref()->set_api_version("v2");
       },
       "containers[0].env[0].valueFrom.fieldRef.apiVersion",
       R"(Unsupported value: "v2")"},
      {"EnvSecretKeyRef",
       [](JobTemplateSpec& t) {
         SecretKeySelector* ref = AddEnv(t, "PASSWORD")
                                      .mutable_value_from()
                                      ->mutable_secret_key_ref();
         ref->set_name("db");
         ref->set_key("password");
       }},
      {"EnvConfigMapKeyRef",
       [](JobTemplateSpec& t) {
         ConfigMapKeySelector* ref = AddEnv(t, "MODE")
                                         .mutable_value_from()
                                         ->mutable_config_map_key_ref();
         ref->set_name("settings");
         ref->set_key("mode");
         ref->set_optional(true);
       }},
      {"EnvSecretKeyRefBadName",
       [](JobTemplateSpec& t) {
         SecretKeySelector* ref =
             AddEnv(t, "P").mutable_value_from()->mutable_secret_key_ref();
         ref->set_name("DB");
         ref->set_key("password");
       },
       "containers[0].env[0].valueFrom.secretKeyRef.name",
       R"(Invalid value: "DB": a lowercase RFC 1123 subdomain)"},
      {"EnvSecretKeyRefWithoutKey",
       [](JobTemplateSpec& t) {
         AddEnv(t, "P")
             .mutable_value_from()
             ->mutable_secret_key_ref()
             ->set_name("db");
       },
       "containers[0].env[0].valueFrom.secretKeyRef.key", "Required value"},
      {"EnvConfigMapKeyRefBadKey",
       [](JobTemplateSpec& t) {
         ConfigMapKeySelector* ref =
             AddEnv(t, "P").mutable_value_from()->mutable_config_map_key_ref();
         ref->set_name("settings");
         ref->set_key("a/b");
       },
       "containers[0].env[0].valueFrom.configMapKeyRef.key",
       R"(Invalid value: "a/b": a valid config key must consist of)"},
      {"EnvTwoSources",
       [](JobTemplateSpec& t) {
         EnvVar& var = AddEnv(t, "P");
         SetFieldRef(var, "metadata.name");
         SecretKeySelector* ref =
             var.mutable_value_from()->mutable_secret_key_ref();
         ref->set_name("db");
         ref->set_key("password");
       },
       "containers[0].env[0].valueFrom",
       "may not have more than one field specified at a time"},
      {"EnvFrom",
       [](JobTemplateSpec& t) {
         EnvFromSource* from = Main(t).add_env_from();
         from->set_prefix("DB_");
         from->mutable_secret_ref()->set_name("db");
         Main(t).add_env_from()->mutable_config_map_ref()->set_name("settings");
       }},
      {"EnvFromWithoutSource",
       [](JobTemplateSpec& t) { Main(t).add_env_from()->set_prefix("X_"); },
       "containers[0].envFrom",
       "must specify one of: `configMapRef` or `secretRef`"},
      {"EnvFromTwoSources",
       [](JobTemplateSpec& t) {
         EnvFromSource* from = Main(t).add_env_from();
         from->mutable_secret_ref()->set_name("db");
         from->mutable_config_map_ref()->set_name("settings");
       },
       "containers[0].envFrom",
       "may not have more than one field specified at a time"},
      {"EnvFromBadPrefix",
       [](JobTemplateSpec& t) {
         EnvFromSource* from = Main(t).add_env_from();
         from->set_prefix("1X=");
         from->mutable_secret_ref()->set_name("db");
       },
       "containers[0].envFrom[0].prefix",
       R"(Invalid value: "1X=": a valid environment variable name must )"
       "consist of alphabetic characters"},
      {"EnvFromWithoutName",
       [](JobTemplateSpec& t) {
         Main(t).add_env_from()->mutable_config_map_ref();
       },
       "containers[0].envFrom[0].configMapRef.name", "Required value"},
      {"EnvFromBadName",
       [](JobTemplateSpec& t) {
         Main(t).add_env_from()->mutable_secret_ref()->set_name("-db");
       },
       "containers[0].envFrom[0].secretRef.name", R"(Invalid value: "-db")"},
  };
}
INSTANTIATE_TEST_SUITE_P(Env, TemplateValidationTest,
                         ::testing::ValuesIn(EnvCases()), CaseName);

std::vector<Case> ResourceCases() {
  const auto requests = [](JobTemplateSpec & t) -> auto& {
    return *Main(t).mutable_resources()->mutable_requests();
  };
  const auto limits = [](JobTemplateSpec & t) -> auto& {
    return *Main(t).mutable_resources()->mutable_limits();
  };
  return {
      {"NoResources", [](JobTemplateSpec& t) { Main(t).clear_resources(); }},
      {"CpuRequestWithoutLimit",
       [=](JobTemplateSpec& t) { limits(t).erase("cpu"); }},
      {"OtherStandardResources",
       [=](JobTemplateSpec& t) {
         requests(t)["ephemeral-storage"] = "10Gi";
         limits(t)["hugepages-2Mi"] = "4Mi";
         requests(t)["hugepages-2Mi"] = "4Mi";
         limits(t)["google.com/tpu"] = "4";
       }},
      {"UnparsableQuantity",
       [=](JobTemplateSpec& t) { requests(t)["cpu"] = "lots"; },
       "containers[0].resources.requests[cpu]",
       R"(Invalid value: "lots": quantity "lots" is malformed)"},
      {"NegativeQuantity",
       [=](JobTemplateSpec& t) {
         requests(t).erase("memory");
         limits(t)["memory"] = "-1Gi";
       },
       "containers[0].resources.limits[memory]",
       R"(Invalid value: "-1Gi": must be greater than or equal to 0)"},
      {"RequestAboveLimit",
       [=](JobTemplateSpec& t) { requests(t)["cpu"] = "1500m"; },
       "containers[0].resources.requests[cpu]",
       "must be less than or equal to cpu limit of 1"},
      {"NotAStandardResource",
       [=](JobTemplateSpec& t) { requests(t)["gpu"] = "1"; },
       "containers[0].resources.requests[gpu]",
       "must be a standard resource for containers"},
      {"ResourceNameNotQualified",
       [=](JobTemplateSpec& t) { limits(t)["bad name"] = "1"; },
       "containers[0].resources.limits[bad name]",
       "must consist of alphanumeric characters"},
      {"FractionalGpu",
       [=](JobTemplateSpec& t) {
         requests(t).erase("nvidia.com/gpu");
         limits(t)["nvidia.com/gpu"] = "500m";
       },
       "containers[0].resources.limits[nvidia.com/gpu]", "must be an integer"},
      {"GpuRequestBelowLimit",
       [=](JobTemplateSpec& t) { limits(t)["nvidia.com/gpu"] = "2"; },
       "containers[0].resources.requests[nvidia.com/gpu]",
       "must be equal to nvidia.com/gpu limit of 2"},
      {"GpuRequestWithoutLimit",
       [=](JobTemplateSpec& t) { limits(t).erase("nvidia.com/gpu"); },
       "containers[0].resources.limits[nvidia.com/gpu]",
       "Required value: Limit must be set for non overcommitable resources"},
      {"GpuLimitOnly",
       [=](JobTemplateSpec& t) { requests(t).erase("nvidia.com/gpu"); }},
      {"HugePagesRequestBelowLimit",
       [=](JobTemplateSpec& t) {
         requests(t)["hugepages-2Mi"] = "2Mi";
         limits(t)["hugepages-2Mi"] = "4Mi";
       },
       "containers[0].resources.requests[hugepages-2Mi]",
       "must be equal to hugepages-2Mi limit of 4Mi"},
  };
}
INSTANTIATE_TEST_SUITE_P(Resources, TemplateValidationTest,
                         ::testing::ValuesIn(ResourceCases()), CaseName);

std::vector<Case> PortCases() {
  return {
      {"Ports",
       [](JobTemplateSpec& t) {
         AddPort(Main(t), "http", 8080).set_protocol("TCP");
         ContainerPort& udp = AddPort(Main(t), "", 9000);
         udp.set_protocol("UDP");
         udp.set_host_port(9000);
       }},
      {"ContainerPortMissing",
       [](JobTemplateSpec& t) { AddPort(Main(t), "http", 0); },
       "containers[0].ports[0].containerPort", "Required value"},
      {"ContainerPortTooLarge",
       [](JobTemplateSpec& t) { AddPort(Main(t), "", 70000); },
       "containers[0].ports[0].containerPort",
       "Invalid value: 70000: must be between 1 and 65535, inclusive"},
      {"NegativeHostPort",
       [](JobTemplateSpec& t) { AddPort(Main(t), "", 8080).set_host_port(-1); },
       "containers[0].ports[0].hostPort", "must be between 1 and 65535"},
      {"UnknownProtocol",
       [](JobTemplateSpec& t) {
         AddPort(Main(t), "", 8080).set_protocol("HTTP");
       },
       "containers[0].ports[0].protocol",
       R"(Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP")"},
      {"PortNameTooLong",
       [](JobTemplateSpec& t) { AddPort(Main(t), "a-long-port-name", 80); },
       "containers[0].ports[0].name", "must be no more than 15 characters"},
      {"PortNameWithoutLetter",
       [](JobTemplateSpec& t) { AddPort(Main(t), "8080", 8080); },
       "containers[0].ports[0].name", "must contain at least one letter"},
      {"DuplicatePortName",
       [](JobTemplateSpec& t) {
         AddPort(Main(t), "http", 8080);
         AddPort(Main(t), "http", 8081);
       },
       "containers[0].ports[1].name", R"(Duplicate value: "http")"},
      {"HostNetworkUnsetHostPort",
       [](JobTemplateSpec& t) {
         Pod(t).set_host_network(true);
         AddPort(Main(t), "", 8080);
       }},
      {"HostNetworkOtherHostPort",
       [](JobTemplateSpec& t) {
         Pod(t).set_host_network(true);
         AddPort(Main(t), "", 8080).set_host_port(9090);
       },
       "containers[0].ports[0].hostPort",
       "must match `containerPort` when `hostNetwork` is true"},
      {"HostPortConflict",
       [](JobTemplateSpec& t) {
         AddPort(Main(t), "", 8080).set_host_port(9000);
         Container& sidecar =
             AddContainer("sidecar", Pod(t).mutable_containers());
         AddPort(sidecar, "", 8081).set_host_port(9000);
       },
       "containers[1].ports[0].hostPort", R"(Duplicate value: "TCP//9000")"},
      {"SameHostPortOtherProtocol",
       [](JobTemplateSpec& t) {
         AddPort(Main(t), "", 8080).set_host_port(9000);
         ContainerPort& udp = AddPort(Main(t), "", 8081);
         udp.set_host_port(9000);
         udp.set_protocol("UDP");
       }},
  };
}
INSTANTIATE_TEST_SUITE_P(Ports, TemplateValidationTest,
                         ::testing::ValuesIn(PortCases()), CaseName);

std::vector<Case> VolumeCases() {
  return {
      {"Volumes",
       [](JobTemplateSpec& t) {
         AddHostPathVolume(t, "data", "/data")
             .mutable_host_path()
             ->set_type("Directory");
         EmptyDirVolumeSource* scratch =
             AddEmptyDirVolume(t, "scratch").mutable_empty_dir();
         scratch->set_medium("Memory");
         scratch->set_size_limit("1Gi");
         AddMount(t, "data", "/data").set_read_only(true);
         AddMount(t, "scratch", "/scratch").set_sub_path("job/logs");
       }},
      {"VolumeWithoutName",
       [](JobTemplateSpec& t) { AddEmptyDirVolume(t, ""); },
       "spec.template.spec.volumes[0].name", "Required value"},
      {"VolumeNameNotDnsLabel",
       [](JobTemplateSpec& t) { AddEmptyDirVolume(t, "Data"); },
       "spec.template.spec.volumes[0].name", "a lowercase RFC 1123 label"},
      {"DuplicateVolumeName",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data");
         AddHostPathVolume(t, "data", "/data");
       },
       "spec.template.spec.volumes[1].name", R"(Duplicate value: "data")"},
      {"VolumeWithoutType",
       [](JobTemplateSpec& t) { Pod(t).add_volumes()->set_name("data"); },
       "spec.template.spec.volumes[0]",
       "Required value: must specify a volume type"},
      {"VolumeWithTwoTypes",
       [](JobTemplateSpec& t) {
         AddHostPathVolume(t, "data", "/data").mutable_empty_dir();
       },
       // Kubernetes checks emptyDir first and forbids the later sources.
       "spec.template.spec.volumes[0].hostPath",
       "Forbidden: may not specify more than 1 volume type"},
      {"SecretAndConfigMapVolume",
       [](JobTemplateSpec& t) {
         Volume& v = AddSecretVolume(t, "data", "creds");
         v.mutable_config_map()->set_name("settings");
       },
       "spec.template.spec.volumes[0].configMap",
       "Forbidden: may not specify more than 1 volume type"},
      {"SecretVolume",
       [](JobTemplateSpec& t) {
         Volume& v = AddSecretVolume(t, "data", "creds");
         v.mutable_secret()->set_default_mode(0400);
         KeyToPath* item = v.mutable_secret()->add_items();
         item->set_key("password");
         item->set_path("conf/pw");
         item->set_mode(0777);
         AddMount(t, "data", "/etc/creds");
       }},
      {"ConfigMapVolume",
       [](JobTemplateSpec& t) {
         Volume* v = Pod(t).add_volumes();
         v->set_name("cfg");
         v->mutable_config_map()->set_name("settings");
         v->mutable_config_map()->set_optional(true);
       }},
      {"SecretVolumeWithoutName",
       [](JobTemplateSpec& t) { AddSecretVolume(t, "data", ""); },
       "volumes[0].secret.secretName", "Required value"},
      {"ConfigMapVolumeWithoutName",
       [](JobTemplateSpec& t) {
         Volume* v = Pod(t).add_volumes();
         v->set_name("cfg");
         v->mutable_config_map();
       },
       "volumes[0].configMap.name", "Required value"},
      {"SecretVolumeBadName",
       [](JobTemplateSpec& t) { AddSecretVolume(t, "data", "Bad_Name"); },
       "volumes[0].secret.secretName",
       R"(Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain)"},
      {"DefaultModeTooLarge",
       [](JobTemplateSpec& t) {
         AddSecretVolume(t, "data", "creds")
             .mutable_secret()
             ->set_default_mode(01000);
       },
       "volumes[0].secret.defaultMode",
       "Invalid value: 512: must be a number between 0 and 0777 (octal), both "
       "inclusive"},
      {"NegativeItemMode",
       [](JobTemplateSpec& t) {
         KeyToPath* item =
             AddSecretVolume(t, "data", "creds").mutable_secret()->add_items();
         item->set_key("k");
         item->set_path("k");
         item->set_mode(-1);
       },
       "volumes[0].secret.items[0].mode",
       "Invalid value: -1: must be a number between 0 and 0777"},
      {"ItemWithoutKey",
       [](JobTemplateSpec& t) {
         AddSecretVolume(t, "data", "creds")
             .mutable_secret()
             ->add_items()
             ->set_path("k");
       },
       "volumes[0].secret.items[0].key", "Required value"},
      {"ItemAbsolutePath",
       [](JobTemplateSpec& t) {
         KeyToPath* item =
             AddSecretVolume(t, "data", "creds").mutable_secret()->add_items();
         item->set_key("k");
         item->set_path("/etc/k");
       },
       "volumes[0].secret.items[0].path",
       R"(Invalid value: "/etc/k": must be a relative path)"},
      {"ItemPathWithBacksteps",
       [](JobTemplateSpec& t) {
         KeyToPath* item =
             AddSecretVolume(t, "data", "creds").mutable_secret()->add_items();
         item->set_key("k");
         item->set_path("a/../../k");
       },
       "volumes[0].secret.items[0].path",
       R"(Invalid value: "a/../../k": must not contain '..')"},
      {"ItemPathStartingWithDots",
       [](JobTemplateSpec& t) {
         Volume* v = Pod(t).add_volumes();
         v->set_name("cfg");
         v->mutable_config_map()->set_name("settings");
         KeyToPath* item = v->mutable_config_map()->add_items();
         item->set_key("k");
         item->set_path("..data");
       },
       "volumes[0].configMap.items[0].path",
       R"(Invalid value: "..data": must not start with '..')"},
      {"ImagePullSecrets",
       [](JobTemplateSpec& t) {
         Pod(t).add_image_pull_secrets()->set_name("regcred");
       }},
      {"ImagePullSecretWithoutName",
       [](JobTemplateSpec& t) { Pod(t).add_image_pull_secrets(); },
       "spec.template.spec.imagePullSecrets[0].name", "Required value"},
      {"ImagePullSecretBadName",
       [](JobTemplateSpec& t) {
         Pod(t).add_image_pull_secrets()->set_name("Reg Cred");
       },
       "imagePullSecrets[0].name", R"(Invalid value: "Reg Cred")"},
      {"HostPathWithoutPath",
       [](JobTemplateSpec& t) { AddHostPathVolume(t, "data", ""); },
       "volumes[0].hostPath.path", "Required value"},
      {"RelativeHostPath",
       [](JobTemplateSpec& t) { AddHostPathVolume(t, "data", "data"); },
       "volumes[0].hostPath.path", "must be an absolute path"},
      {"HostPathWithBacksteps",
       [](JobTemplateSpec& t) { AddHostPathVolume(t, "data", "/data/../etc"); },
       "volumes[0].hostPath.path", "must not contain '..'"},
      {"UnknownHostPathType",
       [](JobTemplateSpec& t) {
         AddHostPathVolume(t, "data", "/data")
             .mutable_host_path()
             ->set_type("Folder");
       },
       "volumes[0].hostPath.type", R"(Unsupported value: "Folder")"},
      {"UnsupportedEmptyDirMedium",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data").mutable_empty_dir()->set_medium(
             "HugePages");
       },
       "volumes[0].emptyDir.medium",
       R"(Unsupported value: "HugePages": supported values: "", "Memory")"},
      {"UnparsableSizeLimit",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data").mutable_empty_dir()->set_size_limit(
             "big");
       },
       "volumes[0].emptyDir.sizeLimit", R"(Invalid value: "big")"},
      {"NegativeSizeLimit",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data").mutable_empty_dir()->set_size_limit(
             "-1Gi");
       },
       "volumes[0].emptyDir.sizeLimit",
       "Forbidden: SizeLimit field must be a valid resource quantity"},
      {"MountOfUnknownVolume",
       [](JobTemplateSpec& t) { AddMount(t, "missing", "/data"); },
       "containers[0].volumeMounts[0].name", R"(Not found: "missing")"},
      {"MountWithoutName", [](JobTemplateSpec& t) { AddMount(t, "", "/data"); },
       "containers[0].volumeMounts[0].name", "Required value"},
      {"MountWithoutPath",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data");
         AddMount(t, "data", "");
       },
       "containers[0].volumeMounts[0].mountPath", "Required value"},
      {"RelativeMountPath",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data");
         AddMount(t, "data", "data");
       },
       "containers[0].volumeMounts[0].mountPath", "must be an absolute path"},
      {"DuplicateMountPath",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "a");
         AddEmptyDirVolume(t, "b");
         AddMount(t, "a", "/data");
         AddMount(t, "b", "/data");
       },
       "containers[0].volumeMounts[1].mountPath", "must be unique"},
      {"AbsoluteSubPath",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data");
         AddMount(t, "data", "/data").set_sub_path("/logs");
       },
       "containers[0].volumeMounts[0].subPath", "must be a relative path"},
      {"SubPathWithBacksteps",
       [](JobTemplateSpec& t) {
         AddEmptyDirVolume(t, "data");
         AddMount(t, "data", "/data").set_sub_path("logs/../..");
       },
       "containers[0].volumeMounts[0].subPath", "must not contain '..'"},
  };
}
INSTANTIATE_TEST_SUITE_P(Volumes, TemplateValidationTest,
                         ::testing::ValuesIn(VolumeCases()), CaseName);

PodSecurityContext& PodSc(JobTemplateSpec& t) {
  return *Pod(t).mutable_security_context();
}

SecurityContext& MainSc(JobTemplateSpec& t) {
  return *Main(t).mutable_security_context();
}

std::vector<Case> SecurityContextCases() {
  return {
      {"RestrictedLooking",
       [](JobTemplateSpec& t) {
         PodSc(t).set_run_as_user(1000);
         PodSc(t).set_run_as_group(1000);
         PodSc(t).set_fs_group(2000);
         PodSc(t).add_supplemental_groups(3000);
         PodSc(t).set_run_as_non_root(true);
         PodSc(t).mutable_seccomp_profile()->set_type("RuntimeDefault");
         MainSc(t).set_allow_privilege_escalation(false);
         MainSc(t).mutable_capabilities()->add_drop("ALL");
         MainSc(t).mutable_capabilities()->add_add("NET_BIND_SERVICE");
         MainSc(t).mutable_capabilities()->add_add("CAP_SYS_PTRACE");
         MainSc(t).set_read_only_root_filesystem(true);
         MainSc(t).set_proc_mount("Default");
       }},
      {"RootIsAUser", [](JobTemplateSpec& t) { PodSc(t).set_run_as_user(0); }},
      {"NegativeRunAsUser",
       [](JobTemplateSpec& t) { PodSc(t).set_run_as_user(-1); },
       "spec.template.spec.securityContext.runAsUser",
       "Invalid value: -1: must be between 0 and 2147483647, inclusive"},
      {"RunAsUserTooLarge",
       [](JobTemplateSpec& t) { MainSc(t).set_run_as_user(2147483648); },
       "spec.template.spec.containers[0].securityContext.runAsUser",
       "must be between 0 and 2147483647, inclusive"},
      {"NegativeContainerRunAsGroup",
       [](JobTemplateSpec& t) { MainSc(t).set_run_as_group(-5); },
       "containers[0].securityContext.runAsGroup", "Invalid value: -5"},
      {"NegativeFsGroup", [](JobTemplateSpec& t) { PodSc(t).set_fs_group(-1); },
       "spec.template.spec.securityContext.fsGroup", "Invalid value: -1"},
      {"NegativeSupplementalGroup",
       [](JobTemplateSpec& t) {
         PodSc(t).add_supplemental_groups(10);
         PodSc(t).add_supplemental_groups(-2);
       },
       "securityContext.supplementalGroups[1]", "Invalid value: -2"},
      {"UnknownCapability",
       [](JobTemplateSpec& t) {
         MainSc(t).mutable_capabilities()->add_add("NET_ADMIN");
         MainSc(t).mutable_capabilities()->add_add("NET_MAGIC");
       },
       "containers[0].securityContext.capabilities.add[1]",
       R"(Invalid value: "NET_MAGIC": must be a Linux capability name)"},
      {"LowerCaseCapability",
       [](JobTemplateSpec& t) {
         MainSc(t).mutable_capabilities()->add_drop("net_raw");
       },
       "capabilities.drop[0]", R"(Invalid value: "net_raw")"},
      {"UnknownProcMount",
       [](JobTemplateSpec& t) { MainSc(t).set_proc_mount("Hidden"); },
       "containers[0].securityContext.procMount",
       R"(Unsupported value: "Hidden": supported values: "Default", )"
       R"("Unmasked")"},
      {"PrivilegedWithoutEscalation",
       [](JobTemplateSpec& t) {
         MainSc(t).set_privileged(true);
         MainSc(t).set_allow_privilege_escalation(false);
       },
       "spec.template.spec.containers[0].securityContext",
       "cannot set `allowPrivilegeEscalation` to false and `privileged` to "
       "true"},
      {"SysAdminWithoutEscalation",
       [](JobTemplateSpec& t) {
         MainSc(t).mutable_capabilities()->add_add("CAP_SYS_ADMIN");
         MainSc(t).set_allow_privilege_escalation(false);
       },
       "containers[0].securityContext", "`capabilities.Add` CAP_SYS_ADMIN"},
      {"PrivilegedInitContainer",
       [](JobTemplateSpec& t) {
         AddContainer("init", Pod(t).mutable_init_containers())
             .mutable_security_context()
             ->set_privileged(true);
       }},
      {"BadInitContainerUser",
       [](JobTemplateSpec& t) {
         AddContainer("init", Pod(t).mutable_init_containers())
             .mutable_security_context()
             ->set_run_as_user(-3);
       },
       "initContainers[0].securityContext.runAsUser", "Invalid value: -3"},
      {"SeccompWithoutType",
       [](JobTemplateSpec& t) { PodSc(t).mutable_seccomp_profile(); },
       "securityContext.seccompProfile.type", "Required value"},
      {"UnknownSeccompType",
       [](JobTemplateSpec& t) {
         MainSc(t).mutable_seccomp_profile()->set_type("Strict");
       },
       "containers[0].securityContext.seccompProfile.type",
       R"(Unsupported value: "Strict")"},
      {"LocalhostSeccompWithoutProfile",
       [](JobTemplateSpec& t) {
         PodSc(t).mutable_seccomp_profile()->set_type("Localhost");
       },
       "securityContext.seccompProfile.localhostProfile",
       "Required value: must be set when seccomp type is Localhost"},
      {"LocalhostSeccomp",
       [](JobTemplateSpec& t) {
         SeccompProfile* p = PodSc(t).mutable_seccomp_profile();
         p->set_type("Localhost");
         p->set_localhost_profile("profiles/train.json");
       }},
      {"LocalhostSeccompEscapes",
       [](JobTemplateSpec& t) {
         SeccompProfile* p = PodSc(t).mutable_seccomp_profile();
         p->set_type("Localhost");
         p->set_localhost_profile("../../etc/x.json");
       },
       "seccompProfile.localhostProfile",
       "must be a relative path without '..'"},
      {"ProfileWithoutLocalhost",
       [](JobTemplateSpec& t) {
         SeccompProfile* p = MainSc(t).mutable_seccomp_profile();
         p->set_type("RuntimeDefault");
         p->set_localhost_profile("x.json");
       },
       "seccompProfile.localhostProfile",
       "can only be set when seccomp type is Localhost"},
      {"LocalhostAppArmorWithoutProfile",
       [](JobTemplateSpec& t) {
         MainSc(t).mutable_app_armor_profile()->set_type("Localhost");
       },
       "containers[0].securityContext.appArmorProfile.localhostProfile",
       "must be set when AppArmor type is Localhost"},
      {"UnknownFsGroupChangePolicy",
       [](JobTemplateSpec& t) { PodSc(t).set_fs_group_change_policy("Never"); },
       "securityContext.fsGroupChangePolicy", R"(Unsupported value: "Never")"},
      {"UnknownSupplementalGroupsPolicy",
       [](JobTemplateSpec& t) {
         PodSc(t).set_supplemental_groups_policy("Loose");
       },
       "securityContext.supplementalGroupsPolicy",
       R"(Unsupported value: "Loose")"},
      {"DuplicateSysctl",
       [](JobTemplateSpec& t) {
         PodSc(t).add_sysctls()->set_name("net.ipv4.tcp_syncookies");
         PodSc(t).add_sysctls()->set_name("net.ipv4.tcp_syncookies");
       },
       "securityContext.sysctls[1].name", "Duplicate value"},
  };
}
INSTANTIATE_TEST_SUITE_P(SecurityContext, TemplateValidationTest,
                         ::testing::ValuesIn(SecurityContextCases()), CaseName);

std::vector<Case> ProbeCases() {
  return {
      {"ExecProbe",
       [](JobTemplateSpec& t) {
         Probe& probe = Readiness(t);
         probe.mutable_exec()->add_command("cat");
         probe.set_period_seconds(5);
         probe.set_success_threshold(3);
       }},
      {"HttpGetByPortName",
       [](JobTemplateSpec& t) {
         HTTPGetAction* http = Readiness(t).mutable_http_get();
         http->set_port("http");
         http->set_path("/healthz");
         http->set_scheme("HTTPS");
         http->add_http_headers()->set_name("X-Probe");
       }},
      {"HttpGetByPortNumber",
       [](JobTemplateSpec& t) {
         Readiness(t).mutable_http_get()->set_port("9090");
       }},
      {"TcpSocket",
       [](JobTemplateSpec& t) {
         Readiness(t).mutable_tcp_socket()->set_port("http");
       }},
      {"ProbeWithoutHandler", [](JobTemplateSpec& t) { Readiness(t); },
       "containers[0].readinessProbe",
       "Required value: must specify a handler type"},
      {"ProbeWithTwoHandlers",
       [](JobTemplateSpec& t) {
         Probe& probe = Readiness(t);
         probe.mutable_exec()->add_command("cat");
         probe.mutable_tcp_socket()->set_port("http");
       },
       "containers[0].readinessProbe.tcpSocket",
       "Forbidden: may not specify more than 1 handler type"},
      {"ExecWithoutCommand",
       [](JobTemplateSpec& t) { Readiness(t).mutable_exec(); },
       "containers[0].readinessProbe.exec.command", "Required value"},
      {"HttpGetWithoutPort",
       [](JobTemplateSpec& t) { Readiness(t).mutable_http_get(); },
       "containers[0].readinessProbe.httpGet.port", "Required value"},
      {"HttpGetPortOutOfRange",
       [](JobTemplateSpec& t) {
         Readiness(t).mutable_http_get()->set_port("0");
       },
       "containers[0].readinessProbe.httpGet.port",
       "Invalid value: 0: must be between 1 and 65535, inclusive"},
      {"HttpGetUnknownPortName",
       [](JobTemplateSpec& t) {
         Readiness(t).mutable_http_get()->set_port("metrics");
       },
       "containers[0].readinessProbe.httpGet.port",
       R"(Invalid value: "metrics": must be the name of a port)"},
      {"TcpSocketBadPortName",
       [](JobTemplateSpec& t) {
         Readiness(t).mutable_tcp_socket()->set_port("http_port");
       },
       "containers[0].readinessProbe.tcpSocket.port",
       "must contain only alpha-numeric characters (a-z, 0-9), and hyphens"},
      {"HttpGetUnknownScheme",
       [](JobTemplateSpec& t) {
         HTTPGetAction* http = Readiness(t).mutable_http_get();
         http->set_port("http");
         http->set_scheme("FTP");
       },
       "containers[0].readinessProbe.httpGet.scheme",
       R"(Unsupported value: "FTP")"},
      {"HttpGetBadHeader",
       [](JobTemplateSpec& t) {
         HTTPGetAction* http = Readiness(t).mutable_http_get();
         http->set_port("http");
         http->add_http_headers()->set_name("X Probe");
       },
       "containers[0].readinessProbe.httpGet.httpHeaders",
       "a valid HTTP header must consist of alphanumeric characters or '-'"},
      {"NegativePeriod",
       [](JobTemplateSpec& t) {
         Probe& probe = Readiness(t);
         probe.mutable_exec()->add_command("cat");
         probe.set_period_seconds(-1);
       },
       "containers[0].readinessProbe.periodSeconds",
       "must be greater than or equal to 0"},
      {"NegativeInitialDelay",
       [](JobTemplateSpec& t) {
         Probe& probe = Readiness(t);
         probe.mutable_exec()->add_command("cat");
         probe.set_initial_delay_seconds(-1);
       },
       "containers[0].readinessProbe.initialDelaySeconds",
       "must be greater than or equal to 0"},
  };
}
INSTANTIATE_TEST_SUITE_P(Probes, TemplateValidationTest,
                         ::testing::ValuesIn(ProbeCases()), CaseName);

std::vector<Case> SchedulingCases() {
  return {
      {"NodeSelector",
       [](JobTemplateSpec& t) {
         (*Pod(t).mutable_node_selector())["cloud.google.com/gke-accelerator"] =
             "nvidia-h100-80gb";
       }},
      {"NodeSelectorBadKey",
       [](JobTemplateSpec& t) {
         (*Pod(t).mutable_node_selector())["bad key"] = "x";
       },
       "spec.template.spec.nodeSelector[bad key]",
       "name part must consist of alphanumeric characters"},
      {"NodeSelectorBadValue",
       [](JobTemplateSpec& t) {
         (*Pod(t).mutable_node_selector())["pool"] = "a b";
       },
       "spec.template.spec.nodeSelector[pool]",
       R"(Invalid value: "a b": a valid label must be)"},
      {"NodeAffinity",
       [](JobTemplateSpec& t) {
         AddMatchExpression(t, "pool", "In", {"a", "b"});
         AddMatchExpression(t, "example.com/spot", "DoesNotExist", {});
         AddMatchExpression(t, "gpus", "Gt", {"3"});
       }},
      {"NodeAffinityWithoutTerms",
       [](JobTemplateSpec& t) {
         Pod(t)
             .mutable_affinity()
             ->mutable_node_affinity()
             ->mutable_required_during_scheduling_ignored_during_execution();
       },
       "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms",
       "Required value: must have at least one node selector term"},
      {"InWithoutValues",
       [](JobTemplateSpec& t) { AddMatchExpression(t, "pool", "In", {}); },
       "nodeSelectorTerms[0].matchExpressions[0].values",
       "must be specified when `operator` is 'In' or 'NotIn'"},
      {"ExistsWithValues",
       [](JobTemplateSpec& t) {
         AddMatchExpression(t, "pool", "Exists", {"a"});
       },
       "nodeSelectorTerms[0].matchExpressions[0].values",
       "Forbidden: may not be specified when `operator` is 'Exists'"},
      {"GtWithTwoValues",
       [](JobTemplateSpec& t) {
         AddMatchExpression(t, "gpus", "Gt", {"1", "2"});
       },
       "nodeSelectorTerms[0].matchExpressions[0].values",
       "must be specified single value when `operator` is 'Lt' or 'Gt'"},
      {"LtNotInteger",
       [](JobTemplateSpec& t) {
         AddMatchExpression(t, "gpus", "Lt", {"many"});
       },
       "nodeSelectorTerms[0].matchExpressions[0].values[0]",
       R"(Invalid value: "many": must be an integer)"},
      {"UnknownSelectorOperator",
       [](JobTemplateSpec& t) { AddMatchExpression(t, "pool", "Near", {"a"}); },
       "nodeSelectorTerms[0].matchExpressions[0].operator",
       "not a valid selector operator"},
      {"SelectorBadKey",
       [](JobTemplateSpec& t) {
         AddMatchExpression(t, "bad key", "Exists", {});
       },
       "nodeSelectorTerms[0].matchExpressions[0].key",
       "must consist of alphanumeric characters"},
      {"SelectorBadValue",
       [](JobTemplateSpec& t) { AddMatchExpression(t, "pool", "In", {"a b"}); },
       "nodeSelectorTerms[0].matchExpressions[0].values[0]",
       "a valid label must be"},
      {"Tolerations",
       [](JobTemplateSpec& t) {
         AddToleration(t, "nvidia.com/gpu", "Exists", "", "NoSchedule");
         AddToleration(t, "dedicated", "Equal", "ml", "NoExecute")
             .set_toleration_seconds(30);
         AddToleration(t, "pool", "", "a", "");
         AddToleration(t, "", "Exists", "", "");
       }},
      {"UnknownTolerationOperator",
       [](JobTemplateSpec& t) { AddToleration(t, "pool", "Like", "a", ""); },
       "tolerations[0].operator",
       R"(Unsupported value: "Like": supported values: "Equal", "Exists")"},
      {"ExistsWithValue",
       [](JobTemplateSpec& t) { AddToleration(t, "pool", "Exists", "a", ""); },
       "tolerations[0].operator",
       "value must be empty when `operator` is 'Exists'"},
      {"EmptyKeyWithEqual",
       [](JobTemplateSpec& t) { AddToleration(t, "", "Equal", "", ""); },
       "tolerations[0].operator",
       "operator must be Exists when `key` is empty"},
      {"TolerationBadKey",
       [](JobTemplateSpec& t) {
         AddToleration(t, "bad key", "Exists", "", "");
       },
       "tolerations[0].key", "must consist of alphanumeric characters"},
      {"TolerationBadValue",
       [](JobTemplateSpec& t) { AddToleration(t, "pool", "Equal", "a b", ""); },
       "tolerations[0].operator", "a valid label must be"},
      {"UnknownTaintEffect",
       [](JobTemplateSpec& t) {
         AddToleration(t, "pool", "Exists", "", "NoRun");
       },
       "tolerations[0].effect",
       R"(supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"},
      {"TolerationSecondsWithoutNoExecute",
       [](JobTemplateSpec& t) {
         AddToleration(t, "pool", "Exists", "", "NoSchedule")
             .set_toleration_seconds(10);
       },
       "tolerations[0].effect",
       "effect must be 'NoExecute' when `tolerationSeconds` is set"},
  };
}
INSTANTIATE_TEST_SUITE_P(Scheduling, TemplateValidationTest,
                         ::testing::ValuesIn(SchedulingCases()), CaseName);

std::vector<Case> PodCases() {
  return {
      {"PodFields",
       [](JobTemplateSpec& t) {
         Pod(t).set_termination_grace_period_seconds(0);
         Pod(t).set_priority(-5);
         Pod(t).set_hostname("trainer");
         Pod(t).set_subdomain("train");
         Pod(t).set_priority_class_name("high-priority");
         Pod(t).set_node_name("node-1.example.com");
       }},
      {"NegativeTerminationGracePeriod",
       [](JobTemplateSpec& t) {
         Pod(t).set_termination_grace_period_seconds(-1);
       },
       "spec.template.spec.terminationGracePeriodSeconds",
       "must be greater than or equal to 0"},
      {"HostnameNotDnsLabel",
       [](JobTemplateSpec& t) { Pod(t).set_hostname("Host_1"); },
       "spec.template.spec.hostname", "a lowercase RFC 1123 label"},
      {"SubdomainWithDots",
       [](JobTemplateSpec& t) { Pod(t).set_subdomain("a.b"); },
       "spec.template.spec.subdomain", "must not contain dots"},
      {"PriorityClassNameNotSubdomain",
       [](JobTemplateSpec& t) { Pod(t).set_priority_class_name("High"); },
       "spec.template.spec.priorityClassName",
       "a lowercase RFC 1123 subdomain"},
      {"NodeNameNotSubdomain",
       [](JobTemplateSpec& t) { Pod(t).set_node_name("Node_1"); },
       "spec.template.spec.nodeName", "a lowercase RFC 1123 subdomain"},
  };
}
INSTANTIATE_TEST_SUITE_P(Pod, TemplateValidationTest,
                         ::testing::ValuesIn(PodCases()), CaseName);

std::vector<Case> MetadataCases() {
  return {
      {"LabelsAndAnnotations",
       [](JobTemplateSpec& t) {
         (*t.mutable_metadata()->mutable_labels())["app"] = "train";
         (*t.mutable_metadata()->mutable_annotations())
             ["alpha.jobset.sigs.k8s.io/exclusive-topology"] =
                 "cloud.google.com/gke-nodepool";
         ObjectMeta* pod_meta = Job(t).mutable_template_()->mutable_metadata();
         (*pod_meta->mutable_labels())["example.com/team"] = "";
         (*pod_meta->mutable_annotations())["Example.com/Note"] = "any text";
       }},
      {"JobLabelBadKey",
       [](JobTemplateSpec& t) {
         (*t.mutable_metadata()->mutable_labels())["-app"] = "train";
       },
       "template.metadata.labels[-app]",
       R"(Invalid value: "-app": name part must consist of)"},
      {"PodLabelBadValue",
       [](JobTemplateSpec& t) {
         (*Job(t)
               .mutable_template_()
               ->mutable_metadata()
               ->mutable_labels())["app"] = "not valid";
       },
       "spec.template.metadata.labels[app]", "a valid label must be"},
      {"AnnotationBadKey",
       [](JobTemplateSpec& t) {
         (*t.mutable_metadata()->mutable_annotations())["bad key"] = "x";
       },
       "template.metadata.annotations[bad key]",
       "must consist of alphanumeric characters"},
      {"AnnotationsTooLarge",
       [](JobTemplateSpec& t) {
         (*t.mutable_metadata()->mutable_annotations())["note"] =
             std::string(256 * 1024, 'x');
       },
       "template.metadata.annotations",
       "Too long: may not be more than 262144 bytes"},
  };
}
INSTANTIATE_TEST_SUITE_P(Metadata, TemplateValidationTest,
                         ::testing::ValuesIn(MetadataCases()), CaseName);

TEST(ValidateJobTemplateTest, ReportsEveryProblemAtOnce) {
  JobTemplateSpec tmpl = ValidTemplate();
  Job(tmpl).set_parallelism(-1);
  Pod(tmpl).set_restart_policy("Always");
  Main(tmpl).clear_image();
  (*Main(tmpl).mutable_resources()->mutable_requests())["cpu"] = "2";
  Pod(tmpl).add_volumes()->set_name("data");
  AddMount(tmpl, "missing", "/data");
  AddToleration(tmpl, "pool", "Exists", "", "NoRun");
  std::vector<std::string> paths;
  for (const FieldError& error : Validate(tmpl)) paths.push_back(error.path);
  const std::string pod = std::string(kPath) + ".spec.template.spec";
  EXPECT_THAT(
      paths,
      ElementsAre(std::string(kPath) + ".spec.parallelism", pod + ".volumes[0]",
                  pod + ".containers[0].image",
                  pod + ".containers[0].volumeMounts[0].name",
                  pod + ".containers[0].resources.requests[cpu]",
                  pod + ".tolerations[0].effect", pod + ".restartPolicy"));
}

TEST(ValidateJobTemplateTest, PathsStartAtTheGivenPath) {
  JobTemplateSpec tmpl = ValidTemplate();
  Job(tmpl).set_parallelism(-1);
  EXPECT_THAT(Validate(tmpl, ""),
              ElementsAre(Field(&FieldError::path, "spec.parallelism")));
}

// jobsetd's per-pod limits (validation_limits.h): each is checked with a
// template one over it, and the default limits admit the template at it.
struct LimitCase {
  std::string name;
  std::function<void(JobTemplateSpec*, int64_t count)> grow;
  std::function<int64_t(const Limits&)> limit;
  std::string path;
  std::string flag;
};

class TemplateLimitTest : public ::testing::TestWithParam<LimitCase> {};

PodSpec* MutablePodSpec(JobTemplateSpec* tmpl) {
  return tmpl->mutable_spec()->mutable_template_()->mutable_spec();
}

TEST_P(TemplateLimitTest, AtTheLimitPassesAboveIsRefusedNamingIt) {
  const LimitCase& c = GetParam();
  Limits limits;
  limits.max_containers_per_pod = 3;
  limits.max_init_containers_per_pod = 2;
  limits.max_volumes_per_pod = 2;
  limits.max_env_per_container = 4;
  limits.max_ports_per_container = 2;
  limits.max_command_bytes = 64;
  limits.max_label_bytes = 100;
  limits.max_annotation_bytes = 100;
  const int64_t max = c.limit(limits);

  JobTemplateSpec at = ValidTemplate();
  c.grow(&at, max);
  FieldErrors ok;
  ValidateJobTemplate(at, kPath, limits, &ok);
  EXPECT_THAT(ok.errors(), IsEmpty());

  JobTemplateSpec over = ValidTemplate();
  c.grow(&over, max + 1);
  FieldErrors refused;
  ValidateJobTemplate(over, kPath, limits, &refused);
  EXPECT_THAT(
      refused.errors(),
      ElementsAre(
          AllOf(Field(&FieldError::path, c.path),
                Field(&FieldError::message,
                      AllOf(HasSubstr(absl::StrCat(max)),
                            HasSubstr(absl::StrCat("jobsetd --", c.flag)))))));
  // The default limits are far above these.
  EXPECT_THAT(Validate(over), IsEmpty());
}

void AddContainers(JobTemplateSpec* tmpl, int64_t count) {
  PodSpec* pod = MutablePodSpec(tmpl);
  for (int64_t i = pod->containers_size(); i < count; ++i) {
    Container* c = pod->add_containers();
    c->set_name(absl::StrCat("c", i));
    c->set_image("busybox");
  }
}

void AddInitContainers(JobTemplateSpec* tmpl, int64_t count) {
  PodSpec* pod = MutablePodSpec(tmpl);
  for (int64_t i = 0; i < count; ++i) {
    Container* c = pod->add_init_containers();
    c->set_name(absl::StrCat("init", i));
    c->set_image("busybox");
  }
}

void AddVolumes(JobTemplateSpec* tmpl, int64_t count) {
  PodSpec* pod = MutablePodSpec(tmpl);
  for (int64_t i = 0; i < count; ++i) {
    Volume* v = pod->add_volumes();
    v->set_name(absl::StrCat("v", i));
    v->mutable_empty_dir();
  }
}

void AddEnvVars(JobTemplateSpec* tmpl, int64_t count) {
  Container* c = MutablePodSpec(tmpl)->mutable_containers(0);
  for (int64_t i = 0; i < count; ++i) {
    EnvVar* var = c->add_env();
    var->set_name(absl::StrCat("V", i));
    var->set_value("x");
  }
}

void AddPorts(JobTemplateSpec* tmpl, int64_t count) {
  Container* c = MutablePodSpec(tmpl)->mutable_containers(0);
  for (int64_t i = 0; i < count; ++i) {
    c->add_ports()->set_container_port(8000 + i);
  }
}

// Command and args of `bytes` bytes as execve counts them (NULs included).
void SetArgs(JobTemplateSpec* tmpl, int64_t bytes) {
  Container* c = MutablePodSpec(tmpl)->mutable_containers(0);
  c->clear_command();
  c->clear_args();
  c->add_command("python");  // 7 bytes.
  c->add_args(std::string(bytes - 7 - 1, 'a'));
}

// Labels whose keys and values take `bytes` bytes.
void SetPodLabels(JobTemplateSpec* tmpl, int64_t bytes) {
  auto& labels = *tmpl->mutable_spec()
                      ->mutable_template_()
                      ->mutable_metadata()
                      ->mutable_labels();
  labels["app"] = std::string(40, 'v');
  labels["team"] = std::string(bytes - 43 - 4, 't');
}

void SetJobAnnotations(JobTemplateSpec* tmpl, int64_t bytes) {
  (*tmpl->mutable_metadata()->mutable_annotations())["note"] =
      std::string(bytes - 4, 'n');
}

INSTANTIATE_TEST_SUITE_P(
    Limits, TemplateLimitTest,
    ::testing::Values(
        LimitCase{"Containers", AddContainers,
                  [](const Limits& l) { return l.max_containers_per_pod; },
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers",
                  "max_containers_per_pod"},
        LimitCase{"InitContainers", AddInitContainers,
                  [](const Limits& l) { return l.max_init_containers_per_pod; },
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "initContainers",
                  "max_init_containers_per_pod"},
        LimitCase{"Volumes", AddVolumes,
                  [](const Limits& l) { return l.max_volumes_per_pod; },
                  "spec.replicatedJobs[0].template.spec.template.spec.volumes",
                  "max_volumes_per_pod"},
        LimitCase{"Env", AddEnvVars,
                  [](const Limits& l) { return l.max_env_per_container; },
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers[0].env",
                  "max_env_per_container"},
        LimitCase{"Ports", AddPorts,
                  [](const Limits& l) { return l.max_ports_per_container; },
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers[0].ports",
                  "max_ports_per_container"},
        LimitCase{"CommandBytes", SetArgs,
                  [](const Limits& l) { return l.max_command_bytes; },
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers[0].args",
                  "max_command_bytes"},
        LimitCase{"LabelBytes", SetPodLabels,
                  [](const Limits& l) { return l.max_label_bytes; },
                  "spec.replicatedJobs[0].template.spec.template.metadata."
                  "labels",
                  "max_label_bytes"},
        LimitCase{"AnnotationBytes", SetJobAnnotations,
                  [](const Limits& l) { return l.max_annotation_bytes; },
                  "spec.replicatedJobs[0].template.metadata.annotations",
                  "max_annotation_bytes"}),
    [](const ::testing::TestParamInfo<LimitCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::api
