#include "scheduler/auth/shared_ca.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "auth/sealed_box.h"
#include "common/status_macros.h"
#include "proto/auth.pb.h"
#include "scheduler/auth/cluster_files.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr size_t kMaxSecretFileBytes = 4096;
// Another replica may publish between our read and our create; a few
// rounds settle it (the second read finds the winner's).
constexpr int kPublishAttempts = 3;

// The CA a stored record holds, checked: the key unseals and belongs to
// the certificate, which is a CA.
absl::StatusOr<auth::KeyAndCert> OpenSharedCa(const store::KeyValue& kv,
                                              absl::string_view secret) {
  api::SharedCa record;
  if (!record.ParseFromString(kv.value)) {
    return absl::DataLossError(
        absl::StrCat("store key ", store::keys::kSharedCa,
                     ": not a SharedCa record (", kv.value.size(), " bytes)"));
  }
  absl::StatusOr<auth::CertificateInfo> info =
      auth::ParseCertificate(record.cert_pem());
  if (!info.ok() || !info->is_ca) {
    return absl::DataLossError(absl::StrCat(
        "store key ", store::keys::kSharedCa,
        ": cert_pem is not a CA certificate",
        info.ok() ? "" : absl::StrCat(" (", info.status().message(), ")")));
  }
  absl::StatusOr<std::string> key =
      auth::Unseal(secret, record.sealed_key(), record.cert_pem());
  if (!key.ok()) {
    const std::string why =
        absl::StrCat("store key ", store::keys::kSharedCa,
                     ": the CA key does not open: ", key.status().message(),
                     ". Every replica must be given the same "
                     "--cluster_secret_file");
    return absl::IsPermissionDenied(key.status())
               ? absl::PermissionDeniedError(why)
               : absl::DataLossError(why);
  }
  auth::KeyAndCert ca{.key_pem = *std::move(key),
                      .cert_pem = record.cert_pem()};
  if (absl::Status match =
          auth::CheckKeyMatchesCertificate(ca.key_pem, ca.cert_pem);
      !match.ok()) {
    return absl::DataLossError(absl::StrCat(
        "store key ", store::keys::kSharedCa,
        ": the sealed key does not belong to cert_pem: ", match.message()));
  }
  return ca;
}

}  // namespace

absl::StatusOr<std::string> ReadClusterSecret(const std::string& path) {
  absl::StatusOr<std::optional<std::string>> read =
      ReadSmallFile(path, kMaxSecretFileBytes);
  if (!read.ok()) {
    return absl::Status(
        read.status().code(),
        absl::StrCat("--cluster_secret_file: ", read.status().message()));
  }
  if (!read->has_value()) {
    return absl::NotFoundError(
        absl::StrCat("--cluster_secret_file=", path, ": no such file"));
  }
  std::string secret = **std::move(read);
  absl::StripTrailingAsciiWhitespace(&secret);
  if (secret.size() < auth::kMinSealPassphraseBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cluster_secret_file=", path, ": at least ",
        auth::kMinSealPassphraseBytes, " bytes are needed, it has ",
        secret.size(), " (make one with: head -c 32 /dev/urandom | base64)"));
  }
  return secret;
}

absl::StatusOr<auth::KeyAndCert> LoadOrPublishSharedCa(
    store::Store* store, absl::string_view secret,
    const std::optional<auth::KeyAndCert>& local, absl::Time now) {
  for (int attempt = 0; attempt < kPublishAttempts; ++attempt) {
    JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> stored,
                            store->Get(store::keys::kSharedCa));
    if (stored.has_value()) {
      JOBSET_ASSIGN_OR_RETURN(auth::KeyAndCert ca,
                              OpenSharedCa(*stored, secret));
      if (local.has_value()) {
        if (local->cert_pem != ca.cert_pem) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the data dir's pki/ca.crt is not the cluster's CA (store key ",
              store::keys::kSharedCa,
              "): the data dir was made for another cluster. Move its pki/ "
              "away to serve under the cluster's CA"));
        }
      }
      return ca;
    }
    auth::KeyAndCert ca;
    if (local.has_value()) {
      ca = *local;
    } else {
      JOBSET_ASSIGN_OR_RETURN(ca, auth::CreateCa("jobsetd-ca", now));
    }
    api::SharedCa record;
    record.set_cert_pem(ca.cert_pem);
    JOBSET_ASSIGN_OR_RETURN(*record.mutable_sealed_key(),
                            auth::Seal(secret, ca.key_pem, ca.cert_pem));
    store::Batch batch;
    batch.Create(store::keys::kSharedCa, record.SerializeAsString());
    absl::StatusOr<int64_t> committed = store->Commit(batch);
    if (committed.ok()) return ca;
    // kAborted: another replica published first; read what it wrote.
    if (!absl::IsAborted(committed.status())) return committed.status();
  }
  return absl::AbortedError(absl::StrCat(
      "store key ", store::keys::kSharedCa, ": still contended after ",
      kPublishAttempts, " attempts to read or publish the cluster CA"));
}

}  // namespace jobset::scheduler
