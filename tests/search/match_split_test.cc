// MatchSplit (search/match_split.h): a query whose matching runs on several handles of a
// sharded index, each restricted to a share of the shards, gives exactly what one pass gives —
// the same hits in the same order with the same scores, page after page (offsets and keyset
// cursors), the same totals and exactness up to the count bound (also when every match lies in
// one shard), the same counts and facet counts — for ranked text, phrases, single words,
// value sorts and month-bucket walks. The Searcher does the same with split_parts, and an
// index without shard UUIDs (in memory) is never split.
#include "search/match_split.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <stdlib.h>

#include "absl/strings/str_format.h"
#include "common/index_document.h"
#include "search/index_reader.h"
#include "common/index_layout.h"
#include "common/repo_slug.h"
#include "gtest/gtest.h"
#include "search/facets.h"
#include "search/pager.h"
#include "search/query_parser.h"
#include "search/searcher.h"
#include "tests/search/search_fixture.h"
#include "xapian.h"

namespace issuescope::search {
namespace {

using testing::IssueSpec;
using testing::MakeIssue;

constexpr uint32_t kShards = 4;
constexpr int kIssues = 1200;
// Issues of repository "org/skewed" hold the word "skewword": all in one shard.
constexpr int kSkewed = 300;

std::string Day(std::mt19937& rng) {
  std::uniform_int_distribution<int> year(2019, 2024), month(1, 12), day(1, 28), hour(0, 1);
  return absl::StrFormat("%04d-%02d-%02dT%02d:00:00Z", year(rng), month(rng), day(rng),
                         hour(rng) * 12);
}

// ShardedIndex writes a sharded on-disk index of random issues over 24 repositories.
class ShardedIndex {
 public:
  ShardedIndex() {
    char dir_template[] = "/tmp/issuescope-split-XXXXXX";
    EXPECT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    std::vector<Xapian::WritableDatabase> shards;
    for (uint32_t i = 0; i < kShards; ++i) {
      shards.emplace_back(dir_ + "/" + index::ShardDirName(i), Xapian::DB_CREATE_OR_OPEN);
    }
    std::mt19937 rng(11);
    const std::vector<std::string> words = {"alpha", "beta",  "gamma", "delta",
                                            "crash", "error", "cuda",  "memory"};
    std::uniform_int_distribution<size_t> pick(0, words.size() - 1);
    std::uniform_int_distribution<int> length(3, 40), comments(0, 12);
    for (int i = 1; i <= kIssues + kSkewed; ++i) {
      IssueSpec s;
      s.tracker = v1::TRACKER_GITHUB;
      s.owner = "org";
      const bool skewed = i > kIssues;
      s.name = skewed ? "skewed" : absl::StrFormat("repo%02d", i % 24);
      s.number = i;
      s.title = words[pick(rng)] + " " + words[pick(rng)];
      const int n = length(rng);
      for (int w = 0; w < n; ++w) s.body += words[pick(rng)] + " ";
      if (skewed) s.body += "skewword alpha";
      s.labels = {i % 3 == 0 ? "bug" : "question"};
      s.state = i % 4 == 0 ? v1::ISSUE_STATE_CLOSED : v1::ISSUE_STATE_OPEN;
      s.pr = i % 7 == 0;
      s.author = absl::StrFormat("user%d", i % 9);
      s.created = Day(rng);
      s.updated = Day(rng);
      s.comment_count = comments(rng);
      if (i % 5 == 0) s.comments = {words[pick(rng)] + " said " + words[pick(rng)]};
      const v1::IssueWithComments iwc = MakeIssue(s);
      const std::string slug = RepoSlug(iwc.issue().repo());
      shards[index::ShardOf(slug, kShards)].replace_document(index::IdTerm(slug, s.number),
                                                             index::BuildDocument(iwc));
    }
    for (Xapian::WritableDatabase& shard : shards) shard.commit();
    EXPECT_TRUE(index::WriteStubFile(dir_, kShards).ok());
    for (int i = 0; i < 3; ++i) {
      handles_.push_back(std::make_unique<Xapian::Database>(search::OpenIndexForReading(dir_)));
    }
  }
  ~ShardedIndex() { std::filesystem::remove_all(dir_); }

  const std::string& dir() const { return dir_; }
  const Xapian::Database& db() const { return *handles_[0]; }
  // Split over `parts` handles.
  MatchSplit Split(size_t parts) const {
    std::vector<const Xapian::Database*> handles;
    for (size_t i = 0; i < parts; ++i) handles.push_back(handles_[i].get());
    return MatchSplit(handles);
  }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<Xapian::Database>> handles_;
};

// One index for all tests of this file, removed at exit.
ShardedIndex& Index() {
  static ShardedIndex index;
  return index;
}

std::vector<ParsedQuery> ParseParts(const MatchSplit& split, const std::string& query) {
  std::vector<ParsedQuery> parts;
  for (size_t i = 0; i < split.parts(); ++i) {
    absl::StatusOr<ParsedQuery> parsed = QueryParser(split.db(i)).Parse(query);
    EXPECT_TRUE(parsed.ok()) << query << ": " << parsed.status();
    parts.push_back(parsed.ok() ? *parsed : ParsedQuery());
  }
  return parts;
}

struct Pages {
  std::vector<int64_t> numbers;
  std::vector<double> scores;
  std::vector<int64_t> totals;
  std::vector<bool> exact;
};

// Up to `max_pages` pages of `query`, following each page's cursor.
Pages PageThrough(const MatchSplit& split, const std::string& query, PageOptions options,
                  int max_pages) {
  const std::vector<ParsedQuery> parts = ParseParts(split, query);
  Pages out;
  PageCursor cursor;
  for (int p = 0; p < max_pages; ++p) {
    absl::StatusOr<Page> page = FetchPage(split, parts, cursor, options);
    EXPECT_TRUE(page.ok()) << query << ": " << page.status();
    if (!page.ok()) break;
    for (const v1::SearchHit& hit : page->hits) {
      out.numbers.push_back(hit.number());
      out.scores.push_back(hit.score());
    }
    if (page->total) {
      out.totals.push_back(*page->total);
      out.exact.push_back(page->total_exact);
    }
    if (!page->next) break;
    cursor = *page->next;
  }
  return out;
}

TEST(MatchSplitTest, SharesCoverEveryShardOnce) {
  const ShardedIndex& index = Index();
  const std::vector<ShardShare> shards = ListShards(index.db());
  ASSERT_EQ(shards.size(), kShards);
  Xapian::doccount documents = 0;
  for (const ShardShare& shard : shards) documents += shard.documents;
  EXPECT_EQ(documents, index.db().get_doccount());
  for (size_t parts : {2, 3}) {
    const MatchSplit split = index.Split(parts);
    ASSERT_EQ(split.parts(), parts);
    // The parts' matches of everything are disjoint and together are every document.
    std::vector<Xapian::Query> all;
    for (size_t i = 0; i < parts; ++i) all.emplace_back(std::string());  // match all
    EXPECT_EQ(CountMatches(split, all, {}), static_cast<int64_t>(index.db().get_doccount()));
    for (size_t i = 0; i < parts; ++i) {
      Xapian::Enquire enquire(split.db(i));
      enquire.set_query(split.Restrict(i, Xapian::Query(std::string())));
      const Xapian::MSet mset = enquire.get_mset(0, 0, index.db().get_doccount());
      EXPECT_GT(mset.get_matches_lower_bound(), 0u) << "part " << i << " of " << parts;
    }
  }
}

TEST(MatchSplitTest, InMemoryHandlesAreNotSplit) {
  Xapian::WritableDatabase a(std::string(), Xapian::DB_BACKEND_INMEMORY);
  Xapian::WritableDatabase b(std::string(), Xapian::DB_BACKEND_INMEMORY);
  Xapian::Database combined_a, combined_b;
  combined_a.add_database(a);
  combined_a.add_database(b);
  combined_b.add_database(a);
  combined_b.add_database(b);
  const MatchSplit split({&combined_a, &combined_b});
  EXPECT_EQ(split.parts(), 1u);
  // Restrict leaves the query alone.
  EXPECT_EQ(split.Restrict(0, Xapian::Query("x")).get_description(),
            Xapian::Query("x").get_description());
}

TEST(MatchSplitTest, PagesAreThoseOfOnePass) {
  const ShardedIndex& index = Index();
  const MatchSplit one = index.Split(1);
  ASSERT_EQ(one.parts(), 1u);
  const std::vector<std::string> queries = {
      "alpha beta",       "\"alpha beta\"",          "alpha",
      "alpha OR gamma",   "crash -memory",           "beta sort:created",
      "beta sort:created-asc", "label:bug sort:updated", "gamma sort:comments",
      "label:bug",        "is:closed is:pr",         "alpha cuda created:2021-01-01..2022-12-31",
      "skewword",         "memory in:body",
  };
  for (uint64_t walk_min : {uint64_t{0}, uint64_t{1} << 40}) {
    for (uint64_t bound : {uint64_t{0}, uint64_t{150}}) {
      PageOptions options;
      options.size = 9;
      options.count_total = true;
      options.count_bound = bound;
      options.snippets = true;
      options.bucket_walk_min_matches = walk_min;
      for (const std::string& query : queries) {
        const Pages expected = PageThrough(one, query, options, 6);
        ASSERT_FALSE(expected.numbers.empty()) << query;
        for (size_t parts : {2, 3}) {
          const MatchSplit split = index.Split(parts);
          ASSERT_EQ(split.parts(), parts);
          const Pages got = PageThrough(split, query, options, 6);
          const std::string what = absl::StrFormat("%s, %d parts, bound %d, walk from %d", query,
                                                   parts, bound, walk_min);
          EXPECT_EQ(got.numbers, expected.numbers) << what;
          EXPECT_EQ(got.scores, expected.scores) << what;
          // Exact whenever one pass is (the total within the bound), with the same total; a
          // split may also count a total a little beyond the bound exactly.
          ASSERT_EQ(got.totals.size(), expected.totals.size()) << what;
          for (size_t t = 0; t < got.totals.size(); ++t) {
            if (expected.exact[t]) {
              EXPECT_TRUE(got.exact[t]) << what;
              EXPECT_EQ(got.totals[t], expected.totals[t]) << what;
            } else if (got.exact[t]) {
              EXPECT_GT(got.totals[t], static_cast<int64_t>(bound)) << what;
            }
          }
        }
      }
    }
  }
}

TEST(MatchSplitTest, UnevenMatchesAreExactUpToTheBound) {
  const ShardedIndex& index = Index();
  // "skewword alpha" (an AND, counted in the ranking pass) matches only in one shard: a part
  // counting its even share stops early, and must count again when the total may fit.
  const MatchSplit split = index.Split(2);
  ASSERT_EQ(split.parts(), 2u);
  PageOptions options;
  options.size = 5;
  options.count_total = true;
  options.snippets = false;
  options.count_bound = 2 * kSkewed;  // share 301 > 300: exact at once
  EXPECT_EQ(PageThrough(split, "skewword alpha", options, 1).totals,
            std::vector<int64_t>{kSkewed});
  options.count_bound = kSkewed + 50;  // share 176 < 300: counted again, exact
  Pages pages = PageThrough(split, "skewword alpha", options, 1);
  EXPECT_EQ(pages.totals, std::vector<int64_t>{kSkewed});
  EXPECT_EQ(pages.exact, std::vector<bool>{true});
  options.count_bound = kSkewed - 50;  // more matches than the bound: an estimate
  pages = PageThrough(split, "skewword alpha", options, 1);
  EXPECT_EQ(pages.exact, std::vector<bool>{false});
}

TEST(MatchSplitTest, CountsAndFacetCountsAddUp) {
  const ShardedIndex& index = Index();
  const std::vector<index::FacetField> fields = {index::FacetField::kRepo,
                                                 index::FacetField::kLabel,
                                                 index::FacetField::kAuthor};
  for (const std::string& query : {"alpha", "beta gamma", "label:bug", "skewword"}) {
    const MatchSplit one = index.Split(1);
    FacetCounter expected(fields, UINT64_MAX);
    const int64_t total =
        CountMatches(one, {ParseParts(one, query)[0].query}, {&expected});
    ASSERT_GT(total, 0) << query;
    const MatchSplit split = index.Split(3);
    std::vector<Xapian::Query> queries;
    for (const ParsedQuery& part : ParseParts(split, query)) queries.push_back(part.query);
    FacetCounter a(fields, UINT64_MAX), b(fields, UINT64_MAX), c(fields, UINT64_MAX);
    EXPECT_EQ(CountMatches(split, queries, {&a, &b, &c}), total) << query;
    a.Add(b);
    a.Add(c);
    EXPECT_EQ(a.seen(), static_cast<uint64_t>(total)) << query;
    EXPECT_EQ(a.counts(), expected.counts()) << query;
    EXPECT_EQ(CountMatchesBounded(split, queries, 0).count, total) << query;
  }
}

TEST(MatchSplitTest, SearcherGivesTheSameAnswersSplitOrNot) {
  const ShardedIndex& index = Index();
  SearcherOptions unsplit_options;
  unsplit_options.split_parts = 1;
  unsplit_options.facet_bound = 200;
  unsplit_options.count_bound = 400;
  SearcherOptions split_options = unsplit_options;
  split_options.split_parts = 2;
  split_options.max_handles = 2;
  std::unique_ptr<Searcher> unsplit = Searcher::ForPath(index.dir(), unsplit_options);
  std::unique_ptr<Searcher> split = Searcher::ForPath(index.dir(), split_options);
  for (const std::string& query :
       {"alpha beta", "\"gamma delta\"", "cuda", "skewword", "label:bug sort:created", ""}) {
    v1::SearchRequest request;
    request.set_query(query);
    request.add_facets("repo");
    request.add_facets("label");
    request.add_facets("year");
    absl::StatusOr<v1::SearchResponse> a = unsplit->Search(request);
    absl::StatusOr<v1::SearchResponse> b = split->Search(request);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->total_exact(), a->total_exact()) << query;
    if (a->total_exact()) EXPECT_EQ(b->total(), a->total()) << query;
    ASSERT_EQ(b->hits_size(), a->hits_size()) << query;
    for (int h = 0; h < a->hits_size(); ++h) {
      EXPECT_EQ(b->hits(h).number(), a->hits(h).number()) << query << " hit " << h;
      EXPECT_EQ(b->hits(h).snippet(), a->hits(h).snippet()) << query << " hit " << h;
    }
    EXPECT_EQ(b->next_page_token(), a->next_page_token()) << query;
    EXPECT_EQ(b->facets_exact(), a->facets_exact()) << query;
    if (a->facets_exact()) {
      EXPECT_EQ(b->facets_counted(), a->facets_counted()) << query;
      EXPECT_EQ(b->facets().size(), a->facets().size()) << query;
      for (int f = 0; f < a->facets_size(); ++f) {
        EXPECT_EQ(b->facets(f).DebugString(), a->facets(f).DebugString()) << query;
      }
    }
  }
  EXPECT_GT(split->SplitCalls(), 0u);  // the comparison above was of split searches
  EXPECT_EQ(unsplit->SplitCalls(), 0u);
  v1::AggregateRequest aggregate;
  aggregate.set_query("alpha");
  aggregate.add_dimensions("repo");
  aggregate.add_dimensions("label");
  absl::StatusOr<v1::AggregateResponse> a = unsplit->Aggregate(aggregate);
  absl::StatusOr<v1::AggregateResponse> b = split->Aggregate(aggregate);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_GT(a->total(), 0);
  EXPECT_EQ(b->DebugString(), a->DebugString());
}

// Split searches from several threads at once (each borrowing handles of one pool) answer as
// one pass does.
TEST(MatchSplitTest, ConcurrentSplitSearchesAgree) {
  const ShardedIndex& index = Index();
  SearcherOptions unsplit_options;
  unsplit_options.split_parts = 1;
  SearcherOptions split_options;
  split_options.split_parts = 2;
  split_options.max_handles = 6;
  std::unique_ptr<Searcher> unsplit = Searcher::ForPath(index.dir(), unsplit_options);
  std::unique_ptr<Searcher> split = Searcher::ForPath(index.dir(), split_options);
  const std::vector<std::string> queries = {"alpha beta", "\"gamma delta\"", "skewword",
                                            "label:bug sort:created", "crash -memory",
                                            "cuda created:2020-01-01..2022-12-31"};
  std::vector<std::vector<int64_t>> expected;
  std::vector<int64_t> totals;
  for (const std::string& query : queries) {
    v1::SearchRequest request;
    request.set_query(query);
    absl::StatusOr<v1::SearchResponse> response = unsplit->Search(request);
    ASSERT_TRUE(response.ok()) << response.status();
    expected.push_back(testing::Numbers(*response));
    totals.push_back(response->total());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const size_t q = static_cast<size_t>(t + i) % queries.size();
        v1::SearchRequest request;
        request.set_query(queries[q]);
        absl::StatusOr<v1::SearchResponse> response = split->Search(request);
        if (!response.ok() || testing::Numbers(*response) != expected[q] ||
            response->total() != totals[q]) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(split->SplitCalls(), 0u);
}

// An unsharded index is never split: no handle is borrowed for it. Nor are handles of
// different indexes.
TEST(MatchSplitTest, UnshardedIndexIsNotSplit) {
  char dir_template[] = "/tmp/issuescope-unsharded-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  {
    Xapian::WritableDatabase db(dir, Xapian::DB_CREATE_OR_OPEN);
    IssueSpec s;
    s.tracker = v1::TRACKER_GITHUB;
    s.owner = "org";
    s.name = "one";
    s.number = 1;
    s.title = "alpha";
    s.body = "beta";
    s.state = v1::ISSUE_STATE_OPEN;
    s.pr = false;
    s.author = "a";
    s.created = "2024-01-01T00:00:00Z";
    s.updated = "2024-01-02T00:00:00Z";
    s.comment_count = 0;
    db.add_document(index::BuildDocument(MakeIssue(s)));
    db.commit();
  }
  SearcherOptions options;
  options.split_parts = 2;
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(dir, options);
  v1::SearchRequest request;
  request.set_query("alpha");
  absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->total(), 1);
  EXPECT_EQ(searcher->SplitCalls(), 0u);
  // Handles of different indexes (say, one opened before a rebuild) are never split: a
  // shard could otherwise fall outside every part.
  const Xapian::Database other(dir);
  const MatchSplit mixed({&Index().db(), &other});
  EXPECT_EQ(mixed.parts(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::search
