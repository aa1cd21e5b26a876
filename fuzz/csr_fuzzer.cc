// IssueCertificate on an arbitrary certificate signing request, as an agent
// renewing its certificate sends one (IdentityService.RenewNodeCertificate):
// never crashes or leaks, and what it issues says only what jobsetd asked
// for. Nothing of the CSR but its key is used: not its subject, not its
// extensions (CA:TRUE, serverAuth, SANs).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "auth/pki.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();  // A property failed: libFuzzer saves the input.
}

const jobset::auth::KeyAndCert& Ca() {
  static const jobset::auth::KeyAndCert* ca = [] {
    absl::StatusOr<jobset::auth::KeyAndCert> made =
        jobset::auth::CreateCa("fuzz-ca", absl::FromUnixSeconds(1700000000));
    Check(made.ok());
    return new jobset::auth::KeyAndCert(*std::move(made));
  }();
  return *ca;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view csr(reinterpret_cast<const char*>(data), size);
  const jobset::auth::LeafRequest request{
      .common_name = "system:node:n1",
      .organizations = {"system:nodes"},
      .uris = {"jobsetd://node-generation/3"},
      .client_auth = true,
  };
  const absl::Time now = absl::FromUnixSeconds(1700000100);
  absl::StatusOr<std::string> issued =
      jobset::auth::IssueCertificate(Ca(), csr, request, now);
  if (!issued.ok()) return 0;
  absl::StatusOr<jobset::auth::CertificateInfo> info =
      jobset::auth::ParseCertificate(*issued);
  Check(info.ok());
  Check(info->common_name == request.common_name);
  Check(info->organizations == request.organizations);
  Check(info->uris == request.uris);
  Check(!info->is_ca && !info->server_auth && info->client_auth);
  Check(info->dns_names.empty() && info->ip_addresses.empty());
  return 0;
}
