// Fuzz target: the Github page parsers (crawler/github_parse.h, github_tracker.h via MakeTracker(TRACKER_GITHUB)): a
// response body given to the repository, issue-listing and comment-listing parsers; what is
// checked is in tracker_pages_fuzz.h.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/tracker_pages_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  issuescope::fuzz::FuzzTrackerPages(issuescope::v1::TRACKER_GITHUB, data, size);
  return 0;
}
