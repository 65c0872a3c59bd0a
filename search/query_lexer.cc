#include "query_lexer.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace issuescope::search {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Lexer walks the query once; columns count UTF-8 characters, not bytes.
class Lexer {
 public:
  explicit Lexer(absl::string_view query) : q_(query) {
    columns_.reserve(q_.size() + 1);
    int column = 0;
    for (size_t i = 0; i < q_.size(); ++i) {
      if ((static_cast<unsigned char>(q_[i]) & 0xC0) != 0x80) ++column;
      columns_.push_back(column);
    }
    columns_.push_back(column + 1);
  }

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    size_t i = 0;
    int depth = 0;  // groups opened and not yet closed
    while (i < q_.size()) {
      const char c = q_[i];
      if (IsSpace(c)) {
        ++i;
        continue;
      }
      Token token;
      token.column = Column(i);
      if (c == '(' || c == ')') {
        token.kind = c == '(' ? TokenKind::kLParen : TokenKind::kRParen;
        token.text = std::string(1, c);
        depth += c == '(' ? 1 : -1;
        ++i;
      } else if (c == '"') {
        token.kind = TokenKind::kPhrase;
        if (!ReadQuoted(&i, &token.text)) return UnclosedQuote(token.column);
      } else if (c == '-') {
        if (i + 1 >= q_.size() || IsSpace(q_[i + 1]) || q_[i + 1] == ')') {
          return absl::InvalidArgumentError(absl::StrCat(
              "dangling operator '-' at column ", token.column,
              ": expected a term right after it (write -label:bug or -word)"));
        }
        token.kind = TokenKind::kMinus;
        token.text = "-";
        ++i;
      } else if (size_t name_end = QualifierNameEnd(i); name_end != i) {
        token.kind = TokenKind::kQualifier;
        token.text = absl::AsciiStrToLower(q_.substr(i, name_end - i));
        i = name_end + 1;  // past ':'
        if (absl::Status s = ReadValues(&i, &token.values); !s.ok()) return s;
      } else {
        // A word runs to white space or a quote. Parentheses inside a word belong to it, as
        // in pasted code (`model.evaluate()`, `slow(caused`, `f(...)`): a '(' after the word's
        // first character, and a ')' that closes one of those. A ')' with no '(' in the word
        // closes a group.
        size_t end = i;
        int open = 0;
        while (end < q_.size() && !IsSpace(q_[end]) && q_[end] != '"') {
          if (q_[end] == '(') {
            if (end == i) break;
            ++open;
          } else if (q_[end] == ')') {
            // Closes a group only while one is open ("below):" is a word).
            if (open == 0 && depth > 0) break;
            if (open > 0) --open;
          }
          ++end;
        }
        token.text = std::string(q_.substr(i, end - i));
        i = end;
        // Operators are upper case, as GitHub's: a lower-case "and", "or" or "not" in pasted
        // text is a word.
        if (token.text == "AND") {
          token.kind = TokenKind::kAnd;
        } else if (token.text == "OR") {
          token.kind = TokenKind::kOr;
        } else if (token.text == "NOT") {
          token.kind = TokenKind::kNot;
        } else {
          token.kind = TokenKind::kWord;
        }
      }
      tokens.push_back(std::move(token));
    }
    return tokens;
  }

 private:
  int Column(size_t byte_pos) const { return columns_[byte_pos]; }

  absl::Status UnclosedQuote(int column) const {
    return absl::InvalidArgumentError(
        absl::StrCat("unbalanced quote: '\"' at column ", column, " is not closed"));
  }

  // QualifierNameEnd returns the position of the ':' ending a qualifier name that starts at
  // `i`, or `i` when the text there is not a qualifier. `std::vector` and `http://…` are not
  // qualifiers (a ':' or '/' follows the colon).
  size_t QualifierNameEnd(size_t i) const {
    size_t j = i;
    while (j < q_.size() && (std::isalpha(static_cast<unsigned char>(q_[j])) || q_[j] == '_')) {
      ++j;
    }
    if (j == i || j >= q_.size() || q_[j] != ':') return i;
    if (j + 1 < q_.size() && (q_[j + 1] == ':' || q_[j + 1] == '/')) return i;
    return j;
  }

  // ReadQuoted reads a quoted string starting at the opening quote at *i; \" and \\ escape.
  // Leaves *i after the closing quote. False when the quote is not closed.
  bool ReadQuoted(size_t* i, std::string* out) const {
    size_t k = *i + 1;
    while (k < q_.size()) {
      const char c = q_[k];
      if (c == '\\' && k + 1 < q_.size() && (q_[k + 1] == '"' || q_[k + 1] == '\\')) {
        out->push_back(q_[k + 1]);
        k += 2;
      } else if (c == '"') {
        *i = k + 1;
        return true;
      } else {
        out->push_back(c);
        ++k;
      }
    }
    return false;
  }

  // ReadValues reads `value[,value…]` at *i; each value is bare text, quoted text, or both
  // run together. A bare value ends at white space or ')'.
  absl::Status ReadValues(size_t* i, std::vector<QualifierValue>* values) const {
    size_t k = *i;
    QualifierValue value;
    value.column = Column(k);
    while (true) {
      if (k >= q_.size() || IsSpace(q_[k]) || q_[k] == ')') {
        values->push_back(std::move(value));
        break;
      }
      if (q_[k] == ',') {
        values->push_back(std::move(value));
        value = QualifierValue();
        ++k;
        value.column = Column(k);
        continue;
      }
      if (q_[k] == '"') {
        const int column = Column(k);
        if (!ReadQuoted(&k, &value.text)) return UnclosedQuote(column);
        continue;
      }
      value.text.push_back(q_[k]);
      ++k;
    }
    *i = k;
    return absl::OkStatus();
  }

  absl::string_view q_;
  std::vector<int> columns_;  // 1-based character column of each byte (and of the end)
};

}  // namespace

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kQualifier:
      return absl::StrCat("qualifier '", token.text, ":' at column ", token.column);
    case TokenKind::kPhrase:
      return absl::StrCat("phrase at column ", token.column);
    default:
      return absl::StrCat("'", token.text, "' at column ", token.column);
  }
}

absl::StatusOr<std::vector<Token>> Lex(absl::string_view query) { return Lexer(query).Run(); }

}  // namespace issuescope::search
