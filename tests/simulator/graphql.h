// A GraphQL request reader for the tracker simulator: parses the query language subset GitHub's
// clients send — one operation (`query Name($v: Type = default) { ... }` or a bare selection
// set), fields with aliases and arguments, nested selection sets, and argument values of every
// literal kind (Int, Float, String incl. block strings, Boolean, null, enum, list, input object)
// or a $variable — and substitutes the request's variables. Fragments, directives, mutations and
// subscriptions are refused with an error naming them (the crawler sends none).
//
// Cost analysis follows GitHub's documented algorithm for the GraphQL rate limit: every
// connection field (a field listed in `connections`) is one request per instance of its parent
// (the product of the `first`/`last` of the connections above it); the query's cost is the sum
// divided by 100, rounded to the nearest whole number, at least 1. Its node count is the sum
// over connections of that product times its own `first`/`last`, checked against GitHub's
// 500,000-node limit by the caller.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace issuescope::sim::graphql {

// Field is one selected field: `alias: name(args) { selections }`. Argument values are JSON
// (enums as their name in a string), with variables already substituted.
struct Field {
  std::string alias;  // the response key: the alias, else the name
  std::string name;
  nlohmann::json args = nlohmann::json::object();
  std::vector<Field> selections;
};

// Operation is a parsed request: its operation name (may be empty) and root selections.
struct Operation {
  std::string name;
  std::vector<Field> selections;
};

// Parse reads the JSON body of a GraphQL POST ({"query": "...", "variables": {...},
// "operationName": "..."}). INVALID_ARGUMENT naming what is wrong: a body that is not JSON, no
// query string, a syntax error (with its line and column), an unsupported construct, a variable
// used but neither given nor defaulted.
absl::StatusOr<Operation> Parse(absl::string_view body);

// Cost is a query's rate-limit cost and node count.
struct Cost {
  int64_t requests = 0;  // connection requests, GitHub's sum before dividing by 100
  int64_t points = 0;    // max(1, round(requests / 100)); 0 for a query of rateLimit alone
  int64_t nodes = 0;     // nodes the query may return at most
};

// Analyse computes the cost of `op` given the names of connection fields. A connection that
// selects `nodes` or `edges` must have `first` or `last` in 1..100 (INVALID_ARGUMENT with
// GitHub's wording otherwise).
absl::StatusOr<Cost> Analyse(const Operation& op, const std::set<std::string>& connections);

}  // namespace issuescope::sim::graphql
