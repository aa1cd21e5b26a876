#include "scheduler/queues/podset_injection.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "common/quote.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::scheduler::queues {
namespace {

using StringMap = google::protobuf::Map<std::string, std::string>;

api::PodTemplateSpec* MutablePodTemplate(api::ReplicatedJob* rjob) {
  return rjob->mutable_template_()->mutable_spec()->mutable_template_();
}

const api::PodTemplateSpec& PodTemplate(const api::ReplicatedJob& rjob) {
  return rjob.template_().spec().template_();
}

// What Kueue injects into one pod template (podset.PodSetInfo, less what
// the JobSet proto cannot hold).
struct PodSetInfo {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> node_selector;
  std::vector<api::Toleration> tolerations;
};

api::Toleration ToApi(const Toleration& t) {
  api::Toleration out;
  out.set_key(t.key);
  out.set_operator_(t.op == TolerationOperator::kExists ? "Exists" : "Equal");
  out.set_value(t.value);
  if (t.effect.has_value()) {
    switch (*t.effect) {
      case TaintEffect::kNoSchedule:
        out.set_effect("NoSchedule");
        break;
      case TaintEffect::kPreferNoSchedule:
        out.set_effect("PreferNoSchedule");
        break;
      case TaintEffect::kNoExecute:
        out.set_effect("NoExecute");
        break;
    }
  }
  return out;
}

// Kueue's utiltolerations.Equal: MatchToleration with "" read as Equal
// (tolerationSeconds is not compared).
bool SameToleration(const api::Toleration& a, const api::Toleration& b) {
  auto op = [](const api::Toleration& t) -> absl::string_view {
    // Both arms string_view: a std::string temporary would dangle.
    return t.operator_().empty() ? absl::string_view("Equal")
                                 : absl::string_view(t.operator_());
  };
  return a.key() == b.key() && a.effect() == b.effect() && op(a) == op(b) &&
         a.value() == b.value();
}

// FromAssignment plus the labels getPodSetsInfoFromStatus adds.
absl::StatusOr<PodSetInfo> InfoFor(const PodSetAssignment& assignment,
                                   absl::string_view cluster_queue,
                                   absl::string_view queue_name,
                                   const FlavorIndex& flavors) {
  PodSetInfo info;
  std::set<std::string> seen;
  for (const auto& [resource, flavor_name] : assignment.flavors) {
    if (!seen.insert(flavor_name).second) continue;
    auto flavor = flavors.find(flavor_name);
    if (flavor == flavors.end()) {
      return absl::NotFoundError(absl::StrCat(
          "resourceflavors.kueue.x-k8s.io ", Quote(flavor_name), " not found"));
    }
    for (const auto& [key, value] : flavor->second.node_labels) {
      info.node_selector[key] = value;
    }
    for (const Toleration& t : flavor->second.tolerations) {
      info.tolerations.push_back(ToApi(t));
    }
  }
  info.labels[std::string(kPodSetLabel)] = assignment.name;
  info.labels[std::string(kLocalQueueLabel)] = std::string(queue_name);
  if (api::IsDns1123Label(cluster_queue).empty()) {
    info.labels[std::string(kClusterQueueLabel)] = std::string(cluster_queue);
  }
  return info;
}

// utilmaps.HaveConflict: a key both hold with different values. Go walks
// the map in random order; this names the first such key in sorted order.
absl::Status CheckConflict(absl::string_view field, const StringMap& existing,
                           const std::map<std::string, std::string>& added) {
  const std::map<std::string, std::string> sorted(existing.begin(),
                                                  existing.end());
  for (const auto& [key, value] : sorted) {
    auto it = added.find(key);
    if (it != added.end() && it->second != value) {
      return absl::FailedPreconditionError(
          absl::StrCat("invalid admission check PodSetUpdate: conflict for ",
                       field, ": conflict for key=", key, ", value1=", value,
                       ", value2=", it->second));
    }
  }
  return absl::OkStatus();
}

// podset.Merge into one pod template.
absl::Status Merge(const PodSetInfo& info, api::PodTemplateSpec* pod) {
  if (absl::Status s =
          CheckConflict("labels", pod->metadata().labels(), info.labels);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckConflict(
          "nodeSelector", pod->spec().node_selector(), info.node_selector);
      !s.ok()) {
    return s;
  }
  for (const auto& [key, value] : info.labels) {
    (*pod->mutable_metadata()->mutable_labels())[key] = value;
  }
  for (const auto& [key, value] : info.node_selector) {
    (*pod->mutable_spec()->mutable_node_selector())[key] = value;
  }
  for (const api::Toleration& t : info.tolerations) {
    bool present = false;
    for (const api::Toleration& have : pod->spec().tolerations()) {
      present = present || SameToleration(have, t);
    }
    if (!present) *pod->mutable_spec()->add_tolerations() = t;
  }
  return absl::OkStatus();
}

bool SameMap(const StringMap& a, const StringMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    if (it == b.end() || it->second != value) return false;
  }
  return true;
}

bool SameTolerations(
    const google::protobuf::RepeatedPtrField<api::Toleration>& a,
    const google::protobuf::RepeatedPtrField<api::Toleration>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

// RestorePodSpec: the four fields back to `saved`. Leaves no empty metadata
// or spec behind that the template did not have before (absent and empty
// are one to Kubernetes, not to a proto comparison).
bool RestoreTemplate(const api::PodTemplateSpec& saved,
                     api::PodTemplateSpec* pod) {
  bool changed = false;
  if (!SameMap(pod->metadata().labels(), saved.metadata().labels())) {
    *pod->mutable_metadata()->mutable_labels() = saved.metadata().labels();
    changed = true;
  }
  if (!SameMap(pod->metadata().annotations(), saved.metadata().annotations())) {
    *pod->mutable_metadata()->mutable_annotations() =
        saved.metadata().annotations();
    changed = true;
  }
  if (!SameMap(pod->spec().node_selector(), saved.spec().node_selector())) {
    *pod->mutable_spec()->mutable_node_selector() =
        saved.spec().node_selector();
    changed = true;
  }
  if (!SameTolerations(pod->spec().tolerations(), saved.spec().tolerations())) {
    *pod->mutable_spec()->mutable_tolerations() = saved.spec().tolerations();
    changed = true;
  }
  if (pod->has_metadata() && pod->metadata().ByteSizeLong() == 0) {
    pod->clear_metadata();
  }
  if (pod->has_spec() && pod->spec().ByteSizeLong() == 0) pod->clear_spec();
  return changed;
}

}  // namespace

api::PodTemplateSpec SaveTemplate(const api::PodTemplateSpec& pod_template) {
  api::PodTemplateSpec out;
  if (!pod_template.metadata().labels().empty()) {
    *out.mutable_metadata()->mutable_labels() =
        pod_template.metadata().labels();
  }
  if (!pod_template.metadata().annotations().empty()) {
    *out.mutable_metadata()->mutable_annotations() =
        pod_template.metadata().annotations();
  }
  if (!pod_template.spec().node_selector().empty()) {
    *out.mutable_spec()->mutable_node_selector() =
        pod_template.spec().node_selector();
  }
  if (!pod_template.spec().tolerations().empty()) {
    *out.mutable_spec()->mutable_tolerations() =
        pod_template.spec().tolerations();
  }
  return out;
}

SavedPodTemplates SaveTemplates(const api::JobSet& jobset) {
  SavedPodTemplates out;
  for (const api::ReplicatedJob& rjob : jobset.spec().replicated_jobs()) {
    out.push_back(SaveTemplate(PodTemplate(rjob)));
  }
  return out;
}

absl::StatusOr<SavedPodTemplates> Inject(const Admission& admission,
                                         absl::string_view queue_name,
                                         const FlavorIndex& flavors,
                                         api::JobSet* jobset) {
  const int rjobs = jobset->spec().replicated_jobs_size();
  const int infos = static_cast<int>(admission.pod_set_assignments.size());
  if (infos != rjobs) {
    return absl::FailedPreconditionError(absl::StrCat(
        "invalid podset infos: expecting ", rjobs, " podset, got ", infos));
  }
  // Work on a copy, so that an error leaves the JobSet as it was.
  api::JobSet started = *jobset;
  for (int i = 0; i < rjobs; ++i) {
    absl::StatusOr<PodSetInfo> info =
        InfoFor(admission.pod_set_assignments[i], admission.cluster_queue,
                queue_name, flavors);
    if (!info.ok()) return info.status();
    absl::Status merged = Merge(
        *info,
        MutablePodTemplate(started.mutable_spec()->mutable_replicated_jobs(i)));
    if (!merged.ok()) return merged;
  }
  started.mutable_spec()->set_suspend(false);
  SavedPodTemplates saved = SaveTemplates(*jobset);
  *jobset = std::move(started);
  return saved;
}

bool Restore(const SavedPodTemplates& saved, api::JobSet* jobset) {
  api::JobSetSpec* spec = jobset->mutable_spec();
  bool changed = !spec->has_suspend() || !spec->suspend();
  spec->set_suspend(true);
  if (static_cast<int>(saved.size()) != spec->replicated_jobs_size()) {
    return changed;
  }
  for (int i = 0; i < spec->replicated_jobs_size(); ++i) {
    api::ReplicatedJob* rjob = spec->mutable_replicated_jobs(i);
    // A template that is absent and has nothing to get back stays absent.
    if (!rjob->template_().spec().has_template_() &&
        saved[i].ByteSizeLong() == 0) {
      continue;
    }
    changed = RestoreTemplate(saved[i], MutablePodTemplate(rjob)) || changed;
  }
  return changed;
}

}  // namespace jobset::scheduler::queues
