#include "common/replicas.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/leader_redirect.h"

namespace jobset {

namespace {

// Why `entry` is not HOST:PORT, or "" when it is.
std::string AddressProblem(absl::string_view entry) {
  if (entry.empty()) return "is empty";
  if (entry.size() > Replicas::kMaxAddressLength) {
    return absl::StrCat("is ", entry.size(), " bytes, over the limit of ",
                        Replicas::kMaxAddressLength);
  }
  const size_t colon = entry.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(entry.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return "is not HOST:PORT (port 1-65535)";
  }
  for (char c : entry) {
    if (c <= ' ' || c >= 0x7f || c == '/' || c == ',') {
      return "is not HOST:PORT (a space, control character, / or ,)";
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<Replicas> Replicas::Parse(absl::string_view flag,
                                         absl::string_view list) {
  std::vector<std::string> addresses;
  for (absl::string_view entry : absl::StrSplit(list, ',')) {
    if (addresses.size() == kMaxAddresses) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": more than ", kMaxAddresses, " addresses"));
    }
    if (std::string problem = AddressProblem(entry); !problem.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, "=", list, ": entry ", addresses.size(), " \"",
                       entry, "\" ", problem));
    }
    addresses.emplace_back(entry);
  }
  return Replicas(std::move(addresses));
}

Replicas::Replicas(const Replicas& other) : addresses_(other.addresses_) {
  absl::MutexLock lock(&other.mu_);
  state_ = other.state_;
}

Replicas& Replicas::operator=(const Replicas& other) {
  if (this == &other) return *this;
  State state;
  {
    absl::MutexLock lock(&other.mu_);
    state = other.state_;
  }
  addresses_ = other.addresses_;
  absl::MutexLock lock(&mu_);
  state_ = std::move(state);
  return *this;
}

std::string Replicas::current() const {
  absl::MutexLock lock(&mu_);
  return state_.current.empty() ? addresses_[0] : state_.current;
}

std::string Replicas::all() const { return absl::StrJoin(addresses_, ","); }

void Replicas::Reached() {
  absl::MutexLock lock(&mu_);
  state_.redirects = 0;
  state_.unreachable = 0;
}

bool Replicas::After(const grpc::ClientContext& context,
                     const grpc::Status& status) {
  return After(status, RedirectedLeader(context, status));
}

bool Replicas::After(const grpc::Status& status,
                     std::optional<std::string> leader) {
  absl::MutexLock lock(&mu_);
  if (leader.has_value() && AddressProblem(*leader).empty()) {
    state_.current = *std::move(leader);
    return ++state_.redirects <= addresses_.size() + 1;
  }
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return false;
  }
  state_.next = (state_.next + 1) % addresses_.size();
  state_.current = addresses_[state_.next];
  // The others at once; a backoff once all of them failed.
  if (++state_.unreachable < addresses_.size()) return true;
  state_.unreachable = 0;
  return false;
}

}  // namespace jobset
