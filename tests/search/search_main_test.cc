// The issuescope-search binary as a real process: it starts before the index exists (answering
// UNAVAILABLE), serves health checks, sees the index once the indexer creates it, stops cleanly
// on SIGTERM, and rejects a bad command line with one line on stderr and exit status 2.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "issuescope/v1/search.grpc.pb.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::HasSubstr;

class SearchMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/issuescope-search-main-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  std::string dir_;
};

TEST_F(SearchMainTest, ServesBeforeAndAfterTheIndexExists) {
  const std::string index = dir_ + "/index";
  const std::string port_file = dir_ + "/search.port";
  absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(
      {ISSUESCOPE_SEARCH_BINARY, "--listen", "127.0.0.1:0", "--port-file", port_file, "--index",
       index, "--log-level", "warn"},
      dir_ + "/search.log");
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<int> port = WaitForPortFile(port_file, absl::Seconds(30), child->get());
  ASSERT_TRUE(port.ok()) << port.status();

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(*port),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Search::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);

  grpc::health::v1::HealthCheckResponse health_response;
  grpc::Status status =
      health->Check(Context().get(), grpc::health::v1::HealthCheckRequest(), &health_response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(health_response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  v1::SearchResponse response;
  status = stub->Search(Context().get(), v1::SearchRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("index not built yet"));

  {
    Xapian::WritableDatabase db(index, Xapian::DB_CREATE_OR_OPEN);
    for (const testing::IssueSpec& spec : testing::Corpus()) {
      v1::IssueWithComments iwc = testing::MakeIssue(spec);
      db.replace_document(index::IdTerm(RepoSlug(iwc.issue().repo()), spec.number),
                          index::BuildDocument(iwc));
    }
    db.commit();
  }
  v1::SearchRequest request;
  request.set_query("crashes");
  status = stub->Search(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.total(), 2);

  (*child)->Signal(SIGTERM);
  int wait_status = 0;
  ASSERT_TRUE((*child)->Wait(absl::Seconds(30), &wait_status));
  EXPECT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
}

TEST_F(SearchMainTest, BadCommandLineExitsWithStatusTwo) {
  const std::string log = dir_ + "/bad.log";
  absl::StatusOr<std::unique_ptr<Subprocess>> child =
      Subprocess::Start({ISSUESCOPE_SEARCH_BINARY, "--port-file", dir_ + "/p"}, log);
  ASSERT_TRUE(child.ok()) << child.status();
  int wait_status = 0;
  ASSERT_TRUE((*child)->Wait(absl::Seconds(30), &wait_status));
  EXPECT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 2);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("--index"));
}

}  // namespace
}  // namespace issuescope::search
