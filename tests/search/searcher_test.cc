// Searcher over the fixture corpus: ordering, scores, pagination and tokens, snippets, GetIssue,
// index status, and an on-disk index that appears (and grows) after the searcher was made.
#include "search/searcher.h"

#include <stdlib.h>

#include <filesystem>
#include <atomic>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/index_layout.h"
#include "search/snippet.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::Corpus;
using testing::FixtureDatabase;
using testing::MakeIssue;
using testing::Numbers;

v1::SearchResponse MustSearch(Searcher& searcher, const std::string& query, int page_size = 0,
                              const std::string& token = "") {
  v1::SearchRequest request;
  request.set_query(query);
  request.set_page_size(page_size);
  request.set_page_token(token);
  absl::StatusOr<v1::SearchResponse> response = searcher.Search(request);
  EXPECT_TRUE(response.ok()) << query << ": " << response.status();
  return response.ok() ? *response : v1::SearchResponse();
}

// AddIssue indexes an issue of o/r with `title` and `body` into `db`, as the indexer does.
void AddIssue(Xapian::WritableDatabase& db, int64_t number, const std::string& title,
              const std::string& body, v1::IssueState state = v1::ISSUE_STATE_OPEN) {
  testing::IssueSpec spec{v1::TRACKER_GITHUB, "o", "r", number, title, body, {},
                          state, false, "alice", {},
                          "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", 0, {}};
  v1::IssueWithComments iwc = MakeIssue(spec);
  db.replace_document(index::IdTerm(RepoSlug(iwc.issue().repo()), number),
                      index::BuildDocument(iwc));
}

const v1::SearchHit* FindHit(const v1::SearchResponse& response, int64_t number) {
  for (const v1::SearchHit& hit : response.hits()) {
    if (hit.number() == number) return &hit;
  }
  return nullptr;
}

class SearcherTest : public ::testing::Test {
 protected:
  std::unique_ptr<Searcher> searcher_ = Searcher::ForDatabase(FixtureDatabase());
};

TEST_F(SearcherTest, OrdersListingsAndSortsAsAsked) {
  struct Case {
    std::string query;
    std::vector<int64_t> order;
  };
  const std::vector<Case> cases = {
      {"", {6, 3, 2, 1, 5, 4, 7}},  // created desc; #1 and #5 share a day, #1 is later
      {"org:pytorch", {3, 2, 1, 4}},
      {"org:pytorch sort:created-asc", {4, 1, 2, 3}},
      {"org:pytorch sort:updated-asc", {4, 1, 2, 3}},
      {"sort:comments", {3, 5, 1, 4, 7, 6, 2}},  // ties: number desc
      {"memory sort:created", {2, 1}},
      {"memory sort:created-asc", {1, 2}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Numbers(MustSearch(*searcher_, c.query)), c.order) << c.query;
  }
}

TEST_F(SearcherTest, ScoresAreBm25OfTheTextOnly) {
  v1::SearchResponse plain = MustSearch(*searcher_, "memory");
  ASSERT_EQ(plain.hits_size(), 2);
  EXPECT_GT(plain.hits(0).score(), 0);
  EXPECT_GE(plain.hits(0).score(), plain.hits(1).score());
  // Filters do not change the scores of the text.
  v1::SearchResponse filtered = MustSearch(*searcher_, "memory label:bug repo:pytorch/pytorch");
  ASSERT_EQ(filtered.hits_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(filtered.hits(i).number(), plain.hits(i).number());
    EXPECT_DOUBLE_EQ(filtered.hits(i).score(), plain.hits(i).score());
  }
  // A document reached only through a qualifier scores 0.
  v1::SearchResponse mixed = MustSearch(*searcher_, "crash OR label:enhancement");
  ASSERT_NE(FindHit(mixed, 4), nullptr);
  EXPECT_EQ(FindHit(mixed, 4)->score(), 0);
  EXPECT_GT(FindHit(mixed, 3)->score(), 0);
  // Listings have no score.
  const v1::SearchResponse listing = MustSearch(*searcher_, "is:open");
  ASSERT_EQ(listing.hits_size(), 5);
  for (const v1::SearchHit& hit : listing.hits()) {
    EXPECT_EQ(hit.score(), 0);
  }
}

TEST_F(SearcherTest, HitsCarryTheStoredIssue) {
  v1::SearchResponse response = MustSearch(*searcher_, "repo:pytorch/pytorch is:pr");
  ASSERT_EQ(response.hits_size(), 1);
  const v1::SearchHit& hit = response.hits(0);
  EXPECT_EQ(hit.repo_slug(), "github:pytorch/pytorch");
  EXPECT_EQ(hit.repo(), "PyTorch/PyTorch");
  EXPECT_EQ(hit.number(), 3);
  EXPECT_EQ(hit.title(), "Quantization of ARM models");
  EXPECT_EQ(hit.state(), v1::ISSUE_STATE_OPEN);
  EXPECT_THAT(hit.labels(), ::testing::ElementsAre("module: quantization", "triaged"));
  EXPECT_EQ(hit.author(), "carol");
  EXPECT_EQ(hit.created_at().seconds(), testing::Ts("2024-03-15T12:00:00Z").seconds());
  EXPECT_EQ(hit.comment_count(), 5);
  EXPECT_TRUE(hit.is_pull_request());
  EXPECT_EQ(hit.url(), "https://example.test/PyTorch/PyTorch/issues/3");
}

TEST_F(SearcherTest, PaginationCoversEveryHitOnce) {
  for (const std::string& query : {std::string(""), std::string("label:bug OR memory")}) {
    const int64_t expected_total = MustSearch(*searcher_, query, kMaxPageSize).total();
    std::multiset<int64_t> seen;
    std::string token;
    int pages = 0;
    do {
      v1::SearchResponse page = MustSearch(*searcher_, query, 2, token);
      EXPECT_EQ(page.total(), expected_total);
      EXPECT_LE(page.hits_size(), 2);
      for (int64_t n : Numbers(page)) seen.insert(n);
      token = page.next_page_token();
      ASSERT_LT(++pages, 10) << "pagination does not end";
    } while (!token.empty());
    EXPECT_EQ(static_cast<int64_t>(seen.size()), expected_total) << query;
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size()) << query;
    EXPECT_EQ(pages, (expected_total + 1) / 2) << query;
  }
}

TEST_F(SearcherTest, ValidatesPageSizeAndTokens) {
  v1::SearchResponse first = MustSearch(*searcher_, "", 1);
  EXPECT_EQ(first.total(), 7);
  ASSERT_FALSE(first.next_page_token().empty());
  EXPECT_EQ(MustSearch(*searcher_, "", 0).hits_size(), 7);  // 0 means 20
  EXPECT_TRUE(MustSearch(*searcher_, "", 0).next_page_token().empty());

  struct Case {
    std::string query;
    int page_size;
    std::string token;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"", kMaxPageSize + 1, "", "page_size 1001 is outside 0..1000"},
      {"", -1, "", "page_size -1"},
      {"memory", 1, first.next_page_token(), "different query"},
      {"", 1, "!!not base64!!", "page_token is malformed"},
      {"", 1, "bm90IGEgdG9rZW4", "page_token is malformed"},  // "not a token"
  };
  for (const Case& c : cases) {
    v1::SearchRequest request;
    request.set_query(c.query);
    request.set_page_size(c.page_size);
    request.set_page_token(c.token);
    absl::StatusOr<v1::SearchResponse> response = searcher_->Search(request);
    ASSERT_FALSE(response.ok()) << c.fragment;
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(response.status().message()), HasSubstr(c.fragment));
  }
}

TEST_F(SearcherTest, SnippetsHighlightMatchesAndEscapeHtml) {
  v1::SearchResponse memory = MustSearch(*searcher_, "memory");
  ASSERT_NE(FindHit(memory, 1), nullptr);
  // Snippets are plain text: the body's HTML tags are dropped, never passed on.
  EXPECT_THAT(FindHit(memory, 1)->snippet(),
              AllOf(HasSubstr("<mark>memory</mark>"), HasSubstr("alert(1)"),
                    Not(HasSubstr("<script>")), Not(HasSubstr("script&gt;"))));
  // Only a comment matches: the snippet comes from the comment.
  v1::SearchResponse xla = MustSearch(*searcher_, "xla");
  ASSERT_EQ(xla.hits_size(), 1);
  EXPECT_THAT(xla.hits(0).snippet(), AllOf(HasSubstr("<mark>XLA</mark>"), HasSubstr("jit")));
  // Phrases highlight.
  v1::SearchResponse phrase = MustSearch(*searcher_, "\"illegal memory access\"");
  ASSERT_EQ(phrase.hits_size(), 1);
  EXPECT_THAT(phrase.hits(0).snippet(), HasSubstr("<mark>"));
  // CJK highlights.
  v1::SearchResponse cjk = MustSearch(*searcher_, "内存泄漏");
  ASSERT_EQ(cjk.hits_size(), 1);
  EXPECT_THAT(cjk.hits(0).snippet(), HasSubstr("<mark>"));
  // Listings show the beginning of the body, escaped, without highlights.
  v1::SearchResponse listing = MustSearch(*searcher_, "repo:pytorch/pytorch");
  ASSERT_NE(FindHit(listing, 1), nullptr);
  EXPECT_THAT(FindHit(listing, 1)->snippet(),
              AllOf(StartsWith("Running matmul"), HasSubstr("alert(1)"),
                    Not(HasSubstr("<script>")), Not(HasSubstr("<mark>"))));
}

TEST_F(SearcherTest, ConcurrentQueriesAgree) {
  const std::vector<std::pair<std::string, int64_t>> queries = {
      {"memory", 2}, {"label:bug", 3}, {"", 7}, {"crash OR segfault", 2}, {"内存泄漏", 1}};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const auto& [query, total] = queries[(t + i) % queries.size()];
        v1::SearchRequest request;
        request.set_query(query);
        absl::StatusOr<v1::SearchResponse> response = searcher_->Search(request);
        if (!response.ok() || response->total() != total) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A long text is highlighted where most of the query's words are together: identifiers match
// through their parts (NCCL_DEBUG holds nccl), so for `nccl allreduce` the passage is the one
// with both words, far into the text, not the first occurrence of one of them.
TEST(SnippetTest, PassageWithTheMostQueryWords) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  std::string filler;
  for (int i = 0; i < 40; ++i) filler += "lorem ipsum dolor ";
  testing::IssueSpec spec = Corpus()[0];
  spec.body = "NCCL_DEBUG=INFO set. " + filler + " NCCL_P2P off. " + filler +
              " NCCL_IB too. " + filler + " libnccl2 " + filler +
              " the collective hangs in nccl allreduce " + filler;
  spec.comments.clear();
  db.add_document(testing::IndexedDocument(testing::TaggedIssue(spec)));
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  v1::SearchResponse response = MustSearch(*searcher, "nccl allreduce");
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_THAT(response.hits(0).snippet(),
              AllOf(HasSubstr("<mark>nccl</mark> <mark>allreduce</mark>"), StartsWith("…")));
  // One word: its first occurrence, an identifier's part included.
  response = MustSearch(*searcher, "nccl");
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_THAT(response.hits(0).snippet(), StartsWith("<mark>NCCL_DEBUG</mark>=INFO"));
}

TEST(SnippetTest, LeadingExcerptCutsAtWordsAndCharacters) {
  std::string words;
  for (int i = 0; i < 100; ++i) words += "word ";
  const std::string excerpt = LeadingExcerpt(words, kSnippetBytes);
  EXPECT_LE(excerpt.size(), kSnippetBytes + std::string("…").size());
  EXPECT_THAT(excerpt, ::testing::EndsWith("word…"));
  std::string cjk;
  for (int i = 0; i < 200; ++i) cjk += "内";  // 3 bytes each, no spaces
  const std::string cut = LeadingExcerpt(cjk, 100);
  EXPECT_EQ((cut.size() - std::string("…").size()) % 3, 0u);
  EXPECT_EQ(HtmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(LeadingExcerpt("short", 200), "short");
}

TEST_F(SearcherTest, GetIssueReturnsTheIssueWithComments) {
  absl::StatusOr<v1::IssueWithComments> issue = searcher_->GetIssue("github:pytorch/pytorch", 1);
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->issue().title(), "CUDA illegal memory access in matmul");
  ASSERT_EQ(issue->comments_size(), 1);
  EXPECT_EQ(issue->comments(0).body(), "Same here on H100.");
  EXPECT_TRUE(searcher_->GetIssue("GITHUB:PyTorch/PyTorch", 3).ok());

  struct Case {
    std::string slug;
    int64_t number;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"github:pytorch/pytorch", 99, absl::StatusCode::kNotFound},
      {"gitlab:pytorch/pytorch", 1, absl::StatusCode::kNotFound},
      {"", 1, absl::StatusCode::kInvalidArgument},
      {"github:pytorch/pytorch", 0, absl::StatusCode::kInvalidArgument},
      // OWNER/NAME is GitHub's, as in issue references.
      {"pytorch/pytorch", 1, absl::StatusCode::kOk},
      {"PyTorch/PyTorch", 3, absl::StatusCode::kOk},
      {"github:pytorch", 1, absl::StatusCode::kInvalidArgument},
      {"pytorch", 1, absl::StatusCode::kInvalidArgument},
      {"nohub:pytorch/pytorch", 1, absl::StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(searcher_->GetIssue(c.slug, c.number).status().code(), c.code)
        << c.slug << "#" << c.number;
  }
  EXPECT_THAT(std::string(searcher_->GetIssue("github:pytorch/pytorch", 99).status().message()),
              HasSubstr("github:pytorch/pytorch#99"));
  // The error says which forms are accepted.
  EXPECT_THAT(std::string(searcher_->GetIssue("github:pytorch", 1).status().message()),
              AllOf(HasSubstr("'github:pytorch'"), HasSubstr("TRACKER:OWNER/NAME"),
                    HasSubstr("OWNER/NAME for GitHub")));
}

TEST_F(SearcherTest, CountsOnlyAnswersTotalAndFacetsWithoutHits) {
  v1::SearchRequest request;
  request.set_query("org:pytorch");
  request.add_facets("state");
  request.set_page_size(1);
  absl::StatusOr<v1::SearchResponse> paged = searcher_->Search(request);
  ASSERT_TRUE(paged.ok()) << paged.status();
  ASSERT_FALSE(paged->next_page_token().empty());
  request.set_counts_only(true);
  request.set_page_token("garbage: ignored with counts_only");
  absl::StatusOr<v1::SearchResponse> counts = searcher_->Search(request);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->hits_size(), 0);
  EXPECT_TRUE(counts->next_page_token().empty());
  EXPECT_EQ(counts->total(), paged->total());
  EXPECT_TRUE(counts->total_exact());
  ASSERT_EQ(counts->facets_size(), 1);
  EXPECT_EQ(counts->facets(0).DebugString(), paged->facets(0).DebugString());
  EXPECT_TRUE(counts->facets_exact());
}

// explain: each hit's score parts (words in the text, words in the title) add up to its score,
// largest first; without explain there are none.
TEST_F(SearcherTest, ExplainedPartsAddUpToTheScore) {
  for (const std::string query : {"memory", "illegal memory access", "\"illegal memory\" crash",
                                  "matmul OR segfault", "memory in:body"}) {
    v1::SearchRequest request;
    request.set_query(query);
    request.set_explain(true);
    absl::StatusOr<v1::SearchResponse> response = searcher_->Search(request);
    ASSERT_TRUE(response.ok()) << query << ": " << response.status();
    ASSERT_GT(response->hits_size(), 0) << query;
    for (const v1::SearchHit& hit : response->hits()) {
      ASSERT_GT(hit.explain_size(), 0) << query;
      double sum = 0;
      for (int i = 0; i < hit.explain_size(); ++i) {
        sum += hit.explain(i).weight();
        EXPECT_FALSE(hit.explain(i).terms().empty());
        if (i > 0) EXPECT_GE(hit.explain(i - 1).weight(), hit.explain(i).weight());
      }
      EXPECT_NEAR(sum, hit.score(), 1e-6 * std::max(1.0, hit.score())) << query << " #"
                                                                        << hit.number();
    }
  }
  // A title word shows as such.
  v1::SearchRequest request;
  request.set_query("matmul");
  request.set_explain(true);
  const v1::SearchResponse response = *searcher_->Search(request);
  ASSERT_GT(response.hits_size(), 0);
  std::vector<std::string> parts;
  for (const v1::ScorePart& p : response.hits(0).explain()) parts.push_back(p.part());
  EXPECT_THAT(parts, ::testing::Contains("title \"matmul\""));
  EXPECT_THAT(parts, ::testing::Contains("text \"matmul\""));
  request.set_explain(false);
  EXPECT_EQ(searcher_->Search(request)->hits(0).explain_size(), 0);
}

TEST_F(SearcherTest, FacetsAreExactWhenNoneWereAsked) {
  for (const std::string& query : {"", "crashes", "org:pytorch"}) {
    v1::SearchRequest request;
    request.set_query(query);
    absl::StatusOr<v1::SearchResponse> response = searcher_->Search(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_TRUE(response->facets_exact()) << "'" << query << "'";
  }
}

TEST(SearcherStatusTest, ReadsFeedPositions) {
  // On disk: the in-memory backend cannot list metadata keys.
  char dir_template[] = "/tmp/issuescope-search-status-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  Xapian::WritableDatabase db(dir + "/index", Xapian::DB_CREATE_OR_OPEN);
  for (const testing::IssueSpec& spec : Corpus()) {
    v1::IssueWithComments iwc = MakeIssue(spec);
    db.replace_document(index::IdTerm(RepoSlug(iwc.issue().repo()), spec.number),
                        index::BuildDocument(iwc));
  }
  db.set_metadata("feed:worker-2", "7");
  db.set_metadata("feed:worker-1", "42");
  db.set_metadata("other", "x");
  db.commit();
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  absl::StatusOr<v1::IndexStatus> status = searcher->GetIndexStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->documents(), 7);
  ASSERT_EQ(status->feeds_size(), 2);
  EXPECT_EQ(status->feeds(0).store_id(), "worker-1");
  EXPECT_EQ(status->feeds(0).seq(), 42u);
  EXPECT_EQ(status->feeds(1).store_id(), "worker-2");
  EXPECT_EQ(status->feeds(1).seq(), 7u);

  db.set_metadata("feed:worker-3", "not a number");
  db.commit();
  EXPECT_EQ(searcher->GetIndexStatus().status().code(), absl::StatusCode::kDataLoss);
  std::filesystem::remove_all(dir);
}

// Ranking (common/index_text.h, sections-2): the word in the title ranks first (title weight and
// title bonus); a long issue is pushed below a short one with the same occurrences (length
// normalised when indexing); environment dumps add nothing; and the total counted in the
// ranking pass is exact.
TEST(SearcherRankingTest, TitleFirstAndLongIssuesBelowShortOnes) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  auto add = [&](int64_t number, const std::string& title, const std::string& body) {
    AddIssue(db, number, title, body);
  };
  std::string filler;
  for (int i = 0; i < 200; ++i) filler += " lorem ipsum dolor sit amet";
  add(1, "short issue", "the tokenizer hangs");
  add(2, "long issue", "the tokenizer hangs" + filler);
  add(3, "tokenizer hangs", "nothing else here");
  for (int n = 4; n < 30; ++n) add(n, "other issue", "unrelated text" + filler);
  db.commit();
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  const v1::SearchResponse response = MustSearch(*searcher, "tokenizer");
  EXPECT_EQ(response.total(), 3);
  ASSERT_EQ(response.hits_size(), 3);
  EXPECT_EQ(response.hits(0).number(), 3);  // in the title
  EXPECT_EQ(response.hits(1).number(), 1);  // short report
  EXPECT_EQ(response.hits(2).number(), 2);  // the same words in a long thread
  EXPECT_GT(FindHit(response, 1)->score(), FindHit(response, 2)->score());
  EXPECT_EQ(MustSearch(*searcher, "issue -tokenizer").total(), 26);
  // Disjunctions (one word over every field, OR, wildcards) are ranked with pruning and counted
  // apart: the totals are still exact beyond the page.
  EXPECT_EQ(MustSearch(*searcher, "issue").total(), 28);
  EXPECT_EQ(MustSearch(*searcher, "lorem").total(), 27);
  EXPECT_EQ(MustSearch(*searcher, "tokenizer OR lorem").total(), 29);
  EXPECT_EQ(MustSearch(*searcher, "tok* OR lor*", 5).total(), 29);
  EXPECT_EQ(MustSearch(*searcher, "hangs").total(), 3);
  // A word only in an environment dump is found, but scores nothing above it.
  add(40, "cuda setup", "### Your current environment\n```\nPyTorch version: 2.1\nnimbus-gpu\n```\n");
  add(41, "nimbus-gpu crashes", "the nimbus-gpu card crashes");
  db.commit();
  searcher = Searcher::ForDatabase(db);
  const v1::SearchResponse env = MustSearch(*searcher, "nimbus");
  ASSERT_EQ(env.hits_size(), 2);
  EXPECT_EQ(env.hits(0).number(), 41);
  EXPECT_EQ(env.hits(1).number(), 40);
  EXPECT_EQ(env.total(), 2);
}

// Words that no issue has all of: the search is relaxed to any of them (more of them first),
// and says so; facets, counts_only and later pages agree with the relaxed first page. Words
// that occur together are not relaxed.
TEST(SearcherRankingTest, RelaxesWhenNoIssueHasEveryWord) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  auto add = [&](int64_t number, const std::string& title, const std::string& body,
                 v1::IssueState state) { AddIssue(db, number, title, body, state); };
  add(1, "tokenizer hangs", "the tokenizer hangs on long inputs", v1::ISSUE_STATE_OPEN);
  add(2, "sampler crash", "the sampler crashes at startup", v1::ISSUE_STATE_CLOSED);
  add(3, "tokenizer sampler crash", "both the tokenizer and the sampler crash",
      v1::ISSUE_STATE_OPEN);
  add(4, "unrelated", "nothing to see", v1::ISSUE_STATE_OPEN);
  db.commit();
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);

  const v1::SearchResponse strict = MustSearch(*searcher, "tokenizer crash");
  EXPECT_FALSE(strict.relaxed());
  EXPECT_EQ(Numbers(strict), std::vector<int64_t>({3}));

  // No issue has "hangs", "startup" and "sampler" together.
  const v1::SearchResponse relaxed = MustSearch(*searcher, "hangs startup sampler");
  EXPECT_TRUE(relaxed.relaxed());
  EXPECT_EQ(relaxed.total(), 3);
  ASSERT_EQ(relaxed.hits_size(), 3);
  EXPECT_EQ(relaxed.hits(0).number(), 2);  // two of the words
  // Facets count the relaxed matches.
  v1::SearchRequest request;
  request.set_query("hangs startup sampler");
  request.add_facets("state");
  absl::StatusOr<v1::SearchResponse> faceted = searcher->Search(request);
  ASSERT_TRUE(faceted.ok()) << faceted.status();
  EXPECT_TRUE(faceted->relaxed());
  ASSERT_EQ(faceted->facets_size(), 1);
  int64_t counted = 0;
  for (const auto& value : faceted->facets(0).values()) counted += value.count();
  EXPECT_EQ(counted, 3);
  // counts_only and a later page are relaxed the same way.
  request.set_counts_only(true);
  absl::StatusOr<v1::SearchResponse> counts = searcher->Search(request);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_TRUE(counts->relaxed());
  EXPECT_EQ(counts->total(), 3);
  const v1::SearchResponse first = MustSearch(*searcher, "hangs startup sampler", 2);
  ASSERT_EQ(first.hits_size(), 2);
  ASSERT_FALSE(first.next_page_token().empty());
  const v1::SearchResponse second =
      MustSearch(*searcher, "hangs startup sampler", 2, first.next_page_token());
  EXPECT_TRUE(second.relaxed());
  ASSERT_EQ(second.hits_size(), 1);
  EXPECT_EQ(second.hits(0).number(), relaxed.hits(2).number());
  // A word no issue has at all, alone: nothing, not relaxed.
  const v1::SearchResponse none = MustSearch(*searcher, "zyzzyva");
  EXPECT_FALSE(none.relaxed());
  EXPECT_EQ(none.total(), 0);
}

// Proximity (search/proximity.h): of issues with every word of a multi-word query, those that
// hold the words next to each other, in order, rank above those that hold them apart, even
// when BM25 alone puts the others first; the bonus shows in explain; pages of any size return
// each hit once, in the one order, inside the re-ranked window and past it.
TEST(SearcherRankingTest, ProximityRanksAdjacentWordsFirst) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  auto add = [&](int64_t number, const std::string& title, const std::string& body) {
    AddIssue(db, number, title, body);
  };
  // Apart: more occurrences of both words, so BM25 alone ranks it first.
  add(1, "server stalls",
      "the kv store is slow and later on the whole cache fills up again today. kv restarts "
      "do not help.");
  add(2, "server stalls", "the kv cache fills");
  // Near (three positions) and far (six): the same words, the same BM25 weight (short
  // issues), the far one indexed first so that it wins ties.
  add(3, "server stalls", "kv blocks up all of the cache");
  add(4, "server stalls", "kv blocks the cache");
  db.commit();
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);

  // Without the bonus (one word at a time) issue 1 weighs most.
  const v1::SearchResponse kv = MustSearch(*searcher, "kv");
  ASSERT_EQ(kv.hits_size(), 4);
  EXPECT_EQ(kv.hits(0).number(), 1);

  v1::SearchRequest request;
  request.set_query("kv cache");
  request.set_explain(true);
  absl::StatusOr<v1::SearchResponse> ranked = searcher->Search(request);
  ASSERT_TRUE(ranked.ok()) << ranked.status();
  ASSERT_EQ(ranked->hits_size(), 4);
  EXPECT_EQ(ranked->hits(0).number(), 2);
  const std::vector<int64_t> order = Numbers(*ranked);
  const auto rank = [&](int64_t n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  EXPECT_LT(rank(4), rank(3));  // near before far
  // The bonus is a part of the score; the parts still add up.
  const v1::SearchHit& top = ranked->hits(0);
  double sum = 0, proximity = 0;
  for (const v1::ScorePart& part : top.explain()) {
    sum += part.weight();
    if (part.part() == "proximity") {
      proximity = part.weight();
      EXPECT_THAT(part.terms(), ::testing::ElementsAre("kv", "cache"));
    }
  }
  EXPECT_GT(proximity, 0);
  EXPECT_NEAR(sum, top.score(), 1e-6 * top.score());
  // The words far apart earn nothing.
  for (const v1::ScorePart& part : FindHit(*ranked, 3)->explain()) {
    EXPECT_NE(part.part(), "proximity");
  }
  // In the other order the adjacent words are only near: less bonus, still above far.
  const v1::SearchResponse reversed = MustSearch(*searcher, "cache kv");
  ASSERT_EQ(reversed.hits_size(), 4);
  EXPECT_LT(FindHit(reversed, 2)->score(), top.score());
  EXPECT_GT(FindHit(reversed, 2)->score(), FindHit(reversed, 3)->score());
  // Sorted by time: no re-ranking (and no score change).
  EXPECT_EQ(Numbers(MustSearch(*searcher, "kv cache sort:created-asc")),
            std::vector<int64_t>({1, 2, 3, 4}));

  // Many matches: pages of any size, within the window and past it, return every match once
  // and in the order of one large page.
  std::string filler;
  for (int i = 0; i < 30; ++i) filler += " lorem ipsum";
  for (int n = 10; n < 140; ++n) {
    add(n, "issue " + std::to_string(n),
        n % 3 == 0 ? "the kv cache" + filler : "kv" + filler.substr(0, 6 * (n % 7)) + " cache");
  }
  db.commit();
  searcher = Searcher::ForDatabase(db);
  const v1::SearchResponse all = MustSearch(*searcher, "kv cache", 1000);
  ASSERT_EQ(all.hits_size(), 134);
  for (int i = 1; i < all.hits_size(); ++i) {
    if (i < 50) EXPECT_GE(all.hits(i - 1).score(), all.hits(i).score()) << i;
  }
  for (int size : {1, 7, 20, 49, 50, 51}) {
    std::vector<int64_t> paged;
    std::string token;
    do {
      const v1::SearchResponse page = MustSearch(*searcher, "kv cache", size, token);
      for (const v1::SearchHit& hit : page.hits()) paged.push_back(hit.number());
      token = page.next_page_token();
    } while (!token.empty());
    EXPECT_EQ(paged, Numbers(all)) << "page size " << size;
  }
}

TEST(SearcherStatusTest, InMemoryIndexCannotListFeeds) {
  Xapian::WritableDatabase db = FixtureDatabase();
  db.set_metadata("feed:worker-1", "1");
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  absl::StatusOr<v1::IndexStatus> status = searcher->GetIndexStatus();
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.status().message()), HasSubstr("in-memory"));
}

TEST(SearcherPathTest, WaitsForTheIndexAndSeesNewCommits) {
  char dir_template[] = "/tmp/issuescope-search-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string path = dir + "/index";
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(path);

  absl::StatusOr<v1::SearchResponse> missing = searcher->Search(v1::SearchRequest());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(missing.status().message()),
              AllOf(HasSubstr("index not built yet"), HasSubstr(path)));
  EXPECT_EQ(searcher->GetIndexStatus().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(searcher->GetIssue("github:pytorch/pytorch", 1).status().code(),
            absl::StatusCode::kUnavailable);

  const std::vector<testing::IssueSpec> corpus = Corpus();
  {
    Xapian::WritableDatabase db(path, Xapian::DB_CREATE_OR_OPEN);
    v1::IssueWithComments iwc = MakeIssue(corpus[0]);
    db.replace_document(index::IdTerm("github:pytorch/pytorch", 1), index::BuildDocument(iwc));
    db.set_metadata("feed:w", "1");
    db.commit();
    EXPECT_EQ(MustSearch(*searcher, "").total(), 1);
    // Facets of a match-all query come from term frequencies, cached per revision: a commit
    // that changes an issue's labels (same document count) changes them.
    v1::SearchRequest facets;
    facets.add_facets("label");
    const auto labels = [&] {
      absl::StatusOr<v1::SearchResponse> response = searcher->Search(facets);
      EXPECT_TRUE(response.ok()) << response.status();
      std::vector<std::string> out;
      if (!response.ok() || response->facets_size() != 1) return out;
      for (const v1::FacetValue& v : response->facets(0).values()) {
        out.push_back(absl::StrCat(v.value(), "=", v.count()));
      }
      return out;
    };
    const std::vector<std::string> before = labels();
    ASSERT_FALSE(before.empty());
    v1::IssueWithComments relabelled = iwc;
    relabelled.mutable_issue()->add_labels("freshly-added");
    db.replace_document(index::IdTerm("github:pytorch/pytorch", 1),
                        index::BuildDocument(relabelled));
    db.commit();
    std::vector<std::string> after = before;
    after.push_back("freshly-added=1");
    std::sort(after.begin(), after.end());
    std::vector<std::string> seen = labels();
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, after);

    v1::IssueWithComments second = MakeIssue(corpus[1]);
    db.replace_document(index::IdTerm("github:pytorch/pytorch", 2), index::BuildDocument(second));
    db.set_metadata("feed:w", "2");
    db.commit();
    EXPECT_EQ(MustSearch(*searcher, "").total(), 2);
    EXPECT_EQ(Numbers(MustSearch(*searcher, "leak")), std::vector<int64_t>{2});
    absl::StatusOr<v1::IndexStatus> status = searcher->GetIndexStatus();
    ASSERT_TRUE(status.ok()) << status.status();
    ASSERT_EQ(status->feeds_size(), 1);
    EXPECT_EQ(status->feeds(0).seq(), 2u);
  }
  std::filesystem::remove_all(dir);
}

// A sharded index (shard-NNN databases and a stub) is searched as one database, and its feed
// positions are the minimum over the shards.
TEST(SearcherPathTest, SearchesEveryShardOfAShardedIndex) {
  char dir_template[] = "/tmp/issuescope-search-shards-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  constexpr uint32_t kShards = 3;
  {
    std::vector<Xapian::WritableDatabase> shards = testing::WriteShardedCorpus(dir, kShards);
    for (uint32_t i = 0; i < kShards; ++i) {
      shards[i].set_metadata("feed:w", std::to_string(10 + i));
      shards[i].commit();
    }
  }
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(dir);
  EXPECT_EQ(MustSearch(*searcher, "").total(), 7);
  EXPECT_EQ(Numbers(MustSearch(*searcher, "leak")), std::vector<int64_t>{2});
  absl::StatusOr<v1::IssueWithComments> issue = searcher->GetIssue("gitee:mindspore/mindspore", 6);
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->issue().tags().kind(), "bug");
  absl::StatusOr<v1::IndexStatus> status = searcher->GetIndexStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->documents(), 7);
  ASSERT_EQ(status->feeds_size(), 1);
  EXPECT_EQ(status->feeds(0).seq(), 10u);
  v1::AggregateRequest aggregate;
  aggregate.add_dimensions("tracker");
  absl::StatusOr<v1::AggregateResponse> counts = searcher->Aggregate(aggregate);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->rows_size(), 3);
  EXPECT_EQ(counts->total(), 7);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::search
