// One way every subcommand reports a failure: "deltaserve: error: <message>" and exit code 1 —
// command-line mistakes caught by the parser included.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>

#include "util/status.h"

namespace ds::app {

inline int report_error(const Status& status) {
  std::fprintf(stderr, "deltaserve: error: %s\n", status.message().c_str());
  return 1;
}

// A CLI11 parse error as one error line and exit code 1 (CLI11's own report is several lines and
// exit codes 105–109); an unknown or missing subcommand lists the subcommands. --help and --version
// also arrive as parse errors: they print what CLI11 prints and exit 0.
int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

}  // namespace ds::app
