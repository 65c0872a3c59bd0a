#include "indexer/classifier_features.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/issue_sections.h"
#include "common/text_tokens.h"

namespace issuescope::classifier {
namespace {

// DecodeUtf8 reads one code point at `i` (advancing it); see common/text_tokens.h.
uint32_t DecodeUtf8(absl::string_view s, size_t* i) {
  uint32_t cp = 0;
  *i += issuescope::DecodeUtf8(s, *i, &cp);
  return cp;
}

bool IsCjk(uint32_t cp) { return issuescope::IsCjkCodePoint(cp); }

// IsNonAsciiPunct is true for general punctuation, CJK punctuation and full-width forms.
bool IsNonAsciiPunct(uint32_t cp) {
  return (cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
         (cp >= 0xFF00 && cp <= 0xFF65) || (cp >= 0x1F000);  // emoji and symbols
}

}  // namespace

std::vector<std::string> Tokenize(absl::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  bool digits_only = true;
  auto flush = [&] {
    if (!current.empty()) {
      if (current.size() <= 40) tokens.push_back(digits_only ? std::string("<num>") : current);
      current.clear();
    }
    digits_only = true;
  };
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        current.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
        digits_only = false;
      } else if (c >= '0' && c <= '9') {
        current.push_back(static_cast<char>(c));
      } else if (c == '?') {
        flush();
        tokens.emplace_back("?");
      } else {
        flush();
      }
      continue;
    }
    size_t start = i;
    uint32_t cp = DecodeUtf8(text, &i);
    if (IsCjk(cp)) {
      flush();
      tokens.emplace_back(text.substr(start, i - start));
    } else if (IsNonAsciiPunct(cp) || cp < 0xC0) {
      flush();
    } else {
      current.append(text.data() + start, i - start);
      digits_only = false;
    }
  }
  flush();
  return tokens;
}

namespace {

// Features are hashed with FNV-1a 64 (common/hash.h) in pieces ("T:", a token, " ", the next
// token), which gives the hash of the concatenated string without building it. kFnvBasis is
// the features' own starting value: 1469598103934665603, not FNV's offset basis
// (14695981039346656037, one digit longer). Every model file's buckets depend on it, so it
// stays.
constexpr uint64_t kFnvBasis = 1469598103934665603ULL;
inline uint64_t Fnv(uint64_t h, absl::string_view piece) { return Fnv1a(h, piece); }

// Bucket maps a hash to one of 2^hash_bits buckets.
inline uint32_t Bucket(uint64_t h, int hash_bits) {
  h ^= h >> 32;
  return static_cast<uint32_t>(h & ((uint64_t{1} << hash_bits) - 1));
}

}  // namespace

uint32_t HashFeature(absl::string_view feature, int hash_bits) {
  return Bucket(Fnv(kFnvBasis, feature), hash_bits);
}

std::string StripNoise(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "```") == 0) {
      size_t end = text.find("```", i + 3);
      out += " xcodeblockx ";
      if (end == absl::string_view::npos) break;
      i = end + 3;
      continue;
    }
    if (text.compare(i, 7, "http://") == 0 || text.compare(i, 8, "https://") == 0) {
      while (i < text.size() && !absl::ascii_isspace(static_cast<unsigned char>(text[i])) &&
             text[i] != ')' && text[i] != ']' && text[i] != '>') {
        ++i;
      }
      out += " xurlx ";
      continue;
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

namespace {

// AddBlock adds a block's hashed features (one bucket per occurrence, in any order) to `out`
// as 1 + ln(count) per bucket, scaled to L2 norm `weight`. Sorts `buckets`.
void AddBlock(std::vector<uint32_t>* buckets, double weight,
              std::vector<std::pair<uint32_t, double>>* out) {
  std::sort(buckets->begin(), buckets->end());
  const size_t first = out->size();
  double norm = 0;
  for (size_t i = 0; i < buckets->size();) {
    size_t j = i;
    while (j < buckets->size() && (*buckets)[j] == (*buckets)[i]) ++j;
    const double v = 1.0 + std::log(static_cast<double>(j - i));
    norm += v * v;
    out->emplace_back((*buckets)[i], v);
    i = j;
  }
  if (norm <= 0) return;
  const double scale = weight / std::sqrt(norm);
  for (size_t i = first; i < out->size(); ++i) (*out)[i].second *= scale;
}

}  // namespace

FeatureVector Featurize(const IssueText& issue, const FeatureOptions& options) {
  const int bits = options.hash_bits;
  std::vector<uint32_t> title_buckets, body_buckets;
  const uint64_t title_prefix = Fnv(kFnvBasis, "T:");
  auto add_tokens = [&](const std::vector<std::string>& tokens, size_t limit, bool title) {
    std::vector<uint32_t>* buckets = title ? &title_buckets : &body_buckets;
    const size_t n = std::min(tokens.size(), limit);
    buckets->reserve(buckets->size() + n * (title ? 4 : 2));
    for (size_t k = 0; k < n; ++k) {
      const uint64_t plain = Fnv(kFnvBasis, tokens[k]);
      buckets->push_back(Bucket(plain, bits));
      uint64_t prefixed = 0;
      if (title) {
        prefixed = Fnv(title_prefix, tokens[k]);
        buckets->push_back(Bucket(prefixed, bits));
      }
      if (options.bigrams && k + 1 < n) {
        buckets->push_back(Bucket(Fnv(Fnv(plain, " "), tokens[k + 1]), bits));
        if (title) buckets->push_back(Bucket(Fnv(Fnv(prefixed, " "), tokens[k + 1]), bits));
      }
    }
  };
  const std::vector<std::string> title = Tokenize(issue.title);
  add_tokens(title, 200, true);
  if (options.title_char_ngrams > 0) {
    const size_t n = static_cast<size_t>(options.title_char_ngrams);
    const uint64_t char_prefix = Fnv(kFnvBasis, "C:");
    for (const std::string& word : title) {
      const std::string padded = absl::StrCat("^", word, "$");
      if (padded.size() <= n) {
        title_buckets.push_back(Bucket(Fnv(char_prefix, padded), bits));
        continue;
      }
      for (size_t i = 0; i + n <= padded.size(); ++i) {
        title_buckets.push_back(
            Bucket(Fnv(char_prefix, absl::string_view(padded).substr(i, n)), bits));
      }
    }
  }
  const std::string body = options.signal_text ? SignalText(issue.body) : issue.body;
  add_tokens(Tokenize(options.strip_noise ? StripNoise(body) : body),
             static_cast<size_t>(std::max(0, options.max_body_tokens)), false);
  std::vector<std::pair<uint32_t, double>> blocks;
  blocks.reserve(title_buckets.size() + body_buckets.size());
  AddBlock(&title_buckets, options.title_weight, &blocks);
  const std::ptrdiff_t title_end = static_cast<std::ptrdiff_t>(blocks.size());
  AddBlock(&body_buckets, 1.0, &blocks);
  // Merge the two sorted blocks; a bucket in both sums its values.
  std::inplace_merge(blocks.begin(), blocks.begin() + title_end, blocks.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (kept > 0 && blocks[kept - 1].first == blocks[i].first) {
      blocks[kept - 1].second += blocks[i].second;
    } else {
      blocks[kept++] = blocks[i];
    }
  }
  blocks.resize(kept);
  double norm = 0;
  for (const auto& [bucket, value] : blocks) norm += value * value;
  const double inv = norm > 0 ? 1.0 / std::sqrt(norm) : 0;
  FeatureVector out;
  out.reserve(blocks.size());
  for (const auto& [bucket, value] : blocks) {
    out.emplace_back(bucket, static_cast<float>(value * inv));
  }
  return out;
}

}  // namespace issuescope::classifier
