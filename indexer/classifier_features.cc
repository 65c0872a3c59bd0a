#include "indexer/classifier_features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
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

uint32_t HashFeature(absl::string_view feature, int hash_bits) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : feature) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h ^= h >> 32;
  return static_cast<uint32_t>(h & ((uint64_t{1} << hash_bits) - 1));
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

// Counts accumulates hashed feature counts of one block (title or body).
using Counts = std::map<uint32_t, float>;

// AddBlock adds a block's counts to `out` as 1 + ln(count), scaled to L2 norm `weight`.
void AddBlock(const Counts& counts, double weight, std::map<uint32_t, double>* out) {
  double norm = 0;
  for (const auto& [bucket, count] : counts) {
    double v = 1.0 + std::log(count);
    norm += v * v;
  }
  if (norm <= 0) return;
  const double scale = weight / std::sqrt(norm);
  for (const auto& [bucket, count] : counts) (*out)[bucket] += (1.0 + std::log(count)) * scale;
}

}  // namespace

FeatureVector Featurize(const IssueText& issue, const FeatureOptions& options) {
  Counts title_counts, body_counts;
  auto add = [&](Counts* counts, absl::string_view feature) {
    (*counts)[HashFeature(feature, options.hash_bits)] += 1.0f;
  };
  auto add_tokens = [&](const std::vector<std::string>& tokens, size_t limit, bool title) {
    Counts* counts = title ? &title_counts : &body_counts;
    size_t n = std::min(tokens.size(), limit);
    for (size_t k = 0; k < n; ++k) {
      add(counts, tokens[k]);
      if (title) add(counts, absl::StrCat("T:", tokens[k]));
      if (options.bigrams && k + 1 < n) {
        std::string bigram = absl::StrCat(tokens[k], " ", tokens[k + 1]);
        add(counts, bigram);
        if (title) add(counts, absl::StrCat("T:", bigram));
      }
    }
  };
  const std::vector<std::string> title = Tokenize(issue.title);
  add_tokens(title, 200, true);
  if (options.title_char_ngrams > 0) {
    const size_t n = static_cast<size_t>(options.title_char_ngrams);
    for (const std::string& word : title) {
      std::string padded = absl::StrCat("^", word, "$");
      if (padded.size() <= n) {
        add(&title_counts, absl::StrCat("C:", padded));
        continue;
      }
      for (size_t i = 0; i + n <= padded.size(); ++i) {
        add(&title_counts, absl::StrCat("C:", absl::string_view(padded).substr(i, n)));
      }
    }
  }
  const std::string body = options.signal_text ? SignalText(issue.body) : issue.body;
  add_tokens(Tokenize(options.strip_noise ? StripNoise(body) : body),
             static_cast<size_t>(std::max(0, options.max_body_tokens)), false);
  std::map<uint32_t, double> merged;
  AddBlock(title_counts, options.title_weight, &merged);
  AddBlock(body_counts, 1.0, &merged);
  FeatureVector out;
  out.reserve(merged.size());
  double norm = 0;
  for (const auto& [bucket, value] : merged) norm += value * value;
  const double inv = norm > 0 ? 1.0 / std::sqrt(norm) : 0;
  for (const auto& [bucket, value] : merged) {
    out.emplace_back(bucket, static_cast<float>(value * inv));
  }
  return out;
}

}  // namespace issuescope::classifier
