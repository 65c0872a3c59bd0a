// The standard services every issuescope gRPC server carries, so generic tools work against it:
//
// - grpc.health.v1.Health (gRPC's default service) answering for the server ("") and for each
//   service it serves by its full name ("issuescope.v1.Search"), so `grpc_health_probe
//   -service=issuescope.v1.Search` and Kubernetes gRPC probes check the service they mean;
//   Check and Watch both. An unknown name is NOT_FOUND (Check) / SERVICE_UNKNOWN (Watch).
// - grpc.reflection.v1alpha.ServerReflection (gRPC's plugin) and
//   grpc.reflection.v1.ServerReflection (ReflectionV1Service below: gRPC 1.51 lacks it, and
//   current grpcurl and tools ask v1 first).
//
// Usage, in a binary's main:
//   StandardServices standard({v1::Search::service_full_name()});   // before the builder
//   grpc::ServerBuilder builder;
//   standard.Register(&builder);
//   builder.RegisterService(&service);
//   auto server = builder.BuildAndStart();
//   standard.MarkServing(server.get());
//
// Thread-safety: MarkServing may be called from any thread (e.g. NOT_SERVING on shutdown).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace issuescope {

// ReflectionV1Service answers grpc.reflection.v1 from the process's generated descriptor pool:
// list_services lists `services`; file_by_filename, file_containing_symbol,
// file_containing_extension and all_extension_numbers_of_type answer from the pool (each file
// with its dependencies not yet sent on the stream); anything unknown is an ErrorResponse
// NOT_FOUND naming it.
class ReflectionV1Service final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  explicit ReflectionV1Service(std::vector<std::string> services);

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

 private:
  std::vector<std::string> services_;
};

// StandardServices sets up health and reflection for a server serving `services` (full names).
// The constructor turns on gRPC's default health service and reflection plugin, so it must run
// before the grpc::ServerBuilder is constructed.
class StandardServices {
 public:
  explicit StandardServices(std::vector<std::string> services);

  // Register adds the reflection v1 service to `builder`.
  void Register(grpc::ServerBuilder* builder);

  // MarkServing sets the health status of "" and of every service to SERVING (or NOT_SERVING).
  void MarkServing(grpc::Server* server, bool serving = true);

 private:
  std::vector<std::string> services_;
  std::unique_ptr<ReflectionV1Service> reflection_v1_;
};

}  // namespace issuescope
