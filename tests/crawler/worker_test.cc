// CrawlerWorker against an in-process fake Coordinator: registration, leases, progress reports,
// fencing through ReportProgress, re-registration, and draining.
#include "crawler/worker.h"

#include "crawler/token_binding.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"
#include "grpcpp/grpcpp.h"
#include "gmock/gmock.h"
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
    calls.push_back("register");
    resp->set_heartbeat_interval_ms(heartbeat_interval_ms);
    resp->set_lease_ttl_ms(10000);
    cv_.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++heartbeats;
    if (heartbeats == 1) first_heartbeat = *req;
    calls.push_back("heartbeat");
    last_heartbeat = *req;
    resp->set_known(!forget_worker_once && !forget_worker);
    forget_worker_once = false;
    resp->set_draining(draining);
    // As the real coordinator: a draining worker that holds nothing is removed (known=false,
    // draining=true) once the indexers have read its store, which `hold_removal` delays.
    if ((draining || !leaves.empty()) && req->held_size() == 0 && !hold_removal) {
      resp->set_known(false);
      resp->set_draining(true);
    }
    for (const auto& a : accounts) *resp->add_accounts() = a;
    cv_.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status LeaveWorker(grpc::ServerContext*, const v1::DrainWorkerRequest* req,
                           v1::DrainWorkerResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    leaves.push_back(*req);
    events.push_back("leave");
    resp->set_leases_held(1);
    cv_.notify_all();
    return grpc::Status::OK;
  }
  bool hold_removal = false;
  grpc::Status AcquireLeases(grpc::ServerContext*, const v1::AcquireLeasesRequest* req,
                             v1::AcquireLeasesResponse* resp) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back("acquire");
    cv_.notify_all();
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
    events.push_back(req->done() ? "done" : "report");
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
    events.push_back("release");
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
  std::vector<v1::DrainWorkerRequest> leaves;
  std::vector<std::string> events;  // "leave", "report", "done", "release" in order
  std::vector<std::string> calls;  // "register", "heartbeat", "acquire" in order
  int heartbeat_interval_ms = 30;  // told to the worker at registration
  v1::HeartbeatRequest first_heartbeat;
  v1::HeartbeatRequest last_heartbeat;
  std::vector<v1::AccountBudget> accounts;  // sent in every heartbeat answer
  int heartbeats = 0;
  bool fence_reports = false;
  bool forget_worker_once = false;
  bool forget_worker = false;
  bool draining = false;
};

// GatedTransport holds every request until the gate opens (or 10 s pass), then serves it from
// the FakeTransport: a crawl that is "in flight" for as long as a test needs.
class GatedTransport : public HttpTransport {
 public:
  explicit GatedTransport(HttpTransport* inner) : inner_(inner) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++waiting_;
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
      --waiting_;
    }
    return inner_->Send(request);
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // WaitForRequest waits (up to 10 s) until a request is held at the gate.
  bool WaitForRequest() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return waiting_ > 0; });
  }

 private:
  HttpTransport* inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
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

  void StartWorker(HttpTransport* transport = nullptr,
                   absl::Duration drain_timeout = absl::Seconds(30),
                   std::shared_ptr<TokenPool> pool = nullptr) {
    WorkerOptions options;
    options.worker_id = "worker-7";
    options.store_address = "127.0.0.1:5555";
    options.capacity = 2;
    options.poll_interval = absl::Milliseconds(20);
    options.drain_timeout = drain_timeout;
    options.crawler.token = "tok-s3cret";
    options.crawler.api_urls[v1::TRACKER_GITHUB] = "https://api.test";  // where the token may go
    if (pool) options.crawler.pools[v1::TRACKER_GITHUB] = pool;
    options.observer = observer_;
    worker_ = std::make_unique<CrawlerWorker>(
        options, server_->InProcessChannel(grpc::ChannelArguments()),
        transport != nullptr ? transport : &http_, store_.get(), &clock_);
    ASSERT_TRUE(worker_->Start().ok());
  }

  // ScriptCrawl scripts a complete crawl of the test repository (two issues, no comments).
  void ScriptCrawl() {
    http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello", "open_issues_count": 2})");
    http_.Respond(kIssues, 200, absl::StrCat("[", Issue(1), ",", Issue(2), "]"),
                  {{"X-RateLimit-Remaining", "4990"}});
    http_.Respond(std::string(kIssues) + "&since=2023-01-01T00%3A00%3A02Z", 200,
                  absl::StrCat("[", Issue(2), "]"), {{"ETag", "\"ci\""}});
    http_.Respond(kComments, 200, "[]");
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
                        R"(, "title": "t", "state": "open", "created_at": "2023-01-01T00:00:00Z")",
                        R"(, "updated_at": "2023-01-01T00:00:0)", n, R"(Z"})");
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  FakeCoordinator coordinator_;
  std::unique_ptr<grpc::Server> server_;
  CrawlObserver* observer_ = nullptr;
  std::unique_ptr<CrawlerWorker> worker_;
};

// RecordingObserver writes down every crawl event as text: "started SLUG", "progress SLUG
// REQUESTS", "ended SLUG OUTCOME REQUESTS ERROR".
class RecordingObserver final : public CrawlObserver {
 public:
  void Started(const v1::Lease& lease) override {
    Add(absl::StrCat("started ", lease.repo_slug()));
  }
  void Progress(const v1::Lease& lease, const CrawlProgress& p) override {
    Add(absl::StrCat("progress ", lease.repo_slug(), " ", p.counters.requests()));
  }
  void Ended(const v1::Lease& lease, CrawlOutcome outcome, const v1::CrawlCounters& counters,
             absl::string_view error) override {
    Add(absl::StrCat("ended ", lease.repo_slug(), " ", static_cast<int>(outcome), " ",
                     counters.requests(), " ", error));
  }
  std::vector<std::string> Events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // WaitForEnd waits up to 10 s for an "ended" event.
  bool WaitForEnd() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      return !events_.empty() && events_.back().rfind("ended ", 0) == 0;
    });
  }

 private:
  void Add(std::string event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
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

// The observer (the CLI's progress board) sees a crawl start, each page before it is reported,
// and its end with the outcome and every request made; the end comes after the release.
TEST_F(WorkerTest, ObserverSeesStartPagesAndTheEnd) {
  RecordingObserver observer;
  observer_ = &observer;
  coordinator_.pending_leases.push_back(Lease());
  ScriptCrawl();
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  ASSERT_TRUE(observer.WaitForEnd());
  const std::vector<std::string> events = observer.Events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front(), "started github:octo/hello");
  EXPECT_THAT(std::vector<std::string>(events.begin() + 1, events.end() - 1),
              ::testing::Each(::testing::StartsWith("progress github:octo/hello ")));
  EXPECT_EQ(events.back(), absl::StrCat("ended github:octo/hello ",
                                        static_cast<int>(CrawlOutcome::kDone), " 4 "));
}

TEST_F(WorkerTest, ObserverSeesAFailureWithItsMessageAndRequests) {
  RecordingObserver observer;
  observer_ = &observer;
  coordinator_.pending_leases.push_back(Lease());
  http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello"})");
  for (int i = 0; i < 6; ++i) http_.Respond(kIssues, 503, "{}");
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  ASSERT_TRUE(observer.WaitForEnd());
  const std::vector<std::string> events = observer.Events();
  ASSERT_FALSE(events.empty());
  EXPECT_THAT(events.back(),
              ::testing::StartsWith(absl::StrCat("ended github:octo/hello ",
                                                 static_cast<int>(CrawlOutcome::kFailed), " 7 ")));
  EXPECT_THAT(events.back(), ::testing::HasSubstr("503"));
  EXPECT_THAT(events.back(), ::testing::Not(::testing::HasSubstr("tok-s3cret")));
}

// A lease whose repository names another API than the worker's (whoever added it chose the
// URL) is failed before any request: the worker's token goes only to its own API. Another path
// or an explicit default port on the worker's own host is the same API.
TEST_F(WorkerTest, TokensGoOnlyToTheWorkersOwnApi) {
  v1::Lease rogue = Lease();
  rogue.mutable_repo()->set_api_url("http://127.0.0.1:9/collect");
  coordinator_.pending_leases.push_back(rogue);
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    ASSERT_FALSE(coordinator_.reports.empty());
    const std::string& error = coordinator_.reports.back().error();
    EXPECT_NE(error.find("http://127.0.0.1:9"), std::string::npos) << error;
    EXPECT_NE(error.find("https://api.test:443"), std::string::npos) << error;
    EXPECT_NE(error.find("--github-api"), std::string::npos) << error;
    EXPECT_EQ(error.find("tok-s3cret"), std::string::npos) << "the token is never in an error";
  }
  EXPECT_TRUE(http_.Requests().empty()) << "no request went anywhere";

  EXPECT_TRUE(CheckTokenDestination("https://API.test:443/v3", "https://api.test", v1::TRACKER_GITHUB).ok());
  EXPECT_EQ(CheckTokenDestination("http://api.test", "https://api.test", v1::TRACKER_GITHUB).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckTokenDestination("https://api.test.evil", "https://api.test", v1::TRACKER_GITHUB)
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckTokenDestination("https://api.test:8443", "https://api.test", v1::TRACKER_GITLAB)
                .message()
                .find("--gitlab-api") != absl::string_view::npos,
            true);
  EXPECT_EQ(ApiOrigin("file:///etc/passwd").status().code(), absl::StatusCode::kInvalidArgument);
  // Without a secret (anonymous crawling) any API may be crawled.
  CrawlerOptions anonymous;
  v1::RepositoryRef elsewhere = rogue.repo();
  EXPECT_TRUE(CheckRepositoryTokenBinding(anonymous, elsewhere).ok());
  anonymous.token = "tok";
  EXPECT_EQ(CheckRepositoryTokenBinding(anonymous, elsewhere).code(),
            absl::StatusCode::kPermissionDenied);
  elsewhere.clear_api_url();  // the worker's own API
  EXPECT_TRUE(CheckRepositoryTokenBinding(anonymous, elsewhere).ok());
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
  // Page 2 may already be in flight (the crawl pipelines pages) while page 1 is reported; it
  // is dropped, never stored, and nothing is requested after it.
  EXPECT_LE(http_.Requests().size(), 3u);
  EXPECT_EQ(http_.Requests().size() + http_.Pending(), 3u);
  EXPECT_FALSE(store_->GetIssue("github:octo/hello", 2).ok());
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
  EXPECT_EQ(coordinator_.reports[0].error().find("tok-s3cret"), std::string::npos);
}

// Issue 16 (14): a failed crawl reports the requests it made (it said "requests 0" after 8).
TEST_F(WorkerTest, FailedCrawlReportsTheRequestsItMade) {
  coordinator_.pending_leases.push_back(Lease());
  http_.Respond(kRepoUrl, 200, R"({"full_name": "octo/hello"})");
  for (int i = 0; i < 6; ++i) http_.Respond(kIssues, 503, "{}");  // the first try + 5 retries
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.releases.empty(); }));
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  ASSERT_FALSE(coordinator_.reports.empty());
  const v1::ReportProgressRequest& last = coordinator_.reports.back();
  EXPECT_NE(last.error(), "");
  EXPECT_EQ(last.counters().requests(), 7);
  EXPECT_EQ(last.counters().retries(), 5);
}

TEST_F(WorkerTest, ReRegistersWhenTheCoordinatorForgetsIt) {
  coordinator_.forget_worker_once = true;
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.registrations.size() >= 2; }));
  EXPECT_TRUE(worker_->registered());
  worker_->Stop();
  EXPECT_EQ(worker_->active_crawls(), 0);
}

TEST_F(WorkerTest, LeaveLetsTheRunningCrawlFinishThenReleasesAndStops) {
  coordinator_.pending_leases.push_back(Lease());
  ScriptCrawl();
  GatedTransport gate(&http_);
  StartWorker(&gate, absl::Seconds(20));
  ASSERT_TRUE(gate.WaitForRequest());  // the crawl is under way
  std::thread opener([&] {
    ASSERT_TRUE(coordinator_.WaitUntil([&] { return !coordinator_.leaves.empty(); }));
    coordinator_.pending_leases.push_back(Lease());  // offered during the drain: not taken
    coordinator_.pending_leases.back().set_epoch(2);
    gate.Open();
  });
  EXPECT_EQ(worker_->Leave(), 0);  // nothing had to be cancelled
  opener.join();
  EXPECT_TRUE(worker_->draining());
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  ASSERT_EQ(coordinator_.leaves.size(), 1u);
  EXPECT_EQ(coordinator_.leaves[0].worker_id(), "worker-7");
  // LeaveWorker first, then the crawl completes (done) and its lease is released.
  ASSERT_FALSE(coordinator_.events.empty());
  EXPECT_EQ(coordinator_.events.front(), "leave");
  auto done = std::find(coordinator_.events.begin(), coordinator_.events.end(), "done");
  ASSERT_NE(done, coordinator_.events.end());
  EXPECT_NE(std::find(done, coordinator_.events.end(), "release"), coordinator_.events.end());
  for (const auto& r : coordinator_.reports) {
    EXPECT_EQ(r.lease().epoch(), 1u) << "crawled a lease offered while leaving";
  }
  EXPECT_EQ(worker_->completed_crawls(), 1);
}

TEST_F(WorkerTest, LeaveCancelsCrawlsStillRunningAtTheDrainTimeout) {
  coordinator_.pending_leases.push_back(Lease());
  ScriptCrawl();
  GatedTransport gate(&http_);
  StartWorker(&gate, absl::Milliseconds(300));
  ASSERT_TRUE(gate.WaitForRequest());
  const absl::Time start = absl::Now();
  bool drain_wait_began = false;
  bool release_wait_began = false;
  std::thread opener([&] {
    // Once Leave waits out its drain timeout (on the fake clock), move the clock past it; the
    // crawl still blocked in its request is cancelled, and Leave then waits for its release.
    // (The gate opens and the clock moves whatever happens, so a failure cannot hang Leave.)
    drain_wait_began = clock_.AwaitAwaitsBegun(1);
    clock_.Advance(absl::Milliseconds(301));
    release_wait_began = clock_.AwaitAwaitsBegun(2);
    gate.Open();
    if (!release_wait_began) clock_.Advance(absl::Hours(1));
  });
  EXPECT_EQ(worker_->Leave(), 1);
  opener.join();
  EXPECT_TRUE(drain_wait_began);
  EXPECT_TRUE(release_wait_began);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  // The cancelled crawl's lease is released (not reported done); nothing is left running.
  ASSERT_EQ(coordinator_.releases.size(), 1u);
  EXPECT_EQ(coordinator_.releases[0].lease().repo(), "github:octo/hello");
  for (const auto& r : coordinator_.reports) EXPECT_FALSE(r.done());
  EXPECT_EQ(worker_->completed_crawls(), 0);
  EXPECT_EQ(worker_->active_crawls(), 0);
}

TEST_F(WorkerTest, DrainedByTheCoordinatorTakesNoLeasesAndReportsDrained) {
  coordinator_.draining = true;
  StartWorker();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.heartbeats >= 1; }));
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    coordinator_.pending_leases.push_back(Lease());
  }
  EXPECT_TRUE(worker_->AwaitDrained(absl::Seconds(5)));
  EXPECT_TRUE(worker_->draining());
  // The coordinator then forgets the removed worker: it must not register again.
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    coordinator_.forget_worker = true;
  }
  const int beats = coordinator_.heartbeats;
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.heartbeats >= beats + 3; }));
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  EXPECT_EQ(coordinator_.registrations.size(), 1u);
  EXPECT_EQ(coordinator_.pending_leases.size(), 1u) << "a draining worker took a lease";
  EXPECT_EQ(coordinator_.leaves.size(), 0u);
}

// Drained feeds: a drained worker keeps heartbeating (reporting its store's seq) and serving
// its store until the coordinator removes it, which waits for the indexers to read the store.
TEST_F(WorkerTest, DrainedWorkerWaitsUntilTheCoordinatorRemovesIt) {
  coordinator_.draining = true;
  coordinator_.hold_removal = true;
  StartWorker();
  const int beats = [&] {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    return coordinator_.heartbeats;
  }();
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.heartbeats >= beats + 3; }));
  EXPECT_FALSE(worker_->drained()) << "exited while the coordinator still waits for the indexers";
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    EXPECT_EQ(coordinator_.last_heartbeat.store_last_seq(), store_->last_seq());
    coordinator_.hold_removal = false;
  }
  EXPECT_TRUE(worker_->AwaitDrained(absl::Seconds(5)));
}

TEST_F(WorkerTest, HeartbeatAnswersCapTheTokenPoolAtItsShareOfTheAccount) {
  auto pool = std::make_shared<TokenPool>(
      v1::TRACKER_GITHUB, std::vector<PoolToken>{{"shared", "tok-shared"}}, &clock_);
  v1::AccountBudget account;
  account.set_account("shared");
  account.set_tracker(v1::TRACKER_GITHUB);
  account.set_remaining(91);
  account.set_limit(5000);
  *account.mutable_reset() = ToProto(clock_.Now() + absl::Minutes(30));
  account.add_workers("worker-7");
  account.add_workers("worker-8");
  account.add_workers("worker-9");
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    coordinator_.accounts.push_back(account);
  }
  StartWorker(nullptr, absl::Seconds(30), pool);
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.heartbeats >= 2; }));
  // Three workers report the account: this one may spend 91 / 3 = 30 before the reset.
  EXPECT_EQ(pool->Snapshot()[0].allowance, 30);
  // An unknown remaining lifts the cap.
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    coordinator_.accounts[0].set_remaining(-1);
  }
  const int beats = coordinator_.heartbeats;
  ASSERT_TRUE(coordinator_.WaitUntil([&] { return coordinator_.heartbeats >= beats + 2; }));
  EXPECT_EQ(pool->Snapshot()[0].allowance, -1);
}

// Issue 16, item 12: a worker (re)starting beside others that spend the same account sent its
// first requests as if the budget were whole, because its first heartbeat came an interval
// after it took leases. Now it heartbeats once before its first lease, reporting its tokens
// (budget unknown yet), and is capped at its share of what the others know is left.
TEST_F(WorkerTest, FirstHeartbeatComesBeforeTheFirstLeaseAndCapsTheNewToken) {
  auto pool = std::make_shared<TokenPool>(
      v1::TRACKER_GITHUB, std::vector<PoolToken>{{"shared", "tok-shared"}}, &clock_);
  v1::AccountBudget account;
  account.set_account("shared");
  account.set_tracker(v1::TRACKER_GITHUB);
  account.set_remaining(8);
  account.set_limit(5000);
  *account.mutable_reset() = ToProto(clock_.Now() + absl::Minutes(30));
  account.add_workers("worker-7");
  account.add_workers("worker-8");
  {
    std::lock_guard<std::mutex> lock(coordinator_.mu_);
    coordinator_.accounts.push_back(account);
    coordinator_.heartbeat_interval_ms = 60000;  // no loop heartbeat during the test
  }
  StartWorker(nullptr, absl::Seconds(30), pool);
  ASSERT_TRUE(coordinator_.WaitUntil([&] {
    return std::count(coordinator_.calls.begin(), coordinator_.calls.end(), "acquire") > 0;
  }));
  std::lock_guard<std::mutex> lock(coordinator_.mu_);
  ASSERT_GE(coordinator_.calls.size(), 3u);
  EXPECT_EQ(coordinator_.calls[0], "register");
  EXPECT_EQ(coordinator_.calls[1], "heartbeat") << "a lease was taken before any heartbeat";
  EXPECT_EQ(coordinator_.calls[2], "acquire");
  // The unused token is reported, its budget unknown, so the coordinator counts this worker.
  const v1::TokenBudget* shared = nullptr;
  for (const v1::TokenBudget& b : coordinator_.first_heartbeat.budgets()) {
    if (b.account() == "shared") shared = &b;
  }
  ASSERT_NE(shared, nullptr) << coordinator_.first_heartbeat.DebugString();
  EXPECT_EQ(shared->tracker(), v1::TRACKER_GITHUB);
  EXPECT_EQ(shared->remaining(), -1);
  EXPECT_EQ(shared->token_fingerprint().size(), 8u);
  // Before its first request the pool is capped at 8 / 2 sharers.
  EXPECT_EQ(pool->Snapshot()[0].allowance, 4);
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

// The store address a worker registers: --advertise-address, else the listen host with the bound
// port, else (listening on every interface) ":PORT" for the coordinator to complete.
TEST(StoreAddressToAdvertiseTest, Table) {
  struct Case {
    std::string listen, advertise, want;  // want "!" = an error naming the flag
  };
  const std::vector<Case> cases = {
      {"127.0.0.1:0", "", "127.0.0.1:43210"},
      {"10.0.0.5:50052", "", "10.0.0.5:43210"},
      {"localhost:0", "", "localhost:43210"},
      {"[fd00::5]:0", "", "[fd00::5]:43210"},
      {"0.0.0.0:50052", "", ":43210"},
      {"[::]:0", "", ":43210"},
      {":0", "", ":43210"},
      {"unix:/run/store.sock", "", "unix:/run/store.sock"},
      {"0.0.0.0:0", "worker-3.svc.cluster.local:50052", "worker-3.svc.cluster.local:50052"},
      {"0.0.0.0:0", "[fd00::3]:50052", "[fd00::3]:50052"},
      {"0.0.0.0:0", "worker-3", "!--advertise-address 'worker-3'"},
      {"0.0.0.0:0", "0.0.0.0:50052", "!--advertise-address '0.0.0.0:50052'"},
      {"0.0.0.0:0", ":50052", "!--advertise-address ':50052'"},
      {"0.0.0.0:0", "host:0", "!--advertise-address 'host:0'"},
      {"no-port", "", "!--listen"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.listen + " / " + c.advertise);
    absl::StatusOr<std::string> got = StoreAddressToAdvertise(c.listen, 43210, c.advertise);
    if (c.want[0] == '!') {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(got.status().message().find(c.want.substr(1)), absl::string_view::npos)
          << got.status();
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

}  // namespace
}  // namespace issuescope::crawler
