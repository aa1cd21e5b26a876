#include "scheduler/server/namespace_api.h"

#include <string>

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

api::ApplyNamespaceRequest Request(const std::string& name,
                                   const std::string& enforce = "") {
  api::ApplyNamespaceRequest request;
  request.mutable_namespace_()->mutable_metadata()->set_name(name);
  if (!enforce.empty()) {
    (*request.mutable_namespace_()
          ->mutable_metadata()
          ->mutable_labels())["pod-security.kubernetes.io/enforce"] = enforce;
  }
  return request;
}

class NamespaceApiTest : public ::testing::Test {
 protected:
  store::MemoryStore store_{/*history_events=*/100};
  FakeClock clock_;
  NamespaceApi api_{&store_, &clock_};
};

TEST_F(NamespaceApiTest, ApplyGetListDelete) {
  absl::StatusOr<api::ApplyNamespaceResponse> created =
      api_.Apply(Request("secure", "restricted"));
  ASSERT_THAT(created, IsOk());
  EXPECT_TRUE(created->created());
  EXPECT_FALSE(created->namespace_().metadata().uid().empty());
  EXPECT_FALSE(created->namespace_().metadata().resource_version().empty());

  absl::StatusOr<api::ApplyNamespaceResponse> again =
      api_.Apply(Request("secure", "restricted"));
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->unchanged());
  EXPECT_EQ(again->namespace_().metadata().uid(),
            created->namespace_().metadata().uid());

  absl::StatusOr<api::ApplyNamespaceResponse> changed =
      api_.Apply(Request("secure", "baseline"));
  ASSERT_THAT(changed, IsOk());
  EXPECT_FALSE(changed->created());
  EXPECT_FALSE(changed->unchanged());

  api::ApplyNamespaceRequest create_only = Request("secure");
  create_only.set_create_only(true);
  EXPECT_THAT(api_.Apply(create_only),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "namespaces \"secure\" already exists"));

  absl::StatusOr<api::Namespace> got = api_.Get("secure");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->kind(), "Namespace");
  EXPECT_EQ(got->api_version(), "v1");
  EXPECT_EQ(got->metadata().labels().at("pod-security.kubernetes.io/enforce"),
            "baseline");
  absl::StatusOr<api::NamespacePodSecurity> psa =
      ReadNamespacePodSecurity(&store_, "secure");
  ASSERT_THAT(psa, IsOk());
  EXPECT_EQ(psa->enforce, api::PodSecurityLevel::kBaseline);

  ASSERT_THAT(api_.Apply(Request("open")), IsOk());
  api::ListNamespacesRequest list;
  absl::StatusOr<api::ListNamespacesResponse> all = api_.List(list);
  ASSERT_THAT(all, IsOk());
  ASSERT_EQ(all->items_size(), 2);
  EXPECT_EQ(all->items(0).metadata().name(), "open");
  list.set_label_selector("pod-security.kubernetes.io/enforce");
  absl::StatusOr<api::ListNamespacesResponse> labelled = api_.List(list);
  ASSERT_THAT(labelled, IsOk());
  ASSERT_EQ(labelled->items_size(), 1);
  EXPECT_EQ(labelled->items(0).metadata().name(), "secure");

  ASSERT_THAT(api_.Delete("secure"), IsOk());
  EXPECT_THAT(api_.Get("secure"), StatusIs(absl::StatusCode::kNotFound,
                                           "namespaces \"secure\" not found"));
  EXPECT_THAT(api_.Delete("secure"), StatusIs(absl::StatusCode::kNotFound));
  psa = ReadNamespacePodSecurity(&store_, "secure");
  ASSERT_THAT(psa, IsOk());
  EXPECT_FALSE(psa->enforce.has_value());
}

TEST_F(NamespaceApiTest, DryRunStoresNothing) {
  api::ApplyNamespaceRequest request = Request("dry");
  request.set_dry_run(true);
  ASSERT_THAT(api_.Apply(request), IsOk());
  EXPECT_THAT(api_.Get("dry"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(NamespaceApiTest, BadInput) {
  EXPECT_THAT(api_.Apply(Request("secure", "strict")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.labels[pod-security.kubernetes.io/"
                                 "enforce]: Invalid value: \"strict\"")));
  EXPECT_THAT(
      api_.Get("../jobsets"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.name")));
  EXPECT_THAT(api_.Delete(""), StatusIs(absl::StatusCode::kInvalidArgument));
  api::ApplyNamespaceRequest big = Request("big");
  (*big.mutable_namespace_()->mutable_metadata()->mutable_annotations())["a"] =
      std::string(NamespaceApi::kMaxMetadataBytes, 'x');
  EXPECT_THAT(api_.Apply(big),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("may not be more than 2048 bytes")));
}

TEST_F(NamespaceApiTest, CountIsBounded) {
  for (int i = 0; i < NamespaceApi::kMaxNamespaces; ++i) {
    ASSERT_THAT(api_.Apply(Request("ns-" + std::to_string(i))), IsOk());
  }
  EXPECT_THAT(api_.Apply(Request("one-more")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("the most jobsetd keeps (1000)")));
  // Updating an existing one is still fine.
  EXPECT_THAT(api_.Apply(Request("ns-0", "restricted")), IsOk());
}

TEST_F(NamespaceApiTest, CorruptStoredObjectIsDataLoss) {
  ASSERT_THAT(store_.Commit(store::Batch().Put(store::keys::NamespaceKey("x"),
                                               "\xff\xff not a proto")),
              IsOk());
  EXPECT_THAT(ReadNamespacePodSecurity(&store_, "x"),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace jobset::scheduler
