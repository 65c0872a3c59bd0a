// Tests of StoreService over a real gRPC server (in-process channel): lookups, scans, store
// info and the change feed with and without follow, store replacement, cancellation, shutdown.
#include "crawler/store_service.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/env.h"

namespace issuescope::crawler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRepo[] = "github:octo/demo";

v1::Issue MakeIssue(int64_t number, int64_t updated_s) {
  v1::Issue issue;
  issue.set_number(number);
  issue.set_title(absl::StrCat("issue ", number));
  issue.mutable_updated_at()->set_seconds(updated_s);
  return issue;
}

class StoreServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.env = env_.get();
    auto store = IssueStore::Open("/store", options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    StoreServiceOptions service_options;
    service_options.wait_slice = absl::Milliseconds(20);
    service_ = std::make_unique<StoreService>(store_.get(), service_options);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::IssueStore::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override {
    // Without a deadline, Shutdown waits for every handler: a stream stuck in the server
    // would hang here (and time the test out).
    service_->Shutdown();
    server_->Shutdown();
  }

  void Apply(std::vector<v1::Issue> issues) {
    ASSERT_TRUE(store_->ApplyIssues(kRepo, 1, issues).ok());
  }

  static void SetDeadline(grpc::ClientContext* context) {
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  std::unique_ptr<rocksdb::Env> env_{rocksdb::NewMemEnv(rocksdb::Env::Default())};
  std::unique_ptr<IssueStore> store_;
  std::unique_ptr<StoreService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::IssueStore::Stub> stub_;
};

TEST_F(StoreServiceTest, GetIssueStatuses) {
  Apply({MakeIssue(3, 1)});
  struct Case {
    std::string slug;
    int64_t number;
    grpc::StatusCode code;
  };
  const Case cases[] = {
      {kRepo, 3, grpc::StatusCode::OK},
      {kRepo, 4, grpc::StatusCode::NOT_FOUND},
      {"", 3, grpc::StatusCode::INVALID_ARGUMENT},
      {kRepo, 0, grpc::StatusCode::INVALID_ARGUMENT},
      {kRepo, -2, grpc::StatusCode::INVALID_ARGUMENT},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.slug, "#", c.number));
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::GetIssueRequest request;
    request.set_repo_slug(c.slug);
    request.set_number(c.number);
    v1::IssueWithComments response;
    grpc::Status status = stub_->GetIssue(&context, request, &response);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    if (status.ok()) {
      EXPECT_EQ(response.issue().title(), "issue 3");
    }
  }
}

TEST_F(StoreServiceTest, ScanRepositoryStreamsInNumberOrder) {
  Apply({MakeIssue(20, 1), MakeIssue(1, 1), MakeIssue(5, 1)});
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ScanRepositoryRequest request;
  request.set_repo_slug(kRepo);
  auto reader = stub_->ScanRepository(&context, request);
  std::vector<int64_t> numbers;
  v1::Issue issue;
  while (reader->Read(&issue)) numbers.push_back(issue.number());
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_THAT(numbers, ElementsAre(1, 5, 20));

  grpc::ClientContext bad_context;
  SetDeadline(&bad_context);
  auto bad = stub_->ScanRepository(&bad_context, v1::ScanRepositoryRequest());
  while (bad->Read(&issue)) {
  }
  EXPECT_EQ(bad->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(StoreServiceTest, GetStoreInfo) {
  Apply({MakeIssue(1, 1), MakeIssue(2, 1)});
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::StoreInfo info;
  ASSERT_TRUE(stub_->GetStoreInfo(&context, v1::GetStoreInfoRequest(), &info).ok());
  EXPECT_EQ(info.store_id(), store_->store_id());
  EXPECT_EQ(info.last_seq(), 2u);
  EXPECT_EQ(info.issues(), 2);
}

TEST_F(StoreServiceTest, ChangesWithoutFollowStreamsUntilCaughtUp) {
  Apply({MakeIssue(1, 1)});
  Apply({MakeIssue(2, 1)});
  Apply({MakeIssue(3, 1)});
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ChangesRequest request;
  request.set_max_batch(2);
  request.set_store_id(store_->store_id());
  auto reader = stub_->Changes(&context, request);
  std::vector<int> sizes;
  std::vector<uint64_t> last_seqs;
  v1::ChangeBatch batch;
  while (reader->Read(&batch)) {
    sizes.push_back(batch.events_size());
    last_seqs.push_back(batch.last_seq());
    EXPECT_EQ(batch.store_id(), store_->store_id());
  }
  grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(sizes, ElementsAre(2, 1));
  EXPECT_THAT(last_seqs, ElementsAre(2u, 3u));
}

TEST_F(StoreServiceTest, ChangesRequestErrors) {
  struct Case {
    const char* name;
    std::string store_id;
    int max_batch;
    grpc::StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {"store replaced", "0123456789abcdef0123456789abcdef", 0,
       grpc::StatusCode::FAILED_PRECONDITION, "replaced"},
      {"negative max_batch", "", -1, grpc::StatusCode::INVALID_ARGUMENT, "max_batch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::ChangesRequest request;
    request.set_store_id(c.store_id);
    request.set_max_batch(c.max_batch);
    request.set_follow(true);
    auto reader = stub_->Changes(&context, request);
    v1::ChangeBatch batch;
    EXPECT_FALSE(reader->Read(&batch));
    grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), c.code);
    EXPECT_THAT(status.error_message(), HasSubstr(c.message));
  }
}

TEST_F(StoreServiceTest, FollowDeliversChangesAppliedLater) {
  Apply({MakeIssue(1, 1)});
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ChangesRequest request;
  request.set_follow(true);
  auto reader = stub_->Changes(&context, request);
  v1::ChangeBatch batch;
  ASSERT_TRUE(reader->Read(&batch));
  ASSERT_EQ(batch.events_size(), 1);
  EXPECT_EQ(batch.events(0).number(), 1);
  // Applied after the stream caught up: Read blocks until it arrives (bounded by the deadline).
  Apply({MakeIssue(2, 1)});
  ASSERT_TRUE(reader->Read(&batch));
  ASSERT_EQ(batch.events_size(), 1);
  EXPECT_EQ(batch.events(0).number(), 2);
  EXPECT_EQ(batch.last_seq(), 2u);
  context.TryCancel();
  EXPECT_FALSE(reader->Read(&batch));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(StoreServiceTest, CancellationEndsAWaitingStream) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ChangesRequest request;
  request.set_follow(true);
  auto reader = stub_->Changes(&context, request);
  context.TryCancel();
  v1::ChangeBatch batch;
  EXPECT_FALSE(reader->Read(&batch));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The handler itself must end too: a deadline-less server Shutdown returns only then.
  server_->Shutdown();
}

TEST_F(StoreServiceTest, ShutdownEndsFollowedStreams) {
  Apply({MakeIssue(1, 1)});
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ChangesRequest request;
  request.set_follow(true);
  auto reader = stub_->Changes(&context, request);
  v1::ChangeBatch batch;
  ASSERT_TRUE(reader->Read(&batch));
  service_->Shutdown();
  EXPECT_FALSE(reader->Read(&batch));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
}

}  // namespace
}  // namespace issuescope::crawler
