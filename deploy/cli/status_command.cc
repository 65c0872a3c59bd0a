#include "deploy/cli/status_command.h"

#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "deploy/cli/progress.h"
#include "google/protobuf/util/json_util.h"
#include "issuescope/v1/coordinator.grpc.pb.h"

namespace issuescope::cli {

absl::Status RunStatus(const StatusCommandOptions& options) {
  if (options.coordinator.empty()) return absl::InvalidArgumentError("--coordinator is required");
  auto stub = v1::Coordinator::NewStub(
      grpc::CreateChannel(options.coordinator, grpc::InsecureChannelCredentials()));
  ProgressBoard board(stdout, isatty(STDOUT_FILENO) != 0 && options.watch);
  do {
    v1::GetStatusResponse status;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->GetStatus(&ctx, v1::GetStatusRequest(), &status);
    if (!s.ok()) {
      return absl::Status(FromGrpcStatus(s).code(),
                          absl::StrFormat("coordinator %s: %s", options.coordinator,
                                          s.error_message()));
    }
    if (options.json) {
      std::string out;
      google::protobuf::util::JsonPrintOptions jopts;
      jopts.preserve_proto_field_names = true;
      (void)google::protobuf::util::MessageToJsonString(status, &out, jopts);
      absl::PrintF("%s\n", out);
    } else {
      for (const v1::RepositoryStatus& r : status.repositories()) {
        RepoLine line;
        line.state = v1::RepoPhase_Name(r.phase()).substr(strlen("REPO_PHASE_"));
        for (char& c : line.state) c = static_cast<char>(tolower(c));
        if (!r.worker_id().empty()) line.state += "@" + r.worker_id();
        line.counters = r.counters();
        line.issues_estimated = r.issues_estimated();
        line.error = r.last_error();
        board.Update(r.repo_slug(), line);
      }
      board.Render(absl::Now());
      if (!options.watch) {
        for (const v1::WorkerStatus& w : status.workers()) {
          absl::PrintF("worker %-12s %-6s store %s  leases %d/%d\n", w.worker_id(),
                       w.alive() ? "alive" : "dead", w.store_address(), w.leases(), w.capacity());
        }
      }
    }
    if (options.watch) absl::SleepFor(absl::Seconds(1));
  } while (options.watch);
  return absl::OkStatus();
}

}  // namespace issuescope::cli
