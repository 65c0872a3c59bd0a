// Security of the coordinator's gRPC endpoint: bearer tokens (read from environment variables,
// compared in constant time). Its TLS credentials come from common/tls.h, as every listener's.
//
// Two credentials (CoordinatorService's AccessOptions; docs/SECURITY.md has the threat model):
// - The admin token: the admin calls that change state — AddRepositories, RemoveRepositories,
//   TriggerCrawl, PauseRepositories, ResumeRepositories, DrainWorker — need it. Without one
//   configured they are refused, unless the coordinator was started with --insecure-admin.
//   `issuescope up` makes one for its cluster.
// - The cluster token: the workers' calls (RegisterWorker, Heartbeat, AcquireLeases,
//   ReportProgress, ReleaseLease, LeaveWorker) and GetStatus need it (or the admin token) when
//   one is configured: whoever registers a worker chooses the store the indexer reads and takes
//   leases. The coordinator refuses to listen beyond loopback without one (unless
//   --insecure-cluster).
// - Per-worker identities (mutual TLS): with --tls-client-ca every client must present a
//   certificate that CA signed (the TLS handshake refuses anyone else), and a worker's calls —
//   which all name a worker id — are accepted only when that certificate names the id (its
//   common name or a subject alternative name): a worker can register, heartbeat, take leases,
//   report, release and leave only as itself. Without client certificates every holder of the
//   cluster token is trusted as any worker.
// Put TLS in front to keep the tokens and the traffic private.
//
// Pure functions; thread-safe.
#pragma once

#include <grpcpp/server_context.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::coordinator {

// ConstantTimeEquals compares two strings in time that depends only on their lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// CheckBearerToken checks that `context` carries the metadata "authorization: Bearer <token>".
// OK when `token` is empty (no token configured); UNAUTHENTICATED (never echoing what was sent)
// when the header is missing, malformed or wrong.
absl::Status CheckBearerToken(const grpc::ServerContext& context, absl::string_view token);

// PeerCertificateNames returns the names of the call's verified client certificate: its common
// name and its subject alternative names, in that order; empty when the call carries no
// verified certificate (plaintext, or TLS without client certificates).
std::vector<std::string> PeerCertificateNames(const grpc::ServerContext& context);

// CheckPeerIsWorker checks that the call's verified client certificate names `worker_id` (as its
// common name or one of its subject alternative names). UNAUTHENTICATED when the call carries no
// verified client certificate; PERMISSION_DENIED naming the id and the certificate's names when
// it names others.
absl::Status CheckPeerIsWorker(const grpc::ServerContext& context, absl::string_view worker_id);

// IsLoopbackListenAddress says whether the host of a gRPC listen address ("HOST:PORT",
// "[V6]:PORT") is a loopback address or "localhost".
bool IsLoopbackListenAddress(absl::string_view address);

}  // namespace issuescope::coordinator
