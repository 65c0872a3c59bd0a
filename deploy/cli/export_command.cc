#include "export_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/grpc_status.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "search/export_format.h"
#include "search/searcher.h"

namespace issuescope::cli {
namespace {

// Exports via a server get this long in all before the deadline cancels them.
constexpr auto kExportDeadline = std::chrono::hours(2);

// Output is the file (or stdout) an export writes to.
class Output {
 public:
  static absl::StatusOr<std::unique_ptr<Output>> Open(const std::string& path) {
    if (path.empty()) return std::unique_ptr<Output>(new Output(stdout, false));
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) return absl::UnavailableError(absl::StrCat("cannot write ", path));
    return std::unique_ptr<Output>(new Output(file, true));
  }
  ~Output() {
    if (owned_) std::fclose(file_);
  }
  absl::Status Write(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
      return absl::UnavailableError("writing the export failed (disk full or pipe closed?)");
    }
    return absl::OkStatus();
  }
  absl::Status Close() {
    const bool ok = std::fflush(file_) == 0;
    return ok ? absl::OkStatus() : absl::UnavailableError("writing the export failed");
  }

 private:
  Output(std::FILE* file, bool owned) : file_(file), owned_(owned) {}
  std::FILE* file_;
  bool owned_;
};

}  // namespace

absl::Status RunExport(const ExportCommandOptions& options) {
  if (options.format != "jsonl" && options.format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format '", options.format, "' is not jsonl or csv"));
  }
  if (options.limit < 0) return absl::InvalidArgumentError("--limit must not be negative");
  RETURN_IF_ERROR(CheckQueryTarget(options.target));
  ASSIGN_OR_RETURN(std::unique_ptr<Output> out, Output::Open(options.out));
  const bool csv = options.format == "csv";
  if (csv) RETURN_IF_ERROR(out->Write(search::ExportCsvHeader()));
  auto write = [&](const v1::SearchHit& hit) {
    return out->Write(csv ? search::ExportCsvRow(hit) : search::ExportJson(hit) + "\n");
  };

  v1::ExportRequest request;
  request.set_query(options.query);
  request.set_limit(options.limit);
  request.set_snippets(options.snippets);
  if (!options.target.data_dir.empty()) {
    auto searcher = search::Searcher::ForPath(LocalIndexPath(options.target));
    RETURN_IF_ERROR(searcher->Export(request, write));
    return out->Close();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(options.target));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kExportDeadline);
  std::unique_ptr<grpc::ClientReader<v1::SearchHit>> reader = stub->Export(&context, request);
  v1::SearchHit hit;
  while (reader->Read(&hit)) {
    if (absl::Status s = write(hit); !s.ok()) {
      context.TryCancel();
      reader->Finish();
      return s;
    }
  }
  RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  return out->Close();
}

}  // namespace issuescope::cli
