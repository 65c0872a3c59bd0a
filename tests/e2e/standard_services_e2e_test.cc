// Every issuescope daemon, as a real process on loopback, carries the standard services generic
// tools rely on (common/grpc_server.h): health per served service (Check and Watch) and server
// reflection v1 (list, file_containing_symbol, errors), so `grpc_health_probe -service=NAME`,
// Kubernetes gRPC probes and current grpcurl work against it.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/subprocess.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "gtest/gtest.h"

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

  // Start runs the daemon and returns a channel to it.
  std::shared_ptr<grpc::Channel> Start(const Daemon& d) {
    std::vector<std::string> argv = {Bin(d.name), "--listen=127.0.0.1:0",
                                     "--port-file=" + dir_ + "/port"};
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
    return grpc::CreateChannel(absl::StrCat("127.0.0.1:", *port),
                               grpc::InsecureChannelCredentials());
  }

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

INSTANTIATE_TEST_SUITE_P(
    Daemons, StandardServicesTest,
    ::testing::Values(
        Daemon{"issuescope-search", {"--index=DIR/index"}, "issuescope.v1.Search"},
        Daemon{"issuescope-coordinator", {"--data=DIR/coordinator"}, "issuescope.v1.Coordinator"},
        // A worker serves its store even before its coordinator answers.
        Daemon{"issuescope-crawler",
               {"--data=DIR/worker", "--coordinator=127.0.0.1:1", "--drain-timeout-s=0"},
               "issuescope.v1.IssueStore"}),
    [](const ::testing::TestParamInfo<Daemon>& info) {
      std::string name = info.param.name.substr(info.param.name.find('-') + 1);
      return name;
    });

}  // namespace
}  // namespace issuescope
