#include "common/index_layout.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <filesystem>
#include <fstream>

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
