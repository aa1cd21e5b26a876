#include "store/etcd_store.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "store/etcd/rpc.grpc.pb.h"

namespace jobset::store {
namespace {

namespace pb = ::etcdserverpb;

// The smallest key after every key that starts with `prefix` (etcd's
// range_end for a prefix): trailing 0xff bytes dropped, the last incremented.
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) {
    prefix.pop_back();
  }
  if (prefix.empty()) return std::string(1, '\0');  // Every key.
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

absl::StatusOr<std::string> ReadFile(absl::string_view field,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  if (!in || contents.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd store: ", field, " \"", path, "\" cannot be read or is empty"));
  }
  return contents.str();
}

}  // namespace

struct EtcdStore::Connection {
  std::string endpoint;  // As given, for messages.
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::KV::Stub> kv;
  std::unique_ptr<pb::Watch::Stub> watch;
  std::unique_ptr<pb::Lease::Stub> lease;
};

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(
    const Options& options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError(
        "etcd store: endpoints: at least one endpoint is required");
  }
  if (options.prefix.empty()) {
    return absl::InvalidArgumentError(
        "etcd store: prefix: must not be empty (every key lives under it)");
  }
  if (options.dial_timeout <= absl::ZeroDuration() ||
      options.request_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd store: dial_timeout ", absl::FormatDuration(options.dial_timeout),
        " and request_timeout ", absl::FormatDuration(options.request_timeout),
        " must be positive"));
  }
  if (options.max_txn_ops == 0 || options.max_request_bytes == 0) {
    return absl::InvalidArgumentError(
        "etcd store: max_txn_ops and max_request_bytes must be positive");
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd store: cert_file \"", options.cert_file, "\" and key_file \"",
        options.key_file, "\" go together: give both or neither"));
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.ca_file.empty()) {
    JOBSET_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                            ReadFile("ca_file", options.ca_file));
  }
  if (!options.cert_file.empty()) {
    JOBSET_ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                            ReadFile("cert_file", options.cert_file));
    JOBSET_ASSIGN_OR_RETURN(ssl.pem_private_key,
                            ReadFile("key_file", options.key_file));
  }
  std::vector<std::unique_ptr<Connection>> connections;
  for (size_t i = 0; i < options.endpoints.size(); ++i) {
    const std::string& endpoint = options.endpoints[i];
    absl::string_view target = endpoint;
    bool tls = !options.ca_file.empty();
    if (absl::ConsumePrefix(&target, "http://")) {
      tls = false;
    } else if (absl::ConsumePrefix(&target, "https://")) {
      tls = true;
    } else if (absl::StrContains(target, "://")) {
      return absl::InvalidArgumentError(
          absl::StrCat("etcd store: endpoints[", i, "] \"", endpoint,
                       "\": the scheme must be http:// or https://"));
    }
    while (absl::ConsumeSuffix(&target, "/")) {
    }
    if (target.empty() || !absl::StrContains(target, ':')) {
      return absl::InvalidArgumentError(
          absl::StrCat("etcd store: endpoints[", i, "] \"", endpoint,
                       "\" is not [http[s]://]HOST:PORT"));
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);  // etcd's responses are not capped.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Each endpoint is its own channel: reconnect attempts stay short so a
    // member that comes back is used again soon.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
    // The longest one connection attempt may take (gRPC's default is 20 s):
    // a plaintext connection a restarting member accepted before it served
    // can hang about 10 s (etcd 3.4's connection multiplexer waits for a
    // request that gRPC C++ sends only after the server's SETTINGS).
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
                static_cast<int>(absl::ToInt64Milliseconds(
                    std::max(options.dial_timeout, absl::Seconds(3)))));
    auto creds =
        tls ? grpc::SslCredentials(ssl) : grpc::InsecureChannelCredentials();
    auto conn = std::make_unique<Connection>();
    conn->endpoint = endpoint;
    conn->channel = grpc::CreateCustomChannel(std::string(target), creds, args);
    conn->kv = pb::KV::NewStub(conn->channel);
    conn->watch = pb::Watch::NewStub(conn->channel);
    conn->lease = pb::Lease::NewStub(conn->channel);
    connections.push_back(std::move(conn));
  }
  std::unique_ptr<EtcdStore> store(
      new EtcdStore(options, std::move(connections)));
  JOBSET_ASSIGN_OR_RETURN(const int64_t revision, store->ReadRevision());
  store->history_ = std::make_unique<History>(revision, options.history_events,
                                              options.history_bytes);
  {
    absl::MutexLock lock(&store->mu_);
    store->watched_ = revision;
  }
  store->watcher_ = std::thread([s = store.get()] { s->WatchLoop(); });
  return store;
}

EtcdStore::EtcdStore(const Options& options,
                     std::vector<std::unique_ptr<Connection>> connections)
    : options_(options),
      range_end_(PrefixEnd(options.prefix)),
      connections_(std::move(connections)) {}

EtcdStore::~EtcdStore() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
  }
  if (watcher_.joinable()) watcher_.join();
}

namespace {

// Whether `channel` is connected, waiting until `deadline` while it is
// connecting (or idle); false at once when its last attempt failed.
bool Connected(grpc::Channel& channel,
               std::chrono::system_clock::time_point deadline) {
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE ||
        state == GRPC_CHANNEL_SHUTDOWN ||
        !channel.WaitForStateChange(state, deadline)) {
      return false;
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return true;
}

}  // namespace

template <typename Rpc>
absl::Status EtcdStore::Call(absl::string_view what, Rpc rpc, bool resend,
                             bool* maybe_applied) {
  size_t first;
  {
    absl::MutexLock lock(&mu_);
    first = current_;
  }
  // While etcd elects a raft leader (one member lost) its members answer
  // "no leader" (hasleader below): nothing was applied, so the request goes
  // round the members again, a moment later, until the request timeout.
  const absl::Time give_up = RealDeadline(options_.request_timeout);
  constexpr absl::Duration kPause = absl::Milliseconds(100);
  std::vector<std::string> errors;
  bool sent_and_lost = false;
  for (bool again = true; again && !sent_and_lost;) {
    again = false;
    errors.clear();
    for (size_t n = 0; n < connections_.size(); ++n) {
      const size_t i = (first + n) % connections_.size();
      Connection& conn = *connections_[i];
      // Connect first, so that a request is only ever sent to an endpoint
      // that took the connection: until then it cannot have been applied.
      // A member that refused the last attempt (TRANSIENT_FAILURE: killed,
      // its port closed) is passed over at once rather than waited for: a
      // leader's lease renewal must not spend its margin on a dead member.
      if (!Connected(*conn.channel,
                     absl::ToChronoTime(std::min(
                         give_up, RealDeadline(options_.dial_timeout))))) {
        errors.push_back(absl::StrCat(conn.endpoint, ": not connected"));
        continue;
      }
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(give_up));
      // A member that has lost its raft leader (no quorum) answers at once,
      // "etcdserver: no leader", instead of holding the request until the
      // deadline: a refused write says why, and soon.
      context.AddMetadata("hasleader", "true");
      const grpc::Status status = rpc(conn, context);
      if (status.ok()) {
        if (i != first) {
          absl::MutexLock lock(&mu_);
          current_ = i;
        }
        return absl::OkStatus();
      }
      const absl::Status error = FromGrpcStatus(status);
      const bool unavailable =
          error.code() == absl::StatusCode::kUnavailable ||
          error.code() == absl::StatusCode::kDeadlineExceeded;
      if (!unavailable) {
        return absl::Status(error.code(),
                            absl::StrCat("etcd ", what, " at ", conn.endpoint,
                                         ": ", error.message()));
      }
      errors.push_back(absl::StrCat(conn.endpoint, ": ", error.message()));
      if (error.code() == absl::StatusCode::kUnavailable &&
          absl::StrContains(error.message(), "no leader")) {
        again = true;
        continue;
      }
      if (!resend) {
        if (maybe_applied != nullptr) *maybe_applied = true;
        absl::MutexLock lock(&mu_);
        current_ = (i + 1) % connections_.size();
        sent_and_lost = true;
        break;
      }
    }
    if (again && !sent_and_lost) {
      if (RealDeadline(kPause) >= give_up) break;
      absl::SleepFor(kPause);
    }
  }
  return absl::UnavailableError(
      absl::StrCat("etcd ", what, ": no endpoint of ",
                   absl::StrJoin(options_.endpoints, ","), " answered (",
                   absl::StrJoin(errors, "; "), ")"));
}

absl::StatusOr<int64_t> EtcdStore::ReadRevision() {
  pb::RangeRequest request;
  request.set_key(options_.prefix);
  request.set_range_end(range_end_);
  request.set_count_only(true);
  pb::RangeResponse response;
  JOBSET_RETURN_IF_ERROR(
      Call("Range", [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Range(&context, request, &response);
      }));
  return response.header().revision();
}

namespace {

KeyValue FromEtcd(const mvccpb::KeyValue& kv, size_t prefix_size) {
  KeyValue out;
  out.key = kv.key().substr(std::min(prefix_size, kv.key().size()));
  out.value = kv.value();
  out.create_revision = kv.create_revision();
  out.mod_revision = kv.mod_revision();
  return out;
}

}  // namespace

absl::StatusOr<std::optional<KeyValue>> EtcdStore::Get(absl::string_view key) {
  pb::RangeRequest request;
  request.set_key(absl::StrCat(options_.prefix, key));
  pb::RangeResponse response;
  JOBSET_RETURN_IF_ERROR(
      Call("Range", [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Range(&context, request, &response);
      }));
  if (response.kvs_size() == 0) return std::nullopt;
  return FromEtcd(response.kvs(0), options_.prefix.size());
}

absl::StatusOr<ScanResult> EtcdStore::Scan(absl::string_view prefix,
                                           absl::string_view start_after,
                                           size_t limit) {
  const std::string begin = absl::StrCat(options_.prefix, prefix);
  std::string from = begin;
  if (!start_after.empty()) {
    from = std::max(from, absl::StrCat(options_.prefix, start_after,
                                       absl::string_view("\0", 1)));
  }
  pb::RangeRequest request;
  request.set_key(from);
  request.set_range_end(PrefixEnd(begin));
  // limit 0 means "no limit" to etcd: ask for one key to learn `more`.
  request.set_limit(static_cast<int64_t>(std::min<size_t>(
      std::max<size_t>(limit, 1), std::numeric_limits<int64_t>::max())));
  if (limit == 0) request.set_keys_only(true);
  pb::RangeResponse response;
  ScanResult result;
  if (from >= request.range_end()) {  // start_after is past the prefix.
    JOBSET_ASSIGN_OR_RETURN(result.revision, ReadRevision());
    return result;
  }
  JOBSET_RETURN_IF_ERROR(
      Call("Range", [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Range(&context, request, &response);
      }));
  result.revision = response.header().revision();
  if (limit == 0) {
    result.more = response.kvs_size() > 0;
    return result;
  }
  result.more = response.more();
  result.kvs.reserve(response.kvs_size());
  for (const mvccpb::KeyValue& kv : response.kvs()) {
    result.kvs.push_back(FromEtcd(kv, options_.prefix.size()));
  }
  return result;
}

absl::StatusOr<int64_t> EtcdStore::ReadAll(
    absl::string_view prefix,
    const std::function<absl::Status(int64_t revision)>& begin,
    const std::function<absl::Status(const KeyValue&)>& fn) {
  // Pages of a bounded number of keys (a response holds whole values, up to
  // kMaxValueBytes each), every page after the first read at the first's
  // revision. If etcd compacts that revision before the last page, the read
  // starts over at a new one, a few times.
  constexpr int64_t kPageKeys = 64;
  constexpr int kAttempts = 3;
  const std::string first_key = absl::StrCat(options_.prefix, prefix);
  const std::string range_end = PrefixEnd(first_key);
  absl::Status last_error;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    int64_t revision = 0;
    std::string from = first_key;
    absl::Status error;
    while (true) {
      pb::RangeRequest request;
      request.set_key(from);
      request.set_range_end(range_end);
      request.set_limit(kPageKeys);
      if (revision != 0) request.set_revision(revision);
      pb::RangeResponse response;
      error =
          Call("Range", [&](Connection& conn, grpc::ClientContext& context) {
            return conn.kv->Range(&context, request, &response);
          });
      if (!error.ok()) break;
      if (revision == 0) {
        revision = response.header().revision();
        JOBSET_RETURN_IF_ERROR(begin(revision));
      }
      for (const mvccpb::KeyValue& kv : response.kvs()) {
        JOBSET_RETURN_IF_ERROR(fn(FromEtcd(kv, options_.prefix.size())));
      }
      if (!response.more() || response.kvs_size() == 0) return revision;
      from = absl::StrCat(response.kvs(response.kvs_size() - 1).key(),
                          absl::string_view("\0", 1));
    }
    // Only a compacted revision is worth starting over for.
    if (error.code() != absl::StatusCode::kOutOfRange || revision == 0) {
      return error;
    }
    last_error = error;
  }
  return absl::Status(
      last_error.code(),
      absl::StrCat("consistent read of prefix \"", prefix,
                   "\": etcd compacted ", "the revision read at ", kAttempts,
                   " times: ", last_error.message()));
}

CommitLimits EtcdStore::Limits() const {
  // Kept free in every Txn: a compare and a read of a key of up to
  // kMaxKeyBytes under the prefix, and the request's framing.
  const size_t reserve = 3 * (options_.prefix.size() + kMaxKeyBytes) + 256;
  CommitLimits limits;
  limits.max_ops = options_.max_txn_ops > 1 ? options_.max_txn_ops - 1 : 1;
  limits.max_bytes = options_.max_request_bytes > 2 * reserve
                         ? options_.max_request_bytes - reserve
                         : options_.max_request_bytes / 2;
  // Per operation: the key with the prefix three times (put or delete,
  // compare, failure read) and protobuf's tags and lengths (under 64 bytes).
  limits.op_overhead = 3 * options_.prefix.size() + 64;
  return limits;
}

absl::StatusOr<int64_t> EtcdStore::Commit(const Batch& batch) {
  JOBSET_RETURN_IF_ERROR(ValidateBatch(batch));
  if (batch.empty()) return CurrentRevision();
  if (batch.ops().size() > options_.max_txn_ops) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd store: a batch of ", batch.ops().size(),
                     " operations exceeds etcd's max_txn_ops ",
                     options_.max_txn_ops, "; the caller must split it"));
  }
  bool maybe_applied = false;
  absl::StatusOr<int64_t> revision = CommitOnce(batch, &maybe_applied);
  if (revision.ok() || !maybe_applied) return revision;
  // The answer was lost after the request was sent: find out whether it was
  // applied before sending it again.
  absl::StatusOr<std::optional<int64_t>> applied = AppliedRevision(batch);
  if (!applied.ok()) {
    return absl::UnavailableError(
        absl::StrCat(revision.status().message(),
                     "; the commit may or may not have been applied (",
                     applied.status().message(), ")"));
  }
  if (applied->has_value()) return **applied;
  maybe_applied = false;
  revision = CommitOnce(batch, &maybe_applied);
  if (!revision.ok() && maybe_applied) {
    return absl::UnavailableError(
        absl::StrCat(revision.status().message(),
                     "; the commit may or may not have been applied"));
  }
  return revision;
}

absl::StatusOr<int64_t> EtcdStore::CommitOnce(const Batch& batch,
                                              bool* maybe_applied) {
  pb::TxnRequest request;
  std::string fence_key;
  int64_t fence_epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!fence_key_.empty()) {
      fence_key = absl::StrCat(options_.prefix, fence_key_);
      fence_epoch = fence_epoch_;
    }
  }
  if (!fence_key.empty()) {
    // First compare and first read of the failure branch: the leadership.
    pb::Compare* compare = request.add_compare();
    compare->set_key(fence_key);
    compare->set_result(pb::Compare::EQUAL);
    compare->set_target(pb::Compare::CREATE);
    compare->set_create_revision(fence_epoch);
    pb::RangeRequest* range = request.add_failure()->mutable_request_range();
    range->set_key(fence_key);
    range->set_keys_only(true);
  }
  const int first_condition = fence_key.empty() ? 0 : 1;
  std::vector<const Batch::Op*> conditioned;
  for (const Batch::Op& op : batch.ops()) {
    const std::string key = absl::StrCat(options_.prefix, op.key);
    if (op.expect != Batch::Expect::kAny) {
      pb::Compare* compare = request.add_compare();
      compare->set_key(key);
      compare->set_result(pb::Compare::EQUAL);
      if (op.expect == Batch::Expect::kAbsent) {
        compare->set_target(pb::Compare::CREATE);
        compare->set_create_revision(0);
      } else {
        compare->set_target(pb::Compare::MOD);
        compare->set_mod_revision(op.revision);
      }
      // The failure branch reads the key, to name the one that failed.
      pb::RangeRequest* range = request.add_failure()->mutable_request_range();
      range->set_key(key);
      range->set_keys_only(true);
      conditioned.push_back(&op);
    }
    if (op.value.has_value()) {
      pb::PutRequest* put = request.add_success()->mutable_request_put();
      put->set_key(key);
      put->set_value(*op.value);
    } else {
      request.add_success()->mutable_request_delete_range()->set_key(key);
    }
  }
  const size_t bytes = request.ByteSizeLong();
  if (bytes > options_.max_request_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd store: a batch of ", batch.ops().size(), " operations and ",
        bytes, " bytes exceeds etcd's max_request_bytes ",
        options_.max_request_bytes, "; the caller must split it"));
  }
  pb::TxnResponse response;
  JOBSET_RETURN_IF_ERROR(Call(
      "Txn",
      [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Txn(&context, request, &response);
      },
      /*resend=*/false, maybe_applied));
  const int64_t revision = response.header().revision();
  if (!response.succeeded()) {
    if (!fence_key.empty()) {
      const bool held =
          response.responses_size() > 0 &&
          response.responses(0).response_range().kvs_size() > 0 &&
          response.responses(0).response_range().kvs(0).create_revision() ==
              fence_epoch;
      if (!held) return LostFence(fence_key, fence_epoch, revision);
    }
    for (size_t i = 0; i < conditioned.size(); ++i) {
      std::optional<KeyValue> current;
      const int r = first_condition + static_cast<int>(i);
      if (r < response.responses_size() &&
          response.responses(r).response_range().kvs_size() > 0) {
        current = FromEtcd(response.responses(r).response_range().kvs(0),
                           options_.prefix.size());
      }
      JOBSET_RETURN_IF_ERROR(CheckCondition(*conditioned[i], current));
    }
    return absl::AbortedError(absl::StrCat(
        "store: a condition of the batch failed at revision ", revision));
  }
  bool changed = false;
  for (const pb::ResponseOp& op : response.responses()) {
    if (op.has_response_put() || op.response_delete_range().deleted() > 0) {
      changed = true;
    }
  }
  if (changed) {
    absl::MutexLock lock(&mu_);
    written_ = std::max(written_, revision);
  }
  return revision;
}

absl::StatusOr<std::optional<int64_t>> EtcdStore::AppliedRevision(
    const Batch& batch) {
  pb::TxnRequest request;
  for (const Batch::Op& op : batch.ops()) {
    pb::RangeRequest* range = request.add_success()->mutable_request_range();
    range->set_key(absl::StrCat(options_.prefix, op.key));
  }
  pb::TxnResponse response;
  JOBSET_RETURN_IF_ERROR(
      Call("Txn", [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Txn(&context, request, &response);
      }));
  // Applied: every put's key holds its value at one revision, every deleted
  // key is gone. (Another writer that wrote the same values at one revision
  // is indistinguishable, and as good.)
  std::optional<int64_t> at;
  for (size_t i = 0; i < batch.ops().size(); ++i) {
    const Batch::Op& op = batch.ops()[i];
    const auto& kvs = response.responses(i).response_range().kvs();
    if (!op.value.has_value()) {
      if (!kvs.empty()) return std::nullopt;
      continue;
    }
    if (kvs.empty() || kvs[0].value() != *op.value) return std::nullopt;
    if (at.has_value() && *at != kvs[0].mod_revision()) return std::nullopt;
    at = kvs[0].mod_revision();
  }
  if (!at.has_value()) at = response.header().revision();
  absl::MutexLock lock(&mu_);
  written_ = std::max(written_, *at);
  return at;
}

int64_t EtcdStore::CurrentRevision() {
  absl::MutexLock lock(&mu_);
  return std::max(written_, watched_);
}

absl::StatusOr<std::vector<Event>> EtcdStore::WaitForEvents(
    absl::string_view prefix, int64_t after_revision, absl::Time deadline,
    size_t max_events, int64_t* looked_at) {
  {
    // Read your own writes: wait (bounded) for the watch to bring in every
    // commit this store made.
    absl::MutexLock lock(&mu_);
    const int64_t target = written_;
    auto caught_up = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return watched_ >= target || stopping_;
    };
    mu_.AwaitWithDeadline(absl::Condition(&caught_up),
                          RealDeadline(options_.request_timeout));
  }
  return history_->Wait(prefix, after_revision, deadline, max_events,
                        looked_at);
}

absl::Status EtcdStore::Compact(int64_t revision) {
  pb::CompactionRequest request;
  request.set_revision(revision);
  request.set_physical(true);
  pb::CompactionResponse response;
  return Call("Compact", [&](Connection& conn, grpc::ClientContext& context) {
    return conn.kv->Compact(&context, request, &response);
  });
}

absl::StatusOr<int64_t> EtcdStore::GrantLease(absl::Duration ttl) {
  if (ttl < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd lease: ttl ", absl::FormatDuration(ttl),
                     " is under etcd's unit of 1 s"));
  }
  pb::LeaseGrantRequest request;
  request.set_ttl(absl::ToInt64Seconds(ttl));
  pb::LeaseGrantResponse response;
  JOBSET_RETURN_IF_ERROR(Call(
      "LeaseGrant",
      [&](Connection& conn, grpc::ClientContext& context) {
        return conn.lease->LeaseGrant(&context, request, &response);
      },
      // A grant lost in transit leaves at most an unused lease that expires.
      /*resend=*/true));
  if (!response.error().empty()) {
    return absl::UnavailableError(
        absl::StrCat("etcd LeaseGrant: ", response.error()));
  }
  return response.id();
}

absl::StatusOr<absl::Duration> EtcdStore::KeepAliveLease(
    int64_t id, absl::Duration timeout) {
  pb::LeaseKeepAliveRequest request;
  request.set_id(id);
  pb::LeaseKeepAliveResponse response;
  JOBSET_RETURN_IF_ERROR(Call(
      "LeaseKeepAlive", [&](Connection& conn, grpc::ClientContext& context) {
        if (timeout > absl::ZeroDuration()) {
          context.set_deadline(absl::ToChronoTime(RealDeadline(timeout)));
        }
        auto stream = conn.lease->LeaseKeepAlive(&context);
        if (stream->Write(request) && stream->WritesDone() &&
            stream->Read(&response)) {
          context.TryCancel();  // One renewal is all this call wants.
          stream->Finish();
          return grpc::Status::OK;
        }
        return stream->Finish();
      }));
  if (response.ttl() <= 0) {
    return absl::NotFoundError(
        absl::StrCat("etcd lease ", id, " has expired or was revoked"));
  }
  return absl::Seconds(response.ttl());
}

absl::Status EtcdStore::RevokeLease(int64_t id) {
  pb::LeaseRevokeRequest request;
  request.set_id(id);
  pb::LeaseRevokeResponse response;
  return Call("LeaseRevoke",
              [&](Connection& conn, grpc::ClientContext& context) {
                return conn.lease->LeaseRevoke(&context, request, &response);
              });
}

absl::Status EtcdStore::LostFence(absl::string_view key, int64_t epoch,
                                  int64_t revision) {
  const absl::Status lost = absl::FailedPreconditionError(
      absl::StrCat("etcd store: not the leader: leadership key ", Quote(key),
                   " no longer has create_revision ", epoch, " at revision ",
                   revision, "; nothing was written"));
  std::function<void(const absl::Status&)> on_lost;
  {
    absl::MutexLock lock(&mu_);
    on_lost = std::exchange(on_fence_lost_, nullptr);
  }
  if (on_lost) on_lost(lost);
  return lost;
}

absl::StatusOr<KeyValue> EtcdStore::CreateWithLease(absl::string_view key,
                                                    absl::string_view value,
                                                    int64_t lease) {
  const std::string full = absl::StrCat(options_.prefix, key);
  pb::TxnRequest request;
  pb::Compare* compare = request.add_compare();
  compare->set_key(full);
  compare->set_result(pb::Compare::EQUAL);
  compare->set_target(pb::Compare::CREATE);
  compare->set_create_revision(0);
  pb::PutRequest* put = request.add_success()->mutable_request_put();
  put->set_key(full);
  put->set_value(std::string(value));
  put->set_lease(lease);
  request.add_success()->mutable_request_range()->set_key(full);
  request.add_failure()->mutable_request_range()->set_key(full);
  pb::TxnResponse response;
  // Sent again after a lost answer: the compare makes a second one read
  // what the first wrote.
  JOBSET_RETURN_IF_ERROR(
      Call("Txn", [&](Connection& conn, grpc::ClientContext& context) {
        return conn.kv->Txn(&context, request, &response);
      }));
  const int read = response.succeeded() ? 1 : 0;
  if (response.responses_size() <= read ||
      response.responses(read).response_range().kvs_size() == 0) {
    return absl::UnavailableError(absl::StrCat(
        "etcd store: ", Quote(key),
        " vanished right after it was written (its lease expired?)"));
  }
  return FromEtcd(response.responses(read).response_range().kvs(0),
                  options_.prefix.size());
}

void EtcdStore::SetFence(std::string key, int64_t epoch,
                         std::function<void(const absl::Status&)> on_lost) {
  absl::MutexLock lock(&mu_);
  fence_key_ = std::move(key);
  fence_epoch_ = epoch;
  on_fence_lost_ = std::move(on_lost);
}

int64_t EtcdStore::WatchStarts() {
  absl::MutexLock lock(&mu_);
  return watch_starts_;
}

void EtcdStore::Watched(int64_t revision) {
  absl::MutexLock lock(&mu_);
  watched_ = std::max(watched_, revision);
}

void EtcdStore::WatchLoop() {
  absl::Duration backoff = absl::Milliseconds(50);
  while (true) {
    size_t i;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      i = current_;
    }
    const absl::Status status =
        WatchOnce(*connections_[i], history_->revision() + 1);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (status.code() == absl::StatusCode::kOutOfRange) {
      // etcd no longer has revisions the watch had not received: whoever
      // resumes from before now lists again.
      absl::StatusOr<int64_t> now = ReadRevision();
      if (now.ok()) {
        JOBSET_LOG(WARNING) << status << "; watchers older than revision "
                            << *now << " list again";
        history_->Truncate(*now);
        Watched(*now);
        backoff = absl::Milliseconds(50);
        continue;
      }
    } else {
      JOBSET_LOG(WARNING) << "etcd watch on " << connections_[i]->endpoint
                          << " ended: " << status << "; resuming";
      absl::MutexLock lock(&mu_);
      if (current_ == i) current_ = (i + 1) % connections_.size();
    }
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

absl::Status EtcdStore::WatchOnce(Connection& conn, int64_t start) {
  grpc::ClientContext context;
  // A member that lost its raft leader cancels the stream rather than
  // keeping it open and silent.
  context.AddMetadata("hasleader", "true");
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    watch_context_ = &context;
  }
  auto done = [&] {
    absl::MutexLock lock(&mu_);
    watch_context_ = nullptr;
  };
  auto stream = conn.watch->Watch(&context);
  pb::WatchRequest request;
  pb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(options_.prefix);
  create->set_range_end(range_end_);
  create->set_start_revision(start);
  create->set_prev_kv(true);
  create->set_progress_notify(true);
  absl::Status result;
  if (!stream->Write(request)) {
    result = absl::UnavailableError("the watch request could not be sent");
  }
  pb::WatchResponse response;
  while (result.ok() && stream->Read(&response)) {
    if (response.created()) {
      absl::MutexLock lock(&mu_);
      ++watch_starts_;
    }
    if (response.compact_revision() > 0) {
      result = absl::OutOfRangeError(
          absl::StrCat("etcd compacted its history to revision ",
                       response.compact_revision(), " before the watch from ",
                       start, " received it"));
      break;
    }
    if (response.canceled()) {
      result = absl::UnavailableError(
          absl::StrCat("etcd canceled the watch: ", response.cancel_reason()));
      break;
    }
    if (response.events_size() == 0) {
      // A progress notification: every event up to its revision arrived.
      if (!response.created()) Watched(response.header().revision());
      continue;
    }
    // All events of one revision arrive in one response: append per revision.
    int64_t revision = 0;
    std::vector<Event> events;
    auto flush = [&] {
      if (events.empty()) return;
      history_->Append(revision, std::move(events));
      Watched(revision);
      events.clear();
    };
    for (const mvccpb::Event& e : response.events()) {
      const int64_t r = e.kv().mod_revision();
      if (r <= history_->revision() && events.empty()) continue;  // Seen.
      if (r < revision) {
        result = absl::InternalError(absl::StrCat(
            "etcd watch went back from revision ", revision, " to ", r));
        break;
      }
      if (r != revision) flush();
      revision = r;
      Event event;
      if (e.type() == mvccpb::Event::DELETE) {
        event.type = Event::Type::kDelete;
        event.kv = FromEtcd(e.prev_kv(), options_.prefix.size());
        event.kv.key = FromEtcd(e.kv(), options_.prefix.size()).key;
        event.kv.mod_revision = r;
      } else {
        event.kv = FromEtcd(e.kv(), options_.prefix.size());
      }
      events.push_back(std::move(event));
    }
    if (result.ok()) flush();
  }
  context.TryCancel();
  const grpc::Status finish = stream->Finish();
  done();
  if (!result.ok()) return result;
  if (!finish.ok()) return FromGrpcStatus(finish);
  return absl::UnavailableError("the watch stream ended");
}

}  // namespace jobset::store
