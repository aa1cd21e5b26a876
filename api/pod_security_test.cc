#include "api/pod_security.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/jobset_builder.h"
#include "api/manifest.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr PodSecurityLevel kPrivileged = PodSecurityLevel::kPrivileged;
constexpr PodSecurityLevel kBaseline = PodSecurityLevel::kBaseline;
constexpr PodSecurityLevel kRestricted = PodSecurityLevel::kRestricted;

PodSpec Spec(const std::string& text) {
  PodSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec))
      << text;
  return spec;
}

// What restricted asks of every container, for a container "c".
constexpr char kRestrictedOk[] = R"pb(
  security_context {
    run_as_non_root: true
    seccomp_profile { type: "RuntimeDefault" }
  }
  containers {
    name: "c"
    security_context {
      allow_privilege_escalation: false
      capabilities { drop: "ALL" }
    }
  }
)pb";

std::string Check(const std::string& spec_text, PodSecurityLevel level,
                  const AllowedHostPaths& allowed = {},
                  const ObjectMeta& meta = {}) {
  std::vector<PodSecurityViolation> found =
      CheckPodSecurity(meta, Spec(spec_text), level, allowed);
  if (found.empty()) return "";
  return FormatPodSecurityViolations(level, found);
}

struct Case {
  std::string name;
  std::string spec;
  std::string baseline;    // The message at baseline ("" passes).
  std::string restricted;  // At restricted, over the spec plus kRestrictedOk.
};

class LevelsTest : public ::testing::TestWithParam<Case> {};

TEST_P(LevelsTest, EachLevel) {
  const Case& c = GetParam();
  EXPECT_EQ(Check(c.spec, kPrivileged), "");
  EXPECT_EQ(Check(c.spec, kBaseline), c.baseline);
  // Restricted checks the spec merged over a restricted-clean pod, so that
  // only the case's own field can fail.
  PodSpec merged = Spec(kRestrictedOk);
  PodSpec own = Spec(c.spec);
  if (own.containers_size() > 0) {
    // The case's container "c" replaces the clean one's fields it sets.
    merged.mutable_containers(0)->MergeFrom(own.containers(0));
    own.clear_containers();
  }
  merged.MergeFrom(own);
  std::vector<PodSecurityViolation> found =
      CheckPodSecurity({}, merged, kRestricted, {});
  EXPECT_EQ(
      found.empty() ? "" : FormatPodSecurityViolations(kRestricted, found),
      c.restricted);
}

const char kB[] = "violates PodSecurity \"baseline:latest\": ";
const char kR[] = "violates PodSecurity \"restricted:latest\": ";

INSTANTIATE_TEST_SUITE_P(
    Checks, LevelsTest,
    ::testing::Values(
        Case{"Clean", R"pb(containers { name: "c" })pb", "", ""},
        Case{"HostNetworkIsOurModel", R"pb(host_network: true
                                           containers { name: "c" })pb",
             "", ""},
        Case{"HostPidIpc", R"pb(host_pid: true
                                host_ipc: true
                                containers { name: "c" })pb",
             std::string(kB) + "host namespaces (hostPID=true, hostIPC=true)",
             std::string(kR) + "host namespaces (hostPID=true, hostIPC=true)"},
        Case{"Privileged",
             R"pb(containers {
                    name: "c"
                    security_context { privileged: true }
                  })pb",
             std::string(kB) + "privileged (container \"c\" must not set "
                               "securityContext.privileged=true)",
             std::string(kR) + "privileged (container \"c\" must not set "
                               "securityContext.privileged=true)"},
        Case{"CapabilitiesBeyondBaseline",
             R"pb(containers {
                    name: "c"
                    security_context {
                      capabilities {
                        add: "SYS_ADMIN"
                        add: "CHOWN"
                        add: "NET_RAW"
                      }
                    }
                  })pb",
             std::string(kB) +
                 "non-default capabilities (container \"c\" must not include "
                 "\"NET_RAW\", \"SYS_ADMIN\" in "
                 "securityContext.capabilities.add)",
             std::string(kR) +
                 "unrestricted capabilities (container \"c\" must not include "
                 "\"CHOWN\", \"NET_RAW\", \"SYS_ADMIN\" in "
                 "securityContext.capabilities.add)"},
        Case{"BaselineCapabilitiesOnly",
             R"pb(containers {
                    name: "c"
                    security_context {
                      capabilities { add: "NET_BIND_SERVICE" add: "KILL" }
                    }
                  })pb",
             "",
             std::string(kR) +
                 "unrestricted capabilities (container \"c\" must not include "
                 "\"KILL\" in securityContext.capabilities.add)"},
        Case{"HostPath",
             R"pb(volumes {
                    name: "data"
                    host_path { path: "/data" }
                  }
                  containers { name: "c" })pb",
             std::string(kB) + "hostPath volumes (volume \"data\")",
             std::string(kR) +
                 "restricted volume types (volume \"data\" uses restricted "
                 "volume type \"hostPath\")"},
        Case{"EmptyDirIsFine",
             R"pb(volumes {
                    name: "shm"
                    empty_dir { medium: "Memory" }
                  }
                  containers { name: "c" })pb",
             "", ""},
        Case{"SecretAndConfigMapVolumesAreRestrictedSafe",
             R"pb(volumes {
                    name: "creds"
                    secret { secret_name: "db" default_mode: 0400 }
                  }
                  volumes {
                    name: "cfg"
                    config_map { name: "settings" }
                  }
                  image_pull_secrets { name: "regcred" }
                  containers {
                    name: "c"
                    env_from { secret_ref { name: "db" } }
                  })pb",
             "", ""},
        Case{"HostPorts",
             R"pb(containers {
                    name: "c"
                    ports { container_port: 80 host_port: 8080 }
                    ports { container_port: 90 host_port: 10 }
                  })pb",
             std::string(kB) +
                 "hostPort (container \"c\" uses hostPorts 10, 8080)",
             std::string(kR) +
                 "hostPort (container \"c\" uses hostPorts 10, 8080)"},
        Case{"ProbeHost",
             R"pb(containers {
                    name: "c"
                    readiness_probe { http_get { host: "10.0.0.1" port: "80" } }
                  })pb",
             std::string(kB) +
                 "probe or lifecycle host (container \"c\" uses probe or "
                 "lifecycle host \"10.0.0.1\")",
             std::string(kR) +
                 "probe or lifecycle host (container \"c\" uses probe or "
                 "lifecycle host \"10.0.0.1\")"},
        Case{"AppArmorUnconfined",
             R"pb(security_context { app_armor_profile { type: "Unconfined" } }
                  containers { name: "c" })pb",
             std::string(kB) +
                 "forbidden AppArmor profile (pod must not set AppArmor "
                 "profile type to \"Unconfined\")",
             std::string(kR) +
                 "forbidden AppArmor profile (pod must not set AppArmor "
                 "profile type to \"Unconfined\")"},
        Case{"AppArmorRuntimeDefault",
             R"pb(containers {
                    name: "c"
                    security_context {
                      app_armor_profile { type: "RuntimeDefault" }
                    }
                  })pb",
             "", ""},
        Case{"SeLinux",
             R"pb(containers {
                    name: "c"
                    security_context {
                      se_linux_options { type: "spc_t" user: "u" }
                    }
                  })pb",
             std::string(kB) +
                 "seLinuxOptions (container \"c\" set forbidden "
                 "securityContext.seLinuxOptions: type \"spc_t\"; user may not "
                 "be set)",
             std::string(kR) +
                 "seLinuxOptions (container \"c\" set forbidden "
                 "securityContext.seLinuxOptions: type \"spc_t\"; user may not "
                 "be set)"},
        Case{"SeLinuxContainerT",
             R"pb(security_context {
                    se_linux_options { type: "container_t" level: "s0:c1" }
                  }
                  containers { name: "c" })pb",
             "", ""},
        Case{"ProcMountUnmasked",
             R"pb(containers {
                    name: "c"
                    security_context { proc_mount: "Unmasked" }
                  })pb",
             std::string(kB) + "procMount (container \"c\" must not set "
                               "securityContext.procMount to \"Unmasked\")",
             std::string(kR) + "procMount (container \"c\" must not set "
                               "securityContext.procMount to \"Unmasked\")"},
        Case{"SeccompUnconfined",
             R"pb(containers {
                    name: "c"
                    security_context { seccomp_profile { type: "Unconfined" } }
                  })pb",
             std::string(kB) +
                 "seccompProfile (container \"c\" must not set "
                 "securityContext.seccompProfile.type to \"Unconfined\")",
             std::string(kR) +
                 "seccompProfile (container \"c\" must not set "
                 "securityContext.seccompProfile.type to \"Unconfined\")"},
        Case{"Sysctls",
             R"pb(security_context {
                    sysctls { name: "net.ipv4.tcp_rmem" value: "4096" }
                    sysctls { name: "kernel.msgmax" value: "1" }
                    sysctls { name: "net.core.somaxconn" value: "1" }
                  }
                  containers { name: "c" })pb",
             std::string(kB) +
                 "forbidden sysctls (kernel.msgmax, net.core.somaxconn)",
             std::string(kR) +
                 "forbidden sysctls (kernel.msgmax, net.core.somaxconn)"},
        Case{"EscalationAllowed",
             R"pb(containers {
                    name: "c"
                    security_context { allow_privilege_escalation: true }
                  })pb",
             "",
             std::string(kR) +
                 "allowPrivilegeEscalation != false (container \"c\" must set "
                 "securityContext.allowPrivilegeEscalation=false)"},
        Case{"RunAsNonRootFalse",
             R"pb(containers {
                    name: "c"
                    security_context { run_as_non_root: false }
                  })pb",
             "",
             std::string(kR) +
                 "runAsNonRoot != true (container \"c\" must not set "
                 "securityContext.runAsNonRoot=false)"},
        // jobsetd's rule, stricter than upstream's baseline: explicit root
        // needs a privileged namespace.
        Case{"RunAsRoot",
             R"pb(security_context { run_as_user: 0 }
                  containers { name: "c" })pb",
             std::string(kB) + "runAsUser=0 (pod must not set runAsUser=0)",
             std::string(kR) + "runAsUser=0 (pod must not set runAsUser=0)"},
        Case{"ContainerRunAsRoot",
             R"pb(containers {
                    name: "c"
                    security_context { run_as_user: 0 }
                  })pb",
             std::string(kB) +
                 "runAsUser=0 (container \"c\" must not set runAsUser=0)",
             std::string(kR) +
                 "runAsUser=0 (container \"c\" must not set runAsUser=0)"},
        Case{"RunAsUser1000",
             R"pb(security_context { run_as_user: 1000 }
                  containers { name: "c" })pb",
             "", ""},
        Case{"SeccompLocalhost",
             R"pb(security_context {
                    seccomp_profile {
                      type: "Localhost"
                      localhost_profile: "p.json"
                    }
                  }
                  containers { name: "c" })pb",
             "", ""}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(PodSecurityTest, RestrictedOrderAndWordingOfSeveral) {
  // A plain pod with an init container: every restricted requirement unmet.
  EXPECT_EQ(
      Check(R"pb(init_containers { name: "init" }
                 containers { name: "c" })pb",
            kRestricted),
      "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != "
      "false (containers \"init\", \"c\" must set "
      "securityContext.allowPrivilegeEscalation=false), unrestricted "
      "capabilities (containers \"init\", \"c\" must set "
      "securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true "
      "(pod or containers \"init\", \"c\" must set "
      "securityContext.runAsNonRoot=true), seccompProfile (pod or containers "
      "\"init\", \"c\" must set securityContext.seccompProfile.type to "
      "\"RuntimeDefault\" or \"Localhost\")");
}

TEST(PodSecurityTest, BaselineOrderOfSeveral) {
  EXPECT_EQ(
      Check(R"pb(host_pid: true
                 volumes {
                   name: "b"
                   host_path { path: "/b" }
                 }
                 volumes {
                   name: "a"
                   host_path { path: "/a" }
                 }
                 init_containers {
                   name: "i"
                   security_context { privileged: true }
                 }
                 containers {
                   name: "c"
                   security_context {
                     privileged: true
                     capabilities { add: "SYS_ADMIN" }
                   }
                 })pb",
            kBaseline),
      "violates PodSecurity \"baseline:latest\": non-default capabilities "
      "(container \"c\" must not include \"SYS_ADMIN\" in "
      "securityContext.capabilities.add), host namespaces (hostPID=true), "
      "hostPath volumes (volumes \"b\", \"a\"), privileged (containers \"i\", "
      "\"c\" must not set securityContext.privileged=true)");
}

TEST(PodSecurityTest, RestrictedContainerMayLeanOnPodLevel) {
  EXPECT_EQ(Check(kRestrictedOk, kRestricted), "");
  // runAsNonRoot on the container instead of the pod also passes.
  EXPECT_EQ(
      Check(R"pb(security_context { seccomp_profile { type: "RuntimeDefault" } }
                 containers {
                   name: "c"
                   security_context {
                     run_as_non_root: true
                     allow_privilege_escalation: false
                     capabilities { drop: "ALL" add: "NET_BIND_SERVICE" }
                   }
                 })pb",
            kRestricted),
      "");
}

TEST(PodSecurityTest, AppArmorAnnotation) {
  ObjectMeta meta;
  (*meta.mutable_annotations())
      ["container.apparmor.security.beta.kubernetes.io/c"] = "unconfined";
  (*meta.mutable_annotations())
      ["container.apparmor.security.beta.kubernetes.io/d"] = "localhost/x";
  EXPECT_EQ(
      Check(R"pb(containers { name: "c" })pb", kBaseline, {}, meta),
      "violates PodSecurity \"baseline:latest\": forbidden AppArmor "
      "profile (annotation must not set AppArmor profile type to "
      "\"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\")");
}

TEST(PodSecurityTest, HostileNamesCannotForgeLines) {
  std::string message = Check(R"pb(containers {
                                     name: "c\n\"x"
                                     security_context { privileged: true }
                                   })pb",
                              kBaseline);
  EXPECT_THAT(message, HasSubstr("container \"c\\x0a\"x\""));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(AllowedHostPathsTest, ComponentsNotStrings) {
  absl::StatusOr<AllowedHostPaths> allowed =
      AllowedHostPaths::Parse("--allowed_host_paths", "/datasets, /scratch/");
  ASSERT_THAT(allowed, IsOk());
  EXPECT_TRUE(allowed->Allows("/datasets"));
  EXPECT_TRUE(allowed->Allows("/datasets/"));
  EXPECT_TRUE(allowed->Allows("/datasets/imagenet/train"));
  EXPECT_TRUE(allowed->Allows("//datasets/./imagenet"));
  EXPECT_TRUE(allowed->Allows("/scratch"));
  EXPECT_FALSE(allowed->Allows("/datasets2"));
  EXPECT_FALSE(allowed->Allows("/datasets/../etc"));
  EXPECT_FALSE(allowed->Allows("/datasets/x/../y"));
  EXPECT_FALSE(allowed->Allows("datasets/x"));
  EXPECT_FALSE(allowed->Allows(""));
  EXPECT_FALSE(allowed->Allows("/"));
  EXPECT_FALSE(allowed->Allows("/etc"));
  EXPECT_FALSE(AllowedHostPaths().Allows("/datasets"));
}

TEST(AllowedHostPathsTest, AllowedPathsPassEveryLevel) {
  absl::StatusOr<AllowedHostPaths> allowed =
      AllowedHostPaths::Parse("--allowed_host_paths", "/datasets");
  ASSERT_THAT(allowed, IsOk());
  const std::string in = R"pb(volumes {
                                name: "data"
                                host_path { path: "/datasets/a" }
                              }
                              containers { name: "c" })pb";
  EXPECT_EQ(Check(in, kBaseline, *allowed), "");
  const std::string out = R"pb(volumes {
                                 name: "data"
                                 host_path { path: "/datasets/../etc" }
                               }
                               containers { name: "c" })pb";
  EXPECT_EQ(Check(out, kBaseline, *allowed),
            "violates PodSecurity \"baseline:latest\": hostPath volumes "
            "(volume \"data\")");
  PodSpec restricted = Spec(kRestrictedOk);
  restricted.MergeFrom(Spec(R"pb(volumes {
                                   name: "data"
                                   host_path { path: "/datasets/a" }
                                 })pb"));
  EXPECT_THAT(CheckPodSecurity({}, restricted, kRestricted, *allowed),
              IsEmpty());
}

TEST(AllowedHostPathsTest, BadEntries) {
  EXPECT_THAT(AllowedHostPaths::Parse("--allowed_host_paths", "datasets"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--allowed_host_paths: Invalid value: "
                                 "\"datasets\": must be an absolute path")));
  EXPECT_THAT(AllowedHostPaths::Parse("--allowed_host_paths", "/a,,/b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be an absolute path")));
  EXPECT_THAT(AllowedHostPaths::Parse("--allowed_host_paths", "/a/../etc"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must not contain '..'")));
  EXPECT_THAT(AllowedHostPaths::Parse("f", ""), IsOk());
}

TEST(ParseTest, Levels) {
  EXPECT_THAT(ParsePodSecurityLevel("--pod_security", "restricted"), IsOk());
  EXPECT_THAT(ParsePodSecurityLevel("--pod_security", "Baseline"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--pod_security: Invalid value: \"Baseline\": "
                                 "must be one of privileged, baseline, "
                                 "restricted")));
}

// Values are quoted by common/quote.h, as every message that echoes input:
// invisible separators and bytes that are not UTF-8 are escaped too.
TEST(ParseTest, HostileValuesAreQuotedAsGoDoes) {
  EXPECT_THAT(ParsePodSecurityLevel("--pod_security", "a\xe2\x80\xa8\xff\"b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(Invalid value: "a\u2028\xff\"b": )")));
}

TEST(ParseTest, NamespaceLabels) {
  google::protobuf::Map<std::string, std::string> labels;
  absl::StatusOr<NamespacePodSecurity> none = ParseNamespacePodSecurity(labels);
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->enforce.has_value());
  EXPECT_FALSE(none->warn.has_value());

  labels["pod-security.kubernetes.io/enforce"] = "restricted";
  labels["pod-security.kubernetes.io/enforce-version"] = "v1.30";
  labels["pod-security.kubernetes.io/warn"] = "baseline";
  labels["pod-security.kubernetes.io/warn-version"] = "latest";
  absl::StatusOr<NamespacePodSecurity> both = ParseNamespacePodSecurity(labels);
  ASSERT_THAT(both, IsOk());
  EXPECT_EQ(both->enforce, kRestricted);
  EXPECT_EQ(both->warn, kBaseline);

  labels["pod-security.kubernetes.io/enforce"] = "strict";
  EXPECT_THAT(
      ParseNamespacePodSecurity(labels),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("metadata.labels[pod-security.kubernetes.io/enforce]: "
                         "Invalid value: \"strict\": must be one of "
                         "privileged, baseline, restricted")));
  labels["pod-security.kubernetes.io/enforce"] = "baseline";
  for (const char* bad : {"1.30", "v1.030", "v2.1", "v1.", "latest "}) {
    labels["pod-security.kubernetes.io/enforce-version"] = bad;
    EXPECT_THAT(ParseNamespacePodSecurity(labels),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("must be \"latest\" or \"v1.x\"")))
        << bad;
  }
}

TEST(JobSetTest, ManifestHostPidAndIpcAreRealFields) {
  absl::StatusOr<std::vector<ManifestObject>> objects = LoadManifest(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: host}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            hostNetwork: true
            hostPID: true
            hostIPC: true
            containers: [{name: c, image: busybox}]
)");
  ASSERT_THAT(objects, IsOk());
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_THAT((*objects)[0].warnings, IsEmpty());
  EXPECT_THAT(CheckJobSetPodSecurity((*objects)[0].jobset, kBaseline, {}),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("violates PodSecurity \"baseline:latest\": "
                                 "host namespaces (hostPID=true, "
                                 "hostIPC=true)")));
}

TEST(JobSetTest, RefusedWithPathAndPermissionDenied) {
  JobSet js = testing::JobSetBuilder("train")
                  .Replicated("driver", 1)
                  .Replicated("workers", 2)
                  .Build();
  EXPECT_THAT(CheckJobSetPodSecurity(js, kBaseline, {}), IsOk());
  Volume* v = js.mutable_spec()
                  ->mutable_replicated_jobs(1)
                  ->mutable_template_()
                  ->mutable_spec()
                  ->mutable_template_()
                  ->mutable_spec()
                  ->add_volumes();
  v->set_name("data");
  v->mutable_host_path()->set_path("/data");
  EXPECT_THAT(
      CheckJobSetPodSecurity(js, kBaseline, {}),
      StatusIs(absl::StatusCode::kPermissionDenied,
               "jobsets.jobset.x-k8s.io \"train\" is forbidden: "
               "spec.replicatedJobs[1].template.spec.template: violates "
               "PodSecurity \"baseline:latest\": hostPath volumes (volume "
               "\"data\")"));
  EXPECT_THAT(CheckJobSetPodSecurity(js, kPrivileged, {}), IsOk());
  EXPECT_THAT(PodSecurityWarnings(js, kBaseline, {}),
              ElementsAre("spec.replicatedJobs[1].template.spec.template: "
                          "would violate PodSecurity \"baseline:latest\": "
                          "hostPath volumes (volume \"data\")"));
}

TEST(JobSetTest, ExplicitRootNeedsPrivilegedWithTheFieldsPath) {
  JobSet js = testing::JobSetBuilder("train").Replicated("workers", 1).Build();
  PodSpec* spec = js.mutable_spec()
                      ->mutable_replicated_jobs(0)
                      ->mutable_template_()
                      ->mutable_spec()
                      ->mutable_template_()
                      ->mutable_spec();
  spec->mutable_containers(0)->mutable_security_context()->set_run_as_user(0);
  const std::string container = spec->containers(0).name();
  EXPECT_THAT(
      CheckJobSetPodSecurity(js, kBaseline, {}),
      StatusIs(absl::StatusCode::kPermissionDenied,
               absl::StrCat("jobsets.jobset.x-k8s.io \"train\" is forbidden: "
                            "spec.replicatedJobs[0].template.spec.template: "
                            "violates PodSecurity \"baseline:latest\": "
                            "runAsUser=0 (container \"",
                            container, "\" must not set runAsUser=0)")));
  EXPECT_THAT(CheckJobSetPodSecurity(js, kPrivileged, {}), IsOk());
  // A non-root user and no user at all pass baseline.
  spec->mutable_containers(0)->mutable_security_context()->set_run_as_user(
      1000);
  EXPECT_THAT(CheckJobSetPodSecurity(js, kBaseline, {}), IsOk());
  spec->mutable_containers(0)->mutable_security_context()->clear_run_as_user();
  EXPECT_THAT(CheckJobSetPodSecurity(js, kBaseline, {}), IsOk());
}

}  // namespace
}  // namespace jobset::api
