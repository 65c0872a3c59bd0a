// IssueStore's raw-page column family: the raw bodies of fetched listing pages, kept so a parser
// fix can re-derive stored records without crawling again (`issuescope reparse`). Layout and
// retention are described in crawler/issue_store.h.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/rocksdb_status.h"
#include "common/status_macros.h"
#include "store_keys.h"
#include "common/time_util.h"
#include "crawler/issue_store.h"
#include "nlohmann/json.hpp"
#include "rocksdb/convenience.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"

namespace issuescope::crawler {
namespace {

using store_keys::GetBE64;
using store_keys::PutBE64;

constexpr char kPagePrefix = 'p';
constexpr char kItemPrefix = 'x';
constexpr char kRefPrefix = 'r';
constexpr char kQuarantinePrefix = 'q';
constexpr char kSeqKey[] = "s";

std::string SlugPrefix(char kind, absl::string_view slug) {
  std::string key(1, kind);
  key.append(slug.data(), slug.size());
  key.push_back('\0');
  return key;
}

// EncodeHeader is the page's header JSON line (with its newline); the stored value is the
// header, then the body (written as two parts, so the body is not copied into a value first).
std::string EncodeHeader(const RawPage& page) {
  nlohmann::json h;
  h["tracker"] = static_cast<int>(page.repo.tracker());
  h["owner"] = page.repo.owner();
  h["name"] = page.repo.name();
  h["api_url"] = page.repo.api_url();
  h["listing"] = page.listing;
  h["url"] = page.url;
  h["fetched_at"] = FormatRfc3339(page.fetched_at);
  h["prs"] = page.include_pull_requests;
  if (page.issue_number > 0) {
    h["issue"] = page.issue_number;
    h["issue_key"] = page.issue_key;
    h["issue_url"] = page.issue_url;
  }
  std::string out = h.dump();
  out.push_back('\n');
  return out;
}

absl::StatusOr<RawPage> DecodePage(absl::string_view value, absl::string_view key) {
  const size_t nl = value.find('\n');
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("corrupt raw page \"",
                                            absl::CHexEscape(key.substr(0, 80)), "\": ", why));
  };
  if (nl == absl::string_view::npos) return corrupt("no header line");
  RawPage page;
  try {
    const nlohmann::json h = nlohmann::json::parse(value.substr(0, nl));
    page.repo.set_tracker(static_cast<v1::Tracker>(h.at("tracker").get<int>()));
    page.repo.set_owner(h.at("owner").get<std::string>());
    page.repo.set_name(h.at("name").get<std::string>());
    page.repo.set_api_url(h.value("api_url", std::string()));
    page.listing = h.at("listing").get<std::string>();
    page.url = h.at("url").get<std::string>();
    auto t = ParseRfc3339(h.at("fetched_at").get<std::string>());
    if (!t.ok()) return corrupt(t.status().message());
    page.fetched_at = *t;
    page.include_pull_requests = h.at("prs").get<bool>();
    if (h.contains("issue")) {
      page.issue_number = h.at("issue").get<int64_t>();
      page.issue_key = h.at("issue_key").get<std::string>();
      page.issue_url = h.at("issue_url").get<std::string>();
    }
  } catch (const nlohmann::json::exception& e) {
    return corrupt(e.what());
  }
  page.body = std::string(value.substr(nl + 1));
  return page;
}

}  // namespace

rocksdb::ColumnFamilyOptions IssueStore::RawColumnFamilyOptions(std::string* compression) {
  rocksdb::ColumnFamilyOptions options;
  const std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  auto has = [&](rocksdb::CompressionType t) {
    return std::find(supported.begin(), supported.end(), t) != supported.end();
  };
  // Raw JSON pages compress about 5-10x; zstd does best, LZ4/Snappy are the fallbacks.
  if (has(rocksdb::kZSTD)) {
    options.compression = rocksdb::kZSTD;
    *compression = "zstd";
  } else if (has(rocksdb::kLZ4Compression)) {
    options.compression = rocksdb::kLZ4Compression;
    *compression = "lz4";
  } else if (has(rocksdb::kSnappyCompression)) {
    options.compression = rocksdb::kSnappyCompression;
    *compression = "snappy";
  } else {
    options.compression = rocksdb::kNoCompression;
    *compression = "none";
  }
  options.bottommost_compression = options.compression;
  // Raw pages are written once and read only by reparse: a small memtable keeps the worker's
  // memory bounded (RocksDB's default is 64 MiB per column family).
  options.write_buffer_size = 16 << 20;
  // Pages are large values: bigger blocks compress better.
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 64 << 10;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

std::string IssueStore::RawIssueItem(int64_t number) {
  std::string key(1, 'i');
  PutBE64(&key, static_cast<uint64_t>(number));
  return key;
}

std::string IssueStore::RawCommentItem(int64_t issue_number, int64_t comment_id) {
  std::string key(1, 'c');
  PutBE64(&key, static_cast<uint64_t>(issue_number));
  PutBE64(&key, static_cast<uint64_t>(comment_id));
  return key;
}

absl::Status IssueStore::PutRawPage(absl::string_view repo_slug, const RawPage& page,
                                    const std::vector<std::string>& item_keys) {
  if (repo_slug.empty() || repo_slug.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("raw page: malformed repository slug");
  }
  const std::set<std::string> items(item_keys.begin(), item_keys.end());
  if (items.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(raw_mu_);
  const rocksdb::ReadOptions read;
  std::string value;
  uint64_t seq = 0;
  rocksdb::Status s = db_->Get(read, raw_cf_, kSeqKey, &value);
  if (s.ok()) {
    seq = GetBE64(value);
  } else if (!s.IsNotFound()) {
    return FromRocksStatus(s, "reading the raw page sequence");
  }
  std::string page_key = SlugPrefix(kPagePrefix, repo_slug);
  PutBE64(&page_key, static_cast<uint64_t>(absl::ToUnixMicros(page.fetched_at)));
  PutBE64(&page_key, seq);

  rocksdb::WriteBatch batch;
  const std::string header = EncodeHeader(page);
  const rocksdb::Slice key_part(page_key);
  const rocksdb::Slice value_parts[] = {rocksdb::Slice(header), rocksdb::Slice(page.body)};
  RETURN_IF_ERROR(FromRocksStatus(
      batch.Put(raw_cf_, rocksdb::SliceParts(&key_part, 1), rocksdb::SliceParts(value_parts, 2)),
      "batching a raw page"));
  std::string next;
  PutBE64(&next, seq + 1);
  batch.Put(raw_cf_, kSeqKey, next);
  // Reference counts of the older pages that lose items to this one.
  std::map<std::string, int64_t> released;
  const std::string item_prefix = SlugPrefix(kItemPrefix, repo_slug);
  for (const std::string& item : items) {
    const std::string item_key = item_prefix + item;
    std::string old;
    s = db_->Get(read, raw_cf_, item_key, &old);
    if (s.ok()) {
      ++released[old];
    } else if (!s.IsNotFound()) {
      return FromRocksStatus(s, "reading a raw page reference");
    }
    batch.Put(raw_cf_, item_key, page_key);
  }
  std::string count;
  PutBE64(&count, items.size());
  batch.Put(raw_cf_, std::string(1, kRefPrefix) + page_key, count);
  for (const auto& [old_page, lost] : released) {
    const std::string ref_key = std::string(1, kRefPrefix) + old_page;
    s = db_->Get(read, raw_cf_, ref_key, &value);
    if (s.IsNotFound()) continue;
    RETURN_IF_ERROR(FromRocksStatus(s, "reading a raw page reference count"));
    const uint64_t refs = GetBE64(value);
    if (refs <= static_cast<uint64_t>(lost)) {
      batch.Delete(raw_cf_, old_page);  // every item on it has a newer copy elsewhere
      batch.Delete(raw_cf_, ref_key);
    } else {
      std::string left;
      PutBE64(&left, refs - static_cast<uint64_t>(lost));
      batch.Put(raw_cf_, ref_key, left);
    }
  }
  return FromRocksStatus(db_->Write(rocksdb::WriteOptions(), &batch),
                         absl::StrCat("writing a raw page of ", repo_slug));
}

absl::Status IssueStore::ScanRawPages(
    absl::string_view repo_slug,
    const std::function<bool(const std::string& slug, const RawPage& page)>& fn) const {
  const std::string prefix =
      repo_slug.empty() ? std::string(1, kPagePrefix) : SlugPrefix(kPagePrefix, repo_slug);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), raw_cf_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const absl::string_view key(it->key().data(), it->key().size());
    const size_t nul = key.find('\0');
    if (nul == absl::string_view::npos || key.size() != nul + 17) {
      return absl::DataLossError(
          absl::StrCat("corrupt raw page key \"", absl::CHexEscape(key.substr(0, 80)), "\""));
    }
    ASSIGN_OR_RETURN(RawPage page,
                     DecodePage(absl::string_view(it->value().data(), it->value().size()), key));
    if (!fn(std::string(key.substr(1, nul - 1)), page)) break;
  }
  return FromRocksStatus(it->status(), "scanning raw pages");
}

absl::Status IssueStore::PutQuarantined(absl::string_view repo_slug,
                                        const QuarantinedItem& item) {
  if (repo_slug.empty() || repo_slug.find('\0') != absl::string_view::npos ||
      item.listing.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("quarantined item: malformed repository slug or listing");
  }
  std::string key = SlugPrefix(kQuarantinePrefix, repo_slug);
  key += item.listing;
  key.push_back('\0');
  if (!item.key.empty()) {
    key += item.key;
  } else {
    key += "@";
    PutBE64(&key, static_cast<uint64_t>(absl::ToUnixMicros(item.fetched_at)));
    PutBE64(&key, static_cast<uint64_t>(item.index));
  }
  nlohmann::json v;
  v["listing"] = item.listing;
  v["url"] = item.url;
  v["fetched_at"] = FormatRfc3339(item.fetched_at);
  v["index"] = item.index;
  v["key"] = item.key;
  v["error"] = item.error;
  v["raw"] = item.raw;
  const std::string value = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return FromRocksStatus(db_->Put(rocksdb::WriteOptions(), raw_cf_, key, value),
                         absl::StrCat("writing a quarantined item of ", repo_slug));
}

absl::Status IssueStore::ScanQuarantined(
    absl::string_view repo_slug,
    const std::function<bool(const std::string& slug, const QuarantinedItem& item)>& fn) const {
  const std::string prefix = repo_slug.empty() ? std::string(1, kQuarantinePrefix)
                                               : SlugPrefix(kQuarantinePrefix, repo_slug);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), raw_cf_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const absl::string_view key(it->key().data(), it->key().size());
    const size_t nul = key.find('\0');
    auto corrupt = [&](absl::string_view why) {
      return absl::DataLossError(absl::StrCat("corrupt quarantined item \"",
                                              absl::CHexEscape(key.substr(0, 80)), "\": ", why));
    };
    if (nul == absl::string_view::npos) return corrupt("no slug end");
    QuarantinedItem item;
    try {
      const nlohmann::json v = nlohmann::json::parse(it->value().ToString());
      item.listing = v.at("listing").get<std::string>();
      item.url = v.at("url").get<std::string>();
      auto t = ParseRfc3339(v.at("fetched_at").get<std::string>());
      if (!t.ok()) return corrupt(t.status().message());
      item.fetched_at = *t;
      item.index = v.at("index").get<int64_t>();
      item.key = v.at("key").get<std::string>();
      item.error = v.at("error").get<std::string>();
      item.raw = v.at("raw").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      return corrupt(e.what());
    }
    if (!fn(std::string(key.substr(1, nul - 1)), item)) break;
  }
  return FromRocksStatus(it->status(), "scanning quarantined items");
}

absl::StatusOr<int64_t> IssueStore::RawPageCount(absl::string_view repo_slug) const {
  int64_t n = 0;
  RETURN_IF_ERROR(ScanRawPages(repo_slug, [&](const std::string&, const RawPage&) {
    ++n;
    return true;
  }));
  return n;
}

}  // namespace issuescope::crawler
