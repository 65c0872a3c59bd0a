// Text tokens: how issuescope splits issue text into words, for the index and for queries alike
// (common/index_text.h uses it on both sides, so they cannot drift apart), and for snippets.
//
// Issues are full of identifiers, so a token is a run of word characters joined by connectors
// (`_`, `.`, `-`, `/`, `::`, `'` between word characters): `pin_memory()` is the compound token
// `pin_memory` with parts `pin`, `memory`; `torch.nn.functional` has parts torch, nn,
// functional; `neuron_model_runner.py` has parts neuron, model, runner, py; `RuntimeError` and
// `CUDAGraph` are split at their camel-case humps (runtime, error; cuda, graph), while `fp16`,
// `h100` and `llama3` stay whole; `NCCL_CUMEM_ENABLE` has parts nccl, cumem, enable; a version
// `2.1.0` has parts 2, 1, 0. A plain word is a token with one part. Everything is lower-cased
// (ASCII; other scripts as they are).
//
// Chinese, Japanese and Korean text is a run of characters (kCjk): the index stores each
// character and each pair of neighbours (bigram), so `内存` matches the word, not 内 … 存 apart.
//
// Pure functions; thread-safe; linear in the text's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace issuescope {

// kMaxTermBytes bounds a token's whole form and its parts; longer ones (base64, hashes, long
// URLs) are kept only as their parts, or dropped when a part is longer still.
inline constexpr size_t kMaxTermBytes = 64;

// TextToken is one token of a text.
struct TextToken {
  enum class Kind { kWord, kCompound, kCjk };
  Kind kind = Kind::kWord;
  // The lower-cased token: the word, the compound with its connectors ("pin_memory", "" when
  // longer than kMaxTermBytes), or the CJK run.
  std::string text;
  // kWord: {text}; kCompound: its parts (two or more, lower-cased); kCjk: its characters.
  std::vector<std::string> parts;
  // kCompound: the segments between connectors that camel case split (`cuDNN` in `CUDA/cuDNN`,
  // `DataFrame` in `pd.DataFrame`), lower-cased, with the index of their first part: indexed
  // whole too, so `cudnn` and `dataframe` find them.
  std::vector<std::pair<size_t, std::string>> joined;
  // Byte range of the token in the text.
  size_t begin = 0;
  size_t end = 0;
};

// ForEachToken calls `fn` for every token of `text` in order.
void ForEachToken(absl::string_view text, absl::FunctionRef<void(const TextToken&)> fn);

// Tokens returns every token of `text` (tests and small texts).
std::vector<TextToken> Tokens(absl::string_view text);

// EnglishStem is the stem a word is found by: British spellings are first made American
// (optimise/optimisation/optimiser -> optimize…, behaviour -> behavior, quantisation ->
// quantization), then Xapian's English (Porter2) stemmer runs. `word` is lower-case and
// IsStemmable. One stemmer per thread.
std::string EnglishStem(const std::string& word);

// DecodeUtf8 reads the code point at byte `at` of `s` into *cp and returns its length in bytes
// (1 and U+FFFD for a byte that starts no valid sequence).
size_t DecodeUtf8(absl::string_view s, size_t at, uint32_t* cp);

// IsUtf8Continuation says whether byte `c` continues a multi-byte UTF-8 character (10xxxxxx).
inline bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Utf8Boundary is the greatest character boundary of `s` at or before byte `at` (s.size() when
// `at` is past the end): cutting valid UTF-8 there never splits a character. Every cut of text
// that reaches a protobuf string field, a snippet or a term goes through it (or Utf8Prefix).
size_t Utf8Boundary(absl::string_view s, size_t at);

// Utf8Prefix is the longest prefix of `s` of at most `max_bytes` bytes that ends on a character
// boundary.
absl::string_view Utf8Prefix(absl::string_view s, size_t max_bytes);

// IsValidUtf8 says whether `s` is well-formed UTF-8 (shortest forms, no surrogates, at most
// U+10FFFF), as protobuf requires of string fields.
bool IsValidUtf8(absl::string_view s);

// IsCjkCodePoint: Han (CJK ideographs and extensions), kana and Hangul syllables.
bool IsCjkCodePoint(uint32_t cp);

// IsStemmable says whether a lower-cased part is an English word worth stemming (ASCII letters
// only, at least two of them).
bool IsStemmable(absl::string_view part);

}  // namespace issuescope
