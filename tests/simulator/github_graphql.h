// The GitHub GraphQL dialect of the simulator (POST /graphql): the part of GitHub's schema an
// issue crawler uses, answered from the corpus with GitHub's shapes and errors —
//   query { rateLimit { limit cost remaining resetAt used nodeCount }
//           repository(owner:, name:) {          # follows a transferred repository's old name
//             nameWithOwner databaseId
//             issues(first|last:, after:, orderBy: {field: CREATED_AT|UPDATED_AT,
//                    direction: ASC|DESC}, filterBy: {since:, states:}, states:) {
//               totalCount pageInfo { hasNextPage endCursor } nodes { ...Issue } }
//             issue(number:) { ...Issue } } }     # null + NOT_FOUND for a missing number
//   Issue: number databaseId id title body state stateReason locked url createdAt updatedAt
//          closedAt author { login } labels(first:, after:) { totalCount nodes { name } }
//          assignees(first:) { totalCount nodes { login } } reactions { totalCount }
//          comments(first:, after:) { totalCount pageInfo {...} nodes { databaseId id body url
//                                     createdAt updatedAt author { login } } }
// Pull requests are not issues here (as on GitHub: the issues connection never lists them).
// Cursors are keyset cursors ("cursor:v2:" + the sort key and number, base64), as GitHub's are:
// an issue updated while a client pages moves behind the cursor and is listed again, never
// skipped. Cost and node count follow GitHub's rate-limit algorithm (tests/simulator/graphql.h).
// Pure functions over a Corpus the caller keeps locked for reading. Internal to the simulator.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "tests/simulator/api_dispatch.h"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {

// kGraphqlNodeLimit is GitHub's limit on the nodes one query may ask for.
inline constexpr int64_t kGraphqlNodeLimit = 500000;

// GraphqlBudget is the token's GraphQL budget before the query (for its rateLimit object).
struct GraphqlBudget {
  int64_t limit = 5000;
  int64_t remaining = 5000;
  int64_t reset = 0;  // Unix seconds
};

// GraphqlAnswer is the dispatcher's answer and what the front needs to charge and count it.
struct GraphqlAnswer {
  ApiResponse response;
  // Points the query costs (0 when it failed before running: syntax, validation, node limit).
  int64_t points = 0;
  int64_t nodes = 0;
  // Set when the query asked for more nodes than timeout_nodes: answered 502 as GitHub
  // answers a query it cut off after 10 s, and still charged.
  bool timed_out = false;
  // Set when the budget's remaining points are fewer than the query costs: answered with
  // GitHub's RATE_LIMITED error and not run.
  bool over_budget = false;
};

// DispatchGithubGraphql answers one POST /graphql body. `timeout_nodes` > 0 makes queries asking
// for more nodes than that time out.
GraphqlAnswer DispatchGithubGraphql(const Corpus& corpus, absl::string_view body,
                                    const std::string& base, const GraphqlBudget& budget,
                                    int64_t timeout_nodes);

}  // namespace issuescope::sim
