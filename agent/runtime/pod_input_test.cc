#include "agent/runtime/pod_input.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/host_table.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

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

// Valid() with a secret volume "creds" (files "token" and "tls/key") and a
// configMap volume "conf" (file "app.yaml").
api::PodAssignment WithConfigVolumes() {
  api::PodAssignment a = Valid();
  api::PodSpec* spec = a.mutable_pod()->mutable_spec();
  api::Volume* creds = spec->add_volumes();
  creds->set_name("creds");
  creds->mutable_secret()->set_secret_name("creds");
  api::Volume* conf = spec->add_volumes();
  conf->set_name("conf");
  conf->mutable_config_map()->set_name("app");
  api::ConfigVolume* secret = a.add_config_volumes();
  secret->set_name("creds");
  secret->set_secret(true);
  api::ConfigFile* f = secret->add_files();
  f->set_path("token");
  f->set_data("s3cr3t-token");
  f->set_mode(0644);
  f = secret->add_files();
  f->set_path("tls/key");
  f->set_data("s3cr3t-key");
  f->set_mode(0400);
  api::ConfigVolume* config = a.add_config_volumes();
  config->set_name("conf");
  f = config->add_files();
  f->set_path("app.yaml");
  f->set_data("a: 1\n");
  f->set_mode(0644);
  a.add_pull_credentials()->set_server("registry.example.com:5000");
  a.mutable_pull_credentials(0)->set_username("robot");
  a.mutable_pull_credentials(0)->set_password("hunter2");
  return a;
}

api::ConfigFile* SecretFile(api::PodAssignment* a, int i) {
  return a->mutable_config_volumes(0)->mutable_files(i);
}

TEST(PodInputTest, ConfigVolumes) {
  EXPECT_THAT(CheckAssignment(WithConfigVolumes()), IsOk());
  {  // An optional object that is missing: the volume comes without files.
    api::PodAssignment a = WithConfigVolumes();
    a.mutable_config_volumes()->RemoveLast();
    a.mutable_config_volumes(0)->clear_files();
    EXPECT_THAT(CheckAssignment(a), IsOk());
  }
  struct Case {
    const char* message;
    void (*mutate)(api::PodAssignment*);
  };
  const Case cases[] = {
      {"config_volumes[0].name: invalid value \"data\": not a secret volume",
       [](api::PodAssignment* a) {
         a->mutable_config_volumes(0)->set_name("data");
       }},
      {"config_volumes[1].name: invalid value \"creds\": not a configMap "
       "volume",
       [](api::PodAssignment* a) {
         a->mutable_config_volumes(1)->set_name("creds");
       }},
      {"config_volumes[1].name: invalid value \"none\": not a volume of the "
       "pod",
       [](api::PodAssignment* a) {
         a->mutable_config_volumes(1)->set_name("none");
       }},
      {"config_volumes[2].name: invalid value \"creds\": duplicate config "
       "volume",
       [](api::PodAssignment* a) {
         *a->add_config_volumes() = a->config_volumes(0);
       }},
      {"config_volumes[0].files[0].path: invalid value \"/etc/passwd\": "
       "must be a relative path",
       [](api::PodAssignment* a) {
         SecretFile(a, 0)->set_path("/etc/passwd");
       }},
      {"config_volumes[0].files[0].path: invalid value \"../../x\": must not "
       "contain '..'",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("../../x"); }},
      {"config_volumes[0].files[0].path: invalid value \"a/..\"",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("a/.."); }},
      {"config_volumes[0].files[0].path: invalid value \"\": must not be "
       "empty",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path(""); }},
      {"config_volumes[0].files[0].path: invalid value \".\": must not "
       "contain an empty or '.' component",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("."); }},
      {"config_volumes[0].files[0].path: invalid value \"a//b\": must not "
       "contain an empty",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("a//b"); }},
      {"config_volumes[0].files[0].path: invalid value \"a/./b\"",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("a/./b"); }},
      {"config_volumes[0].files[0].path: invalid value \"dir/\"",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("dir/"); }},
      {"config_volumes[0].files[0].path: invalid value \"a\\x00b\": must "
       "not contain NUL",
       [](api::PodAssignment* a) {
         SecretFile(a, 0)->set_path(std::string("a\0b", 3));
       }},
      {"config_volumes[0].files[0].path: invalid value \"aaaa",
       [](api::PodAssignment* a) {
         SecretFile(a, 0)->set_path(std::string(kMaxSubPathBytes + 1, 'a'));
       }},
      {"config_volumes[0].files[1].path: invalid value \"token\": duplicate "
       "path in the volume",
       [](api::PodAssignment* a) { SecretFile(a, 1)->set_path("token"); }},
      {"config_volumes[0].files[1].path: invalid value \"token/key\": "
       "\"token\" is a file of the volume too",
       [](api::PodAssignment* a) { SecretFile(a, 1)->set_path("token/key"); }},
      {"config_volumes[0].files[0].path: invalid value \"tls/key/x\": "
       "\"tls/key\" is a file of the volume too",
       [](api::PodAssignment* a) { SecretFile(a, 0)->set_path("tls/key/x"); }},
      {"config_volumes[0].files[1].mode: invalid value 512: must be a number "
       "between 0 and 0777",
       [](api::PodAssignment* a) { SecretFile(a, 1)->set_mode(01000); }},
      {"config_volumes[0].files[1].mode: invalid value -1",
       [](api::PodAssignment* a) { SecretFile(a, 1)->set_mode(-1); }},
      {"pod.spec.volumes[1]: may not specify more than 1 volume type",
       [](api::PodAssignment* a) {
         a->mutable_pod()
             ->mutable_spec()
             ->mutable_volumes(1)
             ->mutable_host_path()
             ->set_path("/etc");
       }},
  };
  for (const Case& c : cases) {
    api::PodAssignment a = WithConfigVolumes();
    c.mutate(&a);
    const absl::Status s = CheckAssignment(a);
    EXPECT_THAT(
        s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.message;
    // Never the secret's bytes.
    EXPECT_THAT(s.message(), Not(HasSubstr("s3cr3t"))) << c.message;
  }
}

TEST(PodInputTest, ConfigVolumeLimits) {
  api::PodAssignment a = WithConfigVolumes();
  api::ConfigVolume* v = a.mutable_config_volumes(1);
  for (int i = 1; i < kMaxConfigFiles; ++i) {
    api::ConfigFile* f = v->add_files();
    f->set_path("f" + std::to_string(i));
    f->set_mode(0644);
  }
  EXPECT_THAT(CheckAssignment(a), IsOk());
  v->add_files()->set_path("one-more");
  EXPECT_THAT(CheckAssignment(a),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("config_volumes[1].files: 1025 files, more "
                                 "than the 1024 allowed")));
  // The data of every volume counts against one limit.
  a = WithConfigVolumes();
  SecretFile(&a, 0)->set_data(std::string(kMaxConfigBytes / 2, 's'));
  a.mutable_config_volumes(1)->mutable_files(0)->set_data(
      std::string(kMaxConfigBytes / 2, 'c'));
  const absl::Status s = CheckAssignment(a);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("config_volumes[1].files[0].data: the "
                                    "pod's secret and configMap volumes hold "
                                    "more than 8388608 bytes")));
  EXPECT_LT(s.message().size(), 200u);
}

TEST(PodInputTest, PullCredentials) {
  struct Case {
    const char* message;
    void (*mutate)(api::PodAssignment*);
  };
  const Case cases[] = {
      {"pull_credentials[0].server: invalid value \"\": must not be empty",
       [](api::PodAssignment* a) {
         a->mutable_pull_credentials(0)->clear_server();
       }},
      {"pull_credentials[0].server: invalid value \"r\\nevil\": must not "
       "contain NUL or control characters",
       [](api::PodAssignment* a) {
         a->mutable_pull_credentials(0)->set_server("r\nevil");
       }},
      {"pull_credentials[0].server: invalid value \"r\\x00x\"",
       [](api::PodAssignment* a) {
         a->mutable_pull_credentials(0)->set_server(std::string("r\0x", 3));
       }},
      {"pull_credentials[0].server: invalid value \"rrrr",
       [](api::PodAssignment* a) {
         a->mutable_pull_credentials(0)->set_server(
             std::string(kMaxRegistryServerBytes + 1, 'r'));
       }},
      {"pull_credentials: 257 entries, more than the 256 allowed",
       [](api::PodAssignment* a) {
         for (int i = 0; i < kMaxPullCredentials; ++i) {
           *a->add_pull_credentials() = a->pull_credentials(0);
         }
       }},
  };
  for (const Case& c : cases) {
    api::PodAssignment a = WithConfigVolumes();
    c.mutate(&a);
    const absl::Status s = CheckAssignment(a);
    EXPECT_THAT(
        s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.message;
    EXPECT_THAT(s.message(), Not(HasSubstr("robot")));
    EXPECT_THAT(s.message(), Not(HasSubstr("hunter2")));
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

// Valid() with its host table sent as jobsetd sends it: in hosts_table.
api::PodAssignment ValidWithTable() {
  api::PodAssignment a = Valid();
  api::HostTable table;
  table.mutable_hosts()->Swap(a.mutable_hosts());
  a.set_hosts_table(api::EncodeHostTable(table));
  return a;
}

TEST(PodInputTest, ExpandsTheHostTable) {
  api::PodAssignment a = ValidWithTable();
  // Not expanded yet: nothing downstream may read an empty `hosts`.
  EXPECT_THAT(CheckAssignment(a), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("hosts_table: ")));
  ASSERT_THAT(ExpandHostTable(&a), IsOk());
  EXPECT_TRUE(a.hosts_table().empty());
  EXPECT_EQ(a.SerializeAsString(), Valid().SerializeAsString());
  EXPECT_THAT(CheckAssignment(a), IsOk());
  // Expanding again, or an assignment from a jobsetd that sends `hosts`,
  // changes nothing.
  ASSERT_THAT(ExpandHostTable(&a), IsOk());
  EXPECT_EQ(a.SerializeAsString(), Valid().SerializeAsString());
}

TEST(PodInputTest, RefusesABadHostTable) {
  struct Case {
    std::string name;
    std::function<void(api::PodAssignment*)> edit;
    std::string message;
  };
  auto table_of = [](const std::vector<std::string>& addresses, int names) {
    api::HostTable table;
    for (const std::string& address : addresses) {
      api::HostEntry* e = table.add_hosts();
      e->set_address(address);
      for (int i = 0; i < names; ++i) e->add_names("w-0");
    }
    return api::EncodeHostTable(table);
  };
  const std::vector<Case> cases = {
      {"both set",
       [](api::PodAssignment* a) { a->add_hosts()->set_address("10.0.0.9"); },
       "hosts and hosts_table: both set (1 entries and"},
      {"garbage", [](api::PodAssignment* a) { a->set_hosts_table("garbage!"); },
       "hosts_table: 8 bytes are not a host table: not zlib data"},
      {"truncated",
       [](api::PodAssignment* a) {
         a->set_hosts_table(
             a->hosts_table().substr(0, a->hosts_table().size() - 4));
       },
       "are not a host table: the compressed data are cut short"},
      {"bad address",
       [&](api::PodAssignment* a) {
         a->set_hosts_table(table_of({"10.0.0.1", "10.0.0.300"}, 1));
       },
       "hosts_table.hosts[1].address: invalid value \"10.0.0.300\""},
      {"too many names",
       [&](api::PodAssignment* a) {
         a->set_hosts_table(table_of({"10.0.0.1"}, kMaxHostNames + 1));
       },
       "hosts_table.hosts[0].names: 17 names, more than the 16 allowed"},
      {"over the entry limit",
       [&](api::PodAssignment* a) {
         a->set_hosts_table(table_of(
             std::vector<std::string>(kMaxHostEntries + 1, "10.0.0.1"), 1));
       },
       "hosts_table.hosts: 100001 entries, more than the 100000 allowed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::PodAssignment a = ValidWithTable();
    c.edit(&a);
    const std::string before = a.SerializeAsString();
    EXPECT_THAT(
        ExpandHostTable(&a),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
    EXPECT_EQ(a.SerializeAsString(), before) << "left unchanged";
    EXPECT_THAT(CheckAssignment(a), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("hosts_table: ")));
  }
}

TEST(PodInputTest, RefusesAHostTableBomb) {
  // 100 MiB of one byte: a few hundred KiB compressed, past the 64 MiB
  // bound once inflated.
  api::HostTable table;
  table.add_hosts()->add_names(std::string(100 << 20, 'a'));
  api::PodAssignment a = Valid();
  a.clear_hosts();
  a.set_hosts_table(api::EncodeHostTable(table));
  ASSERT_LT(a.hosts_table().size(), 1 << 20);
  EXPECT_THAT(
      ExpandHostTable(&a),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr(absl::StrCat("hosts_table: ", a.hosts_table().size(),
                                       " compressed bytes inflate to "
                                       "more than ",
                                       api::kMaxHostTableBytes)))));
}

}  // namespace
}  // namespace jobset::agent
