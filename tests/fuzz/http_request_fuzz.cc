// Fuzz target: what the HTTP gateway (search/web/) does with a request before the gRPC call,
// the parts that need no socket (search/web/json_api.h, ParseHostPort): a POST body read as a
// SearchRequest and as an AggregateRequest with protobuf's JSON mapping (and, when accepted,
// rendered back and read again to the same message), the UTF-8 check every parameter passes
// (compared with common/text_tokens.h's IsValidUtf8: two implementations, one answer), the
// integer and boolean parameters, comma lists and the --http-listen address.
// The routes themselves (HttpGateway::Search …) are private members behind cpp-httplib's
// server and a gRPC stub, so they are not called here; each is a few lines over these pieces.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "common/text_tokens.h"
#include "issuescope/v1/search.pb.h"
#include "search/web/http_gateway.h"
#include "search/web/json_api.h"

namespace web = issuescope::search::web;

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

template <typename Message>
void RoundTrip(absl::string_view body) {
  Message message;
  if (!web::JsonToMessage(body, &message).ok()) return;
  const std::string json = web::MessageToJson(message);
  Message again;
  Check(web::JsonToMessage(json, &again).ok());
  Check(again.SerializeAsString() == message.SerializeAsString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const bool utf8 = web::CheckUtf8("parameter 'q'", input).ok();
  Check(utf8 == issuescope::IsValidUtf8(input));
  if (utf8) {
    RoundTrip<issuescope::v1::SearchRequest>(input);
    RoundTrip<issuescope::v1::AggregateRequest>(input);
  }
  if (auto n = web::ParseIntParam("page_size", input, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max());
      n.ok()) {
    Check(*n >= std::numeric_limits<int32_t>::min() && *n <= std::numeric_limits<int32_t>::max());
  }
  if (auto n = web::ParseIntParam("number", input, 0, std::numeric_limits<int64_t>::max());
      n.ok()) {
    Check(*n >= 0);
  }
  (void)web::ParseBoolParam("explain", input);
  for (const std::string& item : web::SplitList(input)) {
    Check(!item.empty() && item.find(',') == std::string::npos &&
          !absl::ascii_isspace(static_cast<unsigned char>(item.front())) &&
          !absl::ascii_isspace(static_cast<unsigned char>(item.back())));
  }
  if (auto hp = web::ParseHostPort(input); hp.ok()) {
    Check(hp->second >= 0 && hp->second <= 65535);
  }
  return 0;
}
