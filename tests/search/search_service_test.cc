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
