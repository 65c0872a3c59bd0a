#include "crawler/reparse.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "github_graphql.h"
#include "common/time_util.h"
#include "tracker.h"

namespace issuescope::crawler {
namespace {

// RepoState is what reparse remembers per repository while walking its pages.
// The clock skew a reparse allows between an item's updated_at and its page's fetch time (the
// crawl's default CrawlerOptions.max_clock_skew).
constexpr absl::Duration kMaxClockSkew = absl::Minutes(5);

struct RepoState {
  uint64_t epoch = 0;
  std::set<int64_t> pr_numbers;  // pull requests seen on issue pages
};

}  // namespace

absl::StatusOr<ReparseResult> Reparse(IssueStore* store, absl::string_view repo_slug) {
  ReparseResult result;
  std::map<v1::Tracker, std::unique_ptr<Tracker>> trackers;
  std::map<std::string, RepoState> repos;
  absl::Status failure;
  auto bad = [&](const RawPage& page, const absl::Status& s) {
    ++result.bad_pages;
    if (result.first_error.empty()) {
      result.first_error = absl::StrCat("GET ", page.url, ": ", s.message());
    }
  };
  // An item updated after the page was fetched (beyond the crawl's clock-skew allowance) is one
  // the crawl quarantined (RepoCrawler, CrawlerOptions.max_clock_skew): not re-applied here.
  auto future = [&](const RawPage& page, const google::protobuf::Timestamp& updated) {
    if (FromProto(updated) <= page.fetched_at + kMaxClockSkew) return false;
    ++result.bad_items;
    return true;
  };
  auto apply = [&](const std::string& slug, const RawPage& page) -> absl::Status {
    ++result.pages;
    auto [it, fresh] = repos.try_emplace(slug);
    RepoState& state = it->second;
    if (fresh) {
      ASSIGN_OR_RETURN(state.epoch, store->Epoch(slug));
    }
    auto& tracker = trackers[page.repo.tracker()];
    if (!tracker) {
      auto made = MakeTracker(page.repo.tracker());
      if (!made.ok()) {
        bad(page, made.status());
        return absl::OkStatus();
      }
      tracker = *std::move(made);
    }
    const google::protobuf::Timestamp fetched = ToProto(page.fetched_at);
    if (page.listing == "issues") {
      std::vector<BadItem> bad_items;
      auto parsed = tracker->ParseIssues(page.body, page.repo, &bad_items);
      if (!parsed.ok()) {
        bad(page, parsed.status());
        return absl::OkStatus();
      }
      result.bad_items += static_cast<int64_t>(bad_items.size());
      std::vector<v1::Issue> kept;
      for (v1::Issue& issue : *parsed) {
        if (future(page, issue.updated_at())) continue;
        if (issue.is_pull_request()) state.pr_numbers.insert(issue.number());
        if (issue.is_pull_request() && !page.include_pull_requests) continue;
        *issue.mutable_fetched_at() = fetched;
        kept.push_back(std::move(issue));
      }
      result.issues_parsed += static_cast<int64_t>(kept.size());
      ASSIGN_OR_RETURN(StoreWriteCounts r, store->ApplyIssues(slug, state.epoch, kept));
      result.issues_changed += r.stored;
      return absl::OkStatus();
    }
    if (page.listing == "graphql_threads" || page.listing == "graphql_comments") {
      // GitHub GraphQL comment pages (crawler/graphql_lister.h): issues asked for by number,
      // or (an earlier release's pages) comments nested in a page of issues.
      std::vector<v1::Comment> comments;
      std::vector<BadItem> bad_items;
      absl::Status parsed_ok;
      if (page.listing == "graphql_threads") {
        auto parsed = ParseGraphqlThreadsPage(page.body, page.repo);
        parsed_ok = parsed.status();
        if (parsed.ok()) {
          comments = std::move(parsed->comments);
          bad_items = std::move(parsed->bad);
        }
      } else {
        auto parsed = ParseGraphqlCommentPages(page.body, page.repo);
        parsed_ok = parsed.status();
        if (parsed.ok()) {
          comments = std::move(parsed->comments);
          bad_items = std::move(parsed->bad);
        }
      }
      if (!parsed_ok.ok()) {
        bad(page, parsed_ok);
        return absl::OkStatus();
      }
      result.bad_items += static_cast<int64_t>(bad_items.size());
      std::vector<v1::Comment> kept;
      for (v1::Comment& c : comments) {
        if (future(page, c.updated_at())) continue;
        *c.mutable_fetched_at() = fetched;
        kept.push_back(std::move(c));
      }
      result.comments_parsed += static_cast<int64_t>(kept.size());
      ASSIGN_OR_RETURN(StoreWriteCounts r, store->ApplyComments(slug, state.epoch, kept));
      result.comments_changed += r.stored;
      return absl::OkStatus();
    }
    v1::Issue issue;
    const bool per_issue = page.listing == "notes";
    if (per_issue) {
      *issue.mutable_repo() = page.repo;
      issue.set_number(page.issue_number);
      issue.set_key(page.issue_key);
      issue.set_url(page.issue_url);
    } else if (page.listing != "comments") {
      bad(page, absl::InvalidArgumentError(absl::StrCat("unknown listing '", page.listing, "'")));
      return absl::OkStatus();
    }
    // The repository as leased: a moved repository's comments name its new place, so they
    // count as bad items here (the crawl under the new name stores them).
    const TrackerRepo where{page.repo.api_url().empty() ? DefaultApiUrl(page.repo.tracker())
                                                        : page.repo.api_url(),
                            page.repo.owner(), page.repo.name()};
    std::vector<BadItem> bad_items;
    auto parsed = tracker->ParseComments(page.body, page.repo, per_issue ? &issue : nullptr,
                                         where, &bad_items);
    if (!parsed.ok()) {
      bad(page, parsed.status());
      return absl::OkStatus();
    }
    result.bad_items += static_cast<int64_t>(bad_items.size());
    std::vector<v1::Comment> kept;
    for (v1::Comment& comment : *parsed) {
      if (future(page, comment.updated_at())) continue;
      if (!per_issue && !page.include_pull_requests &&
          (tracker->IsPullRequestComment(comment) ||
           state.pr_numbers.count(comment.issue_number()) > 0)) {
        continue;
      }
      *comment.mutable_fetched_at() = fetched;
      kept.push_back(std::move(comment));
    }
    result.comments_parsed += static_cast<int64_t>(kept.size());
    ASSIGN_OR_RETURN(StoreWriteCounts r, store->ApplyComments(slug, state.epoch, kept));
    result.comments_changed += r.stored;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(store->ScanRawPages(repo_slug, [&](const std::string& slug, const RawPage& page) {
    failure = apply(slug, page);
    return failure.ok();
  }));
  RETURN_IF_ERROR(failure);
  return result;
}

}  // namespace issuescope::crawler
