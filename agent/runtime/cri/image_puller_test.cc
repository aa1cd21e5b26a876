// ImagePuller against an in-process fake CRI image service: which
// credentials each pull tries, what a pull's failure and success leave, the
// pull's duration by the injected clock, and cancellation.

#include "agent/runtime/cri/image_puller.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/api.grpc.pb.h"
#include "agent/runtime/cri/cri_client.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

namespace v1 = ::runtime::v1;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kImage[] = "127.0.0.1:5000/test/bb:1";

class FakeRuntimeService final : public v1::RuntimeService::Service {
  grpc::Status Version(grpc::ServerContext*, const v1::VersionRequest*,
                       v1::VersionResponse* response) override {
    response->set_runtime_api_version("v1");
    response->set_runtime_name("fake");
    return grpc::Status::OK;
  }
};

// Images by name; a pull works for the usernames in `accepted` (""
// anonymous), taking `pull_time` on the clock.
class FakeImageService final : public v1::ImageService::Service {
 public:
  explicit FakeImageService(FakeClock* clock) : clock_(clock) {}

  void Add(const std::string& name) {
    absl::MutexLock lock(&mu_);
    present_.insert(name);
  }
  void Accept(const std::string& username) {
    absl::MutexLock lock(&mu_);
    accepted_.insert(username);
  }
  void BlockPulls() {
    absl::MutexLock lock(&mu_);
    block_ = true;
  }
  // The username of each pull tried ("" anonymous).
  std::vector<std::string> attempts() const {
    absl::MutexLock lock(&mu_);
    return attempts_;
  }
  absl::Notification& pull_started() { return pull_started_; }

  grpc::Status ImageStatus(grpc::ServerContext*,
                           const v1::ImageStatusRequest* request,
                           v1::ImageStatusResponse* response) override {
    absl::MutexLock lock(&mu_);
    if (present_.contains(request->image().image())) {
      response->mutable_image()->set_id("sha256:bb");
      response->mutable_image()->mutable_uid()->set_value(1000);
    }
    return grpc::Status::OK;
  }

  grpc::Status PullImage(grpc::ServerContext* context,
                         const v1::PullImageRequest* request,
                         v1::PullImageResponse* response) override {
    const std::string user = request->auth().username();
    bool block;
    {
      absl::MutexLock lock(&mu_);
      attempts_.push_back(user);
      block = block_;
    }
    if (block) {
      if (!pull_started_.HasBeenNotified()) pull_started_.Notify();
      while (!context->IsCancelled()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    clock_->Advance(absl::Seconds(2));
    absl::MutexLock lock(&mu_);
    if (!accepted_.contains(user)) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          absl::StrCat("pull access denied for ", user));
    }
    EXPECT_EQ(request->auth().server_address(), "https://127.0.0.1:5000");
    present_.insert(request->image().image());
    present_.insert("sha256:bb");
    response->set_image_ref("sha256:bb");
    return grpc::Status::OK;
  }

 private:
  FakeClock* const clock_;
  mutable absl::Mutex mu_;
  std::set<std::string> present_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> accepted_ ABSL_GUARDED_BY(mu_);
  bool block_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> attempts_ ABSL_GUARDED_BY(mu_);
  absl::Notification pull_started_;
};

class ImagePullerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&runtime_);
    builder.RegisterService(&images_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    CriClient::Options options;
    options.endpoint = absl::StrCat("127.0.0.1:", port);
    absl::StatusOr<std::unique_ptr<CriClient>> client =
        CriClient::Connect(options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    assignment_.mutable_pod()->mutable_metadata()->set_uid("u1");
  }
  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(1));
    }
  }

  void AddCredential(const std::string& server, const std::string& user) {
    api::RegistryCredential* c = assignment_.add_pull_credentials();
    c->set_server(server);
    c->set_username(user);
    c->set_password("pw-" + user);
  }

  // "Reason: message" of each event taken.
  std::vector<std::string> Events() {
    std::vector<std::string> out;
    for (const api::PodEvent& e : events_.Take()) {
      out.push_back(absl::StrCat(e.reason(), ": ", e.message()));
    }
    return out;
  }

  FakeClock clock_;
  FakeRuntimeService runtime_;
  FakeImageService images_{&clock_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CriClient> client_;
  api::PodAssignment assignment_;
  v1::PodSandboxConfig sandbox_config_;
  PodEventLog events_;
};

api::Container Spec(const std::string& policy) {
  api::Container c;
  c.set_name("main");
  c.set_image(kImage);
  c.set_image_pull_policy(policy);
  return c;
}

TEST_F(ImagePullerTest, TriesMatchingCredentialsInTurnUntilOneWorks) {
  AddCredential("127.0.0.1:5000", "first");
  AddCredential("other.example.com", "unrelated");
  AddCredential("127.0.0.1:5000", "second");
  AddCredential("127.0.0.1:5000", "third");
  images_.Accept("second");
  ImagePuller puller(client_.get(), &clock_, assignment_, sandbox_config_,
                     &events_);
  const api::Container spec = Spec("IfNotPresent");
  ImagePullState state(kImage, PullPolicy::kIfNotPresent, absl::Seconds(10),
                       absl::Minutes(5));
  ImageFacts image;
  ContainerRecord record = NewContainer(false);
  EXPECT_TRUE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_THAT(images_.attempts(), ElementsAre("first", "second"));
  EXPECT_EQ(image.id, "sha256:bb");
  EXPECT_EQ(image.uid, 1000);
  EXPECT_EQ(record.reason, "ContainerCreating");
  // Two pulls of 2 s each on the injected clock.
  EXPECT_THAT(
      Events(),
      ElementsAre(
          "Pulling: Pulling image \"127.0.0.1:5000/test/bb:1\"",
          "Pulled: Successfully pulled image \"127.0.0.1:5000/test/bb:1\" "
          "in 4s"));
  // Present now: not pulled again.
  EXPECT_TRUE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_THAT(images_.attempts(), ElementsAre("first", "second"));
  EXPECT_THAT(Events(), IsEmpty());
}

TEST_F(ImagePullerTest, AnonymousWhenNoCredentialMatchesThenBackOff) {
  AddCredential("other.example.com", "unrelated");
  ImagePuller puller(client_.get(), &clock_, assignment_, sandbox_config_,
                     &events_);
  const api::Container spec = Spec("Always");
  ImagePullState state(kImage, PullPolicy::kAlways, absl::Seconds(10),
                       absl::Minutes(5));
  ImageFacts image;
  ContainerRecord record = NewContainer(false);
  const absl::Time began = clock_.Now();
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, began));
  EXPECT_THAT(images_.attempts(), ElementsAre(""));
  EXPECT_EQ(record.reason, "ErrImagePull");
  EXPECT_EQ(record.message,
            "Failed to pull image \"127.0.0.1:5000/test/bb:1\": pull access "
            "denied for ");
  // The back-off runs from the pull's end, by the injected clock.
  EXPECT_EQ(state.next_pull(), began + absl::Seconds(2 + 10));
  EXPECT_THAT(Events(), testing::SizeIs(3));
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_EQ(record.reason, "ImagePullBackOff");
  EXPECT_THAT(images_.attempts(), ElementsAre(""));
}

TEST_F(ImagePullerTest, NeverLooksButDoesNotPull) {
  ImagePuller puller(client_.get(), &clock_, assignment_, sandbox_config_,
                     &events_);
  const api::Container spec = Spec("Never");
  ImagePullState state(kImage, PullPolicy::kNever, absl::Seconds(10),
                       absl::Minutes(5));
  ImageFacts image;
  ContainerRecord record = NewContainer(false);
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_EQ(record.reason, "ErrImageNeverPull");
  EXPECT_THAT(images_.attempts(), IsEmpty());
  images_.Add("127.0.0.1:5000/test/bb:1");
  EXPECT_TRUE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_EQ(image.id, "sha256:bb");
}

TEST_F(ImagePullerTest, InvalidNameIsNotLookedUp) {
  ImagePuller puller(client_.get(), &clock_, assignment_, sandbox_config_,
                     &events_);
  api::Container spec = Spec("");
  spec.set_image("Bad:Name");
  ImagePullState state("Bad:Name", PullPolicy::kIfNotPresent, absl::Seconds(10),
                       absl::Minutes(5));
  ImageFacts image;
  ContainerRecord record = NewContainer(false);
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  EXPECT_EQ(record.reason, "InvalidImageName");
  EXPECT_THAT(images_.attempts(), IsEmpty());
}

TEST_F(ImagePullerTest, CancelEndsAPullInFlightAndPreventsMore) {
  images_.BlockPulls();
  ImagePuller puller(client_.get(), &clock_, assignment_, sandbox_config_,
                     &events_);
  const api::Container spec = Spec("Always");
  ImagePullState state(kImage, PullPolicy::kAlways, absl::Seconds(10),
                       absl::Minutes(5));
  ImageFacts image;
  ContainerRecord record = NewContainer(false);
  std::thread canceller([&] {
    images_.pull_started().WaitForNotification();
    puller.Cancel();
  });
  // The cancelled pull fails as any failed pull does.
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, clock_.Now()));
  canceller.join();
  EXPECT_EQ(record.reason, "ErrImagePull");
  // No pull starts once cancelled; the record is left as it is.
  record.reason = "ContainerCreating";
  EXPECT_FALSE(puller.Ensure(spec, &state, &image, &record, state.next_pull()));
  EXPECT_EQ(record.reason, "ContainerCreating");
  EXPECT_THAT(images_.attempts(), ElementsAre(""));
}

}  // namespace
}  // namespace jobset::agent::cri
