#include "common/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace issuescope {
namespace {

namespace rv1 = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

constexpr char kReflectionV1[] = "grpc.reflection.v1.ServerReflection";
constexpr char kReflectionV1Alpha[] = "grpc.reflection.v1alpha.ServerReflection";

// AddFile appends `file` and its dependencies not yet in `sent` (dependencies first is not
// required by the protocol; the file asked for comes first, as gRPC's own server does).
void AddFile(const FileDescriptor* file, std::set<std::string>* sent,
             rv1::FileDescriptorResponse* out) {
  if (!sent->insert(file->name()).second) return;
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(out->add_file_descriptor_proto());
  for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i), sent, out);
}

void SetError(rv1::ServerReflectionResponse* response, grpc::StatusCode code,
              std::string message) {
  response->mutable_error_response()->set_error_code(code);
  response->mutable_error_response()->set_error_message(std::move(message));
}

}  // namespace

ReflectionV1Service::ReflectionV1Service(std::vector<std::string> services)
    : services_(std::move(services)) {}

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<rv1::ServerReflectionResponse, rv1::ServerReflectionRequest>*
        stream) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  std::set<std::string> sent;  // files already sent on this stream
  rv1::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    rv1::ServerReflectionResponse response;
    response.set_valid_host(request.host());
    *response.mutable_original_request() = request;
    switch (request.message_request_case()) {
      case rv1::ServerReflectionRequest::kListServices:
        for (const std::string& name : services_) {
          response.mutable_list_services_response()->add_service()->set_name(name);
        }
        break;
      case rv1::ServerReflectionRequest::kFileByFilename: {
        const FileDescriptor* file = pool->FindFileByName(request.file_by_filename());
        if (file == nullptr) {
          SetError(&response, grpc::StatusCode::NOT_FOUND,
                   absl::StrCat("file not found: ", request.file_by_filename()));
        } else {
          AddFile(file, &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case rv1::ServerReflectionRequest::kFileContainingSymbol: {
        const FileDescriptor* file =
            pool->FindFileContainingSymbol(request.file_containing_symbol());
        if (file == nullptr) {
          SetError(&response, grpc::StatusCode::NOT_FOUND,
                   absl::StrCat("symbol not found: ", request.file_containing_symbol()));
        } else {
          AddFile(file, &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case rv1::ServerReflectionRequest::kFileContainingExtension: {
        const rv1::ExtensionRequest& ext = request.file_containing_extension();
        const google::protobuf::Descriptor* type = pool->FindMessageTypeByName(ext.containing_type());
        const google::protobuf::FieldDescriptor* field =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, ext.extension_number());
        if (field == nullptr) {
          SetError(&response, grpc::StatusCode::NOT_FOUND,
                   absl::StrCat("extension not found: ", ext.containing_type(), " ",
                                ext.extension_number()));
        } else {
          AddFile(field->file(), &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case rv1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const google::protobuf::Descriptor* type =
            pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          SetError(&response, grpc::StatusCode::NOT_FOUND,
                   absl::StrCat("type not found: ", request.all_extension_numbers_of_type()));
        } else {
          std::vector<const google::protobuf::FieldDescriptor*> extensions;
          pool->FindAllExtensions(type, &extensions);
          auto* out = response.mutable_all_extension_numbers_response();
          out->set_base_type_name(type->full_name());
          for (const auto* f : extensions) out->add_extension_number(f->number());
        }
        break;
      }
      case rv1::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
        SetError(&response, grpc::StatusCode::INVALID_ARGUMENT,
                 "request names none of file_by_filename, file_containing_symbol, "
                 "file_containing_extension, all_extension_numbers_of_type, list_services");
        break;
    }
    if (!stream->Write(response)) break;
    if (context->IsCancelled()) break;
  }
  return grpc::Status::OK;
}

StandardServices::StandardServices(std::vector<std::string> services)
    : services_(std::move(services)) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::vector<std::string> listed = services_;
  listed.push_back("grpc.health.v1.Health");
  listed.push_back(kReflectionV1);
  listed.push_back(kReflectionV1Alpha);
  reflection_v1_ = std::make_unique<ReflectionV1Service>(std::move(listed));
}

void StandardServices::Register(grpc::ServerBuilder* builder) {
  builder->RegisterService(reflection_v1_.get());
}

void StandardServices::MarkServing(grpc::Server* server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(serving);  // "" and every name set so far
  for (const std::string& name : services_) health->SetServingStatus(name, serving);
  health->SetServingStatus(kReflectionV1, serving);
  health->SetServingStatus(kReflectionV1Alpha, serving);
}

}  // namespace issuescope
