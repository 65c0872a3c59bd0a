#include "common/file_util.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace issuescope {

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  const std::string name = what.empty() ? path : absl::StrCat(what, " file ", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", name));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", name, ": read error"));
  return std::move(buffer).str();
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("writing ", path, " failed (disk full?)"));
  return absl::OkStatus();
}

}  // namespace issuescope
