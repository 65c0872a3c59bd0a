#include "common/index_text.h"

#include "common/index_schema.h"

namespace issuescope::index {

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
  gen->set_termpos(0);
  // Each field once, under its own prefix; a gap in positions between fields and comments so
  // that a phrase never spans two of them. The title's wdf counts twice (the title boost).
  gen->index_text(issue.title(), 2, kTitlePrefix);
  gen->increase_termpos();
  gen->index_text(issue.body(), 1, kBodyPrefix);
  for (const v1::Comment& c : iwc.comments()) {
    gen->increase_termpos();
    gen->index_text(c.body(), 1, kCommentPrefix);
  }
}

void IndexIssueText(const v1::IssueWithComments& iwc, Xapian::Document* doc) {
  Xapian::TermGenerator gen = MakeTextTermGenerator();
  IndexIssueText(iwc, doc, &gen);
}

void ConfigureTextParser(TextField field, Xapian::QueryParser* parser) {
  parser->set_stemmer(Xapian::Stem("english"));
  parser->set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  switch (field) {
    case TextField::kAll:
      parser->add_prefix("", kTitlePrefix);
      parser->add_prefix("", kBodyPrefix);
      parser->add_prefix("", kCommentPrefix);
      // Matches nothing in an index of this scheme: see the header (snippets, old indexes).
      parser->add_prefix("", "");
      break;
    case TextField::kTitle:
      parser->add_prefix("", kTitlePrefix);
      break;
    case TextField::kBody:
      parser->add_prefix("", kBodyPrefix);
      break;
    case TextField::kComments:
      parser->add_prefix("", kCommentPrefix);
      break;
  }
}

unsigned TextParseFlags() {
  return Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_CJK_NGRAM |
         Xapian::QueryParser::FLAG_WILDCARD;
}

}  // namespace issuescope::index
