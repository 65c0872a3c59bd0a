// What every daemon's main() does the same way: parse its command line with CLI11 and fail with
// one line on stderr. Header-only; the mains link CLI11 themselves.
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"

namespace issuescope {

// kExitFailure is the exit code of a daemon that could not start or failed (bad flags, a store
// that does not open, a port in use).
inline constexpr int kExitFailure = 2;

// ExitWithError prints "PROGRAM: message" on stderr and returns kExitFailure.
inline int ExitWithError(absl::string_view program, absl::string_view message) {
  std::cerr << program << ": " << (message.empty() ? "failed" : message) << std::endl;
  return kExitFailure;
}

// ParseCommandLine parses argv into the flags registered on `app`. nullopt: go on. Otherwise
// the process's exit code: 0 after --help or --version (printed by CLI11), or, for a bad
// command line, ExitWithError(program, CLI11's message).
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv,
                                           absl::string_view program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    return ExitWithError(program, what.empty() ? "bad command line" : what);
  }
  return std::nullopt;
}

}  // namespace issuescope
