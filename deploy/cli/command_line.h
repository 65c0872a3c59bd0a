// The issuescope command line: every subcommand, its flags and the options value they fill
// (deploy/cli/*_command.h). main parses into a CommandLine and runs the command chosen; tests
// parse without running.
#pragma once

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "deploy/cli/crawl_command.h"
#include "deploy/cli/export_command.h"
#include "deploy/cli/query_commands.h"
#include "deploy/cli/reindex_command.h"
#include "deploy/cli/reparse_command.h"
#include "deploy/cli/status_command.h"
#include "deploy/cli/study_command.h"
#include "deploy/cli/table_command.h"
#include "deploy/cli/taxonomy_command.h"
#include "deploy/cli/up_command.h"

namespace issuescope::cli {

// CommandLine is what parsing the command line filled: the global flags, the chosen
// subcommand (`command`, e.g. "search", "admin", "tax_train", "study_sample") and the
// options of every subcommand (only the chosen one's are meaningful).
struct CommandLine {
  std::string log_level = "warn";
  std::string command;
  bool no_pull_requests = false;
  int secondary_backoff_s = 60;
  std::shared_ptr<CrawlCommandOptions> crawl;
  std::shared_ptr<ReparseCommandOptions> reparse;
  std::shared_ptr<SearchCommandOptions> search;
  std::shared_ptr<ExportCommandOptions> export_options;
  std::shared_ptr<TableCommandOptions> table;
  std::shared_ptr<ShowCommandOptions> show;
  std::shared_ptr<UpCommandOptions> up;
  std::shared_ptr<StatusCommandOptions> status;
  std::shared_ptr<AdminCommandOptions> admin;
  std::shared_ptr<TaxonomyTrainOptions> tax_train;
  std::shared_ptr<TaxonomyEvalOptions> tax_eval;
  std::shared_ptr<TaxonomyCvOptions> tax_cv;
  std::shared_ptr<TaxonomyClassifyOptions> tax_classify;
  std::shared_ptr<ReindexCommandOptions> reindex;
  std::shared_ptr<StudySampleOptions> study_sample;
  std::shared_ptr<StudyExportOptions> study_export;
  std::shared_ptr<StudyImportOptions> study_import;
  std::shared_ptr<StudyAgreementOptions> study_agreement;
  std::shared_ptr<StudyAdjudicateOptions> study_adjudicate;
  std::shared_ptr<StudyReportOptions> study_report;
};

// RegisterCommands adds every subcommand and flag to `app`, filling `*line` when app->parse
// runs. `line` must outlive `app`.
void RegisterCommands(CLI::App* app, CommandLine* line);

// RunCommand runs the command `line` chose (INVALID_ARGUMENT when none).
absl::Status RunCommand(const CommandLine& line);

}  // namespace issuescope::cli
