// Reading and writing whole files, with errors that name the file and what it was for.
//
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope {

// ReadFile returns the bytes of `path`. NOT_FOUND "cannot read WHAT file PATH" ("cannot read
// PATH" when `what` is empty) when it cannot be opened, DATA_LOSS "... : read error" when reading
// fails part-way.
absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what = "");

// WriteFile replaces the contents of `path` with `bytes`. UNAVAILABLE "cannot write PATH" when it
// cannot be opened, "writing PATH failed (disk full?)" when the write fails.
absl::Status WriteFile(const std::string& path, absl::string_view bytes);

}  // namespace issuescope
