#include "store/etcd/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace jobset::store::testing {
namespace {

// Connects to "127.0.0.1:PORT"; -1 on failure.
int Dial(const std::string& target) {
  const size_t colon = target.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(target.substr(colon + 1), &port)) {
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, target.substr(0, colon).c_str(), &addr.sin_addr) !=
      1) {
    return -1;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(
    const std::string& target) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(
        absl::StrCat("tcp proxy: listen: ", std::strerror(error)));
  }
  auto proxy = absl::WrapUnique(new TcpProxy(fd, ntohs(addr.sin_port), target));
  proxy->thread_ = std::thread([p = proxy.get()] { p->Loop(); });
  return proxy;
}

TcpProxy::TcpProxy(int listen_fd, int port, std::string target)
    : listen_fd_(listen_fd), port_(port), target_(std::move(target)) {}

TcpProxy::~TcpProxy() {
  stopping_.store(true);
  thread_.join();
  close(listen_fd_);
}

std::string TcpProxy::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void TcpProxy::Loop() {
  // Each connection is a pair of fds: (client, upstream).
  std::vector<std::pair<int, int>> pairs;
  auto close_pair = [&](size_t i) {
    close(pairs[i].first);
    close(pairs[i].second);
    pairs.erase(pairs.begin() + static_cast<ptrdiff_t>(i));
  };
  while (!stopping_.load()) {
    const bool cut = cut_.load();
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    if (!cut) {
      for (const auto& [a, b] : pairs) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
    }
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) {
        const int upstream = Dial(target_);
        if (upstream < 0) {
          close(client);
        } else {
          pairs.emplace_back(client, upstream);
        }
      }
    }
    if (cut) continue;
    // Walk backwards so that closing a pair keeps the indexes valid.
    for (size_t i = (fds.size() - 1) / 2; i-- > 0;) {
      for (int side = 0; side < 2; ++side) {
        const pollfd& p = fds[1 + 2 * i + side];
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const int to = side == 0 ? pairs[i].second : pairs[i].first;
        char buffer[64 * 1024];
        const ssize_t n = read(p.fd, buffer, sizeof(buffer));
        bool ok = n > 0;
        for (ssize_t done = 0; ok && done < n;) {
          const ssize_t w = write(to, buffer + done, n - done);
          ok = w > 0;
          done += ok ? w : 0;
        }
        if (!ok) {
          close_pair(i);
          break;
        }
      }
    }
  }
  for (const auto& [a, b] : pairs) {
    close(a);
    close(b);
  }
}

}  // namespace jobset::store::testing
