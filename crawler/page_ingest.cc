#include "page_ingest.h"

#include <string_view>

#include "common/logging.h"
#include "common/status_macros.h"

namespace issuescope::crawler {
namespace {

bool SameTime(const google::protobuf::Timestamp& a, const google::protobuf::Timestamp& b) {
  return a.seconds() == b.seconds() && a.nanos() == b.nanos();
}

}  // namespace

absl::Status PageIngest::Quarantine(const char* listing, const std::string& url,
                                    absl::Time fetched, const std::vector<BadItem>& bad) {
  if (std::string_view(listing) == "issues") issues_set_aside_ += static_cast<int64_t>(bad.size());
  for (const BadItem& b : bad) {
    QuarantinedItem q;
    q.listing = listing;
    q.url = Redact(url);
    q.fetched_at = fetched;
    q.index = b.index;
    q.key = b.key;
    q.error = b.error;
    q.raw = b.raw;
    spdlog::warn("{}: quarantined {} item {}{} of GET {}: {}", slug_, listing, b.index,
                 b.key.empty() ? std::string() : absl::StrCat(" (", b.key, ")"), q.url, b.error);
    RETURN_IF_ERROR(store_->PutQuarantined(slug_, q));
    counters_->set_items_quarantined(counters_->items_quarantined() + 1);
  }
  return absl::OkStatus();
}

absl::Status PageIngest::KeepRawPage(const char* listing, const std::string& url,
                                     std::string body, absl::Time fetched,
                                     const v1::Issue* issue,
                                     const std::vector<std::string>& items) {
  if (!keep_raw_pages_) return absl::OkStatus();
  RawPage raw;
  raw.repo = repo_;
  raw.listing = listing;
  raw.url = Redact(url);
  raw.fetched_at = fetched;
  raw.include_pull_requests = include_prs_;
  if (issue != nullptr) {
    raw.issue_number = issue->number();
    raw.issue_key = issue->key();
    raw.issue_url = issue->url();
  }
  raw.body = std::move(body);
  return store_->PutRawPage(slug_, raw, items);
}

absl::StatusOr<std::vector<int64_t>> PageIngest::StoredNumbers() const {
  std::vector<int64_t> numbers;
  RETURN_IF_ERROR(store_->ScanRepository(slug_, [&](const v1::Issue& issue) {
    if (!issue.deleted() && !issue.is_pull_request()) numbers.push_back(issue.number());
    return true;
  }));
  return numbers;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PageIngest::StoredCommentCounts() const {
  std::vector<std::pair<int64_t, int64_t>> counts;
  RETURN_IF_ERROR(store_->ScanRepository(slug_, [&](const v1::Issue& issue) {
    if (!issue.deleted() && !issue.is_pull_request() && issue.comment_count() > 0) {
      counts.emplace_back(issue.number(), issue.comment_count());
    }
    return true;
  }));
  return counts;
}

absl::Status PageIngest::StoreIssues(const std::vector<v1::Issue>& issues) {
  if (record_listed_) {
    for (const v1::Issue& issue : issues) listed_.push_back(issue.number());
  }
  ASSIGN_OR_RETURN(StoreWriteCounts r, store_->ApplyIssues(slug_, epoch_, issues));
  counters_->set_issues_fetched(counters_->issues_fetched() + static_cast<int64_t>(issues.size()));
  counters_->set_issues_stored(counters_->issues_stored() + r.stored);
  return absl::OkStatus();
}

absl::Status PageIngest::StoreComments(const std::vector<v1::Comment>& comments) {
  ASSIGN_OR_RETURN(StoreWriteCounts r, store_->ApplyComments(slug_, epoch_, comments));
  counters_->set_comments_fetched(counters_->comments_fetched() +
                                  static_cast<int64_t>(comments.size()));
  counters_->set_comments_stored(counters_->comments_stored() + r.stored);
  return absl::OkStatus();
}

absl::StatusOr<bool> PageIngest::NeedsComments(const v1::Issue& issue) const {
  auto stored = store_->GetIssue(slug_, issue.number());
  if (absl::IsNotFound(stored.status())) return true;
  if (!stored.ok()) return stored.status();
  const v1::Issue& old = stored->issue();
  if (old.deleted() || !SameTime(old.updated_at(), issue.updated_at()) ||
      old.comment_count() != issue.comment_count()) {
    return true;
  }
  int64_t user_comments = 0;
  for (const v1::Comment& c : stored->comments()) user_comments += c.system() ? 0 : 1;
  return user_comments < issue.comment_count();
}

}  // namespace issuescope::crawler
