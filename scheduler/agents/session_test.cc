#include "scheduler/agents/session.h"

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/test_orders.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::Drain;
using ::jobset::scheduler::testing::Env;
using ::jobset::scheduler::testing::HostsOf;
using ::jobset::scheduler::testing::MakeJob;
using ::jobset::scheduler::testing::OrderOn;
using ::testing::ElementsAre;
using ::testing::SizeIs;

// What a session sends of a Welcome with `order` in its set.
std::vector<api::SchedulerMessage> Welcome(Assignment order) {
  AgentSession s("n1", nullptr);
  api::SchedulerMessage welcome;
  welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
  s.PushWelcome(std::move(welcome), {std::move(order)});
  return Drain(s);
}

TEST(SessionTest, SendsInOrderAndBuildsRunsWhenPopped) {
  AgentSession s("n1", nullptr);
  EXPECT_EQ(s.node(), "n1");
  api::SchedulerMessage stop;
  stop.mutable_stop()->set_pod_uid("a");
  s.PushRun(OrderOn("n1", "a", {{"127.0.0.3", {"train-0-1"}}}));
  s.Push(stop);
  std::vector<api::SchedulerMessage> got = Drain(s);
  ASSERT_THAT(got, SizeIs(2));
  EXPECT_EQ(got[0].run().pod().metadata().uid(), "a");
  EXPECT_EQ(Env(got[0].run().pod(), "NODE"), "n1");
  const api::HostTable hosts = HostsOf(got[0].run());
  ASSERT_THAT(hosts.hosts(), SizeIs(1));
  EXPECT_EQ(hosts.hosts(0).names(0), "train-0-1");
  EXPECT_EQ(got[1].stop().pod_uid(), "a");
  // Nothing queued: a timeout, not the end.
  api::SchedulerMessage m;
  bool timed_out = false;
  EXPECT_FALSE(s.Pop(&m, absl::ZeroDuration(), &timed_out));
  EXPECT_TRUE(timed_out);
}

// Every pod of an attempt carries the same bytes, encoded once however many
// senders build its orders at the same time.
TEST(SessionTest, AnAttemptsHostTableIsEncodedOnceForEveryPod) {
  std::vector<HostEntry> entries;
  for (int i = 0; i < 64; ++i) {
    entries.push_back(
        {absl::StrCat("10.0.0.", i), {absl::StrCat("train-workers-0-", i)}});
  }
  auto table = std::make_shared<const SharedHostTable>(std::move(entries));
  std::vector<std::string> got(8);
  std::vector<std::thread> senders;
  for (int i = 0; i < 8; ++i) {
    senders.emplace_back([&, i] {
      Assignment order = OrderOn("n1", absl::StrCat("p", i));
      order.hosts = table;
      got[i] = ToAssignment(order).hosts_table();
    });
  }
  for (std::thread& t : senders) t.join();
  for (const std::string& bytes : got) EXPECT_EQ(bytes, table->Encoded());
  Assignment order = OrderOn("n1", "p");
  order.hosts = table;
  const api::HostTable decoded = HostsOf(ToAssignment(order));
  ASSERT_THAT(decoded.hosts(), SizeIs(64));
  EXPECT_EQ(decoded.hosts(63).address(), "10.0.0.63");
  EXPECT_EQ(decoded.hosts(63).names(0), "train-workers-0-63");
  // No table, no bytes.
  order.hosts = std::make_shared<const SharedHostTable>();
  EXPECT_TRUE(ToAssignment(order).hosts_table().empty());
}

TEST(SessionTest, CloseCancelsTheCallOnceAndDropsWhatIsQueued) {
  int cancels = 0;
  AgentSession s("n1", [&cancels] { ++cancels; });
  s.PushRun(OrderOn("n1", "a"));
  s.Close();
  s.Close();
  EXPECT_EQ(cancels, 1);
  api::SchedulerMessage m;
  bool timed_out = true;
  EXPECT_FALSE(s.Pop(&m, absl::ZeroDuration(), &timed_out));
  EXPECT_FALSE(timed_out);
  s.PushRun(OrderOn("n1", "b"));  // Closed: dropped.
  EXPECT_FALSE(s.Pop(&m, absl::ZeroDuration()));
}

TEST(SessionTest, ADetachedSessionCancelsNothing) {
  int cancels = 0;
  AgentSession s("n1", [&cancels] { ++cancels; });
  s.Detach();
  s.Close();
  EXPECT_EQ(cancels, 0);
  api::SchedulerMessage m;
  EXPECT_FALSE(s.Pop(&m, absl::ZeroDuration()));
}

TEST(SessionTest, AWaitingWriterWakesForTheNextMessage) {
  AgentSession s("n1", nullptr);
  api::SchedulerMessage got;
  std::thread writer([&] { ASSERT_TRUE(s.Pop(&got, absl::Seconds(30))); });
  api::SchedulerMessage ack;
  ack.mutable_heartbeat_ack()->set_seq(7);
  s.Push(ack);
  writer.join();
  EXPECT_EQ(got.heartbeat_ack().seq(), 7);
}

TEST(SessionTest, TryPopSaysMessageEmptyOrClosed) {
  AgentSession s("n1", nullptr);
  api::SchedulerMessage m;
  EXPECT_EQ(s.TryPop(&m), AgentSession::Next::kEmpty);
  s.PushRun(OrderOn("n1", "a"));
  ASSERT_EQ(s.TryPop(&m), AgentSession::Next::kMessage);
  EXPECT_EQ(m.run().pod().metadata().uid(), "a");
  EXPECT_EQ(s.TryPop(&m), AgentSession::Next::kEmpty);
  s.Close();
  EXPECT_EQ(s.TryPop(&m), AgentSession::Next::kClosed);
}

// The wake runs outside the session's lock: it may pop at once, as the
// stream's writer does.
TEST(SessionTest, TheWakeComesAfterEachPushAndMayPopAtOnce) {
  AgentSession s("n1", nullptr);
  s.PushRun(OrderOn("n1", "a"));
  std::vector<std::string> popped;
  int wakes = 0;
  s.SetWake([&] {
    ++wakes;
    api::SchedulerMessage m;
    while (s.TryPop(&m) == AgentSession::Next::kMessage)
      popped.push_back(m.run().pod().metadata().uid());
  });
  EXPECT_EQ(wakes, 1) << "something was queued already";
  s.PushRun(OrderOn("n1", "b"));
  api::SchedulerMessage stop;
  stop.mutable_stop()->set_pod_uid("a");
  s.Push(stop);
  EXPECT_EQ(wakes, 3);
  EXPECT_THAT(popped, ElementsAre("a", "b", ""));
  s.Close();
  EXPECT_EQ(wakes, 4) << "closing wakes the writer to finish";
  s.PushRun(OrderOn("n1", "c"));
  EXPECT_EQ(wakes, 4);
}

TEST(SessionTest, ADetachedSessionWakesNoOne) {
  AgentSession s("n1", nullptr);
  int wakes = 0;
  s.SetWake([&] { ++wakes; });
  s.Detach();
  s.PushRun(OrderOn("n1", "a"));
  s.Close();
  EXPECT_EQ(wakes, 0);
}

// An agent that stops reading: its outbox fills to the bound, and the next
// message closes the session (its stream is cut) instead of growing it.
TEST(SessionTest, AFullOutboxCutsTheStream) {
  int cancels = 0;
  AgentSession s("n1", [&cancels] { ++cancels; });
  int wakes = 0;
  s.SetWake([&] { ++wakes; });
  api::SchedulerMessage ack;
  ack.mutable_heartbeat_ack()->set_seq(1);
  for (size_t i = 0; i < AgentSession::kMaxQueued; ++i) s.Push(ack);
  EXPECT_EQ(cancels, 0);
  s.Push(ack);
  EXPECT_EQ(cancels, 1);
  api::SchedulerMessage m;
  EXPECT_EQ(s.TryPop(&m), AgentSession::Next::kClosed);
  EXPECT_EQ(wakes, static_cast<int>(AgentSession::kMaxQueued) + 1);
}

TEST(SessionTest, AnOrderCarriesItsSecretsAndConfigMapsResolved) {
  auto job = std::make_shared<api::Job>(*MakeJob());
  api::PodSpec* spec = job->mutable_spec()->mutable_template_()->mutable_spec();
  api::Container* c = spec->mutable_containers(0);
  api::EnvVar* password = c->add_env();
  password->set_name("PASSWORD");
  password->mutable_value_from()->mutable_secret_key_ref()->set_name("db");
  password->mutable_value_from()->mutable_secret_key_ref()->set_key("pw");
  api::EnvVar* gone = c->add_env();
  gone->set_name("GONE");
  gone->mutable_value_from()->mutable_secret_key_ref()->set_name("db");
  gone->mutable_value_from()->mutable_secret_key_ref()->set_key("nope");
  gone->mutable_value_from()->mutable_secret_key_ref()->set_optional(true);
  c->add_env_from()->mutable_config_map_ref()->set_name("settings");
  api::EnvVar* own = c->add_env();
  own->set_name("MODE");  // env wins over envFrom.
  own->set_value("mine");

  auto config = std::make_shared<api::PodConfig>();
  config->env["main"].from = {{"LEVEL", "3"}, {"MODE", "fast"}};
  config->env["main"].values = {{1, "hunter2"}, {2, std::nullopt}};
  api::ConfigVolume& volume = config->volumes.emplace_back();
  volume.set_name("creds");
  volume.set_secret(true);
  api::ConfigFile* file = volume.add_files();
  file->set_path("pw");
  file->set_data("hunter2");
  file->set_mode(0400);
  api::RegistryCredential& cred = config->pull_credentials.emplace_back();
  cred.set_server("127.0.0.1:5000");
  cred.set_username("u");
  cred.set_password("p");

  Assignment order = OrderOn("n1", "a", {}, job);
  order.config = config;
  std::vector<api::SchedulerMessage> got = Welcome(std::move(order));
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(1));
  const api::PodAssignment& a = got[0].welcome().pods(0);
  const api::Container& sent = a.pod().spec().containers(0);
  std::vector<std::string> env;
  for (const api::EnvVar& var : sent.env()) {
    EXPECT_FALSE(var.has_value_from()) << var.name();
    env.push_back(var.name() + "=" + var.value());
  }
  // jobsetd's variables, envFrom's not in env, env (the optional missing
  // one left out).
  EXPECT_EQ(env.front(), "JOBSET_NAME=");
  EXPECT_THAT(
      std::vector<std::string>(env.end() - 4, env.end()),
      ElementsAre("LEVEL=3", "NODE=n1", "PASSWORD=hunter2", "MODE=mine"));
  EXPECT_EQ(sent.env_from_size(), 0);
  ASSERT_THAT(a.config_volumes(), SizeIs(1));
  EXPECT_EQ(a.config_volumes(0).name(), "creds");
  EXPECT_TRUE(a.config_volumes(0).secret());
  EXPECT_EQ(a.config_volumes(0).files(0).data(), "hunter2");
  EXPECT_EQ(a.config_volumes(0).files(0).mode(), 0400);
  ASSERT_THAT(a.pull_credentials(), SizeIs(1));
  EXPECT_EQ(a.pull_credentials(0).server(), "127.0.0.1:5000");
  EXPECT_EQ(a.pull_credentials(0).password(), "p");
}

TEST(SessionTest, WithoutAConfigReferencesStayReferences) {
  // What clients read (ExpandPod without a config): no value resolved.
  auto job = std::make_shared<api::Job>(*MakeJob());
  api::Container* c = job->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_containers(0);
  api::EnvVar* password = c->add_env();
  password->set_name("PASSWORD");
  password->mutable_value_from()->mutable_secret_key_ref()->set_name("db");
  password->mutable_value_from()->mutable_secret_key_ref()->set_key("pw");
  c->add_env_from()->mutable_secret_ref()->set_name("db");
  api::Pod pod = OrderOn("n1", "a", {}, job).Pod();
  const api::EnvVar& var =
      pod.spec().containers(0).env(pod.spec().containers(0).env_size() - 1);
  EXPECT_EQ(var.name(), "PASSWORD");
  EXPECT_EQ(var.value(), "");
  EXPECT_EQ(var.value_from().secret_key_ref().name(), "db");
  EXPECT_EQ(pod.spec().containers(0).env_from_size(), 1);
}

// The agent runs a container without runAsUser as root only at the level
// jobsetd admitted its JobSet at, which the Job carries.
TEST(SessionTest, AnOrderCarriesItsAdmittedPodSecurityLevel) {
  auto job = std::make_shared<api::Job>(*MakeJob());
  EXPECT_EQ(ToAssignment(OrderOn("n1", "a", {}, job)).pod_security_level(), "");
  (*job->mutable_metadata()->mutable_annotations())[kPodSecurityLevelKey] =
      "privileged";
  EXPECT_EQ(ToAssignment(OrderOn("n1", "a", {}, job)).pod_security_level(),
            "privileged");
}

// As kubelet: an env value's $(NAME) is expanded from the variables before
// it (jobsetd's, envFrom's, env's earlier entries) for the agent; clients
// see the value as written.
TEST(SessionTest, AnEnvValueExpandsTheVariablesBeforeIt) {
  auto job = std::make_shared<api::Job>(*MakeJob());
  api::Container* c = job->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_containers(0);
  c->add_env_from()->mutable_config_map_ref()->set_name("settings");
  auto add = [c](const char* name, const char* value) {
    api::EnvVar* v = c->add_env();
    v->set_name(name);
    v->set_value(value);
  };
  add("URL", "http://$(HOST):8080/$(LATER)");
  add("LATER", "x");
  add("FLAGS", "--node=$(NODE) --level=$(LEVEL) $$(HOST) $(JOBSET_NAME)");
  auto config = std::make_shared<api::PodConfig>();
  config->env["main"].from = {{"HOST", "db.local"}, {"LEVEL", "3"}};
  const api::Pod client_view = OrderOn("n1", "a", {}, job).Pod();
  Assignment order = OrderOn("n1", "a", {}, job);
  order.config = config;
  std::vector<api::SchedulerMessage> got = Welcome(std::move(order));
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(1));
  std::map<std::string, std::string> env;
  for (const api::EnvVar& var :
       got[0].welcome().pods(0).pod().spec().containers(0).env())
    env[var.name()] = var.value();
  EXPECT_EQ(env["URL"], "http://db.local:8080/$(LATER)");
  EXPECT_EQ(env["FLAGS"], "--node=n1 --level=3 $(HOST) ");
  std::map<std::string, std::string> seen;
  for (const api::EnvVar& var : client_view.spec().containers(0).env())
    seen[var.name()] = var.value();
  EXPECT_EQ(seen["URL"], "http://$(HOST):8080/$(LATER)");
}

}  // namespace
}  // namespace jobset::scheduler
