#include "agent/runtime/security_context.h"

#include <optional>
#include <vector>

#include "api/capabilities.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

uint64_t Cap(const char* name) {
  return uint64_t{1} << *api::CapabilityNumber(name);
}

api::Container ContainerNamed(const char* name) {
  api::Container c;
  c.set_name(name);
  return c;
}

TEST(EffectiveTest, ContainerFieldsOverThePods) {
  api::PodSpec pod;
  api::PodSecurityContext* p = pod.mutable_security_context();
  p->set_run_as_user(1000);
  p->set_run_as_group(1000);
  p->set_run_as_non_root(true);
  p->set_fs_group(2000);
  p->add_supplemental_groups(3000);
  api::Container c = ContainerNamed("main");
  c.mutable_security_context()->set_run_as_user(1001);
  c.mutable_security_context()->set_run_as_non_root(false);
  const EffectiveSecurity sc = Effective(pod, c);
  EXPECT_EQ(sc.run_as_user, 1001);
  EXPECT_EQ(sc.run_as_group, 1000);
  EXPECT_FALSE(sc.run_as_non_root);
  EXPECT_EQ(sc.fs_group, 2000);
  EXPECT_THAT(SupplementaryGroups(sc), ElementsAre(2000, 3000, 1000));
  // Root (0) is a value, not "unset".
  c.mutable_security_context()->set_run_as_user(0);
  EXPECT_EQ(Effective(pod, c).run_as_user, 0);
  // Nothing set anywhere.
  const EffectiveSecurity none = Effective(api::PodSpec(), c);
  EXPECT_FALSE(none.run_as_group.has_value());
  EXPECT_FALSE(none.allow_privilege_escalation.has_value());
  EXPECT_TRUE(
      SupplementaryGroups(Effective(api::PodSpec(), api::Container())).empty());
}

TEST(EffectiveTest, GroupsAreListedOnce) {
  api::PodSpec pod;
  pod.mutable_security_context()->set_fs_group(5);
  pod.mutable_security_context()->add_supplemental_groups(5);
  pod.mutable_security_context()->add_supplemental_groups(6);
  pod.mutable_security_context()->set_run_as_group(6);
  EXPECT_THAT(SupplementaryGroups(Effective(pod, api::Container())),
              ElementsAre(5, 6));
}

TEST(RunAsNonRootTest, KubeletsMessages) {
  api::ObjectMeta meta;
  meta.set_name("w-0");
  meta.set_namespace_("ml");
  meta.set_uid("u1");
  EffectiveSecurity sc;
  EXPECT_THAT(CheckRunAsNonRoot(sc, meta, "main", 0), IsOk());
  sc.run_as_non_root = true;
  EXPECT_THAT(
      CheckRunAsNonRoot(sc, meta, "main", 0),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               "container has runAsNonRoot and image will run as root (pod: "
               "\"w-0_ml(u1)\", container: main)"));
  EXPECT_THAT(CheckRunAsNonRoot(sc, meta, "main", 1000), IsOk());
  sc.run_as_user = 0;
  EXPECT_THAT(CheckRunAsNonRoot(sc, meta, "main", 1000),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "container's runAsUser breaks non-root policy (pod: "
                       "\"w-0_ml(u1)\", container: main)"));
  sc.run_as_user = 1000;
  EXPECT_THAT(CheckRunAsNonRoot(sc, meta, "main", 0), IsOk());
}

TEST(CapabilitiesTest, DefaultIsTheRuntimeDefaultLessNetRaw) {
  // containerd 2's and Docker's set: the 14 of containerd 1 but NET_RAW, so
  // that a pod on the host's network opens no AF_PACKET socket.
  const CapabilitySets sets = ContainerCapabilities({}, 0, 40);
  EXPECT_EQ(sets.bounding, api::DefaultCapabilityMask() & ~Cap("NET_RAW"));
  EXPECT_EQ(sets.permitted, sets.bounding);
  EXPECT_EQ(sets.ambient, 0u);
  EXPECT_EQ(CapabilityNames(sets.bounding).size(), 13u);
  EXPECT_EQ(sets.bounding & Cap("NET_RAW"), 0u);
  EXPECT_NE(sets.bounding & Cap("NET_BIND_SERVICE"), 0u);
  EXPECT_EQ(sets.bounding & Cap("SYS_ADMIN"), 0u);
}

TEST(CapabilitiesTest, NetRawComesBackWhenAdded) {
  EffectiveSecurity sc;
  sc.cap_add = {"NET_RAW"};
  const CapabilitySets sets = ContainerCapabilities(sc, 0, 40);
  EXPECT_EQ(sets.bounding, api::DefaultCapabilityMask());
  EffectiveSecurity prefixed;
  prefixed.cap_add = {"CAP_NET_RAW"};
  EXPECT_NE(ContainerCapabilities(prefixed, 1000, 40).ambient & Cap("NET_RAW"),
            0u);
}

TEST(CapabilitiesTest, DropAllAddOne) {
  EffectiveSecurity sc;
  sc.cap_drop = {"ALL"};
  sc.cap_add = {"NET_BIND_SERVICE"};
  const CapabilitySets root = ContainerCapabilities(sc, 0, 40);
  EXPECT_EQ(root.bounding, Cap("NET_BIND_SERVICE"));
  EXPECT_EQ(root.ambient, 0u);
  const CapabilitySets user = ContainerCapabilities(sc, 1000, 40);
  EXPECT_EQ(user.bounding, Cap("NET_BIND_SERVICE"));
  EXPECT_EQ(user.ambient, Cap("NET_BIND_SERVICE"));
  EXPECT_THAT(CapabilityNames(user.bounding),
              ElementsAre("CAP_NET_BIND_SERVICE"));
}

TEST(CapabilitiesTest, AddsThenDropsWithOrWithoutPrefix) {
  EffectiveSecurity sc;
  sc.cap_add = {"CAP_SYS_PTRACE", "NET_ADMIN"};
  sc.cap_drop = {"NET_RAW", "CAP_NET_ADMIN"};
  const uint64_t set = ContainerCapabilities(sc, 0, 40).bounding;
  EXPECT_NE(set & Cap("SYS_PTRACE"), 0u);
  EXPECT_EQ(set & Cap("NET_ADMIN"), 0u);  // a named drop wins
  EXPECT_EQ(set & Cap("NET_RAW"), 0u);
  EXPECT_NE(set & Cap("CHOWN"), 0u);
}

TEST(CapabilitiesTest, PrivilegedAndAddAllGetEverySupportedOne) {
  EffectiveSecurity sc;
  sc.privileged = true;
  sc.cap_drop = {"ALL"};  // ignored when privileged, as containerd does
  EXPECT_EQ(ContainerCapabilities(sc, 0, 40).bounding, AllCapabilities(40));
  EXPECT_EQ(ContainerCapabilities(sc, 0, 37).bounding, (uint64_t{1} << 38) - 1);
  EffectiveSecurity all;
  all.cap_add = {"ALL"};
  EXPECT_EQ(ContainerCapabilities(all, 0, 40).bounding, AllCapabilities(40));
  // A capability the kernel lacks is never asked for.
  all.cap_add = {"CHECKPOINT_RESTORE"};
  EXPECT_EQ(
      ContainerCapabilities(all, 0, 37).bounding & Cap("CHECKPOINT_RESTORE"),
      0u);
  EXPECT_EQ(AllCapabilities(63), ~uint64_t{0});
}

TEST(CredentialsTest, WhatTheChildApplies) {
  EffectiveSecurity sc;
  sc.run_as_user = 1000;
  sc.run_as_group = 1000;
  sc.fs_group = 2000;
  sc.allow_privilege_escalation = false;
  const ProcessCredentials c = CredentialsFor(sc, 0, 40);
  EXPECT_TRUE(c.set_groups);
  EXPECT_THAT(c.groups, ElementsAre(2000, 1000));
  EXPECT_TRUE(c.set_gid);
  EXPECT_EQ(c.gid, 1000u);
  EXPECT_TRUE(c.set_uid);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_TRUE(c.set_caps);
  EXPECT_TRUE(c.no_new_privs);
  // Kubernetes' default: no no_new_privs unless asked.
  EXPECT_FALSE(CredentialsFor(EffectiveSecurity(), 0, 40).no_new_privs);
  // Nothing asked: nothing changes but the capability sets.
  const ProcessCredentials none = CredentialsFor(EffectiveSecurity(), 0, 40);
  EXPECT_FALSE(none.set_groups || none.set_gid || none.set_uid);
  // A shim that is not root applies no capabilities.
  EXPECT_FALSE(CredentialsFor(sc, 1234, 40).set_caps);
}

TEST(DefaultUserTest, OnlyAPrivilegedNamespaceKeepsTheShimsUser) {
  EXPECT_EQ(DefaultUserFor(65534, "baseline"), 65534);
  EXPECT_EQ(DefaultUserFor(65534, "restricted"), 65534);
  // An older jobsetd sends no level: the safe side.
  EXPECT_EQ(DefaultUserFor(65534, ""), 65534);
  EXPECT_EQ(DefaultUserFor(65534, "Privileged"), 65534);
  EXPECT_EQ(DefaultUserFor(65534, "privileged"), std::nullopt);
  // --default_pod_uid=0: the old behaviour, the shim's own user.
  EXPECT_EQ(DefaultUserFor(0, "baseline"), std::nullopt);
}

TEST(DefaultUserTest, FillsOnlyWhatThePodLeftUnset) {
  api::PodSpec pod;
  api::Container c;
  EffectiveSecurity sc = Effective(pod, c);
  ApplyDefaultUser(65534, &sc);
  EXPECT_EQ(sc.run_as_user, 65534);
  EXPECT_EQ(sc.run_as_group, 65534);  // never the root group
  const ProcessCredentials creds = CredentialsFor(sc, 0, 40);
  EXPECT_TRUE(creds.set_uid && creds.set_gid && creds.set_groups);
  EXPECT_EQ(creds.uid, 65534u);
  EXPECT_EQ(creds.gid, 65534u);
  // The default set bounds a non-root user; none of it is ambient (else
  // DAC_OVERRIDE and SETUID would make the default user root in all but
  // name).
  EXPECT_EQ(creds.caps.bounding,
            api::DefaultCapabilityMask() & ~Cap("NET_RAW"));
  EXPECT_EQ(creds.caps.ambient, 0u);
  // A runAsNonRoot pod without a user passes as the default user.
  sc.run_as_non_root = true;
  EXPECT_THAT(CheckRunAsNonRoot(sc, {}, "c", 0), IsOk());

  // The pod's group, fsGroup and supplementalGroups stay; the pod-level user
  // wins over the default.
  pod.mutable_security_context()->set_run_as_user(1000);
  pod.mutable_security_context()->set_fs_group(2000);
  sc = Effective(pod, c);
  ApplyDefaultUser(65534, &sc);
  EXPECT_EQ(sc.run_as_user, 1000);
  EXPECT_EQ(sc.run_as_group, std::nullopt);
  pod.mutable_security_context()->clear_run_as_user();
  pod.mutable_security_context()->set_run_as_group(3000);
  sc = Effective(pod, c);
  ApplyDefaultUser(65534, &sc);
  EXPECT_EQ(sc.run_as_user, 65534);
  EXPECT_EQ(sc.run_as_group, 3000);
  EXPECT_THAT(SupplementaryGroups(sc), ElementsAre(2000, 3000));
  // The container's explicit root is kept (admission asked privileged).
  c.mutable_security_context()->set_run_as_user(0);
  sc = Effective(pod, c);
  ApplyDefaultUser(65534, &sc);
  EXPECT_EQ(sc.run_as_user, 0);
  // No default: nothing changes.
  sc = Effective(api::PodSpec(), api::Container());
  ApplyDefaultUser(std::nullopt, &sc);
  EXPECT_EQ(sc.run_as_user, std::nullopt);
  EXPECT_EQ(sc.run_as_group, std::nullopt);
}

TEST(CredentialsTest, StepNames) {
  EXPECT_STREQ(CredentialStepName(CredentialStep::kSetGroups), "setgroups");
  EXPECT_STREQ(CredentialStepName(CredentialStep::kNoNewPrivs),
               "PR_SET_NO_NEW_PRIVS");
}

TEST(CapabilityTableTest, NamesAndNumbers) {
  EXPECT_EQ(api::CapabilityNumber("CHOWN"), 0);
  EXPECT_EQ(api::CapabilityNumber("CAP_NET_BIND_SERVICE"), 10);
  EXPECT_EQ(api::CapabilityNumber("SYS_ADMIN"), 21);
  EXPECT_EQ(api::CapabilityNumber("CHECKPOINT_RESTORE"), 40);
  EXPECT_FALSE(api::CapabilityNumber("ALL").has_value());
  EXPECT_FALSE(api::CapabilityNumber("net_admin").has_value());
  EXPECT_FALSE(api::CapabilityNumber("CAP_").has_value());
  EXPECT_EQ(api::CapabilityName(13), "CAP_NET_RAW");
  EXPECT_EQ(api::CapabilityName(41), "");
  EXPECT_GE(LastCapability(), 30);
}

}  // namespace
}  // namespace jobset::agent
