#include "agent/runtime/cri/container_probe.h"

#include <algorithm>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/readiness_probe.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

bool ProbeContainer(const CriClient& client, const Clock& clock,
                    const api::Container& spec, const std::string& container_id,
                    const ProbeSettings& settings) {
  const api::Probe& p = spec.readiness_probe();
  if (p.has_exec()) {
    v1::ExecSyncRequest request;
    request.set_container_id(container_id);
    for (const std::string& a : p.exec().command()) request.add_cmd(a);
    request.set_timeout(
        std::max<int64_t>(1, absl::ToInt64Seconds(settings.timeout)));
    absl::StatusOr<v1::ExecSyncResponse> r =
        client.ExecSync(request, settings.timeout + absl::Seconds(1));
    return r.ok() && r->exit_code() == 0;
  }
  const bool http = p.has_http_get();
  const std::string port = http ? p.http_get().port() : p.tcp_socket().port();
  const std::string host = http ? p.http_get().host() : p.tcp_socket().host();
  const int n = ResolvePort(spec, port);
  // Host network: the container's ports are the host's.
  return n > 0 && ProbeSocket(host, n, http ? &p.http_get().path() : nullptr,
                              settings.timeout, clock);
}

}  // namespace jobset::agent::cri
