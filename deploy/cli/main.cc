// issuescope: the command-line tool. Thin: parses the command line (deploy/cli/command_line.h)
// and runs the command chosen (deploy/cli/*_command.h).
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "common/logging.h"
#include "command_line.h"

int main(int argc, char** argv) {
  CLI::App app{"issuescope: crawl, index and search issue trackers"};
  issuescope::cli::CommandLine line;
  issuescope::cli::RegisterCommands(&app, &line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; every usage error exits 2, as the daemons do (not CLI11's codes).
    return app.exit(e) == 0 ? 0 : 2;
  }
  issuescope::InitLogging("issuescope", line.log_level);
  const absl::Status status = issuescope::cli::RunCommand(line);
  if (status.ok()) return 0;
  std::fprintf(stderr, "issuescope: %s\n", std::string(status.message()).c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}
