#include "common/text_tokens.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "xapian.h"

namespace issuescope {
namespace {

size_t Decode(absl::string_view s, size_t at, uint32_t* cp) {
  const auto b = static_cast<unsigned char>(s[at]);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || at + len > s.size()) {
    *cp = 0xFFFD;
    return 1;
  }
  uint32_t v = b & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[at + k]);
    if ((c & 0xC0) != 0x80) {
      *cp = 0xFFFD;
      return 1;
    }
    v = (v << 6) | (c & 0x3F);
  }
  *cp = v;
  return len;
}

bool IsCjk(uint32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

// IsWordCp: ASCII letters and digits, and letters of other scripts (anything past Latin-1's
// symbols that is not punctuation, a symbol block, CJK or an emoji).
bool IsWordCp(uint32_t cp) {
  if (cp < 0x80) return absl::ascii_isalnum(static_cast<unsigned char>(cp));
  if (cp < 0xC0) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
  if (cp == 0xD7 || cp == 0xF7) return false;
  if (IsCjk(cp)) return false;
  if (cp >= 0x2000 && cp <= 0x2BFF) return false;  // punctuation, arrows, symbols, boxes
  if (cp >= 0x3000 && cp <= 0x303F) return false;  // CJK punctuation
  if (cp >= 0xFE30 && cp <= 0xFE4F) return false;
  if (cp >= 0xFF00 && cp <= 0xFFEF) {              // fullwidth: letters and digits only
    return (cp >= 0xFF10 && cp <= 0xFF19) || (cp >= 0xFF21 && cp <= 0xFF3A) ||
           (cp >= 0xFF41 && cp <= 0xFF5A);
  }
  if (cp == 0xFFFD) return false;
  if (cp >= 0x1F000) return false;                 // emoji and pictographs
  return true;
}

bool IsConnector(char c) { return c == '.' || c == '-' || c == '/' || c == '\''; }

bool AsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool AsciiLower(char c) { return c >= 'a' && c <= 'z'; }

// FoldLatin returns the base letters of a lower-case Latin letter with a diacritic (é -> e,
// ß -> ss, œ -> oe), or "" when `cp` is none (generated from Unicode's decompositions).
absl::string_view FoldLatin(uint32_t cp) {
  if (cp < 0xDF || cp > 0x17F) return {};
  static const char* const kFolded[] = {  // U+00DF .. U+017F
      "ss", "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y", "a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d", "d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g", "g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i", "i", "i", "ij", "ij", "j", "j", "k", "k", "k", "l", "l", "l", "l", "l", "l", "l", "l", "l", "l", "n", "n", "n", "n", "n", "n", "n", "n", "n", "o", "o", "o", "o", "o", "o", "oe", "oe", "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s", "s", "s", "t", "t", "t", "t", "t", "t", "u", "u", "u", "u", "u", "u", "u", "u", "u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "s"};
  return kFolded[cp - 0xDF];
}

// LowerAny lower-cases `s` and folds Latin diacritics (naïve -> naive, as FTS5's unicode61).
std::string LowerAny(absl::string_view s) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return absl::AsciiStrToLower(s);
  const std::string lower = Xapian::Unicode::tolower(std::string(s));
  std::string out;
  out.reserve(lower.size());
  for (size_t i = 0; i < lower.size();) {
    uint32_t cp = 0;
    const size_t len = Decode(lower, i, &cp);
    const absl::string_view folded = cp >= 0xDF ? FoldLatin(cp) : absl::string_view();
    if (!folded.empty()) {
      out.append(folded.data(), folded.size());
    } else {
      out.append(lower, i, len);
    }
    i += len;
  }
  return out;
}

// SplitCamel appends the camel-case pieces of an alphanumeric segment: "RuntimeError" ->
// Runtime, Error; "CUDAGraph" -> CUDA, Graph; "fp16", "h100", "llama3", "GPU" stay whole.
void SplitCamel(absl::string_view seg, std::vector<std::string>* out) {
  size_t start = 0;
  for (size_t i = 1; i < seg.size(); ++i) {
    const bool lower_to_upper = AsciiLower(seg[i - 1]) && AsciiUpper(seg[i]);
    // "CUDAGraph": a capital that starts a lower-case word of two or more letters ends the
    // acronym before it ("GPUs", "LLMs" stay whole).
    const bool acronym_end = AsciiUpper(seg[i - 1]) && AsciiUpper(seg[i]) &&
                             i + 2 < seg.size() && AsciiLower(seg[i + 1]) &&
                             AsciiLower(seg[i + 2]);
    if (lower_to_upper || acronym_end) {
      out->push_back(LowerAny(seg.substr(start, i - start)));
      start = i;
    }
  }
  out->push_back(LowerAny(seg.substr(start)));
}

// Parts of a compound: split at every byte that is not part of a word (connectors and '_'),
// then at camel-case humps.
void PartsOf(absl::string_view whole, std::vector<std::string>* out,
             std::vector<std::pair<size_t, std::string>>* joined) {
  std::vector<std::string>& parts = *out;
  parts.clear();
  joined->clear();
  size_t i = 0;
  bool connectors = false;
  while (i < whole.size()) {
    const char c = whole[i];
    if (c == '_' || c == ':' || IsConnector(c)) {
      connectors = true;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < whole.size() && whole[j] != '_' && whole[j] != ':' && !IsConnector(whole[j])) ++j;
    const size_t first = parts.size();
    SplitCamel(whole.substr(i, j - i), &parts);
    if (parts.size() - first >= 2) joined->emplace_back(first, LowerAny(whole.substr(i, j - i)));
    i = j;
  }
  // Parts too long to be terms are dropped (the joined indexes shift with them).
  for (size_t k = parts.size(); k-- > 0;) {
    if (!parts[k].empty() && parts[k].size() <= kMaxTermBytes) continue;
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(k));
    for (auto& [at, seg] : *joined) {
      if (at > k) --at;
    }
  }
  joined->erase(std::remove_if(joined->begin(), joined->end(),
                               [&](const std::pair<size_t, std::string>& j) {
                                 return !connectors || j.first >= parts.size() ||
                                        j.second.size() > kMaxTermBytes;
                               }),
                joined->end());
}

}  // namespace

namespace {

bool EndsWith(const std::string& s, absl::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(),
                                                suffix.data(), suffix.size()) == 0;
}

// American returns the American spelling of the British -ise/-isation/-our words common in
// issues (optimise, normalisation, initialiser, behaviour); other words as they are.
std::string American(const std::string& w) {
  static const char* const kOur[] = {"behaviour", "colour", "favour", "flavour", "honour",
                                     "labour", "neighbour", "rumour", "vapour"};
  for (const char* our : kOur) {
    const size_t n = std::char_traits<char>::length(our);
    if (w.compare(0, n, our) == 0) return std::string(our, n - 3) + "or" + w.substr(n);
  }
  // -ise, -ised, -ises, -ising, -iser(s), -isation(s), -isable: "is" -> "iz" when at least
  // four letters come before it, and not in words that are spelt -ise in American too.
  static const char* const kSuffixes[] = {"isations", "isation", "isers", "iser", "ising",
                                          "ised", "ises", "isable", "ise"};
  static const char* const kKeep[] = {"advertis", "advis", "apprais", "chastis", "circumcis",
                                      "comprom", "compris", "concis", "demis", "despis",
                                      "devis", "disguis", "enfranchis", "enterpris", "excis",
                                      "exercis", "expertis", "franchis", "improvis", "incis",
                                      "merchandis", "otherwis", "precis", "premis", "promis",
                                      "revis", "supervis", "surpris", "televis", "paradis",
                                      "noise", "raise", "praise", "poise", "likewis", "clockwis"};
  for (const char* suffix : kSuffixes) {
    const size_t n = std::char_traits<char>::length(suffix);
    if (!EndsWith(w, suffix) || w.size() < n + 4) continue;
    const std::string head = w.substr(0, w.size() - n);
    for (const char* keep : kKeep) {
      if ((head + "is").rfind(keep, 0) == 0 || (head + "ise").rfind(keep, 0) == 0) return w;
    }
    return head + "iz" + std::string(suffix + 2);
  }
  return w;
}

}  // namespace

std::string EnglishStem(const std::string& word) {
  thread_local const Xapian::Stem stemmer("english");
  const std::string american = American(word);
  std::string stem = stemmer(american);
  // Porter2 keeps the s of a plural after -u or of a word with no other vowel: GPUs, CPUs,
  // LLMs, PRs stay apart from gpu, cpu, llm, pr. Words of four or more letters drop it here.
  if (stem == american && stem.size() >= 4 && stem.back() == 's' && stem[stem.size() - 2] != 's') {
    const std::string singular = stem.substr(0, stem.size() - 1);
    const bool after_u = singular.back() == 'u';
    const bool no_vowel = singular.find_first_of("aeiouy") == std::string::npos;
    if (after_u || no_vowel) stem = stemmer(singular);
  }
  return stem;
}

size_t DecodeUtf8(absl::string_view s, size_t at, uint32_t* cp) { return Decode(s, at, cp); }

size_t Utf8Boundary(absl::string_view s, size_t at) {
  if (at >= s.size()) return s.size();
  // A character is at most 4 bytes; more continuation bytes than that are not UTF-8, and the
  // cut stays where it was asked.
  for (size_t i = at, back = 0; back < 4; --i, ++back) {
    if (!IsUtf8Continuation(s[i])) return i;
    if (i == 0) break;
  }
  return at;
}

absl::string_view Utf8Prefix(absl::string_view s, size_t max_bytes) {
  return s.substr(0, Utf8Boundary(s, max_bytes));
}

bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = Decode(s, i, &cp);
    if (len == 1) return false;  // a lone continuation, a bad lead byte or a cut sequence
    const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

bool IsCjkCodePoint(uint32_t cp) { return IsCjk(cp); }

bool IsStemmable(absl::string_view part) {
  if (part.size() < 2) return false;
  for (char c : part) {
    if (!AsciiLower(c)) return false;
  }
  return true;
}

void ForEachToken(absl::string_view text, absl::FunctionRef<void(const TextToken&)> fn) {
  size_t i = 0;
  uint32_t cp = 0;
  TextToken t;  // reused: its strings keep their capacity from token to token
  while (i < text.size()) {
    size_t len = Decode(text, i, &cp);
    if (IsCjk(cp)) {
      t.kind = TextToken::Kind::kCjk;
      t.parts.clear();
      t.joined.clear();
      t.begin = i;
      while (i < text.size()) {
        len = Decode(text, i, &cp);
        if (!IsCjk(cp)) break;
        t.parts.emplace_back(text.substr(i, len));
        i += len;
      }
      t.end = i;
      t.text.assign(text.data() + t.begin, t.end - t.begin);
      fn(t);
      continue;
    }
    if (!IsWordCp(cp) && cp != '_') {
      i += len;
      continue;
    }
    // A compound: word characters and '_', joined by connectors followed by a word character.
    const size_t begin = i;
    while (i < text.size()) {
      len = Decode(text, i, &cp);
      if (IsWordCp(cp) || cp == '_') {
        i += len;
        continue;
      }
      size_t skip = 0;
      if (cp < 0x80 && IsConnector(static_cast<char>(cp))) skip = 1;
      if (cp == ':' && i + 1 < text.size() && text[i + 1] == ':') skip = 2;
      if (skip == 0 || i + skip >= text.size()) break;
      uint32_t next = 0;
      Decode(text, i + skip, &next);
      if (!IsWordCp(next)) break;
      i += skip;
    }
    absl::string_view whole = text.substr(begin, i - begin);
    // Underscores around a word ("__init__") are not part of it.
    while (!whole.empty() && whole.back() == '_') whole.remove_suffix(1);
    while (!whole.empty() && whole.front() == '_') whole.remove_prefix(1);
    if (whole.empty()) continue;
    t.begin = begin;
    t.end = i;
    PartsOf(whole, &t.parts, &t.joined);
    if (t.parts.empty()) continue;
    if (t.parts.size() == 1) {  // a word ("__init__" is the word init)
      t.kind = TextToken::Kind::kWord;
      t.text = t.parts[0];
    } else {
      t.kind = TextToken::Kind::kCompound;
      t.text = whole.size() <= kMaxTermBytes ? LowerAny(whole) : std::string();
    }
    fn(t);
  }
}

std::vector<TextToken> Tokens(absl::string_view text) {
  std::vector<TextToken> out;
  ForEachToken(text, [&](const TextToken& t) { out.push_back(t); });
  return out;
}

}  // namespace issuescope
