// FakeTransport: a scripted HttpTransport for crawler tests. Responses are queued per exact URL
// and served in FIFO order, each once; a request with nothing scripted fails with INTERNAL
// "unscripted request" (not retryable, so a crawl stops at once and the test sees the URL).
// Every request is recorded, with the FakeClock's time when a clock is given.
// Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "crawler/http_transport.h"

namespace issuescope::crawler::testing {

// Recorded is one request the fake saw, and when (by the clock given to the fake).
struct Recorded {
  HttpRequest request;
  absl::Time at;
};

// FakeTransport: see the file comment.
class FakeTransport : public HttpTransport {
 public:
  // FakeTransport stamps recorded requests with `clock` (when not null).
  explicit FakeTransport(Clock* clock = nullptr) : clock_(clock) {}

  // Respond queues a response for `url`.
  void Respond(const std::string& url, int status, std::string body,
               std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    r.headers.entries = std::move(headers);
    r.effective_url = url;
    std::lock_guard<std::mutex> lock(mu_);
    script_[url].push_back(std::move(r));
  }

  // Fail queues a transport error for `url`.
  void Fail(const std::string& url, absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    script_[url].push_back(std::move(status));
  }

  // Send records the request and serves the next response scripted for its URL.
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back({request, clock_ ? clock_->Now() : absl::InfinitePast()});
    auto it = script_.find(request.url);
    if (it == script_.end() || it->second.empty()) {
      return absl::InternalError(absl::StrCat("unscripted request ", request.url));
    }
    absl::StatusOr<HttpResponse> r = std::move(it->second.front());
    it->second.pop_front();
    return r;
  }

  // Requests returns every request seen so far.
  std::vector<Recorded> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  // Urls returns the URLs of every request seen so far.
  std::vector<std::string> Urls() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& r : requests_) out.push_back(r.request.url);
    return out;
  }

  // Pending counts scripted responses not yet served.
  size_t Pending() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [url, q] : script_) n += q.size();
    return n;
  }

 private:
  Clock* clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::deque<absl::StatusOr<HttpResponse>>> script_;
  std::vector<Recorded> requests_;
};

}  // namespace issuescope::crawler::testing
