// CrawlerWorker against an in-process fake Coordinator: registration, leases, progress reports,
// fencing through ReportProgress, re-registration, and draining.
#include "crawler/worker.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rocksdb/env.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::FakeTransport;

constexpr char kRepoUrl[] = "https://api.test/repos/octo/hello";
constexpr char kIssues[] =
    "https://api.test/repos/octo/hello/issues?state=all&sort=updated&direction=asc&per_page=100";
constexpr char kComments[] =
    "https://api.test/repos/octo/hello/issues/comments?sort=updated&direction=asc&per_page=100";

// FakeCoordinator hands out scripted leases and records what workers tell it.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    registrations.push_back(*req);
    resp->set_heartbeat_interval_ms(30);
    resp->set_lease_ttl_ms(10000);
    cv_.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++heartbeats;
    resp->set_known(!forget_worker_once);
    forget_worker_once = false;
    cv_.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status AcquireLeases(grpc::ServerContext*, const v1::AcquireLeasesRequest* req,
                             v1::AcquireLeasesResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    while (!pending_leases.empty() && resp->leases_size() < req->max_leases()) {
      *resp->add_leases() = pending_leases.front();
      pending_leases.erase(pending_leases.begin());
    }
    return grpc::Status::OK;
  }
  grpc::Status ReportProgress(grpc::ServerContext*, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    reports.push_back(*req);
    cv_.notify_all();
    if (fence_reports) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "lease epoch 1 is stale");
    }
    return grpc::Status::OK;
  }
  grpc::Status ReleaseLease(grpc::ServerContext*, const v1::ReleaseLeaseRequest* req,
                            v1::ReleaseLeaseResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    releases.push_back(*req);
    cv_.notify_all();
    return grpc::Status::OK;
  }

  // WaitUntil waits (up to 10 s) for `pred` to hold under the coordinator's lock.
  bool WaitUntil(const std::function<bool()>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), pred);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1::Lease> pending_leases;
  std::vector<v1::RegisterWorkerRequest> registrations;
  std::vector<v1::ReportProgressRequest> reports;
  std::vector<v1::ReleaseLeaseRequest> releases;
  int heartbeats = 0;
  bool fence_reports = false;
  bool forget_worker_once = false;
};

class WorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
    grpc::ServerBuilder builder;
    builder.RegisterService(&coordinator_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (worker_) worker_->Stop();
    server_->Shutdown();
  }

  void StartWorker() {
    WorkerOptions options;
    options.worker_id = "worker-7";
    options.store_address = "127.0.0.1:5555";
    options.capacity = 2;
    options.poll_interval = absl::Milliseconds(20);
    options.crawler.token = "tok";
    worker_ = std::make_unique<CrawlerWorker>(
        options, server_->InProcessChannel(grpc::ChannelArguments()), &http_, store_.get(),
        &clock_);
    ASSERT_TRUE(worker_->Start().ok());
  }

  static v1::Lease Lease() {
    v1::Lease lease;
    lease.set_repo_slug("github:octo/hello");
    lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    lease.mutable_repo()->set_owner("octo");
    lease.mutable_repo()->set_name("hello");
    lease.mutable_repo()->set_api_url("https://api.test");
    lease.set_epoch(1);
    lease.set_mode(v1::CRAWL_MODE_FULL);
    return lease;
  }

  static std::string Issue(int n) {
    return absl::StrCat(R"({"id": )", n, R"(, "number": )", n,
                        R"(, "updated_at": "2023-01-01T00:00:0)", n, R"(Z"})");
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  FakeCoordinator coordinator_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CrawlerWorker> worker_;
};

TEST_F(WorkerTest, RegistersCrawlsALeaseAndReportsDone) {
  coordinator_.pending_leases.push_back(Lease());
  http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello", "open_issues_count": 2})");
  http_.Respond(kIssues, 200, absl::StrCat("[", Issue(1), ",", Issue(2), "]"),
                {{"X-RateLimit-Remaining", "4990"}});
  // The confirmation page from the new cursor (issue 2's updated_at).
  http_.Respond(std::string(kIssues) + "&since=2023-01-01T00%3A00%3A02Z", 200,
                absl::StrCat("[", Issue(2), "]"), {{"ETag", "\"ci\""}});
  http_.Respond(kComments, 200, "[]");
  StartWorker();

  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    ASSERT_EQ(coordinator_.registrations.size(), 1u);
    EXPECT_EQ(coordinator_.registrations[0].worker_id(), "worker-7");
    EXPECT_EQ(coordinator_.registrations[0].store_id(), store_->store_id());
    EXPECT_EQ(coordinator_.registrations[0].store_address(), "127.0.0.1:5555");
    EXPECT_EQ(coordinator_.registrations[0].capacity(), 2);
    // issues page, confirmation page, comments page, final
    ASSERT_GE(coordinator_.reports.size(), 4u);
    const auto& first = coordinator_.reports.front();
    EXPECT_EQ(first.lease().repo(), "github:octo/hello");
    EXPECT_EQ(first.lease().epoch(), 1u);
    EXPECT_FALSE(first.done());
    const auto& last = coordinator_.reports.back();
    EXPECT_TRUE(last.done());
    EXPECT_EQ(last.error(), "");
    EXPECT_EQ(last.counters().issues_stored(), 2);
    EXPECT_EQ(last.counters().requests(), 4);
    EXPECT_EQ(last.issues_estimated(), 2);
    EXPECT_EQ(last.rate_remaining(), 4990);
    ASSERT_TRUE(last.has_cursor());
    EXPECT_EQ(last.cursor().issues_etag(), "\"ci\"");
    EXPECT_EQ(coordinator_.releases[0].lease().repo(), "github:octo/hello");
  }
  EXPECT_TRUE(store_->GetIssue("github:octo/hello", 2).ok());
  EXPECT_EQ(worker_->completed_crawls(), 1);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(WorkerTest, FailedPreconditionOnReportStopsTheCrawl) {
  coordinator_.fence_reports = true;
  coordinator_.pending_leases.push_back(Lease());
  const std::string p2 = std::string(kIssues) + "&page=2";
  http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello"})");
  http_.Respond(kIssues, 200, absl::StrCat("[", Issue(1), "]"),
                {{"Link", "<" + p2 + ">; rel=\"next\""}});
  http_.Respond(p2, 200, absl::StrCat("[", Issue(2), "]"));
  StartWorker();

  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    EXPECT_EQ(coordinator_.reports.size(), 1u);
    EXPECT_FALSE(coordinator_.reports[0].done());
  }
  EXPECT_EQ(http_.Requests().size(), 2u);  // page 2 never fetched
  EXPECT_EQ(http_.Pending(), 1u);          // page 2 is left unserved
  EXPECT_EQ(worker_->completed_crawls(), 0);
}

TEST_F(WorkerTest, CrawlFailureIsReportedWithoutTheToken) {
  coordinator_.pending_leases.push_back(Lease());
  http_.Respond(kRepoUrl, 404, R"({"message": "Not Found"})");
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  ASSERT_EQ(coordinator_.reports.size(), 1u);
  EXPECT_FALSE(coordinator_.reports[0].done());
  EXPECT_NE(coordinator_.reports[0].error().find("gone"), std::string::npos);
  EXPECT_EQ(coordinator_.reports[0].error().find("tok"), std::string::npos);
}

TEST_F(WorkerTest, ReRegistersWhenTheCoordinatorForgetsIt) {
  coordinator_.forget_worker_once = true;
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.registrations.size() >= 2; }));
  EXPECT_TRUE(worker_->registered());
  worker_->Stop();
  EXPECT_EQ(worker_->active_crawls(), 0);
}

TEST(WorkerOptionsTest, RejectsBadIdAndCapacity) {
  FakeClock clock;
  FakeTransport http;
  auto env = std::unique_ptr<rocksdb::Env>(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  StoreOptions so;
  so.env = env.get();
  auto store = IssueStore::Open("/s", so);
  ASSERT_TRUE(store.ok());
  auto channel = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  WorkerOptions bad_id;
  bad_id.worker_id = "no spaces please";
  CrawlerWorker w1(bad_id, channel, &http, store->get(), &clock);
  EXPECT_EQ(w1.Start().code(), absl::StatusCode::kInvalidArgument);
  WorkerOptions bad_cap;
  bad_cap.capacity = 0;
  CrawlerWorker w2(bad_cap, channel, &http, store->get(), &clock);
  EXPECT_EQ(w2.Start().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::crawler
