// Bounds on the work of one query (issue 16, defect 11): the words all wildcards of a query
// expand to are limited per query (kMaxQueryWildcardTerms), so hundreds of one-letter wildcards
// are refused at once instead of keeping a core busy for minutes; and a search or aggregation
// stops with the status of its StopCheck (the gRPC deadline or cancellation) between passes.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/index_text.h"
#include "search/text_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "search/query_parser.h"
#include "search/search_service.h"
#include "search/searcher.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;

// WideVocabularyDatabase holds 300 issues whose text draws on 80 words per initial letter
// (seeded), so every one-letter wildcard expands to dozens of words, as on real issues.
Xapian::WritableDatabase WideVocabularyDatabase() {
  std::mt19937 rng(16);
  std::vector<std::string> vocabulary;
  for (char initial = 'a'; initial <= 'z'; ++initial) {
    for (int i = 0; i < 80; ++i) {
      std::string word(1, initial);
      const int length = 3 + static_cast<int>(rng() % 5);
      while (static_cast<int>(word.size()) < length) word.push_back("aeioubcdklmnrst"[rng() % 15]);
      vocabulary.push_back(word);
    }
  }
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  for (int64_t number = 1; number <= 300; ++number) {
    std::vector<std::string> words;
    for (int i = 0; i < 120; ++i) words.push_back(vocabulary[rng() % vocabulary.size()]);
    testing::IssueSpec spec{v1::TRACKER_GITHUB, "octo", "wide", number,
                            absl::StrCat("issue ", number), absl::StrJoin(words, " "), {},
                            v1::ISSUE_STATE_OPEN, false, "alice", {},
                            "2024-01-10T10:00:00Z", "2024-01-12T00:00:00Z", 0, {}};
    v1::IssueWithComments iwc = testing::MakeIssue(spec);
    db.replace_document(index::IdTerm("github:octo/wide", number),
                        testing::IndexedDocument(iwc));
  }
  db.commit();
  return db;
}

// Wildcards returns `count` one-letter wildcards (a* … z*, then again), joined by `op`.
std::string Wildcards(int count, const std::string& op) {
  std::vector<std::string> atoms;
  for (int i = 0; i < count; ++i) atoms.push_back(absl::StrCat(std::string(1, 'a' + i % 26), "*"));
  return absl::StrJoin(atoms, op);
}

class QueryLimitsTest : public ::testing::Test {
 protected:
  Xapian::WritableDatabase db_ = WideVocabularyDatabase();
};

TEST_F(QueryLimitsTest, WildcardExpansionIsCountedUpToTheLimit) {
  QueryParser parser(db_);
  auto one = parser.Parse("a*");
  ASSERT_TRUE(one.ok()) << one.status();
  const Xapian::termcount words = search::WildcardExpansion(one->query, db_, 100000);
  EXPECT_GE(words, 40u);
  EXPECT_LE(words, search::kMaxWildcardTerms);
  // Counting stops just past the limit.
  EXPECT_EQ(search::WildcardExpansion(one->query, db_, 5), 6u);
}

TEST_F(QueryLimitsTest, TooManyWildcardWordsAreRefusedNamingTheLimit) {
  QueryParser parser(db_);
  struct Case {
    std::string query;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"a*", true},
      {Wildcards(3, " "), true},
      {Wildcards(3, " OR "), true},
      {"zzzzq* OR zzzzr*", true},  // expands to nothing: costs nothing
      {Wildcards(26, " "), false},
      {Wildcards(26, " OR "), false},
      {Wildcards(312, " OR "), false},  // the reported 1,868-byte query
      {absl::StrCat("in:title in:body ", Wildcards(20, " OR ")), false},
  };
  for (const Case& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    auto parsed = parser.Parse(c.query);
    const auto took = std::chrono::steady_clock::now() - start;
    if (c.ok) {
      EXPECT_TRUE(parsed.ok()) << c.query << ": " << parsed.status();
      continue;
    }
    ASSERT_FALSE(parsed.ok()) << c.query.substr(0, 40) << "… was accepted";
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr(absl::StrCat("more than ", kMaxQueryWildcardTerms, " words")));
    EXPECT_THAT(parsed.status().message(), HasSubstr("column"));
    // Not a timing assertion of the fix: refusing reads at most the budget's terms.
    EXPECT_LT(took, std::chrono::seconds(5)) << c.query.substr(0, 40);
  }
  EXPECT_EQ(Wildcards(312, " OR ").size(), 1868u);
}

TEST_F(QueryLimitsTest, SearchAndServiceRefuseThePathologicalQuery) {
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db_);
  v1::SearchRequest request;
  request.set_query(Wildcards(312, " OR "));
  auto response = searcher->Search(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  v1::AggregateRequest aggregate;
  aggregate.set_query(request.query());
  aggregate.add_dimensions("state");
  EXPECT_EQ(searcher->Aggregate(aggregate).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Within the budget the wildcards search as before.
  request.set_query(Wildcards(3, " OR "));
  response = searcher->Search(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_GT(response->total(), 0);

  // Over gRPC: INVALID_ARGUMENT naming the limit.
  SearchService service(searcher.get());
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::Search::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                                      grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  request.set_query(Wildcards(312, " OR "));
  v1::SearchResponse reply;
  grpc::Status status = stub->Search(&context, request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat(kMaxQueryWildcardTerms)));
  server->Shutdown(std::chrono::system_clock::now());
}

// A StopCheck that says stop from its `stop_at`-th call on, with `code`.
StopCheck StopAt(int stop_at, absl::StatusCode code, int* calls) {
  return [=]() {
    return ++*calls >= stop_at ? absl::Status(code, "stopped by the test") : absl::OkStatus();
  };
}

TEST_F(QueryLimitsTest, SearchStopsWhenItsStopCheckSaysSo) {
  std::unique_ptr<Searcher> searcher = Searcher::ForDatabase(db_);
  v1::SearchRequest request;
  request.set_query("a* zzzzq");  // no issue has both: ranked, then relaxed
  request.add_facets("state");
  int calls = 0;
  ASSERT_TRUE(searcher->Search(request, StopAt(1000, absl::StatusCode::kOk, &calls)).ok());
  const int checks = calls;
  ASSERT_GE(checks, 3) << "the search asks its StopCheck between its passes";
  for (absl::StatusCode code :
       {absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled}) {
    for (int stop_at = 1; stop_at <= checks; ++stop_at) {
      calls = 0;
      auto response = searcher->Search(request, StopAt(stop_at, code, &calls));
      EXPECT_EQ(response.status().code(), code) << "stop at check " << stop_at;
      EXPECT_EQ(calls, stop_at) << "nothing is asked after the stop";
    }
  }
  v1::AggregateRequest aggregate;
  aggregate.set_query("a*");
  aggregate.add_dimensions("state");
  calls = 0;
  EXPECT_EQ(searcher->Aggregate(aggregate, StopAt(1, absl::StatusCode::kCancelled, &calls))
                .status()
                .code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace issuescope::search
