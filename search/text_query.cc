#include "text_query.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/index_schema.h"
#include "common/text_tokens.h"
#include "serial_codec.h"

namespace issuescope::search {

using namespace index;  // NOLINT: the term scheme this reads (common/index_schema.h, index_text.h)

namespace {

constexpr uint32_t kNoBound = UINT32_MAX;

// kMaxScopedExpansion bounds the surface forms of a stem, and the terms of a wildcard, that a
// scoped query checks positions for.
constexpr size_t kMaxScopedExpansion = 64;

// FieldScopeSource matches the documents in which `terms` occur inside one field: with
// `phrase`, as consecutive positions all inside the field; otherwise any of the terms (they are
// alternatives: the surface forms of one stem, or a wildcard's expansion) at least once inside
// it. It is meant as the filter side of OP_FILTER: its estimate is its first term's frequency,
// so that the matcher drives the (cheaper) text query and only check()s candidates here.
class FieldScopeSource : public Xapian::PostingSource {
 public:
  FieldScopeSource(std::vector<std::string> terms, bool phrase, TextField field)
      : terms_(std::move(terms)), phrase_(phrase), field_(field) {}

  Xapian::PostingSource* clone() const override {
    return new FieldScopeSource(terms_, phrase_, field_);
  }

  // For Xapian's remote protocol (search/remote_registry.h).
  std::string name() const override { return "issuescope.FieldScopeSource"; }
  std::string serialise() const override {
    SerialWriter w;
    w.Uint(phrase_ ? 1 : 0);
    w.Uint(static_cast<uint64_t>(field_));
    w.Uint(terms_.size());
    for (const std::string& t : terms_) w.Str(t);
    return w.Take();
  }
  Xapian::PostingSource* unserialise_with_registry(const std::string& serialised,
                                                   const Xapian::Registry& /*r*/) const override {
    SerialReader r(serialised, "field scope");
    const uint64_t phrase = r.Uint();
    const uint64_t field = r.Uint();
    if (phrase > 1 || field > static_cast<uint64_t>(TextField::kLogs)) {
      throw Xapian::SerialisationError("field scope names an unknown field");
    }
    std::vector<std::string> terms(r.Count());
    for (std::string& t : terms) t = r.Str();
    r.End();
    return new FieldScopeSource(std::move(terms), phrase == 1, static_cast<TextField>(field));
  }

  void init(const Xapian::Database& db) override {
    db_ = db;
    termfreq_ = 0;
    lists_.clear();
    // Alternatives: iterate every term's posting list (merged by docid); a phrase is driven by
    // its first word alone.
    const size_t drivers = phrase_ ? std::min<size_t>(1, terms_.size()) : terms_.size();
    for (size_t i = 0; i < drivers; ++i) {
      const Xapian::doccount tf = db.get_termfreq(terms_[i]);
      if (tf == 0) continue;
      termfreq_ = phrase_ ? tf : std::min(db.get_doccount(), termfreq_ + tf);
      lists_.push_back({db.postlist_begin(terms_[i]), db.postlist_end(terms_[i])});
    }
    bounds_ = db.valuestream_begin(kTextBoundsSlot);
    sections_ = db.valuestream_begin(kSectionRangesSlot);
    started_ = false;
    current_ = 0;
  }

  Xapian::doccount get_termfreq_min() const override { return 0; }
  Xapian::doccount get_termfreq_est() const override { return termfreq_; }
  Xapian::doccount get_termfreq_max() const override { return termfreq_; }

  void next(double) override { Advance(started_ ? current_ + 1 : 1); }
  void skip_to(Xapian::docid did, double) override {
    if (!started_ || did > current_) Advance(did);
  }
  bool check(Xapian::docid did, double) override {
    started_ = true;
    current_ = did;
    if (Matches(did)) return true;
    // Position unspecified: next() continues after did.
    return false;
  }
  bool at_end() const override { return started_ && current_ == 0; }
  Xapian::docid get_docid() const override { return current_; }
  std::string get_description() const override {
    static const char* const kNames[] = {"all", "title", "body", "comments", "code", "logs"};
    return "FieldScopeSource(" + std::string(kNames[static_cast<int>(field_)]) +
           (phrase_ ? ", phrase" : "") + ", " + std::to_string(terms_.size()) + " terms)";
  }

 private:
  struct List {
    Xapian::PostingIterator it, end;
  };

  // Advance moves to the first matching document >= did (current_ 0 at the end).
  void Advance(Xapian::docid did) {
    started_ = true;
    while (true) {
      Xapian::docid next = 0;
      for (List& l : lists_) {
        if (l.it != l.end && *l.it < did) l.it.skip_to(did);
        if (l.it != l.end && (next == 0 || *l.it < next)) next = *l.it;
      }
      if (next == 0) {
        current_ = 0;
        return;
      }
      if (Matches(next)) {
        current_ = next;
        return;
      }
      did = next + 1;
    }
  }

  std::optional<TextBounds> Bounds(Xapian::docid did) {
    if (bounds_ == db_.valuestream_end(kTextBoundsSlot)) return std::nullopt;
    if (!bounds_.check(did)) return std::nullopt;
    return DecodeTextBounds(*bounds_);
  }

  // Ranges returns the position ranges [lo, hi) of the field in document `did` (none when the
  // document has no bounds stored: it cannot be scoped, so it does not match).
  std::vector<std::pair<uint32_t, uint32_t>> Ranges(Xapian::docid did) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    if (field_ == TextField::kCode || field_ == TextField::kLogs) {
      if (sections_ == db_.valuestream_end(kSectionRangesSlot) || !sections_.check(did)) {
        sections_ = db_.valuestream_begin(kSectionRangesSlot);
        return out;
      }
      for (const SectionRange& r : DecodeSectionRanges(*sections_)) {
        if (r.log == (field_ == TextField::kLogs)) out.emplace_back(r.begin, r.end + 1);
      }
      return out;
    }
    std::optional<TextBounds> bounds = Bounds(did);
    if (!bounds) {
      // check() may have moved the value iterator past its end; reopen it for later docids.
      bounds_ = db_.valuestream_begin(kTextBoundsSlot);
      return out;
    }
    const uint32_t lo = field_ == TextField::kBody ? bounds->body : bounds->comments;
    const uint32_t hi = field_ == TextField::kBody ? bounds->comments : kNoBound;
    out.emplace_back(lo, hi);
    return out;
  }

  bool Matches(Xapian::docid did) {
    for (const auto& [lo, hi] : Ranges(did)) {
      if (phrase_) {
        if (PhraseInside(did, lo, hi)) return true;
        continue;
      }
      for (const std::string& term : terms_) {
        if (TermInside(did, term, lo, hi)) return true;
      }
    }
    return false;
  }

  bool TermInside(Xapian::docid did, const std::string& term, uint32_t lo, uint32_t hi) {
    try {
      Xapian::PositionIterator p = db_.positionlist_begin(did, term);
      const Xapian::PositionIterator end = db_.positionlist_end(did, term);
      if (p == end) {
        // Absent, or indexed without positions: CJK bigrams, whose single characters
        // TermGenerator positions and the same query also holds (those are checked). A bigram
        // cannot be placed, so it passes when the document has it at all; any other term
        // without positions is absent (no termlist read for it).
        if (term.empty() || static_cast<unsigned char>(term[0]) < 0x80) return false;
        Xapian::TermIterator t = db_.termlist_begin(did);
        t.skip_to(term);
        return t != db_.termlist_end(did) && *t == term;
      }
      p.skip_to(lo);
      return p != end && *p < hi;
    } catch (const Xapian::DocNotFoundError&) {
      return false;  // the document was deleted since it matched
    }  // any other Xapian::Error (a newer revision, I/O) goes to the searcher's guard
  }

  bool PhraseInside(Xapian::docid did, uint32_t lo, uint32_t hi) {
    if (terms_.empty()) return false;
    std::vector<std::pair<Xapian::PositionIterator, Xapian::PositionIterator>> lists;
    try {
      for (const std::string& term : terms_) {
        lists.emplace_back(db_.positionlist_begin(did, term), db_.positionlist_end(did, term));
        if (lists.back().first == lists.back().second) return false;
      }
    } catch (const Xapian::DocNotFoundError&) {
      return false;  // the document was deleted since it matched
    }  // any other Xapian::Error (a newer revision, I/O) goes to the searcher's guard
    auto& [first, first_end] = lists[0];
    for (first.skip_to(lo); first != first_end; ++first) {
      const Xapian::termpos start = *first;
      if (start + terms_.size() - 1 >= hi) return false;
      bool all = true;
      for (size_t i = 1; i < lists.size() && all; ++i) {
        auto& [it, end] = lists[i];
        it.skip_to(start + static_cast<Xapian::termpos>(i));
        all = it != end && *it == start + i;
      }
      if (all) return true;
    }
    return false;
  }

  const std::vector<std::string> terms_;
  const bool phrase_;
  const TextField field_;
  Xapian::Database db_;
  std::vector<List> lists_;
  Xapian::ValueIterator bounds_;
  Xapian::ValueIterator sections_;
  Xapian::doccount termfreq_ = 0;
  bool started_ = false;
  Xapian::docid current_ = 0;
};

Xapian::Query Scoped(const Xapian::Query& q, std::vector<std::string> terms, bool phrase,
                     TextField field) {
  if (terms.empty()) return Xapian::Query::MatchNothing;
  auto* source = new FieldScopeSource(std::move(terms), phrase, field);
  return Xapian::Query(Xapian::Query::OP_FILTER, q,
                       Xapian::Query(source->release()));
}

// SurfaceForms returns the unstemmed terms of `db` whose English stem is `stem` (at most
// kMaxScopedExpansion, the most frequent first).
std::vector<std::string> SurfaceForms(const std::string& stem, const Xapian::Database& db) {
  // A surface form starts with its stem, except where the stemmer turned a final 'y' into 'i'
  // (happy -> happi) or dropped a final 'e' before adding one (argu: argue, argued), and
  // British forms of an -iz- stem (optimis…: EnglishStem spells them the American way).
  std::string root = stem;
  if (!root.empty() && root.back() == 'i') root.pop_back();
  std::vector<std::string> roots = {root};
  if (const size_t iz = root.rfind("iz"); iz != std::string::npos) {
    roots.push_back(root.substr(0, iz) + "is" + root.substr(iz + 2));
  }
  if (const size_t o = root.rfind("or"); o != std::string::npos && o + 2 == root.size()) {
    roots.push_back(root.substr(0, o) + "our");
  }
  std::vector<std::pair<Xapian::doccount, std::string>> forms;
  for (const std::string& r : roots) {
    for (Xapian::TermIterator t = db.allterms_begin(r); t != db.allterms_end(r); ++t) {
      const std::string term = *t;
      if (EnglishStem(term) == stem) forms.emplace_back(t.get_termfreq(), term);
    }
  }
  std::sort(forms.begin(), forms.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (forms.size() > kMaxScopedExpansion) forms.resize(kMaxScopedExpansion);
  std::vector<std::string> out;
  for (auto& f : forms) out.push_back(std::move(f.second));
  return out;
}

// WildcardPattern returns the pattern of an OP_WILDCARD query. Xapian 1.4 exposes it only
// through the description, "Query(WILDCARD <OP> <pattern>)".
std::optional<std::string> WildcardPattern(const Xapian::Query& q) {
  const std::string d = q.get_description();
  const std::string head = "Query(WILDCARD ";
  if (d.rfind(head, 0) != 0 || d.back() != ')') return std::nullopt;
  const size_t op_end = d.find(' ', head.size());
  if (op_end == std::string::npos) return std::nullopt;
  return d.substr(op_end + 1, d.size() - op_end - 2);
}

std::vector<std::string> WildcardTerms(const std::string& pattern, const Xapian::Database& db) {
  std::vector<std::pair<Xapian::doccount, std::string>> terms;
  for (Xapian::TermIterator t = db.allterms_begin(pattern); t != db.allterms_end(pattern); ++t) {
    terms.emplace_back(t.get_termfreq(), *t);
  }
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (terms.size() > kMaxScopedExpansion) terms.resize(kMaxScopedExpansion);
  std::vector<std::string> out;
  for (auto& t : terms) out.push_back(std::move(t.second));
  return out;
}

// CountWildcardTerms adds to *count the words of each wildcard in `q`, stopping past `limit`.
void CountWildcardTerms(const Xapian::Query& q, const Xapian::Database& db,
                        Xapian::termcount limit, Xapian::termcount* count) {
  if (*count > limit) return;
  if (q.get_type() == Xapian::Query::OP_WILDCARD) {
    std::optional<std::string> pattern = WildcardPattern(q);
    if (!pattern) return;
    Xapian::termcount words = 0;
    for (Xapian::TermIterator t = db.allterms_begin(*pattern);
         t != db.allterms_end(*pattern) && words < kMaxWildcardTerms && *count <= limit; ++t) {
      ++words;
      ++*count;
    }
    return;
  }
  for (size_t i = 0; i < q.get_num_subqueries(); ++i) {
    CountWildcardTerms(q.get_subquery(i), db, limit, count);
  }
}

Xapian::Query Rewrite(const Xapian::Query& q, TextField field, const Xapian::Database& db) {
  switch (q.get_type()) {
    case Xapian::Query::LEAF_TERM: {
      const std::string term = *q.get_terms_begin();
      if (!term.empty() && term[0] == 'Z') {
        return Scoped(q, SurfaceForms(term.substr(1), db), false, field);
      }
      return Scoped(q, {term}, false, field);
    }
    case Xapian::Query::OP_PHRASE: {
      std::vector<std::string> terms(q.get_terms_begin(), q.get_terms_end());
      return Scoped(q, std::move(terms), true, field);
    }
    case Xapian::Query::OP_NEAR: {
      // Each word inside the field (the NEAR window itself is checked over all text).
      Xapian::Query result = q;
      for (Xapian::TermIterator t = q.get_unique_terms_begin(); t != q.get_unique_terms_end();
           ++t) {
        result = Xapian::Query(Xapian::Query::OP_FILTER, result,
                               Scoped(Xapian::Query(*t), {*t}, false, field));
      }
      return result;
    }
    case Xapian::Query::OP_WILDCARD: {
      std::optional<std::string> pattern = WildcardPattern(q);
      if (!pattern) return Xapian::Query::MatchNothing;
      return Scoped(q, WildcardTerms(*pattern, db), false, field);
    }
    case Xapian::Query::OP_AND:
    case Xapian::Query::OP_OR:
    case Xapian::Query::OP_AND_NOT:
    case Xapian::Query::OP_XOR:
    case Xapian::Query::OP_AND_MAYBE:
    case Xapian::Query::OP_FILTER:
    case Xapian::Query::OP_SYNONYM:
    case Xapian::Query::OP_MAX: {
      std::vector<Xapian::Query> subs;
      for (size_t i = 0; i < q.get_num_subqueries(); ++i) {
        subs.push_back(Rewrite(q.get_subquery(i), field, db));
      }
      return Xapian::Query(q.get_type(), subs.begin(), subs.end());
    }
    case Xapian::Query::OP_SCALE_WEIGHT:
      // Xapian 1.4 does not tell a scaled query's factor; the only scaled text query is the
      // exact form of a compound token (TokenQuery), scaled by kExactFormBoost.
      return Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, Rewrite(q.get_subquery(0), field, db),
                           kExactFormBoost);
    default:
      // Match-all, match-nothing, value ranges, posting sources: not text.
      return q;
  }
}

// Term returns the query term of a lower-case word: its stem (all its forms) when `stem`.
Xapian::Query WordTerm(const std::string& word, const std::string& prefix, bool stem) {
  if (stem && IsStemmable(word)) return Xapian::Query("Z" + prefix + EnglishStem(word));
  return Xapian::Query(prefix + word);
}

// Phrase is the phrase of `terms` in order. The terms are (re)built with their query positions
// 1, 2, …: Xapian orders a query's terms by position, and FieldScopeSource checks a phrase's
// terms in that order.
Xapian::Query Phrase(const std::vector<Xapian::Query>& terms) {
  if (terms.size() == 1) return terms[0];
  std::vector<Xapian::Query> placed;
  Xapian::termpos pos = 0;
  for (const Xapian::Query& t : terms) placed.push_back(Xapian::Query(*t.get_terms_begin(), 1, ++pos));
  return Xapian::Query(Xapian::Query::OP_PHRASE, placed.begin(), placed.end(), placed.size());
}

// TokenQuery is the query of one token of unquoted text.
Xapian::Query TokenQuery(const TextToken& t, const std::string& prefix) {
  switch (t.kind) {
    case TextToken::Kind::kWord:
      return WordTerm(t.text, prefix, true);
    case TextToken::Kind::kCompound: {
      // The parts in sequence find `pin_memory`, `pin memory` and `PinMemory` alike; the whole
      // form adds weight where the text has it exactly, and finds it on its own.
      std::vector<Xapian::Query> parts;
      for (const std::string& p : t.parts) parts.push_back(Xapian::Query(prefix + p));
      Xapian::Query q = Phrase(std::move(parts));
      if (t.text.empty()) return q;
      // Either the parts in sequence or the exact form: `GitHub` finds `github.com`, and
      // `a.b.focusafterrun` finds `a.b.focusAfterRun`, whose parts differ from the query's.
      return Xapian::Query(Xapian::Query::OP_OR, q,
                           Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT,
                                         Xapian::Query(prefix + t.text), kExactFormBoost));
    }
    case TextToken::Kind::kCjk: {
      if (t.parts.size() == 1) return Xapian::Query(prefix + t.parts[0]);
      std::vector<Xapian::Query> bigrams;
      for (size_t i = 0; i + 1 < t.parts.size(); ++i) {
        bigrams.push_back(Xapian::Query(prefix + t.parts[i] + t.parts[i + 1]));
      }
      return Phrase(std::move(bigrams));
    }
  }
  return Xapian::Query();
}

}  // namespace

Xapian::termcount WildcardExpansion(const Xapian::Query& query, const Xapian::Database& db,
                                    Xapian::termcount limit) {
  Xapian::termcount count = 0;
  CountWildcardTerms(query, db, limit, &count);
  return count;
}

absl::StatusOr<Xapian::Query> TextQuery(absl::string_view text, bool phrase, TextField field,
                                        const Xapian::Database& db) {
  const std::string prefix = field == TextField::kTitle ? kTitlePrefix : "";
  std::vector<TextToken> tokens = Tokens(text);
  if (tokens.empty()) return Xapian::Query();
  if (phrase) {
    // Every position in order: words unstemmed, compounds as their parts, CJK by character.
    std::vector<Xapian::Query> terms;
    for (const TextToken& t : tokens) {
      if (t.kind == TextToken::Kind::kWord) {
        terms.push_back(Xapian::Query(prefix + t.text));
      } else {
        for (const std::string& p : t.parts) terms.push_back(Xapian::Query(prefix + p));
      }
    }
    return Phrase(std::move(terms));
  }
  // A trailing '*' makes the last word a wildcard over the words it starts.
  const bool wildcard = !text.empty() && text.back() == '*' && tokens.back().end == text.size() - 1;
  std::vector<Xapian::Query> parts;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const TextToken& t = tokens[i];
    if (wildcard && i + 1 == tokens.size()) {
      const std::string stem = t.kind == TextToken::Kind::kCompound && !t.text.empty()
                                   ? t.text
                                   : t.parts.back();
      parts.push_back(Xapian::Query(Xapian::Query::OP_WILDCARD, prefix + stem,
                                    kMaxWildcardTerms, Xapian::Query::WILDCARD_LIMIT_MOST_FREQUENT));
      continue;
    }
    parts.push_back(TokenQuery(t, prefix));
  }
  (void)db;
  if (parts.size() == 1) return parts[0];
  return Xapian::Query(Xapian::Query::OP_AND, parts.begin(), parts.end());
}

std::vector<std::pair<std::string, Xapian::Query>> TitleBonusParts(
    const std::vector<std::string>& words) {
  std::vector<std::pair<std::string, Xapian::Query>> parts;
  auto scaled = [](Xapian::Query q, double factor) {
    return Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, q, factor);
  };
  for (const std::string& w : words) {
    for (const TextToken& t : Tokens(w)) {
      const std::vector<std::string>& pieces =
          t.kind == TextToken::Kind::kWord ? std::vector<std::string>{t.text} : t.parts;
      for (const std::string& p : pieces) {
        parts.emplace_back(absl::StrCat("title \"", p, "\""),
                           scaled(WordTerm(p, kTitlePrefix, true), kTitleBoost));
      }
    }
  }
  return parts;
}

Xapian::Query TitleBonusQuery(const std::vector<std::string>& words) {
  std::vector<Xapian::Query> terms;
  for (const std::string& w : words) {
    for (const TextToken& t : Tokens(w)) {
      if (t.kind == TextToken::Kind::kWord) {
        terms.push_back(WordTerm(t.text, kTitlePrefix, true));
      } else {
        for (const std::string& p : t.parts) {
          terms.push_back(WordTerm(p, kTitlePrefix, true));
        }
      }
    }
  }
  if (terms.empty()) return Xapian::Query();
  Xapian::Query bonus(Xapian::Query::OP_OR, terms.begin(), terms.end());
  // (No title phrase here: Xapian 1.4 defers positional checks, and a phrase on the optional
  // side of OP_AND_MAYBE let pruned passes drop or repeat documents; see match_split_test.)
  return Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, bonus, kTitleBoost);
}

Xapian::Query ScopeToField(const Xapian::Query& text, TextField field,
                           const Xapian::Database& db) {
  if (field == TextField::kAll || field == TextField::kTitle) return text;
  return Rewrite(text, field, db);
}

void RegisterTextQuerySources(Xapian::Registry* registry) {
  registry->register_posting_source(FieldScopeSource({}, false, TextField::kAll));
}

}  // namespace issuescope::search
