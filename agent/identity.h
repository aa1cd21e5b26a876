#ifndef JOBSET_AGENT_IDENTITY_H_
#define JOBSET_AGENT_IDENTITY_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/replicas.h"
#include "grpcpp/grpcpp.h"

namespace jobset::agent {

// The node's identity: a certificate for CN system:node:<name> (O
// system:nodes) that jobsetd's CA signed, the key it was made for, and the
// CA, kept in a pki directory (<work_dir>/pki, 0700):
//
//   node.key     the node's private key (0600); made here, never sent
//   node.crt     its certificate
//   ca.crt       the cluster CA, as the join token pinned it
//   node-secret  a random secret (0600), made once and sent with every join:
//                jobsetd lets a name re-join only with the same one
//
// Every file is written atomically (a temporary file, fsync, rename).
//
//   auto id = Identity::Open(options, join_token, clock);  // joins if needed
//   agent_options.credentials = [&] { return (*id)->ChannelCredentials(); };
//   (*id)->StartRenewing(clock);
//
// Joining (security-model.md §2.3, k3s's order): the join token
// ("JS1<ca hash>::<id>.<secret>") pins the CA's SPKI hash. The agent fetches
// the CA (GetClusterInfo) over TLS without checking the server, and sends
// nothing secret unless the CA's hash is the pinned one; then it sends the
// token, a CSR and the node secret (JoinNode) over TLS verified against that
// CA under `server_name`.
//
// Renewal: at a jittered 70-90% of the certificate's lifetime (client-go's
// rule) RenewIfDue asks for a new certificate (RenewNodeCertificate, over
// mTLS) for a new key; the new key and certificate replace the old ones once
// the certificate arrives and checks out. An expired certificate cannot be
// renewed: the node must join again with a token. Thread-safe.
class Identity {
 public:
  struct Options {
    std::string pki_dir;    // <work_dir>/pki
    std::string node_name;  // CN system:node:<node_name>
    // jobsetd's HOST:PORT, or every replica's, comma-separated (redirects
    // to the leader are followed: common/replicas.h).
    std::string scheduler;
    // The name the server's certificate is verified under.
    std::string server_name = "server.jobsetd";
    // How long Join keeps trying an unreachable jobsetd.
    absl::Duration join_timeout = absl::Minutes(5);
    // Each call's deadline (real time).
    absl::Duration call_timeout = absl::Seconds(10);
    // Retries (of an unreachable server while joining, of a failed
    // renewal) back off from min_backoff to max_backoff.
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(10);
    absl::Duration renew_min_backoff = absl::Seconds(10);
    absl::Duration renew_max_backoff = absl::Minutes(5);
  };

  // The certificate's subject common name for `node_name`.
  static std::string CommonName(absl::string_view node_name);

  // Uses the identity in options.pki_dir if it is complete and valid at the
  // clock's time; else, with a join token (`join_token` non-empty), joins
  // and stores the new identity; else an error saying what to do (no
  // identity: kNotFound; expired or for another name: kFailedPrecondition).
  // Files that cannot be read as what they should be are kInvalidArgument
  // naming the file, token or not. `clock` must outlive the Identity.
  static absl::StatusOr<std::unique_ptr<Identity>> Open(
      Options options, absl::string_view join_token, Clock* clock);

  // Reads options.pki_dir only (never joins); errors as Open's.
  static absl::StatusOr<std::unique_ptr<Identity>> Load(Options options,
                                                        Clock* clock);

  // Joins (as above) whatever is in pki_dir (the node secret is kept), and
  // stores the new identity. jobsetd's refusals (an invalid token, a name
  // taken by another node) are returned at once with jobsetd's message; an
  // unreachable jobsetd is retried until options.join_timeout.
  static absl::StatusOr<std::unique_ptr<Identity>> Join(
      Options options, absl::string_view join_token, Clock* clock);

  ~Identity();  // StopRenewing

  // mTLS credentials from the files as they are now (read at every call,
  // so a channel made after a renewal uses the new certificate).
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
  ChannelCredentials();
  // Channel arguments the credentials need: the server name override.
  grpc::ChannelArguments ChannelArguments() const;

  // Renews the certificate if `now` is past its renewal time and no failed
  // attempt is backing off. Returns whether it renewed; an error if it tried
  // and failed (the next try waits a backoff) or the certificate has
  // expired (kFailedPrecondition: re-join needed).
  absl::StatusOr<bool> RenewIfDue(absl::Time now);

  // Calls RenewIfDue every `poll` (real time; at the clock's time) on a
  // thread of its own, logging what happens, until StopRenewing.
  void StartRenewing(absl::Duration poll = absl::Seconds(30));
  void StopRenewing();

  // The current certificate's validity and when it is due for renewal.
  absl::Time not_after();
  absl::Time renew_at();
  // The current certificate's PEM.
  std::string cert_pem();
  // Waits (real time, at most `timeout`) until the current certificate is
  // not `pem` (a renewal replaced it); returns whether it is not.
  bool AwaitCertificateOtherThan(const std::string& pem,
                                 absl::Duration timeout);

 private:
  struct Files {
    std::string key_pem;
    std::string cert_pem;
    std::string ca_pem;
  };

  Identity(Options options, Replicas replicas, Clock* clock, Files files,
           absl::Time not_before, absl::Time not_after);

  // The renewal time of a certificate valid from not_before to not_after,
  // 70-90% into it (random).
  static absl::Time RenewalTime(absl::Time not_before, absl::Time not_after);

  absl::Status RenewNow(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RenewLoop(absl::Duration poll);

  const Options options_;
  Replicas replicas_;  // options_.scheduler
  Clock* const clock_;

  absl::Mutex mu_;
  Files files_ ABSL_GUARDED_BY(mu_);
  absl::Time not_after_ ABSL_GUARDED_BY(mu_);
  absl::Time renew_at_ ABSL_GUARDED_BY(mu_);
  // After a failed renewal: the earliest next try, and the backoff.
  absl::Time retry_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread renew_thread_;
};

// Whether HOST:PORT (or [IPv6]:PORT) names this host: 127.0.0.0/8, ::1 or
// localhost. jobset-agent --insecure dials only such an address.
bool IsLoopbackTarget(absl::string_view target);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_IDENTITY_H_
