// Unit tests of the HTTP/JSON gateway (search/web/http_gateway.h) against a scripted
// issuescope.v1.Search service on an in-process channel: JSON round trips, the gRPC → HTTP
// status mapping, parameter errors, export streaming (JSONL and CSV), bounded bodies, the
// embedded page, and HTTPS with a certificate.
#include "search/web/http_gateway.h"

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "search/export_format.h"
#include "search/web/json_api.h"
#include "tests/common/test_certificates.h"

namespace issuescope::search::web {
namespace {

// FakeSearch answers from the request alone. A query "status:N" fails with gRPC code N.
class FakeSearch final : public v1::Search::Service {
 public:
  grpc::Status Search(grpc::ServerContext*, const v1::SearchRequest* request,
                      v1::SearchResponse* response) override {
    if (grpc::Status s = Scripted(request->query()); !s.ok()) return s;
    last_search = *request;
    v1::SearchHit* hit = response->add_hits();
    hit->set_repo_slug("github:o/r");
    hit->set_repo("o/r");
    hit->set_number(7);
    hit->set_title("echo: " + request->query());
    hit->set_state(v1::ISSUE_STATE_OPEN);
    hit->set_snippet("a <mark>match</mark> &amp; more");
    response->set_total(1);
    for (const std::string& f : request->facets()) {
      v1::Facet* facet = response->add_facets();
      facet->set_name(f);
      v1::FacetValue* v = facet->add_values();
      v->set_value("x");
      v->set_count(1);
    }
    return grpc::Status::OK;
  }
  grpc::Status GetIssue(grpc::ServerContext*, const v1::SearchGetIssueRequest* request,
                        v1::IssueWithComments* response) override {
    if (request->repo_slug() != "gitlab:group/sub/proj" || request->number() != 12) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("no issue ", request->repo_slug(), "#", request->number()));
    }
    response->mutable_issue()->set_title("found");
    response->add_comments()->set_body("first comment");
    return grpc::Status::OK;
  }
  grpc::Status GetIndexStatus(grpc::ServerContext*, const v1::GetIndexStatusRequest*,
                              v1::IndexStatus* response) override {
    response->set_documents(42);
    return grpc::Status::OK;
  }
  grpc::Status Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                      grpc::ServerWriter<v1::SearchHit>* writer) override {
    if (grpc::Status s = Scripted(request->query()); !s.ok()) return s;
    if (request->query() == "empty") return grpc::Status::OK;
    const int64_t n = request->limit() > 0 ? request->limit() : 5000;
    for (int64_t i = 1; i <= n && !context->IsCancelled(); ++i) {
      v1::SearchHit hit;
      hit.set_repo_slug("github:o/r");
      hit.set_repo("o/r");
      hit.set_number(i);
      hit.set_title(i == 1 ? "comma, \"quote\"" : "plain");
      hit.add_labels("bug");
      hit.add_labels("module: cuda");
      hit.mutable_tags()->set_kind("bug");
      if (!writer->Write(hit)) break;
    }
    return grpc::Status::OK;
  }
  grpc::Status Aggregate(grpc::ServerContext*, const v1::AggregateRequest* request,
                         v1::AggregateResponse* response) override {
    if (grpc::Status s = Scripted(request->query()); !s.ok()) return s;
    *response->mutable_dimensions() = request->dimensions();
    v1::AggregateRow* row = response->add_rows();
    row->add_values("o/r");
    row->add_values("bug.memory");
    row->set_count(3);
    response->set_total(3);
    return grpc::Status::OK;
  }

  v1::SearchRequest last_search;

 private:
  static grpc::Status Scripted(const std::string& query) {
    int code = 0;
    if (query.rfind("status:", 0) == 0 && absl::SimpleAtoi(query.substr(7), &code)) {
      return grpc::Status(static_cast<grpc::StatusCode>(code), "scripted failure");
    }
    return grpc::Status::OK;
  }
};

class HttpGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    HttpGatewayOptions options;
    options.max_body_bytes = 4096;
    gateway_ = std::make_unique<HttpGateway>(server_->InProcessChannel(grpc::ChannelArguments()),
                                             options);
    ASSERT_TRUE(gateway_->Start("127.0.0.1", 0).ok());
    ASSERT_GT(gateway_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", gateway_->port());
    client_->set_read_timeout(30, 0);
  }
  void TearDown() override {
    gateway_->Stop();
    server_->Shutdown();
  }

  // ExpectError checks an error response: HTTP status, JSON code and a message fragment.
  void ExpectError(const httplib::Result& res, int http, const std::string& code,
                   const std::string& fragment) {
    ASSERT_TRUE(res) << "no response";
    EXPECT_EQ(res->status, http) << res->body;
    EXPECT_NE(res->get_header_value("Content-Type").find("application/json"), std::string::npos);
    auto body = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << res->body;
    EXPECT_EQ(body.value("code", ""), code) << res->body;
    EXPECT_NE(body.value("message", "").find(fragment), std::string::npos) << res->body;
  }

  FakeSearch service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpGateway> gateway_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpGatewayTest, SearchPostJsonRoundTrip) {
  auto res = client_->Post("/v1/search",
                           R"({"query":"oom label:bug","pageSize":5,"facets":["repo","label"]})",
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(service_.last_search.page_size(), 5);
  auto body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["total"], "1");  // int64 is a string in protobuf's JSON mapping
  EXPECT_EQ(body["hits"][0]["title"], "echo: oom label:bug");
  EXPECT_EQ(body["hits"][0]["repoSlug"], "github:o/r");
  EXPECT_EQ(body["hits"][0]["state"], "ISSUE_STATE_OPEN");
  EXPECT_EQ(body["hits"][0]["snippet"], "a <mark>match</mark> &amp; more");
  ASSERT_EQ(body["facets"].size(), 2u);
  EXPECT_EQ(body["facets"][1]["name"], "label");
  EXPECT_EQ(body["nextPageToken"], "");  // defaults are printed

  // Proto field names are accepted as well.
  res = client_->Post("/v1/search", R"({"query":"x","page_size":3})", "application/json");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(service_.last_search.page_size(), 3);
}

TEST_F(HttpGatewayTest, SearchGetParameters) {
  auto res = client_->Get("/v1/search?q=%22out%20of%20memory%22&page_size=7&page_token=tok"
                          "&facets=repo,%20theme,&facet_limit=3");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(service_.last_search.query(), "\"out of memory\"");
  EXPECT_EQ(service_.last_search.page_size(), 7);
  EXPECT_EQ(service_.last_search.page_token(), "tok");
  ASSERT_EQ(service_.last_search.facets_size(), 2);
  EXPECT_EQ(service_.last_search.facets(1), "theme");
  EXPECT_EQ(service_.last_search.facet_limit(), 3);
}

struct StatusCase {
  int grpc_code;
  int http;
  std::string name;
};

TEST_F(HttpGatewayTest, GrpcStatusMapsToHttp) {
  const std::vector<StatusCase> cases = {
      {3, 400, "INVALID_ARGUMENT"}, {5, 404, "NOT_FOUND"},   {14, 503, "UNAVAILABLE"},
      {4, 504, "DEADLINE_EXCEEDED"}, {12, 501, "UNIMPLEMENTED"}, {13, 500, "INTERNAL"},
      {15, 500, "DATA_LOSS"},        {8, 429, "RESOURCE_EXHAUSTED"},
  };
  for (const StatusCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string q = absl::StrCat("status:", c.grpc_code);
    ExpectError(client_->Get(("/v1/search?q=" + q).c_str()), c.http, c.name, "scripted failure");
    ExpectError(client_->Get(("/v1/aggregate?dimensions=repo&q=" + q).c_str()), c.http, c.name,
                "scripted failure");
    ExpectError(client_->Get(("/v1/export?q=" + q).c_str()), c.http, c.name, "scripted failure");
  }
}

struct BadRequestCase {
  std::string name;
  std::string method;
  std::string path;
  std::string body;
  int http;
  std::string code;
  std::string fragment;
};

TEST_F(HttpGatewayTest, BadRequestsAreClearErrors) {
  const std::vector<BadRequestCase> cases = {
      {"malformed json", "POST", "/v1/search", "{\"query\":", 400, "INVALID_ARGUMENT",
       "SearchRequest"},
      {"unknown json field", "POST", "/v1/search", R"({"qery":"x"})", 400, "INVALID_ARGUMENT",
       "qery"},
      {"unknown parameter", "GET", "/v1/search?query=x", "", 400, "INVALID_ARGUMENT",
       "unknown parameter 'query'"},
      {"bad page size", "GET", "/v1/search?page_size=ten", "", 400, "INVALID_ARGUMENT",
       "page_size"},
      {"bad export format", "GET", "/v1/export?format=xml", "", 400, "INVALID_ARGUMENT",
       "jsonl or csv"},
      {"bad snippets flag", "GET", "/v1/export?snippets=maybe", "", 400, "INVALID_ARGUMENT",
       "snippets"},
      {"bad issue number", "GET", "/v1/issues/github/o/r/abc", "", 400, "INVALID_ARGUMENT",
       "number"},
      {"missing issue", "GET", "/v1/issues/github/o/r/99", "", 404, "NOT_FOUND",
       "github:o/r#99"},
      {"no route", "GET", "/v1/nothing", "", 404, "NOT_FOUND", "/v1/nothing"},
      {"body too large", "POST", "/v1/search", std::string(10000, ' '), 413,
       "RESOURCE_EXHAUSTED", "4096 bytes"},
  };
  for (const BadRequestCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto res = c.method == "POST"
                   ? client_->Post(c.path.c_str(), c.body, "application/json")
                   : client_->Get(c.path.c_str());
    ExpectError(res, c.http, c.code, c.fragment);
  }
}

TEST_F(HttpGatewayTest, GetIssueWithNestedNamespace) {
  auto res = client_->Get("/v1/issues/gitlab/group/sub/proj/12");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["issue"]["title"], "found");
  EXPECT_EQ(body["comments"][0]["body"], "first comment");
}

TEST_F(HttpGatewayTest, AggregateGetAndPost) {
  auto res = client_->Get("/v1/aggregate?q=&dimensions=repo,theme");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  auto body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["dimensions"], nlohmann::json({"repo", "theme"}));
  EXPECT_EQ(body["rows"][0]["count"], "3");
  res = client_->Post("/v1/aggregate", R"({"dimensions":["kind"]})", "application/json");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["dimensions"], nlohmann::json({"kind"}));
}

TEST_F(HttpGatewayTest, ExportStreamsJsonl) {
  auto res = client_->Get("/v1/export?q=x&format=jsonl");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Transfer-Encoding"), "chunked");
  std::vector<std::string> lines = absl::StrSplit(res->body, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5000u);  // several chunks of 64 KiB
  for (size_t i = 0; i < lines.size(); i += 999) {
    auto hit = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(hit["number"], i + 1);
  }
}

TEST_F(HttpGatewayTest, ExportCsvQuotesFields) {
  auto res = client_->Get("/v1/export?format=csv&limit=2");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::vector<std::string> lines = absl::StrSplit(res->body, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], ExportCsvHeader().substr(0, ExportCsvHeader().size() - 2));
  const std::string prefix = "github:o/r,o/r,1,\"comma, \"\"quote\"\"\",";
  EXPECT_EQ(lines[1].rfind(prefix, 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",bug;module: cuda,"), std::string::npos) << lines[1];
}

TEST_F(HttpGatewayTest, EmptyExportIsJustTheHeader) {
  auto res = client_->Get("/v1/export?format=csv&q=empty");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(res->body, ExportCsvHeader());
  res = client_->Get("/v1/export?q=empty");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(res->body, "");
}

TEST_F(HttpGatewayTest, StatusAndHealth) {
  auto res = client_->Get("/v1/status");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["documents"], "42");
  res = client_->Get("/healthz");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(res->body, "ok\n");
}

TEST_F(HttpGatewayTest, ServesTheEmbeddedPage) {
  struct Asset {
    std::string path, type, fragment;
  };
  for (const Asset& a : std::vector<Asset>{{"/", "text/html", "<form id=\"search-form\""},
                                           {"/index.html", "text/html", "/app.js"},
                                           {"/app.js", "text/javascript", "function barChart"},
                                           {"/app.css", "text/css", ".facet"}}) {
    SCOPED_TRACE(a.path);
    auto res = client_->Get(a.path.c_str());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type").rfind(a.type, 0), 0u);
    EXPECT_NE(res->body.find(a.fragment), std::string::npos);
    // The page may load nothing from elsewhere.
    EXPECT_NE(res->get_header_value("Content-Security-Policy").find("default-src 'none'"),
              std::string::npos);
    // No URL of another origin (the SVG namespace name is an identifier, not a resource).
    const std::string body =
        absl::StrReplaceAll(res->body, {{"http://www.w3.org/2000/svg", ""}});
    EXPECT_EQ(body.find("http://"), std::string::npos);
    EXPECT_EQ(body.find("https://"), std::string::npos);
    EXPECT_EQ(body.find("//cdn"), std::string::npos);
  }
  ExpectError(client_->Get("/missing.js"), 404, "NOT_FOUND", "/missing.js");
}

// Invalid UTF-8 anywhere a request carries text is a 400 naming where, never a 500 from the
// proto3 string the gateway would have built.
TEST_F(HttpGatewayTest, InvalidUtf8IsABadRequestNamingTheParameter) {
  struct Case {
    std::string target;
    std::string names;
  };
  const std::vector<Case> cases = {
      {"/v1/search?q=%FF%FE", "parameter 'q'"},
      {"/v1/search?q=ok&page_token=%C0%AF", "parameter 'page_token'"},
      {"/v1/search?q=ok&facets=repo,%ED%A0%80", "parameter 'facets'"},
      {"/v1/search?q=ok&page_size=%FF", "parameter 'page_size'"},
      {"/v1/search?q=ok&counts_only=%F5%80%80%80", "parameter 'counts_only'"},
      {"/v1/search?%FF=1", "a parameter name"},
      {"/v1/aggregate?q=%FF&dimensions=kind", "parameter 'q'"},
      {"/v1/aggregate?q=x&dimensions=%E2%82", "parameter 'dimensions'"},
      {"/v1/export?q=%FF%FE", "parameter 'q'"},
      {"/v1/export?q=x&format=%FF", "parameter 'format'"},
      {"/v1/issues/%FF/o/r/1", "URL path"},
      {"/v1/issues/github/%FF/r/1", "URL path"},
      {"/v1/issues/github/o/%FE%FF/1", "URL path"},
      {"/v1/issues/github/o/r/%FF", "URL path"},
      {"/v1/status?x=%FF", "parameter 'x'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    ExpectError(client_->Get(c.target), 400, "INVALID_ARGUMENT", c.names);
    auto res = client_->Get(c.target);
    ASSERT_TRUE(res);
    EXPECT_NE(res->body.find("not valid UTF-8"), std::string::npos) << res->body;
  }
  // Valid multi-byte text passes.
  auto res = client_->Get("/v1/search?q=%E5%86%85%E5%AD%98");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  EXPECT_EQ(service_.last_search.query(), "内存");
}

TEST_F(HttpGatewayTest, CountsOnlyIsPassedOn) {
  auto res = client_->Get("/v1/search?q=x&counts_only=true&facets=repo");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  EXPECT_TRUE(service_.last_search.counts_only());
  res = client_->Get("/v1/search?q=x");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_FALSE(service_.last_search.counts_only());
  ExpectError(client_->Get("/v1/search?q=x&counts_only=maybe"), 400, "INVALID_ARGUMENT",
              "counts_only");
  res = client_->Post("/v1/search", R"({"query":"x","countsOnly":true})", "application/json");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "");
  EXPECT_TRUE(service_.last_search.counts_only());
}

TEST_F(HttpGatewayTest, NoCorsHeadersUnlessConfigured) {
  httplib::Headers origin = {{"Origin", "https://dash.example.org"}};
  auto res = client_->Get("/v1/search?q=x", origin);
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  res = client_->Options("/v1/search", origin);
  ASSERT_TRUE(res);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
}

TEST_F(HttpGatewayTest, CorsOriginWhenConfigured) {
  HttpGatewayOptions options;
  options.cors_origin = "https://dash.example.org";
  HttpGateway gateway(server_->InProcessChannel(grpc::ChannelArguments()), options);
  ASSERT_TRUE(gateway.Start("127.0.0.1", 0).ok());
  httplib::Client client("127.0.0.1", gateway.port());
  httplib::Headers origin = {{"Origin", "https://dash.example.org"},
                             {"Access-Control-Request-Method", "POST"}};
  auto res = client.Options("/v1/search", origin);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://dash.example.org");
  EXPECT_NE(res->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_NE(res->get_header_value("Access-Control-Allow-Headers").find("Content-Type"),
            std::string::npos);
  res = client.Get("/v1/search?q=x", origin);
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://dash.example.org");
  EXPECT_EQ(res->get_header_value("Vary"), "Origin");
  // Errors carry it too, so the page can read them.
  res = client.Get("/v1/search?q=x&bogus=1", origin);
  ASSERT_TRUE(res && res->status == 400);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://dash.example.org");
  // The page itself is not an API resource.
  res = client.Get("/", origin);
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  gateway.Stop();
}

// With a certificate the gateway serves HTTPS only; its TLS errors name the flag and the file.
TEST_F(HttpGatewayTest, ServesHttpsOnlyWithACertificate) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string dir = ::testing::TempDir() + "issuescope-gateway-tls";
  auto certs = MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  HttpGatewayOptions options;
  options.tls.cert = certs->server_cert;
  options.tls.key = certs->server_key;
  HttpGateway gateway(server_->InProcessChannel(grpc::ChannelArguments()), options);
  ASSERT_TRUE(gateway.Start("127.0.0.1", 0).ok());

  httplib::SSLClient https("127.0.0.1", gateway.port());
  https.set_ca_cert_path(certs->ca);
  https.enable_server_certificate_verification(true);
  https.set_connection_timeout(10);
  auto res = https.Get("/v1/search?q=encrypted");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(service_.last_search.query(), "encrypted");
  httplib::Client plain("127.0.0.1", gateway.port());
  plain.set_connection_timeout(10);
  plain.set_read_timeout(10);
  auto refused = plain.Get("/healthz");
  EXPECT_FALSE(refused && refused->status == 200) << "plain HTTP answered";
  gateway.Stop();

  options.tls.cert_flag = "--http-tls-cert";
  options.tls.cert = dir + "/missing.pem";
  HttpGateway bad(server_->InProcessChannel(grpc::ChannelArguments()), options);
  absl::Status started = bad.Start("127.0.0.1", 0);
  EXPECT_EQ(started.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(started.message(), "--http-tls-cert " + dir + "/missing.pem: cannot read");
  std::filesystem::remove_all(dir);
}

TEST(ParseHostPortTest, Table) {
  struct Case {
    std::string in;
    bool ok;
    std::string host;
    int port;
  };
  for (const Case& c : std::vector<Case>{{"127.0.0.1:0", true, "127.0.0.1", 0},
                                         {"localhost:8080", true, "localhost", 8080},
                                         {"[::1]:9000", true, "::1", 9000},
                                         {"127.0.0.1", false, "", 0},
                                         {":80", false, "", 0},
                                         {"h:70000", false, "", 0},
                                         {"h:x", false, "", 0}}) {
    SCOPED_TRACE(c.in);
    auto r = ParseHostPort(c.in);
    ASSERT_EQ(r.ok(), c.ok) << r.status();
    if (!c.ok) {
      EXPECT_NE(r.status().message().find(c.in), absl::string_view::npos);
      continue;
    }
    EXPECT_EQ(r->first, c.host);
    EXPECT_EQ(r->second, c.port);
  }
}

}  // namespace
}  // namespace issuescope::search::web
