#include "index_reader.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "common/index_layout.h"
#include "query_lexer.h"

namespace issuescope::search {

Xapian::Database OpenIndexForReading(const std::string& index_dir) {
  const std::string stub = index::StubPath(index_dir);
  std::error_code ec;
  if (std::filesystem::exists(stub, ec)) return Xapian::Database(stub);
  return Xapian::Database(index_dir);
}

Xapian::Database OpenGoneForReading(const std::string& index_dir) {
  Xapian::Database all;
  std::error_code ec;
  for (const std::string& path : index::ShardPaths(index_dir)) {
    const std::string gone = index::GonePath(path);
    // A glass database exists once its version file does (a gone/ caught mid-creation has
    // none yet, and holds nothing to find); a replica's (search/replica_follower.h) once its
    // stub does.
    if (std::filesystem::exists(gone + "/iamglass", ec) ||
        std::filesystem::exists(gone + "/XAPIANDB", ec)) {
      all.add_database(Xapian::Database(gone));
    }
  }
  if (all.size() == 0) {
    // Xapian cannot search a database without sub-databases: an empty one in memory.
    return Xapian::WritableDatabase(std::string(), Xapian::DB_BACKEND_INMEMORY);
  }
  return all;
}

bool NamesGoneIssues(const std::string& query) {
  absl::StatusOr<std::vector<Token>> tokens = Lex(query);
  if (!tokens.ok()) return false;
  for (const Token& token : *tokens) {
    if (token.kind != TokenKind::kQualifier || token.text != "is") continue;
    for (const QualifierValue& value : token.values) {
      const std::string v = absl::AsciiStrToLower(value.text);
      if (v == "deleted" || v == "transferred") return true;
    }
  }
  return false;
}

}  // namespace issuescope::search
