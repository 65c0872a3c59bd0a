#include "qualifiers.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "search/full_coverage.h"
#include "search/match_split.h"
#include "revision_cache.h"

namespace issuescope::search {
namespace {

// The indexer truncates boolean terms to this many bytes (common/index_document.cc).
constexpr size_t kMaxTermBytes = 240;

using Handler =
    std::function<absl::StatusOr<QualifierResult>(const Token&, const Xapian::Database&)>;

absl::Status BadValue(const Token& token, const QualifierValue& value, absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat("bad ", token.text, ": value '", value.text,
                                                 "' at column ", value.column, "; expected ",
                                                 expected));
}

std::string BooleanTerm(absl::string_view prefix, absl::string_view value) {
  std::string term = absl::StrCat(prefix, index::NormalizeTermValue(std::string(value)));
  if (term.size() > kMaxTermBytes) term.resize(kMaxTermBytes);
  return term;
}

// NothingFilter matches no document. Not Query::MatchNothing, which is the empty query the
// parser reads as "no constraint": the bare id prefix "Q" is a term no document has (every id
// term continues with a repository slug).
Xapian::Query NothingFilter() { return BooleanFilter(Xapian::Query(index::kIdPrefix)); }

// AnyTerm is the OR of the given terms, as a weightless filter (FilterTerm each).
QualifierResult AnyTerm(const Xapian::Database& db, const std::vector<std::string>& terms) {
  std::vector<Xapian::Query> queries;
  queries.reserve(terms.size());
  for (const std::string& term : terms) queries.push_back(FilterTerm(db, term));
  QualifierResult result;
  result.filter =
      BooleanFilter(Xapian::Query(Xapian::Query::OP_OR, queries.begin(), queries.end()));
  return result;
}

// TermHandler makes a handler for a qualifier whose values map 1:1 to `prefix + value`.
Handler TermHandler(const char* prefix) {
  return [prefix](const Token& token,
                  const Xapian::Database& db) -> absl::StatusOr<QualifierResult> {
    std::vector<std::string> terms;
    for (const QualifierValue& v : token.values) terms.push_back(BooleanTerm(prefix, v.text));
    return AnyTerm(db, terms);
  };
}

absl::StatusOr<QualifierResult> RepoHandler(const Token& token, const Xapian::Database& db) {
  std::vector<std::string> terms;
  for (const QualifierValue& v : token.values) {
    absl::string_view text = v.text;
    std::string tracker;
    if (size_t colon = text.find(':'); colon != absl::string_view::npos) {
      absl::StatusOr<v1::Tracker> t = ParseTrackerName(text.substr(0, colon));
      if (!t.ok()) return BadValue(token, v, "OWNER/NAME or TRACKER:OWNER/NAME");
      tracker = TrackerName(*t);
      text.remove_prefix(colon + 1);
    }
    const size_t slash = text.find('/');
    if (slash == 0 || slash == absl::string_view::npos || absl::EndsWith(text, "/")) {
      return BadValue(token, v, "OWNER/NAME or TRACKER:OWNER/NAME");
    }
    terms.push_back(tracker.empty()
                        ? BooleanTerm(index::kRepoPrefix, text)
                        : BooleanTerm(index::kRepoSlugPrefix, absl::StrCat(tracker, ":", text)));
  }
  return AnyTerm(db, terms);
}

absl::StatusOr<QualifierResult> IsHandler(const Token& token, const Xapian::Database& db) {
  std::vector<std::string> terms;
  for (const QualifierValue& v : token.values) {
    const std::string value = absl::AsciiStrToLower(v.text);
    // Gitee's "progressing" counts as open and its "rejected" as closed.
    if (value == "open") {
      terms.push_back(BooleanTerm(index::kStatePrefix, "open"));
      terms.push_back(BooleanTerm(index::kStatePrefix, "progressing"));
    } else if (value == "closed") {
      terms.push_back(BooleanTerm(index::kStatePrefix, "closed"));
      terms.push_back(BooleanTerm(index::kStatePrefix, "rejected"));
    } else if (value == "issue" || value == "pr") {
      terms.push_back(BooleanTerm(index::kTypePrefix, value));
    } else if (value == "deleted" || value == "transferred") {
      // Only the gone database has these terms (Searcher routes such queries there).
      terms.push_back(BooleanTerm(index::kGonePrefix, value));
    } else {
      return BadValue(token, v, "open, closed, issue, pr, deleted or transferred");
    }
  }
  return AnyTerm(db, terms);
}

absl::StatusOr<QualifierResult> TrackerHandler(const Token& token, const Xapian::Database& db) {
  std::vector<std::string> terms;
  for (const QualifierValue& v : token.values) {
    absl::StatusOr<v1::Tracker> tracker = ParseTrackerName(absl::AsciiStrToLower(v.text));
    if (!tracker.ok()) return BadValue(token, v, "github, gitlab or gitee");
    terms.push_back(BooleanTerm(index::kTrackerPrefix, TrackerName(*tracker)));
  }
  return AnyTerm(db, terms);
}

absl::Status SingleValue(const Token& token) {
  if (token.values.size() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("qualifier '", token.text, ":' at column ",
                                                 token.column, " takes one value, not a list"));
}

Handler DateHandler(Xapian::valueno slot) {
  return [slot](const Token& token,
                const Xapian::Database& db) -> absl::StatusOr<QualifierResult> {
    if (absl::Status s = SingleValue(token); !s.ok()) return s;
    absl::StatusOr<Xapian::Query> filter = DateFilter(slot, token.text, token.values[0], &db);
    if (!filter.ok()) return filter.status();
    QualifierResult result;
    result.filter = BooleanFilter(*filter);
    return result;
  };
}

absl::StatusOr<QualifierResult> SortHandler(const Token& token, const Xapian::Database&) {
  if (absl::Status s = SingleValue(token); !s.ok()) return s;
  const QualifierValue& v = token.values[0];
  std::string value = absl::AsciiStrToLower(v.text);
  SortOrder order;
  order.is_explicit = true;
  if (absl::EndsWith(value, "-asc")) {
    order.ascending = true;
    value.resize(value.size() - 4);
  } else if (absl::EndsWith(value, "-desc")) {
    value.resize(value.size() - 5);
  }
  if (value == "created") {
    order.field = SortField::kCreated;
  } else if (value == "updated") {
    order.field = SortField::kUpdated;
  } else if (value == "comments") {
    order.field = SortField::kComments;
  } else if (value == "relevance" && !order.ascending) {
    order.field = SortField::kRelevance;
  } else {
    return BadValue(token, v, "relevance, created, updated or comments, optionally -asc or -desc");
  }
  QualifierResult result;
  result.sort = order;
  return result;
}

absl::StatusOr<QualifierResult> NoHandler(const Token& token, const Xapian::Database& db) {
  std::vector<std::string> terms;
  for (const QualifierValue& v : token.values) {
    if (absl::AsciiStrToLower(v.text) != "label") return BadValue(token, v, "label");
    terms.push_back(index::kNoLabelTerm);
  }
  return AnyTerm(db, terms);
}

absl::StatusOr<QualifierResult> LlmHandler(const Token& token, const Xapian::Database& db) {
  std::vector<std::string> terms;
  for (const QualifierValue& v : token.values) {
    const std::string value = absl::AsciiStrToLower(v.text);
    if (value != "true" && value != "false") return BadValue(token, v, "true or false");
    terms.push_back(BooleanTerm(index::kLlmPrefix, value));
  }
  return AnyTerm(db, terms);
}

absl::StatusOr<QualifierResult> InHandler(const Token& token, const Xapian::Database&) {
  QualifierResult result;
  for (const QualifierValue& v : token.values) {
    const std::string value = absl::AsciiStrToLower(v.text);
    index::TextField field;
    if (value == "title") {
      field = index::TextField::kTitle;
    } else if (value == "body") {
      field = index::TextField::kBody;
    } else if (value == "comments" || value == "comment") {
      field = index::TextField::kComments;
    } else if (value == "code") {
      field = index::TextField::kCode;
    } else if (value == "logs" || value == "log") {
      field = index::TextField::kLogs;
    } else {
      return BadValue(token, v, "title, body, comments, code or logs");
    }
    if (std::find(result.text_fields.begin(), result.text_fields.end(), field) ==
        result.text_fields.end()) {
      result.text_fields.push_back(field);
    }
  }
  return result;
}

// TaxonomyHandler makes the handler of `theme:`/`subtheme:`: a value with a '.' is a full id
// ("bug.memory"); one without is a short form matching every id whose last segment it is
// ("memory" → "bug.memory", "requirement.memory"), expanded against the index's terms.
Handler TaxonomyHandler(const char* prefix) {
  return [prefix](const Token& token,
                  const Xapian::Database& db) -> absl::StatusOr<QualifierResult> {
    std::vector<std::string> terms;
    for (const QualifierValue& v : token.values) {
      const std::string value = index::NormalizeTermValue(v.text);
      if (value.find('.') != std::string::npos) {
        terms.push_back(BooleanTerm(prefix, value));
        continue;
      }
      const std::string suffix = "." + value;
      for (Xapian::TermIterator it = db.allterms_begin(prefix); it != db.allterms_end(prefix);
           ++it) {
        const std::string term = *it;
        if (absl::EndsWith(term, suffix)) terms.push_back(term);
      }
    }
    if (terms.empty()) {
      QualifierResult nothing;
      nothing.filter = NothingFilter();
      return nothing;
    }
    return AnyTerm(db, terms);
  };
}

Handler NumberHandler(Xapian::valueno slot) {
  return [slot](const Token& token, const Xapian::Database&) -> absl::StatusOr<QualifierResult> {
    if (absl::Status s = SingleValue(token); !s.ok()) return s;
    absl::StatusOr<Xapian::Query> filter = NumberFilter(slot, token.text, token.values[0]);
    if (!filter.ok()) return filter.status();
    QualifierResult result;
    result.filter = BooleanFilter(*filter);
    return result;
  };
}

struct Qualifier {
  const char* name;
  Handler handler;
};

// The qualifier table, in the order they are listed in error messages.
const std::vector<Qualifier>& Table() {
  static const auto* table = new std::vector<Qualifier>{
      {"repo", RepoHandler},
      {"org", TermHandler(index::kOrgPrefix)},
      {"label", TermHandler(index::kLabelPrefix)},
      {"is", IsHandler},
      {"author", TermHandler(index::kAuthorPrefix)},
      {"assignee", TermHandler(index::kAssigneePrefix)},
      {"tracker", TrackerHandler},
      {"no", NoHandler},
      {"kind", TermHandler(index::kKindPrefix)},
      {"theme", TaxonomyHandler(index::kThemePrefix)},
      {"subtheme", TaxonomyHandler(index::kSubthemePrefix)},
      {"llm", LlmHandler},
      {"in", InHandler},
      {"created", DateHandler(index::kCreatedSlot)},
      {"updated", DateHandler(index::kUpdatedSlot)},
      {"closed", DateHandler(index::kClosedSlot)},
      {"comments", NumberHandler(index::kCommentsSlot)},
      {"reactions", NumberHandler(index::kReactionsSlot)},
      {"sort", SortHandler},
  };
  return *table;
}

// Bounds is an inclusive range of unix seconds.
struct Bounds {
  int64_t first;
  int64_t last;
};

absl::StatusOr<Bounds> ParseMoment(absl::string_view qualifier, absl::string_view text,
                                   int column) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad date '", text, "' for '", qualifier, ":' at column ", column,
        "; expected YYYY-MM-DD or a date-time such as 2024-01-31T12:00:00Z"));
  };
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    int y = 0, m = 0, d = 0;
    if (!absl::SimpleAtoi(text.substr(0, 4), &y) || !absl::SimpleAtoi(text.substr(5, 2), &m) ||
        !absl::SimpleAtoi(text.substr(8, 2), &d)) {
      return bad();
    }
    const absl::CivilDay day(y, m, d);
    if (day.year() != y || day.month() != m || day.day() != d) return bad();
    const int64_t first = absl::ToUnixSeconds(absl::FromCivil(day, absl::UTCTimeZone()));
    return Bounds{first, first + 86399};
  }
  const size_t t = text.find_first_of("Tt");
  if (t != 10) return bad();
  std::string full(text);
  const absl::string_view clock = text.substr(t);
  if (!absl::EndsWithIgnoreCase(clock, "z") && clock.find_first_of("+-") == absl::string_view::npos) {
    full += "Z";  // no offset: UTC
  }
  absl::StatusOr<absl::Time> time = ParseRfc3339(full);
  if (!time.ok()) return bad();
  const int64_t seconds = absl::ToUnixSeconds(*time);
  return Bounds{seconds, seconds};
}

Xapian::Query ValueQuery(Xapian::Query::op op, Xapian::valueno slot, int64_t seconds) {
  return Xapian::Query(op, slot, Xapian::sortable_serialise(static_cast<double>(seconds)));
}

// kMaxRangeTerms bounds the posting lists a date range is split into; a range needing more
// (many months of the updated time, say) checks values instead.
constexpr size_t kMaxRangeTerms = 40;

// ValueRange matches `slot` values in [lo, hi] (either side open).
Xapian::Query ValueRange(Xapian::valueno slot, std::optional<int64_t> lo,
                         std::optional<int64_t> hi) {
  if (lo && hi) {
    return Xapian::Query(Xapian::Query::OP_VALUE_RANGE, slot,
                         Xapian::sortable_serialise(static_cast<double>(*lo)),
                         Xapian::sortable_serialise(static_cast<double>(*hi)));
  }
  if (lo) return ValueQuery(Xapian::Query::OP_VALUE_GE, slot, *lo);
  return ValueQuery(Xapian::Query::OP_VALUE_LE, slot, *hi);
}

using Periods = std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>;

// ReadPeriodTerms is PeriodTerms without the cache.
std::optional<Periods> ReadPeriodTerms(const Xapian::Database& db, const std::string& prefix,
                                       Xapian::valueno slot) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> out;
  Xapian::doccount covered = 0;
  for (Xapian::TermIterator t = db.allterms_begin(prefix); t != db.allterms_end(prefix); ++t) {
    const std::string term = *t;
    const std::string rest = term.substr(prefix.size());
    int y = 0, m = 0;
    absl::CivilSecond first, next;
    if (rest.size() == 4 && absl::SimpleAtoi(rest, &y)) {
      first = absl::CivilSecond(absl::CivilYear(y));
      next = absl::CivilSecond(absl::CivilYear(y + 1));
    } else if (rest.size() == 7 && rest[4] == '-' && absl::SimpleAtoi(rest.substr(0, 4), &y) &&
               absl::SimpleAtoi(rest.substr(5, 2), &m)) {
      first = absl::CivilSecond(absl::CivilMonth(y, m));
      next = absl::CivilSecond(absl::CivilMonth(y, m) + 1);
    } else {
      return std::nullopt;  // not a period term of ours: do not guess
    }
    const int64_t a = absl::ToUnixSeconds(absl::FromCivil(first, absl::UTCTimeZone()));
    const int64_t b = absl::ToUnixSeconds(absl::FromCivil(next, absl::UTCTimeZone())) - 1;
    out.push_back({term, {a, b}});
    covered += t.get_termfreq();
  }
  if (covered != db.get_value_freq(slot)) return std::nullopt;
  return out;
}

// PeriodTerms returns each term under `prefix` (digits and '-' after it: "2024" or "2024-06")
// with its period [first second, last second], or nullopt unless every document with a value
// in `slot` has one. Cached per index revision (RevisionKey): listing the terms of every
// shard cost about a millisecond per date qualifier.
std::optional<Periods> PeriodTerms(const Xapian::Database& db, const std::string& prefix,
                                   Xapian::valueno slot) {
  static auto* cache =
      new RevisionCache<std::pair<std::string, Xapian::valueno>, std::optional<Periods>>();
  return cache->Get(RevisionKey(db), {prefix, slot},
                    [&] { return ReadPeriodTerms(db, prefix, slot); });
}

// DateRange matches `slot` times in [lo, hi]: from period terms when the index has them
// (DateFilter's header), else by values.
Xapian::Query DateRange(Xapian::valueno slot, std::optional<int64_t> lo, std::optional<int64_t> hi,
                        const Xapian::Database* db) {
  const Xapian::Query by_value = ValueRange(slot, lo, hi);
  const char* month_prefix = slot == index::kCreatedSlot   ? index::kCreatedMonthPrefix
                             : slot == index::kUpdatedSlot ? index::kUpdatedMonthPrefix
                             : slot == index::kClosedSlot  ? index::kClosedMonthPrefix
                                                           : nullptr;
  if (db == nullptr || month_prefix == nullptr || db->get_value_freq(slot) == 0) return by_value;
  const auto months = PeriodTerms(*db, month_prefix, slot);
  if (!months) return by_value;
  std::optional<Periods> years;
  if (slot == index::kCreatedSlot) years = PeriodTerms(*db, index::kYearPrefix, slot);
  const int64_t from = lo.value_or(INT64_MIN), to = hi.value_or(INT64_MAX);
  auto inside = [&](const std::pair<int64_t, int64_t>& p) {
    return p.first >= from && p.second <= to;
  };
  std::vector<Xapian::Query> parts;
  std::vector<std::pair<int64_t, int64_t>> whole_years;
  if (years) {
    for (const auto& [term, period] : *years) {
      if (!inside(period)) continue;
      parts.push_back(FilterTerm(*db, term));
      whole_years.push_back(period);
    }
  }
  for (const auto& [term, period] : *months) {
    if (period.second < from || period.first > to) continue;  // outside
    // A lambda may not capture a structured binding in C++17 (clang refuses it): capture a copy.
    const bool in_whole_year =
        std::any_of(whole_years.begin(), whole_years.end(), [month = period](auto y) {
          return month.first >= y.first && month.second <= y.second;
        });
    if (in_whole_year) continue;
    if (inside(period)) {
      parts.push_back(FilterTerm(*db, term));
    } else {
      parts.emplace_back(Xapian::Query::OP_FILTER, FilterTerm(*db, term), by_value);
    }
    if (parts.size() > kMaxRangeTerms) return by_value;
  }
  if (parts.empty()) return Xapian::Query::MatchNothing;
  return Xapian::Query(Xapian::Query::OP_OR, parts.begin(), parts.end());
}

}  // namespace

Xapian::Query BooleanFilter(const Xapian::Query& query) {
  return Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, query, 0.0);
}

std::string KnownQualifiers() {
  std::vector<std::string> names;
  for (const Qualifier& q : Table()) names.push_back(q.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<Xapian::Query> DateFilter(Xapian::valueno slot, absl::string_view qualifier,
                                         const QualifierValue& value,
                                         const Xapian::Database* db) {
  absl::string_view text = value.text;
  for (absl::string_view op : {">=", "<=", ">", "<"}) {
    if (!absl::StartsWith(text, op)) continue;
    absl::StatusOr<Bounds> b =
        ParseMoment(qualifier, text.substr(op.size()), value.column + static_cast<int>(op.size()));
    if (!b.ok()) return b.status();
    if (op == ">=") return DateRange(slot, b->first, std::nullopt, db);
    if (op == ">") return DateRange(slot, b->last + 1, std::nullopt, db);
    if (op == "<=") return DateRange(slot, std::nullopt, b->last, db);
    return DateRange(slot, std::nullopt, b->first - 1, db);
  }
  if (size_t dots = text.find(".."); dots != absl::string_view::npos) {
    const absl::string_view from = text.substr(0, dots), to = text.substr(dots + 2);
    const int to_column = value.column + static_cast<int>(dots) + 2;
    if (from == "*" && to == "*") {
      return absl::InvalidArgumentError(absl::StrCat("bad date range '", text, "' for '",
                                                     qualifier, ":' at column ", value.column,
                                                     "; at most one side may be '*'"));
    }
    std::optional<Bounds> lo, hi;
    if (from != "*") {
      absl::StatusOr<Bounds> b = ParseMoment(qualifier, from, value.column);
      if (!b.ok()) return b.status();
      lo = *b;
    }
    if (to != "*") {
      absl::StatusOr<Bounds> b = ParseMoment(qualifier, to, to_column);
      if (!b.ok()) return b.status();
      hi = *b;
    }
    return DateRange(slot, lo ? std::optional<int64_t>(lo->first) : std::nullopt,
                     hi ? std::optional<int64_t>(hi->last) : std::nullopt, db);
  }
  absl::StatusOr<Bounds> b = ParseMoment(qualifier, text, value.column);
  if (!b.ok()) return b.status();
  return DateRange(slot, b->first, b->last, db);
}

absl::StatusOr<Xapian::Query> NumberFilter(Xapian::valueno slot, absl::string_view qualifier,
                                           const QualifierValue& value) {
  absl::string_view text = value.text;
  auto parse = [&](absl::string_view digits, int column) -> absl::StatusOr<int64_t> {
    int64_t n = 0;
    if (digits.empty() || digits.size() > 12 || !absl::SimpleAtoi(digits, &n) || n < 0 ||
        digits.find_first_not_of("0123456789") != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad number '", digits, "' for '", qualifier, ":' at column ", column,
          "; expected >N, >=N, <N, <=N, =N, N or A..B with non-negative whole numbers"));
    }
    return n;
  };
  auto at = [&](Xapian::Query::op op, int64_t n) {
    return Xapian::Query(op, slot, Xapian::sortable_serialise(static_cast<double>(n)));
  };
  auto range = [&](int64_t lo, int64_t hi) {
    return Xapian::Query(Xapian::Query::OP_VALUE_RANGE, slot,
                         Xapian::sortable_serialise(static_cast<double>(lo)),
                         Xapian::sortable_serialise(static_cast<double>(hi)));
  };
  for (absl::string_view op : {">=", "<=", ">", "<", "="}) {
    if (!absl::StartsWith(text, op)) continue;
    absl::StatusOr<int64_t> n =
        parse(text.substr(op.size()), value.column + static_cast<int>(op.size()));
    if (!n.ok()) return n.status();
    if (op == ">=") return at(Xapian::Query::OP_VALUE_GE, *n);
    if (op == ">") return at(Xapian::Query::OP_VALUE_GE, *n + 1);
    if (op == "<=") return at(Xapian::Query::OP_VALUE_LE, *n);
    if (op == "<") {
      if (*n == 0) return NothingFilter();
      return at(Xapian::Query::OP_VALUE_LE, *n - 1);
    }
    return range(*n, *n);
  }
  if (size_t dots = text.find(".."); dots != absl::string_view::npos) {
    const absl::string_view from = text.substr(0, dots), to = text.substr(dots + 2);
    if (from == "*" && to == "*") {
      return absl::InvalidArgumentError(absl::StrCat("bad range '", text, "' for '", qualifier,
                                                     ":' at column ", value.column,
                                                     "; at most one side may be '*'"));
    }
    std::optional<int64_t> lo, hi;
    if (from != "*") {
      absl::StatusOr<int64_t> n = parse(from, value.column);
      if (!n.ok()) return n.status();
      lo = *n;
    }
    if (to != "*") {
      absl::StatusOr<int64_t> n = parse(to, value.column + static_cast<int>(dots) + 2);
      if (!n.ok()) return n.status();
      hi = *n;
    }
    if (!lo) return at(Xapian::Query::OP_VALUE_LE, *hi);
    if (!hi) return at(Xapian::Query::OP_VALUE_GE, *lo);
    return range(*lo, *hi);
  }
  absl::StatusOr<int64_t> n = parse(text, value.column);
  if (!n.ok()) return n.status();
  return range(*n, *n);
}

absl::StatusOr<QualifierResult> BuildQualifier(const Token& token, const Xapian::Database& db) {
  const Qualifier* found = nullptr;
  for (const Qualifier& q : Table()) {
    if (token.text == q.name) found = &q;
  }
  if (found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown qualifier '", token.text, "' at column ", token.column,
                     "; known: ", KnownQualifiers(), " (quote text containing ':' to search it)"));
  }
  for (const QualifierValue& v : token.values) {
    if (absl::StripAsciiWhitespace(v.text).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("empty value for qualifier '", token.text,
                                                     ":' at column ", token.column,
                                                     "; expected a value right after ':'"));
    }
  }
  return found->handler(token, db);
}

}  // namespace issuescope::search
