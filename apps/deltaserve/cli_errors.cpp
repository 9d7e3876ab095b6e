// report_parse_error: the one-line form of CLI11's errors.
#include "cli_errors.h"

#include <string>
#include <vector>

namespace ds::app {
namespace {

std::string subcommand_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + command->get_name();
  return names;
}

// The first argument that is not a flag: the global flags take no values, so it names the subcommand.
const char* first_positional(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return nullptr;
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty()) {
    if (const char* name = first_positional(argc, argv))
      return report_error(Status::errorf("unknown subcommand \"", name, "\"; expected one of: ", subcommand_names(app)));
    if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr)
      return report_error(Status::errorf("expected a subcommand, one of: ", subcommand_names(app)));
    return report_error(Status::errorf(one_line(error.what()), " (see deltaserve --help)"));
  }
  const std::string& command = parsed.back()->get_name();
  return report_error(Status::errorf(command, ": ", one_line(error.what()), " (see deltaserve ", command, " --help)"));
}

}  // namespace ds::app
