// The issuescope command line: every subcommand, its flags and the options value they fill
// (deploy/cli/*_command.h). main parses into a CommandLine and runs the command chosen; tests
// parse without running.
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "crawl_command.h"
#include "export_command.h"
#include "query_commands.h"
#include "reindex_command.h"
#include "reparse_command.h"
#include "status_command.h"
#include "study_command.h"
#include "table_command.h"
#include "taxonomy_command.h"
#include "up_command.h"

namespace issuescope::cli {

// CommandLine is what parsing the command line filled: the global flags, the chosen
// subcommand (`command`, e.g. "search", "admin", "tax_train", "study_sample") and the
// options of every subcommand (only the chosen one's are meaningful).
struct CommandLine {
  std::string log_level = "warn";
  std::string command;
  bool no_pull_requests = false;
  int secondary_backoff_s = 60;
  CrawlCommandOptions crawl;
  ReparseCommandOptions reparse;
  SearchCommandOptions search;
  ExportCommandOptions export_options;
  TableCommandOptions table;
  ShowCommandOptions show;
  UpCommandOptions up;
  StatusCommandOptions status;
  AdminCommandOptions admin;
  TaxonomyTrainOptions tax_train;
  TaxonomyEvalOptions tax_eval;
  TaxonomyCvOptions tax_cv;
  TaxonomyClassifyOptions tax_classify;
  ReindexCommandOptions reindex;
  StudySampleOptions study_sample;
  StudyExportOptions study_export;
  StudyImportOptions study_import;
  StudyAgreementOptions study_agreement;
  StudyAdjudicateOptions study_adjudicate;
  StudyReportOptions study_report;
};

// RegisterCommands adds every subcommand and flag to `app`, filling `*line` when app->parse
// runs. `line` must outlive `app`.
void RegisterCommands(CLI::App* app, CommandLine* line);

// RunCommand runs the command `line` chose (INVALID_ARGUMENT when none).
absl::Status RunCommand(const CommandLine& line);

}  // namespace issuescope::cli
