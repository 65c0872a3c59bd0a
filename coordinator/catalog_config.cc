#include "catalog_config.h"

#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "coordinator/request_validation.h"
#include "toml++/toml.h"

namespace issuescope::coordinator {
namespace {

// Where prefixes an error with "SOURCE:LINE:COLUMN: ".
std::string Where(absl::string_view source, const toml::source_region& region) {
  return absl::StrCat(source, ":", region.begin.line, ":", region.begin.column, ": ");
}

absl::Status Error(absl::string_view source, const toml::node& node, absl::string_view field,
                   absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(Where(source, node.source()), field, ": ", what));
}

absl::StatusOr<std::string> GetString(absl::string_view source, const toml::node& node,
                                      absl::string_view field) {
  const auto* value = node.as_string();
  if (value == nullptr) {
    std::ostringstream type;
    type << node.type();
    return Error(source, node, field, absl::StrCat("expected a string, got ", type.str()));
  }
  return value->get();
}

absl::StatusOr<absl::Duration> GetDuration(absl::string_view source, const toml::node& node,
                                           absl::string_view field) {
  ASSIGN_OR_RETURN(std::string text, GetString(source, node, field));
  auto duration = ParseConfigDuration(text);
  if (!duration.ok()) return Error(source, node, field, duration.status().message());
  return *duration;
}

absl::Status ParseCoordinatorTable(absl::string_view source, const toml::table& table,
                                   CatalogConfig* config) {
  const std::map<std::string, std::optional<absl::Duration>*> fields = {
      {"lease_ttl", &config->lease_ttl},
      {"heartbeat_interval", &config->heartbeat_interval},
      {"worker_timeout", &config->worker_timeout},
      {"retry_failed_after", &config->retry_failed_after},
      {"drain_feed_timeout", &config->drain_feed_timeout}};
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    std::string field = absl::StrCat("[coordinator].", name);
    if (name == "account_reserve") {
      const auto* value = node.as_integer();
      if (value == nullptr || value->get() < 0) {
        return Error(source, node, field, "expected a non-negative integer (requests)");
      }
      config->account_reserve = value->get();
      continue;
    }
    if (name == "home_grace") {
      // Zero is meaningful here (no grace), so not ParseConfigDuration.
      ASSIGN_OR_RETURN(std::string text, GetString(source, node, field));
      absl::Duration value;
      if (!absl::ParseDuration(text, &value) || value == absl::InfiniteDuration() ||
          value < absl::ZeroDuration()) {
        return Error(source, node, field,
                     absl::StrCat("'", text, "' is not a duration of zero or more (write e.g. "
                                  "\"30s\", or \"0s\" for no grace)"));
      }
      config->home_grace = value;
      continue;
    }
    auto it = fields.find(name);
    if (it == fields.end()) {
      return Error(source, node, field,
                   "unknown key (expected lease_ttl, heartbeat_interval, worker_timeout, "
                   "home_grace, retry_failed_after, drain_feed_timeout or "
                   "account_reserve)");
    }
    ASSIGN_OR_RETURN(absl::Duration value, GetDuration(source, node, field));
    *it->second = value;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RepositorySpec> ParseRepository(absl::string_view source,
                                                   const toml::table& table, int index) {
  std::string prefix = absl::StrCat("[[repository]] #", index + 1, " ");
  v1::RepositorySpec spec;
  spec.set_include_pull_requests(true);
  bool has_repo = false;
  std::string api_url;
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    std::string field = prefix + name;
    if (name == "repo") {
      ASSIGN_OR_RETURN(std::string text, GetString(source, node, field));
      auto repo = ParseRepoSpec(text);
      if (!repo.ok()) return Error(source, node, field, repo.status().message());
      *spec.mutable_repo() = *repo;
      has_repo = true;
    } else if (name == "api_url") {
      ASSIGN_OR_RETURN(api_url, GetString(source, node, field));
      if (api_url.rfind("http://", 0) != 0 && api_url.rfind("https://", 0) != 0) {
        return Error(source, node, field,
                     absl::StrCat("'", api_url, "' must start with http:// or https://"));
      }
    } else if (name == "recrawl_interval") {
      ASSIGN_OR_RETURN(absl::Duration interval, GetDuration(source, node, field));
      if (interval < absl::Seconds(1)) {
        return Error(source, node, field, "must be at least 1s");
      }
      spec.set_recrawl_interval_s(absl::ToInt64Seconds(interval));
    } else if (name == "full_recrawl_interval") {
      ASSIGN_OR_RETURN(absl::Duration interval, GetDuration(source, node, field));
      if (interval < absl::Seconds(1)) {
        return Error(source, node, field, "must be at least 1s");
      }
      spec.set_full_recrawl_interval_s(absl::ToInt64Seconds(interval));
    } else if (name == "include_pull_requests") {
      const auto* value = node.as_boolean();
      if (value == nullptr) return Error(source, node, field, "expected true or false");
      spec.set_include_pull_requests(value->get());
    } else {
      return Error(source, node, field,
                   "unknown key (expected repo, api_url, recrawl_interval, "
                   "full_recrawl_interval or include_pull_requests)");
    }
  }
  if (!has_repo) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(source, table.source()), prefix,
                     "repo: missing (write repo = \"github:OWNER/NAME\")"));
  }
  spec.mutable_repo()->set_api_url(api_url);
  return spec;
}

}  // namespace

void CatalogConfig::ApplyTo(CoordinatorOptions* options) const {
  if (lease_ttl) options->lease_ttl = *lease_ttl;
  if (heartbeat_interval) options->heartbeat_interval = *heartbeat_interval;
  if (worker_timeout) options->worker_timeout = *worker_timeout;
  if (retry_failed_after) options->retry_failed_after = *retry_failed_after;
  if (account_reserve) options->account_reserve = *account_reserve;
  if (home_grace) options->home_grace = *home_grace;
  if (drain_feed_timeout) options->drain_feed_timeout = *drain_feed_timeout;
}

absl::StatusOr<absl::Duration> ParseConfigDuration(absl::string_view text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a duration (write e.g. \"500ms\", \"15s\", \"1h\")"));
  }
  if (d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("duration '", text, "' must be positive"));
  }
  return d;
}

absl::StatusOr<CatalogConfig> ParseCatalogConfig(absl::string_view text,
                                                 absl::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text.data(), text.size()),
                       std::string_view(source_name.data(), source_name.size()));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(source_name, e.source()),
        "TOML syntax: ", absl::string_view(e.description().data(), e.description().size())));
  }
  CatalogConfig config;
  std::map<std::string, int> first_line;  // slug -> line of its first entry
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    if (name == "coordinator") {
      const toml::table* table = node.as_table();
      if (table == nullptr) return Error(source_name, node, name, "expected a table [coordinator]");
      RETURN_IF_ERROR(ParseCoordinatorTable(source_name, *table, &config));
    } else if (name == "repository") {
      const toml::array* array = node.as_array();
      if (array == nullptr) {
        return Error(source_name, node, name, "expected [[repository]] tables");
      }
      for (size_t i = 0; i < array->size(); ++i) {
        const toml::node& entry = *array->get(i);
        const toml::table* table = entry.as_table();
        if (table == nullptr) {
          return Error(source_name, entry, absl::StrCat("[[repository]] #", i + 1),
                       "expected a table");
        }
        ASSIGN_OR_RETURN(v1::RepositorySpec spec,
                         ParseRepository(source_name, *table, static_cast<int>(i)));
        std::string slug = RepoSlug(spec.repo());
        int line = static_cast<int>(table->source().begin.line);
        auto [it, inserted] = first_line.emplace(slug, line);
        if (!inserted) {
          return Error(source_name, *table, absl::StrCat("[[repository]] #", i + 1, " repo"),
                       absl::StrCat(slug, " is listed twice (first at line ", it->second, ")"));
        }
        config.repositories.push_back(std::move(spec));
      }
    } else {
      return Error(source_name, node, name,
                   "unknown key or table (expected [coordinator] or [[repository]])");
    }
  }
  return config;
}

absl::StatusOr<CatalogConfig> LoadCatalogConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, "config"));
  return ParseCatalogConfig(text, path);
}

}  // namespace issuescope::coordinator
