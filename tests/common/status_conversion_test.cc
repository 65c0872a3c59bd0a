// The status conversions (common/grpc_status.h, common/rocksdb_status.h,
// common/xapian_status.h): every code crosses the gRPC boundary unchanged, and RocksDB's
// statuses and Xapian's exceptions map to codes callers act on.
#include <string>

#include "absl/status/status.h"
#include "common/grpc_status.h"
#include "common/rocksdb_status.h"
#include "common/xapian_status.h"
#include "gtest/gtest.h"

namespace issuescope {
namespace {

TEST(StatusConversionTest, EveryCodeAndMessageCrossesGrpcUnchanged) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  for (int code = 1; code <= 16; ++code) {
    const absl::Status in(static_cast<absl::StatusCode>(code), "lease 7 is stale");
    const grpc::Status wire = ToGrpcStatus(in);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(wire.error_message(), "lease 7 is stale");
    EXPECT_EQ(FromGrpcStatus(wire), in) << absl::StatusCodeToString(in.code());
  }
}

TEST(StatusConversionTest, RocksStatusesMapToActionableCodes) {
  EXPECT_TRUE(FromRocksStatus(rocksdb::Status::OK(), "x").ok());
  struct Case {
    rocksdb::Status in;
    absl::StatusCode want;
  };
  const Case cases[] = {
      {rocksdb::Status::NotFound("k"), absl::StatusCode::kNotFound},
      {rocksdb::Status::InvalidArgument("bad option"), absl::StatusCode::kInvalidArgument},
      {rocksdb::Status::Corruption("block checksum"), absl::StatusCode::kDataLoss},
      {rocksdb::Status::IOError("disk full"), absl::StatusCode::kUnavailable},
      {rocksdb::Status::Busy(), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TimedOut(), absl::StatusCode::kUnavailable},
      {rocksdb::Status::TryAgain(), absl::StatusCode::kUnavailable},
      {rocksdb::Status::NotSupported("x"), absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    const absl::Status out = FromRocksStatus(c.in, "opening store /var/lib/x");
    EXPECT_EQ(out.code(), c.want) << c.in.ToString();
    // The message says what was being done, then RocksDB's own words.
    EXPECT_EQ(out.message().find("opening store /var/lib/x: "), 0u) << out.message();
    EXPECT_NE(out.message().find(c.in.ToString()), std::string::npos) << out.message();
  }
}

TEST(StatusConversionTest, XapianErrorsMapToActionableCodes) {
  struct Case {
    absl::Status got;
    absl::StatusCode want;
  };
  const std::string what = "committing index /x";
  const Case cases[] = {
      {FromXapianError(Xapian::DatabaseLockError("held"), what),
       absl::StatusCode::kFailedPrecondition},
      {FromXapianError(Xapian::DatabaseOpeningError("no such dir"), what),
       absl::StatusCode::kUnavailable},
      {FromXapianError(Xapian::DatabaseNotFoundError("gone"), what),
       absl::StatusCode::kUnavailable},
      {FromXapianError(Xapian::NetworkTimeoutError("slow"), what), absl::StatusCode::kUnavailable},
      {FromXapianError(Xapian::DatabaseModifiedError("newer revision"), what),
       absl::StatusCode::kAborted},
      {FromXapianError(Xapian::DatabaseCorruptError("bad block"), what),
       absl::StatusCode::kDataLoss},
      {FromXapianError(Xapian::DocNotFoundError("doc 7"), what), absl::StatusCode::kNotFound},
      {FromXapianError(Xapian::QueryParserError("syntax"), what),
       absl::StatusCode::kInvalidArgument},
      {FromXapianError(Xapian::RangeError("slot"), what), absl::StatusCode::kInternal},
      {FromXapianError(Xapian::InvalidArgumentError("bad slot"), what),
       absl::StatusCode::kInternal},
      {FromXapianError(Xapian::UnimplementedError("inmemory"), what),
       absl::StatusCode::kUnimplemented},
      {FromXapianError(Xapian::DatabaseError("disk"), what), absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.got.code(), c.want) << c.got;
    EXPECT_EQ(c.got.message().find(what + ": "), 0u) << c.got;
  }
}

}  // namespace
}  // namespace issuescope
