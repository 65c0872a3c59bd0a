#include "reindex_command.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/index_schema.h"
#include "common/status_macros.h"
#include "progress.h"
#include "indexer/retagger.h"
#include "indexer/sharded_index_writer.h"
#include "indexer/taxonomy_tagger.h"

namespace issuescope::cli {
namespace {

// ProgressBar renders "[#####.....]  42%  re-tagged 12,000 / 80,000".
std::string ProgressBar(int64_t done, int64_t total) {
  constexpr int kWidth = 30;
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / total) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  return absl::StrFormat("[%s%s] %3d%%  re-tagged %s / %s", std::string(filled, '#'),
                         std::string(kWidth - filled, '.'), static_cast<int>(fraction * 100),
                         WithThousands(done), WithThousands(total));
}

}  // namespace

absl::Status RunReindex(const ReindexCommandOptions& options, std::FILE* out) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("give --data DIR");
  const std::string index_dir = options.data_dir + "/index";
  std::error_code ec;
  if (!std::filesystem::is_directory(index_dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("no index at ", index_dir, " (run `issuescope crawl --data ",
                     options.data_dir, "` first)"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<indexer::TaxonomyTagger> tagger,
                   indexer::TaxonomyTagger::Create(options.taxonomy, options.model));
  indexer::IndexWriterOptions writer_options;
  writer_options.tagger = tagger.get();
  absl::StatusOr<std::vector<std::unique_ptr<indexer::IndexWriter>>> writers =
      indexer::OpenShardWriters(index_dir, writer_options);
  if (!writers.ok()) {
    if (absl::IsFailedPrecondition(writers.status()) &&
        writers.status().message().find("locked") != absl::string_view::npos) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the index ", index_dir, " is being written by a running indexer (",
          writers.status().message(), "); stop it first, or let it re-tag: an indexer started "
          "with the new --taxonomy/--model re-tags in the background"));
    }
    return writers.status();
  }
  std::vector<indexer::IndexWriter*> shards;
  for (const auto& w : *writers) shards.push_back(w.get());
  if (options.force) {
    for (indexer::IndexWriter* shard : shards) {
      RETURN_IF_ERROR(shard->CommitMetadata({{index::kTaggerMetadataKey, ""}}));
    }
  }

  const bool tty = isatty(fileno(out)) != 0;
  absl::Time last_print = absl::InfinitePast();
  indexer::RetaggerOptions retag_options;
  retag_options.batch_size = options.batch_size > 0 ? options.batch_size : 500;
  retag_options.log_every = 0;
  retag_options.on_progress = [&](const indexer::RetagProgress& p) {
    const absl::Time now = absl::Now();
    if (!tty && now - last_print < absl::Seconds(2) && p.running) return;
    last_print = now;
    std::fprintf(out, tty ? "\r%s" : "%s\n", ProgressBar(p.done, p.total).c_str());
    std::fflush(out);
  };
  indexer::Retagger retagger(shards, tagger.get(), retag_options);
  ASSIGN_OR_RETURN(bool needed, retagger.Prepare());
  if (!needed) {
    std::fprintf(out, "index %s is already tagged with %s; nothing to do\n", index_dir.c_str(),
                 tagger->Fingerprint().c_str());
    return absl::OkStatus();
  }
  const indexer::RetagProgress planned = retagger.Progress();
  std::fprintf(out, "re-tagging %s documents of %s with %s\n",
               WithThousands(planned.total - planned.done).c_str(), index_dir.c_str(),
               tagger->Fingerprint().c_str());
  RETURN_IF_ERROR(retagger.Run());
  const indexer::RetagProgress done = retagger.Progress();
  if (tty) std::fprintf(out, "\n");
  std::fprintf(out, "re-tagged %s documents with %s\n", WithThousands(done.done).c_str(),
               tagger->Fingerprint().c_str());
  return absl::OkStatus();
}

}  // namespace issuescope::cli
