#include "agent/runtime/cri/cri_config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/security_context.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

namespace v1 = ::runtime::v1;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

api::PodAssignment Assignment() {
  api::PodAssignment a;
  api::Pod* pod = a.mutable_pod();
  pod->mutable_metadata()->set_name("train-0");
  pod->mutable_metadata()->set_namespace_("ml");
  pod->mutable_metadata()->set_uid("u-1");
  api::Container* c = pod->mutable_spec()->add_containers();
  c->set_name("main");
  c->set_image("127.0.0.1:5000/bb:1");
  c->add_command("/bin/sh");
  c->add_args("-c");
  c->add_args("echo hi");
  api::EnvVar* e = c->add_env();
  e->set_name("RANK");
  e->set_value("0");
  return a;
}

TEST(SandboxConfigTest, HostNetworkLabelsAndLogs) {
  const v1::PodSandboxConfig s = SandboxConfig(Assignment(), "/logs/u-1");
  EXPECT_EQ(s.metadata().name(), "train-0");
  EXPECT_EQ(s.metadata().namespace_(), "ml");
  EXPECT_EQ(s.metadata().uid(), "u-1");
  EXPECT_EQ(s.log_directory(), "/logs/u-1");
  EXPECT_EQ(s.labels().at(kPodUidLabel), "u-1");
  const auto& ns = s.linux().security_context().namespace_options();
  EXPECT_EQ(ns.network(), v1::NODE);
  EXPECT_EQ(ns.pid(), v1::CONTAINER);
  EXPECT_EQ(ns.ipc(), v1::POD);
  EXPECT_FALSE(s.linux().security_context().privileged());
  EXPECT_FALSE(s.linux().security_context().has_run_as_user());
}

TEST(SandboxConfigTest, PodSecurityContextAndPrivilegedContainer) {
  api::PodAssignment a = Assignment();
  api::PodSpec* spec = a.mutable_pod()->mutable_spec();
  spec->mutable_security_context()->set_run_as_user(1000);
  spec->mutable_security_context()->set_run_as_group(2000);
  spec->mutable_security_context()->set_fs_group(3000);
  spec->mutable_security_context()->add_supplemental_groups(4000);
  spec->mutable_security_context()->add_supplemental_groups(3000);
  spec->mutable_containers(0)->mutable_security_context()->set_privileged(true);
  spec->set_host_ipc(true);
  const v1::PodSandboxConfig s = SandboxConfig(a, "/l");
  const auto& sc = s.linux().security_context();
  EXPECT_EQ(sc.run_as_user().value(), 1000);
  EXPECT_EQ(sc.run_as_group().value(), 2000);
  EXPECT_THAT(sc.supplemental_groups(), ElementsAre(3000, 4000));
  EXPECT_TRUE(sc.privileged());
  EXPECT_EQ(sc.namespace_options().ipc(), v1::NODE);
}

TEST(ContainerConfigTest, CommandEnvLabelsAndTheImageId) {
  const api::PodAssignment a = Assignment();
  ImageFacts image{"sha256:abc", 1234, ""};
  absl::StatusOr<v1::ContainerConfig> c = ContainerConfigFor(
      a, a.pod().spec().containers(0), false, 2, image, kDefaultPodUid,
      {{"/pod/hosts", "/etc/hosts", false}, {"/data", "/data", true}});
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->metadata().name(), "main");
  EXPECT_EQ(c->metadata().attempt(), 2u);
  EXPECT_EQ(c->image().image(), "sha256:abc");
  EXPECT_THAT(c->command(), ElementsAre("/bin/sh"));
  EXPECT_THAT(c->args(), ElementsAre("-c", "echo hi"));
  ASSERT_EQ(c->envs_size(), 1);
  EXPECT_EQ(c->envs(0).key(), "RANK");
  EXPECT_EQ(c->envs(0).value(), "0");
  EXPECT_EQ(c->labels().at(kPodUidLabel), "u-1");
  EXPECT_EQ(c->labels().at(kContainerLabel), "main");
  EXPECT_FALSE(c->labels().contains(kInitLabel));
  EXPECT_EQ(c->log_path(), "main.log");
  ASSERT_EQ(c->mounts_size(), 2);
  EXPECT_EQ(c->mounts(1).host_path(), "/data");
  EXPECT_TRUE(c->mounts(1).readonly());
  const auto& sc = c->linux().security_context();
  // kubelet names the image's uid; the image's group is not kept.
  EXPECT_EQ(sc.run_as_user().value(), 1234);
  EXPECT_FALSE(sc.has_run_as_group());
  EXPECT_FALSE(sc.no_new_privs());
  EXPECT_FALSE(sc.has_seccomp());
  EXPECT_FALSE(sc.has_apparmor());
  EXPECT_EQ(sc.namespace_options().network(), v1::NODE);
}

TEST(ContainerConfigTest, AcceleratorDevicesAtTheirContainerPaths) {
  const api::PodAssignment a = Assignment();
  AcceleratorDevice gpu;
  gpu.host_path = "/standin/nvidia1";
  gpu.container_path = "/dev/nvidia1";
  AcceleratorDevice vfio;
  vfio.host_path = "/standin/vfio/0";
  vfio.container_path = "/dev/vfio/0";
  AcceleratorSetup accelerators;
  accelerators.devices = {gpu, vfio};
  accelerators.mounts = {{"/standin/libcuda.so.1", "/usr/lib/libcuda.so.1"}};
  accelerators.env = {"FROM_CDI=1"};
  absl::StatusOr<v1::ContainerConfig> c =
      ContainerConfigFor(a, a.pod().spec().containers(0), false, 0,
                         {"sha256:x", 0, ""}, kDefaultPodUid, {}, accelerators);
  ASSERT_THAT(c, IsOk());
  ASSERT_EQ(c->mounts_size(), 1);
  EXPECT_EQ(c->mounts(0).host_path(), "/standin/libcuda.so.1");
  EXPECT_EQ(c->mounts(0).container_path(), "/usr/lib/libcuda.so.1");
  EXPECT_TRUE(c->mounts(0).readonly());
  ASSERT_GE(c->envs_size(), 1);
  EXPECT_EQ(c->envs(c->envs_size() - 1).key(), "FROM_CDI");
  EXPECT_EQ(c->envs(c->envs_size() - 1).value(), "1");
  ASSERT_EQ(c->devices_size(), 2);
  EXPECT_EQ(c->devices(0).host_path(), "/standin/nvidia1");
  EXPECT_EQ(c->devices(0).container_path(), "/dev/nvidia1");
  EXPECT_EQ(c->devices(0).permissions(), "rwm");
  EXPECT_EQ(c->devices(1).host_path(), "/standin/vfio/0");
  EXPECT_EQ(c->devices(1).container_path(), "/dev/vfio/0");
  EXPECT_EQ(c->devices(1).permissions(), "rwm");
  // runtime.v1 ContainerConfig.devices is field 8 (Device: container_path 1,
  // host_path 2, permissions 3): the first bytes on the wire say so.
  v1::ContainerConfig only;
  *only.add_devices() = c->devices(0);
  EXPECT_EQ(only.SerializeAsString().substr(0, 4),
            std::string("\x42\x25\x0a\x0c", 4));
  // No devices unless given: the pod's env names none.
  c = ContainerConfigFor(a, a.pod().spec().containers(0), false, 0,
                         {"sha256:x", 0, ""}, kDefaultPodUid, {});
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->devices_size(), 0);
}

// The user a container runs as: runAsUser; else an image's non-root user
// (kubelet's); else, for an image that names no user or root, the agent's
// --default_pod_uid and its group outside privileged namespaces (as in the
// process and oci runtimes); else root. runAsNonRoot judges that user.
TEST(ContainerConfigTest, User) {
  // Every field but the first two has an initializer, so that a case names
  // only what it sets (GCC's -Wmissing-field-initializers).
  struct UserCase {
    std::string name;
    ImageFacts image;
    std::optional<int64_t> run_as_user = std::nullopt;   // the pod's
    std::optional<int64_t> run_as_group = std::nullopt;  // the container's
    bool run_as_non_root = false;
    std::string level = "";  // PodAssignment.pod_security_level
    int64_t default_pod_uid = kDefaultPodUid;
    // Wanted: the user (a uid, or a name) and group, or the refusal.
    std::optional<int64_t> uid = std::nullopt;
    std::string username = "";
    std::optional<int64_t> gid = std::nullopt;
    std::string error = "";
  };
  const ImageFacts no_user{"sha256:x", {}, ""};
  const UserCase cases[] = {
      {.name = "image without user",
       .image = no_user,
       .uid = 65534,
       .gid = 65534},
      {.name = "image uid 0",
       .image = {"sha256:x", 0, ""},
       .level = "baseline",
       .uid = 65534,
       .gid = 65534},
      {.name = "image user root",
       .image = {"sha256:x", {}, "root"},
       .level = "restricted",
       .uid = 65534,
       .gid = 65534},
      {.name = "another default",
       .image = no_user,
       .default_pod_uid = 2000,
       .uid = 2000,
       .gid = 2000},
      {.name = "runAsGroup kept",
       .image = no_user,
       .run_as_group = 8,
       .uid = 65534,
       .gid = 8},
      // An image that chose a non-root user keeps it; its group is unused.
      {.name = "image uid 1234", .image = {"sha256:x", 1234, ""}, .uid = 1234},
      {.name = "image username",
       .image = {"sha256:x", {}, "trainer"},
       .username = "trainer"},
      // A privileged namespace, or --default_pod_uid=0: kubelet's choice.
      {.name = "privileged", .image = no_user, .level = "privileged", .uid = 0},
      {.name = "privileged, image root",
       .image = {"sha256:x", {}, "root"},
       .level = "privileged",
       .username = "root"},
      {.name = "default 0", .image = no_user, .default_pod_uid = 0, .uid = 0},
      // The spec's user and group win.
      {.name = "runAsUser 0", .image = no_user, .run_as_user = 0, .uid = 0},
      {.name = "runAsUser and group",
       .image = {"sha256:x", 1234, ""},
       .run_as_user = 7,
       .run_as_group = 8,
       .uid = 7,
       .gid = 8},
      // runAsNonRoot judges the user it will run as: the default is not root.
      {.name = "non-root, image without user",
       .image = no_user,
       .run_as_non_root = true,
       .uid = 65534,
       .gid = 65534},
      {.name = "non-root, image root",
       .image = {"sha256:x", {}, "root"},
       .run_as_non_root = true,
       .uid = 65534,
       .gid = 65534},
      {.name = "non-root, image uid 1234",
       .image = {"sha256:x", 1234, ""},
       .run_as_non_root = true,
       .uid = 1234},
      {.name = "non-root, privileged",
       .image = {"sha256:x", 0, ""},
       .run_as_non_root = true,
       .level = "privileged",
       .error = "container has runAsNonRoot and image will run as root (pod: "
                "\"train-0_ml(u-1)\", container: main)"},
      {.name = "non-root, default 0",
       .image = no_user,
       .run_as_non_root = true,
       .default_pod_uid = 0,
       .error = "container has runAsNonRoot and image will run as root"},
      {.name = "non-root, image username",
       .image = {"sha256:x", {}, "trainer"},
       .run_as_non_root = true,
       .error = "image has non-numeric user (trainer), cannot verify user is "
                "non-root"},
      {.name = "non-root, runAsUser 0",
       .image = no_user,
       .run_as_user = 0,
       .run_as_non_root = true,
       .error = "container's runAsUser breaks non-root policy"},
  };
  for (const UserCase& c : cases) {
    SCOPED_TRACE(c.name);
    api::PodAssignment a = Assignment();
    a.set_pod_security_level(c.level);
    api::PodSpec* pod = a.mutable_pod()->mutable_spec();
    if (c.run_as_user.has_value()) {
      pod->mutable_security_context()->set_run_as_user(*c.run_as_user);
    }
    if (c.run_as_group.has_value()) {
      pod->mutable_containers(0)->mutable_security_context()->set_run_as_group(
          *c.run_as_group);
    }
    pod->mutable_security_context()->set_run_as_non_root(c.run_as_non_root);
    absl::StatusOr<v1::ContainerConfig> config = ContainerConfigFor(
        a, pod->containers(0), false, 0, c.image, c.default_pod_uid, {});
    if (!c.error.empty()) {
      EXPECT_THAT(config, StatusIs(absl::StatusCode::kFailedPrecondition,
                                   HasSubstr(c.error)));
      continue;
    }
    ASSERT_THAT(config, IsOk());
    const auto& sc = config->linux().security_context();
    EXPECT_EQ(sc.has_run_as_user(), c.uid.has_value());
    if (c.uid.has_value()) {
      EXPECT_EQ(sc.run_as_user().value(), *c.uid);
    }
    EXPECT_EQ(sc.run_as_username(), c.username);
    EXPECT_EQ(sc.has_run_as_group(), c.gid.has_value());
    if (c.gid.has_value()) {
      EXPECT_EQ(sc.run_as_group().value(), *c.gid);
    }
  }
}

TEST(ContainerConfigTest, PrivilegesCapabilitiesAndProfiles) {
  api::PodAssignment a = Assignment();
  api::Container* spec = a.mutable_pod()->mutable_spec()->mutable_containers(0);
  api::SecurityContext* sc = spec->mutable_security_context();
  sc->set_allow_privilege_escalation(false);
  sc->set_read_only_root_filesystem(true);
  sc->mutable_capabilities()->add_add("NET_ADMIN");
  sc->mutable_capabilities()->add_drop("ALL");
  a.mutable_pod()
      ->mutable_spec()
      ->mutable_security_context()
      ->mutable_seccomp_profile()
      ->set_type("RuntimeDefault");
  absl::StatusOr<v1::ContainerConfig> c = ContainerConfigFor(
      a, *spec, true, 0, {"sha256:x", 0, ""}, kDefaultPodUid, {});
  ASSERT_THAT(c, IsOk());
  const auto& csc = c->linux().security_context();
  EXPECT_TRUE(csc.no_new_privs());
  EXPECT_TRUE(csc.readonly_rootfs());
  EXPECT_THAT(csc.capabilities().add_capabilities(), ElementsAre("NET_ADMIN"));
  EXPECT_THAT(csc.capabilities().drop_capabilities(), ElementsAre("ALL"));
  ASSERT_TRUE(csc.has_seccomp());
  EXPECT_EQ(csc.seccomp().profile_type(), v1::SecurityProfile::RuntimeDefault);
  EXPECT_EQ(c->labels().at(kInitLabel), "true");
}

// Issue 40: NET_RAW leaves the default set, unless the container adds it.
TEST(ContainerConfigTest, NetRawIsDroppedUnlessAdded) {
  api::PodAssignment a = Assignment();
  api::Container* spec = a.mutable_pod()->mutable_spec()->mutable_containers(0);
  auto drops = [&]() -> std::vector<std::string> {
    absl::StatusOr<v1::ContainerConfig> c = ContainerConfigFor(
        a, *spec, false, 0, {"sha256:x", 0, ""}, kDefaultPodUid, {});
    EXPECT_THAT(c, IsOk());
    if (!c.ok()) return {};
    const auto& d =
        c->linux().security_context().capabilities().drop_capabilities();
    return {d.begin(), d.end()};
  };
  EXPECT_THAT(drops(), ElementsAre("NET_RAW"));
  api::SecurityContext* sc = spec->mutable_security_context();
  sc->mutable_capabilities()->add_add("NET_RAW");
  EXPECT_THAT(drops(), ::testing::IsEmpty());
  sc->mutable_capabilities()->set_add(0, "CAP_NET_RAW");
  EXPECT_THAT(drops(), ::testing::IsEmpty());
  sc->mutable_capabilities()->set_add(0, "ALL");
  EXPECT_THAT(drops(), ::testing::IsEmpty());
  sc->mutable_capabilities()->set_add(0, "NET_ADMIN");
  EXPECT_THAT(drops(), ElementsAre("NET_RAW"));
  sc->set_privileged(true);
  EXPECT_THAT(drops(), ::testing::IsEmpty());
}

TEST(ContainerConfigTest, Resources) {
  api::PodAssignment a = Assignment();
  api::Container* spec = a.mutable_pod()->mutable_spec()->mutable_containers(0);
  (*spec->mutable_resources()->mutable_limits())["memory"] = "64Mi";
  (*spec->mutable_resources()->mutable_limits())["cpu"] = "1500m";
  (*spec->mutable_resources()->mutable_requests())["cpu"] = "500m";
  absl::StatusOr<v1::ContainerConfig> c = ContainerConfigFor(
      a, *spec, false, 0, {"sha256:x", 0, ""}, kDefaultPodUid, {});
  ASSERT_THAT(c, IsOk());
  const auto& r = c->linux().resources();
  EXPECT_EQ(r.memory_limit_in_bytes(), 64 << 20);
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.cpu_quota(), 150000);
  EXPECT_EQ(r.cpu_shares(), 512);
  (*spec->mutable_resources()->mutable_limits())["memory"] = "lots";
  EXPECT_THAT(ContainerConfigFor(a, *spec, false, 0, {"sha256:x", 0, ""},
                                 kDefaultPodUid, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("resources.limits.memory: bad quantity "
                                 "\"lots\"")));
}

}  // namespace
}  // namespace jobset::agent::cri
