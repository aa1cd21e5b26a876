#ifndef JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_
#define JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_

// The JobSets of testdata/, loaded for the tests of this package, and the
// §8.1 flavors as text protos. Test-only.

#include <string>

#include "proto/jobset.pb.h"

namespace jobset::scheduler::queues::testing {

// Returns testdata/<file> loaded with api::LoadManifest (one JobSet);
// records a test failure and returns an empty JobSet when it does not load.
api::JobSet LoadTestData(const std::string& file);

// Returns kueue-semantics §8.5 (testdata/llm-pretrain.yaml): a CPU driver
// plus GPU workers, queued in research-queue with priority class
// experiment. No uid, no creationTimestamp.
inline api::JobSet LlmPretrain() { return LoadTestData("llm-pretrain.yaml"); }

// kueue-semantics §8.1's ResourceFlavors as stored, in text proto form.
inline constexpr char kOnDemand[] = R"pb(
  api_version: "kueue.x-k8s.io/v1beta1"
  kind: "ResourceFlavor"
  metadata { name: "on-demand" }
  spec { node_labels { key: "cloud.example.com/capacity" value: "on-demand" } }
)pb";
inline constexpr char kSpot[] = R"pb(
  api_version: "kueue.x-k8s.io/v1beta1"
  kind: "ResourceFlavor"
  metadata { name: "spot" }
  spec {
    node_labels { key: "cloud.example.com/capacity" value: "spot" }
    node_taints {
      key: "cloud.example.com/spot"
      value: "true"
      effect: "NoSchedule"
    }
    tolerations {
      key: "cloud.example.com/spot"
      operator: "Equal"
      value: "true"
      effect: "NoSchedule"
    }
  }
)pb";
inline constexpr char kGpuH100[] = R"pb(
  api_version: "kueue.x-k8s.io/v1beta1"
  kind: "ResourceFlavor"
  metadata { name: "gpu-h100" }
  spec {
    node_labels { key: "gpu.example.com/model" value: "h100" }
    node_taints { key: "nvidia.com/gpu" value: "present" effect: "NoSchedule" }
  }
)pb";

}  // namespace jobset::scheduler::queues::testing

#endif  // JOBSET_SCHEDULER_QUEUES_JOBSET_TESTDATA_H_
