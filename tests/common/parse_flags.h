// ParseFlags: parses `args` (after the program name) with CLI11 into a flags value that has
// `void Register(CLI::App*)` (WorkerFlags, CoordinatorFlags, IndexerFlags, SearchFlags); returns
// CLI11's error message, or "" when the command line parsed. For the flags tests.
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace issuescope::testing {

template <typename Flags>
std::string ParseFlags(const std::vector<std::string>& args, Flags* flags) {
  CLI::App app{"test"};
  flags->Register(&app);
  std::vector<const char*> argv = {"program"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace issuescope::testing
