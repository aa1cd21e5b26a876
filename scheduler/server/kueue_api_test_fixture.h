#ifndef JOBSET_SCHEDULER_SERVER_KUEUE_API_TEST_FIXTURE_H_
#define JOBSET_SCHEDULER_SERVER_KUEUE_API_TEST_FIXTURE_H_

// What kueue_api_test.cc and kueue_api_store_test.cc share: a ClusterQueue
// manifest, request builders and a KueueApi over a MemoryStore. Test-only.

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/kueue_manifest.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/server/kueue_api.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler::kueue_api_test {

using ::jobset::testing::IsOk;

inline constexpr char kClusterQueue[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research, labels: {team: ml}}
spec:
  cohort: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 8}
)";

inline api::KueueObject Parse(absl::string_view manifest) {
  absl::StatusOr<api::KueueObject> object = api::ParseKueueDocument(manifest);
  EXPECT_THAT(object.status(), IsOk()) << manifest;
  return object.value_or(api::KueueObject());
}

inline api::ApplyKueueObjectRequest Request(absl::string_view manifest) {
  api::ApplyKueueObjectRequest request;
  *request.mutable_object() = Parse(manifest);
  return request;
}

inline std::string LocalQueue(absl::string_view name, absl::string_view ns,
                              absl::string_view extra = "") {
  return absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n",
      "metadata: {name: ", name,
      ns.empty() ? std::string() : absl::StrCat(", namespace: ", ns), extra,
      "}\nspec: {clusterQueue: research}\n");
}

inline api::KueueObjectRef Ref(absl::string_view kind, absl::string_view name,
                               absl::string_view ns = "") {
  api::KueueObjectRef ref;
  ref.set_kind(std::string(kind));
  ref.set_namespace_(std::string(ns));
  ref.set_name(std::string(name));
  return ref;
}

inline api::ListKueueObjectsRequest ListOf(absl::string_view kind,
                                           absl::string_view ns = "",
                                           bool all = false) {
  api::ListKueueObjectsRequest request;
  request.set_kind(std::string(kind));
  request.set_namespace_(std::string(ns));
  request.set_all_namespaces(all);
  return request;
}

// "<namespace>/<name>" of each item, as listed.
inline std::vector<std::string> Names(
    const api::ListKueueObjectsResponse& list) {
  std::vector<std::string> names;
  for (const api::KueueObject& item : list.items()) {
    const api::ObjectMeta& meta = api::KueueObjectMeta(item);
    names.push_back(absl::StrCat(meta.namespace_(), "/", meta.name()));
  }
  return names;
}

class KueueApiTest : public ::testing::Test {
 protected:
  // Writes `object` at its key as the controller does (status and all).
  void PutStored(const api::KueueObject& object) {
    ASSERT_THAT(store_.Commit(store::Batch().Put(KueueObjectKey(object),
                                                 EncodeKueueObject(object))),
                IsOk());
  }

  std::optional<store::KeyValue> Raw(const std::string& key) {
    absl::StatusOr<std::optional<store::KeyValue>> kv = store_.Get(key);
    EXPECT_THAT(kv.status(), IsOk());
    return kv.value_or(std::nullopt);
  }

  store::MemoryStore store_{/*history_events=*/100};
  FakeClock clock_;
  KueueApi api_{&store_, &clock_};
};

}  // namespace jobset::scheduler::kueue_api_test

#endif  // JOBSET_SCHEDULER_SERVER_KUEUE_API_TEST_FIXTURE_H_
