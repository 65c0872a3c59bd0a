// The query language end to end over the fixture corpus: each valid query must match exactly
// the expected issues; each invalid one must fail with INVALID_ARGUMENT naming the column and
// what was expected.
#include "search/query_parser.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "search/query_lexer.h"
#include "search/searcher.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;
using testing::FixtureDatabase;
using testing::Numbers;

std::set<int64_t> Match(Searcher& searcher, const std::string& query) {
  v1::SearchRequest request;
  request.set_query(query);
  request.set_page_size(kMaxPageSize);
  absl::StatusOr<v1::SearchResponse> response = searcher.Search(request);
  EXPECT_TRUE(response.ok()) << query << ": " << response.status();
  if (!response.ok()) return {};
  EXPECT_EQ(response->total(), response->hits_size()) << query;
  std::vector<int64_t> numbers = Numbers(*response);
  return std::set<int64_t>(numbers.begin(), numbers.end());
}

struct MatchCase {
  std::string query;
  std::set<int64_t> expected;
};

TEST(QueryLanguageTest, MatchesExpectedIssues) {
  const std::set<int64_t> all = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<MatchCase> cases = {
      // Everything.
      {"", all},
      {"   ", all},
      // Words, stemming, phrases, wildcards, CJK, comments.
      {"memory", {1, 2}},
      {"MEMORY", {1, 2}},
      {"illegal memory access", {1, 2}},
      {"\"illegal memory access\"", {1}},
      {"crashes", {3, 5}},
      // Punctuation among words constrains nothing; a ')' with no group open is part of a word.
      {"crashes ]", {3, 5}},
      {"crashes)", {3, 5}},
      {"leaking", {2}},
      {"quant*", {3}},
      {"tensors freed", {2}},
      {"内存泄漏", {6}},
      {"泄漏", {6}},
      {"显存", {6}},
      {"xla", {5}},
      {"tf.function", {5}},
      {"a100", {1}},
      {"nonexistentword", {}},
      // repo:, org:
      {"repo:pytorch/pytorch", {1, 2, 3}},
      {"repo:PyTorch/PyTorch", {1, 2, 3}},
      {"repo:github:pytorch/vision", {4}},
      {"repo:gitee:mindspore/mindspore", {6}},
      {"repo:gitlab:mindspore/mindspore", {}},
      {"repo:pytorch/vision,tensorflow/tensorflow", {4, 5}},
      {"org:pytorch", {1, 2, 3, 4}},
      // label: quoted, comma = OR, repeat = AND.
      {"label:bug", {1, 2, 6}},
      {"label:BUG", {1, 2, 6}},
      {"label:\"module: cuda\"", {1}},
      {"label:\"type:bug\"", {5}},
      {"label:bug,enhancement", {1, 2, 4, 6}},
      {"label:bug label:\"module: cuda\"", {1}},
      {"label:nonexistent", {}},
      // is:, author:, assignee:, tracker:
      {"is:open", {1, 3, 4, 6, 7}},
      {"is:closed", {2, 5}},
      {"is:pr", {3}},
      {"is:issue", {1, 2, 4, 5, 6, 7}},
      {"is:open is:issue", {1, 4, 6, 7}},
      {"author:alice", {1, 4}},
      {"author:ALICE", {1, 4}},
      {"assignee:alice", {3}},
      {"assignee:bob", {1}},
      {"tracker:gitee", {6}},
      {"tracker:gitcode", {6}},
      {"tracker:gitlab", {7}},
      {"tracker:github", {1, 2, 3, 4, 5}},
      // created:/updated: ranges, days and date-times.
      {"created:>2024-01-10", {2, 3, 6}},
      {"created:>=2024-01-10", {1, 2, 3, 5, 6}},
      {"created:<2024-01-01", {4, 7}},
      {"created:<=2023-12-31", {4, 7}},
      {"created:2024-01-10", {1, 5}},
      {"created:2024-01-01..2024-02-01", {1, 2, 5}},
      {"created:*..2023-12-31", {4, 7}},
      {"created:2024-01-10T09:00:00Z..*", {1, 2, 3, 6}},
      {"created:>2024-01-10T08:00:00Z", {1, 2, 3, 6}},
      {"created:>=2024-01-10T08:00:00Z", {1, 2, 3, 5, 6}},
      {"created:2024-01-10T18:00:00+08:00", {1}},
      {"updated:>=2024-02-01", {2, 3, 6}},
      // Negation.
      {"-label:bug", {3, 4, 5, 7}},
      {"NOT label:bug", {3, 4, 5, 7}},
      {"NOT NOT label:bug", {1, 2, 6}},
      {"memory -leak", {1}},
      {"matmul -\"illegal memory access\"", {}},
      {"repo:pytorch/pytorch -memory", {3}},
      {"-(label:bug OR is:closed)", {3, 4, 7}},
      // OR, AND and parentheses.
      {"crash OR segfault", {3, 5}},
      {"(memory OR segfault) is:closed", {2, 5}},
      {"memory AND leak", {2}},
      {"memory OR label:enhancement", {1, 2, 4}},
      {"((memory))", {1, 2}},
      // no:label, kind:, theme: and subtheme: (full ids and short forms), llm:.
      {"no:label", {7}},
      {"-no:label", {1, 2, 3, 4, 5, 6}},
      {"kind:bug", {1, 2, 3, 5, 6}},
      {"kind:BUG", {1, 2, 3, 5, 6}},
      {"kind:requirement", {4}},
      {"kind:bug,requirement", {1, 2, 3, 4, 5, 6}},
      {"kind:question", {}},
      {"theme:bug.memory", {1, 2, 6}},
      {"theme:memory", {1, 2, 6}},
      {"theme:performance", {2}},
      {"theme:bug.performance", {2}},
      {"theme:api,compiler", {4, 5}},
      {"theme:bug.perf", {}},
      {"theme:nothing", {}},
      {"subtheme:leak", {2, 6}},
      {"subtheme:bug.memory.leak", {2, 6}},
      {"subtheme:illegal-access", {1}},
      {"llm:true", {2, 3, 6}},
      {"llm:false", {1, 4, 5}},
      {"llm:TRUE", {2, 3, 6}},
      {"-llm:true", {1, 4, 5, 7}},
      {"kind:bug -theme:memory", {3, 5}},
      // closed:, comments:, reactions:.
      {"closed:>=2024-02-01", {2}},
      {"closed:2024-01-01..2024-12-31", {2, 5}},
      {"closed:<2024-02-01", {5}},
      {"closed:2024-01-30", {5}},
      {"comments:>2", {3, 5}},
      {"comments:>=2", {1, 3, 5}},
      {"comments:0", {2, 6, 7}},
      {"comments:=1", {4}},
      {"comments:<1", {2, 6, 7}},
      {"comments:<=1", {2, 4, 6, 7}},
      {"comments:1..3", {1, 4, 5}},
      {"comments:*..1", {2, 4, 6, 7}},
      {"comments:3..*", {3, 5}},
      {"comments:<0", {}},
      {"reactions:>=5", {1, 3}},
      {"reactions:>3", {1, 3}},
      {"reactions:0", {2, 6, 7}},
      // in: scopes the free text of its AND-group.
      {"memory in:title", {1}},
      {"in:title memory", {1}},
      {"memory in:body", {1, 2}},
      {"h100 in:comments", {1}},
      {"h100 in:body", {}},
      {"xla in:title,body", {}},
      {"xla in:comment", {5}},
      {"memory in:title OR segfault", {1, 5}},
      {"(leak OR segfault) in:title", {2, 5}},
      {"(leak OR (segfault in:body)) in:title", {2, 5}},
      {"\"illegal memory\" in:body", {1}},
      {"in:title -memory", {2, 3, 4, 5, 6, 7}},
      {"memory in:title,comments", {1}},
      // sort: does not filter.
      {"crash sort:created-asc", {3, 5}},
      {"sort:comments", all},
  };
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(FixtureDatabase());
  for (const MatchCase& c : cases) {
    EXPECT_EQ(Match(*searcher, c.query), c.expected) << "query: " << c.query;
  }
}

struct ErrorCase {
  std::string query;
  std::vector<std::string> fragments;  // all must appear in the message
};

TEST(QueryLanguageTest, RejectsMalformedQueriesNamingTheColumn) {
  const std::vector<ErrorCase> cases = {
      {"foo:bar", {"unknown qualifier 'foo' at column 1", "known: repo, org, label"}},
      {"crash foo:bar", {"unknown qualifier 'foo' at column 7"}},
      {"内存 foo:x", {"unknown qualifier 'foo' at column 4"}},
      {"label:", {"empty value for qualifier 'label:' at column 1"}},
      {"label:\"\"", {"empty value"}},
      {"label:bug,", {"empty value"}},
      {"(crash", {"unbalanced parenthesis", "'(' at column 1 is not closed"}},
      {"(", {"'(' at column 1 is not closed"}},
      {"crash )", {"unbalanced parenthesis", "')' at column 7 has no matching '('"}},
      {"(crash))", {"')' at column 8"}},
      {"()", {"empty parentheses", "column 2"}},
      {"\"crash", {"unbalanced quote", "column 1"}},
      {"crash label:\"bug", {"unbalanced quote", "column 13"}},
      {"created:2024-13-01", {"bad date '2024-13-01'", "column 9", "YYYY-MM-DD"}},
      {"created:2024-02-30", {"bad date '2024-02-30'"}},
      {"created:>yesterday", {"bad date 'yesterday'", "column 10"}},
      {"created:2024-01-01..tomorrow", {"bad date 'tomorrow'", "column 21"}},
      {"created:*..*", {"at most one side"}},
      {"created:2024-01-01,2024-02-01", {"takes one value"}},
      {"is:merged", {"bad is: value 'merged' at column 4", "open, closed, issue, pr, deleted or transferred"}},
      {"tracker:svn", {"bad tracker: value 'svn' at column 9"}},
      {"repo:pytorch", {"bad repo: value 'pytorch'", "OWNER/NAME"}},
      {"sort:stars", {"bad sort: value 'stars'"}},
      {"sort:created sort:updated", {"second 'sort:' at column 14"}},
      {"-sort:created", {"nothing to negate"}},
      {"crash OR", {"dangling operator 'OR' at column 7", "expected a term after it"}},
      {"OR crash", {"dangling operator 'OR' at column 1", "expected a term before it"}},
      {"crash AND", {"dangling operator 'AND' at column 7"}},
      {"AND crash", {"dangling operator 'AND' at column 1"}},
      {"NOT", {"dangling operator 'NOT' at column 1"}},
      {"crash NOT", {"dangling operator 'NOT' at column 7"}},
      {"crash OR OR hang", {"dangling operator 'OR' at column 7"}},
      {"(crash OR)", {"dangling operator 'OR' at column 8"}},
      {"- crash", {"dangling operator '-' at column 1"}},
      {"crash -", {"dangling operator '-' at column 7"}},
      {"!!!", {"nothing searchable in '!!!' at column 1"}},
      {"foo:bar", {"known: repo, org, label, is, author, assignee, tracker, no, kind, theme, "
                   "subtheme, llm, in, created, updated, closed, comments, reactions, sort"}},
      {"no:assignee", {"bad no: value 'assignee' at column 4", "expected label"}},
      {"llm:maybe", {"bad llm: value 'maybe' at column 5", "true or false"}},
      {"in:header crash", {"bad in: value 'header' at column 4", "title, body, comments, code or logs"}},
      {"in:title", {"'in:' at column 1 scopes no free text"}},
      {"label:bug in:title", {"'in:' at column 11 scopes no free text"}},
      {"crash OR in:title", {"'in:' at column 10 scopes no free text"}},
      {"-in:title crash", {"nothing to negate", "in: are not filters"}},
      {"comments:>many", {"bad number 'many' for 'comments:' at column 11", "non-negative"}},
      {"comments:-1", {"bad number '-1'"}},
      {"comments:1.5", {"bad number"}},
      {"reactions:1,2", {"qualifier 'reactions:' at column 1 takes one value"}},
      {"comments:*..*", {"at most one side"}},
      {"comments:1..x", {"bad number 'x'", "column 13"}},
      {"closed:2024-13-01", {"bad date '2024-13-01' for 'closed:' at column 8"}},
      {std::string(kMaxQueryBytes + 1, 'a'), {"at most 4096 bytes"}},
  };
  Xapian::WritableDatabase db = FixtureDatabase();
  QueryParser parser(db);
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db);
  for (const ErrorCase& c : cases) {
    absl::StatusOr<ParsedQuery> parsed = parser.Parse(c.query);
    ASSERT_FALSE(parsed.ok()) << "query: " << c.query;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.query;
    for (const std::string& fragment : c.fragments) {
      EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(fragment))
          << "query: " << c.query;
    }
    v1::SearchRequest request;
    request.set_query(c.query);
    EXPECT_EQ(searcher->Search(request).status().code(), absl::StatusCode::kInvalidArgument)
        << c.query;
  }
}

TEST(QueryLanguageTest, ReportsTextAndSortOrder) {
  Xapian::WritableDatabase db = FixtureDatabase();
  QueryParser parser(db);
  struct Case {
    std::string query;
    bool has_text;
    SortField field;
    bool ascending;
    bool is_explicit;
  };
  const std::vector<Case> cases = {
      {"", false, SortField::kRelevance, false, false},
      {"repo:o/r is:open", false, SortField::kRelevance, false, false},
      {"-crash", false, SortField::kRelevance, false, false},
      {"crash", true, SortField::kRelevance, false, false},
      {"crash OR label:bug", true, SortField::kRelevance, false, false},
      {"sort:created", false, SortField::kCreated, false, true},
      {"crash sort:updated-asc", true, SortField::kUpdated, true, true},
      {"sort:comments-desc", false, SortField::kComments, false, true},
      {"crash sort:relevance", true, SortField::kRelevance, false, true},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ParsedQuery> parsed = parser.Parse(c.query);
    ASSERT_TRUE(parsed.ok()) << c.query << ": " << parsed.status();
    EXPECT_EQ(parsed->has_text, c.has_text) << c.query;
    EXPECT_EQ(parsed->sort.field, c.field) << c.query;
    EXPECT_EQ(parsed->sort.ascending, c.ascending) << c.query;
    EXPECT_EQ(parsed->sort.is_explicit, c.is_explicit) << c.query;
    EXPECT_FALSE(parsed->query.empty()) << c.query;
  }
}

// The words a ranked query re-ranks by proximity (search/proximity.h): unquoted, in order,
// identifiers as their parts; excluded words and quoted phrases left out; none when sorted.
TEST(QueryLanguageTest, ProximityTermsAreTheRankedWordsNotTheExcludedOnes) {
  Xapian::WritableDatabase db = FixtureDatabase();
  QueryParser parser(db);
  struct Case {
    std::string query;
    std::vector<std::string> terms;
  };
  const std::vector<Case> cases = {
      {"kv cache", {"kv", "cache"}},
      {"kv cache -foo", {"kv", "cache"}},
      {"kv -foo cache", {"kv", "cache"}},
      {"kv NOT foo cache label:bug", {"kv", "cache"}},
      {"pin_memory() slow", {"pin", "memory", "slow"}},
      {"\"out of memory\" crash", {}},
      {"crash", {}},
      {"kv cache sort:created", {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ParsedQuery> parsed = parser.Parse(c.query);
    ASSERT_TRUE(parsed.ok()) << c.query << ": " << parsed.status();
    EXPECT_EQ(parsed->proximity_terms, c.terms) << c.query;
  }
}

TEST(QueryLexerTest, SplitsTokensWithColumns) {
  absl::StatusOr<std::vector<Token>> tokens =
      Lex("(crash OR -label:\"module: cuda\",bug) \"a b\" std::vector http://x");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  std::vector<std::pair<TokenKind, int>> kinds;
  for (const Token& t : *tokens) kinds.emplace_back(t.kind, t.column);
  const std::vector<std::pair<TokenKind, int>> expected = {
      {TokenKind::kLParen, 1}, {TokenKind::kWord, 2},      {TokenKind::kOr, 8},
      {TokenKind::kMinus, 11}, {TokenKind::kQualifier, 12}, {TokenKind::kRParen, 36},
      {TokenKind::kPhrase, 38}, {TokenKind::kWord, 44},     {TokenKind::kWord, 56}};
  EXPECT_EQ(kinds, expected);
  const Token& label = (*tokens)[4];
  EXPECT_EQ(label.text, "label");
  ASSERT_EQ(label.values.size(), 2u);
  EXPECT_EQ(label.values[0].text, "module: cuda");
  EXPECT_EQ(label.values[0].column, 18);
  EXPECT_EQ(label.values[1].text, "bug");
  EXPECT_EQ(label.values[1].column, 33);
  EXPECT_EQ((*tokens)[6].text, "a b");
  EXPECT_EQ((*tokens)[7].text, "std::vector");
  EXPECT_EQ((*tokens)[8].text, "http://x");
}

// Text pasted from titles and code: lower-case and/or/not are words, parentheses inside a word
// belong to it, and a word's own ')' does not close a group.
TEST(QueryLexerTest, PastedTextStaysText) {
  struct Case {
    std::string query;
    std::vector<std::pair<TokenKind, std::string>> tokens;
  };
  const std::vector<Case> cases = {
      {"layer does not support", {{TokenKind::kWord, "layer"}, {TokenKind::kWord, "does"},
                                  {TokenKind::kWord, "not"}, {TokenKind::kWord, "support"}}},
      {"save and load or not", {{TokenKind::kWord, "save"}, {TokenKind::kWord, "and"},
                                {TokenKind::kWord, "load"}, {TokenKind::kWord, "or"},
                                {TokenKind::kWord, "not"}}},
      {"a AND b OR NOT c", {{TokenKind::kWord, "a"}, {TokenKind::kAnd, "AND"},
                            {TokenKind::kWord, "b"}, {TokenKind::kOr, "OR"},
                            {TokenKind::kNot, "NOT"}, {TokenKind::kWord, "c"}}},
      {"keras model.evaluate()", {{TokenKind::kWord, "keras"},
                                  {TokenKind::kWord, "model.evaluate()"}}},
      {"slow(caused by", {{TokenKind::kWord, "slow(caused"}, {TokenKind::kWord, "by"}}},
      {"on_batch_end(...)", {{TokenKind::kWord, "on_batch_end(...)"}}},
      {"(f(x) OR g)", {{TokenKind::kLParen, "("}, {TokenKind::kWord, "f(x)"},
                       {TokenKind::kOr, "OR"}, {TokenKind::kWord, "g"},
                       {TokenKind::kRParen, ")"}}},
      // With no group open, a ')' is part of its word.
      {"below):google colab", {{TokenKind::kWord, "below):google"}, {TokenKind::kWord, "colab"}}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<Token>> tokens = Lex(c.query);
    ASSERT_TRUE(tokens.ok()) << c.query << ": " << tokens.status();
    std::vector<std::pair<TokenKind, std::string>> got;
    for (const Token& t : *tokens) got.emplace_back(t.kind, t.text);
    EXPECT_EQ(got, c.tokens) << c.query;
  }
}

}  // namespace
}  // namespace issuescope::search
