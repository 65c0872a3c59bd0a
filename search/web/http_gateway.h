// HttpGateway serves the issuescope.v1.Search API over HTTP/JSON (protobuf's JSON mapping of
// the same messages) plus the embedded web page, for curl, scripts and browsers; over HTTPS
// when its options name a certificate. It calls the
// gRPC service through a channel — in issuescope-search the server's in-process channel — with
// the generated stub, so HTTP and gRPC answer identically (same validation, same errors).
//
// Routes (docs/WEB.md): POST|GET /v1/search, GET /v1/issues/{tracker}/{owner}/{name}/{number},
// POST|GET /v1/aggregate, GET /v1/export?format=jsonl|csv (chunked stream), GET /v1/status,
// GET /healthz, and GET / /index.html /app.js /app.css. Errors are JSON
// {"code":"INVALID_ARGUMENT","message":"..."} with the HTTP status of HttpStatusFor.
//
// Ownership: owns its HTTP server and listener thread; shares the channel. Thread-safety:
// Start and Stop from one thread; requests are served concurrently by the server's pool.
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/tls.h"
#include "issuescope/v1/search.grpc.pb.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace issuescope::search::web {

// HttpGatewayOptions bounds what one HTTP request may cost.
struct HttpGatewayOptions {
  // Largest accepted request body; larger ones get 413. Default: 1 MiB.
  size_t max_body_bytes = 1 << 20;
  // Deadline of the gRPC call behind a Search, GetIssue, Aggregate or status request.
  // Default: 30 s.
  absl::Duration call_deadline = absl::Seconds(30);
  // Deadline of the gRPC stream behind an export. Default: 10 min.
  absl::Duration export_deadline = absl::Minutes(10);
  // Socket read and write timeout (a client that stalls longer is dropped). Default: 30 s.
  absl::Duration socket_timeout = absl::Seconds(30);
  // Cross-origin access to the /v1/ API (CORS): a page served from this origin
  // ("https://dash.example.org") may call the API from a browser; "*" allows every origin.
  // Preflight OPTIONS requests are answered. Default: "" (same origin only; no CORS headers).
  std::string cors_origin;
  // TLS: with a certificate the gateway serves HTTPS only (and with a client CA, only to
  // clients presenting a certificate it signed); common/tls.h. Default: none (plain HTTP).
  ServerTlsFiles tls;
};

// ParseHostPort splits "HOST:PORT" ("127.0.0.1:0", "[::1]:8080"); port 0 means any free port.
// INVALID_ARGUMENT naming the value when it is not of that form.
absl::StatusOr<std::pair<std::string, int>> ParseHostPort(absl::string_view address);

// HttpGateway is the HTTP server; see the file comment.
class HttpGateway {
 public:
  // HttpGateway calls issuescope.v1.Search over `channel`.
  explicit HttpGateway(std::shared_ptr<grpc::ChannelInterface> channel,
                       HttpGatewayOptions options = {});
  // Stops the server if it runs.
  ~HttpGateway();
  HttpGateway(const HttpGateway&) = delete;
  HttpGateway& operator=(const HttpGateway&) = delete;

  // Start binds `host`:`port` (0 picks a free port) and serves on a background thread.
  // UNAVAILABLE naming the address when it cannot bind; INVALID_ARGUMENT naming the flag and
  // file when the TLS files are unusable. Call once.
  absl::Status Start(const std::string& host, int port);
  // port is the bound port after a successful Start.
  int port() const { return port_; }
  // Stop closes the listener, cancels running exports and waits for the serving thread.
  void Stop();

 private:
  void RegisterRoutes();
  void Search(const httplib::Request& req, httplib::Response& res);
  void GetIssue(const httplib::Request& req, httplib::Response& res);
  void Aggregate(const httplib::Request& req, httplib::Response& res);
  void Export(const httplib::Request& req, httplib::Response& res);
  void Status(const httplib::Request& req, httplib::Response& res);
  void ServeStatic(const httplib::Request& req, httplib::Response& res);

  const HttpGatewayOptions options_;
  std::shared_ptr<v1::Search::Stub> stub_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  // Set by Stop; running exports check it between hits.
  std::shared_ptr<std::atomic<bool>> stopping_;
};

}  // namespace issuescope::search::web
