// RequestLoop (crawler/request_loop.h) on its own, against a scripted transport and a fake
// clock: what is retried and how long it waits, what is handed back, what the counters and the
// rate notes say, and that the token never shows in an error.
#include "crawler/request_loop.h"

#include <atomic>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/crawler/fake_transport.h"

namespace issuescope::crawler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kUrl[] = "https://api.example.test/repos/o/r/issues?page=2";
constexpr char kToken[] = "tok-SECRET-1234";

class RequestLoopTest : public ::testing::Test {
 protected:
  RequestLoopTest() : transport_(&clock_) {
    tracker_ = *MakeTracker(v1::TRACKER_GITHUB);
    options_.max_retries = 3;
    options_.initial_backoff = absl::Seconds(2);
    options_.max_backoff = absl::Seconds(10);
  }

  // Loop sends with `pool`, or with a pool of kToken alone (OneTokenPool).
  std::unique_ptr<RequestLoop> Loop(std::shared_ptr<TokenPool> pool = nullptr) {
    if (!pool) pool = OneTokenPool(v1::TRACKER_GITHUB, kToken, &clock_, options_);
    return std::make_unique<RequestLoop>(&transport_, tracker_.get(), &clock_, options_,
                                         std::move(pool), "o/r",
                                         [this] { return cancelled_.load(); });
  }

  FakeClock clock_;
  testing::FakeTransport transport_;
  std::unique_ptr<Tracker> tracker_;
  RequestLoopOptions options_;
  std::atomic<bool> cancelled_{false};
};

TEST_F(RequestLoopTest, SendsAuthorisedConditionalRequestsAndNotesTheBudget) {
  const int64_t reset = absl::ToUnixSeconds(clock_.Now()) + 600;
  transport_.Respond(kUrl, 304, "",
                     {{"X-RateLimit-Remaining", "4321"},
                      {"X-RateLimit-Reset", std::to_string(reset)}});
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "\"etag-1\"");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 304);  // handed back: the caller knows it asked conditionally
  const auto sent = transport_.Requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].request.headers.Get("If-None-Match"), "\"etag-1\"");
  EXPECT_THAT(sent[0].request.headers.Get("Authorization"), HasSubstr(kToken));
  EXPECT_EQ(sent[0].request.headers.Get("User-Agent"), options_.user_agent);
  EXPECT_EQ(loop->requests(), 1);
  EXPECT_EQ(loop->retries(), 0);
  EXPECT_EQ(loop->rate().remaining, 4321);
  EXPECT_EQ(loop->rate().reset, absl::FromUnixSeconds(reset));
}

TEST_F(RequestLoopTest, RetriesServerErrorsAndTransportFailuresWithGrowingBackoff) {
  transport_.Respond(kUrl, 502, "bad gateway");
  transport_.Fail(kUrl, absl::UnavailableError("connection reset"));
  transport_.Respond(kUrl, 200, "[]");
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(loop->requests(), 3);
  EXPECT_EQ(loop->retries(), 2);
  // Jittered backoff: retry 0 waits [1, 2) s, retry 1 [2, 4) s.
  EXPECT_GE(clock_.TotalSlept(), absl::Seconds(3));
  EXPECT_LT(clock_.TotalSlept(), absl::Seconds(6));
}

TEST_F(RequestLoopTest, GivesUpAfterMaxRetriesNamingTheUrlButNeverTheToken) {
  for (int i = 0; i < 4; ++i) transport_.Respond(kUrl, 503, "down");
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("giving up after 3 retries"));
  EXPECT_THAT(r.status().message(), HasSubstr("/repos/o/r/issues"));
  EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr(kToken)));
  EXPECT_EQ(loop->requests(), 4);
  EXPECT_EQ(transport_.Pending(), 0u);
}

TEST_F(RequestLoopTest, ClientErrorsAndOtherTransportErrorsAreNotRetried) {
  transport_.Respond(kUrl, 404, "not found");
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "");
  ASSERT_TRUE(r.ok());  // below 500: the caller decides what a 404 means
  EXPECT_EQ(r->status, 404);
  transport_.Fail(kUrl, absl::InvalidArgumentError("bad URL"));
  r = loop->Get(kUrl, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  // A 403 that is no rate limit is an error at once (permission).
  transport_.Respond(kUrl, 403, "{\"message\":\"Resource not accessible\"}",
                     {{"X-RateLimit-Remaining", "10"}});
  r = loop->Get(kUrl, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(loop->retries(), 0);
}

TEST_F(RequestLoopTest, RateLimitedAnswersWaitAsToldAndRetry) {
  transport_.Respond(kUrl, 429, "slow down", {{"Retry-After", "30"}});
  transport_.Respond(kUrl, 200, "[]");
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(loop->retries(), 1);
  const auto sent = transport_.Requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_GE(sent[1].at - sent[0].at, absl::Seconds(30));  // the token was benched for 30 s
  // A Retry-After beyond the longest wait fails, saying so.
  transport_.Respond(kUrl, 429, "", {{"Retry-After", std::to_string(3 * 3600)}});
  r = loop->Get(kUrl, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("too far away"));
}

TEST_F(RequestLoopTest, CancellationEndsWaitsAndRequests) {
  cancelled_ = true;
  auto loop = Loop();
  absl::StatusOr<HttpResponse> r = loop->Get(kUrl, "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(r.status().message(), HasSubstr("crawl of o/r cancelled"));
  EXPECT_EQ(loop->requests(), 0);
  EXPECT_EQ(loop->Sleep(absl::Hours(1)).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(clock_.TotalSlept(), absl::ZeroDuration());
  // The prefetch's stop flag does the same while raised.
  cancelled_ = false;
  loop->stop_flag()->store(true);
  EXPECT_TRUE(loop->Stopping());
  loop->stop_flag()->store(false);
  EXPECT_TRUE(loop->CheckCancelled().ok());
}

TEST_F(RequestLoopTest, BackoffDoublesUpToTheMaximumWithJitter) {
  auto loop = Loop();
  for (int retry = 0; retry < 8; ++retry) {
    const absl::Duration full = std::min(options_.initial_backoff * (1 << retry),
                                         options_.max_backoff);
    const absl::Duration d = loop->Backoff(retry);
    EXPECT_GE(d, full / 2) << retry;
    EXPECT_LT(d, full) << retry;
  }
}

}  // namespace
}  // namespace issuescope::crawler
