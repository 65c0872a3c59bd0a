// CurlTransport against a tiny cpp-httplib server on loopback: status, headers and body, request
// headers, redirects not followed, HTTP errors not transport errors, timeout, body size limit,
// connection refused.
#include "crawler/curl_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace issuescope::crawler {
namespace {

class CurlTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/ok", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 200;
      res.set_header("ETag", "\"v1\"");
      res.set_header("X-Echo-If-None-Match", req.get_header_value("If-None-Match"));
      res.set_header("X-Echo-Authorization", req.get_header_value("Authorization"));
      res.set_content("[{\"number\": 1}]", "application/json");
    });
    server_.Get("/text", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(20000, 'a'), "text/plain");  // compressible
    });
    server_.Get("/moved", [](const httplib::Request&, httplib::Response& res) {
      res.status = 301;
      res.set_header("Location", "/ok");
    });
    server_.Get("/boom", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content("{\"message\": \"try later\"}", "application/json");
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1 << 20, 'x'), "application/octet-stream");
    });
    server_.Get("/slow", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(10), [this] { return release_; });
      res.set_content("late", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket listens already (bind_to_any_port), so early requests wait in the backlog.
  }
  void TearDown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      release_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool release_ = false;
};

TEST_F(CurlTransportTest, ReturnsStatusHeadersAndBodyAndSendsHeaders) {
  CurlTransport transport;
  HttpRequest req;
  req.url = Url("/ok");
  req.headers.Add("If-None-Match", "\"v0\"");
  req.headers.Add("Authorization", "Bearer t0k");
  auto resp = transport.Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, "[{\"number\": 1}]");
  EXPECT_EQ(resp->headers.Get("etag"), "\"v1\"");
  EXPECT_EQ(resp->headers.Get("X-Echo-If-None-Match"), "\"v0\"");
  EXPECT_EQ(resp->headers.Get("X-Echo-Authorization"), "Bearer t0k");
  EXPECT_EQ(resp->effective_url, req.url);
}

TEST_F(CurlTransportTest, AcceptsCompressionAndReturnsTheDecodedBody) {
  CurlTransport transport;
  HttpRequest req;
  req.url = Url("/text");
  auto resp = transport.Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, std::string(20000, 'a'));
}

TEST_F(CurlTransportTest, DoesNotFollowRedirects) {
  CurlTransport transport;
  HttpRequest req;
  req.url = Url("/moved");
  auto resp = transport.Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status, 301);
  EXPECT_EQ(resp->headers.Get("Location"), "/ok");
}

TEST_F(CurlTransportTest, HttpErrorIsAResponseNotATransportError) {
  CurlTransport transport;
  HttpRequest req;
  req.url = Url("/boom");
  auto resp = transport.Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status, 503);
  EXPECT_EQ(resp->body, "{\"message\": \"try later\"}");
}

TEST_F(CurlTransportTest, TimeoutIsDeadlineExceeded) {
  CurlTransport transport;
  HttpRequest req;
  req.url = Url("/slow");
  req.timeout = absl::Milliseconds(200);
  auto resp = transport.Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
  EXPECT_NE(resp.status().message().find("/slow"), absl::string_view::npos);
}

TEST_F(CurlTransportTest, BodyOverTheLimitIsRefused) {
  CurlTransportOptions options;
  options.max_body_bytes = 1000;
  CurlTransport transport(options);
  HttpRequest req;
  req.url = Url("/big?access_token=s3cret");
  auto resp = transport.Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(resp.status().message().find("exceeds the limit of 1000 bytes"),
            absl::string_view::npos);
  EXPECT_EQ(resp.status().message().find("s3cret"), absl::string_view::npos) << resp.status();
}

// Issue 16 (14): `--api-url file:///...` made libcurl read a local file. Only http and https.
TEST(CurlTransportNoServerTest, OtherSchemesThanHttpAndHttpsAreRefused) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-curl-file-XXXXXX");
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  const std::string secret = "local file contents, not for the network";
  ASSERT_EQ(write(fd, secret.data(), secret.size()), static_cast<ssize_t>(secret.size()));
  close(fd);
  CurlTransport transport;
  for (const std::string& url : {absl::StrCat("file://", path), absl::StrCat("FILE://", path),
                                 std::string("ftp://127.0.0.1:1/x"),
                                 std::string("gopher://127.0.0.1:1/x")}) {
    HttpRequest req;
    req.url = url;
    auto resp = transport.Send(req);
    ASSERT_FALSE(resp.ok()) << url << " was fetched: " << resp->body;
    EXPECT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument) << resp.status();
    EXPECT_NE(resp.status().message().find("only http:// and https://"), absl::string_view::npos)
        << resp.status();
  }
  unlink(path.c_str());
}

TEST(CurlTransportNoServerTest, ConnectionRefusedIsUnavailable) {
  // Bind a port without listening, note it, then close it: nothing listens there.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  ASSERT_GT(port, 0);
  CurlTransport transport;
  HttpRequest req;
  req.url = absl::StrCat("http://127.0.0.1:", port, "/x");
  auto resp = transport.Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable) << resp.status();
}

}  // namespace
}  // namespace issuescope::crawler
