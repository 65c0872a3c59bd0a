#include "query_parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/index_text.h"
#include "common/xapian_status.h"
#include "proximity.h"
#include "query_lexer.h"
#include "text_query.h"

namespace issuescope::search {
namespace {

// Clause is a parsed sub-expression.
struct Clause {
  // The constraint; empty when the clause constrains nothing (e.g. `sort:`).
  Xapian::Query query;
  // True when free text inside contributes weight.
  bool has_text = false;
  // True when the clause is to be excluded (NOT / -).
  bool negated = false;
};

// (A fresh match-all query, not the shared Query::MatchAll: Xapian's reference counts are not
// atomic, and queries are built and run on several threads at once.)
Xapian::Query MatchAllFilter() { return BooleanFilter(Xapian::Query(std::string())); }

Xapian::Query Combine(Xapian::Query::op op, const std::vector<Xapian::Query>& queries) {
  if (queries.size() == 1) return queries[0];
  return Xapian::Query(op, queries.begin(), queries.end());
}

// Parser is the recursive-descent parser over the tokens of one query.
class Parser {
 public:
  // Parser parses `tokens`; `db` expands the short forms of taxonomy qualifiers.
  Parser(const std::vector<Token>& tokens, const Xapian::Database& db, ParseOptions options)
      : tokens_(tokens), db_(db), options_(options) {}

  absl::StatusOr<ParsedQuery> Run() {
    ParsedQuery parsed;
    absl::StatusOr<Clause> clause = ParseOr();
    if (!clause.ok()) return clause.status();
    if (const Token* t = Peek(); t != nullptr) {
      // ParseOr stops early only at a ')' it did not open.
      return absl::InvalidArgumentError(absl::StrCat("unbalanced parenthesis: ')' at column ",
                                                     t->column, " has no matching '('"));
    }
    if (clause->query.empty() && !unsearchable_.empty()) {
      return absl::InvalidArgumentError(unsearchable_);
    }
    parsed.match_all = clause->query.empty();
    parsed.query = parsed.match_all ? MatchAllFilter() : clause->query;
    parsed.has_text = clause->has_text;
    parsed.relaxable = relaxable_;
    if (sort_) parsed.sort = *sort_;
    // Ranked by relevance: the query's words in the title add a bonus (they decide nothing
    // about which issues match).
    if (parsed.has_text && !sort_ && !bonus_words_.empty()) {
      Xapian::Query bonus = TitleBonusQuery(bonus_words_);
      if (!bonus.empty()) {
        parsed.query = Xapian::Query(Xapian::Query::OP_AND_MAYBE, parsed.query, bonus);
        if (options_.explain) {
          for (auto& part : TitleBonusParts(bonus_words_)) {
            explain_parts_.push_back(std::move(part));
          }
        }
      }
    }
    if (parsed.has_text && !sort_) parsed.proximity_terms = ProximityTerms(bonus_words_);
    parsed.explain_parts = std::move(explain_parts_);
    return parsed;
  }

 private:
  const Token* Peek() const { return pos_ < tokens_.size() ? &tokens_[pos_] : nullptr; }

  bool PeekIs(TokenKind kind) const { return Peek() != nullptr && Peek()->kind == kind; }

  // StartsTerm reports whether the next token can begin a unary expression.
  bool StartsTerm() const {
    const Token* t = Peek();
    return t != nullptr && t->kind != TokenKind::kOr && t->kind != TokenKind::kAnd &&
           t->kind != TokenKind::kRParen;
  }

  absl::Status Dangling(const Token& op) const {
    return absl::InvalidArgumentError(absl::StrCat("dangling operator ", DescribeToken(op),
                                                   ": expected a term after it"));
  }

  absl::StatusOr<Clause> ParseOr() {
    std::vector<Clause> items;
    absl::StatusOr<Clause> first = ParseAnd();
    if (!first.ok()) return first.status();
    items.push_back(*std::move(first));
    while (PeekIs(TokenKind::kOr)) {
      const Token& op = tokens_[pos_++];
      if (!StartsTerm()) return Dangling(op);
      absl::StatusOr<Clause> next = ParseAnd();
      if (!next.ok()) return next.status();
      items.push_back(*std::move(next));
    }
    std::vector<Xapian::Query> queries;
    Clause result;
    for (const Clause& c : items) {
      if (c.query.empty()) continue;
      queries.push_back(c.query);
      result.has_text = result.has_text || c.has_text;
    }
    if (!queries.empty()) result.query = Combine(Xapian::Query::OP_OR, queries);
    return result;
  }

  // ScopeOfGroup returns the text fields set by `in:` qualifiers directly in the AND-group
  // starting at the current token (not inside its parentheses), or nullopt when it has none.
  absl::StatusOr<std::optional<std::vector<index::TextField>>> ScopeOfGroup() const {
    std::optional<std::vector<index::TextField>> fields;
    int depth = 0;
    for (size_t i = pos_; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      if (t.kind == TokenKind::kLParen) ++depth;
      if (t.kind == TokenKind::kRParen && depth-- == 0) break;
      if (depth == 0 && t.kind == TokenKind::kOr) break;
      if (depth != 0 || t.kind != TokenKind::kQualifier || t.text != "in") continue;
      absl::StatusOr<QualifierResult> q = BuildQualifier(t, db_);
      if (!q.ok()) return q.status();
      if (!fields) fields.emplace();
      for (index::TextField f : q->text_fields) {
        if (std::find(fields->begin(), fields->end(), f) == fields->end()) fields->push_back(f);
      }
    }
    return fields;
  }

  absl::StatusOr<Clause> ParseAnd() {
    absl::StatusOr<std::optional<std::vector<index::TextField>>> scope = ScopeOfGroup();
    if (!scope.ok()) return scope.status();
    // A group without `in:` searches the fields of the enclosing group (all text at the top).
    std::vector<index::TextField> fields = {index::TextField::kAll};
    if (*scope) {
      fields = **scope;
    } else if (!scopes_.empty()) {
      fields = scopes_.back();
    }
    scopes_.push_back(fields);
    const int text_before = text_atoms_;
    absl::StatusOr<Clause> result = ParseAndInScope();
    scopes_.pop_back();
    if (result.ok() && *scope && text_atoms_ == text_before) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'in:' at column ", in_column_, " scopes no free text; expected a word or \"phrase\" "
          "in the same group (e.g. `crash in:title`)"));
    }
    return result;
  }

  absl::StatusOr<Clause> ParseAndInScope() {
    std::vector<Xapian::Query> text, filters, negatives;
    bool any = false;
    while (true) {
      const Token* t = Peek();
      if (t == nullptr || t->kind == TokenKind::kOr || t->kind == TokenKind::kRParen) break;
      if (t->kind == TokenKind::kAnd) {
        if (!any) {
          return absl::InvalidArgumentError(absl::StrCat(
              "dangling operator ", DescribeToken(*t), ": expected a term before it"));
        }
        ++pos_;
        if (!StartsTerm()) return Dangling(*t);
        continue;
      }
      absl::StatusOr<Clause> c = ParseUnary();
      if (!c.ok()) return c.status();
      any = true;
      if (c->query.empty()) continue;
      if (c->negated) {
        negatives.push_back(c->query);
      } else if (c->has_text) {
        text.push_back(c->query);
      } else {
        filters.push_back(c->query);
      }
    }
    if (!any) return NoTerm();
    Clause result;
    result.has_text = !text.empty();
    if (text.size() >= 2) relaxable_ = true;
    if (!text.empty()) {
      result.query = Combine(options_.relax ? Xapian::Query::OP_OR : Xapian::Query::OP_AND, text);
    }
    if (!filters.empty()) {
      Xapian::Query filter = Combine(Xapian::Query::OP_AND, filters);
      result.query = result.query.empty()
                         ? filter
                         : Xapian::Query(Xapian::Query::OP_FILTER, result.query, filter);
    }
    if (!negatives.empty()) {
      if (result.query.empty()) result.query = MatchAllFilter();
      result.query = Xapian::Query(Xapian::Query::OP_AND_NOT, result.query,
                                   Combine(Xapian::Query::OP_OR, negatives));
    }
    return result;
  }

  // NoTerm explains why an and_expr found nothing where a term was expected.
  absl::Status NoTerm() const {
    const Token* t = Peek();
    if (t == nullptr) {
      return absl::InvalidArgumentError("expected a term at the end of the query");
    }
    if (t->kind == TokenKind::kRParen && depth_ > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("empty parentheses: expected a term before ')' at column ", t->column));
    }
    if (t->kind == TokenKind::kRParen) {
      return absl::InvalidArgumentError(absl::StrCat("unbalanced parenthesis: ')' at column ",
                                                     t->column, " has no matching '('"));
    }
    return absl::InvalidArgumentError(absl::StrCat("dangling operator ", DescribeToken(*t),
                                                   ": expected a term before it"));
  }

  absl::StatusOr<Clause> ParseUnary() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::kNot && t.kind != TokenKind::kMinus) return ParseAtom();
    ++pos_;
    if (!StartsTerm()) return Dangling(t);
    const size_t words_before = bonus_words_.size();
    absl::StatusOr<Clause> operand = ParseUnary();
    if (!operand.ok()) return operand.status();
    if (operand->query.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nothing to negate after ", DescribeToken(t), ": sort: and in: are not filters"));
    }
    operand->negated = !operand->negated;
    // An excluded word earns no title bonus and is no neighbour for proximity (`kv -foo cache`
    // weighs `kv cache`).
    if (operand->negated) bonus_words_.resize(words_before);
    return operand;
  }

  absl::StatusOr<Clause> ParseAtom() {
    const Token& t = tokens_[pos_++];
    switch (t.kind) {
      case TokenKind::kLParen: {
        if (Peek() == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              "unbalanced parenthesis: '(' at column ", t.column, " is not closed"));
        }
        ++depth_;
        absl::StatusOr<Clause> inner = ParseOr();
        if (!inner.ok()) return inner.status();
        --depth_;
        if (!PeekIs(TokenKind::kRParen)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "unbalanced parenthesis: '(' at column ", t.column, " is not closed"));
        }
        ++pos_;
        return inner;
      }
      case TokenKind::kQualifier:
        return Qualifier(t);
      case TokenKind::kWord:
        if (!t.text.empty() && t.text.back() != '*') bonus_words_.push_back(t.text);
        return Text(t, t.text, false);
      case TokenKind::kPhrase:
        return Text(t, t.text, true);
      default:  // operators are handled by the callers
        return absl::InternalError(absl::StrCat("unexpected ", DescribeToken(t)));
    }
  }

  absl::StatusOr<Clause> Qualifier(const Token& t) {
    absl::StatusOr<QualifierResult> q = BuildQualifier(t, db_);
    if (!q.ok()) return q.status();
    Clause clause;
    if (!q->text_fields.empty()) {  // `in:`: applied by ParseAnd to its group's text
      in_column_ = t.column;
      return clause;
    }
    if (q->sort) {
      if (sort_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "second 'sort:' at column ", t.column, "; a query takes at most one sort order"));
      }
      sort_ = q->sort;
      return clause;
    }
    clause.query = q->filter;
    return clause;
  }

  absl::StatusOr<Clause> Text(const Token& t, const std::string& text, bool phrase) {
    Clause clause;
    ++text_atoms_;
    std::vector<Xapian::Query> alternatives;
    for (index::TextField field : scopes_.back()) {
      absl::StatusOr<Xapian::Query> q = TextQuery(text, phrase, field, db_);
      if (!q.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("cannot parse the text at column ",
                                                       t.column, ": ", q.status().message()));
      }
      if (q->empty()) continue;
      // Bound the expansion before any of it happens (ScopeToField expands wildcards too).
      wildcard_terms_ +=
          WildcardExpansion(*q, db_, kMaxQueryWildcardTerms - wildcard_terms_);
      if (wildcard_terms_ > kMaxQueryWildcardTerms) {
        return absl::InvalidArgumentError(absl::StrCat(
            "too many wildcard words: with '", t.text, "' at column ", t.column,
            " the query's wildcards expand to more than ", kMaxQueryWildcardTerms,
            " words, the limit per query; use longer prefixes or fewer wildcards"));
      }
      alternatives.push_back(ScopeToField(*q, field, db_));
    }
    if (!alternatives.empty()) {
      clause.query = Combine(Xapian::Query::OP_OR, alternatives);
      if (options_.explain) {
        explain_parts_.emplace_back(absl::StrCat(phrase ? "phrase \"" : "text \"", text, "\""),
                                    clause.query);
      }
    }
    if (clause.query.empty()) {
      // Punctuation among words (`analyzepsbt[`, `]`) constrains nothing; a query of nothing
      // else is an error (Run).
      if (unsearchable_.empty()) {
        unsearchable_ = absl::StrCat("nothing searchable in '", t.text, "' at column ", t.column,
                                     "; expected a word, a \"phrase\" or a qualifier");
      }
      --text_atoms_;
      return clause;
    }
    clause.has_text = true;
    return clause;
  }

  const std::vector<Token>& tokens_;
  const Xapian::Database& db_;
  const ParseOptions options_;
  bool relaxable_ = false;
  // The error for a text atom with nothing searchable, kept in case nothing else is.
  std::string unsearchable_;
  std::vector<std::pair<std::string, Xapian::Query>> explain_parts_;
  // Unquoted words of the query, for the title bonus.
  std::vector<std::string> bonus_words_;
  // Text fields of the enclosing AND-groups, innermost last.
  std::vector<std::vector<index::TextField>> scopes_;
  // Free-text atoms parsed so far, and the column of the last `in:` seen.
  int text_atoms_ = 0;
  int in_column_ = 0;
  // Words the wildcards parsed so far expand to (at most kMaxQueryWildcardTerms + 1).
  unsigned wildcard_terms_ = 0;
  size_t pos_ = 0;
  int depth_ = 0;
  std::optional<SortOrder> sort_;
};

}  // namespace

QueryParser::QueryParser(const Xapian::Database& db) : db_(db) {}

absl::StatusOr<ParsedQuery> QueryParser::Parse(absl::string_view query,
                                               ParseOptions options) const {
  if (query.size() > kMaxQueryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("query is ", query.size(),
                                                   " bytes long; at most ", kMaxQueryBytes,
                                                   " bytes are accepted"));
  }
  absl::StatusOr<std::vector<Token>> tokens = Lex(query);
  if (!tokens.ok()) return tokens.status();
  try {
    if (tokens->empty()) {
      ParsedQuery parsed;
      parsed.query = MatchAllFilter();
      parsed.match_all = true;
      return parsed;
    }
    return Parser(*tokens, db_, options).Run();
  } catch (const Xapian::DatabaseModifiedError&) {
    throw;  // a newer revision was committed: the searcher reopens and retries
  } catch (const Xapian::NetworkError&) {
    throw;  // a shard server's connection broke: the searcher reconnects (or fails over) and retries
  } catch (const Xapian::Error& e) {
    return FromXapianError(e, "parsing the query failed");
  }
}

}  // namespace issuescope::search
