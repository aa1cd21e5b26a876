#include "agent/runtime/pod_input.h"

#include <string>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(PodInputTest, PodUids) {
  for (const std::string& uid : std::vector<std::string>{
           "a", "0f9e-4c2a.b_C", std::string(kMaxPodUidBytes, 'u')}) {
    EXPECT_THAT(CheckPodUid("uid", uid), IsOk()) << uid;
  }
  for (const std::string& uid : std::vector<std::string>{
           std::string(""), std::string("."), std::string(".."),
           std::string("../../.."), std::string("a/b"), std::string("a\0b", 3),
           std::string("a b"), std::string(kMaxPodUidBytes + 1, 'u')}) {
    EXPECT_THAT(CheckPodUid("logRequest.podUid", uid),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("logRequest.podUid"),
                               HasSubstr("200 characters"))))
        << uid;
  }
}

TEST(PodInputTest, DnsNames) {
  EXPECT_THAT(CheckDnsLabel("f", "main-2"), IsOk());
  EXPECT_THAT(CheckDnsLabel("f", std::string(63, 'a')), IsOk());
  for (const std::string& bad :
       std::vector<std::string>{"", "-a", "a-", "A", "a_b", "a.b", "../x",
                                "a/b", std::string(64, 'a')}) {
    EXPECT_THAT(CheckDnsLabel("spec.containers[0].name", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("spec.containers[0].name: invalid value")))
        << bad;
  }
  EXPECT_THAT(CheckDnsSubdomain("f", "w-0.sub"), IsOk());
  for (const std::string& bad : std::vector<std::string>{
           "", "a..b", ".a", "a.", "a b", "a\nb", std::string(254, 'a')}) {
    EXPECT_THAT(CheckDnsSubdomain("hosts[0].names[0]", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("DNS-1123 subdomain")))
        << bad;
  }
}

TEST(PodInputTest, Addresses) {
  for (const char* ok : {"10.0.0.1", "127.0.0.1", "::1", "fe80::1"}) {
    EXPECT_THAT(CheckIpAddress("a", ok), IsOk()) << ok;
  }
  for (const std::string& bad : std::vector<std::string>{
           std::string(""), std::string("localhost"), std::string("10.0.0.1 "),
           std::string("10.0.0.1\n6.6.6.6\tevil"), std::string("10.0.0.1\0", 9),
           std::string("10.0.0.256")}) {
    EXPECT_THAT(CheckIpAddress("hosts[1].address", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("hosts[1].address"),
                               HasSubstr("IPv4 or IPv6"))))
        << bad;
  }
}

TEST(PodInputTest, SubPaths) {
  for (const char* ok : {"", "a", "a/b", "a/./b", "a..b", "..a/b"}) {
    EXPECT_THAT(CheckSubPath("s", ok), IsOk()) << ok;
  }
  for (const std::string& bad : std::vector<std::string>{
           std::string("/etc"), std::string(".."), std::string("a/../.."),
           std::string("a/.."), std::string("a\0b", 3),
           std::string(kMaxSubPathBytes + 1, 'a')}) {
    EXPECT_THAT(CheckSubPath("spec.containers[0].volumeMounts[0].subPath", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("volumeMounts[0].subPath")))
        << bad;
  }
}

api::PodAssignment Valid() {
  api::PodAssignment a;
  a.mutable_pod()->mutable_metadata()->set_uid("u-1");
  a.mutable_pod()->mutable_metadata()->set_name("train-w-0-0-abcde");
  api::PodSpec* spec = a.mutable_pod()->mutable_spec();
  spec->set_hostname("train-w-0-0");
  spec->add_volumes()->set_name("data");
  spec->add_init_containers()->set_name("fetch");
  api::Container* main = spec->add_containers();
  main->set_name("main");
  api::VolumeMount* vm = main->add_volume_mounts();
  vm->set_name("data");
  vm->set_sub_path("part/1");
  api::HostEntry* e = a.add_hosts();
  e->set_address("10.0.0.2");
  e->add_names("train-w-0-1");
  e->add_names("train-w-0-1.sub");
  return a;
}

TEST(PodInputTest, Assignments) {
  EXPECT_THAT(CheckAssignment(Valid()), IsOk());
  struct Case {
    const char* field;
    void (*mutate)(api::PodAssignment*);
  };
  const Case cases[] = {
      {"pod.metadata.uid",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_metadata()->set_uid("../../..");
       }},
      {"pod.spec.hostname",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_spec()->set_hostname("a\nb");
       }},
      {"pod.spec.initContainers[0].name",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_spec()->mutable_init_containers(0)->set_name(
             "../x");
       }},
      {"pod.spec.containers[0].name: invalid value \"fetch\": duplicate",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_spec()->mutable_containers(0)->set_name(
             "fetch");
       }},
      {"pod.spec.volumes[0].name",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_spec()->mutable_volumes(0)->set_name("a/b");
       }},
      {"pod.spec.containers[0].volumeMounts[0].name",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_containers(0)
             ->mutable_volume_mounts(0)
             ->set_name("other");
       }},
      {"pod.spec.containers[0].volumeMounts[0].subPath",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_containers(0)
             ->mutable_volume_mounts(0)
             ->set_sub_path("../../etc");
       }},
      {"pod.status.hostIP",
       [](api::PodAssignment* a) {
         a->mutable_pod()->mutable_status()->set_host_ip("10.0.0.1\nevil");
       }},
      // -1 would be "unchanged" to setresuid: the pod would run as root.
      {"pod.spec.securityContext.runAsUser: -1 is not between 0 and "
       "2147483647",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_security_context()
             ->set_run_as_user(-1);
       }},
      {"pod.spec.securityContext.fsGroup",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_security_context()
             ->set_fs_group(int64_t{1} << 32);
       }},
      {"pod.spec.securityContext.supplementalGroups[1]",
       [](api::PodAssignment* a) {
         auto* sc =
             a->mutable_pod()->mutable_spec()->mutable_security_context();
         sc->add_supplemental_groups(5);
         sc->add_supplemental_groups(-1);
       }},
      {"pod.spec.containers[0].securityContext.runAsGroup",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_containers(0)
             ->mutable_security_context()
             ->set_run_as_group(-1);
       }},
      {"pod.spec.containers[0].securityContext.capabilities.add[0]",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_containers(0)
             ->mutable_security_context()
             ->mutable_capabilities()
             ->add_add("SUPERPOWER");
       }},
      {"hosts[0].address",
       [](api::PodAssignment* a) {
         a->mutable_hosts(0)->set_address("10.0.0.2\n6.6.6.6 evil");
       }},
      {"hosts[0].names[1]",
       [](api::PodAssignment* a) {
         a->mutable_hosts(0)->set_names(1, "x\n6.6.6.6 evil");
       }},
  };
  for (const Case& c : cases) {
    api::PodAssignment a = Valid();
    c.mutate(&a);
    EXPECT_THAT(CheckAssignment(a), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr(c.field)))
        << c.field;
  }
}

TEST(PodInputTest, HostTableLimits) {
  google::protobuf::RepeatedPtrField<api::HostEntry> hosts;
  api::HostEntry* e = hosts.Add();
  e->set_address("10.0.0.1");
  for (int i = 0; i <= kMaxHostNames; ++i) e->add_names("n");
  EXPECT_THAT(
      CheckHostEntries("hosts", hosts),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("hosts[0].names: 17 names, more than the 16")));
  e->mutable_names()->Clear();
  e->clear_address();  // An entry without an address is skipped, not refused.
  EXPECT_THAT(CheckHostEntries("hosts", hosts), IsOk());
}

}  // namespace
}  // namespace jobset::agent
