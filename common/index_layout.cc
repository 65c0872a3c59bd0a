#include "common/index_layout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "common/index_schema.h"

namespace issuescope::index {

uint32_t ShardOf(absl::string_view repo_slug, uint32_t shard_count) {
  if (shard_count <= 1) return 0;
  return static_cast<uint32_t>(Fnv1a(repo_slug) % shard_count);
}

std::string ShardDirName(uint32_t shard) { return absl::StrFormat("shard-%03u", shard); }

std::string StubPath(absl::string_view index_dir) {
  return absl::StrCat(index_dir, "/", kStubFileName);
}

absl::Status WriteStubFile(absl::string_view index_dir, uint32_t shard_count) {
  if (shard_count == 0) return absl::InvalidArgumentError("a sharded index needs shards");
  const std::string path = StubPath(index_dir);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
    for (uint32_t i = 0; i < shard_count; ++i) out << "auto " << ShardDirName(i) << "\n";
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, ": ", ec.message()));
  return absl::OkStatus();
}


std::string GonePath(absl::string_view database_dir) {
  return absl::StrCat(database_dir, "/", kGoneDirName);
}

std::vector<std::string> ShardPaths(const std::string& index_dir) {
  const std::string stub = StubPath(index_dir);
  std::ifstream in(stub);
  if (!in) return {index_dir};
  std::vector<std::string> paths;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("auto ", 0) != 0) continue;
    std::string rel = line.substr(5);
    paths.push_back(!rel.empty() && rel[0] == '/' ? rel : absl::StrCat(index_dir, "/", rel));
  }
  return paths;
}

bool HasRemoteShards(const std::string& index_dir) {
  std::ifstream in(StubPath(index_dir));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("remote ", 0) == 0 || line.rfind("remote\t", 0) == 0) return true;
  }
  return false;
}

namespace {

// ParseServer reads HOST:PORT (a port 1..65535).
bool ParseServer(absl::string_view text, ShardServer* server) {
  const size_t colon = text.rfind(':');
  unsigned port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(text.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return false;
  }
  server->host = std::string(text.substr(0, colon));
  server->port = port;
  return true;
}

}  // namespace

absl::StatusOr<std::vector<RemoteStubEntry>> ReadRemoteStub(const std::string& index_dir) {
  const std::string stub = StubPath(index_dir);
  std::ifstream in(stub);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", stub));
  std::vector<RemoteStubEntry> entries;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    const std::string where = absl::StrCat(stub, ":", number, ": '", text.substr(0, 120), "'");
    ShardServer server;
    if (absl::StartsWith(text, kAlternatePrefix)) {
      if (entries.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": an alternate before any remote line"));
      }
      const absl::string_view address =
          absl::StripAsciiWhitespace(text.substr(std::strlen(kAlternatePrefix)));
      if (!ParseServer(address, &server)) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": not an alternate HOST:PORT"));
      }
      entries.back().servers.push_back(std::move(server));
      continue;
    }
    if (text.empty() || text[0] == '#') continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() != 2 || words[0] != "remote" || !ParseServer(words[1], &server)) {
      return absl::UnimplementedError(absl::StrCat(where, ": not remote HOST:PORT"));
    }
    entries.emplace_back().servers.push_back(std::move(server));
  }
  return entries;
}

std::map<std::string, uint64_t> ReadFeedPositions(const std::string& index_dir) {
  const std::vector<std::string> shards = ShardPaths(index_dir);
  std::vector<std::map<std::string, uint64_t>> per_shard;
  std::set<std::string> stores;
  for (const std::string& path : shards) {
    Xapian::Database db(path);
    std::map<std::string, uint64_t>& positions = per_shard.emplace_back();
    for (auto it = db.metadata_keys_begin(kFeedMetadataPrefix);
         it != db.metadata_keys_end(kFeedMetadataPrefix); ++it) {
      const std::string key = *it;
      uint64_t seq = 0;
      if (!absl::SimpleAtoi(db.get_metadata(key), &seq)) continue;
      const std::string store = key.substr(std::string(kFeedMetadataPrefix).size());
      positions[store] = seq;
      stores.insert(store);
    }
  }
  std::map<std::string, uint64_t> result;
  for (const std::string& store : stores) {
    uint64_t min_seq = UINT64_MAX;
    for (const auto& positions : per_shard) {
      auto it = positions.find(store);
      min_seq = std::min(min_seq, it == positions.end() ? uint64_t{0} : it->second);
    }
    result[store] = min_seq;
  }
  return result;
}

namespace {
int64_t ParseCount(const std::string& value) {
  int64_t n = 0;
  return absl::SimpleAtoi(value, &n) ? n : 0;
}
}  // namespace

TaggingStatus ReadTaggingStatus(const std::string& index_dir) {
  TaggingStatus status;
  bool first = true;
  for (const std::string& path : ShardPaths(index_dir)) {
    Xapian::Database db(path);
    const std::string tagger = db.get_metadata(kTaggerMetadataKey);
    if (first) {
      status.tagger = tagger;
      first = false;
    } else if (tagger != status.tagger) {
      status.tagger = "mixed";
    }
    const std::string applying = db.get_metadata(kRetagFingerprintKey);
    if (!applying.empty()) status.retag_fingerprint = applying;
    status.retag_done += ParseCount(db.get_metadata(kRetagDoneKey));
    status.retag_total += ParseCount(db.get_metadata(kRetagTotalKey));
    if (!db.get_metadata(kRetagCursorKey).empty()) status.retag_running = true;
  }
  return status;
}

}  // namespace issuescope::index
