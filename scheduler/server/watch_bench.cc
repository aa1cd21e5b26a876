// Threads and resident memory of a running jobsetd with N idle watches open
// (issue 42): opens WatchJobSets streams to --address, in steps up to each
// count of --watches, reads each one's first event (so that it is open on
// the server), lets them idle, and prints jobsetd's (--pid) Threads and
// VmRSS from /proc. The watches need --max_streams_per_user above the
// largest count. docs/benchmarks.md has the figures and the command.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "proto/jobset_service.grpc.pb.h"

ABSL_FLAG(std::string, address, "127.0.0.1:7070", "jobsetd (--insecure)");
ABSL_FLAG(int, pid, 0, "jobsetd's process id");
ABSL_FLAG(std::string, watches, "0,100,1000,5000", "counts of open watches");
ABSL_FLAG(absl::Duration, idle, absl::Seconds(2),
          "how long the watches idle before each reading");

namespace {

// Field `name` ("Threads", "VmRSS") of /proc/`pid`/status, as a number.
long long Status(int pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) != 0) continue;
    std::string digits;
    for (char c : line) {
      if (c >= '0' && c <= '9') digits += c;
    }
    long long n = -1;
    return absl::SimpleAtoi(digits, &n) ? n : -1;
  }
  return -1;
}

struct Watch {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<jobset::api::WatchEvent>> reader;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int pid = absl::GetFlag(FLAGS_pid);
  auto stub = jobset::api::JobSetService::NewStub(grpc::CreateChannel(
      absl::GetFlag(FLAGS_address), grpc::InsecureChannelCredentials()));
  {
    // One JobSet, so that every watch has a first event to read.
    jobset::api::CreateJobSetRequest create;
    jobset::api::JobSet* js = create.mutable_jobset();
    js->mutable_metadata()->set_name("watch-bench");
    jobset::api::ReplicatedJob* rjob =
        js->mutable_spec()->add_replicated_jobs();
    rjob->set_name("w");
    rjob->set_replicas(1);
    jobset::api::Container* c = rjob->mutable_template_()
                                    ->mutable_spec()
                                    ->mutable_template_()
                                    ->mutable_spec()
                                    ->add_containers();
    c->set_name("main");
    c->set_image("busybox");
    grpc::ClientContext context;
    jobset::api::CreateJobSetResponse created;
    grpc::Status s = stub->CreateJobSet(&context, create, &created);
    if (!s.ok() && s.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      std::fprintf(stderr, "create: %s\n", s.error_message().c_str());
      return 1;
    }
  }
  std::printf("%8s %8s %10s\n", "watches", "threads", "rss_kib");
  std::vector<std::unique_ptr<Watch>> open;
  for (absl::string_view count :
       absl::StrSplit(absl::GetFlag(FLAGS_watches), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(count, &n)) return 2;
    while (static_cast<int>(open.size()) < n) {
      auto watch = std::make_unique<Watch>();
      watch->reader = stub->WatchJobSets(&watch->context,
                                         jobset::api::WatchJobSetsRequest());
      jobset::api::WatchEvent event;
      if (!watch->reader->Read(&event)) {
        std::fprintf(stderr, "watch %zu: %s\n", open.size(),
                     watch->reader->Finish().error_message().c_str());
        return 1;
      }
      open.push_back(std::move(watch));
    }
    absl::SleepFor(absl::GetFlag(FLAGS_idle));
    std::printf("%8d %8lld %10lld\n", n, Status(pid, "Threads"),
                Status(pid, "VmRSS"));
    std::fflush(stdout);
  }
  for (auto& watch : open) watch->context.TryCancel();
  for (auto& watch : open) watch->reader->Finish().IgnoreError();
  return 0;
}
