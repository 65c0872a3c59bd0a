// Fuzz target: the query language (search/query_lexer.h, search/query_parser.h and the
// qualifiers of search/qualifiers.h) over the seven-issue fixture index of the search tests,
// built in memory once. Each input is one query: parsed plain, relaxed with explain parts, and
// each parsed query run through Xapian::Enquire (so the qualifiers' filters, date ranges and
// wildcard expansions are evaluated against real posting lists). Parse must return a status
// for anything, never throw or crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "search/query_parser.h"
#include "tests/search/search_fixture.h"
#include "xapian.h"

namespace {

const Xapian::Database& Index() {
  static const auto* db =
      new Xapian::WritableDatabase(issuescope::search::testing::FixtureDatabase());
  return *db;
}

void Run(const issuescope::search::ParsedQuery& parsed) {
  Xapian::Enquire enquire(Index());
  enquire.set_query(parsed.query);
  Xapian::MSet mset = enquire.get_mset(0, 10);
  for (auto it = mset.begin(); it != mset.end(); ++it) (void)it.get_weight();
  for (const auto& part : parsed.explain_parts) (void)part.second.get_description();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Index();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string query(reinterpret_cast<const char*>(data), size);
  issuescope::search::QueryParser parser(Index());
  try {
    auto parsed = parser.Parse(query);
    if (parsed.ok()) Run(*parsed);
    issuescope::search::ParseOptions options;
    options.relax = true;
    options.explain = true;
    auto relaxed = parser.Parse(query, options);
    if (relaxed.ok()) Run(*relaxed);
    // A query that parses plain parses relaxed too.
    if (parsed.ok() && !relaxed.ok()) __builtin_trap();
  } catch (const Xapian::Error& e) {
    // A query the parser accepted must be one Xapian can run.
    fprintf(stderr, "Xapian::Error: %s\n", e.get_description().c_str());
    __builtin_trap();
  }
  return 0;
}
