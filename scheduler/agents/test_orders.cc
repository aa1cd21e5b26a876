#include "scheduler/agents/test_orders.h"

#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/host_table.h"
#include "gtest/gtest.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler::testing {

api::Hello HelloFrom(const std::string& node) {
  api::Hello hello;
  hello.mutable_node()->set_name(node);
  hello.mutable_node()->set_address("127.0.0.2");
  (*hello.mutable_node()->mutable_capacity())["cpu"] = "8";
  (*hello.mutable_node()->mutable_capacity())["memory"] = "32Gi";
  (*hello.mutable_node()->mutable_capacity())["nvidia.com/gpu"] = "4";
  (*hello.mutable_node()->mutable_labels())["slice"] = "a";
  return hello;
}

std::shared_ptr<const api::Job> MakeJob() {
  auto job = std::make_shared<api::Job>();
  job->mutable_metadata()->set_name("train-workers-0");
  job->mutable_metadata()->set_namespace_("default");
  job->mutable_spec()->set_completion_mode("Indexed");
  api::Container* c = job->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->add_containers();
  c->set_name("main");
  (*c->mutable_resources()->mutable_requests())["cpu"] = "500m";
  api::EnvVar* env = c->add_env();
  env->set_name("NODE");
  env->mutable_value_from()->mutable_field_ref()->set_field_path(
      "spec.nodeName");
  return job;
}

Assignment OrderOn(const std::string& node, const std::string& uid,
                   std::vector<HostEntry> hosts,
                   std::shared_ptr<const api::Job> job, int index) {
  Assignment order;
  order.job = std::move(job);
  api::PodRecord record =
      NewPodRecord("pod-" + uid, uid, index, absl::UnixEpoch());
  BindPod(node, "127.0.0.2", absl::UnixEpoch(), &record);
  order.pod = AssignedPodOf(record);
  order.hosts = std::make_shared<const SharedHostTable>(std::move(hosts));
  return order;
}

api::HostTable HostsOf(const api::PodAssignment& a) {
  EXPECT_EQ(a.hosts_size(), 0) << "jobsetd sends only hosts_table";
  if (a.hosts_table().empty()) return api::HostTable();
  absl::StatusOr<api::HostTable> table =
      api::DecodeHostTable("hosts_table", a.hosts_table());
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? *std::move(table) : api::HostTable();
}

std::string Env(const api::Pod& pod, const std::string& name) {
  for (const api::EnvVar& var : pod.spec().containers(0).env()) {
    if (var.name() == name) return var.value();
  }
  return "<unset>";
}

std::vector<api::SchedulerMessage> Drain(AgentSession& s) {
  std::vector<api::SchedulerMessage> out;
  api::SchedulerMessage m;
  while (s.Pop(&m, absl::ZeroDuration())) out.push_back(m);
  return out;
}

}  // namespace jobset::scheduler::testing
