#include "cli/kueue_output.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_quote.h"
#include "google/protobuf/descriptor.h"

namespace jobset::cli {
namespace {

std::string Age(const api::ObjectMeta& meta, absl::Time now) {
  return FormatAge(ToTime(meta.creation_timestamp()), now);
}

// A kind without printer columns: kubectl's NAME AGE.
template <typename T>
std::vector<Row> NameAndAge(const std::vector<T>& objects, absl::Time now) {
  std::vector<Row> rows = {{"NAME", "AGE"}};
  for (const T& o : objects) {
    rows.push_back({o.metadata().name(), Age(o.metadata(), now)});
  }
  return rows;
}

// A status counter as kubectl prints the CRD's integer column: blank until
// the object has a status (Kueue writes the counters with its first status).
template <typename Status>
std::string Count(bool has_status, const Status& status,
                  int32_t (Status::*counter)() const) {
  return has_status ? absl::StrCat((status.*counter)()) : "";
}

// The status of the condition of `type`; blank without one, as the
// Workload CRD's filter expression finds nothing.
std::string ConditionStatus(
    const google::protobuf::RepeatedPtrField<api::Condition>& conditions,
    absl::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type() == type) return c.status();
  }
  return "";
}

}  // namespace

const google::protobuf::Message* KueueMessage(const api::KueueObject& object) {
  const google::protobuf::OneofDescriptor* oneof =
      object.GetDescriptor()->FindOneofByName("object");
  const google::protobuf::FieldDescriptor* field =
      object.GetReflection()->GetOneofFieldDescriptor(object, oneof);
  if (field == nullptr) return nullptr;
  return &object.GetReflection()->GetMessage(object, field);
}

api::ObjectMeta* MutableKueueMetadata(api::KueueObject* object) {
  switch (object->object_case()) {
    case api::KueueObject::kResourceFlavor:
      return object->mutable_resource_flavor()->mutable_metadata();
    case api::KueueObject::kClusterQueue:
      return object->mutable_cluster_queue()->mutable_metadata();
    case api::KueueObject::kCohort:
      return object->mutable_cohort()->mutable_metadata();
    case api::KueueObject::kLocalQueue:
      return object->mutable_local_queue()->mutable_metadata();
    case api::KueueObject::kWorkloadPriorityClass:
      return object->mutable_workload_priority_class()->mutable_metadata();
    case api::KueueObject::kWorkload:
      return object->mutable_workload()->mutable_metadata();
    case api::KueueObject::OBJECT_NOT_SET:
      break;
  }
  return nullptr;
}

std::string KueueKind(const api::KueueObject& object) {
  const google::protobuf::Message* message = KueueMessage(object);
  // The messages are named as Kueue's kinds.
  return message == nullptr ? "" : message->GetDescriptor()->name();
}

std::vector<Row> ResourceFlavorRows(const std::vector<api::ResourceFlavor>& rfs,
                                    absl::Time now) {
  return NameAndAge(rfs, now);
}

std::vector<Row> CohortRows(const std::vector<api::Cohort>& cohorts,
                            absl::Time now) {
  return NameAndAge(cohorts, now);
}

std::vector<Row> ClusterQueueRows(const std::vector<api::ClusterQueue>& cqs,
                                  bool wide) {
  std::vector<Row> rows;
  if (wide) {
    rows.push_back({"NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS"});
  } else {
    rows.push_back({"NAME", "COHORT", "PENDING WORKLOADS"});
  }
  using Status = api::ClusterQueueStatus;
  for (const api::ClusterQueue& cq : cqs) {
    const std::string pending =
        Count(cq.has_status(), cq.status(), &Status::pending_workloads);
    if (wide) {
      rows.push_back(
          {cq.metadata().name(), cq.spec().cohort(),
           cq.spec().queueing_strategy(), pending,
           Count(cq.has_status(), cq.status(), &Status::admitted_workloads)});
    } else {
      rows.push_back({cq.metadata().name(), cq.spec().cohort(), pending});
    }
  }
  return rows;
}

std::vector<Row> LocalQueueRows(const std::vector<api::LocalQueue>& lqs) {
  std::vector<Row> rows = {
      {"NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"}};
  using Status = api::LocalQueueStatus;
  for (const api::LocalQueue& lq : lqs) {
    rows.push_back(
        {lq.metadata().name(), lq.spec().cluster_queue(),
         Count(lq.has_status(), lq.status(), &Status::pending_workloads),
         Count(lq.has_status(), lq.status(), &Status::admitted_workloads)});
  }
  return rows;
}

std::vector<Row> WorkloadPriorityClassRows(
    const std::vector<api::WorkloadPriorityClass>& classes) {
  std::vector<Row> rows = {{"NAME", "VALUE"}};
  for (const api::WorkloadPriorityClass& wpc : classes) {
    rows.push_back({wpc.metadata().name(),
                    wpc.has_value() ? absl::StrCat(wpc.value()) : ""});
  }
  return rows;
}

std::vector<Row> WorkloadRows(const std::vector<api::Workload>& workloads,
                              absl::Time now) {
  std::vector<Row> rows = {
      {"NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"}};
  for (const api::Workload& wl : workloads) {
    rows.push_back({wl.metadata().name(), wl.spec().queue_name(),
                    wl.status().admission().cluster_queue(),
                    ConditionStatus(wl.status().conditions(), "Admitted"),
                    ConditionStatus(wl.status().conditions(), "Finished"),
                    Age(wl.metadata(), now)});
  }
  return rows;
}

std::vector<Row> PendingWorkloadRows(
    const api::PendingWorkloadsSummary& summary, absl::Time now, bool wide) {
  Row header = {"NAMESPACE",
                "NAME",
                "LOCALQUEUE",
                "PRIORITY",
                "POSITION IN CLUSTERQUEUE",
                "POSITION IN LOCALQUEUE",
                "AGE"};
  if (wide) header.insert(header.end(), {"CLUSTERQUEUE", "REASON", "MESSAGE"});
  std::vector<Row> rows = {header};
  for (const api::PendingWorkload& w : summary.items()) {
    Row row = {w.metadata().namespace_(),
               w.metadata().name(),
               w.local_queue_name(),
               absl::StrCat(w.priority()),
               absl::StrCat(w.position_in_cluster_queue()),
               absl::StrCat(w.position_in_local_queue()),
               Age(w.metadata(), now)};
    if (wide) {
      row.insert(row.end(), {w.cluster_queue(), w.reason(), w.message()});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string PendingWorkloadsDocument(
    const api::PendingWorkloadsSummary& summary, bool yaml) {
  // Written field by field: protobuf's JSON leaves out a 0, which Kueue's
  // type writes (position 0 is the head of the queue).
  std::vector<std::string> items;
  for (const api::PendingWorkload& w : summary.items()) {
    std::string item = absl::StrCat(
        "{\"metadata\": ", ToJson(w.metadata()),
        ", \"priority\": ", w.priority(),
        ", \"localQueueName\": ", JsonQuote(w.local_queue_name()),
        ", \"positionInClusterQueue\": ", w.position_in_cluster_queue(),
        ", \"positionInLocalQueue\": ", w.position_in_local_queue());
    // jobsetd's additions, left out when empty as protobuf's JSON does.
    auto addition = [&item](const char* key, const std::string& value) {
      if (!value.empty()) {
        absl::StrAppend(&item, ", \"", key, "\": ", JsonQuote(value));
      }
    };
    addition("clusterQueue", w.cluster_queue());
    addition("reason", w.reason());
    addition("message", w.message());
    items.push_back(absl::StrCat(item, "}"));
  }
  return FormatJsonDocument(
      absl::StrCat("{\"apiVersion\": ", JsonQuote(kKueueVisibilityApiVersion),
                   ", \"kind\": \"PendingWorkloadsSummary\", \"metadata\": {}, "
                   "\"items\": [",
                   absl::StrJoin(items, ", "), "]}"),
      yaml);
}

}  // namespace jobset::cli
