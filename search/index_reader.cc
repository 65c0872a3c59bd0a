#include "index_reader.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "common/index_layout.h"
#include "query_lexer.h"

namespace issuescope::search {

Xapian::Database OpenRemoteShard(const index::RemoteStubEntry& entry, unsigned connect_timeout_ms,
                                 unsigned timeout_ms, std::string* served_by) {
  std::string tried;
  for (size_t i = 0; i < entry.servers.size(); ++i) {
    const index::ShardServer& server = entry.servers[i];
    try {
      Xapian::Database db = Xapian::Remote::open(server.host, server.port, timeout_ms,
                                                 connect_timeout_ms);
      if (i > 0) {
        spdlog::warn("search: shard server {} cannot be reached ({}); using its alternate {}",
                     entry.servers[0].Name(), tried, server.Name());
      }
      if (served_by != nullptr) *served_by = server.Name();
      return db;
    } catch (const Xapian::NetworkError& e) {
      absl::StrAppend(&tried, tried.empty() ? "" : "; ", server.Name(), ": ", e.get_msg());
      if (i + 1 == entry.servers.size()) {
        throw Xapian::NetworkError(
            absl::StrCat("no shard server of ", entry.servers[0].Name(),
                         entry.servers.size() > 1 ? " or its alternates" : "", " answers (",
                         tried, ")"),
            e.get_context());
      }
    }
  }
  throw Xapian::InvalidArgumentError("a stub line names no shard server");
}

bool ShardServerAnswers(const index::ShardServer& server, unsigned connect_timeout_ms,
                        unsigned exchange_ms) {
  try {
    Xapian::Database db =
        Xapian::Remote::open(server.host, server.port, exchange_ms, connect_timeout_ms);
    return true;
  } catch (const Xapian::Error&) {
    return false;
  }
}

Xapian::Database OpenIndexForReading(const std::string& index_dir,
                                     std::vector<index::ShardServer>* missed,
                                     ShardTimeouts timeouts) {
  if (missed != nullptr) missed->clear();
  const std::string stub = index::StubPath(index_dir);
  std::error_code ec;
  if (!std::filesystem::exists(stub, ec)) return Xapian::Database(index_dir);
  absl::StatusOr<std::vector<index::RemoteStubEntry>> entries = index::ReadRemoteStub(index_dir);
  if (entries.ok() && !entries->empty()) {
    Xapian::Database all;
    for (const index::RemoteStubEntry& entry : *entries) {
      std::string served_by;
      all.add_database(
          OpenRemoteShard(entry, timeouts.connect_ms, timeouts.exchange_ms, &served_by));
      if (missed != nullptr && served_by != entry.servers[0].Name()) {
        missed->push_back(entry.servers[0]);
      }
    }
    return all;
  }
  if (!entries.ok() && entries.status().code() == absl::StatusCode::kInvalidArgument) {
    throw Xapian::DatabaseOpeningError(std::string(entries.status().message()));
  }
  // Other stubs (local shards, or local and remote ones, `remote` options): Xapian reads them,
  // without alternates.
  return Xapian::Database(stub);
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
