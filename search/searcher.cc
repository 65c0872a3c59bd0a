#include "search/searcher.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "search/page_token.h"
#include "search/query_parser.h"
#include "search/snippet.h"

namespace issuescope::search {
namespace {

// Times a call is retried when the index changed under it (DatabaseModifiedError).
constexpr int kModifiedRetries = 3;

// Guard runs `body`, converting Xapian exceptions with `convert` and retrying when the
// database was modified during the call (the next attempt reopens it).
template <typename T, typename Body, typename Convert>
absl::StatusOr<T> Guard(Body body, Convert convert) {
  for (int attempt = 1;; ++attempt) {
    try {
      return body();
    } catch (const Xapian::DatabaseModifiedError& e) {
      if (attempt >= kModifiedRetries) return convert(e);
    } catch (const Xapian::Error& e) {
      return convert(e);
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("search failed: ", e.what()));
    }
  }
}

void FillHit(const v1::IssueWithComments& iwc, v1::SearchHit* hit) {
  const v1::Issue& issue = iwc.issue();
  hit->set_repo_slug(RepoSlug(issue.repo()));
  hit->set_repo(RepoFullName(issue.repo()));
  hit->set_number(issue.number());
  hit->set_title(issue.title());
  hit->set_state(issue.state());
  *hit->mutable_labels() = issue.labels();
  hit->set_author(issue.author());
  if (issue.has_created_at()) *hit->mutable_created_at() = issue.created_at();
  if (issue.has_updated_at()) *hit->mutable_updated_at() = issue.updated_at();
  hit->set_comment_count(issue.comment_count());
  hit->set_is_pull_request(issue.is_pull_request());
  hit->set_url(issue.url());
  if (issue.has_tags()) *hit->mutable_tags() = issue.tags();
}

Xapian::valueno SortSlot(SortField field) {
  switch (field) {
    case SortField::kUpdated: return index::kUpdatedSlot;
    case SortField::kComments: return index::kCommentsSlot;
    default: return index::kCreatedSlot;
  }
}

}  // namespace

Searcher::Searcher(std::string path, std::optional<Xapian::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

std::unique_ptr<Searcher> Searcher::ForPath(const std::string& path) {
  return std::unique_ptr<Searcher>(new Searcher(path, std::nullopt));
}

std::unique_ptr<Searcher> Searcher::ForDatabase(Xapian::Database db) {
  return std::unique_ptr<Searcher>(new Searcher("", std::move(db)));
}

absl::Status Searcher::ConvertError(const Xapian::Error& e, absl::string_view what) const {
  // Xapian::Error is not polymorphic: tell the subclasses apart by their type name.
  const std::string type = e.get_type();
  if (type == "DatabaseOpeningError" || type == "DatabaseNotFoundError" ||
      type == "DatabaseVersionError") {
    return absl::UnavailableError(absl::StrCat("index not built yet: cannot open ",
                                               path_.empty() ? "the index" : path_, " (",
                                               e.get_msg(), ")"));
  }
  if (type == "UnimplementedError") {
    return absl::UnimplementedError(absl::StrCat(
        what, ": not supported by this index backend (e.g. the in-memory one): ", e.get_msg()));
  }
  if (type == "QueryParserError") {
    return absl::InvalidArgumentError(absl::StrCat("bad query: ", e.get_msg()));
  }
  return absl::InternalError(absl::StrCat(what, " failed: ", e.get_description()));
}

absl::StatusOr<Xapian::Database*> Searcher::Database() {
  if (!db_) {
    db_.emplace(path_);  // throws DatabaseOpeningError while the index does not exist
  } else {
    try {
      db_->reopen();
    } catch (const Xapian::DatabaseOpeningError&) {
      if (!path_.empty()) db_.reset();  // e.g. the index was removed: open afresh next time
      throw;
    }
  }
  return &*db_;
}

absl::StatusOr<v1::SearchResponse> Searcher::Search(const v1::SearchRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  return Guard<v1::SearchResponse>([&] { return SearchLocked(request); },
                                   [&](const Xapian::Error& e) { return ConvertError(e, "search"); });
}

absl::StatusOr<v1::IssueWithComments> Searcher::GetIssue(absl::string_view repo_slug,
                                                          int64_t number) {
  const std::string slug = absl::AsciiStrToLower(repo_slug);
  if (slug.empty() || slug.find('/') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repo_slug '", repo_slug, "' is not a repository slug like github:owner/name"));
  }
  if (number <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("issue number ", number, " is not positive"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  return Guard<v1::IssueWithComments>(
      [&] { return GetIssueLocked(slug, number); },
      [&](const Xapian::Error& e) { return ConvertError(e, "reading an issue"); });
}

absl::StatusOr<v1::IndexStatus> Searcher::GetIndexStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  return Guard<v1::IndexStatus>(
      [&] { return GetIndexStatusLocked(); },
      [&](const Xapian::Error& e) { return ConvertError(e, "reading the index status"); });
}

absl::StatusOr<v1::SearchResponse> Searcher::SearchLocked(const v1::SearchRequest& request) {
  if (request.query().size() > kMaxQueryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("query is ", request.query().size(),
                                                   " bytes long; at most ", kMaxQueryBytes,
                                                   " bytes are accepted"));
  }
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size ", request.page_size(),
                                                   " is outside 0..", kMaxPageSize,
                                                   " (0 means ", kDefaultPageSize, ")"));
  }
  const int page_size = request.page_size() == 0 ? kDefaultPageSize : request.page_size();
  const uint64_t fingerprint = QueryFingerprint(request.query());
  uint64_t offset = 0;
  if (!request.page_token().empty()) {
    ASSIGN_OR_RETURN(offset, DecodePageToken(request.page_token(), fingerprint));
  }

  ASSIGN_OR_RETURN(Xapian::Database * db, Database());
  ASSIGN_OR_RETURN(ParsedQuery parsed, QueryParser(*db).Parse(request.query()));

  Xapian::Enquire enquire(*db);
  enquire.set_query(parsed.query);
  if (!parsed.has_text) enquire.set_weighting_scheme(Xapian::BoolWeight());
  SortField field = parsed.sort.field;
  if (!parsed.sort.is_explicit) field = parsed.has_text ? SortField::kRelevance : SortField::kCreated;
  Xapian::MultiValueKeyMaker keymaker;  // must outlive get_mset
  if (field != SortField::kRelevance) {
    const bool reverse = !parsed.sort.ascending;
    keymaker.add_value(SortSlot(field), reverse);
    keymaker.add_value(index::kNumberSlot, reverse);
    enquire.set_sort_by_key_then_relevance(&keymaker, false);
  }
  const Xapian::doccount doccount = db->get_doccount();
  const Xapian::doccount first =
      static_cast<Xapian::doccount>(std::min<uint64_t>(offset, doccount));
  Xapian::MSet mset = enquire.get_mset(first, page_size, doccount);

  v1::SearchResponse response;
  response.set_total(mset.get_matches_estimated());
  for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
    ASSIGN_OR_RETURN(v1::IssueWithComments iwc, index::ReadDocument(it.get_document()));
    v1::SearchHit* hit = response.add_hits();
    FillHit(iwc, hit);
    hit->set_score(parsed.has_text ? it.get_weight() : 0.0);
    hit->set_snippet(MakeSnippet(mset, parsed.has_text, iwc, kSnippetBytes));
  }
  const uint64_t next = first + mset.size();
  if (next < static_cast<uint64_t>(response.total())) {
    response.set_next_page_token(EncodePageToken(next, fingerprint));
  }
  return response;
}

absl::StatusOr<v1::IssueWithComments> Searcher::GetIssueLocked(const std::string& slug,
                                                               int64_t number) {
  ASSIGN_OR_RETURN(Xapian::Database * db, Database());
  const std::string term = index::IdTerm(slug, number);
  Xapian::PostingIterator it = db->postlist_begin(term);
  if (it == db->postlist_end(term)) {
    return absl::NotFoundError(absl::StrCat("issue ", IssueKey(slug, number),
                                            " is not in the index"));
  }
  return index::ReadDocument(db->get_document(*it));
}

absl::StatusOr<v1::IndexStatus> Searcher::GetIndexStatusLocked() {
  ASSIGN_OR_RETURN(Xapian::Database * db, Database());
  v1::IndexStatus status;
  status.set_documents(db->get_doccount());
  const std::string prefix = index::kFeedMetadataPrefix;
  for (Xapian::TermIterator it = db->metadata_keys_begin(prefix);
       it != db->metadata_keys_end(prefix); ++it) {
    const std::string key = *it;
    const std::string value = db->get_metadata(key);
    uint64_t seq = 0;
    if (!absl::SimpleAtoi(value, &seq)) {
      return absl::DataLossError(absl::StrCat("index metadata '", key, "' holds '", value,
                                              "', not a sequence number"));
    }
    v1::FeedPosition* feed = status.add_feeds();
    feed->set_store_id(key.substr(prefix.size()));
    feed->set_seq(seq);
  }
  return status;
}

}  // namespace issuescope::search
