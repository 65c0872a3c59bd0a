// FetchPage's month-bucket walk (search/pager.h, PageOptions::bucket_walk_min_matches): a
// query sorted by created or updated time pages through exactly the same hits in exactly the
// same order, with the same totals, whether it walks the month buckets or sorts every match in
// one pass; across pages (keyset cursors), ties of equal timestamps, both directions, text and
// listings, and an index where some document lacks the sort time (no walk is possible; such a
// document sorts last newest-first and must not be lost between keyset pages). Also the date
// ranges answered from year and month terms (search/qualifiers.h, DateFilter), which must match
// exactly what value ranges match.
#include "search/pager.h"
#include "search/ranking_weight.h"

#include "common/index_text.h"

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/index_document.h"
#include "gtest/gtest.h"
#include "search/qualifiers.h"
#include "search/query_parser.h"
#include "tests/search/search_fixture.h"
#include "xapian.h"

namespace issuescope::search {
namespace {

using testing::IssueSpec;
using testing::MakeIssue;

std::string Day(std::mt19937& rng) {
  // 2019-01 .. 2024-12, with a coarse grid of times so that equal timestamps (ties) occur.
  std::uniform_int_distribution<int> year(2019, 2024), month(1, 12), day(1, 28), hour(0, 1);
  return absl::StrFormat("%04d-%02d-%02dT%02d:00:00Z", year(rng), month(rng), day(rng),
                         hour(rng) * 12);
}

Xapian::WritableDatabase Build(int n, bool one_without_updated) {
  std::mt19937 rng(7);
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  for (int i = 1; i <= n; ++i) {
    IssueSpec s;
    s.tracker = v1::TRACKER_GITHUB;
    s.owner = "org";
    s.name = "repo";
    s.number = i;
    s.title = "alpha issue";
    s.body = std::string(i % 2 == 0 ? "beta " : "") + (i % 10 == 0 ? "gamma " : "") + "text";
    s.labels = {i % 3 == 0 ? "bug" : "question"};
    s.state = i % 4 == 0 ? v1::ISSUE_STATE_CLOSED : v1::ISSUE_STATE_OPEN;
    s.pr = false;
    s.author = "someone";
    s.created = Day(rng);
    s.updated = Day(rng);
    s.comment_count = 0;
    v1::IssueWithComments iwc = MakeIssue(s);
    if (one_without_updated && i == n / 2) iwc.mutable_issue()->clear_updated_at();
    db.add_document(index::BuildDocument(iwc));
  }
  return db;
}

struct Walk {
  std::vector<int64_t> numbers;
  std::vector<double> scores;
  int64_t total = -1;
};

// All pages of `query`, `size` hits at a time, following each page's cursor.
Walk PageThrough(const Xapian::Database& db, const std::string& query, uint64_t walk_min,
                 int size) {
  absl::StatusOr<ParsedQuery> parsed = QueryParser(db).Parse(query);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  Walk out;
  if (!parsed.ok()) return out;
  PageOptions options;
  options.size = size;
  options.count_total = true;
  options.snippets = false;
  options.bucket_walk_min_matches = walk_min;
  PageCursor cursor;
  for (int pages = 0; pages < 1000; ++pages) {
    absl::StatusOr<Page> page = FetchPage(db, *parsed, cursor, options);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    if (pages == 0 && page->total) out.total = *page->total;
    for (const v1::SearchHit& hit : page->hits) {
      out.numbers.push_back(hit.number());
      out.scores.push_back(hit.score());
    }
    if (!page->next) break;
    cursor = *page->next;
  }
  return out;
}

TEST(PagerBucketWalkTest, SameHitsInTheSameOrderAsOnePassSorting) {
  const Xapian::WritableDatabase db = Build(400, false);
  const uint64_t never = std::numeric_limits<uint64_t>::max();
  for (const std::string query :
       {"", "alpha", "beta sort:updated", "sort:created-asc", "gamma sort:created",
        "label:bug sort:updated-asc", "alpha -beta sort:updated", "is:closed"}) {
    for (int size : {1, 7, 50}) {
      const Walk one_pass = PageThrough(db, query, never, size);
      const Walk walked = PageThrough(db, query, 0, size);
      EXPECT_EQ(walked.numbers, one_pass.numbers) << query << " size " << size;
      EXPECT_EQ(walked.scores, one_pass.scores) << query << " size " << size;
      EXPECT_EQ(walked.total, one_pass.total) << query << " size " << size;
      // Every match exactly once.
      EXPECT_EQ(static_cast<int64_t>(walked.numbers.size()), walked.total) << query;
    }
  }
}

TEST(PagerBucketWalkTest, ADocumentWithoutTheSortTimeIsStillListed) {
  const Xapian::WritableDatabase db = Build(120, true);
  const Walk one_pass = PageThrough(db, "sort:updated", std::numeric_limits<uint64_t>::max(), 9);
  const Walk walked = PageThrough(db, "sort:updated", 0, 9);
  const Walk one_page = PageThrough(db, "sort:updated", 0, 500);
  EXPECT_EQ(walked.numbers, one_pass.numbers);
  // Newest first, the document without an updated time last, on whichever page it falls.
  EXPECT_EQ(walked.numbers, one_page.numbers);
  ASSERT_EQ(walked.numbers.size(), 120u);
  EXPECT_EQ(walked.numbers.back(), 60);
}

// CountMatchesBounded: exact up to the bound (also when Xapian's statistics cannot tell), an
// estimate from the document-id sample beyond it, and free for one term.
TEST(CountMatchesBoundedTest, ExactUpToTheBoundEstimatedBeyond) {
  const Xapian::WritableDatabase db = Build(2000, false);
  QueryParser parser(db);
  // "beta" is in the even issues' bodies, "gamma" in every tenth: "beta gamma" is an AND whose
  // count the statistics do not know (200 matches).
  const Xapian::Query both = parser.Parse("beta gamma")->query;
  const MatchCount all = CountMatchesBounded(db, both, 0);
  EXPECT_TRUE(all.exact);
  EXPECT_EQ(all.count, 200);
  const MatchCount under = CountMatchesBounded(db, both, 500);
  EXPECT_TRUE(under.exact);
  EXPECT_EQ(under.count, 200);
  const MatchCount over = CountMatchesBounded(db, both, 50);
  EXPECT_FALSE(over.exact);
  EXPECT_GE(over.count, 50);
  EXPECT_NEAR(static_cast<double>(over.count), 200.0, 60.0);
  // One term: exact from its frequency whatever the bound.
  const MatchCount term = CountMatchesBounded(db, parser.Parse("beta")->query, 10);
  EXPECT_TRUE(term.exact);
  EXPECT_EQ(term.count, 1000);
}

std::vector<Xapian::docid> Docids(const Xapian::Database& db, const Xapian::Query& query) {
  Xapian::Enquire enquire(db);
  enquire.set_query(query);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);
  std::vector<Xapian::docid> out;
  Xapian::MSet mset = enquire.get_mset(0, db.get_doccount());
  for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) out.push_back(*it);
  return out;
}

// Date ranges answered from the year and month terms (DateFilter with a database) match
// exactly what the value ranges match, for whole years, whole months, partial months at either
// end, open ends and single days, for created, updated and closed times (closed is absent on
// open issues); and where some document lacks its month term they fall back to values.
TEST(DateRangeTermsTest, SameMatchesAsValueRanges) {
  const Xapian::WritableDatabase db = Build(600, false);
  const Xapian::WritableDatabase partial = Build(100, true);  // one document without updated
  // An index written before month terms: one document has its created time but no month term,
  // so created ranges must fall back to values.
  Xapian::WritableDatabase older = Build(100, false);
  {
    Xapian::Document doc = older.get_document(7);
    Xapian::TermIterator t = doc.termlist_begin();
    t.skip_to(index::kCreatedMonthPrefix);
    ASSERT_TRUE(t != doc.termlist_end() && (*t).rfind(index::kCreatedMonthPrefix, 0) == 0);
    doc.remove_term(*t);
    older.replace_document(7, doc);
  }
  for (const std::string value :
       {"2023-01-01..2023-12-31", ">=2024-01-01", "<2020-01-01", "2021-03-15..2022-02-03",
        "2022-05-01..2022-05-31", "2020-02-29", "2019-06-10T12:00:00Z..*", "*..2021-01-31",
        "2022-07-01..2022-07-01", ">2024-12-31", "<=2018-12-31", "2021-01-31T23:59:59Z"}) {
    for (Xapian::valueno slot : {index::kCreatedSlot, index::kUpdatedSlot, index::kClosedSlot}) {
      QualifierValue v;
      v.text = value;
      v.column = 1;
      for (const Xapian::Database* d : {static_cast<const Xapian::Database*>(&db),
                                        static_cast<const Xapian::Database*>(&partial),
                                        static_cast<const Xapian::Database*>(&older)}) {
        absl::StatusOr<Xapian::Query> by_terms = DateFilter(slot, "created", v, d);
        absl::StatusOr<Xapian::Query> by_values = DateFilter(slot, "created", v, nullptr);
        ASSERT_TRUE(by_terms.ok() && by_values.ok()) << value;
        EXPECT_EQ(Docids(*d, *by_terms), Docids(*d, *by_values)) << value << " slot " << slot;
      }
    }
  }
  // The decomposition is really used where it can be (a term in the query, not a value range).
  QualifierValue year;
  year.text = "2023-01-01..2023-12-31";
  year.column = 1;
  EXPECT_NE(DateFilter(index::kCreatedSlot, "created", year, &db)->get_description().find("XD2023"),
            std::string::npos);
}

// RankingWeight is Xapian's BM25 with b = 0 (k1 = index::kRankingK1), only with a table for small
// wdfs: the same matches in the same order with the same weights (to rounding), for common and rare
// terms, wdfs beyond the table, repeated query words and phrases.
TEST(RankingWeightTest, SameAsXapiansBm25WithoutLengthNormalisation) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> repeat(0, 90), pick(0, 5);
  const std::vector<std::string> words = {"alpha", "beta", "gamma", "delta", "omega", "rare"};
  for (int i = 0; i < 400; ++i) {
    Xapian::Document doc;
    Xapian::termpos pos = 1;
    for (int w = 0; w < 6; ++w) {
      // "alpha" in almost every document (ratio below 2), "rare" in few.
      if (w == 5 && i % 23 != 0) continue;
      if (w == 0 || pick(rng) < 3) {
        const int n = 1 + repeat(rng) * (w == 1 ? 1 : (i % 5 == 0 ? 1 : 0));
        for (int k = 0; k < n; ++k) doc.add_posting(words[w], pos++);
      }
    }
    db.add_document(doc);
  }
  const std::vector<Xapian::Query> queries = {
      Xapian::Query("alpha"),
      Xapian::Query("beta"),
      Xapian::Query("rare"),
      Xapian::Query(Xapian::Query::OP_AND, Xapian::Query("alpha"), Xapian::Query("beta")),
      Xapian::Query(Xapian::Query::OP_OR, Xapian::Query("gamma"), Xapian::Query("rare")),
      Xapian::Query(Xapian::Query::OP_OR, Xapian::Query("beta", 2), Xapian::Query("delta")),
      Xapian::Query(Xapian::Query::OP_PHRASE, Xapian::Query("alpha"), Xapian::Query("beta")),
  };
  for (const Xapian::Query& query : queries) {
    const auto ranked = [&](const Xapian::Weight& weight) {
      Xapian::Enquire enquire(db);
      enquire.set_query(query);
      enquire.set_weighting_scheme(weight);
      const Xapian::MSet mset = enquire.get_mset(0, db.get_doccount());
      std::vector<std::pair<Xapian::docid, double>> out;
      for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
        out.emplace_back(*it, it.get_weight());
      }
      return out;
    };
    const auto expected = ranked(Xapian::BM25Weight(index::kRankingK1, 0, 1, 0, 0.5));
    const auto got = ranked(RankingWeight());
    ASSERT_FALSE(expected.empty()) << query.get_description();
    ASSERT_EQ(got.size(), expected.size()) << query.get_description();
    // RankingWeight rounds each part to a multiple of 2^-36 (sums independent of their order),
    // so weights agree closely, and documents whose weights differ by less may swap places.
    std::map<Xapian::docid, double> want(expected.begin(), expected.end());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(want.count(got[i].first), 1u) << query.get_description() << " rank " << i;
      EXPECT_NEAR(got[i].second, want[got[i].first], 4e-6) << query.get_description();
      if (i > 0) EXPECT_GE(got[i - 1].second, got[i].second);
      EXPECT_NEAR(got[i].second, expected[i].second, 8e-6) << query.get_description() << " rank " << i;
    }
  }
}

// A word in every document (`python` in every environment dump) has an idf near 0; its postings
// must still weigh more where it occurs more, and never exactly 0: were they all equal, the
// matcher would compare every one of them with the page's last (a million at 1M issues).
TEST(RankingWeightTest, AWordInEveryDocumentStillRanksByWdf) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  constexpr int kDocs = 300000;  // enough for the idf to vanish below 2^-20 per posting
  for (int i = 0; i < kDocs; ++i) {
    Xapian::Document doc;
    doc.add_term("python", 1 + i % 4);
    db.add_document(doc);
  }
  Xapian::Enquire enquire(db);
  enquire.set_query(Xapian::Query("python"));
  enquire.set_weighting_scheme(RankingWeight());
  const Xapian::MSet mset = enquire.get_mset(0, 8);
  ASSERT_EQ(mset.size(), 8u);
  for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
    EXPECT_EQ(*it % 4, 0u) << "docid " << *it << " (wdf " << (*it - 1) % 4 + 1 << ")";
    EXPECT_GT(it.get_weight(), 0);
  }
  // The weights of wdf 3 (document 3) and wdf 4 (document 4) differ.
  Xapian::Enquire all(db);
  all.set_query(Xapian::Query("python"));
  all.set_weighting_scheme(RankingWeight());
  all.set_docid_order(Xapian::Enquire::ASCENDING);
  const Xapian::MSet top = all.get_mset(0, kDocs);
  double w3 = -1, w4 = -1;
  for (Xapian::MSetIterator it = top.begin(); it != top.end(); ++it) {
    if (*it == 3) w3 = it.get_weight();
    if (*it == 4) w4 = it.get_weight();
  }
  EXPECT_GT(w3, 0);
  EXPECT_GT(w4, w3);
}

// The period terms of an on-disk index are cached per revision: a commit that brings a new
// month (an issue updated in a month no issue was updated in before) is seen by the next query.
TEST(DateRangeTermsTest, NewMonthsAreSeenAfterACommit) {
  char dir_template[] = "/tmp/issuescope-periods-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  Xapian::WritableDatabase writer(dir, Xapian::DB_CREATE_OR_OPEN);
  const Xapian::WritableDatabase source = Build(50, false);
  for (Xapian::docid id = 1; id <= 50; ++id) writer.add_document(source.get_document(id));
  writer.commit();
  QualifierValue v;
  v.text = "2030-05-01..2030-05-31";
  v.column = 1;
  Xapian::Database reader(dir);
  absl::StatusOr<Xapian::Query> before = DateFilter(index::kUpdatedSlot, "updated", v, &reader);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(Docids(reader, *before).empty());
  IssueSpec s;
  s.tracker = v1::TRACKER_GITHUB;
  s.owner = "org";
  s.name = "repo";
  s.number = 999;
  s.title = "late";
  s.body = "text";
  s.state = v1::ISSUE_STATE_OPEN;
  s.pr = false;
  s.author = "someone";
  s.created = "2021-01-01T00:00:00Z";
  s.updated = "2030-05-10T00:00:00Z";
  s.comment_count = 0;
  const Xapian::docid added = writer.add_document(index::BuildDocument(MakeIssue(s)));
  writer.commit();
  reader.reopen();
  absl::StatusOr<Xapian::Query> after = DateFilter(index::kUpdatedSlot, "updated", v, &reader);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(Docids(reader, *after), std::vector<Xapian::docid>{added});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::search
