// The one place absl::Status and grpc::Status are converted into each other. Abseil's codes map
// 1:1 onto gRPC's.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace issuescope {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace issuescope
