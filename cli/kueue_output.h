#ifndef JOBSET_CLI_KUEUE_OUTPUT_H_
#define JOBSET_CLI_KUEUE_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/output.h"
#include "google/protobuf/message.h"
#include "proto/kueue.pb.h"
#include "proto/kueue_service.pb.h"

// `get`'s tables of Kueue's objects, with the columns Kueue's CRDs give
// kubectl (additionalPrinterColumns; the "priority 1" ones only with -o
// wide), and access to the one object a KueueObject holds; Kueue's pending
// workloads (its visibility API) as a table and as their document. Pure.
namespace jobset::cli {

// The object `object` holds (a ClusterQueue, ...); null when it holds none.
const google::protobuf::Message* KueueMessage(const api::KueueObject& object);
// The metadata of the object `object` holds; null when it holds none.
api::ObjectMeta* MutableKueueMetadata(api::KueueObject* object);
// Kueue's Kind of the object `object` holds ("ClusterQueue"); "" for none.
std::string KueueKind(const api::KueueObject& object);

// As kubectl prints a custom resource: a column whose JSONPath finds
// nothing is blank. ResourceFlavors and Cohorts have no printer columns:
// NAME AGE.
std::vector<Row> ResourceFlavorRows(const std::vector<api::ResourceFlavor>& rfs,
                                    absl::Time now);
std::vector<Row> CohortRows(const std::vector<api::Cohort>& cohorts,
                            absl::Time now);
// NAME COHORT PENDING WORKLOADS; `wide`: NAME COHORT STRATEGY PENDING
// WORKLOADS ADMITTED WORKLOADS (no AGE: the CRD does not list one).
std::vector<Row> ClusterQueueRows(const std::vector<api::ClusterQueue>& cqs,
                                  bool wide);
// NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS.
std::vector<Row> LocalQueueRows(const std::vector<api::LocalQueue>& lqs);
// NAME VALUE.
std::vector<Row> WorkloadPriorityClassRows(
    const std::vector<api::WorkloadPriorityClass>& classes);
// NAME QUEUE RESERVED IN ADMITTED FINISHED AGE (ADMITTED and FINISHED: the
// status of the condition of that type).
std::vector<Row> WorkloadRows(const std::vector<api::Workload>& workloads,
                              absl::Time now);

// Kueue's visibility API, whose PendingWorkloadsSummary get pendingworkloads
// prints.
inline constexpr char kKueueVisibilityApiVersion[] =
    "visibility.kueue.x-k8s.io/v1beta1";

// NAMESPACE NAME LOCALQUEUE PRIORITY POSITION IN CLUSTERQUEUE POSITION IN
// LOCALQUEUE AGE (positions 0-based, as Kueue's); `wide` adds CLUSTERQUEUE
// REASON MESSAGE (why each waits: its QuotaReserved condition).
std::vector<Row> PendingWorkloadRows(
    const api::PendingWorkloadsSummary& summary, absl::Time now, bool wide);

// The summary in Kueue's shape, as JSON (`yaml` false) or YAML: apiVersion
// visibility.kueue.x-k8s.io/v1beta1, kind PendingWorkloadsSummary, an empty
// metadata and the items, each with its metadata, priority, localQueueName,
// positionInClusterQueue and positionInLocalQueue (written when 0, as Kueue
// writes them), then jobsetd's clusterQueue, reason and message when set.
std::string PendingWorkloadsDocument(
    const api::PendingWorkloadsSummary& summary, bool yaml);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_KUEUE_OUTPUT_H_
