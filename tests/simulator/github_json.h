// GitHub REST v3 object shapes: renders corpus records as GitHub's repository, issue, comment,
// user and label objects (field order as GitHub sends them), with every URL built from `base`
// ("http://127.0.0.1:PORT", taken from the request's Host header). Pure functions.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tests/simulator/corpus.h"

namespace issuescope::sim {

// Json is an insertion-ordered JSON value, so objects keep GitHub's field order.
using Json = nlohmann::ordered_json;

// UserJson renders a user object {login, id, node_id, avatar_url, ..., type, site_admin}.
Json UserJson(const std::string& login, const std::string& base);

// RepositoryJson renders GET /repos/{o}/{r}.
Json RepositoryJson(const Repository& repo, const std::string& base);

// IssueJson renders an issue (with a pull_request key for pull requests).
Json IssueJson(const Repository& repo, const Issue& issue, const std::string& base);

// CommentJson renders an issue comment.
Json CommentJson(const Repository& repo, const Comment& comment, const std::string& base);

// ErrorJson renders {"message": message, "documentation_url": doc_url}.
Json ErrorJson(const std::string& message, const std::string& doc_url);

// Dump serializes compactly as UTF-8 (invalid UTF-8 is replaced, never thrown).
std::string Dump(const Json& value);

}  // namespace issuescope::sim
