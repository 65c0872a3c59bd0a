#include "tests/simulator/graphql.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace issuescope::sim::graphql {
namespace {

using nlohmann::json;

// Reader is a recursive-descent parser over the query text (GraphQL's grammar: commas are
// whitespace, '#' starts a comment to the end of the line).
class Reader {
 public:
  Reader(absl::string_view text, const json& variables) : text_(text), variables_(variables) {}

  absl::StatusOr<Operation> Document() {
    Operation op;
    Skip();
    if (Peek() == '{') {
      if (!SelectionSet(&op.selections)) return error_;
    } else {
      std::string keyword;
      if (!Name(&keyword)) return error_;
      if (keyword != "query") {
        return Fail(absl::StrCat("unsupported operation '", keyword,
                                 "' (the simulator answers queries only)"));
      }
      Skip();
      if (IsNameStart(Peek()) && !Name(&op.name)) return error_;
      Skip();
      if (Peek() == '(' && !VariableDefinitions()) return error_;
      Skip();
      if (Peek() == '@') return Fail("directives are not supported");
      if (!SelectionSet(&op.selections)) return error_;
    }
    Skip();
    if (pos_ < text_.size()) {
      if (text_.substr(pos_, 8) == "fragment") return Fail("fragments are not supported");
      return Fail("more than one operation (the simulator answers one per request)");
    }
    return op;
  }

 private:
  static bool IsNameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
  static bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void Skip() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (static_cast<unsigned char>(c) == 0xEF && text_.substr(pos_, 3) == "\xEF\xBB\xBF") {
        pos_ += 3;  // a byte order mark
      } else {
        break;
      }
    }
  }

  // Fail records a syntax error at the current position (line and column, 1-based).
  absl::Status Fail(absl::string_view what) {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error_ = absl::InvalidArgumentError(
        absl::StrCat("Parse error on line ", line, ", column ", column, ": ", what));
    return error_;
  }

  bool Expect(char c) {
    Skip();
    if (Peek() != c) {
      Fail(pos_ >= text_.size() ? absl::StrCat("expected '", std::string(1, c), "', found the end")
                                : absl::StrCat("expected '", std::string(1, c), "', found '",
                                               std::string(1, Peek()), "'"));
      return false;
    }
    ++pos_;
    return true;
  }

  bool Name(std::string* out) {
    Skip();
    if (!IsNameStart(Peek())) {
      Fail(pos_ >= text_.size() ? "expected a name, found the end"
                                : absl::StrCat("expected a name, found '", std::string(1, Peek()),
                                               "'"));
      return false;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  // Type skips a type reference: Name, [Type], either followed by '!'.
  bool Type() {
    Leave leave{&depth_};
    if (!Enter()) return false;
    Skip();
    if (Peek() == '[') {
      ++pos_;
      if (!Type() || !Expect(']')) return false;
    } else {
      std::string name;
      if (!Name(&name)) return false;
    }
    Skip();
    if (Peek() == '!') ++pos_;
    return true;
  }

  bool VariableDefinitions() {
    if (!Expect('(')) return false;
    for (;;) {
      Skip();
      if (Peek() == ')') {
        ++pos_;
        return true;
      }
      if (!Expect('$')) return false;
      std::string name;
      if (!Name(&name) || !Expect(':') || !Type()) return false;
      Skip();
      if (Peek() == '=') {
        ++pos_;
        json value;
        if (!Value(/*constant=*/true, &value)) return false;
        defaults_[name] = std::move(value);
      }
      declared_.insert(name);
    }
  }

  bool SelectionSet(std::vector<Field>* out) {
    Leave leave{&depth_};
    if (!Enter()) return false;
    if (!Expect('{')) return false;
    for (;;) {
      Skip();
      if (Peek() == '}') {
        ++pos_;
        if (out->empty()) {
          Fail("a selection set selects nothing");
          return false;
        }
        return true;
      }
      if (text_.substr(pos_, 3) == "...") {
        Fail("fragments are not supported");
        return false;
      }
      Field field;
      if (!Name(&field.name)) return false;
      Skip();
      if (Peek() == ':') {
        ++pos_;
        field.alias = field.name;
        if (!Name(&field.name)) return false;
      } else {
        field.alias = field.name;
      }
      Skip();
      if (Peek() == '(' && !Arguments(&field.args)) return false;
      Skip();
      if (Peek() == '@') {
        Fail("directives are not supported");
        return false;
      }
      if (Peek() == '{' && !SelectionSet(&field.selections)) return false;
      out->push_back(std::move(field));
    }
  }

  bool Arguments(json* out) { return Expect('(') && Pairs(')', /*constant=*/false, out); }

  // Pairs reads `name: value` pairs into the object `out` up to and including `close` (an
  // argument list's ')' or an input object's '}').
  bool Pairs(char close, bool constant, json* out) {
    for (;;) {
      Skip();
      if (Peek() == close) {
        ++pos_;
        return true;
      }
      std::string name;
      json value;
      if (!Name(&name) || !Expect(':') || !Value(constant, &value)) return false;
      (*out)[name] = std::move(value);
    }
  }

  bool Value(bool constant, json* out) {
    Leave leave{&depth_};
    if (!Enter()) return false;
    Skip();
    const char c = Peek();
    if (c == '$') {
      if (constant) {
        Fail("a default value cannot use a variable");
        return false;
      }
      ++pos_;
      std::string name;
      if (!Name(&name)) return false;
      if (declared_.count(name) == 0) {
        Fail(absl::StrCat("variable $", name, " is not defined by the operation"));
        return false;
      }
      if (variables_.is_object() && variables_.contains(name)) {
        *out = variables_[name];
      } else if (defaults_.count(name) > 0) {
        *out = defaults_[name];
      } else {
        *out = nullptr;  // a nullable variable left out
      }
      return true;
    }
    if (c == '"') return String(out);
    if (c == '-' || absl::ascii_isdigit(c)) return Number(out);
    if (c == '[') {
      ++pos_;
      *out = json::array();
      for (;;) {
        Skip();
        if (Peek() == ']') {
          ++pos_;
          return true;
        }
        json item;
        if (!Value(constant, &item)) return false;
        out->push_back(std::move(item));
      }
    }
    if (c == '{') {
      ++pos_;
      *out = json::object();
      return Pairs('}', constant, out);
    }
    std::string name;
    if (!Name(&name)) return false;
    if (name == "true" || name == "false") {
      *out = name == "true";
    } else if (name == "null") {
      *out = nullptr;
    } else {
      *out = name;  // an enum value
    }
    return true;
  }

  bool Number(json* out) {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    bool is_float = false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (absl::ascii_isdigit(c)) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && is_float)) {
        is_float = true;
        ++pos_;
      } else {
        break;
      }
    }
    const std::string text(text_.substr(start, pos_ - start));
    if (is_float) {
      double d = 0;
      if (!absl::SimpleAtod(text, &d)) {
        Fail(absl::StrCat("'", text, "' is not a number"));
        return false;
      }
      *out = d;
      return true;
    }
    int64_t n = 0;
    if (!absl::SimpleAtoi(text, &n)) {
      Fail(absl::StrCat("'", text, "' is not an integer"));
      return false;
    }
    *out = n;
    return true;
  }

  bool String(json* out) {
    if (text_.substr(pos_, 3) == "\"\"\"") {  // a block string: raw up to the closing quotes
      const size_t end = text_.find("\"\"\"", pos_ + 3);
      if (end == absl::string_view::npos) {
        Fail("unterminated block string");
        return false;
      }
      *out = std::string(text_.substr(pos_ + 3, end - pos_ - 3));
      pos_ = end + 3;
      return true;
    }
    // A quoted string: JSON's escapes are GraphQL's, so let the JSON parser read it.
    const size_t start = pos_++;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\n') break;
      pos_ += text_[pos_] == '\\' ? 2 : 1;
    }
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      Fail("unterminated string");
      return false;
    }
    ++pos_;
    json parsed = json::parse(text_.substr(start, pos_ - start), nullptr, false);
    if (!parsed.is_string()) {
      Fail("malformed string escape");
      return false;
    }
    *out = std::move(parsed);
    return true;
  }

  // Enter counts one more level of nesting (selection sets, lists, objects, list types); false
  // (a parse error) beyond kMaxDepth, so a hostile query cannot exhaust the stack.
  bool Enter() {
    if (++depth_ > kMaxDepth) {
      Fail(absl::StrCat("nested more than ", kMaxDepth, " levels deep"));
      return false;
    }
    return true;
  }
  struct Leave {
    int* depth;
    ~Leave() { --*depth; }
  };
  static constexpr int kMaxDepth = 64;

  absl::string_view text_;
  const json& variables_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::set<std::string> declared_;
  std::map<std::string, json> defaults_;
  absl::Status error_ = absl::InvalidArgumentError("parse error");
};

// PageArg returns a connection's `first` or `last` (0 when neither is an integer).
int64_t PageArg(const Field& field) {
  for (const char* name : {"first", "last"}) {
    if (field.args.contains(name) && field.args[name].is_number_integer()) {
      return field.args[name].get<int64_t>();
    }
  }
  return 0;
}

bool SelectsItems(const Field& field) {
  for (const Field& f : field.selections) {
    if (f.name == "nodes" || f.name == "edges") return true;
  }
  return false;
}

absl::Status Walk(const std::vector<Field>& fields, int64_t multiplier,
                  const std::set<std::string>& connections, Cost* cost) {
  for (const Field& f : fields) {
    int64_t below = multiplier;
    if (connections.count(f.name) > 0) {
      const int64_t page = PageArg(f);
      if (SelectsItems(f) && page == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("You must provide a `first` or `last` value to properly paginate the `",
                         f.name, "` connection."));
      }
      if (page < 0 || page > 100) {
        return absl::InvalidArgumentError(
            absl::StrCat("Requesting ", page, " records on the `", f.name,
                         "` connection exceeds the `first` limit of 100 records."));
      }
      // Saturating arithmetic: ten nested first:100 would overflow int64; anything near the cap
      // is far beyond the node limit anyway.
      constexpr int64_t kCap = int64_t{1} << 50;
      auto mul = [](int64_t a, int64_t b) { return b != 0 && a > kCap / b ? kCap : a * b; };
      cost->requests = std::min(kCap, cost->requests + multiplier);
      const int64_t items = std::max<int64_t>(page, 1);
      cost->nodes = std::min(kCap, cost->nodes + mul(multiplier, page));
      below = mul(multiplier, items);
    }
    absl::Status s = Walk(f.selections, below, connections, cost);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Operation> Parse(absl::string_view body) {
  const json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    return absl::InvalidArgumentError("Problems parsing JSON");
  }
  if (!request.contains("query") || !request["query"].is_string()) {
    return absl::InvalidArgumentError("A query attribute must be specified and must be a string.");
  }
  json variables = json::object();
  if (request.contains("variables") && !request["variables"].is_null()) {
    variables = request["variables"];
    if (!variables.is_object()) {
      return absl::InvalidArgumentError("Variables are invalid JSON: not an object.");
    }
  }
  const std::string query = request["query"].get<std::string>();
  Reader reader(query, variables);
  return reader.Document();
}

absl::StatusOr<Cost> Analyse(const Operation& op, const std::set<std::string>& connections) {
  Cost cost;
  absl::Status s = Walk(op.selections, 1, connections, &cost);
  if (!s.ok()) return s;
  bool rate_limit_only = true;
  for (const Field& f : op.selections) rate_limit_only = rate_limit_only && f.name == "rateLimit";
  cost.points = rate_limit_only ? 0
                                : std::max<int64_t>(1, std::llround(cost.requests / 100.0));
  return cost;
}

}  // namespace issuescope::sim::graphql
