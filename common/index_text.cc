#include "common/index_text.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "common/index_schema.h"

namespace issuescope::index {
namespace {

constexpr uint32_t kNoBound = UINT32_MAX;

// kMaxScopedExpansion bounds the surface forms of a stem, and the terms of a wildcard, that a
// scoped query checks positions for.
constexpr size_t kMaxScopedExpansion = 64;

void PutU32(uint32_t v, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint32_t GetU32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

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
    return "FieldScopeSource(" + std::string(field_ == TextField::kBody ? "body" : "comments") +
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

  bool Matches(Xapian::docid did) {
    // A document without bounds (none stored) cannot be scoped: it does not match.
    std::optional<TextBounds> bounds = Bounds(did);
    if (!bounds) {
      // check() may have moved the value iterator past its end; reopen it for later docids.
      bounds_ = db_.valuestream_begin(kTextBoundsSlot);
      return false;
    }
    const uint32_t lo = field_ == TextField::kBody ? bounds->body : bounds->comments;
    const uint32_t hi = field_ == TextField::kBody ? bounds->comments : kNoBound;
    if (phrase_) return PhraseInside(did, lo, hi);
    for (const std::string& term : terms_) {
      if (TermInside(did, term, lo, hi)) return true;
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
    } catch (const Xapian::Error&) {
      return false;  // the term is not in this document
    }
  }

  bool PhraseInside(Xapian::docid did, uint32_t lo, uint32_t hi) {
    if (terms_.empty()) return false;
    std::vector<std::pair<Xapian::PositionIterator, Xapian::PositionIterator>> lists;
    try {
      for (const std::string& term : terms_) {
        lists.emplace_back(db_.positionlist_begin(did, term), db_.positionlist_end(did, term));
        if (lists.back().first == lists.back().second) return false;
      }
    } catch (const Xapian::Error&) {
      return false;
    }
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
  // One per thread: a Stem keeps state while stemming, and queries are parsed in parallel.
  thread_local const Xapian::Stem stemmer("english");
  // A surface form starts with its stem, except where the stemmer turned a final 'y' into 'i'
  // (happy -> happi) or dropped a final 'e' before adding one (argu: argue, argued).
  std::string root = stem;
  if (!root.empty() && root.back() == 'i') root.pop_back();
  std::vector<std::pair<Xapian::doccount, std::string>> forms;
  for (Xapian::TermIterator t = db.allterms_begin(root); t != db.allterms_end(root); ++t) {
    const std::string term = *t;
    if (stemmer(term) == stem) forms.emplace_back(t.get_termfreq(), term);
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
    default:
      // Match-all, match-nothing, value ranges, posting sources: not text.
      return q;
  }
}

}  // namespace

std::string EncodeTextBounds(const TextBounds& bounds) {
  std::string out;
  PutU32(bounds.body, &out);
  PutU32(bounds.comments, &out);
  return out;
}

std::optional<TextBounds> DecodeTextBounds(const std::string& value) {
  if (value.size() != 8) return std::nullopt;
  return TextBounds{GetU32(value, 0), GetU32(value, 4)};
}

Xapian::TermGenerator MakeTextTermGenerator() {
  Xapian::TermGenerator gen;
  gen.set_stemmer(Xapian::Stem("english"));
  gen.set_stemming_strategy(Xapian::TermGenerator::STEM_SOME);
  gen.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  return gen;
}

void IndexIssueText(const v1::IssueWithComments& iwc, Xapian::Document* doc,
                    Xapian::TermGenerator* gen) {
  const v1::Issue& issue = iwc.issue();
  gen->set_document(*doc);
  // The title under its own prefix, for `in:title`; its wdf counts twice (the title boost).
  gen->set_termpos(0);
  gen->index_text(issue.title(), 2, kTitlePrefix);
  // All text once, unprefixed: title, body, comments, with a gap of positions between them so
  // that a phrase never spans two.
  gen->set_termpos(0);
  gen->index_text(issue.title(), 2);
  gen->increase_termpos();
  TextBounds bounds;
  bounds.body = gen->get_termpos() + 1;
  gen->index_text(issue.body(), 1);
  gen->increase_termpos();
  bounds.comments = gen->get_termpos() + 1;
  for (int i = 0; i < iwc.comments_size(); ++i) {
    if (i > 0) gen->increase_termpos();
    gen->index_text(iwc.comments(i).body(), 1);
  }
  doc->add_value(kTextBoundsSlot, EncodeTextBounds(bounds));
}

void IndexIssueText(const v1::IssueWithComments& iwc, Xapian::Document* doc) {
  Xapian::TermGenerator gen = MakeTextTermGenerator();
  IndexIssueText(iwc, doc, &gen);
}

void ConfigureTextParser(TextField field, Xapian::QueryParser* parser) {
  parser->set_stemmer(Xapian::Stem("english"));
  parser->set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  if (field == TextField::kTitle) parser->add_prefix("", kTitlePrefix);
}

unsigned TextParseFlags() {
  return Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_CJK_NGRAM |
         Xapian::QueryParser::FLAG_WILDCARD;
}

Xapian::Query ScopeToField(const Xapian::Query& text, TextField field,
                           const Xapian::Database& db) {
  if (field != TextField::kBody && field != TextField::kComments) return text;
  return Rewrite(text, field, db);
}

}  // namespace issuescope::index
