// local-etcd: a private etcd cluster on 127.0.0.1 for `tools/demo --ha`:
// --members members (default 3) speaking TLS with client and peer
// certificates from a CA of its own, all under --dir. It writes what jobsetd
// needs to reach them to <dir>/env, runs until SIGTERM or SIGINT, then stops
// every member it started (by pid): nothing outlives it.
//
//   local-etcd --dir=DIR [--members=3]
//
// <dir>/env (shell assignments, written once every member answers):
//   ETCD_ENDPOINTS=https://127.0.0.1:P1,https://127.0.0.1:P2,...
//   ETCD_CAFILE=DIR/...  ETCD_CERTFILE=DIR/...  ETCD_KEYFILE=DIR/...
//
// For fault tests (tools/soak --ha): SIGUSR1 kills the next member in turn
// with SIGKILL (1, 2, ..., then 1 again) and SIGUSR2 starts the killed ones
// again on their data and ports; each prints a line saying what it did.

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/etcd/etcd_test_server.h"

ABSL_FLAG(std::string, dir, "", "folder for the members' data and the PKI");
ABSL_FLAG(int, members, 3, "how many members (1 to 7)");

namespace {

using jobset::store::testing::EtcdTestServer;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "local-etcd: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) return Fail(absl::InvalidArgumentError("--dir is required"));
  const int members = absl::GetFlag(FLAGS_members);
  if (members < 1 || members > 7) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--members=", members, ": want 1 to 7")));
  }
  if (!EtcdTestServer::Available()) {
    return Fail(absl::NotFoundError(EtcdTestServer::Why()));
  }
  // Signals are taken by sigwait below; blocked before any thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGUSR1);
  sigaddset(&stop, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto etcd =
      EtcdTestServer::Start({.dir = dir, .members = members, .tls = true});
  if (!etcd.ok()) return Fail(etcd.status());
  {
    const std::string env = dir + "/env";
    std::ofstream out(env + ".tmp");
    out << "ETCD_ENDPOINTS=" << absl::StrJoin((*etcd)->endpoints(), ",") << "\n"
        << "ETCD_CAFILE=" << (*etcd)->ca_file() << "\n"
        << "ETCD_CERTFILE=" << (*etcd)->client_cert_file() << "\n"
        << "ETCD_KEYFILE=" << (*etcd)->client_key_file() << "\n";
    out.close();
    if (!out || std::rename((env + ".tmp").c_str(), env.c_str()) != 0) {
      return Fail(absl::InternalError(absl::StrCat("cannot write ", env)));
    }
  }
  std::printf("local-etcd: %d members at %s\n", members,
              absl::StrJoin((*etcd)->endpoints(), ",").c_str());
  std::fflush(stdout);
  int next = 0;             // The member SIGUSR1 kills.
  std::vector<int> killed;  // The members SIGUSR2 starts again.
  for (int signal = 0; sigwait(&stop, &signal) == 0;) {
    if (signal == SIGUSR1) {
      const absl::Status s = (*etcd)->Kill(next);
      std::printf("local-etcd: member %d killed: %s\n", next + 1,
                  s.ToString().c_str());
      if (s.ok()) killed.push_back(next);
      next = (next + 1) % members;
    } else if (signal == SIGUSR2) {
      for (int i : std::exchange(killed, {})) {
        const absl::Status s = (*etcd)->Restart(i);
        std::printf("local-etcd: member %d started again: %s\n", i + 1,
                    s.ToString().c_str());
      }
    } else {
      break;
    }
    std::fflush(stdout);
  }
  etcd->reset();  // Stops every member (by its pid).
  return 0;
}
