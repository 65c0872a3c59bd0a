// Every issuescope daemon, as a real process on loopback, carries the standard services generic
// tools rely on (common/grpc_server.h): health per served service (Check and Watch) and server
// reflection v1 (list, file_containing_symbol, errors), so `grpc_health_probe -service=NAME`,
// Kubernetes gRPC probes and current grpcurl work against it. With --tls-cert/--tls-key each
// listener serves TLS only (plaintext clients are refused, clients trusting the CA served), with
// --tls-client-ca only to clients with a certificate the CA signed; the search service's HTTP
// listener serves HTTPS with the same certificate. Bad TLS files exit 2 naming flag and file.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_channel.h"
#include "common/subprocess.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/common/test_certificates.h"

namespace issuescope {
namespace {

namespace health = grpc::health::v1;
namespace rv1 = grpc::reflection::v1;

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return context;
}

struct Daemon {
  std::string name;                 // binary
  std::vector<std::string> flags;   // besides --listen/--port-file
  std::string service;              // the issuescope service it serves
};

void PrintTo(const Daemon& d, std::ostream* os) { *os << d.name; }

class StandardServicesTest : public ::testing::TestWithParam<Daemon> {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/issuescope-standard-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
  }
  void TearDown() override {
    if (child_ != nullptr) {
      child_->Signal(SIGTERM);
      int status = 0;
      child_->Wait(absl::Seconds(30), &status);
    }
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  // Start runs the daemon (with `extra` flags) and returns a channel to it, made with
  // `credentials` (default plaintext).
  std::shared_ptr<grpc::Channel> Start(
      const Daemon& d, const std::vector<std::string>& extra = {},
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials()) {
    std::vector<std::string> argv = {Bin(d.name), "--listen=127.0.0.1:0",
                                     "--port-file=" + dir_ + "/port"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const std::string& f : d.flags) {
      std::string flag = f;
      const size_t at = flag.find("DIR");
      if (at != std::string::npos) flag.replace(at, 3, dir_);
      argv.push_back(flag);
    }
    auto child = Subprocess::Start(argv, dir_ + "/daemon.log");
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return nullptr;
    child_ = std::move(*child);
    auto port = WaitForPortFile(dir_ + "/port", absl::Seconds(30), child_.get());
    EXPECT_TRUE(port.ok()) << port.status();
    if (!port.ok()) return nullptr;
    address_ = absl::StrCat("127.0.0.1:", *port);
    return grpc::CreateChannel(address_, credentials);
  }

  // Serving says whether a health check of "" succeeds over `channel`.
  static bool Serving(const std::shared_ptr<grpc::Channel>& channel) {
    health::HealthCheckResponse response;
    grpc::Status status = health::Health::NewStub(channel)->Check(
        Context().get(), health::HealthCheckRequest(), &response);
    return status.ok() && response.status() == health::HealthCheckResponse::SERVING;
  }

  // Channel makes a channel to the started daemon as a client with `tls`.
  std::shared_ptr<grpc::Channel> Channel(const ClientTlsFiles& tls) {
    auto credentials = ChannelCredentialsFor(tls);
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    return grpc::CreateChannel(address_,
                               credentials.ok() ? *credentials : grpc::InsecureChannelCredentials());
  }

  std::string address_;

  std::string dir_;
  std::unique_ptr<Subprocess> child_;
};

TEST_P(StandardServicesTest, HealthAnswersPerService) {
  const Daemon& d = GetParam();
  auto channel = Start(d);
  ASSERT_NE(channel, nullptr);
  auto stub = health::Health::NewStub(channel);
  for (const std::string& name : {std::string(""), d.service,
                                  std::string("grpc.reflection.v1.ServerReflection")}) {
    health::HealthCheckRequest request;
    request.set_service(name);
    health::HealthCheckResponse response;
    grpc::Status status = stub->Check(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << "'" << name << "': " << status.error_message();
    EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING) << name;
  }
  health::HealthCheckRequest unknown;
  unknown.set_service("issuescope.v1.NoSuchService");
  health::HealthCheckResponse response;
  EXPECT_EQ(stub->Check(Context().get(), unknown, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // Watch streams the current status first.
  health::HealthCheckRequest watch;
  watch.set_service(d.service);
  auto context = Context();
  auto reader = stub->Watch(context.get(), watch);
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), health::HealthCheckResponse::SERVING);
  context->TryCancel();
  reader->Finish();
}

TEST_P(StandardServicesTest, ReflectionV1ListsAndDescribes) {
  const Daemon& d = GetParam();
  auto channel = Start(d);
  ASSERT_NE(channel, nullptr);
  auto stub = rv1::ServerReflection::NewStub(channel);
  auto context = Context();
  auto stream = stub->ServerReflectionInfo(context.get());

  rv1::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  rv1::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> names;
  for (const auto& s : response.list_services_response().service()) names.push_back(s.name());
  EXPECT_NE(std::find(names.begin(), names.end(), d.service), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "grpc.reflection.v1.ServerReflection"),
            names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "grpc.health.v1.Health"), names.end());

  // The service's file comes with its imports (model.proto, timestamp.proto).
  rv1::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol(d.service);
  ASSERT_TRUE(stream->Write(symbol));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_TRUE(response.has_file_descriptor_response()) << response.DebugString();
  ASSERT_GE(response.file_descriptor_response().file_descriptor_proto_size(), 2);
  google::protobuf::FileDescriptorProto file;
  ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
  bool declares = false;
  for (const auto& s : file.service()) declares |= absl::StrCat(file.package(), ".", s.name()) == d.service;
  EXPECT_TRUE(declares) << file.name();

  rv1::ServerReflectionRequest missing;
  missing.set_file_containing_symbol("issuescope.v1.Nothing");
  ASSERT_TRUE(stream->Write(missing));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(response.original_request().file_containing_symbol(), "issuescope.v1.Nothing");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_P(StandardServicesTest, TlsListenerRefusesPlaintext) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const Daemon& d = GetParam();
  auto certs = MakeTestCertificates(dir_ + "/pki");
  ASSERT_TRUE(certs.ok()) << certs.status();
  std::vector<std::string> tls = {"--tls-cert=" + certs->server_cert,
                                  "--tls-key=" + certs->server_key};
  const bool search = d.name == "issuescope-search";
  if (search) {
    tls.insert(tls.end(), {"--http-listen=127.0.0.1:0", "--http-port-file=" + dir_ + "/http"});
  }
  ClientTlsFiles trusting;
  trusting.ca = certs->ca;
  auto channel = Start(d, tls, *ChannelCredentialsFor(trusting));
  ASSERT_NE(channel, nullptr);
  EXPECT_TRUE(Serving(channel)) << "a client trusting the CA is served over TLS";
  EXPECT_FALSE(Serving(Channel(ClientTlsFiles()))) << "a plaintext client is refused";
  if (search) {
    auto port = WaitForPortFile(dir_ + "/http", absl::Seconds(30), child_.get());
    ASSERT_TRUE(port.ok()) << port.status();
    httplib::SSLClient https("127.0.0.1", *port);
    https.set_ca_cert_path(certs->ca);
    https.enable_server_certificate_verification(true);
    auto res = https.Get("/healthz");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    httplib::Client plain("127.0.0.1", *port);
    plain.set_read_timeout(10, 0);
    auto refused = plain.Get("/healthz");
    EXPECT_FALSE(refused && refused->status == 200) << "plain HTTP answered";
  }
}

// The daemons with --tls-client-ca (mTLS): the stores and the search service. The coordinator
// has none yet (docs/SECURITY.md, "Not built yet").
class ClientCaTest : public StandardServicesTest {};

TEST_P(ClientCaTest, TlsClientCaRequiresAClientCertificate) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const Daemon& d = GetParam();
  auto certs = MakeTestCertificates(dir_ + "/pki");
  ASSERT_TRUE(certs.ok()) << certs.status();
  ClientTlsFiles client;
  client.ca = certs->ca;
  client.cert = certs->client_cert;
  client.key = certs->client_key;
  auto channel = Start(d,
                       {"--tls-cert=" + certs->server_cert, "--tls-key=" + certs->server_key,
                        "--tls-client-ca=" + certs->ca},
                       *ChannelCredentialsFor(client));
  ASSERT_NE(channel, nullptr);
  EXPECT_TRUE(Serving(channel)) << "a client with a certificate the CA signed is served";
  ClientTlsFiles anonymous;
  anonymous.ca = certs->ca;
  EXPECT_FALSE(Serving(Channel(anonymous))) << "a client without a certificate is refused";
  ClientTlsFiles stranger = client;
  stranger.cert = certs->stranger_cert;
  stranger.key = certs->stranger_key;
  EXPECT_FALSE(Serving(Channel(stranger))) << "a certificate of another CA is refused";
}

TEST_P(StandardServicesTest, BadTlsFilesExitTwoNamingFlagAndFile) {
  const Daemon& d = GetParam();
  const std::string not_pem = dir_ + "/not-a-certificate.txt";
  std::ofstream(not_pem) << "hello\n";
  std::vector<std::string> argv = {Bin(d.name), "--listen=127.0.0.1:0", "--tls-cert=" + not_pem,
                                   "--tls-key=" + not_pem};
  for (const std::string& f : d.flags) {
    std::string flag = f;
    const size_t at = flag.find("DIR");
    if (at != std::string::npos) flag.replace(at, 3, dir_);
    argv.push_back(flag);
  }
  auto child = Subprocess::Start(argv, dir_ + "/bad.log");
  ASSERT_TRUE(child.ok()) << child.status();
  int status = 0;
  ASSERT_TRUE((*child)->Wait(absl::Seconds(30), &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  std::ifstream in(dir_ + "/bad.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_TRUE(absl::StrContains(log.str(), "--tls-cert " + not_pem + ": not a PEM CERTIFICATE"))
      << log.str();
}

const Daemon kSearch{"issuescope-search", {"--index=DIR/index"}, "issuescope.v1.Search"};
const Daemon kCoordinator{"issuescope-coordinator", {"--data=DIR/coordinator"},
                          "issuescope.v1.Coordinator"};
// A worker serves its store even before its coordinator answers.
const Daemon kWorker{"issuescope-crawler",
                     {"--data=DIR/worker", "--coordinator=127.0.0.1:1", "--drain-timeout-s=0"},
                     "issuescope.v1.IssueStore"};

std::string DaemonName(const ::testing::TestParamInfo<Daemon>& info) {
  return info.param.name.substr(info.param.name.find('-') + 1);
}

INSTANTIATE_TEST_SUITE_P(Daemons, StandardServicesTest,
                         ::testing::Values(kSearch, kCoordinator, kWorker), DaemonName);
INSTANTIATE_TEST_SUITE_P(Daemons, ClientCaTest, ::testing::Values(kSearch, kWorker), DaemonName);

}  // namespace
}  // namespace issuescope
