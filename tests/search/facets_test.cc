// Facets, aggregation, exports and page cursors over a generated corpus of several hundred
// issues: every count must equal a brute-force count over the issues themselves, the work bound
// must be reported when it stops counting, and paging must neither repeat nor skip hits while
// documents are added between pages.
#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/index_facets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "search/facets.h"
#include "search/searcher.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;
using testing::IndexedDocument;

constexpr int kIssues = 600;

// Generated is one generated issue.
struct Generated {
  v1::IssueWithComments iwc;
  index::FacetValues facets;
  std::set<std::string> words;
};

// Generate makes `count` issues with seeded random attributes, numbered from `first`.
std::vector<Generated> Generate(int count, int first, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const std::vector<std::pair<v1::Tracker, std::string>> repos = {
      {v1::TRACKER_GITHUB, "pytorch/pytorch"}, {v1::TRACKER_GITHUB, "vllm-project/vllm"},
      {v1::TRACKER_GITHUB, "huggingface/peft"}, {v1::TRACKER_GITEE, "mindspore/mindspore"},
      {v1::TRACKER_GITLAB, "group/project"}};
  const std::vector<std::string> labels = {"bug", "Feature", "module: cuda", "triaged", "docs"};
  const std::vector<std::string> kinds = {"bug", "requirement", "question"};
  const std::vector<std::string> themes = {"memory", "performance", "api"};
  const std::vector<std::string> vocabulary = {"alpha", "beta", "gamma", "delta"};
  std::vector<Generated> out;
  for (int i = 0; i < count; ++i) {
    const auto& [tracker, repo] = repos[pick(repos.size())];
    testing::IssueSpec spec;
    spec.tracker = tracker;
    spec.owner = repo.substr(0, repo.find('/'));
    spec.name = repo.substr(repo.find('/') + 1);
    spec.number = first + i;
    spec.state = pick(3) == 0 ? v1::ISSUE_STATE_CLOSED : v1::ISSUE_STATE_OPEN;
    spec.pr = pick(5) == 0;
    spec.author = absl::StrCat("user", pick(8));
    const int year = 2019 + pick(6);
    spec.created = absl::StrCat(year, "-0", 1 + pick(9), "-1", pick(10), "T12:00:00Z");
    spec.updated = absl::StrCat(year, "-12-31T00:00:00Z");
    spec.comment_count = pick(4);
    std::set<std::string> words;
    std::string body;
    for (int w = 0; w < 3; ++w) {
      const std::string& word = vocabulary[pick(vocabulary.size())];
      words.insert(word);
      absl::StrAppend(&body, word, " ");
    }
    spec.title = absl::StrCat("issue ", spec.number);
    spec.body = body;
    for (const std::string& label : labels) {
      if (pick(3) == 0) spec.labels.push_back(label);
    }
    Generated g;
    g.iwc = testing::MakeIssue(spec);
    if (pick(4) != 0) {  // three in four are tagged
      v1::Tags* tags = g.iwc.mutable_issue()->mutable_tags();
      tags->set_taxonomy("llm-dl/1");
      const std::string kind = kinds[pick(kinds.size())];
      tags->set_kind(kind);
      tags->set_theme(absl::StrCat(kind, ".", themes[pick(themes.size())]));
      if (pick(3) == 0) tags->add_secondary_themes(absl::StrCat(kind, ".", themes[pick(3)]));
      if (pick(2) == 0) tags->add_subthemes(absl::StrCat(tags->theme(), ".sub", pick(2)));
      tags->set_llm(pick(2) == 0);
    }
    g.facets = index::IssueFacetValues(g.iwc);
    g.words = words;
    out.push_back(std::move(g));
  }
  return out;
}

void AddAll(Xapian::WritableDatabase& db, const std::vector<Generated>& issues,
            bool facet_slot = true) {
  for (const Generated& g : issues) {
    const std::string slug = RepoSlug(g.iwc.issue().repo());
    db.replace_document(index::IdTerm(slug, g.iwc.issue().number()),
                        facet_slot ? IndexedDocument(g.iwc) : index::BuildDocument(g.iwc));
  }
  db.commit();
}

const std::vector<std::string>& Values(const Generated& g, index::FacetField f) {
  return g.facets[static_cast<size_t>(f)];
}

bool Has(const Generated& g, index::FacetField f, const std::string& v) {
  const auto& values = Values(g, f);
  return std::find(values.begin(), values.end(), v) != values.end();
}

// QueryCase is a query and the predicate that says which issues it matches.
struct QueryCase {
  std::string query;
  std::function<bool(const Generated&)> matches;
};

std::vector<QueryCase> Queries() {
  using F = index::FacetField;
  return {
      {"", [](const Generated&) { return true; }},
      {"sort:updated", [](const Generated&) { return true; }},
      {"label:bug", [](const Generated& g) { return Has(g, F::kLabel, "bug"); }},
      {"is:closed repo:pytorch/pytorch",
       [](const Generated& g) {
         return Has(g, F::kState, "closed") && Has(g, F::kRepo, "github:pytorch/pytorch");
       }},
      {"-label:\"module: cuda\"",
       [](const Generated& g) { return !Has(g, F::kLabel, "module: cuda"); }},
      {"kind:bug OR llm:true",
       [](const Generated& g) { return Has(g, F::kKind, "bug") || Has(g, F::kLlm, "true"); }},
      {"theme:memory", [](const Generated& g) {
         for (const auto& t : Values(g, F::kTheme)) {
           if (t.size() > 7 && t.substr(t.size() - 7) == ".memory") return true;
         }
         return false;
       }},
      {"alpha", [](const Generated& g) { return g.words.count("alpha") > 0; }},
      {"alpha -beta tracker:github",
       [](const Generated& g) {
         return g.words.count("alpha") > 0 && g.words.count("beta") == 0 &&
                Has(g, F::kTracker, "github");
       }},
      {"no:label", [](const Generated& g) { return Values(g, F::kLabel).empty(); }},
  };
}

std::vector<std::string> AllFacetNames() {
  std::vector<std::string> names;
  for (const index::FacetInfo& info : index::FacetInfos()) names.push_back(info.name);
  return names;
}

// BruteFacet counts facet `f` over the issues matching `c`.
std::map<std::string, int64_t> BruteFacet(const std::vector<Generated>& issues,
                                          const QueryCase& c, index::FacetField f) {
  std::map<std::string, int64_t> counts;
  for (const Generated& g : issues) {
    if (!c.matches(g)) continue;
    for (const std::string& v : Values(g, f)) ++counts[v];
  }
  return counts;
}

std::map<std::string, int64_t> AsMap(const v1::Facet& facet) {
  std::map<std::string, int64_t> out;
  for (const v1::FacetValue& v : facet.values()) out[v.value()] = v.count();
  return out;
}

class FacetsTest : public ::testing::TestWithParam<bool> {};

// Exact facets agree with brute force, from the facet slot (true) or, for documents indexed
// before it existed, from their terms (false).
TEST_P(FacetsTest, FacetCountsEqualBruteForce) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  const std::vector<Generated> issues = Generate(kIssues, 1, 42);
  AddAll(db, issues, GetParam());
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  for (const QueryCase& c : Queries()) {
    v1::SearchRequest request;
    request.set_query(c.query);
    for (const std::string& name : AllFacetNames()) request.add_facets(name);
    request.set_facet_limit(kMaxFacetLimit);
    absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
    ASSERT_TRUE(response.ok()) << c.query << ": " << response.status();
    const int64_t expected_total = std::count_if(
        issues.begin(), issues.end(), [&](const Generated& g) { return c.matches(g); });
    EXPECT_EQ(response->total(), expected_total) << c.query;
    EXPECT_TRUE(response->facets_exact()) << c.query;
    EXPECT_EQ(response->facets_counted(), expected_total) << c.query;
    EXPECT_GE(response->took_us(), 0);
    ASSERT_EQ(response->facets_size(), static_cast<int>(index::kFacetFieldCount));
    for (const index::FacetInfo& info : index::FacetInfos()) {
      const v1::Facet& facet = response->facets(static_cast<int>(info.field));
      EXPECT_EQ(facet.name(), info.name);
      const std::map<std::string, int64_t> expected = BruteFacet(issues, c, info.field);
      EXPECT_EQ(AsMap(facet), expected) << c.query << " facet " << info.name;
      EXPECT_EQ(facet.distinct_values(), static_cast<int64_t>(expected.size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SlotOrTerms, FacetsTest, ::testing::Bool());

TEST(FacetLimitTest, MostFrequentFirstThenByValue) {
  Xapian::WritableDatabase db = testing::FixtureDatabase();
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  v1::SearchRequest request;
  request.set_query("is:open OR is:closed");  // not match-all: counted by the spy
  request.add_facets("label");
  request.add_facets("theme");
  request.set_facet_limit(2);
  absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->facets_size(), 2);
  const v1::Facet& labels = response->facets(0);
  EXPECT_EQ(labels.name(), "label");
  ASSERT_EQ(labels.values_size(), 2);
  EXPECT_EQ(labels.values(0).value(), "bug");
  EXPECT_EQ(labels.values(0).count(), 3);
  EXPECT_EQ(labels.values(1).value(), "enhancement");  // ties (1 each) by value
  EXPECT_EQ(labels.distinct_values(), 6);
  EXPECT_EQ(response->facets(1).values(0).value(), "bug.memory");
  EXPECT_EQ(response->facets(1).values(0).count(), 3);
}

TEST(FacetBoundTest, ReportsTheBoundWhenHit) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  const std::vector<Generated> issues = Generate(300, 1, 7);
  AddAll(db, issues);
  SearcherOptions options;
  options.facet_bound = 50;
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db, options);
  v1::SearchRequest request;
  request.set_query("is:open OR is:closed");
  request.add_facets("repo");
  absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->total(), 300);
  EXPECT_FALSE(response->facets_exact());
  EXPECT_EQ(response->facets_counted(), 50);
  int64_t sum = 0;
  for (const v1::FacetValue& v : response->facets(0).values()) sum += v.count();
  EXPECT_EQ(sum, 50);
  // A match-all query is exact from term frequencies whatever the bound.
  request.set_query("");
  response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(response->facets_exact());
  EXPECT_EQ(response->facets_counted(), 300);
  // A query within the bound is exact.
  request.set_query("repo:group/project is:closed");
  response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_LE(response->total(), 50);
  EXPECT_TRUE(response->facets_exact());
}

// An index filled repository by repository: the sample of a broad query's facets must still
// see every repository in proportion, not the first-indexed ones.
TEST(FacetBoundTest, SampleCoversEveryPartOfTheIndex) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  std::vector<Generated> issues = Generate(1200, 1, 11);
  std::stable_sort(issues.begin(), issues.end(), [](const Generated& a, const Generated& b) {
    return RepoSlug(a.iwc.issue().repo()) < RepoSlug(b.iwc.issue().repo());
  });
  AddAll(db, issues);
  std::map<std::string, int> per_repo;
  for (const Generated& g : issues) ++per_repo[Values(g, index::FacetField::kRepo)[0]];
  SearcherOptions options;
  options.facet_bound = 100;
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db, options);
  v1::SearchRequest request;
  request.set_query("is:open OR is:closed");
  request.add_facets("repo");
  absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->total(), 1200);
  EXPECT_FALSE(response->facets_exact());
  EXPECT_GE(response->facets_counted(), 100);
  EXPECT_LE(response->facets_counted(), 110);
  ASSERT_EQ(response->facets(0).values_size(), static_cast<int>(per_repo.size()));
  for (const v1::FacetValue& v : response->facets(0).values()) {
    const double expected = 100.0 * per_repo[v.value()] / 1200;
    EXPECT_NEAR(static_cast<double>(v.count()), expected, 8.0) << v.value();
  }
}

// The total is exact up to the count bound and Xapian's estimate beyond it; the hits are the
// same either way.
TEST(CountBoundTest, ExactUpToTheBoundEstimatedBeyond) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  const std::vector<Generated> issues = Generate(kIssues, 1, 5);
  AddAll(db, issues);
  int64_t expected = 0;
  for (const Generated& g : issues) expected += g.words.count("alpha") > 0 ? 1 : 0;
  ASSERT_GT(expected, 200);
  auto search = [&](uint64_t bound, const std::string& query) {
    SearcherOptions options;
    options.count_bound = bound;
    v1::SearchRequest request;
    request.set_query(query);
    request.set_page_size(10);
    absl::StatusOr<v1::SearchResponse> response =
        Searcher::ForDatabase(db, options)->Search(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::SearchResponse();
  };
  for (const std::string query : {"issue alpha", "alpha sort:created"}) {
    const v1::SearchResponse exact = search(0, query);
    EXPECT_TRUE(exact.total_exact()) << query;
    EXPECT_EQ(exact.total(), expected) << query;
    const v1::SearchResponse roomy = search(10000, query);
    EXPECT_TRUE(roomy.total_exact()) << query;
    EXPECT_EQ(roomy.total(), expected) << query;
    const v1::SearchResponse bounded = search(50, query);
    if (!bounded.total_exact()) {
      EXPECT_GE(bounded.total(), 50) << query;
      EXPECT_LE(bounded.total(), kIssues) << query;
    } else {
      EXPECT_EQ(bounded.total(), expected) << query;
    }
    ASSERT_EQ(bounded.hits_size(), exact.hits_size()) << query;
    for (int i = 0; i < exact.hits_size(); ++i) {
      EXPECT_EQ(bounded.hits(i).number(), exact.hits(i).number()) << query << " hit " << i;
    }
  }
  // Words over several text fields (a disjunction of posting lists) are counted apart from the
  // ranking; that count stops at the bound.
  // ranking; that count stops at the bound. (Not with a word in every issue: then Xapian knows
  // the exact number from term frequencies.)
  int64_t either = 0;
  for (const Generated& g : issues) {
    either += g.words.count("alpha") > 0 || g.words.count("beta") > 0 ? 1 : 0;
  }
  const v1::SearchResponse broad = search(50, "alpha OR beta");
  EXPECT_FALSE(broad.total_exact());
  EXPECT_GE(broad.total(), 50);
  EXPECT_LE(broad.total(), kIssues);
  const v1::SearchResponse broad_exact = search(0, "alpha OR beta");
  EXPECT_TRUE(broad_exact.total_exact());
  EXPECT_EQ(broad_exact.total(), either);
}

TEST(FacetRequestTest, RejectsBadFacetsAndLimits) {
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(testing::FixtureDatabase());
  struct Case {
    std::vector<std::string> facets;
    int limit;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{"stars"}, 0, "unknown facet 'stars'; known: repo, label, state, type, kind, theme"},
      {{"repo", "repo"}, 0, "facet 'repo' is given twice"},
      {{"repo"}, -1, "facet_limit -1 is outside 0..1000"},
      {{"repo"}, 1001, "facet_limit 1001"},
  };
  for (const Case& c : cases) {
    v1::SearchRequest request;
    for (const auto& f : c.facets) request.add_facets(f);
    request.set_facet_limit(c.limit);
    absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
    ASSERT_FALSE(response.ok()) << c.fragment;
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(response.status().message()), HasSubstr(c.fragment));
  }
}

TEST(AggregateTest, CountsEqualBruteForce) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  const std::vector<Generated> issues = Generate(kIssues, 1, 99);
  AddAll(db, issues);
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  const std::vector<std::vector<std::string>> dimension_sets = {
      {"kind"}, {"kind", "theme"}, {"kind", "theme", "repo"}, {"label", "year"},
      {"llm", "tracker", "subtheme"}, {"state", "type", "author"}};
  for (const QueryCase& c : Queries()) {
    for (const std::vector<std::string>& dims : dimension_sets) {
      v1::AggregateRequest request;
      request.set_query(c.query);
      std::vector<index::FacetField> fields;
      for (const std::string& d : dims) {
        request.add_dimensions(d);
        fields.push_back(index::FindFacet(d)->field);
      }
      std::map<std::vector<std::string>, int64_t> expected;
      int64_t total = 0;
      for (const Generated& g : issues) {
        if (!c.matches(g)) continue;
        ++total;
        std::vector<std::vector<std::string>> keys = {{}};
        for (index::FacetField f : fields) {
          std::vector<std::string> options = Values(g, f);
          if (options.empty()) options = {""};
          std::vector<std::vector<std::string>> next;
          for (const auto& k : keys) {
            for (const auto& o : options) {
              next.push_back(k);
              next.back().push_back(o);
            }
          }
          keys = next;
        }
        for (const auto& k : keys) ++expected[k];
      }
      absl::StatusOr<v1::AggregateResponse> response = searcher->Aggregate(request);
      ASSERT_TRUE(response.ok()) << c.query << ": " << response.status();
      EXPECT_EQ(response->total(), total) << c.query;
      EXPECT_EQ(std::vector<std::string>(response->dimensions().begin(),
                                         response->dimensions().end()),
                dims);
      std::map<std::vector<std::string>, int64_t> got;
      std::vector<std::vector<std::string>> order;
      for (const v1::AggregateRow& row : response->rows()) {
        std::vector<std::string> key(row.values().begin(), row.values().end());
        got[key] = row.count();
        order.push_back(key);
      }
      EXPECT_EQ(got, expected) << c.query;
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << c.query;
    }
  }
}

TEST(AggregateTest, RejectsBadDimensions) {
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(testing::FixtureDatabase());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "takes 1 to 3 dimensions, not 0"},
      {{"kind", "theme", "repo", "year"}, "not 4"},
      {{"stars"}, "unknown dimension 'stars'"},
      {{"kind", "kind"}, "dimension 'kind' is given twice"},
  };
  for (const auto& [dims, fragment] : cases) {
    v1::AggregateRequest request;
    for (const auto& d : dims) request.add_dimensions(d);
    absl::StatusOr<v1::AggregateResponse> response = searcher->Aggregate(request);
    ASSERT_FALSE(response.ok()) << fragment;
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(response.status().message()), HasSubstr(fragment));
  }
  v1::AggregateRequest bad_query;
  bad_query.set_query("foo:bar");
  bad_query.add_dimensions("kind");
  EXPECT_EQ(searcher->Aggregate(bad_query).status().code(), absl::StatusCode::kInvalidArgument);
}

std::vector<std::string> Keys(const std::vector<v1::SearchHit>& hits) {
  std::vector<std::string> keys;
  for (const v1::SearchHit& h : hits) keys.push_back(absl::StrCat(h.repo_slug(), "#", h.number()));
  return keys;
}

TEST(ExportTest, StreamsEveryHitInOrderInChunks) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  AddAll(db, Generate(kIssues, 1, 5));
  SearcherOptions options;
  options.export_chunk = 37;
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db, options);
  for (const char* query : {"", "alpha", "label:bug sort:comments-asc", "sort:updated"}) {
    v1::SearchRequest request;
    request.set_query(query);
    request.set_page_size(kMaxPageSize);
    absl::StatusOr<v1::SearchResponse> all = searcher->Search(request);
    ASSERT_TRUE(all.ok()) << all.status();
    std::vector<v1::SearchHit> expected(all->hits().begin(), all->hits().end());
    v1::ExportRequest export_request;
    export_request.set_query(query);
    std::vector<v1::SearchHit> got;
    ASSERT_TRUE(searcher
                    ->Export(export_request,
                             [&](const v1::SearchHit& hit) {
                               got.push_back(hit);
                               return absl::OkStatus();
                             })
                    .ok());
    EXPECT_EQ(Keys(got), Keys(expected)) << query;
    // limit, and a sink error stops the export.
    export_request.set_limit(50);
    got.clear();
    int calls = 0;
    absl::Status stopped = searcher->Export(export_request, [&](const v1::SearchHit&) {
      return ++calls == 10 ? absl::CancelledError("gone") : absl::OkStatus();
    });
    EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(calls, 10);
  }
}

// Pages of a listing neither repeat nor skip the hits that existed when paging started while
// new documents (sorting anywhere, including before the cursor) are added between pages.
TEST(PageCursorTest, StableWhileTheIndexGrows) {
  for (const char* query : {"", "sort:created-asc", "label:bug sort:comments",
                                   "is:open sort:updated-asc"}) {
    Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
    AddAll(db, Generate(300, 1, 11));
    std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
    v1::SearchRequest request;
    request.set_query(query);
    request.set_page_size(kMaxPageSize);
    absl::StatusOr<v1::SearchResponse> before = searcher->Search(request);
    ASSERT_TRUE(before.ok()) << before.status();
    std::set<std::string> expected;
    for (const std::string& key : Keys({before->hits().begin(), before->hits().end()})) {
      expected.insert(key);
    }

    std::vector<std::string> seen;
    request.set_page_size(7);
    int added = 0;
    for (int page = 0; page < 200; ++page) {
      absl::StatusOr<v1::SearchResponse> response = searcher->Search(request);
      ASSERT_TRUE(response.ok()) << query << ": " << response.status();
      for (const std::string& key : Keys({response->hits().begin(), response->hits().end()})) {
        seen.push_back(key);
      }
      if (response->next_page_token().empty()) break;
      request.set_page_token(response->next_page_token());
      // Add documents between pages; their numbers are new.
      AddAll(db, Generate(3, 100000 + 1000 * added++, 1000 + page));
    }
    std::set<std::string> unique(seen.begin(), seen.end());
    EXPECT_EQ(unique.size(), seen.size()) << query << ": a hit was repeated";
    for (const std::string& key : expected) {
      EXPECT_TRUE(unique.count(key)) << query << ": " << key << " was skipped";
    }
  }
}

// For Xapian's remote protocol: a counter rebuilt from serialise() counts the same facets with
// the same bound; counts sent with serialise_results() add up with merge_results(); malformed
// bytes are a SerialisationError naming what was wrong.
TEST(FacetCounterRemoteTest, SerialisesItselfAndItsCounts) {
  Xapian::WritableDatabase db = testing::FixtureDatabase();
  const FacetCounter prototype({index::FacetField::kRepo, index::FacetField::kLabel}, 3);
  std::unique_ptr<FacetCounter> a(prototype.unserialise(prototype.serialise(), Xapian::Registry()));
  std::unique_ptr<FacetCounter> b(prototype.clone());
  for (Xapian::docid id = 1; id <= db.get_lastdocid(); ++id) {
    (id % 2 == 0 ? *a : *b)(db.get_document(id), 0);
  }
  FacetCounter merged({index::FacetField::kRepo, index::FacetField::kLabel}, 3);
  merged.merge_results(a->serialise_results());
  merged.merge_results(b->serialise_results());
  FacetCounter added({index::FacetField::kRepo, index::FacetField::kLabel}, 3);
  added.Add(*a);
  added.Add(*b);
  EXPECT_EQ(merged.seen(), db.get_doccount());
  EXPECT_EQ(merged.counted(), a->counted() + b->counted());
  EXPECT_LE(a->counted(), 3u);  // the bound came through serialise()
  EXPECT_EQ(merged.counts(), added.counts());
  EXPECT_FALSE(merged.counts().at(index::FacetField::kRepo).empty());

  const std::string results = a->serialise_results();
  for (const std::string& bad : {results.substr(0, results.size() - 1), results + "x",
                                 std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")}) {
    FacetCounter target({index::FacetField::kRepo, index::FacetField::kLabel}, 3);
    EXPECT_THROW(target.merge_results(bad), Xapian::SerialisationError);
  }
  EXPECT_THROW(prototype.unserialise(std::string("\x03\x01\x63"), Xapian::Registry()),
               Xapian::SerialisationError);  // facet 99 does not exist
  FacetCounter one_field({index::FacetField::kRepo}, 3);
  EXPECT_THROW(one_field.merge_results(results), Xapian::SerialisationError);
}

TEST(AggregateCounterRemoteTest, SerialisesItselfAndItsRows) {
  Xapian::WritableDatabase db = testing::FixtureDatabase();
  const AggregateCounter prototype({index::FacetField::kState, index::FacetField::kRepo});
  std::unique_ptr<AggregateCounter> a(
      prototype.unserialise(prototype.serialise(), Xapian::Registry()));
  std::unique_ptr<AggregateCounter> b(prototype.clone());
  AggregateCounter whole({index::FacetField::kState, index::FacetField::kRepo});
  for (Xapian::docid id = 1; id <= db.get_lastdocid(); ++id) {
    (id % 2 == 0 ? *a : *b)(db.get_document(id), 0);
    whole(db.get_document(id), 0);
  }
  AggregateCounter merged({index::FacetField::kState, index::FacetField::kRepo});
  merged.merge_results(a->serialise_results());
  merged.merge_results(b->serialise_results());
  v1::AggregateResponse got, want;
  merged.Fill(&got);
  whole.Fill(&want);
  EXPECT_EQ(got.DebugString(), want.DebugString());
  EXPECT_GT(got.rows_size(), 1);
  const std::string rows = a->serialise_results();
  AggregateCounter target({index::FacetField::kState, index::FacetField::kRepo});
  EXPECT_THROW(target.merge_results(rows.substr(0, rows.size() - 1)), Xapian::SerialisationError);
}

}  // namespace
}  // namespace issuescope::search
