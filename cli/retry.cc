#include "cli/retry.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"

namespace jobset::cli {
namespace {

// gRPC's words when it had no connection to send on (the request never
// left), and those of a TLS handshake that failed (a certificate refused, an
// SSL error). "Handshake read failed" is not one: the connection died during
// the handshake, as it does when jobsetd is busy accepting agents or going
// down, so it is retried like any replica not reached.
constexpr absl::string_view kNoConnection[] = {
    "failed to connect to all addresses",
    "connections to all backends failing",
};
constexpr absl::string_view kTlsFailure[] = {"handshake failed", "certificate",
                                             "ssl_error"};
// A follower's own words (scheduler/ha/follower_server.cc): it did nothing.
constexpr absl::string_view kFollower = "jobsetd: this replica is a follower";

double DefaultUniform() {
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937_64* engine = new std::mt19937_64(std::random_device{}());
  absl::MutexLock lock(&mu);
  return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    default:
      return "error";
  }
}

}  // namespace

Failure ClassifyFailure(const grpc::Status& status, bool redirected) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) {
    return Failure::kFinal;
  }
  if (redirected) return Failure::kRedirect;
  const std::string& details = status.error_message();
  for (absl::string_view words : kNoConnection) {
    if (absl::StartsWith(details, words)) {
      // "tcp handshaker shutdown" is a TCP connect given up on (nothing
      // listening), not TLS.
      const std::string lower = absl::StrReplaceAll(
          absl::AsciiStrToLower(details), {{"tcp handshaker", "tcp"}});
      for (absl::string_view tls : kTlsFailure) {
        if (absl::StrContains(lower, tls)) return Failure::kTls;
      }
      return Failure::kNotSent;
    }
  }
  if (absl::StartsWith(details, kFollower)) return Failure::kNotSent;
  return Failure::kMaybeSent;
}

Backoff::Backoff(std::function<double()> uniform)
    : uniform_(uniform ? std::move(uniform) : DefaultUniform) {}

absl::Duration Backoff::Next() {
  const absl::Duration d = next_;
  next_ = std::min(kMax, d * 2);
  return d / 2 + d / 2 * uniform_();
}

Attempts::Attempts(Clock* clock, absl::Duration timeout, Repeat repeat,
                   Backoff backoff)
    : clock_(clock),
      timeout_(timeout),
      repeat_(repeat),
      backoff_(std::move(backoff)),
      start_(clock->Now()),
      end_(start_ + timeout) {}

absl::Duration Attempts::Remaining() const {
  return std::max(absl::ZeroDuration(), end_ - clock_->Now());
}

absl::Time Attempts::GrpcDeadline() const {
  const absl::Duration left = Remaining();
  if (left == absl::InfiniteDuration()) return absl::InfiniteFuture();
  // gRPC deadlines are real time, whatever clock_ is.
  return RealClock::Get()->Now() + left;
}

std::optional<absl::Duration> Attempts::After(const grpc::Status& status,
                                              Failure failure, bool at_once,
                                              size_t replicas,
                                              const std::string& address) {
  if (std::find(tried_.begin(), tried_.end(), address) == tried_.end()) {
    tried_.push_back(address);
  }
  ++failed_;
  if (failure == Failure::kFinal) return std::nullopt;
  last_ = status;
  if (failure == Failure::kTls) {
    // Not a failover: each of the others once, as before, no rounds.
    return ++tls_failures_ < static_cast<int>(replicas)
               ? std::optional<absl::Duration>(absl::ZeroDuration())
               : std::nullopt;
  }
  if (failure == Failure::kMaybeSent) {
    maybe_sent_ = true;
    if (repeat_ == Repeat::kUnsafe) {
      unsafe_ = true;
      return std::nullopt;
    }
  }
  const absl::Duration wait = at_once ? absl::ZeroDuration() : backoff_.Next();
  if (Remaining() <= wait) {
    out_of_time_ = true;
    return std::nullopt;
  }
  if (maybe_sent_) repeated_maybe_sent_ = true;
  return wait;
}

bool Attempts::AfterAndWait(const grpc::Status& status, Failure failure,
                            bool at_once, size_t replicas,
                            const std::string& address) {
  std::optional<absl::Duration> wait =
      After(status, failure, at_once, replicas, address);
  if (!wait.has_value()) return false;
  if (*wait > absl::ZeroDuration()) clock_->SleepUntil(clock_->Now() + *wait);
  return true;
}

std::string Attempts::Note(const grpc::Status& status, absl::string_view method,
                           size_t replicas) const {
  const grpc::StatusCode code = status.error_code();
  if (code != grpc::StatusCode::UNAVAILABLE &&
      code != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "";
  }
  std::vector<std::string> parts;
  if (unsafe_) {
    parts.push_back(absl::StrCat(
        "not sent again: the request may have reached jobsetd, and ", method,
        " is not safe to repeat"));
  }
  const int count = std::max(failed_, 1);
  if (replicas > 1 || count > 1) {
    std::string tried = absl::StrFormat(
        "replicas tried %s: %d attempt%s in %.1fs", absl::StrJoin(tried_, ","),
        count, count == 1 ? "" : "s",
        absl::ToDoubleSeconds(clock_->Now() - start_));
    if (out_of_time_) {
      absl::StrAppend(&tried, ", the next past the ",
                      absl::FormatDuration(timeout_), " timeout");
    }
    parts.push_back(std::move(tried));
  }
  if (code == grpc::StatusCode::DEADLINE_EXCEEDED && last_.has_value() &&
      last_->error_code() != code) {
    parts.push_back(absl::StrCat("before: ", CodeName(last_->error_code()),
                                 ": ", last_->error_message()));
  }
  if (parts.empty()) return "";
  return absl::StrCat(" (", absl::StrJoin(parts, "; "), ")");
}

}  // namespace jobset::cli
