// bench_text_schemes: what each way of indexing free text costs, on the benchmark corpus.
// For every scheme it builds the same issues into a fresh on-disk Xapian database (one commit)
// and prints CPU milliseconds per document, terms and positions per document and database
// bytes per document. Each document also carries the serialized issue as data, as the real
// documents do; boolean terms and value slots are left out (they are the same in every scheme).
// "unprefixed once + title (current)" is common/index_text's IndexIssueText; the others are alternatives
// measured for docs/BENCHMARKS.md.
//
//   bench_text_schemes [--issues N] [--dir DIR]
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/index_text.h"
#include "tests/bench/bench_corpus.h"
#include "xapian.h"

namespace {

namespace ix = issuescope::index;
using issuescope::v1::IssueWithComments;
using TextFn = std::function<void(const IssueWithComments&, Xapian::Document*)>;
// The per-field prefixes of the scheme before "unprefixed-1" (body, comments).
constexpr char kOldBodyPrefix[] = "XB";
constexpr char kOldCommentPrefix[] = "XC";

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

Xapian::TermGenerator Generator(Xapian::TermGenerator::stem_strategy strategy) {
  Xapian::TermGenerator gen;
  gen.set_stemmer(Xapian::Stem("english"));
  gen.set_stemming_strategy(strategy);
  gen.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  return gen;
}

// Fields calls index(text, wdf_inc, prefix) for title, body and each comment.
void Fields(const IssueWithComments& iwc, Xapian::TermGenerator& gen, bool prefixed,
            bool comment_positions) {
  const std::string s = prefixed ? ix::kTitlePrefix : "";
  const std::string b = prefixed ? kOldBodyPrefix : "";
  const std::string c = prefixed ? kOldCommentPrefix : "";
  gen.index_text(iwc.issue().title(), 2, s);
  gen.increase_termpos();
  gen.index_text(iwc.issue().body(), 1, b);
  for (const auto& comment : iwc.comments()) {
    gen.increase_termpos();
    if (comment_positions) {
      gen.index_text(comment.body(), 1, c);
    } else {
      gen.index_text_without_positions(comment.body(), 1, c);
    }
  }
}

// CopyScheme indexes each field once, unprefixed, into a scratch document and copies its
// terms as unprefixed all-text terms (with positions: one posting list per word for plain
// searches) and as field terms for in: (title with positions, body and comments with
// positions when `field_positions`).
// Measured as an alternative to the per-field scheme (docs/BENCHMARKS.md).
void CopyScheme(const IssueWithComments& iwc, Xapian::Document* doc, bool field_positions) {
  Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_SOME);
  Xapian::termpos pos = 0;
  auto field = [&](const std::string& prefix, bool positions, auto&& add) {
    Xapian::Document scratch;
    gen.set_document(scratch);
    gen.set_termpos(pos);
    add();
    pos = gen.get_termpos() + 1;
    for (auto t = scratch.termlist_begin(); t != scratch.termlist_end(); ++t) {
      const std::string term = *t;
      const std::string prefixed =
          term[0] == 'Z' ? "Z" + prefix + term.substr(1) : prefix + term;
      for (auto p = t.positionlist_begin(); p != t.positionlist_end(); ++p) {
        doc->add_posting(term, *p, 0);
        if (positions) doc->add_posting(prefixed, *p, 0);
      }
      doc->add_term(term, t.get_wdf());
      doc->add_term(prefixed, t.get_wdf());
    }
  };
  field(ix::kTitlePrefix, true, [&] { gen.index_text(iwc.issue().title(), 2); });
  field(kOldBodyPrefix, field_positions, [&] { gen.index_text(iwc.issue().body(), 1); });
  field(kOldCommentPrefix, field_positions, [&] {
    for (const auto& c : iwc.comments()) {
      gen.increase_termpos();
      gen.index_text(c.body(), 1);
    }
  });
}

struct Scheme {
  std::string name;
  TextFn fn;
  // Whether the document carries the serialized issue as data (the real documents do).
  bool data = true;
  // Whether `fn` builds the whole document (text, boolean terms, values, data).
  bool whole = false;
};

std::vector<Scheme> Schemes() {
  return {
      {"twice: prefixed + unprefixed (previous)",
       [](const IssueWithComments& iwc, Xapian::Document* doc) {
         Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_SOME);
         gen.set_document(*doc);
         Fields(iwc, gen, true, true);
         gen.increase_termpos();
         Fields(iwc, gen, false, true);
       }},
      {"per-field once (previous)",
       [](const IssueWithComments& iwc, Xapian::Document* doc) {
         Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_SOME);
         gen.set_document(*doc);
         Fields(iwc, gen, true, true);
       }},
      {"unprefixed once + title (current)", [](const IssueWithComments& iwc,
                                     Xapian::Document* doc) { ix::IndexIssueText(iwc, doc); }},
      {"all-text + fields, title positions",
       [](const IssueWithComments& iwc, Xapian::Document* doc) { CopyScheme(iwc, doc, false); }},
      {"all-text + fields, all field positions",
       [](const IssueWithComments& iwc, Xapian::Document* doc) { CopyScheme(iwc, doc, true); }},
      {"per-field once, stems only (STEM_ALL)",
       [](const IssueWithComments& iwc, Xapian::Document* doc) {
         Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_ALL);
         gen.set_document(*doc);
         Fields(iwc, gen, true, true);
       }},
      {"per-field once, no comment positions",
       [](const IssueWithComments& iwc, Xapian::Document* doc) {
         Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_SOME);
         gen.set_document(*doc);
         Fields(iwc, gen, true, false);
       }},
      {"unprefixed once + title, no document data",
       [](const IssueWithComments& iwc, Xapian::Document* doc) { ix::IndexIssueText(iwc, doc); },
       false},
      {"whole document (index::BuildDocument)",
       [](const IssueWithComments& iwc, Xapian::Document* doc) { *doc = ix::BuildDocument(iwc); },
       true, true},
      {"unprefixed once (no in:)",
       [](const IssueWithComments& iwc, Xapian::Document* doc) {
         Xapian::TermGenerator gen = Generator(Xapian::TermGenerator::STEM_SOME);
         gen.set_document(*doc);
         Fields(iwc, gen, false, true);
       }},
  };
}

int64_t DirBytes(const std::string& dir) {
  int64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) bytes += static_cast<int64_t>(e.file_size());
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Measure free-text indexing schemes."};
  issuescope::bench::CorpusOptions options;
  options.issues = 5000;
  std::string dir = std::filesystem::temp_directory_path() / "issuescope-text-schemes";
  app.add_option("--issues", options.issues, "issues to index per scheme")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--dir", dir, "scratch directory (removed)");
  CLI11_PARSE(app, argc, argv);

  std::vector<IssueWithComments> issues;
  absl::Status s = issuescope::bench::GenerateChunks(options, [&](issuescope::bench::RepoIssues& r) {
    for (auto& issue : r.issues) issues.push_back(std::move(issue));
    return absl::OkStatus();
  });
  if (!s.ok()) {
    std::fprintf(stderr, "bench_text_schemes: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  std::printf("%-48s %10s %10s %10s %10s\n", "scheme", "cpu_ms/doc", "terms/doc", "pos/doc",
              "bytes/doc");
  for (const Scheme& scheme : Schemes()) {
    std::filesystem::remove_all(dir);
    int64_t terms = 0, positions = 0;
    double excluded = 0;
    const double start = CpuSeconds();
    {
      Xapian::WritableDatabase db(dir, Xapian::DB_CREATE | Xapian::DB_NO_SYNC |
                                           Xapian::DB_BACKEND_GLASS);
      for (const IssueWithComments& iwc : issues) {
        Xapian::Document doc;
        scheme.fn(iwc, &doc);
        if (scheme.data && !scheme.whole) doc.set_data(iwc.SerializeAsString());
        const double counting = CpuSeconds();  // counting is not part of the cost
        terms += doc.termlist_count();
        for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
          positions += t.positionlist_count();
        }
        excluded += CpuSeconds() - counting;
        db.add_document(doc);
      }
      db.commit();
    }
    const double cpu = CpuSeconds() - start - excluded;
    const double n = static_cast<double>(issues.size());
    std::printf("%-48s %10.2f %10.0f %10.0f %10.0f\n", scheme.name.c_str(), cpu * 1000 / n,
                terms / n, positions / n, DirBytes(dir) / n);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
