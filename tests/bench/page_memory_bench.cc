// Peak memory of parsing one large listing page (issue 16, item 14): builds a GitHub issues page
// of --mb MiB in memory (--items issues whose bodies share the size; real-looking fields), then
// parses it with the crawler's page parser, and prints the body size, the parsed issues and the
// process's peak RSS before and after the parse, and their ratio to the body.
//
//   bench_page_memory [--mb 50] [--items 100]
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "crawler/github_parse.h"
#include "nlohmann/json.hpp"

namespace {

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"peak RSS of parsing one large GitHub issues page"};
  int mb = 50;
  int items = 100;
  app.add_option("--mb", mb, "page size in MiB")->check(CLI::Range(1, 1024));
  app.add_option("--items", items, "issues on the page")->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);

  std::string page;
  {
    const size_t body_size = (static_cast<size_t>(mb) << 20) / static_cast<size_t>(items);
    std::string text;
    text.reserve(body_size);
    const std::string line =
        "Traceback (most recent call last): File 'train.py', line 42, in <module> "
        "loss.backward() RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\\n";
    while (text.size() + line.size() < body_size) text += line;
    page.reserve(static_cast<size_t>(mb + 1) << 20);
    page += "[";
    for (int i = 0; i < items; ++i) {
      nlohmann::json issue = {
          {"id", 1000 + i}, {"number", i + 1}, {"title", absl::StrCat("issue ", i + 1)},
          {"state", "open"}, {"user", {{"login", "someone"}}},
          {"labels", nlohmann::json::array({{{"name", "bug"}}})},
          {"comments", 0}, {"created_at", "2024-01-02T03:04:05Z"},
          {"updated_at", "2024-01-03T03:04:05Z"}, {"closed_at", nullptr},
          {"html_url", absl::StrCat("https://github.com/o/r/issues/", i + 1)},
          {"body", ""}};
      std::string dumped = issue.dump();
      // Splice the body text in without a second copy of the page.
      const std::string empty_body = "\"body\":\"\"";
      const size_t at = dumped.find(empty_body);
      page += dumped.substr(0, at);
      page += "\"body\":\"";
      page += text;
      page += "\"";
      page += dumped.substr(at + empty_body.size());
      if (i + 1 < items) page += ",";
    }
    page += "]";
  }
  const double before = PeakRssMb();
  issuescope::v1::RepositoryRef repo;
  repo.set_owner("o");
  repo.set_name("r");
  auto parsed = issuescope::crawler::ParseIssuesPage(page, repo);
  if (!parsed.ok()) {
    std::fprintf(stderr, "bench_page_memory: %s\n", parsed.status().ToString().c_str());
    return 1;
  }
  const double after = PeakRssMb();
  const double body_mb = static_cast<double>(page.size()) / (1 << 20);
  std::printf("page %.1f MiB, %zu issues parsed; peak RSS %.0f MiB before the parse (page built), "
              "%.0f MiB after: the parse added %.0f MiB = %.1f x the body\n",
              body_mb, parsed->size(), before, after, after - before,
              (after - before) / body_mb);
  return 0;
}
