#include "search/web/http_gateway.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "search/export_format.h"
#include "json_api.h"
#include "static_assets.h"
#include "spdlog/spdlog.h"

namespace issuescope::search::web {
namespace {

constexpr char kJson[] = "application/json; charset=utf-8";
// Exports are written to the socket in pieces of about this many bytes.
constexpr size_t kExportChunkBytes = 64 * 1024;
// Only same-origin resources: the page loads nothing from elsewhere, and nothing inline.
constexpr char kContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

void SendJson(httplib::Response& res, int http_status, const std::string& body) {
  res.status = http_status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(body, kJson);
}

void SendError(httplib::Response& res, grpc::StatusCode code, absl::string_view message) {
  SendJson(res, HttpStatusFor(code), ErrorJson(code, message));
}

void SendError(httplib::Response& res, const grpc::Status& status) {
  SendError(res, status.error_code(), status.error_message());
}

void SendError(httplib::Response& res, const absl::Status& status) {
  // Abseil's codes map 1:1 onto gRPC's.
  SendError(res, static_cast<grpc::StatusCode>(status.code()), status.message());
}

// CheckParams rejects query parameters other than `known`, so a typo ("query=") is an error
// rather than a silently ignored filter.
absl::Status CheckParams(const httplib::Request& req, const std::set<std::string>& known) {
  for (const auto& [name, value] : req.params) {
    if (known.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name,
                                                     "'; known: ", absl::StrJoin(known, ", ")));
    }
  }
  return absl::OkStatus();
}

// CheckRequestUtf8 rejects a request whose parameter names or values, or decoded path segments,
// are not valid UTF-8, naming the parameter (or the path).
absl::Status CheckRequestUtf8(const httplib::Request& req) {
  for (const auto& [name, value] : req.params) {
    RETURN_IF_ERROR(CheckUtf8("a parameter name", name));
    RETURN_IF_ERROR(CheckUtf8(absl::StrCat("parameter '", name, "'"), value));
  }
  return CheckUtf8("the URL path", req.path);
}

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

// ExportStream owns one Export call; a stream dropped before its end is cancelled.
struct ExportStream {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::SearchHit>> reader;
  bool finished = false;

  grpc::Status Finish() {
    finished = true;
    return reader->Finish();
  }
  ~ExportStream() {
    if (reader != nullptr && !finished) {
      context.TryCancel();
      reader->Finish();
    }
  }
};

std::string ExportLine(const v1::SearchHit& hit, bool csv) {
  return csv ? ExportCsvRow(hit) : absl::StrCat(ExportJson(hit), "\n");
}

}  // namespace

absl::StatusOr<std::pair<std::string, int>> ParseHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad listen address '", address, "': expected HOST:PORT (port 0..65535)"));
  }
  absl::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(std::string(host), port);
}

HttpGateway::HttpGateway(std::shared_ptr<grpc::ChannelInterface> channel,
                         HttpGatewayOptions options)
    : options_(options),
      stub_(v1::Search::NewStub(std::move(channel))),
      stopping_(std::make_shared<std::atomic<bool>>(false)) {}

HttpGateway::~HttpGateway() { Stop(); }

absl::Status HttpGateway::Start(const std::string& host, int port) {
  if (server_ != nullptr) return absl::FailedPreconditionError("HTTP gateway already started");
  ASSIGN_OR_RETURN(server_, MakeHttpServer(options_.tls));
  RegisterRoutes();
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ <= 0) {
    port_ = 0;
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on ", host, ":", port));
  }
  httplib::Server* server = server_.get();
  thread_ = std::thread([server] { server->listen_after_bind(); });
  spdlog::info("serving HTTP/JSON and the web page on {}://{}:{}/",
               options_.tls.enabled() ? "https" : "http", host, port_);
  return absl::OkStatus();
}

void HttpGateway::Stop() {
  stopping_->store(true);
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

void HttpGateway::RegisterRoutes() {
  httplib::Server& s = *server_;
  s.set_payload_max_length(options_.max_body_bytes);
  const auto timeout = absl::ToChronoMicroseconds(options_.socket_timeout);
  s.set_read_timeout(timeout);
  s.set_write_timeout(timeout);
  s.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                         {"Referrer-Policy", "no-referrer"},
                         {"Content-Security-Policy", kContentSecurityPolicy}});
  // Errors raised by the HTTP layer itself (no route, body too large) get a JSON body too.
  const size_t max_body = options_.max_body_bytes;
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    grpc::StatusCode code = grpc::StatusCode::INVALID_ARGUMENT;
    std::string message = absl::StrCat("bad request: HTTP ", res.status);
    if (res.status == 404) {
      code = grpc::StatusCode::NOT_FOUND;
      message = absl::StrCat("no route for ", req.method, " ", req.path);
    } else if (res.status == 413) {
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      message = absl::StrCat("request body larger than ", max_body, " bytes");
    } else if (res.status >= 500) {
      code = grpc::StatusCode::INTERNAL;
      message = absl::StrCat("internal error: HTTP ", res.status);
    }
    res.set_content(ErrorJson(code, message), kJson);
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request& req, httplib::Response& res,
                             std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("HTTP {} {} failed: {}", req.method, req.path, what);
    SendError(res, grpc::StatusCode::INTERNAL, absl::StrCat("internal error: ", what));
  });
  s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("HTTP {} {} -> {}", req.method, req.path, res.status);
  });

  // Every route first checks that its parameters and path segments are UTF-8: the API's
  // strings are proto3 strings, which cannot hold anything else.
  auto route = [this](void (HttpGateway::*method)(const httplib::Request&, httplib::Response&)) {
    return [this, method](const httplib::Request& req, httplib::Response& res) {
      if (absl::Status s = CheckRequestUtf8(req); !s.ok()) return SendError(res, s);
      (this->*method)(req, res);
    };
  };
  if (!options_.cors_origin.empty()) {
    const std::string origin = options_.cors_origin;
    // Simple requests get the allow header on their answer; preflights an empty 204.
    s.set_pre_routing_handler([origin](const httplib::Request& req, httplib::Response& res) {
      if (!absl::StartsWith(req.path, "/v1/")) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("Access-Control-Allow-Origin", origin);
      if (origin != "*") res.set_header("Vary", "Origin");
      if (req.method != "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
      res.status = 204;
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  s.Get("/v1/search", route(&HttpGateway::Search));
  s.Post("/v1/search", route(&HttpGateway::Search));
  s.Get(R"(/v1/issues/([^/]+)/(.+)/([^/]+)/([^/]+))", route(&HttpGateway::GetIssue));
  s.Get("/v1/aggregate", route(&HttpGateway::Aggregate));
  s.Post("/v1/aggregate", route(&HttpGateway::Aggregate));
  s.Get("/v1/export", route(&HttpGateway::Export));
  s.Get("/v1/status", route(&HttpGateway::Status));
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
  s.Get(R"(/|/[A-Za-z0-9_-]+\.(html|js|css|svg))", route(&HttpGateway::ServeStatic));
}

void HttpGateway::Search(const httplib::Request& req, httplib::Response& res) {
  v1::SearchRequest request;
  if (req.method == "POST") {
    if (absl::Status s = JsonToMessage(req.body, &request); !s.ok()) return SendError(res, s);
  } else {
    if (absl::Status s = CheckParams(req, {"q", "page_size", "page_token", "facets",
                                           "facet_limit", "counts_only", "explain"});
        !s.ok()) {
      return SendError(res, s);
    }
    auto counts_only = ParseBoolParam("counts_only", req.get_param_value("counts_only"));
    if (!counts_only.ok()) return SendError(res, counts_only.status());
    request.set_counts_only(*counts_only);
    auto explain = ParseBoolParam("explain", req.get_param_value("explain"));
    if (!explain.ok()) return SendError(res, explain.status());
    request.set_explain(*explain);
    request.set_query(req.get_param_value("q"));
    request.set_page_token(req.get_param_value("page_token"));
    for (const std::string& f : SplitList(req.get_param_value("facets"))) request.add_facets(f);
    for (const char* name : {"page_size", "facet_limit"}) {
      if (!req.has_param(name)) continue;
      auto n = ParseIntParam(name, req.get_param_value(name),
                             std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::max());
      if (!n.ok()) return SendError(res, n.status());
      if (std::string(name) == "page_size") {
        request.set_page_size(static_cast<int32_t>(*n));
      } else {
        request.set_facet_limit(static_cast<int32_t>(*n));
      }
    }
  }
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_deadline);
  v1::SearchResponse response;
  grpc::Status status = stub_->Search(&context, request, &response);
  if (!status.ok()) return SendError(res, status);
  SendJson(res, 200, MessageToJson(response));
}

void HttpGateway::GetIssue(const httplib::Request& req, httplib::Response& res) {
  if (absl::Status s = CheckParams(req, {}); !s.ok()) return SendError(res, s);
  v1::SearchGetIssueRequest request;
  request.set_repo_slug(absl::StrCat(req.matches[1].str(), ":", req.matches[2].str(), "/",
                                     req.matches[3].str()));
  auto number = ParseIntParam("number", req.matches[4].str(), 0,
                              std::numeric_limits<int64_t>::max());
  if (!number.ok()) return SendError(res, number.status());
  request.set_number(*number);
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_deadline);
  v1::IssueWithComments response;
  grpc::Status status = stub_->GetIssue(&context, request, &response);
  if (!status.ok()) return SendError(res, status);
  SendJson(res, 200, MessageToJson(response));
}

void HttpGateway::Aggregate(const httplib::Request& req, httplib::Response& res) {
  v1::AggregateRequest request;
  if (req.method == "POST") {
    if (absl::Status s = JsonToMessage(req.body, &request); !s.ok()) return SendError(res, s);
  } else {
    if (absl::Status s = CheckParams(req, {"q", "dimensions"}); !s.ok()) {
      return SendError(res, s);
    }
    request.set_query(req.get_param_value("q"));
    for (const std::string& d : SplitList(req.get_param_value("dimensions"))) {
      request.add_dimensions(d);
    }
  }
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_deadline);
  v1::AggregateResponse response;
  grpc::Status status = stub_->Aggregate(&context, request, &response);
  if (!status.ok()) return SendError(res, status);
  SendJson(res, 200, MessageToJson(response));
}

void HttpGateway::Status(const httplib::Request& req, httplib::Response& res) {
  if (absl::Status s = CheckParams(req, {}); !s.ok()) return SendError(res, s);
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_deadline);
  v1::IndexStatus response;
  grpc::Status status = stub_->GetIndexStatus(&context, v1::GetIndexStatusRequest(), &response);
  if (!status.ok()) return SendError(res, status);
  SendJson(res, 200, MessageToJson(response));
}

void HttpGateway::Export(const httplib::Request& req, httplib::Response& res) {
  if (absl::Status s = CheckParams(req, {"q", "format", "limit", "snippets"}); !s.ok()) {
    return SendError(res, s);
  }
  const std::string format = req.has_param("format") ? req.get_param_value("format") : "jsonl";
  if (format != "jsonl" && format != "csv") {
    return SendError(res, grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("bad value '", format,
                                  "' for parameter 'format': expected jsonl or csv"));
  }
  const bool csv = format == "csv";
  v1::ExportRequest request;
  request.set_query(req.get_param_value("q"));
  if (req.has_param("limit")) {
    auto limit = ParseIntParam("limit", req.get_param_value("limit"), 0,
                               std::numeric_limits<int64_t>::max());
    if (!limit.ok()) return SendError(res, limit.status());
    request.set_limit(*limit);
  }
  auto snippets = ParseBoolParam("snippets", req.get_param_value("snippets"));
  if (!snippets.ok()) return SendError(res, snippets.status());
  request.set_snippets(*snippets);

  auto stream = std::make_shared<ExportStream>();
  SetDeadline(&stream->context, options_.export_deadline);
  stream->reader = stub_->Export(&stream->context, request);
  // Read the first hit before answering, so a bad query is a 400 rather than a broken 200.
  auto first = std::make_shared<v1::SearchHit>();
  const bool have_first = stream->reader->Read(first.get());
  if (!have_first) {
    grpc::Status status = stream->Finish();
    if (!status.ok()) return SendError(res, status);
  }
  res.set_header("Cache-Control", "no-store");
  if (csv) res.set_header("Content-Disposition", "attachment; filename=\"issuescope-export.csv\"");
  auto stopping = stopping_;
  res.set_chunked_content_provider(
      csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      [stream, first, have_first, csv, stopping](size_t, httplib::DataSink& sink) {
        std::string buffer = csv ? ExportCsvHeader() : "";
        if (have_first) buffer += ExportLine(*first, csv);
        v1::SearchHit hit;
        while (have_first && !stopping->load() && stream->reader->Read(&hit)) {
          buffer += ExportLine(hit, csv);
          if (buffer.size() < kExportChunkBytes) continue;
          if (!sink.write(buffer.data(), buffer.size())) return false;  // client went away
          buffer.clear();
        }
        if (stopping->load()) return false;
        if (!stream->finished) {
          grpc::Status status = stream->Finish();
          if (!status.ok()) {
            // Mid-stream failure: abort the chunked body so the client sees an incomplete
            // transfer instead of a silently short export.
            spdlog::warn("export failed mid-stream: {}", status.error_message());
            return false;
          }
        }
        if (!buffer.empty() && !sink.write(buffer.data(), buffer.size())) return false;
        sink.done();
        return true;
      });
}

void HttpGateway::ServeStatic(const httplib::Request& req, httplib::Response& res) {
  const StaticAsset* asset = FindStaticAsset(req.path);
  if (asset == nullptr) {
    return SendError(res, grpc::StatusCode::NOT_FOUND, absl::StrCat("no such file ", req.path));
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_content(asset->data, asset->size, asset->content_type);
}

}  // namespace issuescope::search::web
