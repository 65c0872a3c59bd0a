// TLS of every listener and client (common/tls.h, common/grpc_channel.h), with certificates the
// openssl command makes at test time: errors name the flag and the file; a gRPC listener with a
// certificate refuses plaintext clients and clients that trust another CA and serves those that
// trust its CA; with a client CA it also refuses clients without a certificate or with one
// another CA signed; HTTPS (cpp-httplib) behaves the same.
#include "common/tls.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/grpc_channel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "issuescope/v1/store.grpc.pb.h"
#include "tests/common/test_certificates.h"

namespace issuescope {
namespace {

using ::testing::HasSubstr;

// Store answers GetStoreInfo with a fixed id: any call that reaches it got through TLS.
class Store final : public v1::IssueStore::Service {
 public:
  grpc::Status GetStoreInfo(grpc::ServerContext*, const v1::GetStoreInfoRequest*,
                            v1::StoreInfo* info) override {
    info->set_store_id("tls-store");
    return grpc::Status::OK;
  }
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HasOpenssl()) return;
    dir_ = new std::string(std::filesystem::temp_directory_path() /
                           ("issuescope-tls-test-" + std::to_string(::getpid())));
    auto made = MakeTestCertificates(*dir_);
    ASSERT_TRUE(made.ok()) << made.status();
    certs_ = new TestCertificates(*made);
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
  }
  void SetUp() override {
    if (certs_ == nullptr) GTEST_SKIP() << "no openssl command";
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  }

  // Serve starts the store on 127.0.0.1 with `tls` and returns its address.
  std::string Serve(const ServerTlsFiles& tls) {
    auto credentials = ServerCredentialsFor(tls);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    if (!credentials.ok()) return "";
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port);
    builder.RegisterService(&store_);
    server_ = builder.BuildAndStart();
    EXPECT_GT(port, 0);
    return "127.0.0.1:" + std::to_string(port);
  }

  // Call asks `address` for its store id as a client with `tls`; "" when the call fails.
  std::string Call(const std::string& address, const ClientTlsFiles& tls) {
    auto credentials = ChannelCredentialsFor(tls);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    if (!credentials.ok()) return "";
    auto stub = v1::IssueStore::NewStub(grpc::CreateChannel(address, *credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::StoreInfo info;
    grpc::Status status = stub->GetStoreInfo(&context, v1::GetStoreInfoRequest(), &info);
    return status.ok() ? info.store_id() : "";
  }

  ServerTlsFiles ServerTls(const std::string& client_ca = "") const {
    ServerTlsFiles tls;
    tls.cert = certs_->server_cert;
    tls.key = certs_->server_key;
    tls.client_ca = client_ca;
    return tls;
  }
  ClientTlsFiles ClientTls(const std::string& ca, const std::string& cert = "",
                           const std::string& key = "") const {
    ClientTlsFiles tls;
    tls.ca = ca;
    tls.cert = cert;
    tls.key = key;
    return tls;
  }

  static std::string* dir_;
  static TestCertificates* certs_;
  Store store_;
  std::unique_ptr<grpc::Server> server_;
};

std::string* TlsTest::dir_ = nullptr;
TestCertificates* TlsTest::certs_ = nullptr;

TEST_F(TlsTest, ServerFileErrorsNameTheFlagAndTheFile) {
  const TestCertificates& c = *certs_;
  struct Case {
    std::string name;
    ServerTlsFiles files;
    std::string message;
  };
  ServerTlsFiles http;  // another listener's flags
  http.cert = "/no/such.pem";
  http.key = c.server_key;
  http.cert_flag = "--http-tls-cert";
  http.key_flag = "--http-tls-key";
  const std::vector<Case> cases = {
      {"cert without key", {c.server_cert, "", ""}, "--tls-key is missing"},
      {"key without cert", {"", c.server_key, ""}, "--tls-cert is missing"},
      {"client CA without cert", {"", "", c.ca}, "--tls-client-ca needs --tls-cert"},
      {"unreadable cert", {"/no/such.pem", c.server_key, ""},
       "--tls-cert /no/such.pem: cannot read"},
      {"unreadable key", {c.server_cert, "/no/such.key", ""},
       "--tls-key /no/such.key: cannot read"},
      {"files swapped", {c.server_key, c.server_cert, ""},
       "--tls-cert " + c.server_key + ": not a PEM CERTIFICATE"},
      {"another certificate's key", {c.server_cert, c.client_key, ""},
       "--tls-key " + c.client_key + " is not the private key of --tls-cert " + c.server_cert},
      {"client CA is a key", {c.server_cert, c.server_key, c.server_key},
       "--tls-client-ca " + c.server_key + ": not a PEM CERTIFICATE"},
      {"other flags", http, "--http-tls-cert /no/such.pem: cannot read"},
  };
  for (const Case& t : cases) {
    SCOPED_TRACE(t.name);
    absl::Status status = CheckServerTlsFiles(t.files);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()), HasSubstr(t.message));
    EXPECT_EQ(ServerCredentialsFor(t.files).status(), status);
    EXPECT_EQ(MakeHttpServer(t.files).status(), status);
  }
  EXPECT_TRUE(ServerCredentialsFor(ServerTlsFiles()).ok()) << "no files: plaintext";
  EXPECT_TRUE(CheckServerTlsFiles(ServerTls(c.ca)).ok());
}

TEST_F(TlsTest, ClientFileErrorsNameTheFlagAndTheFile) {
  const TestCertificates& c = *certs_;
  ClientTlsFiles store = ClientTls("/no/ca.pem");
  store.ca_flag = "--store-tls-ca";
  const std::vector<std::pair<ClientTlsFiles, std::string>> cases = {
      {store, "--store-tls-ca /no/ca.pem: cannot read"},
      {ClientTls(c.server_key), "--tls-ca " + c.server_key + ": not a PEM CERTIFICATE"},
      {ClientTls(c.ca, c.client_cert, ""), "--tls-key is missing"},
      {ClientTls("", c.client_cert, c.client_key), "--tls-cert needs --tls-ca"},
      {ClientTls(c.ca, c.client_cert, "/no/key"), "--tls-key /no/key: cannot read"},
  };
  for (const auto& [files, message] : cases) {
    SCOPED_TRACE(message);
    auto credentials = ChannelCredentialsFor(files);
    EXPECT_EQ(credentials.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(credentials.status().message()), HasSubstr(message));
  }
  EXPECT_TRUE(ChannelCredentialsFor(ClientTlsFiles()).ok()) << "no files: plaintext";
}

TEST_F(TlsTest, GrpcListenerServesTlsOnlyToClientsTrustingItsCa) {
  const std::string address = Serve(ServerTls());
  EXPECT_EQ(Call(address, ClientTls(certs_->ca)), "tls-store");
  EXPECT_EQ(Call(address, ClientTlsFiles()), "") << "plaintext refused";
  EXPECT_EQ(Call(address, ClientTls(*dir_ + "/other-ca.pem")), "") << "another CA refused";
  // A client certificate is not needed, and harmless.
  EXPECT_EQ(Call(address, ClientTls(certs_->ca, certs_->client_cert, certs_->client_key)),
            "tls-store");
}

TEST_F(TlsTest, GrpcListenerWithClientCaRequiresACertificateItSigned) {
  const std::string address = Serve(ServerTls(certs_->ca));
  EXPECT_EQ(Call(address, ClientTls(certs_->ca, certs_->client_cert, certs_->client_key)),
            "tls-store");
  EXPECT_EQ(Call(address, ClientTls(certs_->ca)), "") << "no client certificate";
  EXPECT_EQ(Call(address, ClientTls(certs_->ca, certs_->stranger_cert, certs_->stranger_key)), "")
      << "a certificate of another CA";
  EXPECT_EQ(Call(address, ClientTlsFiles()), "") << "plaintext";
}

// Https serves GET /ping with `tls` on 127.0.0.1 while it lives.
class Https {
 public:
  explicit Https(const ServerTlsFiles& tls) {
    auto server = MakeHttpServer(tls);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return;
    server_ = *std::move(server);
    server_->Get("/ping", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("pong", "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::yield();
  }
  ~Https() {
    if (server_ != nullptr) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// Get fetches /ping over HTTPS trusting `ca` (with a client certificate when given); "" on error.
std::string HttpsGet(int port, const std::string& ca, const std::string& cert = "",
                     const std::string& key = "") {
  httplib::SSLClient client("127.0.0.1", port, cert, key);
  client.set_ca_cert_path(ca);
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(10, 0);
  auto res = client.Get("/ping");
  return res && res->status == 200 ? res->body : "";
}

TEST_F(TlsTest, HttpsServesOnlyTlsClientsTrustingItsCa) {
  Https server(ServerTls());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(HttpsGet(server.port(), certs_->ca), "pong");
  EXPECT_EQ(HttpsGet(server.port(), *dir_ + "/other-ca.pem"), "") << "another CA";
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_connection_timeout(10, 0);
  plain.set_read_timeout(10, 0);
  auto res = plain.Get("/ping");
  EXPECT_FALSE(res && res->status == 200) << "plain HTTP answered: " << res->body;
}

TEST_F(TlsTest, HttpsWithClientCaRequiresACertificateItSigned) {
  Https server(ServerTls(certs_->ca));
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(HttpsGet(server.port(), certs_->ca, certs_->client_cert, certs_->client_key), "pong");
  EXPECT_EQ(HttpsGet(server.port(), certs_->ca), "") << "no client certificate";
  EXPECT_EQ(HttpsGet(server.port(), certs_->ca, certs_->stranger_cert, certs_->stranger_key), "")
      << "a certificate of another CA";
}

}  // namespace
}  // namespace issuescope
