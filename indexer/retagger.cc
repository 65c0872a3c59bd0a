#include "indexer/retagger.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "spdlog/spdlog.h"

namespace issuescope::indexer {
namespace {

constexpr char kUntagged[] = "untagged";

// Metadata returns a shard's metadata value, "" when it cannot be read.
std::string Metadata(IndexWriter* shard, const std::string& key) {
  absl::StatusOr<std::string> value = shard->GetMetadata(key);
  return value.ok() ? *value : std::string();
}

int64_t ParseCount(const std::string& value) {
  int64_t n = 0;
  return absl::SimpleAtoi(value, &n) ? n : 0;
}

// Thousands renders 12000 as "12,000".
std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace

Retagger::Retagger(std::vector<IndexWriter*> shards, Tagger* tagger, RetaggerOptions options)
    : shards_(std::move(shards)),
      tagger_(tagger),
      options_(std::move(options)),
      fingerprint_(tagger->Fingerprint()) {}

Retagger::~Retagger() { Stop(); }

absl::StatusOr<bool> Retagger::Prepare() {
  if (fingerprint_.empty()) {
    return absl::InvalidArgumentError("the tagger has no fingerprint; nothing to re-tag against");
  }
  std::vector<ShardPlan> plans(shards_.size());
  bool any = false;
  for (size_t i = 0; i < shards_.size(); ++i) {
    IndexWriter* shard = shards_[i];
    ShardPlan& plan = plans[i];
    absl::StatusOr<std::string> recorded = shard->GetMetadata(index::kTaggerMetadataKey);
    if (!recorded.ok()) return recorded.status();
    // Documents written in an older free-text scheme (common/index_text.h) are rebuilt too: a
    // re-tag pass rebuilds every document from its stored issue.
    absl::StatusOr<std::string> scheme = shard->GetMetadata(index::kTextSchemeKey);
    if (!scheme.ok()) return scheme.status();
    const bool current_scheme = *scheme == index::kTextScheme;
    if (*recorded == fingerprint_ && current_scheme) continue;
    if (shard->DocumentCount() == 0) {
      absl::Status s = shard->CommitMetadata({{index::kTaggerMetadataKey, fingerprint_},
                                              {index::kTextSchemeKey, index::kTextScheme}});
      if (!s.ok()) return s;
      continue;
    }
    if (!current_scheme) {
      spdlog::info("index {}: documents are in free-text scheme \"{}\", this build writes \"{}\"; "
                   "rebuilding them", shard->path(), scheme->empty() ? "per-field" : *scheme,
                   index::kTextScheme);
    }
    absl::StatusOr<std::string> applying = shard->GetMetadata(kRetagFingerprintKey);
    absl::StatusOr<std::string> cursor = shard->GetMetadata(kRetagCursorKey);
    if (!applying.ok()) return applying.status();
    if (!cursor.ok()) return cursor.status();
    plan.pending = true;
    any = true;
    uint64_t resumed = 0;
    if (*applying == fingerprint_ && absl::SimpleAtoi(*cursor, &resumed)) {
      plan.cursor = static_cast<Xapian::docid>(resumed);
      plan.done = ParseCount(Metadata(shard, kRetagDoneKey));
      plan.total = ParseCount(Metadata(shard, kRetagTotalKey));
      plan.up_to = static_cast<Xapian::docid>(
          ParseCount(Metadata(shard, kRetagEndKey)));
      spdlog::info("index {}: resuming the re-tag with {} at {} / {}", shard->path(),
                   fingerprint_, Thousands(plan.done), Thousands(plan.total));
      if (plan.up_to != 0) continue;
    }
    absl::StatusOr<Xapian::docid> last = shard->LastDocid();
    if (!last.ok()) return last.status();
    plan.cursor = 0;
    plan.done = 0;
    plan.up_to = *last;
    plan.total = shard->DocumentCount();
    absl::Status s = shard->CommitMetadata({{kRetagFingerprintKey, fingerprint_},
                                            {kRetagCursorKey, "0"},
                                            {kRetagEndKey,
                                             std::to_string(plan.up_to)},
                                            {kRetagDoneKey, "0"},
                                            {kRetagTotalKey, std::to_string(plan.total)}});
    if (!s.ok()) return s;
    spdlog::info("index {}: tags were made with \"{}\", the tagger is \"{}\"; re-tagging {} "
                 "documents", shard->path(), recorded->empty() ? "nothing" : *recorded,
                 fingerprint_, Thousands(plan.total));
  }
  std::lock_guard<std::mutex> lock(mu_);
  plans_ = std::move(plans);
  prepared_ = true;
  return any;
}

absl::Status Retagger::Run() {
  bool prepared;
  {
    std::lock_guard<std::mutex> lock(mu_);
    prepared = prepared_;
  }
  if (!prepared) {
    absl::StatusOr<bool> planned = Prepare();
    if (!planned.ok()) return planned.status();
  }
  const int batch = options_.batch_size > 0 ? options_.batch_size : 500;
  bool worked = false;
  for (size_t i = 0; i < shards_.size(); ++i) {
    IndexWriter* shard = shards_[i];
    while (true) {
      if (stopping_) return absl::CancelledError("re-tag stopped");
      ShardPlan plan;
      {
        std::lock_guard<std::mutex> lock(mu_);
        plan = plans_[i];
      }
      if (!plan.pending) break;
      auto metadata = [&](const RetagBatchResult& r) {
        std::vector<std::pair<std::string, std::string>> entries = {
            {kRetagDoneKey, std::to_string(plan.done + r.retagged)}};
        if (r.finished) {
          entries.push_back({index::kTaggerMetadataKey, fingerprint_});
          entries.push_back({kRetagCursorKey, ""});
          entries.push_back({kRetagEndKey, ""});
          entries.push_back({kRetagTotalKey, std::to_string(plan.done + r.retagged)});
        } else {
          entries.push_back({kRetagCursorKey, std::to_string(r.last_docid)});
        }
        return entries;
      };
      absl::StatusOr<RetagBatchResult> result =
          shard->RetagBatch(tagger_, plan.cursor, plan.up_to, batch, metadata);
      if (!result.ok()) return result.status();
      worked = true;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ShardPlan& p = plans_[i];
        p.cursor = result->last_docid;
        p.done += result->retagged;
        if (result->finished) {
          p.pending = false;
          p.total = p.done;
        }
      }
      Report(false);
    }
  }
  if (worked) Report(true);
  return absl::OkStatus();
}

void Retagger::Report(bool force) {
  const RetagProgress progress = Progress();
  if (options_.on_progress) options_.on_progress(progress);
  if (options_.log_every <= 0) return;
  bool log = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (force ? progress.done != last_logged_ || progress.done == 0
              : progress.done - last_logged_ >= options_.log_every) {
      last_logged_ = progress.done;
      log = true;
    }
  }
  if (log) {
    spdlog::info("re-tagged {} / {} documents with {}{}", Thousands(progress.done),
                 Thousands(progress.total), fingerprint_, progress.running ? "" : " (done)");
  }
}

void Retagger::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    absl::Status s = Run();
    if (!s.ok() && !absl::IsCancelled(s)) spdlog::error("re-tag failed: {}", s.ToString());
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
  });
}

void Retagger::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

RetagProgress Retagger::Progress() const {
  RetagProgress progress;
  progress.fingerprint = fingerprint_;
  std::lock_guard<std::mutex> lock(mu_);
  for (const ShardPlan& p : plans_) {
    progress.done += p.done;
    progress.total += p.total;
    progress.running = progress.running || p.pending;
  }
  return progress;
}

absl::Status Retagger::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

absl::Status RecordUntagged(const std::vector<IndexWriter*>& shards) {
  for (IndexWriter* shard : shards) {
    absl::Status s = shard->CommitMetadata({{index::kTaggerMetadataKey, kUntagged}});
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

TaggingStatus ReadTaggingStatus(const std::string& index_dir) {
  const index::TaggingStatus read = index::ReadTaggingStatus(index_dir);
  TaggingStatus status;
  status.tagger = read.tagger;
  status.retag.fingerprint = read.retag_fingerprint;
  status.retag.done = read.retag_done;
  status.retag.total = read.retag_total;
  status.retag.running = read.retag_running;
  return status;
}

}  // namespace issuescope::indexer
