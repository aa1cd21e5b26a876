#include "api/pod_config.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;

constexpr char kNs[] = "team";

std::shared_ptr<const Secret> MakeSecret(
    const std::string& name,
    std::initializer_list<std::pair<std::string, std::string>> data,
    const std::string& type = "Opaque") {
  auto s = std::make_shared<Secret>();
  s->mutable_metadata()->set_name(name);
  s->mutable_metadata()->set_namespace_(kNs);
  s->set_type(type);
  for (const auto& [k, v] : data) (*s->mutable_data())[k] = v;
  return s;
}

std::shared_ptr<const ConfigMap> MakeConfigMap(
    const std::string& name,
    std::initializer_list<std::pair<std::string, std::string>> data,
    std::initializer_list<std::pair<std::string, std::string>> binary = {}) {
  auto c = std::make_shared<ConfigMap>();
  c->mutable_metadata()->set_name(name);
  for (const auto& [k, v] : data) (*c->mutable_data())[k] = v;
  for (const auto& [k, v] : binary) (*c->mutable_binary_data())[k] = v;
  return c;
}

PodSpec OneContainer() {
  PodSpec spec;
  Container* c = spec.add_containers();
  c->set_name("main");
  c->set_image("busybox");
  return spec;
}

Container& Main(PodSpec& spec) { return *spec.mutable_containers(0); }

EnvVar& SecretEnv(PodSpec& spec, const std::string& var,
                  const std::string& name, const std::string& key,
                  bool optional = false) {
  EnvVar* e = Main(spec).add_env();
  e->set_name(var);
  SecretKeySelector* ref = e->mutable_value_from()->mutable_secret_key_ref();
  ref->set_name(name);
  ref->set_key(key);
  ref->set_optional(optional);
  return *e;
}

EnvVar& ConfigMapEnv(PodSpec& spec, const std::string& var,
                     const std::string& name, const std::string& key,
                     bool optional = false) {
  EnvVar* e = Main(spec).add_env();
  e->set_name(var);
  ConfigMapKeySelector* ref =
      e->mutable_value_from()->mutable_config_map_key_ref();
  ref->set_name(name);
  ref->set_key(key);
  ref->set_optional(optional);
  return *e;
}

ConfigObjects Objects() {
  ConfigObjects o;
  o.secrets["db"] = MakeSecret("db", {{"password", "hunter2"}, {"user", "u"}});
  o.config_maps["settings"] =
      MakeConfigMap("settings", {{"mode", "fast"}, {"level", "3"}});
  return o;
}

TEST(ResolvePodConfigTest, NothingReferencedResolvesToNothing) {
  absl::StatusOr<PodConfig> config =
      ResolvePodConfig(kNs, OneContainer(), ConfigObjects());
  ASSERT_THAT(config, IsOk());
  EXPECT_THAT(config->env, IsEmpty());
  EXPECT_THAT(config->volumes, IsEmpty());
  EXPECT_THAT(config->pull_credentials, IsEmpty());
}

TEST(ResolvePodConfigTest, KeyRefsBecomeValuesByIndex) {
  PodSpec spec = OneContainer();
  Main(spec).add_env()->set_name("PLAIN");
  SecretEnv(spec, "PASSWORD", "db", "password");
  ConfigMapEnv(spec, "MODE", "settings", "mode");
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
  ASSERT_THAT(config, IsOk());
  const ContainerConfigEnv& env = config->env.at("main");
  EXPECT_THAT(env.values,
              ElementsAre(Pair(1, std::optional<std::string>("hunter2")),
                          Pair(2, std::optional<std::string>("fast"))));
  EXPECT_THAT(env.from, IsEmpty());
}

TEST(ResolvePodConfigTest, MissingObjectsAndKeysInKubeletsWords) {
  struct Case {
    std::function<void(PodSpec&)> mutate;
    std::string message;
  };
  const Case cases[] = {
      {[](PodSpec& s) { SecretEnv(s, "X", "nope", "k"); },
       "secret \"nope\" not found"},
      {[](PodSpec& s) { ConfigMapEnv(s, "X", "nope", "k"); },
       "configmap \"nope\" not found"},
      {[](PodSpec& s) { SecretEnv(s, "X", "db", "missing"); },
       "couldn't find key missing in Secret team/db"},
      {[](PodSpec& s) { ConfigMapEnv(s, "X", "settings", "missing"); },
       "couldn't find key missing in ConfigMap team/settings"},
      {[](PodSpec& s) {
         Main(s).add_env_from()->mutable_secret_ref()->set_name("nope");
       },
       "secret \"nope\" not found"},
      {[](PodSpec& s) {
         Main(s).add_env_from()->mutable_config_map_ref()->set_name("nope");
       },
       "configmap \"nope\" not found"},
  };
  for (const Case& c : cases) {
    PodSpec spec = OneContainer();
    c.mutate(spec);
    absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
    EXPECT_THAT(config, StatusIs(absl::StatusCode::kFailedPrecondition,
                                 ::testing::Eq(c.message)));
  }
}

TEST(ResolvePodConfigTest, OptionalMissingLeavesTheVariableOut) {
  PodSpec spec = OneContainer();
  SecretEnv(spec, "A", "nope", "k", /*optional=*/true);
  SecretEnv(spec, "B", "db", "missing", /*optional=*/true);
  ConfigMapEnv(spec, "C", "nope", "k", /*optional=*/true);
  EnvFromSource* from = Main(spec).add_env_from();
  from->mutable_secret_ref()->set_name("nope");
  from->mutable_secret_ref()->set_optional(true);
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
  ASSERT_THAT(config, IsOk());
  const ContainerConfigEnv& env = config->env.at("main");
  EXPECT_THAT(env.values,
              ElementsAre(Pair(0, std::nullopt), Pair(1, std::nullopt),
                          Pair(2, std::nullopt)));
  EXPECT_THAT(env.from, IsEmpty());
}

TEST(ResolvePodConfigTest, EnvFromPrefixesKeysLaterSourcesWinBadNamesSkipped) {
  ConfigObjects objects = Objects();
  objects.config_maps["more"] =
      MakeConfigMap("more", {{"mode", "slow"}, {"1st", "x"}, {"ok.key", "y"}});
  PodSpec spec = OneContainer();
  Main(spec).add_env_from()->mutable_config_map_ref()->set_name("settings");
  Main(spec).add_env_from()->mutable_config_map_ref()->set_name("more");
  EnvFromSource* prefixed = Main(spec).add_env_from();
  prefixed->set_prefix("DB_");
  prefixed->mutable_secret_ref()->set_name("db");
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, objects);
  ASSERT_THAT(config, IsOk());
  // "1st" makes no valid name (a leading digit) and is skipped, as kubelet
  // does; "more" replaces settings' "mode".
  EXPECT_THAT(config->env.at("main").from,
              ElementsAre(Pair("DB_password", "hunter2"), Pair("DB_user", "u"),
                          Pair("level", "3"), Pair("mode", "slow"),
                          Pair("ok.key", "y")));
}

TEST(ResolvePodConfigTest, InitContainersResolveToo) {
  PodSpec spec = OneContainer();
  Container* init = spec.add_init_containers();
  init->set_name("setup");
  EnvVar* e = init->add_env();
  e->set_name("P");
  e->mutable_value_from()->mutable_secret_key_ref()->set_name("gone");
  e->mutable_value_from()->mutable_secret_key_ref()->set_key("k");
  EXPECT_THAT(ResolvePodConfig(kNs, spec, Objects()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::Eq("secret \"gone\" not found")));
}

Volume& SecretVolume(PodSpec& spec, const std::string& name,
                     const std::string& secret) {
  Volume* v = spec.add_volumes();
  v->set_name(name);
  v->mutable_secret()->set_secret_name(secret);
  return *v;
}

Volume& ConfigMapVolume(PodSpec& spec, const std::string& name,
                        const std::string& config_map) {
  Volume* v = spec.add_volumes();
  v->set_name(name);
  v->mutable_config_map()->set_name(config_map);
  return *v;
}

TEST(ResolvePodConfigTest, VolumesHoldEveryKeyAt0644ByDefault) {
  ConfigObjects objects = Objects();
  objects.config_maps["bin"] = MakeConfigMap(
      "bin", {{"a.txt", "A"}}, {{"b.bin", std::string("\0\1", 2)}});
  PodSpec spec = OneContainer();
  SecretVolume(spec, "creds", "db");
  ConfigMapVolume(spec, "files", "bin");
  spec.add_volumes()->set_name("scratch");  // emptyDir-like: not a config one.
  spec.mutable_volumes(2)->mutable_empty_dir();
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, objects);
  ASSERT_THAT(config, IsOk());
  ASSERT_EQ(config->volumes.size(), 2u);
  const ConfigVolume& creds = config->volumes[0];
  EXPECT_EQ(creds.name(), "creds");
  EXPECT_TRUE(creds.secret());
  ASSERT_EQ(creds.files_size(), 2);
  EXPECT_EQ(creds.files(0).path(), "password");
  EXPECT_EQ(creds.files(0).data(), "hunter2");
  EXPECT_EQ(creds.files(0).mode(), 0644);
  const ConfigVolume& files = config->volumes[1];
  EXPECT_FALSE(files.secret());
  ASSERT_EQ(files.files_size(), 2);
  EXPECT_EQ(files.files(0).path(), "a.txt");
  EXPECT_EQ(files.files(1).path(), "b.bin");
  EXPECT_EQ(files.files(1).data(), std::string("\0\1", 2));
}

TEST(ResolvePodConfigTest, ItemsPickAndRenameKeysWithTheirModes) {
  PodSpec spec = OneContainer();
  Volume& v = SecretVolume(spec, "creds", "db");
  v.mutable_secret()->set_default_mode(0400);
  KeyToPath* a = v.mutable_secret()->add_items();
  a->set_key("password");
  a->set_path("conf/pw");
  a->set_mode(0600);
  KeyToPath* b = v.mutable_secret()->add_items();
  b->set_key("user");
  b->set_path("user.txt");
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
  ASSERT_THAT(config, IsOk());
  const ConfigVolume& creds = config->volumes[0];
  ASSERT_EQ(creds.files_size(), 2);
  EXPECT_EQ(creds.files(0).path(), "conf/pw");
  EXPECT_EQ(creds.files(0).mode(), 0600);
  EXPECT_EQ(creds.files(1).path(), "user.txt");
  EXPECT_EQ(creds.files(1).data(), "u");
  EXPECT_EQ(creds.files(1).mode(), 0400);
}

TEST(ResolvePodConfigTest, VolumeErrorsAndOptional) {
  {
    PodSpec spec = OneContainer();
    SecretVolume(spec, "creds", "nope");
    EXPECT_THAT(ResolvePodConfig(kNs, spec, Objects()),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         ::testing::Eq("MountVolume.SetUp failed for volume "
                                       "\"creds\" : secret \"nope\" not "
                                       "found")));
  }
  {
    PodSpec spec = OneContainer();
    KeyToPath* item = ConfigMapVolume(spec, "cfg", "settings")
                          .mutable_config_map()
                          ->add_items();
    item->set_key("missing");
    item->set_path("m");
    EXPECT_THAT(ResolvePodConfig(kNs, spec, Objects()),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         ::testing::Eq("MountVolume.SetUp failed for volume "
                                       "\"cfg\" : configmap references "
                                       "non-existent config key: missing")));
  }
  {
    PodSpec spec = OneContainer();
    Volume& v = SecretVolume(spec, "creds", "db");
    KeyToPath* item = v.mutable_secret()->add_items();
    item->set_key("missing");
    item->set_path("m");
    EXPECT_THAT(ResolvePodConfig(kNs, spec, Objects()),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("references non-existent secret key: "
                                   "missing")));
    v.mutable_secret()->set_optional(true);
    absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
    ASSERT_THAT(config, IsOk());
    EXPECT_EQ(config->volumes[0].files_size(), 0);
  }
  {
    // A missing optional object: an empty volume.
    PodSpec spec = OneContainer();
    ConfigMapVolume(spec, "cfg", "nope")
        .mutable_config_map()
        ->set_optional(true);
    absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, Objects());
    ASSERT_THAT(config, IsOk());
    ASSERT_EQ(config->volumes.size(), 1u);
    EXPECT_EQ(config->volumes[0].name(), "cfg");
    EXPECT_EQ(config->volumes[0].files_size(), 0);
  }
}

TEST(ResolvePodConfigTest, VolumesComeFirstAsKubeletMountsThemFirst) {
  PodSpec spec = OneContainer();
  SecretEnv(spec, "X", "env-secret", "k");
  SecretVolume(spec, "v", "vol-secret");
  EXPECT_THAT(
      ResolvePodConfig(kNs, spec, Objects()),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("vol-secret")));
}

TEST(ResolvePodConfigTest, BestEffortTreatsEverythingAsOptional) {
  PodSpec spec = OneContainer();
  SecretEnv(spec, "X", "nope", "k");
  SecretEnv(spec, "P", "db", "password");
  SecretVolume(spec, "v", "nope");
  absl::StatusOr<PodConfig> config =
      ResolvePodConfig(kNs, spec, Objects(), /*best_effort=*/true);
  ASSERT_THAT(config, IsOk());
  EXPECT_THAT(config->env.at("main").values,
              ElementsAre(Pair(0, std::nullopt),
                          Pair(1, std::optional<std::string>("hunter2"))));
  EXPECT_EQ(config->volumes[0].files_size(), 0);
}

TEST(ResolvePodConfigTest, TooMuchDataWaitsNamingTheLimit) {
  ConfigObjects objects;
  objects.secrets["big"] =
      MakeSecret("big", {{"a", std::string(kMaxPodConfigBytes / 2 + 1, 'x')}});
  PodSpec spec = OneContainer();
  SecretVolume(spec, "v1", "big");
  SecretVolume(spec, "v2", "big");
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, objects);
  EXPECT_THAT(config, StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("jobsetd sends at most 2097152")));
  EXPECT_THAT(config.status().message(), Not(HasSubstr("xxxx")));
}

TEST(ReferencedConfigObjectsTest, EveryReferenceOnce) {
  PodSpec spec = OneContainer();
  SecretEnv(spec, "A", "s1", "k");
  ConfigMapEnv(spec, "B", "c1", "k");
  Main(spec).add_env_from()->mutable_secret_ref()->set_name("s2");
  Main(spec).add_env_from()->mutable_config_map_ref()->set_name("c1");
  SecretVolume(spec, "v", "s1");
  ConfigMapVolume(spec, "w", "c2");
  spec.add_image_pull_secrets()->set_name("reg");
  const ConfigReferences refs = ReferencedConfigObjects(spec);
  EXPECT_THAT(refs.secrets, ElementsAre("reg", "s1", "s2"));
  EXPECT_THAT(refs.config_maps, ElementsAre("c1", "c2"));
}

// ---- imagePullSecrets ----

std::shared_ptr<const Secret> DockerJson(const std::string& name,
                                         const std::string& json) {
  return MakeSecret(name, {{".dockerconfigjson", json}},
                    "kubernetes.io/dockerconfigjson");
}

TEST(ParseDockerConfigSecretTest, DockerConfigJson) {
  const std::string auth = absl::Base64Escape("alice:s3cret");
  absl::StatusOr<std::vector<RegistryCredential>> creds =
      ParseDockerConfigSecret(
          *DockerJson("reg", R"({"auths": {"127.0.0.1:5000": {"username": "bob",
                      "password": "other", "auth": ")" +
                                 auth + R"("}, "https://index.docker.io/v1/":
                     {"username": "carol", "password": "pw",
                      "email": "c@example.com"}}})"));
  ASSERT_THAT(creds, IsOk());
  ASSERT_EQ(creds->size(), 2u);
  // auth wins over username and password.
  EXPECT_EQ((*creds)[0].server(), "127.0.0.1:5000");
  EXPECT_EQ((*creds)[0].username(), "alice");
  EXPECT_EQ((*creds)[0].password(), "s3cret");
  EXPECT_EQ((*creds)[1].server(), "https://index.docker.io/v1/");
  EXPECT_EQ((*creds)[1].username(), "carol");
  EXPECT_EQ((*creds)[1].password(), "pw");
}

TEST(ParseDockerConfigSecretTest, AuthPaddedOrNotAndPasswordsWithColons) {
  // "u:p:q" is 5 bytes: its base64 has one '='.
  std::string padded = absl::Base64Escape("u:p:q");
  ASSERT_EQ(padded.back(), '=');
  std::string unpadded = padded.substr(0, padded.find('='));
  for (const std::string& auth : {padded, unpadded}) {
    absl::StatusOr<std::vector<RegistryCredential>> creds =
        ParseDockerConfigSecret(*DockerJson(
            "reg", R"({"auths": {"*.example.com/team": {"auth": ")" + auth +
                       R"("}}})"));
    ASSERT_THAT(creds, IsOk()) << auth;
    ASSERT_EQ(creds->size(), 1u);
    EXPECT_EQ((*creds)[0].server(), "*.example.com/team");
    EXPECT_EQ((*creds)[0].username(), "u");
    EXPECT_EQ((*creds)[0].password(), "p:q");
  }
}

TEST(ParseDockerConfigSecretTest, LegacyDockercfg) {
  absl::StatusOr<std::vector<RegistryCredential>> creds =
      ParseDockerConfigSecret(*MakeSecret(
          "old",
          {{".dockercfg",
            R"({"registry.example.com": {"username": "u", "password": "p"}})"}},
          "kubernetes.io/dockercfg"));
  ASSERT_THAT(creds, IsOk());
  ASSERT_EQ(creds->size(), 1u);
  EXPECT_EQ((*creds)[0].server(), "registry.example.com");
  EXPECT_EQ((*creds)[0].username(), "u");
}

TEST(ParseDockerConfigSecretTest, OtherTypesHaveNone) {
  absl::StatusOr<std::vector<RegistryCredential>> creds =
      ParseDockerConfigSecret(*MakeSecret("x", {{"a", "b"}}));
  ASSERT_THAT(creds, IsOk());
  EXPECT_THAT(*creds, IsEmpty());
}

TEST(ParseDockerConfigSecretTest, BadJsonIsAnErrorThatQuotesNothing) {
  const std::string secret = "TOPSECRETVALUE";
  for (const std::string& json :
       {std::string("{\"auths\": {\"r\": ") + secret,  // truncated
        "[\"" + secret + "\"]",                        // not an object
        "{\"" + secret + "\": 1}",                     // no auths
        "{\"auths\": {\"r\": \"" + secret + "\"}}",    // entry not an object
        "{\"auths\": {\"r\": {\"auth\": \"" + secret + "\"}}}"}) {  // no ':'
    absl::StatusOr<std::vector<RegistryCredential>> creds =
        ParseDockerConfigSecret(*DockerJson("reg", json));
    EXPECT_THAT(creds,
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("secret \"reg\" (.dockerconfigjson)")))
        << json;
    EXPECT_THAT(creds.status().message(), Not(HasSubstr(secret))) << json;
  }
}

TEST(ResolvePodConfigTest, PullSecretsCredentialsMissingOnesWarnBadOnesWait) {
  ConfigObjects objects;
  objects.secrets["reg"] =
      DockerJson("reg", R"({"auths": {"r.example.com": {"username": "u",
                 "password": "p"}}})");
  objects.secrets["bad"] = DockerJson("bad", "not json");
  PodSpec spec = OneContainer();
  spec.add_image_pull_secrets()->set_name("reg");
  spec.add_image_pull_secrets()->set_name("gone");
  absl::StatusOr<PodConfig> config = ResolvePodConfig(kNs, spec, objects);
  ASSERT_THAT(config, IsOk());
  ASSERT_EQ(config->pull_credentials.size(), 1u);
  EXPECT_EQ(config->pull_credentials[0].server(), "r.example.com");
  // As kubelet: the pull goes on without a missing one.
  EXPECT_THAT(config->warnings,
              ElementsAre("Unable to retrieve some image pull secrets (gone); "
                          "attempting to pull the image may not succeed."));

  spec.add_image_pull_secrets()->set_name("bad");
  EXPECT_THAT(ResolvePodConfig(kNs, spec, objects),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("secret \"bad\" (.dockerconfigjson): not a "
                                 "JSON object")));
  absl::StatusOr<PodConfig> lenient =
      ResolvePodConfig(kNs, spec, objects, /*best_effort=*/true);
  ASSERT_THAT(lenient, IsOk());
  EXPECT_EQ(lenient->pull_credentials.size(), 1u);
}

}  // namespace
}  // namespace jobset::api
