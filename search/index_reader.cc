#include "index_reader.h"

#include <filesystem>
#include <system_error>

#include "common/index_layout.h"

namespace issuescope::search {

Xapian::Database OpenIndexForReading(const std::string& index_dir) {
  const std::string stub = index::StubPath(index_dir);
  std::error_code ec;
  if (std::filesystem::exists(stub, ec)) return Xapian::Database(stub);
  return Xapian::Database(index_dir);
}

}  // namespace issuescope::search
