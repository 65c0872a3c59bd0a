#include "search/searcher.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/index_document.h"
#include "index_reader.h"
#include "search/full_coverage.h"
#include "common/xapian_status.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "docid_sample.h"
#include "facets.h"
#include "search/match_split.h"
#include "page_token.h"
#include "pager.h"
#include "query_parser.h"
#include "spdlog/spdlog.h"

namespace issuescope::search {
namespace {

// Times a call is tried when the index changed under it (DatabaseModifiedError) or a remote
// shard's connection broke (NetworkError: a shard server restarted).
constexpr int kModifiedRetries = 3;

// How long a handle reading shards from alternates waits to connect to their own server, and
// for its greeting, when it asks whether that server is back (SearcherOptions::primary_retry).
constexpr unsigned kPrimaryProbeTimeoutMs = 500;

// Guard runs `body`, converting Xapian exceptions with `convert` and retrying when the
// database was modified during the call or a remote shard's connection broke (the next attempt
// reopens it, connecting again).
template <typename T, typename Body, typename Convert>
absl::StatusOr<T> Guard(Body body, Convert convert) {
  for (int attempt = 1;; ++attempt) {
    try {
      return body();
    } catch (const Xapian::DatabaseModifiedError& e) {
      if (attempt >= kModifiedRetries) return convert(e);
    } catch (const Xapian::NetworkError& e) {
      if (attempt >= kModifiedRetries) return convert(e);
    } catch (const Xapian::Error& e) {
      return convert(e);
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("search failed: ", e.what()));
    }
  }
}

absl::Status CheckQuerySize(const std::string& query) {
  if (query.size() <= kMaxQueryBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("query is ", query.size(),
                                                 " bytes long; at most ", kMaxQueryBytes,
                                                 " bytes are accepted"));
}

int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// EstimateMatches is Xapian's estimate of the number of matches of `query`, from term
// frequencies, without running the match (maxitems 0, check_at_least 0).
Xapian::doccount EstimateMatches(const Xapian::Database& db, const Xapian::Query& query) {
  Xapian::Enquire enquire(db);
  enquire.set_query(query);
  SetUnrankedScheme(enquire, db);
  return enquire.get_mset(0, 0).get_matches_estimated();
}

// PartSpies is one spy of type Spy per part of a split (or none), added up into the first.
template <typename Spy>
struct PartSpies {
  template <typename... Args>
  PartSpies(size_t parts, const Args&... args) {
    for (size_t i = 0; i < parts; ++i) {
      owned.push_back(std::make_unique<Spy>(args...));
      spies.push_back(owned.back().get());
    }
  }
  // Merged adds every part's counts into the first part's spy and returns it (call once).
  Spy& Merged() {
    for (size_t i = 1; i < owned.size(); ++i) owned[0]->Add(*owned[i]);
    return *owned[0];
  }
  std::vector<std::unique_ptr<Spy>> owned;
  std::vector<Xapian::MatchSpy*> spies;
};

// ParseForParts parses `query` once per part of `split`, against the part's handle and on its
// thread (Xapian's reference counts are not atomic: parts must not share Query objects).
absl::StatusOr<std::vector<ParsedQuery>> ParseForParts(const MatchSplit& split,
                                                       const std::string& query,
                                                       ParseOptions options = {}) {
  std::vector<std::optional<absl::StatusOr<ParsedQuery>>> parsed(split.parts());
  split.Run([&](size_t i) { parsed[i] = QueryParser(split.db(i)).Parse(query, options); });
  std::vector<ParsedQuery> parts;
  for (std::optional<absl::StatusOr<ParsedQuery>>& part : parsed) {
    if (!part->ok()) return part->status();
    parts.push_back(*std::move(*part));
  }
  return parts;
}

// Stopped asks `stop`, when given, whether to stop (StopCheck).
absl::Status Stopped(const StopCheck& stop) { return stop ? stop() : absl::OkStatus(); }

int MaxHandles(const std::string& path, int requested) {
  if (path.empty()) return 1;  // ForDatabase: the one handle it was given
  if (requested > 0) return requested;
  return std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

Searcher::Searcher(std::string path, std::optional<Xapian::Database> db, SearcherOptions options,
                   bool gone)
    : path_(std::move(path)),
      gone_mode_(gone),
      options_(options),
      remote_shards_(!gone && !path_.empty() && index::HasRemoteShards(path_)),
      max_handles_(MaxHandles(path_, options.max_handles)),
      split_parts_(options.split_parts > 0
                       ? options.split_parts
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {
  if (db) {
    auto handle = std::make_unique<Handle>();
    handle->db = std::move(db);
    idle_.push_back(std::move(handle));
    handles_ = 1;
  }
}

std::unique_ptr<Searcher> Searcher::ForPath(const std::string& path, SearcherOptions options) {
  std::unique_ptr<Searcher> searcher(new Searcher(path, std::nullopt, options, false));
  // The gone issues are few: two handles, no split.
  SearcherOptions gone_options = options;
  gone_options.max_handles = 2;
  gone_options.split_parts = 1;
  searcher->gone_.reset(new Searcher(path, std::nullopt, gone_options, true));
  return searcher;
}

std::unique_ptr<Searcher> Searcher::ForDatabase(Xapian::Database db, SearcherOptions options) {
  return std::unique_ptr<Searcher>(new Searcher("", std::move(db), options, false));
}

Searcher::Lease::~Lease() {
  if (owner_ == nullptr || db_ == nullptr) return;  // moved from
  {
    std::lock_guard<std::mutex> lock(owner_->mu_);
    owner_->idle_.push_back(std::move(db_));
  }
  owner_->returned_.notify_one();
}

void Searcher::Lease::OpenAfresh() {
  db_->db.reset();
  db_->db.emplace(OpenIndexForReading(
      owner_->path_, &db_->missed,
      ShardTimeouts{owner_->options_.shard_connect_timeout_ms, owner_->options_.shard_timeout_ms}));
  db_->retry_missed_at = absl::Now() + owner_->options_.primary_retry;
}

Xapian::Database* Searcher::Lease::Open() {
  std::optional<Xapian::Database>& db = db_->db;
  if (owner_->gone_mode_) {
    // Opened afresh each time: a shard's gone database appears with its first tombstone,
    // which reopen() would not see.
    db.emplace(OpenGoneForReading(owner_->path_));
  } else if (!db) {
    // Throws DatabaseOpeningError while the index does not exist.
    OpenAfresh();
  } else {
    bool afresh = false;
    try {
      db->reopen();
    } catch (const Xapian::DatabaseOpeningError&) {
      // The files this handle read were replaced (a replica's full copy switches to a new
      // directory, search/replica_follower.h) or removed.
      if (owner_->path_.empty()) throw;
      afresh = true;
    } catch (const Xapian::NetworkError&) {
      // A remote shard's connection broke (its shard server restarted, or was away).
      if (owner_->path_.empty()) throw;
      afresh = true;
    }
    if (!afresh && !db_->missed.empty() && absl::Now() >= db_->retry_missed_at) {
      // Shards read from alternates go back to their own server once it answers again (short
      // timeouts, to connect and for its greeting: a server still away, or whose host accepts
      // connections for a process that does not answer, costs this call little).
      afresh = std::any_of(db_->missed.begin(), db_->missed.end(),
                           [](const index::ShardServer& server) {
                             return ShardServerAnswers(server, kPrimaryProbeTimeoutMs,
                                                       kPrimaryProbeTimeoutMs);
                           });
      if (afresh) {
        spdlog::info("search: shard server {} answers again; reading its shards from it",
                     db_->missed.front().Name());
      } else {
        db_->retry_missed_at = absl::Now() + owner_->options_.primary_retry;
      }
    }
    // Open afresh (connecting again), or throw if there is no index any more.
    if (afresh) OpenAfresh();
  }
  return &*db;
}

Searcher::Lease Searcher::Borrow() {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiting_;
  returned_.wait(lock, [&] { return !idle_.empty() || handles_ < max_handles_; });
  --waiting_;
  if (!idle_.empty()) {
    std::unique_ptr<Handle> db = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(db));
  }
  ++handles_;
  return Lease(this, std::make_unique<Handle>());
}

std::vector<Searcher::Lease> Searcher::BorrowIdle(int n) {
  std::vector<Lease> leases;
  leases.reserve(static_cast<size_t>(std::max(n, 0)));  // no allocation under mu_
  std::lock_guard<std::mutex> lock(mu_);
  // Calls waiting for a handle come first: splitting only pays while cores would idle.
  if (waiting_ > 0) return leases;
  while (static_cast<int>(leases.size()) < n) {
    if (!idle_.empty()) {
      leases.emplace_back(this, std::move(idle_.back()));
      idle_.pop_back();
    } else if (handles_ < max_handles_) {
      ++handles_;
      leases.emplace_back(this, std::make_unique<Handle>());
    } else {
      break;
    }
  }
  return leases;
}

MatchSplit Searcher::Split(Lease& lease, std::vector<Lease>* helpers) {
  std::vector<const Xapian::Database*> handles = {lease.Open()};
  if (split_parts_ < 2 || path_.empty()) return MatchSplit(handles);
  // No more parts than shards (an unsharded index is not split: no handle is borrowed).
  std::vector<ShardShare> shards = ListShards(*handles.front());
  const int extra = std::min(split_parts_, static_cast<int>(shards.size())) - 1;
  if (extra <= 0) return MatchSplit(handles);
  *helpers = BorrowIdle(extra);
  for (Lease& helper : *helpers) handles.push_back(helper.Open());
  split_searches_.fetch_add(helpers->empty() ? 0 : 1, std::memory_order_relaxed);
  return MatchSplit(handles, std::move(shards));
}

std::shared_ptr<const RemoteShardLayout> Searcher::RemoteLayout(const Xapian::Database& db) {
  // A probe that failed is not repeated for every query while a shard server is away.
  constexpr absl::Duration kLayoutRetry = absl::Seconds(5);
  const std::string uuid = db.get_uuid();
  {
    std::lock_guard<std::mutex> lock(layout_mu_);
    if (layout_ != nullptr && layout_->uuid == uuid) return layout_;
    // One probe at a time, outside the lock: meanwhile searches read item by item.
    if (layout_probing_ || absl::Now() - layout_failed_at_ < kLayoutRetry) return nullptr;
    layout_probing_ = true;
  }
  absl::StatusOr<RemoteShardLayout> probed = ProbeRemoteShardLayout(path_);
  std::lock_guard<std::mutex> lock(layout_mu_);
  layout_probing_ = false;
  if (!probed.ok() || probed->uuid != uuid) {
    if (layout_failed_at_ == absl::InfinitePast()) {
      spdlog::warn("search: over remote shards, proximity and pages are read item by item: {}",
                   probed.ok() ? "the shard servers changed while probing them"
                               : std::string(probed.status().message()));
    }
    layout_failed_at_ = absl::Now();
    layout_.reset();
    return nullptr;
  }
  layout_ = std::make_shared<const RemoteShardLayout>(*std::move(probed));
  layout_failed_at_ = absl::InfinitePast();
  return layout_;
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
  return FromXapianError(e, absl::StrCat(what, " failed"));
}

absl::StatusOr<v1::SearchResponse> Searcher::Search(const v1::SearchRequest& request,
                                                    const StopCheck& stop) {
  if (gone_ && CheckQuerySize(request.query()).ok() && NamesGoneIssues(request.query())) {
    return gone_->Search(request, stop);
  }
  Lease lease = Borrow();
  return Guard<v1::SearchResponse>(
      [&] { return SearchWith(lease, request, stop); },
      [&](const Xapian::Error& e) { return ConvertError(e, "search"); });
}

absl::StatusOr<v1::AggregateResponse> Searcher::Aggregate(const v1::AggregateRequest& request,
                                                          const StopCheck& stop) {
  if (gone_ && CheckQuerySize(request.query()).ok() && NamesGoneIssues(request.query())) {
    return gone_->Aggregate(request, stop);
  }
  Lease lease = Borrow();
  return Guard<v1::AggregateResponse>(
      [&] { return AggregateWith(lease, request, stop); },
      [&](const Xapian::Error& e) { return ConvertError(e, "aggregate"); });
}

absl::StatusOr<v1::IssueWithComments> Searcher::GetIssue(absl::string_view repo_slug,
                                                          int64_t number) {
  // "owner/name" is GitHub's, as in issue references ("pytorch/pytorch#1").
  const bool has_tracker = repo_slug.find(':') != absl::string_view::npos;
  absl::StatusOr<v1::RepositoryRef> ref =
      ParseRepoSpec(has_tracker ? std::string(repo_slug) : absl::StrCat("github:", repo_slug));
  if (!ref.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repo_slug '", repo_slug, "' is not a repository: expected TRACKER:OWNER/NAME "
        "(github:, gitlab:, gitee:; GitLab groups may nest: gitlab:group/sub/name) or OWNER/NAME "
        "for GitHub (", ref.status().message(), ")"));
  }
  const std::string slug = RepoSlug(*ref);
  if (number <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("issue number ", number, " is not positive"));
  }
  absl::StatusOr<v1::IssueWithComments> issue;
  {
    Lease lease = Borrow();
    issue = Guard<v1::IssueWithComments>(
        [&] { return GetIssueWith(lease, slug, number); },
        [&](const Xapian::Error& e) { return ConvertError(e, "reading an issue"); });
  }
  if (gone_ && absl::IsNotFound(issue.status())) {
    // A deleted or transferred issue: its last state, marked so.
    absl::StatusOr<v1::IssueWithComments> gone = gone_->GetIssue(slug, number);
    if (gone.ok()) return gone;
  }
  return issue;
}

absl::StatusOr<v1::IndexStatus> Searcher::GetIndexStatus() {
  Lease lease = Borrow();
  return Guard<v1::IndexStatus>(
      [&] { return GetIndexStatusWith(lease); },
      [&](const Xapian::Error& e) { return ConvertError(e, "reading the index status"); });
}

absl::StatusOr<v1::SearchResponse> Searcher::SearchWith(Lease& lease,
                                                        const v1::SearchRequest& request,
                                                        const StopCheck& stop) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(Stopped(stop));  // the wait for a handle may have outlived the caller
  RETURN_IF_ERROR(CheckQuerySize(request.query()));
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size ", request.page_size(),
                                                   " is outside 0..", kMaxPageSize,
                                                   " (0 means ", kDefaultPageSize, ")"));
  }
  if (request.facet_limit() < 0 || request.facet_limit() > kMaxFacetLimit) {
    return absl::InvalidArgumentError(absl::StrCat("facet_limit ", request.facet_limit(),
                                                   " is outside 0..", kMaxFacetLimit,
                                                   " (0 means ", kDefaultFacetLimit, ")"));
  }
  ASSIGN_OR_RETURN(std::vector<index::FacetField> facets,
                   ParseFacetFields(request.facets(), "facet"));
  const uint64_t fingerprint = QueryFingerprint(request.query());
  PageCursor cursor;
  if (!request.page_token().empty() && !request.counts_only()) {
    ASSIGN_OR_RETURN(cursor, DecodePageCursor(request.page_token(), fingerprint));
  }

  std::vector<Lease> helpers;
  const MatchSplit split = Split(lease, &helpers);
  const Xapian::Database* db = &split.db(0);
  ParseOptions parse_options;
  parse_options.explain = request.explain();
  ASSIGN_OR_RETURN(std::vector<ParsedQuery> parts,
                   ParseForParts(split, request.query(), parse_options));
  RETURN_IF_ERROR(Stopped(stop));
  // Whether the query matches everything (no text, no filter): the same after relaxing.
  const bool match_all = parts[0].match_all;

  // Facets of a match-all query come from term frequencies, exact and cheap, when every
  // document has its facet values (an index written before kFacetsSlot existed lacks the year
  // terms; then the spy reads the documents).
  const bool facets_from_terms =
      match_all && !facets.empty() &&
      db->get_value_freq(index::kFacetsSlot) == db->get_doccount();
  // The total is counted in the pass that ranks the page: the matcher sees every match once
  // (up to the count bound), and weighing one costs little since the ranking reads no document
  // lengths (RankingWeight). A query matching everything needs no count.
  PageOptions page_options;
  page_options.size = request.counts_only()       ? 0
                      : request.page_size() == 0 ? kDefaultPageSize
                                                 : request.page_size();
  page_options.snippet_bytes = kSnippetBytes;
  page_options.explain = request.explain();
  page_options.count_total = !match_all;
  page_options.count_bound = options_.count_bound;
  page_options.sort_by_key_slots = remote_shards_;
  const std::shared_ptr<const RemoteShardLayout> layout =
      remote_shards_ ? RemoteLayout(*db) : nullptr;
  page_options.remote_layout = layout.get();
  // Facets of a query whose matches probably fit the bound (Xapian's estimate from term
  // frequencies) are counted by a spy riding along in that pass, which sees every match;
  // otherwise, or when the total proves larger, a second, boolean pass counts them.
  // (One spy per part of the split, added up afterwards.)
  const auto rides_for = [&](const ParsedQuery& p) {
    return !facets.empty() && !facets_from_terms && !p.match_all &&
           EstimateMatches(*db, p.query) <= options_.facet_bound;
  };
  bool rides = rides_for(parts[0]);
  PartSpies<FacetCounter> ride_along(rides ? split.parts() : 0, facets, options_.facet_bound);
  page_options.spies = ride_along.spies;
  ASSIGN_OR_RETURN(Page page, FetchPage(split, parts, cursor, page_options));
  RETURN_IF_ERROR(Stopped(stop));
  // No issue has every word (a paraphrase, a long title pasted as a query): rank the issues
  // that have some of them instead, and say so. Known from the pass above, which counted the
  // matches (exactly, when there are none): a separate check for any match would be a boolean
  // pass over every posting of the query's words, as long as the ranking pass itself.
  bool relaxed = false;
  if (parts[0].relaxable && page.total.has_value() && *page.total == 0 && page.total_exact) {
    parse_options.relax = true;
    ASSIGN_OR_RETURN(parts, ParseForParts(split, request.query(), parse_options));
    relaxed = true;
    rides = rides_for(parts[0]);
    ride_along = PartSpies<FacetCounter>(rides ? split.parts() : 0, facets,
                                         options_.facet_bound);
    page_options.spies = ride_along.spies;
    ASSIGN_OR_RETURN(page, FetchPage(split, parts, cursor, page_options));
    RETURN_IF_ERROR(Stopped(stop));
  }
  FacetCounter* rode = rides ? &ride_along.Merged() : nullptr;

  v1::SearchResponse response;
  const int64_t total = match_all ? db->get_doccount() : page.total.value_or(0);
  const bool total_exact = match_all || page.total_exact;
  response.set_total(total);
  response.set_total_exact(total_exact);
  response.set_relaxed(relaxed);
  for (v1::SearchHit& hit : page.hits) *response.add_hits() = std::move(hit);
  if (page.next && !request.counts_only()) {
    response.set_next_page_token(EncodePageCursor(*page.next, fingerprint));
  }
  response.set_facets_exact(true);
  if (!facets.empty()) {
    const int limit = request.facet_limit() == 0 ? kDefaultFacetLimit : request.facet_limit();
    if (facets_from_terms) {
      ToFacets(CountFacetsFromTerms(*db, facets), facets, limit, response.mutable_facets());
      response.set_facets_counted(total);
    } else if (rode != nullptr && total_exact && rode->seen() == static_cast<uint64_t>(total) &&
               rode->counted() == rode->seen() && rode->counted() <= options_.facet_bound) {
      ToFacets(rode->counts(), facets, limit, response.mutable_facets());
      response.set_facets_counted(static_cast<int64_t>(rode->counted()));
    } else {
      // Every match when they fit the bound; else the matches among an evenly spread sample of
      // document ids sized to hold about facet_bound of them (DocidSample), so the work stays
      // proportional to the bound however broad the query.
      double fraction = 1.0;
      if (total > 0 && static_cast<uint64_t>(total) > options_.facet_bound) {
        fraction = static_cast<double>(options_.facet_bound) / total;
      }
      PartSpies<FacetCounter> counters(split.parts(), facets,
                                       std::numeric_limits<uint64_t>::max());
      CountMatches(split, PartQueries(parts), counters.spies, fraction);
      const FacetCounter& counted = counters.Merged();
      ToFacets(counted.counts(), facets, limit, response.mutable_facets());
      response.set_facets_counted(static_cast<int64_t>(counted.counted()));
    }
    response.set_facets_exact(total_exact && response.facets_counted() == total);
  }
  response.set_took_us(MicrosSince(start));
  return response;
}

absl::StatusOr<v1::AggregateResponse> Searcher::AggregateWith(
    Lease& lease, const v1::AggregateRequest& request, const StopCheck& stop) {
  RETURN_IF_ERROR(Stopped(stop));
  RETURN_IF_ERROR(CheckQuerySize(request.query()));
  if (request.dimensions().empty() || request.dimensions_size() > kMaxDimensions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an aggregation takes 1 to ", kMaxDimensions, " dimensions, not ",
        request.dimensions_size(), "; choose from ", index::FacetNames()));
  }
  ASSIGN_OR_RETURN(std::vector<index::FacetField> dimensions,
                   ParseFacetFields(request.dimensions(), "dimension"));
  std::vector<Lease> helpers;
  const MatchSplit split = Split(lease, &helpers);
  ASSIGN_OR_RETURN(std::vector<ParsedQuery> parts, ParseForParts(split, request.query()));
  RETURN_IF_ERROR(Stopped(stop));
  PartSpies<AggregateCounter> counters(split.parts(), dimensions);
  v1::AggregateResponse response;
  response.set_total(CountMatches(split, PartQueries(parts), counters.spies));
  counters.Merged().Fill(&response);
  return response;
}

absl::Status Searcher::Export(const v1::ExportRequest& request, const ExportSink& sink) {
  RETURN_IF_ERROR(CheckQuerySize(request.query()));
  if (gone_ && CheckQuerySize(request.query()).ok() && NamesGoneIssues(request.query())) {
    return gone_->Export(request, sink);
  }
  if (request.limit() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit ", request.limit(), " is negative (0 means all)"));
  }
  PageCursor cursor;
  uint64_t sent = 0;
  const uint64_t limit = request.limit() == 0 ? UINT64_MAX : request.limit();
  while (sent < limit) {
    PageOptions options;
    options.size = static_cast<int>(std::min<uint64_t>(options_.export_chunk, limit - sent));
    options.snippets = request.snippets();
    options.snippet_bytes = kSnippetBytes;
    options.sort_by_key_slots = remote_shards_;
    absl::StatusOr<Page> page;
    {
      // Hold a handle for one chunk only, so a long export does not keep it from searches.
      Lease lease = Borrow();
      page = Guard<Page>(
          [&]() -> absl::StatusOr<Page> {
            Xapian::Database* db = lease.Open();
            ASSIGN_OR_RETURN(ParsedQuery parsed, QueryParser(*db).Parse(request.query()));
            return FetchPage(*db, parsed, cursor, options);
          },
          [&](const Xapian::Error& e) { return ConvertError(e, "export"); });
    }
    if (!page.ok()) return page.status();
    for (const v1::SearchHit& hit : page->hits) {
      RETURN_IF_ERROR(sink(hit));
      ++sent;
    }
    if (!page->next) break;
    cursor = *page->next;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::IssueWithComments> Searcher::GetIssueWith(Lease& lease,
                                                             const std::string& slug,
                                                             int64_t number) {
  Xapian::Database* db = lease.Open();
  const std::string term = index::IdTerm(slug, number);
  Xapian::PostingIterator it = db->postlist_begin(term);
  if (it == db->postlist_end(term)) {
    return absl::NotFoundError(absl::StrCat("issue ", IssueKey(slug, number),
                                            " is not in the index"));
  }
  return index::ReadDocument(db->get_document(*it));
}

absl::StatusOr<v1::IndexStatus> Searcher::GetIndexStatusWith(Lease& lease) {
  Xapian::Database* db = lease.Open();
  v1::IndexStatus status;
  status.set_documents(db->get_doccount());
  if (!path_.empty()) {
    for (const auto& [store, seq] : index::ReadFeedPositions(path_)) {
      v1::FeedPosition* feed = status.add_feeds();
      feed->set_store_id(store);
      feed->set_seq(seq);
    }
    const index::TaggingStatus tagging = index::ReadTaggingStatus(path_);
    status.set_tagger(tagging.tagger);
    status.set_retag_done(tagging.retag_done);
    status.set_retag_total(tagging.retag_total);
    status.set_retag_running(tagging.retag_running);
    return status;
  }
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
