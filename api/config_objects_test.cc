#include "api/config_objects.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

Secret MakeSecret(const std::string& name, const std::string& type = "") {
  Secret secret;
  secret.mutable_metadata()->set_name(name);
  secret.mutable_metadata()->set_namespace_("default");
  secret.set_type(type);
  return NormalizeSecret(secret);
}

ConfigMap MakeConfigMap(const std::string& name) {
  ConfigMap config_map;
  config_map.mutable_metadata()->set_name(name);
  config_map.mutable_metadata()->set_namespace_("default");
  return config_map;
}

TEST(ConfigObjectsTest, ParsesKubernetesDocuments) {
  absl::StatusOr<Secret> secret = ParseSecretDocument(R"(
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: team-a
type: kubernetes.io/basic-auth
data:
  username: YWRtaW4=
  password: |
    czNjcjN0
stringData:
  password: override
immutable: true
)");
  ASSERT_THAT(secret, IsOk());
  EXPECT_EQ(secret->data().at("username"), "admin");
  EXPECT_EQ(secret->data().at("password"), "s3cr3t");
  EXPECT_TRUE(secret->immutable());
  Secret normalized = NormalizeSecret(*secret);
  EXPECT_EQ(normalized.data().at("password"), "override");
  EXPECT_TRUE(normalized.string_data().empty());
  EXPECT_THAT(ValidateSecret(normalized), IsOk());
  EXPECT_EQ(NormalizeSecret(Secret()).type(), "Opaque");

  absl::StatusOr<ConfigMap> config_map = ParseConfigMapDocument(R"({
  "apiVersion": "v1", "kind": "ConfigMap",
  "metadata": {"name": "settings"},
  "data": {"game.properties": "lives=3\n"},
  "binaryData": {"blob": "AAEC/w=="}
})");
  ASSERT_THAT(config_map, IsOk());
  EXPECT_EQ(config_map->data().at("game.properties"), "lives=3\n");
  EXPECT_EQ(config_map->binary_data().at("blob"), std::string("\0\1\2\xff", 4));
}

TEST(ConfigObjectsTest, BadDocumentsNameTheField) {
  EXPECT_THAT(ParseSecretDocument("apiVersion: v1\nkind: Secret\nmetadata:\n"
                                  "  name: s\ndata:\n  k: 'not base64!'\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("data[k]: Invalid value: illegal "
                                       "base64 data at input byte 3"),
                             Not(HasSubstr("not base64")))));
  EXPECT_THAT(ParseSecretDocument("apiVersion: v1\nkind: Secret\nmetadata:\n"
                                  "  name: s\ndata:\n  k: YWJj\n  j: YW\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("data[j]: Invalid value: illegal base64")));
  EXPECT_THAT(ParseSecretDocument("apiVersion: v1\nkind: Secret\nmetadata:\n"
                                  "  name: s\nstringdata:\n  k: v\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("did you mean \"stringData\"")));
  EXPECT_THAT(ParseConfigMapDocument("apiVersion: v1\nkind: Secret\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kind: Unsupported value: \"Secret\"")));
  EXPECT_THAT(ParseSecretDocument("apiVersion: v2\nkind: Secret\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("apiVersion: Unsupported value")));
}

TEST(ConfigObjectsTest, KeysAsKubernetes) {
  EXPECT_THAT(IsConfigKey("key.name"), ::testing::IsEmpty());
  EXPECT_THAT(IsConfigKey("KEY_NAME-1"), ::testing::IsEmpty());
  EXPECT_THAT(IsConfigKey(".dockerconfigjson"), ::testing::IsEmpty());
  EXPECT_THAT(IsConfigKey("."), ::testing::ElementsAre("must not be '.'"));
  EXPECT_THAT(IsConfigKey(".."), ::testing::ElementsAre("must not be '..'"));
  EXPECT_THAT(IsConfigKey("..a"),
              ::testing::ElementsAre("must not start with '..'"));
  EXPECT_EQ(IsConfigKey("").size(), 1u);
  EXPECT_EQ(IsConfigKey(std::string(254, 'a')).size(), 1u);

  Secret secret = MakeSecret("s");
  (*secret.mutable_data())["bad/key"] = "x";
  EXPECT_THAT(
      ValidateSecret(secret),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Secret \"s\" is invalid: data[bad/key]: Invalid value: "
               "\"bad/key\": a valid config key must consist of alphanumeric "
               "characters, '-', '_' or '.' (e.g. 'key.name',  or "
               "'KEY_NAME',  or 'key-name', regex used for validation is "
               "'[-._a-zA-Z0-9]+')"));
}

TEST(ConfigObjectsTest, HostileKeysMakeABoundedMessage) {
  ConfigMap config_map = MakeConfigMap("cm");
  for (int i = 0; i < 1000; ++i) {
    (*config_map
          .mutable_data())[absl::StrCat(std::string(10000, 'x'), "/", i)] = "";
  }
  absl::Status status = ValidateConfigMap(config_map);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("data: Invalid value: 990 more "
                                         "invalid keys")));
  EXPECT_LT(status.message().size(), 20000u);
}

TEST(ConfigObjectsTest, NamesAndSizes) {
  EXPECT_THAT(ValidateSecret(MakeSecret("Bad_Name")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name: Invalid value: \"Bad_Name\": "
                                 "a lowercase RFC 1123 subdomain")));
  EXPECT_THAT(ValidateSecret(MakeSecret("a.b-c")), IsOk());
  Secret no_ns = MakeSecret("s");
  no_ns.mutable_metadata()->clear_namespace_();
  EXPECT_THAT(ValidateSecret(no_ns),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace: Required value")));

  Secret big = MakeSecret("big");
  (*big.mutable_data())["a"] = std::string(kMaxConfigDataBytes, 'x');
  EXPECT_THAT(ValidateSecret(big), IsOk());
  (*big.mutable_data())["b"] = "y";
  EXPECT_THAT(ValidateSecret(big),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Secret \"big\" is invalid: data: Too long: must have "
                       "at most 1048576 bytes"));

  ConfigMap config_map = MakeConfigMap("cm");
  (*config_map.mutable_data())["a"] = std::string(kMaxConfigDataBytes, 'x');
  (*config_map.mutable_binary_data())["a"] = "y";
  EXPECT_THAT(ValidateConfigMap(config_map),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("data[a]: Invalid value: \"a\": "
                                       "duplicate of key present in "
                                       "binaryData"),
                             HasSubstr("data: Too long"))));
}

TEST(ConfigObjectsTest, SecretTypesNeedTheirKeys) {
  struct Case {
    std::string type;
    std::map<std::string, std::string> data;
    std::string error;  // Empty: valid.
  };
  const Case cases[] = {
      {"Opaque", {}, ""},
      {"example.com/custom", {}, ""},
      {"kubernetes.io/dockerconfigjson",
       {},
       "data[.dockerconfigjson]: Required value"},
      {"kubernetes.io/dockerconfigjson",
       {{".dockerconfigjson", "{\"auths\":{\"r.io\":{\"auth\":\"eDp5\"}}}"}},
       ""},
      {"kubernetes.io/dockerconfigjson",
       {{".dockerconfigjson", "{\"auth\": 1}"}},
       "data[.dockerconfigjson]: Invalid value: \"<secret contents "
       "redacted>\": must be a JSON object with an \"auths\" object"},
      {"kubernetes.io/dockerconfigjson",
       {{".dockerconfigjson", "hunter2 {"}},
       "must be a JSON object with"},
      {"kubernetes.io/dockercfg", {}, "data[.dockercfg]: Required value"},
      {"kubernetes.io/dockercfg", {{".dockercfg", "[1]"}}, "JSON object"},
      {"kubernetes.io/dockercfg", {{".dockercfg", "{\"r.io\":{}}"}}, ""},
      {"kubernetes.io/basic-auth",
       {},
       "data[username]: Required value; data[password]: Required value"},
      {"kubernetes.io/basic-auth", {{"password", ""}}, ""},
      {"kubernetes.io/ssh-auth",
       {{"ssh-privatekey", ""}},
       "data[ssh-privatekey]: Required value"},
      {"kubernetes.io/ssh-auth", {{"ssh-privatekey", "k"}}, ""},
      {"kubernetes.io/tls", {{"tls.crt", "c"}}, "data[tls.key]: Required"},
      {"kubernetes.io/tls", {{"tls.crt", "c"}, {"tls.key", "k"}}, ""},
      {"kubernetes.io/service-account-token",
       {},
       "metadata.annotations[kubernetes.io/service-account.name]: Required"},
  };
  for (const Case& c : cases) {
    Secret secret = MakeSecret("s", c.type);
    for (const auto& [k, v] : c.data) (*secret.mutable_data())[k] = v;
    if (c.error.empty()) {
      EXPECT_THAT(ValidateSecret(secret), IsOk()) << c.type;
    } else {
      absl::Status status = ValidateSecret(secret);
      EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr(c.error)))
          << c.type;
      // No value is ever quoted back.
      EXPECT_THAT(status.message(), Not(HasSubstr("hunter2")));
    }
  }
}

TEST(ConfigObjectsTest, UpdatesKeepTypeAndImmutableData) {
  Secret old = MakeSecret("s");
  (*old.mutable_data())["k"] = "v1";
  Secret updated = old;
  (*updated.mutable_data())["k"] = "v2";
  EXPECT_THAT(ValidateSecretUpdate(updated, old), IsOk());
  updated.set_type("kubernetes.io/tls");
  EXPECT_THAT(ValidateSecretUpdate(updated, old),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("type: Invalid value: \"kubernetes.io/tls\": "
                                 "field is immutable")));
  old.set_immutable(true);
  updated = old;
  EXPECT_THAT(ValidateSecretUpdate(updated, old), IsOk());
  (*updated.mutable_data())["k"] = "v2";
  updated.clear_immutable();
  EXPECT_THAT(
      ValidateSecretUpdate(updated, old),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Secret \"s\" is invalid: immutable: Forbidden: field is "
               "immutable when `immutable` is set; data: Forbidden: field is "
               "immutable when `immutable` is set"));

  ConfigMap old_cm = MakeConfigMap("cm");
  old_cm.set_immutable(true);
  (*old_cm.mutable_binary_data())["b"] = "1";
  ConfigMap new_cm = old_cm;
  EXPECT_THAT(ValidateConfigMapUpdate(new_cm, old_cm), IsOk());
  (*new_cm.mutable_binary_data())["b"] = "2";
  EXPECT_THAT(ValidateConfigMapUpdate(new_cm, old_cm),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ConfigMap \"cm\" is invalid: binaryData: Forbidden: "
                       "field is immutable when `immutable` is set"));
  // Not immutable: anything may change.
  old_cm.clear_immutable();
  EXPECT_THAT(ValidateConfigMapUpdate(new_cm, old_cm), IsOk());
}

}  // namespace
}  // namespace jobset::api
