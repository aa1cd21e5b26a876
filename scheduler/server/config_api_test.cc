#include "scheduler/server/config_api.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/config_objects.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

api::ApplySecretRequest SecretRequest(const std::string& name,
                                      const std::string& password,
                                      const std::string& ns = "") {
  api::ApplySecretRequest request;
  api::Secret* secret = request.mutable_secret();
  secret->mutable_metadata()->set_name(name);
  secret->mutable_metadata()->set_namespace_(ns);
  (*secret->mutable_string_data())["password"] = password;
  return request;
}

api::ApplyConfigMapRequest ConfigMapRequest(const std::string& name,
                                            const std::string& value) {
  api::ApplyConfigMapRequest request;
  request.mutable_config_map()->mutable_metadata()->set_name(name);
  (*request.mutable_config_map()->mutable_data())["key"] = value;
  return request;
}

class ConfigApiTest : public ::testing::Test {
 protected:
  store::MemoryStore store_{/*history_events=*/100};
  FakeClock clock_;
  SecretApi secrets_{&store_, &clock_};
  ConfigMapApi config_maps_{&store_, &clock_};
};

TEST_F(ConfigApiTest, SecretApplyGetListDelete) {
  absl::StatusOr<api::ApplySecretResponse> created =
      secrets_.Apply(SecretRequest("db", "hunter2"));
  ASSERT_THAT(created, IsOk());
  EXPECT_TRUE(created->created());
  EXPECT_EQ(created->secret().kind(), "Secret");
  EXPECT_EQ(created->secret().type(), "Opaque");
  EXPECT_EQ(created->secret().metadata().namespace_(), "default");
  EXPECT_FALSE(created->secret().metadata().uid().empty());
  // Apply answers without the values.
  EXPECT_TRUE(created->secret().data().empty());
  EXPECT_TRUE(created->secret().string_data().empty());

  // Stored under its key, stringData folded into data.
  absl::StatusOr<std::optional<store::KeyValue>> stored =
      store_.Get(store::keys::SecretKey("default", "db"));
  ASSERT_THAT(stored, IsOk());
  ASSERT_TRUE(stored->has_value());

  absl::StatusOr<api::Secret> got = secrets_.Get("", "db");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->data().at("password"), "hunter2");
  EXPECT_TRUE(got->string_data().empty());
  EXPECT_EQ(got->api_version(), "v1");
  EXPECT_EQ(got->metadata().uid(), created->secret().metadata().uid());

  absl::StatusOr<api::ApplySecretResponse> again =
      secrets_.Apply(SecretRequest("db", "hunter2", "default"));
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->unchanged());
  EXPECT_TRUE(again->secret().data().empty());

  absl::StatusOr<api::ApplySecretResponse> changed =
      secrets_.Apply(SecretRequest("db", "correct-horse"));
  ASSERT_THAT(changed, IsOk());
  EXPECT_FALSE(changed->created());
  EXPECT_FALSE(changed->unchanged());
  EXPECT_EQ(changed->secret().metadata().uid(),
            created->secret().metadata().uid());
  EXPECT_EQ(secrets_.Get("default", "db")->data().at("password"),
            "correct-horse");

  api::ApplySecretRequest create_only = SecretRequest("db", "x");
  create_only.set_create_only(true);
  EXPECT_THAT(secrets_.Apply(create_only),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "secrets \"db\" already exists"));

  ASSERT_THAT(secrets_.Apply(SecretRequest("other", "x", "team-a")), IsOk());
  api::ListSecretsRequest list;
  absl::StatusOr<api::ListSecretsResponse> listed = secrets_.List(list);
  ASSERT_THAT(listed, IsOk());
  ASSERT_EQ(listed->items_size(), 1);
  EXPECT_EQ(listed->items(0).metadata().name(), "db");
  EXPECT_EQ(listed->items(0).data().at("password"), "correct-horse");
  list.set_namespace_("team-a");
  EXPECT_EQ(secrets_.List(list)->items_size(), 1);
  list.set_label_selector("app=x");
  EXPECT_EQ(secrets_.List(list)->items_size(), 0);

  absl::StatusOr<api::Secret> deleted = secrets_.Delete("", "db");
  ASSERT_THAT(deleted, IsOk());
  EXPECT_TRUE(deleted->data().empty());
  EXPECT_THAT(secrets_.Get("", "db"), StatusIs(absl::StatusCode::kNotFound,
                                               "secrets \"db\" not found"));
  EXPECT_THAT(secrets_.Delete("", "db"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ConfigApiTest, ConfigMapApplyGetListDelete) {
  absl::StatusOr<api::ApplyConfigMapResponse> created =
      config_maps_.Apply(ConfigMapRequest("settings", "a"));
  ASSERT_THAT(created, IsOk());
  EXPECT_TRUE(created->created());
  EXPECT_EQ(created->config_map().data().at("key"), "a");
  EXPECT_TRUE(
      config_maps_.Apply(ConfigMapRequest("settings", "a"))->unchanged());
  api::ApplyConfigMapRequest binary = ConfigMapRequest("settings", "b");
  (*binary.mutable_config_map()->mutable_binary_data())["blob"] =
      std::string("\0\xff", 2);
  ASSERT_THAT(config_maps_.Apply(binary), IsOk());
  absl::StatusOr<api::ConfigMap> got = config_maps_.Get("default", "settings");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->kind(), "ConfigMap");
  EXPECT_EQ(got->data().at("key"), "b");
  EXPECT_EQ(got->binary_data().at("blob"), std::string("\0\xff", 2));
  EXPECT_EQ(config_maps_.List(api::ListConfigMapsRequest())->items_size(), 1);
  ASSERT_THAT(config_maps_.Delete("", "settings"), IsOk());
  EXPECT_THAT(config_maps_.Get("", "settings"),
              StatusIs(absl::StatusCode::kNotFound,
                       "configmaps \"settings\" not found"));
}

TEST_F(ConfigApiTest, DryRunStoresNothing) {
  api::ApplySecretRequest request = SecretRequest("dry", "x");
  request.set_dry_run(true);
  ASSERT_THAT(secrets_.Apply(request), IsOk());
  EXPECT_THAT(secrets_.Get("", "dry"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ConfigApiTest, ImmutableObjectsRefuseChangedData) {
  api::ApplyConfigMapRequest request = ConfigMapRequest("frozen", "a");
  request.mutable_config_map()->set_immutable(true);
  ASSERT_THAT(config_maps_.Apply(request), IsOk());
  EXPECT_TRUE(config_maps_.Apply(request)->unchanged());
  (*request.mutable_config_map()->mutable_data())["key"] = "b";
  EXPECT_THAT(config_maps_.Apply(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ConfigMap \"frozen\" is invalid: data: Forbidden: "
                       "field is immutable when `immutable` is set"));
  // Labels may still change.
  (*request.mutable_config_map()->mutable_data())["key"] = "a";
  (*request.mutable_config_map()->mutable_metadata()->mutable_labels())["a"] =
      "b";
  EXPECT_THAT(config_maps_.Apply(request), IsOk());

  api::ApplySecretRequest secret = SecretRequest("frozen", "a");
  secret.mutable_secret()->set_immutable(true);
  ASSERT_THAT(secrets_.Apply(secret), IsOk());
  absl::StatusOr<api::ApplySecretResponse> refused =
      secrets_.Apply(SecretRequest("frozen", "leaked-value"));
  EXPECT_THAT(refused,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("data: Forbidden: field is immutable")));
  EXPECT_THAT(refused.status().message(), Not(HasSubstr("leaked-value")));
  api::ApplySecretRequest retyped = secret;
  retyped.mutable_secret()->set_type("kubernetes.io/basic-auth");
  EXPECT_THAT(secrets_.Apply(retyped),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("type: Invalid value: "
                                 "\"kubernetes.io/basic-auth\": field is "
                                 "immutable")));
}

TEST_F(ConfigApiTest, BadInputNamesTheField) {
  api::ApplySecretRequest bad_key = SecretRequest("s", "x");
  (*bad_key.mutable_secret()->mutable_data())["bad/key"] = "v";
  EXPECT_THAT(secrets_.Apply(bad_key),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("data[bad/key]: Invalid value: \"bad/key\": "
                                 "a valid config key must consist of "
                                 "alphanumeric characters")));
  EXPECT_THAT(secrets_.Apply(SecretRequest("Bad_Name", "x")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name: Invalid value")));
  EXPECT_THAT(secrets_.Apply(SecretRequest("s", "x", "Bad/NS")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace: Invalid value")));
  EXPECT_THAT(
      secrets_.Get("", "../jobsets"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.name")));
  EXPECT_THAT(config_maps_.Delete("a/b", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace")));
  api::ListSecretsRequest list;
  list.set_namespace_("../x");
  EXPECT_THAT(secrets_.List(list), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("namespace \"../x\"")));
  api::ApplySecretRequest huge = SecretRequest("s", "");
  (*huge.mutable_secret()->mutable_data())["a"] =
      std::string(api::kMaxConfigDataBytes + 1, 'x');
  EXPECT_THAT(secrets_.Apply(huge),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("data: Too long: must have at most 1048576 "
                                 "bytes")));
  // Values within Kubernetes' bound, keys and annotations past jobsetd's.
  api::ApplyConfigMapRequest big = ConfigMapRequest("big", "");
  (*big.mutable_config_map()->mutable_data())["a"] =
      std::string(api::kMaxConfigDataBytes, 'x');
  (*big.mutable_config_map()->mutable_metadata()->mutable_annotations())["a"] =
      std::string(255 * 1024, 'y');
  (*big.mutable_config_map()->mutable_metadata()->mutable_labels())["b"] = "c";
  for (int i = 0; i < 2000; ++i) {
    (*big.mutable_config_map()
          ->mutable_data())[absl::StrCat(std::string(240, 'k'), i)] = "";
  }
  EXPECT_THAT(config_maps_.Apply(big),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than 1572864 (jobsetd's limit for one "
                                 "ConfigMap)")));
}

TEST_F(ConfigApiTest, NamespacesAreBounded) {
  for (int i = 0; i < kMaxConfigObjectsPerNamespace; ++i) {
    ASSERT_THAT(
        config_maps_.Apply(ConfigMapRequest(absl::StrCat("cm-", i), "")),
        IsOk());
  }
  EXPECT_THAT(config_maps_.Apply(ConfigMapRequest("one-more", "")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("the most jobsetd keeps per namespace "
                                 "(1000)")));
  // Updating one is still fine, and another namespace has its own bound.
  EXPECT_THAT(config_maps_.Apply(ConfigMapRequest("cm-0", "new")), IsOk());
  EXPECT_THAT(secrets_.Apply(SecretRequest("one-more", "x")), IsOk());

  // Bytes: eight Secrets of 1 MiB fill a namespace.
  for (int i = 0;; ++i) {
    api::ApplySecretRequest request = SecretRequest(absl::StrCat("s", i), "");
    (*request.mutable_secret()->mutable_data())["v"] =
        std::string(api::kMaxConfigDataBytes - 16, 'x');
    absl::StatusOr<api::ApplySecretResponse> applied = secrets_.Apply(request);
    if (!applied.ok()) {
      EXPECT_THAT(applied, StatusIs(absl::StatusCode::kResourceExhausted,
                                    HasSubstr("more than jobsetd keeps per "
                                              "namespace (8388608)")));
      EXPECT_EQ(i, 7);
      break;
    }
    ASSERT_LT(i, 8);
  }
}

TEST_F(ConfigApiTest, CorruptStoredObjectIsDataLoss) {
  ASSERT_THAT(store_.Commit(store::Batch().Put(
                  store::keys::SecretKey("default", "x"), "\xff\xff junk")),
              IsOk());
  EXPECT_THAT(secrets_.Get("", "x"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(secrets_.List(api::ListSecretsRequest()),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace jobset::scheduler
