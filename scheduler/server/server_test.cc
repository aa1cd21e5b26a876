// JobSetService over real gRPC, in process: the verbs, watch streaming,
// limits, health and reflection, shutdown.
#include "scheduler/server/server.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "common/grpc_status.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/impl/codegen/client_unary_call.h"
#include "grpcpp/impl/codegen/sync_stream.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "proto/kueue_service.grpc.pb.h"
#include "scheduler/auth/insecure_auth_for_test.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

Server::Options ListenOn(const std::string& address) {
  static const InsecureAuthForTest* const auth = new InsecureAuthForTest;
  Server::Options options;
  options.listen = address;
  options.auth = auth->get();
  return options;
}

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string ToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

grpc::ByteBuffer FromString(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = Server::Start(ListenOn("127.0.0.1:0"), &store_);
    ASSERT_THAT(server.status(), IsOk());
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(server_->address(),
                                   grpc::InsecureChannelCredentials());
    stub_ = api::JobSetService::NewStub(channel_);
  }

  absl::StatusOr<api::CreateJobSetResponse> Create(const JobSet& jobset) {
    grpc::ClientContext context;
    api::CreateJobSetRequest request;
    *request.mutable_jobset() = jobset;
    api::CreateJobSetResponse response;
    grpc::Status status = stub_->CreateJobSet(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  // Calls a unary method by name with raw protobuf bytes.
  absl::StatusOr<std::string> RawUnary(const std::string& method,
                                       const std::string& request) {
    grpc::ClientContext context;
    grpc::ByteBuffer in = FromString(request), out;
    grpc::Status status = grpc::internal::BlockingUnaryCall(
        channel_.get(),
        grpc::internal::RpcMethod(method.c_str(),
                                  grpc::internal::RpcMethod::NORMAL_RPC),
        &context, in, &out);
    if (!status.ok()) return FromGrpcStatus(status);
    return ToString(out);
  }

  store::MemoryStore store_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
};

TEST_F(ServerTest, CreateGetListUpdateDelete) {
  auto created =
      Create(JobSetBuilder("train").Replicated("workers", 2).Build());
  ASSERT_THAT(created.status(), IsOk());
  EXPECT_TRUE(created->created());
  EXPECT_FALSE(created->jobset().metadata().uid().empty());

  grpc::ClientContext get_context;
  api::GetJobSetRequest get;
  get.set_name("train");
  JobSet got;
  ASSERT_TRUE(stub_->GetJobSet(&get_context, get, &got).ok());
  EXPECT_EQ(got.metadata().uid(), created->jobset().metadata().uid());

  grpc::ClientContext list_context;
  api::ListJobSetsResponse list;
  ASSERT_TRUE(
      stub_->ListJobSets(&list_context, api::ListJobSetsRequest(), &list).ok());
  ASSERT_EQ(list.items_size(), 1);

  // A stale resourceVersion is ABORTED.
  api::UpdateJobSetRequest update;
  *update.mutable_jobset() = got;
  update.mutable_jobset()->mutable_spec()->set_suspend(true);
  grpc::ClientContext update_context;
  JobSet updated;
  ASSERT_TRUE(stub_->UpdateJobSet(&update_context, update, &updated).ok());
  EXPECT_TRUE(updated.spec().suspend());
  grpc::ClientContext stale_context;
  grpc::Status stale = stub_->UpdateJobSet(&stale_context, update, &updated);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED);

  grpc::ClientContext resume_context;
  api::ResumeJobSetRequest resume;
  resume.set_name("train");
  JobSet resumed;
  ASSERT_TRUE(stub_->ResumeJobSet(&resume_context, resume, &resumed).ok());
  EXPECT_FALSE(resumed.spec().suspend());

  grpc::ClientContext delete_context;
  api::DeleteJobSetRequest del;
  del.set_name("train");
  JobSet deleted;
  ASSERT_TRUE(stub_->DeleteJobSet(&delete_context, del, &deleted).ok());
  grpc::ClientContext missing_context;
  EXPECT_EQ(stub_->GetJobSet(&missing_context, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, ErrorsCarryCodesAndFieldPaths) {
  JobSet bad = JobSetBuilder("train").Replicated("workers", 2).Build();
  bad.mutable_spec()->mutable_replicated_jobs(0)->set_name("Bad_Name");
  EXPECT_THAT(Create(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.replicatedJobs[0].name")));
  ASSERT_THAT(Create(JobSetBuilder("x").Replicated("w", 1).Build()).status(),
              IsOk());
  EXPECT_THAT(Create(JobSetBuilder("x").Replicated("w", 2).Build()).status(),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("\"x\"")));
}

TEST_F(ServerTest, RequestsOverTheLimitAreRefused) {
  JobSet huge = JobSetBuilder("huge").Replicated("w", 1).Build();
  (*huge.mutable_metadata()->mutable_annotations())["blob"] =
      std::string(Server::kMaxRequestBytes, 'x');
  EXPECT_THAT(Create(huge).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr(absl::StrCat(Server::kMaxRequestBytes))));
  // Under the request limit but over the JobSet limit.
  (*huge.mutable_metadata()->mutable_annotations())["blob"] =
      std::string(2 << 20, 'x');
  EXPECT_THAT(
      Create(huge).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1.5 MiB")));
}

TEST_F(ServerTest, WatchStreamsChangesUntilShutdown) {
  ASSERT_THAT(Create(JobSetBuilder("a").Replicated("w", 1).Build()).status(),
              IsOk());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  auto reader = stub_->WatchJobSets(&context, api::WatchJobSetsRequest());
  api::WatchEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), "ADDED");
  EXPECT_EQ(event.object().metadata().name(), "a");

  ASSERT_THAT(Create(JobSetBuilder("b").Replicated("w", 1).Build()).status(),
              IsOk());
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), "ADDED");
  EXPECT_EQ(event.object().metadata().name(), "b");

  // Shutdown ends the open watch, which the client sees as the stream's end.
  std::thread stopper(
      [&] { server_->Shutdown(absl::Now() + absl::Seconds(5)); });
  EXPECT_FALSE(reader->Read(&event));
  reader->Finish().IgnoreError();
  stopper.join();
}

// KueueService is served beside JobSetService, and Shutdown ends its watches
// as it ends theirs.
TEST_F(ServerTest, KueueServiceIsServedUntilShutdown) {
  auto kueue = api::KueueService::NewStub(channel_);
  api::ApplyKueueObjectRequest apply;
  api::LocalQueue* lq = apply.mutable_object()->mutable_local_queue();
  lq->mutable_metadata()->set_name("lq");
  lq->mutable_spec()->set_cluster_queue("research");
  api::ApplyKueueObjectResponse applied;
  grpc::ClientContext apply_context;
  ASSERT_TRUE(kueue->ApplyKueueObject(&apply_context, apply, &applied).ok());
  EXPECT_TRUE(applied.created());
  EXPECT_EQ(applied.object().local_queue().metadata().namespace_(), "default");

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  api::WatchKueueObjectsRequest watch;
  watch.set_kind("LocalQueue");
  watch.set_resource_version("0");
  auto reader = kueue->WatchKueueObjects(&context, watch);
  api::KueueWatchEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), "ADDED");
  EXPECT_EQ(event.object().local_queue().metadata().name(), "lq");

  std::thread stopper(
      [&] { server_->Shutdown(absl::Now() + absl::Seconds(20)); });
  EXPECT_FALSE(reader->Read(&event));
  // Ended by the service (OK), not cancelled at the drain's deadline.
  EXPECT_TRUE(reader->Finish().ok());
  stopper.join();
}

TEST_F(ServerTest, WatchFromAnInvalidVersionIsRefused) {
  grpc::ClientContext context;
  api::WatchJobSetsRequest request;
  request.set_resource_version("abc");
  auto reader = stub_->WatchJobSets(&context, request);
  api::WatchEvent event;
  EXPECT_FALSE(reader->Read(&event));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("resourceVersion"));
}

TEST_F(ServerTest, GetVersionAnswersWithTheBuildsVersion) {
  grpc::ClientContext context;
  api::VersionInfo version;
  ASSERT_TRUE(
      stub_->GetVersion(&context, api::GetVersionRequest(), &version).ok());
  EXPECT_EQ(version.git_version(), "v0.1.0");
  EXPECT_EQ(version.major(), "0");
  EXPECT_EQ(version.minor(), "1");
  EXPECT_THAT(version.platform(), HasSubstr("linux/"));
}

TEST_F(ServerTest, HealthServiceReportsServing) {
  // grpc.health.v1.HealthCheckRequest{service} -> HealthCheckResponse{status}.
  for (const std::string service :
       {"", "jobset.api.JobSetService", "jobset.api.KueueService"}) {
    std::string request;
    if (!service.empty()) {
      request = absl::StrCat(
          "\x0a", std::string(1, static_cast<char>(service.size())), service);
    }
    auto response = RawUnary("/grpc.health.v1.Health/Check", request);
    ASSERT_THAT(response.status(), IsOk()) << service;
    EXPECT_EQ(*response, "\x08\x01") << "SERVING for \"" << service << "\"";
  }
}

TEST_F(ServerTest, ReflectionListsTheServices) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>>
      stream(grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer,
                                                       grpc::ByteBuffer>::
                 Create(channel_.get(),
                        grpc::internal::RpcMethod(
                            "/grpc.reflection.v1alpha.ServerReflection/"
                            "ServerReflectionInfo",
                            grpc::internal::RpcMethod::BIDI_STREAMING),
                        &context));
  // ServerReflectionRequest{list_services: ""} (field 7).
  ASSERT_TRUE(stream->Write(FromString(std::string("\x3a\x00", 2))));
  stream->WritesDone();
  grpc::ByteBuffer response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_THAT(ToString(response), AllOf(HasSubstr("jobset.api.JobSetService"),
                                        HasSubstr("jobset.api.KueueService"),
                                        HasSubstr("grpc.health.v1.Health")));
  EXPECT_TRUE(stream->Finish().ok());
}

// Starts a server on a free port with `limits`, serving `extra` too.
std::unique_ptr<Server> StartWithLimits(
    store::Store* store, const Server::Limits& limits,
    std::vector<grpc::Service*> extra = {}) {
  Server::Options options = ListenOn("127.0.0.1:0");
  options.grpc_limits = limits;
  options.services = std::move(extra);
  auto server = Server::Start(options, store);
  EXPECT_THAT(server.status(), IsOk());
  return server.ok() ? *std::move(server) : nullptr;
}

std::chrono::system_clock::time_point In(absl::Duration d) {
  return absl::ToChronoTime(absl::Now() + d);
}

// The message limits hold for every service the server carries: the JobSet
// API, gRPC health and the services jobsetd adds (here a NodeService that
// implements nothing: the limit answers before any handler would).
TEST(ServerLimitsTest, MessageSizesAreLimitedOnEveryService) {
  store::MemoryStore store;
  Server::Limits limits;
  limits.max_receive_bytes = 64 << 10;
  limits.max_send_bytes = 256 << 10;
  api::NodeService::Service nodes;
  std::unique_ptr<Server> server = StartWithLimits(&store, limits, {&nodes});
  ASSERT_NE(server, nullptr);
  auto channel = grpc::CreateChannel(server->address(),
                                     grpc::InsecureChannelCredentials());

  auto node_stub = api::NodeService::NewStub(channel);
  api::GetNodeRequest get_node;
  get_node.set_name(std::string(100 << 10, 'n'));
  api::Node node;
  grpc::ClientContext big_node;
  EXPECT_EQ(node_stub->GetNode(&big_node, get_node, &node).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  get_node.set_name("n");
  grpc::ClientContext small_node;
  EXPECT_EQ(node_stub->GetNode(&small_node, get_node, &node).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  auto stub = api::JobSetService::NewStub(channel);
  auto create = [&](const JobSet& jobset) {
    grpc::ClientContext context;
    api::CreateJobSetRequest request;
    *request.mutable_jobset() = jobset;
    api::CreateJobSetResponse response;
    return stub->CreateJobSet(&context, request, &response).error_code();
  };
  JobSet big = JobSetBuilder("big").Replicated("w", 1).Build();
  (*big.mutable_metadata()->mutable_annotations())["blob"] =
      std::string(100 << 10, 'x');
  EXPECT_EQ(create(big), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Six of 50 KiB each fit in; a list of all six is over the send limit.
  for (int i = 0; i < 6; ++i) {
    JobSet jobset =
        JobSetBuilder(absl::StrCat("js-", i)).Replicated("w", 1).Build();
    (*jobset.mutable_metadata()->mutable_annotations())["blob"] =
        std::string(50 << 10, 'x');
    ASSERT_EQ(create(jobset), grpc::StatusCode::OK);
  }
  grpc::ClientContext list_context;
  api::ListJobSetsResponse list;
  EXPECT_EQ(stub->ListJobSets(&list_context, api::ListJobSetsRequest(), &list)
                .error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// Opens a watch on `stub` and reads its first event (the JobSet stored), so
// that the call is known to be in progress on the server.
struct OpenWatch {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<api::WatchEvent>> reader;
  bool started = false;

  OpenWatch(api::JobSetService::Stub* stub, absl::Duration deadline) {
    context.set_deadline(In(deadline));
    reader = stub->WatchJobSets(&context, api::WatchJobSetsRequest());
    api::WatchEvent event;
    started = reader->Read(&event);
  }
  grpc::Status End() {
    context.TryCancel();
    return reader->Finish();
  }
};

// Returns a stub for `server` after storing JobSet "a" through it.
std::unique_ptr<api::JobSetService::Stub> StubHoldingA(const Server& server) {
  auto stub = api::JobSetService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  api::CreateJobSetRequest create;
  *create.mutable_jobset() = JobSetBuilder("a").Replicated("w", 1).Build();
  api::CreateJobSetResponse created;
  EXPECT_TRUE(stub->CreateJobSet(&context, create, &created).ok());
  return stub;
}

TEST(ServerLimitsTest, ConcurrentStreamsPerConnectionAreLimited) {
  store::MemoryStore store;
  Server::Limits limits;
  limits.max_concurrent_streams = 2;
  std::unique_ptr<Server> server = StartWithLimits(&store, limits);
  ASSERT_NE(server, nullptr);
  auto stub = StubHoldingA(*server);

  OpenWatch first(stub.get(), absl::Seconds(30));
  OpenWatch second(stub.get(), absl::Seconds(30));
  ASSERT_TRUE(first.started);
  ASSERT_TRUE(second.started);
  // A third call on the connection waits for a stream to end.
  api::GetJobSetRequest get;
  get.set_name("a");
  JobSet got;
  grpc::ClientContext waiting;
  waiting.set_deadline(In(absl::Milliseconds(500)));
  EXPECT_EQ(stub->GetJobSet(&waiting, get, &got).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  first.End().IgnoreError();
  grpc::ClientContext served;
  served.set_deadline(In(absl::Seconds(10)));
  EXPECT_TRUE(stub->GetJobSet(&served, get, &got).ok());
  second.End().IgnoreError();
}

// One user holds at most --max_streams_per_user watches (and logs -f) at
// once: the next is refused with RESOURCE_EXHAUSTED naming the limit, and
// one ending makes room again.
TEST(ServerLimitsTest, StreamsPerUserAreLimited) {
  store::MemoryStore store;
  StreamLimiter streams(2);
  Server::Options options = ListenOn("127.0.0.1:0");
  options.streams = &streams;
  auto server = Server::Start(options, &store);
  ASSERT_THAT(server.status(), IsOk());
  auto stub = StubHoldingA(**server);
  OpenWatch first(stub.get(), absl::Seconds(30));
  OpenWatch second(stub.get(), absl::Seconds(30));
  ASSERT_TRUE(first.started);
  ASSERT_TRUE(second.started);
  {
    OpenWatch third(stub.get(), absl::Seconds(30));
    EXPECT_FALSE(third.started);
    const grpc::Status refused = third.reader->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(refused.error_message(),
                AllOf(HasSubstr("2 streams open"),
                      HasSubstr("--max_streams_per_user=2")));
  }
  first.End().IgnoreError();
  // The slot is given back as the handler returns (within its poll): a new
  // watch gets it. Each try is a call, not a spin.
  bool started = false;
  const absl::Time end = absl::Now() + absl::Seconds(20);
  while (!started && absl::Now() < end) {
    OpenWatch again(stub.get(), absl::Seconds(30));
    started = again.started;
    if (!started)
      again.reader->Finish().IgnoreError();
    else
      again.End().IgnoreError();
  }
  EXPECT_TRUE(started);
  second.End().IgnoreError();
  (*server)->Shutdown(absl::Now() + absl::Seconds(5));
}

// A synchronous call that lasts until its client cancels it (it writes one
// message first, so that the client knows it started).
class HeldCall final : public api::PodLogService::Service {
 public:
  grpc::Status GetPodLogs(grpc::ServerContext* context,
                          const api::GetPodLogsRequest*,
                          grpc::ServerWriter<api::PodLogs>* writer) override {
    writer->Write(api::PodLogs());
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(10));
    return grpc::Status::OK;
  }
};

struct OpenHeldCall {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<api::PodLogs>> reader;
  bool started = false;

  OpenHeldCall(api::PodLogService::Stub* stub, absl::Duration deadline) {
    context.set_deadline(In(deadline));
    reader = stub->GetPodLogs(&context, api::GetPodLogsRequest());
    api::PodLogs logs;
    started = reader->Read(&logs);
  }
};

// Each synchronous call in progress holds a server thread: past the thread
// limit, calls are refused with RESOURCE_EXHAUSTED instead of each getting a
// new thread, and the server serves again once calls end. Watches are
// callback streams and hold none: as many as wanted start at the limit.
TEST(ServerLimitsTest, ThreadsAreLimited) {
  store::MemoryStore store;
  Server::Limits limits;
  limits.max_threads = 4;
  HeldCall held;
  std::unique_ptr<Server> server = StartWithLimits(&store, limits, {&held});
  ASSERT_NE(server, nullptr);
  auto stub = StubHoldingA(*server);
  auto held_stub = api::PodLogService::NewStub(grpc::CreateChannel(
      server->address(), grpc::InsecureChannelCredentials()));

  constexpr int kWatches = 16;
  std::vector<std::unique_ptr<OpenWatch>> watches;
  for (int i = 0; i < kWatches; ++i) {
    watches.push_back(
        std::make_unique<OpenWatch>(stub.get(), absl::Seconds(30)));
    EXPECT_TRUE(watches.back()->started) << i;
  }

  constexpr int kCalls = 8;
  std::vector<std::unique_ptr<OpenHeldCall>> calls;
  int started = 0;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(
        std::make_unique<OpenHeldCall>(held_stub.get(), absl::Seconds(5)));
    if (calls.back()->started) ++started;
  }
  EXPECT_GE(started, 1);
  EXPECT_LT(started, kCalls);
  int exhausted = 0;
  for (auto& call : calls) {
    if (call->started) {
      call->context.TryCancel();
      call->reader->Finish().IgnoreError();
    } else if (call->reader->Finish().error_code() ==
               grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
    }
  }
  EXPECT_EQ(exhausted, kCalls - started);
  // Every held call has ended: the server serves again (its threads are
  // returned as the calls finish, so allow it a moment).
  bool served = false;
  for (int attempt = 0; attempt < 50 && !served; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(In(absl::Seconds(5)));
    api::GetJobSetRequest get;
    get.set_name("a");
    JobSet got;
    served = stub->GetJobSet(&context, get, &got).ok();
    if (!served) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(served);
  for (auto& watch : watches) watch->End().IgnoreError();
}

TEST(ServerStartTest, ABusyPortIsReported) {
  store::MemoryStore store;
  auto first = Server::Start(ListenOn("127.0.0.1:0"), &store);
  ASSERT_THAT(first.status(), IsOk());
  EXPECT_THAT(
      Server::Start(ListenOn((*first)->address()), &store).status(),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr((*first)->address())));
}

}  // namespace
}  // namespace jobset::scheduler
