// PageIngest is the store side of one crawl's listing pages, whatever fetched and parsed them
// (REST pages today; the GraphQL path of issue 19 reuses it): items dated after the tracker's
// clock are set aside, bad items are quarantined with their reason, the raw page is kept for
// `issuescope reparse`, and issues and comments are written to the IssueStore under the lease's
// epoch (fenced), with the crawl's counters kept. It also answers whether an issue's comments
// must be listed again (trackers that list comments per issue).
//
// Not thread-safe: one per crawl, used by the crawl's own thread.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"
#include "crawler/issue_store.h"
#include "google/protobuf/util/json_util.h"
#include "issuescope/v1/coordinator.pb.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::crawler {

class PageIngest {
 public:
  // PageIngest writes for the repository `repo` (store slug `slug`) under lease `epoch`,
  // counting into `counters` (not owned). `max_clock_skew` bounds how far an item's updated_at
  // may lie after the tracker's Date; `keep_raw_pages` keeps raw bodies; `include_prs` is the
  // lease's choice, recorded with each raw page.
  PageIngest(IssueStore* store, v1::RepositoryRef repo, std::string slug, uint64_t epoch,
             absl::Duration max_clock_skew, bool keep_raw_pages, bool include_prs,
             v1::CrawlCounters* counters)
      : store_(store),
        repo_(std::move(repo)),
        slug_(std::move(slug)),
        epoch_(epoch),
        max_clock_skew_(max_clock_skew),
        keep_raw_pages_(keep_raw_pages),
        include_prs_(include_prs),
        counters_(counters) {}

  // DropFutureItems moves the items whose updated_at lies more than max_clock_skew after the
  // tracker's clock (`date`, the response's Date) from `page` to `bad`: a time the tracker has
  // not reached yet is an anomaly (9999-12-31 was seen), and as a cursor it would hide every
  // later change. Left in the listing (it is at or after any cursor), such an item is listed
  // again by every crawl and stored once the tracker's clock has passed its updated_at.
  template <typename T>
  void DropFutureItems(absl::Time date, std::vector<T>* page, std::vector<BadItem>* bad) const;

  // Quarantine keeps the bad items of one page in the store, counts and logs them: their errors
  // are deterministic, so the page is not fetched again for them and the rest of it is used.
  // `url` is redacted before it is stored or logged.
  absl::Status Quarantine(const char* listing, const std::string& url, absl::Time fetched,
                          const std::vector<BadItem>& bad);

  // KeepRawPage stores the raw body of a parsed page for `issuescope reparse` (when raw pages
  // are kept), with the store items it produced. It takes the body (a page can be tens of MiB:
  // it is moved, not copied, and freed once stored). `issue` is the issue of a per-issue
  // comment listing, else null.
  absl::Status KeepRawPage(const char* listing, const std::string& url, std::string body,
                           absl::Time fetched, const v1::Issue* issue,
                           const std::vector<std::string>& items);

  // StoreIssues and StoreComments write items (fenced by the epoch) and count them.
  absl::Status StoreIssues(const std::vector<v1::Issue>& issues);
  absl::Status StoreComments(const std::vector<v1::Comment>& comments);

  // MarkDeleted keeps a tombstone of an issue the tracker says is gone (transferred to
  // `transferred_to`, "github:o/r#n", when it says where).
  absl::Status MarkDeleted(int64_t number, absl::string_view transferred_to = "") {
    return store_->MarkDeleted(slug_, epoch_, number, transferred_to);
  }

  // RecordListed starts keeping the numbers of the issues StoreIssues is given (a complete
  // listing's are the numbers the tracker lists: the presence sweep's, for free), forgetting
  // any kept before. TakeListed hands them over.
  void RecordListed() {
    record_listed_ = true;
    listed_.clear();
  }
  std::vector<int64_t> TakeListed() { return std::move(listed_); }

  // IssuesSetAside counts the issue items of this crawl's issue listings that were set aside
  // (quarantined, or dated after the tracker's clock): issues listed but not stored.
  int64_t IssuesSetAside() const { return issues_set_aside_; }

  // StoredCommentCounts lists (number, comment count) of the repository's stored issues that
  // are neither tombstones nor pull requests and count comments, ascending.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> StoredCommentCounts() const;

  // StoredNumbers lists the numbers of the repository's stored issues that are neither
  // tombstones nor pull requests, ascending.
  absl::StatusOr<std::vector<int64_t>> StoredNumbers() const;

  // NeedsComments reports whether the comments of `issue` must be listed: it is new (or a
  // tombstone), its updated_at or comment count changed, or fewer of its user comments are
  // stored than it counts (an earlier crawl stopped before listing them).
  absl::StatusOr<bool> NeedsComments(const v1::Issue& issue) const;

 private:
  IssueStore* store_;
  const v1::RepositoryRef repo_;
  const std::string slug_;
  const uint64_t epoch_;
  const absl::Duration max_clock_skew_;
  const bool keep_raw_pages_;
  const bool include_prs_;
  v1::CrawlCounters* counters_;
  bool record_listed_ = false;
  int64_t issues_set_aside_ = 0;
  std::vector<int64_t> listed_;
};

template <typename T>
void PageIngest::DropFutureItems(absl::Time date, std::vector<T>* page,
                                 std::vector<BadItem>* bad) const {
  const absl::Time limit = date + max_clock_skew_;
  size_t kept = 0;
  for (size_t i = 0; i < page->size(); ++i) {
    T& item = (*page)[i];
    const absl::Time updated = FromProto(item.updated_at());
    if (updated <= limit) {
      if (kept != i) (*page)[kept] = std::move(item);
      ++kept;
      continue;
    }
    BadItem b;
    b.index = static_cast<int64_t>(i);
    if constexpr (std::is_same_v<T, v1::Issue>) {
      b.key = absl::StrCat("number ", item.key().empty() ? absl::StrCat(item.number())
                                                         : item.key());
    } else {
      b.key = absl::StrCat("id ", item.id());
    }
    b.error = absl::StrCat("field 'updated_at' (", FormatRfc3339(updated),
                           ") is after the tracker's clock (Date ", FormatRfc3339(date),
                           ") by more than ", absl::FormatDuration(max_clock_skew_));
    google::protobuf::util::JsonPrintOptions json;
    json.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(item, &b.raw, json);  // as parsed
    bad->push_back(std::move(b));
  }
  page->resize(kept);
}

}  // namespace issuescope::crawler
