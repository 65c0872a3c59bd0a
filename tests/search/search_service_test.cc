// SearchService over a real gRPC server on loopback: queries, errors as gRPC statuses, request
// bounds, GetIssue, GetIndexStatus, and the standard health check.
#include "search/search_service.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "search/query_parser.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;

class SearchServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port, 0);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Search::NewStub(channel_);
  }

  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  // Deadline-bounded client context.
  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  std::unique_ptr<Searcher> searcher_ = Searcher::ForDatabase(testing::FixtureDatabase());
  SearchService service_{searcher_.get()};
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Search::Stub> stub_;
};

TEST_F(SearchServiceTest, AnswersQueries) {
  v1::SearchRequest request;
  request.set_query("\"illegal memory access\" repo:pytorch/pytorch is:open label:bug");
  v1::SearchResponse response;
  grpc::Status status = stub_->Search(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.total(), 1);
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_EQ(response.hits(0).number(), 1);
  EXPECT_THAT(response.hits(0).snippet(), HasSubstr("<mark>"));
}

TEST_F(SearchServiceTest, ExportStreamsEveryHit) {
  struct Case {
    std::string query;
    int64_t limit;
    std::vector<int64_t> expected;
  };
  const std::vector<Case> cases = {
      {"", 0, {6, 3, 2, 1, 5, 4, 7}},  // newest created first
      {"sort:created-asc", 0, {7, 4, 5, 1, 2, 3, 6}},
      {"sort:created-asc", 3, {7, 4, 5}},
      {"label:bug", 0, {6, 2, 1}},
      {"nonexistentword", 0, {}},
  };
  for (const Case& c : cases) {
    v1::ExportRequest request;
    request.set_query(c.query);
    request.set_limit(c.limit);
    request.set_snippets(true);
    auto context = Context();
    std::unique_ptr<grpc::ClientReader<v1::SearchHit>> reader =
        stub_->Export(context.get(), request);
    std::vector<int64_t> numbers;
    v1::SearchHit hit;
    while (reader->Read(&hit)) numbers.push_back(hit.number());
    grpc::Status status = reader->Finish();
    ASSERT_TRUE(status.ok()) << c.query << ": " << status.error_message();
    EXPECT_EQ(numbers, c.expected) << c.query;
  }
  v1::ExportRequest bad;
  bad.set_query("foo:bar");
  auto context = Context();
  auto reader = stub_->Export(context.get(), bad);
  v1::SearchHit hit;
  EXPECT_FALSE(reader->Read(&hit));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("unknown qualifier 'foo'"));
}

TEST_F(SearchServiceTest, ExportStopsWhenTheClientCancels) {
  v1::ExportRequest request;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = stub_->Export(&context, request);
  v1::SearchHit hit;
  ASSERT_TRUE(reader->Read(&hit));
  context.TryCancel();
  while (reader->Read(&hit)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(SearchServiceTest, AggregatesAndFacets) {
  v1::AggregateRequest request;
  request.set_query("is:open");
  request.add_dimensions("kind");
  request.add_dimensions("llm");
  v1::AggregateResponse response;
  grpc::Status status = stub_->Aggregate(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.total(), 5);  // 1, 3, 4, 6, 7
  std::vector<std::string> rows;
  for (const v1::AggregateRow& row : response.rows()) {
    rows.push_back(row.values(0) + "/" + row.values(1) + "=" + std::to_string(row.count()));
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"/=1", "bug/false=1", "bug/true=2",
                                            "requirement/false=1"}));
  request.clear_dimensions();
  status = stub_->Aggregate(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::SearchRequest search;
  search.set_query("label:bug");
  search.add_facets("repo");
  search.add_facets("year");
  v1::SearchResponse found;
  status = stub_->Search(Context().get(), search, &found);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(found.facets_exact());
  EXPECT_EQ(found.facets_counted(), 3);
  ASSERT_EQ(found.facets_size(), 2);
  EXPECT_EQ(found.facets(0).values(0).value(), "github:pytorch/pytorch");
  EXPECT_EQ(found.facets(0).values(0).count(), 2);
  EXPECT_EQ(found.facets(1).values(0).value(), "2024");
  EXPECT_EQ(found.facets(1).values(0).count(), 3);
}

TEST_F(SearchServiceTest, ReportsBadRequestsAsInvalidArgument) {
  struct Case {
    std::string query;
    int page_size;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"foo:bar", 0, "unknown qualifier 'foo' at column 1"},
      {"(crash", 0, "column 1"},
      {std::string(kMaxQueryBytes + 1, 'x'), 0, "at most 4096 bytes"},
      {"", 5000, "page_size"},
  };
  for (const Case& c : cases) {
    v1::SearchRequest request;
    request.set_query(c.query);
    request.set_page_size(c.page_size);
    v1::SearchResponse response;
    grpc::Status status = stub_->Search(Context().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.fragment;
    EXPECT_THAT(status.error_message(), HasSubstr(c.fragment));
  }
}

TEST_F(SearchServiceTest, GetsIssuesAndIndexStatus) {
  v1::SearchGetIssueRequest request;
  request.set_repo_slug("github:pytorch/pytorch");
  request.set_number(2);
  v1::IssueWithComments issue;
  grpc::Status status = stub_->GetIssue(Context().get(), request, &issue);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(issue.issue().title(), "Leak when tensors are freed");

  request.set_number(404);
  status = stub_->GetIssue(Context().get(), request, &issue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);

  request.set_repo_slug(std::string(kMaxRepoSlugBytes + 1, 'a'));
  status = stub_->GetIssue(Context().get(), request, &issue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::IndexStatus index_status;
  status = stub_->GetIndexStatus(Context().get(), v1::GetIndexStatusRequest(), &index_status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(index_status.documents(), 7);
}

TEST_F(SearchServiceTest, HealthCheckServes) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health->Check(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(SearchServiceUnavailableTest, MissingIndexIsUnavailable) {
  std::unique_ptr<Searcher> searcher = Searcher::ForPath("/nonexistent/issuescope-index");
  SearchService service(searcher.get());
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::Search::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SearchResponse response;
  grpc::Status status = stub->Search(&context, v1::SearchRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("index not built yet"));
  server->Shutdown(std::chrono::system_clock::now());
}

}  // namespace
}  // namespace issuescope::search
