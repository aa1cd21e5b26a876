#include "api/kueue_kinds.h"

#include <cstddef>

#include "absl/strings/string_view.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::StatusIs;

TEST(KueueKindsTest, OneTableOfTheSixKinds) {
  struct Want {
    absl::string_view kind, resource;
    bool namespaced;
    KueueObject::ObjectCase object_case;
  };
  const Want want[] = {
      {"ResourceFlavor", "resourceflavors", false,
       KueueObject::kResourceFlavor},
      {"ClusterQueue", "clusterqueues", false, KueueObject::kClusterQueue},
      {"Cohort", "cohorts", false, KueueObject::kCohort},
      {"LocalQueue", "localqueues", true, KueueObject::kLocalQueue},
      {"WorkloadPriorityClass", "workloadpriorityclasses", false,
       KueueObject::kWorkloadPriorityClass},
      {"Workload", "workloads", true, KueueObject::kWorkload},
  };
  ASSERT_EQ(KueueKinds().size(), 6u);
  for (size_t i = 0; i < KueueKinds().size(); ++i) {
    const KueueKind& kind = KueueKinds()[i];
    EXPECT_EQ(kind.kind, want[i].kind);
    EXPECT_EQ(kind.resource, want[i].resource);
    EXPECT_EQ(kind.namespaced, want[i].namespaced) << kind.kind;
    EXPECT_EQ(kind.object_case, want[i].object_case) << kind.kind;
    EXPECT_EQ(FindKueueKind(kind.kind), &kind);
    EXPECT_EQ(FindKueueKind(kind.object_case), &kind);
    EXPECT_EQ(FindKueueKindByResource(kind.resource), &kind);
  }
  EXPECT_EQ(FindKueueKind("clusterqueue"), nullptr);
  EXPECT_EQ(FindKueueKind("clusterqueues"), nullptr);
  EXPECT_EQ(FindKueueKindByResource("ClusterQueue"), nullptr);
  EXPECT_EQ(FindKueueKind(KueueObject::OBJECT_NOT_SET), nullptr);
  EXPECT_THAT(KueueKindNamed("Queue").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "kind: Unsupported value: \"Queue\": supported values: "
                       "\"ResourceFlavor\", \"ClusterQueue\", \"Cohort\", "
                       "\"LocalQueue\", \"WorkloadPriorityClass\", "
                       "\"Workload\""));
}

TEST(KueueKindsTest, MetadataOfWhicheverKind) {
  KueueObject none;
  EXPECT_EQ(&KueueObjectMeta(none), &ObjectMeta::default_instance());
  EXPECT_EQ(MutableKueueObjectMeta(&none), nullptr);
  for (const KueueKind& kind : KueueKinds()) {
    KueueObject object;
    const google::protobuf::FieldDescriptor* field =
        object.GetDescriptor()->FindFieldByNumber(
            static_cast<int>(kind.object_case));
    ASSERT_NE(field, nullptr) << kind.kind;
    object.GetReflection()->MutableMessage(&object, field);
    ASSERT_EQ(object.object_case(), kind.object_case);
    ObjectMeta* meta = MutableKueueObjectMeta(&object);
    ASSERT_NE(meta, nullptr) << kind.kind;
    meta->set_name("n");
    EXPECT_EQ(KueueObjectMeta(object).name(), "n") << kind.kind;
  }
  KueueObject lq;
  lq.mutable_local_queue()->mutable_metadata()->set_namespace_("team");
  EXPECT_EQ(KueueObjectMeta(lq).namespace_(), "team");
}

}  // namespace
}  // namespace jobset::api
