// The lexer of the issuescope query language (docs/QUERY.md): splits a query string into
// tokens — words, quoted phrases, `name:value` qualifiers, parentheses and the operators
// AND / OR / NOT / `-` — each with the 1-based column (in characters) where it starts, so the
// parser can name the place of an error. Plain functions over values; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::search {

// TokenKind is the kind of one token.
enum class TokenKind {
  kWord,       // a bare word, e.g. `crash` or `quant*`
  kPhrase,     // a quoted phrase, e.g. `"illegal memory access"` (text without the quotes)
  kQualifier,  // `name:value[,value…]`, e.g. `label:"module: cuda"`
  kLParen,     // `(`
  kRParen,     // `)`
  kAnd,        // `AND` (any case)
  kOr,         // `OR` (any case)
  kNot,        // `NOT` (any case)
  kMinus,      // `-` directly before a term
};

// QualifierValue is one comma-separated value of a qualifier, quotes removed.
struct QualifierValue {
  // The value text (may be empty, which the parser rejects).
  std::string text;
  // 1-based column where the value starts.
  int column = 0;
};

// Token is one lexical element of a query.
struct Token {
  // The kind of token.
  TokenKind kind = TokenKind::kWord;
  // 1-based column (in characters, not bytes) of the token's first character.
  int column = 0;
  // Word or phrase text; the qualifier name (lower-cased) for kQualifier; the operator as
  // written for operators and parentheses.
  std::string text;
  // For kQualifier: the values (a comma list means several); empty for other kinds.
  std::vector<QualifierValue> values;
};

// DescribeToken returns a short human description of a token for error messages, e.g.
// "'OR' at column 7".
std::string DescribeToken(const Token& token);

// Lex splits `query` into tokens. INVALID_ARGUMENT with the column for an unclosed quote or a
// dangling `-`. An empty or blank query yields no tokens.
absl::StatusOr<std::vector<Token>> Lex(absl::string_view query);

}  // namespace issuescope::search
