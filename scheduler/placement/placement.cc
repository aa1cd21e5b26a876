#include "scheduler/placement/placement.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/quote.h"
#include "scheduler/placement/filters.h"
#include "scheduler/placement/rejection.h"
#include "scheduler/placement/scorers.h"

namespace jobset::scheduler::placement {
namespace {

using NodeId = ClusterSnapshot::NodeId;
using JobId = ClusterSnapshot::JobId;
using Topology = ClusterSnapshot::Topology;
using Domain = ClusterSnapshot::Domain;

constexpr int32_t kNoJob = -1;
constexpr int32_t kSeveralJobs = -2;

// A pod template as this placement sees it: its requests over the snapshot's
// resources, and a per-node cache of the record-only filters (CheckNode),
// shared by every Job with the same template.
struct Template {
  const PodRequirements* requirements = nullptr;
  std::vector<int64_t> request;  // per snapshot resource
  std::string missing_resource;  // a requested resource no node declares
  std::vector<int8_t> passes;    // per node: -1 unknown, 0 no, 1 yes
  bool label_free = false;       // no nodeSelector, no node affinity
};

// One Job of the request while it is being placed.
struct JobState {
  int index = 0;  // in request.jobs
  const JobRequest* job = nullptr;
  int tmpl = 0;
  std::optional<JobId> snapshot_job;  // the job key, if the snapshot knows it
  const Topology* exclusive = nullptr;
  std::vector<NodeId> previous;  // per pod index, -1 for none
  std::vector<NodeId> nodes;     // the result, per pod index
  int32_t domain = -1;           // the exclusive domain taken
};

// The domains of one exclusive key, for one template, in best-fit order.
// Shared by the Jobs of a ReplicatedJob, so that each Job does not rescan
// the cluster: a cursor skips the domains already taken.
struct DomainQueue {
  std::vector<int32_t> order;
  std::vector<int64_t> room_bound;  // per domain; room only shrinks
  size_t cursor = 0;
};

enum class DomainState { kFree, kHeld, kTaken, kBusy };

// One assignment of a Job without exclusive topology, kept so that a Job
// that does not fit can be taken back.
struct Assignment {
  NodeId node;
  int32_t previous_jobs_on_node;
};

// The working state of one Place() call.
class Placer {
 public:
  Placer(const ClusterSnapshot& cluster, const PlacementRequest& request)
      : cluster_(cluster),
        request_(request),
        num_resources_(cluster.num_resources()) {}

  absl::StatusOr<Placement> Run();

 private:
  absl::Status Validate() const;
  void Prepare();
  bool PlaceExclusive(JobState& job);
  bool PlaceSpread(JobState& job);
  std::string Explain(const JobState& job);

  // Returns the domains of a key: the snapshot's index, else a scan kept for
  // this call; nullptr when no node carries the key.
  const Topology* TopologyFor(const std::string& key);

  // Filters.
  bool PassesRecordFilters(Template& t, NodeId h);
  bool HeldByOther(const JobState& job, NodeId h) const;
  int64_t RawRoom(Template& t, NodeId h, int64_t limit);
  int64_t Room(const JobState& job, NodeId h, int64_t limit);
  // Returns the pods the domain has room for, at most `per_node` on each
  // node, counting until `limit` is reached.
  int64_t DomainRoom(const JobState& job, const Domain& domain,
                     int64_t per_node, int64_t limit);
  DomainState StateOf(const JobState& job, const Topology& topology,
                      int32_t d) const;

  // Bookkeeping.
  DomainQueue& QueueFor(const JobState& job);
  void TakeDomain(JobState& job, int32_t d);
  int FillNodes(JobState& job, absl::Span<const NodeId> nodes,
                std::vector<Assignment>* log);
  void Assign(JobState& job, int pod, NodeId h, std::vector<Assignment>* log);
  void Undo(JobState& job, const std::vector<Assignment>& log);

  const ClusterSnapshot& cluster_;
  const PlacementRequest& request_;
  const int num_resources_;

  std::vector<Template> templates_;
  std::vector<JobState> jobs_;
  const Topology* pack_topology_ = nullptr;
  std::vector<NodeId> unlabelled_nodes_;  // nodes without pack_topology_'s key

  // What this placement has used so far.
  std::vector<int64_t> remaining_;     // per node and resource
  std::vector<int32_t> holder_;        // per node: request Job holding it
  std::vector<bool> excluded_;         // per node: request.excluded_nodes
  std::vector<bool> spare_;            // per node: a spare it may not use
  std::vector<int32_t> jobs_on_node_;  // per node: kNoJob, Job, several
  absl::flat_hash_map<NodeId, std::vector<HostPort>> ports_;
  absl::flat_hash_map<const Topology*, std::vector<uint8_t>> taken_;
  std::map<std::pair<int, const Topology*>, DomainQueue> queues_;
  std::map<std::string, Topology, std::less<>> scanned_;  // unindexed keys
};

const Topology* Placer::TopologyFor(const std::string& key) {
  if (const Topology* indexed = cluster_.FindTopology(key)) return indexed;
  auto it = scanned_.find(key);
  if (it == scanned_.end()) {
    it = scanned_.emplace(key, cluster_.ScanTopology(key)).first;
  }
  return it->second.domains.empty() ? nullptr : &it->second;
}

absl::Status Placer::Validate() const {
  absl::flat_hash_set<absl::string_view> keys;
  for (size_t i = 0; i < request_.jobs.size(); ++i) {
    const JobRequest& job = request_.jobs[i];
    const std::string path = absl::StrCat("jobs[", i, "]");
    if (job.job_key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".job_key: Required value"));
    }
    if (!keys.insert(job.job_key).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".job_key: Duplicate value: ", Quote(job.job_key)));
    }
    if (job.requirements == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".requirements: Required value"));
    }
    if (job.pod_count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".pod_count: Invalid value: ", job.pod_count,
                       ": must be greater than or equal to 0"));
    }
    if (job.previous_nodes.size() > static_cast<size_t>(job.pod_count)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".previous_nodes: Too many: ", job.previous_nodes.size(),
          ": must have at most ", job.pod_count, " items"));
    }
  }
  return absl::OkStatus();
}

void Placer::Prepare() {
  const int num_nodes = cluster_.num_nodes();
  remaining_.resize(static_cast<size_t>(num_nodes) * num_resources_);
  for (NodeId h = 0; h < num_nodes; ++h) {
    absl::Span<const int64_t> free = cluster_.free(h);
    std::copy(free.begin(), free.end(),
              remaining_.begin() + static_cast<size_t>(h) * num_resources_);
  }
  holder_.assign(num_nodes, kNoJob);
  jobs_on_node_.assign(num_nodes, kNoJob);
  excluded_.assign(num_nodes, false);
  for (const std::string& name : request_.excluded_nodes) {
    if (std::optional<NodeId> h = cluster_.FindNode(name)) excluded_[*h] = true;
  }
  spare_.assign(num_nodes, false);
  if (!request_.use_spares) {
    for (NodeId h = 0; h < num_nodes; ++h) {
      const Labels& labels = cluster_.node(h).labels;
      auto it = labels.find(kSpareLabel);
      spare_[h] = it != labels.end() && it->second == "true";
    }
  }

  const std::optional<int> pods_resource = cluster_.FindResource(kPods);
  absl::flat_hash_map<const PodRequirements*, int> template_index;
  for (size_t i = 0; i < request_.jobs.size(); ++i) {
    const JobRequest& request = request_.jobs[i];
    auto [it, inserted] = template_index.try_emplace(
        request.requirements.get(), static_cast<int>(templates_.size()));
    if (inserted) {
      const PodRequirements& req = *request.requirements;
      Template t;
      t.requirements = &req;
      t.request.assign(num_resources_, 0);
      t.request[0] = req.resources.cpu_millis;
      t.request[1] = req.resources.memory_bytes;
      for (const auto& [name, amount] : req.resources.extended) {
        std::optional<int> r = cluster_.FindResource(name);
        if (r.has_value()) {
          t.request[*r] += amount;
        } else if (amount > 0 && t.missing_resource.empty()) {
          t.missing_resource = name;
        }
      }
      if (pods_resource.has_value()) t.request[*pods_resource] += 1;
      t.passes.assign(num_nodes, -1);
      t.label_free =
          req.node_selector.empty() && !req.required_node_affinity.has_value();
      templates_.push_back(std::move(t));
    }
    JobState job;
    job.index = static_cast<int>(i);
    job.job = &request;
    job.tmpl = it->second;
    job.snapshot_job = cluster_.FindJob(request.job_key);
    if (!request.exclusive_topology_key.empty()) {
      job.exclusive = TopologyFor(request.exclusive_topology_key);
    }
    job.previous.assign(request.pod_count, -1);
    for (size_t p = 0; p < request.previous_nodes.size(); ++p) {
      if (request.previous_nodes[p].empty()) continue;
      job.previous[p] =
          cluster_.FindNode(request.previous_nodes[p]).value_or(-1);
    }
    job.nodes.assign(request.pod_count, -1);
    jobs_.push_back(std::move(job));
  }

  for (absl::string_view key : kDefaultTopologyKeys) {
    pack_topology_ = cluster_.FindTopology(key);
    if (pack_topology_ != nullptr) break;
  }
  if (pack_topology_ != nullptr) {
    for (NodeId h = 0; h < num_nodes; ++h) {
      if (pack_topology_->domain_of_node[h] < 0) unlabelled_nodes_.push_back(h);
    }
  }
}

bool Placer::PassesRecordFilters(Template& t, NodeId h) {
  int8_t& passes = t.passes[h];
  if (passes < 0 && t.label_free && cluster_.plain(h)) {
    passes = 1;  // nothing to check, and no need to read the node record
  } else if (passes < 0) {
    passes = CheckNode(cluster_.node(h), *t.requirements).kind ==
                     NodeVerdict::Kind::kFits
                 ? 1
                 : 0;
  }
  return passes == 1;
}

bool Placer::HeldByOther(const JobState& job, NodeId h) const {
  if (holder_[h] != kNoJob && holder_[h] != job.index) return true;
  for (const ClusterSnapshot::Holder& hold : cluster_.holds_on_node(h)) {
    if (hold.priority == request_.priority && hold.job != job.snapshot_job) {
      return true;
    }
  }
  return false;
}

int64_t Placer::RawRoom(Template& t, NodeId h, int64_t limit) {
  if (excluded_[h] || spare_[h] || !t.missing_resource.empty() ||
      !PassesRecordFilters(t, h)) {
    return 0;
  }
  if (!t.requirements->host_ports.empty()) {
    auto it = ports_.find(h);
    if (it != ports_.end() &&
        !HostPortsFree(t.requirements->host_ports, it->second)) {
      return 0;
    }
    limit = std::min<int64_t>(limit, 1);
  }
  return PodsThatFit(
      absl::MakeConstSpan(remaining_)
          .subspan(static_cast<size_t>(h) * num_resources_, num_resources_),
      t.request, limit);
}

int64_t Placer::Room(const JobState& job, NodeId h, int64_t limit) {
  if (HeldByOther(job, h)) return 0;
  return RawRoom(templates_[job.tmpl], h, limit);
}

int64_t Placer::DomainRoom(const JobState& job, const Domain& domain,
                           int64_t per_node, int64_t limit) {
  int64_t room = 0;
  for (NodeId h : domain.nodes) {
    room += Room(job, h, std::min(per_node, limit - room));
    if (room >= limit) break;
  }
  return room;
}

DomainState Placer::StateOf(const JobState& job, const Topology& topology,
                            int32_t d) const {
  auto taken = taken_.find(&topology);
  if (taken != taken_.end() && taken->second[d]) return DomainState::kTaken;
  const Domain& domain = topology.domains[d];
  for (const ClusterSnapshot::Holder& hold : domain.holds) {
    if (hold.priority == request_.priority && hold.job != job.snapshot_job) {
      return DomainState::kHeld;
    }
  }
  for (NodeId h : domain.nodes) {
    if (holder_[h] != kNoJob && holder_[h] != job.index) {
      return DomainState::kTaken;
    }
    if (HeldByOther(job, h)) return DomainState::kHeld;
    if (jobs_on_node_[h] != kNoJob && jobs_on_node_[h] != job.index) {
      return DomainState::kBusy;
    }
    for (const ClusterSnapshot::Holder& other : cluster_.jobs_on_node(h)) {
      if (other.priority == request_.priority &&
          other.job != job.snapshot_job) {
        return DomainState::kBusy;
      }
    }
  }
  return DomainState::kFree;
}

DomainQueue& Placer::QueueFor(const JobState& job) {
  auto [it, inserted] =
      queues_.try_emplace(std::make_pair(job.tmpl, job.exclusive));
  DomainQueue& queue = it->second;
  if (!inserted) return queue;
  // Rank the domains once for the template: a bound on each domain's room
  // (before any hold) and best-fit order among those with room.
  Template& t = templates_[job.tmpl];
  const Topology& topology = *job.exclusive;
  queue.room_bound.assign(topology.domains.size(), 0);
  std::vector<DomainCandidate> candidates;
  for (size_t d = 0; d < topology.domains.size(); ++d) {
    const Domain& domain = topology.domains[d];
    int64_t room = 0;
    for (NodeId h : domain.nodes) room += RawRoom(t, h, job.job->pod_count);
    queue.room_bound[d] = room;
    if (room == 0) continue;
    candidates.push_back(DomainCandidate{
        static_cast<int32_t>(d), static_cast<int32_t>(domain.nodes.size()),
        room, domain.value});
  }
  std::sort(candidates.begin(), candidates.end(), BestFitLess);
  queue.order.reserve(candidates.size());
  for (const DomainCandidate& c : candidates) queue.order.push_back(c.domain);
  return queue;
}

void Placer::Assign(JobState& job, int pod, NodeId h,
                    std::vector<Assignment>* log) {
  const Template& t = templates_[job.tmpl];
  int64_t* remaining = &remaining_[static_cast<size_t>(h) * num_resources_];
  for (int r = 0; r < num_resources_; ++r) remaining[r] -= t.request[r];
  if (!t.requirements->host_ports.empty()) {
    std::vector<HostPort>& used = ports_[h];
    used.insert(used.end(), t.requirements->host_ports.begin(),
                t.requirements->host_ports.end());
    std::sort(used.begin(), used.end());
  }
  if (log != nullptr) log->push_back({h, jobs_on_node_[h]});
  int32_t& on_node = jobs_on_node_[h];
  on_node =
      on_node == kNoJob || on_node == job.index ? job.index : kSeveralJobs;
  job.nodes[pod] = h;
}

void Placer::Undo(JobState& job, const std::vector<Assignment>& log) {
  const Template& t = templates_[job.tmpl];
  for (auto it = log.rbegin(); it != log.rend(); ++it) {
    int64_t* remaining =
        &remaining_[static_cast<size_t>(it->node) * num_resources_];
    for (int r = 0; r < num_resources_; ++r) remaining[r] += t.request[r];
    if (!t.requirements->host_ports.empty()) {
      std::vector<HostPort>& used = ports_[it->node];
      for (const HostPort& port : t.requirements->host_ports) {
        used.erase(std::find(used.begin(), used.end(), port));
      }
    }
    jobs_on_node_[it->node] = it->previous_jobs_on_node;
  }
  std::fill(job.nodes.begin(), job.nodes.end(), -1);
}

int Placer::FillNodes(JobState& job, absl::Span<const NodeId> nodes,
                      std::vector<Assignment>* log) {
  int assigned = 0;
  int next_pod = 0;
  const int pods = job.job->pod_count;
  auto advance = [&] {
    while (next_pod < pods && job.nodes[next_pod] >= 0) ++next_pod;
  };
  advance();
  for (NodeId h : nodes) {
    if (next_pod >= pods) break;
    int64_t room = Room(job, h, pods);
    while (room > 0 && next_pod < pods) {
      Assign(job, next_pod, h, log);
      ++assigned;
      advance();
      // Host ports allow one pod per node; resources may allow more.
      room = Room(job, h, pods);
    }
  }
  return assigned;
}

void Placer::TakeDomain(JobState& job, int32_t d) {
  const Topology& topology = *job.exclusive;
  std::vector<uint8_t>& taken = taken_[&topology];
  if (taken.empty()) taken.assign(topology.domains.size(), 0);
  taken[d] = 1;
  job.domain = d;
  const Domain& domain = topology.domains[d];
  for (NodeId h : domain.nodes) holder_[h] = job.index;
  // Sticky pods first, on their previous node when it is in the domain.
  int placed = 0;
  for (int pod = 0; pod < job.job->pod_count; ++pod) {
    const NodeId h = job.previous[pod];
    if (h >= 0 && topology.domain_of_node[h] == d && Room(job, h, 1) > 0) {
      Assign(job, pod, h, nullptr);
      ++placed;
    }
  }
  placed += FillNodes(job, domain.nodes, nullptr);
  // DomainRoom() counted the room before the domain was taken.
  JOBSET_CHECK(placed == job.job->pod_count) << "domain room miscounted";
}

bool Placer::PlaceExclusive(JobState& job) {
  const int64_t pods = job.job->pod_count;
  if (job.exclusive == nullptr) return pods == 0;
  if (pods == 0) return true;
  const Topology& topology = *job.exclusive;

  // Stage 1 (sticky): the domain holding most of the previous attempt's nodes.
  std::vector<NodeId> previous;
  for (NodeId h : job.previous) {
    if (h >= 0) previous.push_back(h);
  }
  if (!previous.empty()) {
    const int32_t d = StickyDomain(previous, topology);
    if (d >= 0 && StateOf(job, topology, d) == DomainState::kFree &&
        DomainRoom(job, topology.domains[d], pods, pods) >= pods) {
      TakeDomain(job, d);
      return true;
    }
  }

  // Stage 2 (best fit): the first free domain in best-fit order with room.
  DomainQueue& queue = QueueFor(job);
  auto taken_it = taken_.find(&topology);
  const std::vector<uint8_t>* taken =
      taken_it == taken_.end() ? nullptr : &taken_it->second;
  for (size_t i = queue.cursor; i < queue.order.size(); ++i) {
    const int32_t d = queue.order[i];
    if ((taken != nullptr && (*taken)[d]) || queue.room_bound[d] == 0) {
      if (i == queue.cursor) ++queue.cursor;
      continue;
    }
    if (queue.room_bound[d] < pods) continue;
    if (StateOf(job, topology, d) != DomainState::kFree) continue;
    if (DomainRoom(job, topology.domains[d], pods, pods) >= pods) {
      TakeDomain(job, d);
      return true;
    }
    // Capacity went to earlier Jobs: tighten the bound for later ones.
    int64_t room = 0;
    for (NodeId h : topology.domains[d].nodes) {
      room += RawRoom(templates_[job.tmpl], h, pods);
    }
    queue.room_bound[d] = room;
  }
  return false;
}

bool Placer::PlaceSpread(JobState& job) {
  const int pods = job.job->pod_count;
  std::vector<Assignment> log;
  int placed = 0;

  // Stage 1 (sticky): each pod on its previous node if it still fits.
  for (int pod = 0; pod < pods; ++pod) {
    const NodeId h = job.previous[pod];
    if (h >= 0 && Room(job, h, 1) > 0) {
      Assign(job, pod, h, &log);
      ++placed;
    }
  }

  // Stage 2 (fewest domains, best fit): the smallest domain of the packing
  // key that holds the rest, else the roomiest domains, then unlabelled nodes.
  if (placed < pods && pack_topology_ != nullptr) {
    const int64_t need = pods - placed;
    std::vector<DomainCandidate> candidates;
    for (size_t d = 0; d < pack_topology_->domains.size(); ++d) {
      const Domain& domain = pack_topology_->domains[d];
      // Uncapped, so that best fit can tell a tight domain from a roomy one.
      const int64_t room =
          DomainRoom(job, domain, need, std::numeric_limits<int64_t>::max());
      if (room == 0) continue;
      candidates.push_back(DomainCandidate{
          static_cast<int32_t>(d), static_cast<int32_t>(domain.nodes.size()),
          room, domain.value});
    }
    for (int32_t d : FewestDomains(std::move(candidates), need)) {
      placed += FillNodes(job, pack_topology_->domains[d].nodes, &log);
    }
    if (placed < pods) placed += FillNodes(job, unlabelled_nodes_, &log);
  }

  // Stage 3 (no topology labels): nodes in name order.
  if (placed < pods && pack_topology_ == nullptr) {
    for (NodeId h = 0; h < cluster_.num_nodes() && placed < pods; ++h) {
      const NodeId one[] = {h};
      placed += FillNodes(job, one, &log);
    }
  }

  if (placed < pods) {
    Undo(job, log);
    return false;
  }
  return true;
}

std::string Placer::Explain(const JobState& job) {
  Template& t = templates_[job.tmpl];
  const int64_t pods = job.job->pod_count;
  const std::string& key = job.job->exclusive_topology_key;
  std::vector<DomainState> states;
  if (job.exclusive != nullptr) {
    for (size_t d = 0; d < job.exclusive->domains.size(); ++d) {
      states.push_back(StateOf(job, *job.exclusive, static_cast<int32_t>(d)));
    }
  }

  std::map<std::string, int> reasons;
  int available = 0;
  for (NodeId h = 0; h < cluster_.num_nodes(); ++h) {
    if (!key.empty() &&
        (job.exclusive == nullptr || job.exclusive->domain_of_node[h] < 0)) {
      ++reasons[absl::StrCat("node(s) didn't have the topology label ", key)];
      continue;
    }
    if (excluded_[h]) {
      ++reasons[std::string(kExcludedReason)];
      continue;
    }
    if (spare_[h]) {
      ++reasons[std::string(kSpareReason)];
      continue;
    }
    const NodeVerdict verdict = CheckNode(cluster_.node(h), *t.requirements);
    if (verdict.kind != NodeVerdict::Kind::kFits) {
      ++reasons[VerdictReason(verdict)];
      continue;
    }
    if (HeldByOther(job, h)) {
      ++reasons[std::string(kHeldDomainReason)];
      continue;
    }
    if (job.exclusive != nullptr) {
      const DomainState state = states[job.exclusive->domain_of_node[h]];
      if (state == DomainState::kBusy) {
        ++reasons[std::string(kBusyDomainReason)];
        continue;
      }
      if (state != DomainState::kFree) {
        ++reasons[std::string(kHeldDomainReason)];
        continue;
      }
    }
    if (!t.requirements->host_ports.empty()) {
      auto it = ports_.find(h);
      if (it != ports_.end() &&
          !HostPortsFree(t.requirements->host_ports, it->second)) {
        ++reasons[std::string(kHostPortsReason)];
        continue;
      }
    }
    bool insufficient = false;
    if (!t.missing_resource.empty()) {
      ++reasons[InsufficientReason(t.missing_resource)];
      insufficient = true;
    }
    const int64_t* remaining =
        &remaining_[static_cast<size_t>(h) * num_resources_];
    for (int r = 0; r < num_resources_; ++r) {
      if (t.request[r] > 0 && remaining[r] < t.request[r]) {
        ++reasons[InsufficientReason(cluster_.resource_name(r))];
        insufficient = true;
      }
    }
    if (!insufficient) ++available;
  }
  const std::string nodes =
      FormatNodeReasons(available, cluster_.num_nodes(), reasons);

  if (!key.empty()) {
    DomainTally tally;
    if (job.exclusive != nullptr) {
      tally.total = static_cast<int>(states.size());
      for (size_t d = 0; d < states.size(); ++d) {
        switch (states[d]) {
          case DomainState::kHeld:
            ++tally.held;
            break;
          case DomainState::kTaken:
            ++tally.taken;
            break;
          case DomainState::kBusy:
            ++tally.busy;
            break;
          case DomainState::kFree: {
            const int64_t room =
                DomainRoom(job, job.exclusive->domains[d], pods, pods);
            ++tally.small;
            tally.max_small_room = std::max(tally.max_small_room, room);
            break;
          }
        }
      }
    }
    return absl::StrCat(FormatDomainReasons(key, pods, tally), "; ", nodes);
  }
  if (available > 0) {
    int64_t room = 0;
    for (NodeId h = 0; h < cluster_.num_nodes() && room < pods; ++h) {
      room += Room(job, h, pods - room);
    }
    return absl::StrCat("room for only ", room, " of the ", pods, " pods; ",
                        nodes);
  }
  return nodes;
}

absl::StatusOr<Placement> Placer::Run() {
  if (absl::Status status = Validate(); !status.ok()) return status;
  Prepare();

  // Order: exclusive Jobs first (they are the most constrained, and the
  // others must then keep out of their domains), Jobs with a previous attempt
  // first (so that they get their nodes back), bigger Jobs first (first fit
  // decreasing), then request order.
  std::vector<int> order(jobs_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto rank = [this](int i) {
    const JobRequest& job = *jobs_[i].job;
    const bool sticky =
        std::any_of(jobs_[i].previous.begin(), jobs_[i].previous.end(),
                    [](NodeId h) { return h >= 0; });
    return std::make_tuple(job.exclusive_topology_key.empty(), !sticky,
                           -job.pod_count, i);
  };
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return rank(a) < rank(b); });

  std::vector<std::optional<std::string>> rejections(jobs_.size());
  for (int i : order) {
    JobState& job = jobs_[i];
    const bool placed = job.job->exclusive_topology_key.empty()
                            ? PlaceSpread(job)
                            : PlaceExclusive(job);
    if (!placed) rejections[i] = Explain(job);
  }

  Placement result;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    if (rejections[i].has_value()) {
      result.rejections.push_back(
          JobRejection{jobs_[i].job->job_key, *std::move(rejections[i])});
    }
  }
  if (!result.placed()) return result;  // the gang rule: nothing placed

  result.jobs.reserve(jobs_.size());
  for (const JobState& job : jobs_) {
    JobPlacement placement;
    placement.job_key = job.job->job_key;
    placement.nodes.reserve(job.nodes.size());
    for (NodeId h : job.nodes) placement.nodes.push_back(cluster_.node(h).name);
    placement.node_ids = job.nodes;
    if (job.domain >= 0) {
      placement.domain = std::string(job.exclusive->domains[job.domain].value);
    }
    result.jobs.push_back(std::move(placement));
  }
  return result;
}

}  // namespace

std::string Placement::RejectionSummary() const {
  return absl::StrJoin(rejections, "; ",
                       [](std::string* out, const JobRejection& r) {
                         absl::StrAppend(out, r.job_key, ": ", r.reason);
                       });
}

absl::StatusOr<Placement> Place(const ClusterSnapshot& cluster,
                                const PlacementRequest& request) {
  // The pipeline, per Job, in the order Run() picks (exclusive, sticky and
  // bigger Jobs first):
  //   1. filters, per node: cordoned, not ready, taints, node affinity and
  //      nodeSelector, host ports, exclusive holds, resources (filters.h);
  //   2. exclusive Jobs: the previous attempt's domain (sticky), else the
  //      first free domain in best-fit order with room for every pod;
  //      other Jobs: previous nodes (sticky), then the fewest domains of the
  //      packing key, best fit first (scorers.h);
  //   3. gang: if any Job does not fit, nothing is placed and each Job that
  //      did not fit gets a Kubernetes-style reason (rejection.h).
  Placer placer(cluster, request);
  return placer.Run();
}

}  // namespace jobset::scheduler::placement
