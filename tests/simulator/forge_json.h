// GitLab v4 and Gitee v5 object shapes: render corpus records as those forges send them (field
// names and order from the recorded traffic in shared/data/gitlab-api and gitee-api), with
// every URL built from `base` ("http://127.0.0.1:PORT"). GitLab timestamps carry milliseconds
// ("2019-11-28T08:43:35.000Z"); Gitee's are in +08:00 ("2020-01-01T09:32:55+08:00").
// Pure functions.
#pragma once

#include <string>

#include "tests/simulator/corpus.h"
#include "tests/simulator/github_json.h"

namespace issuescope::sim {

// GitlabTime formats Unix seconds as GitLab does ("...T08:43:35.000Z").
std::string GitlabTime(int64_t unix_seconds);

// GiteeTime formats Unix seconds as Gitee does ("...T09:32:55+08:00").
std::string GiteeTime(int64_t unix_seconds);

// GitlabProjectJson renders GET /api/v4/projects/:id.
Json GitlabProjectJson(const Repository& repo, const std::string& base);

// GitlabIssueJson renders one GitLab issue (user_notes_count counts non-system notes).
Json GitlabIssueJson(const Repository& repo, const Issue& issue, const std::string& base);

// GitlabNoteJson renders one note of an issue (system notes carry "system": true).
Json GitlabNoteJson(const Repository& repo, const Comment& note, const std::string& base);

// GiteeRepoJson renders GET /api/v5/repos/{owner}/{repo}.
Json GiteeRepoJson(const Repository& repo, const std::string& base);

// GiteeIssueJson renders one Gitee issue ("number" is the string key, see GiteeKey).
Json GiteeIssueJson(const Repository& repo, const Issue& issue, const std::string& base);

// GiteeCommentJson renders one Gitee issue comment (with its target.issue back-reference).
Json GiteeCommentJson(const Repository& repo, const Comment& comment, const std::string& base);

}  // namespace issuescope::sim
