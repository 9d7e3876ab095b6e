// deltaserve: inference engine and OpenAI-compatible server for Qwen3.5 / Qwen3.6 checkpoints.
// Entry point: global flags, subcommand dispatch, one clear error line and a non-zero exit on failure.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "cli_errors.h"
#include "commands.h"
#include "util/log.h"

int main(int argc, char** argv) {
  CLI::App app{"deltaserve " DELTASERVE_VERSION
               " - inference engine for Qwen3.5 / Qwen3.6 hybrid (Gated DeltaNet + gated attention) models"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags (-v, -q) work after the subcommand too
  app.set_version_flag("--version", DELTASERVE_VERSION);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug details");
  app.add_flag("-q,--quiet", quiet, "Log errors only");
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text: \"[seconds] level message\" lines; json: one JSON object per line (time, level, message, and "
                 "for request and engine lines their fields), for log collectors")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  const ds::app::CommandRunner inspect = ds::app::add_inspect_command(app);
  const ds::app::CommandRunner make_checkpoint = ds::app::add_make_checkpoint_command(app);
  const ds::app::CommandRunner logits = ds::app::add_logits_command(app);
  const ds::app::CommandRunner generate = ds::app::add_generate_command(app);
  const ds::app::CommandRunner tokenize = ds::app::add_tokenize_command(app);
  const ds::app::CommandRunner detokenize = ds::app::add_detokenize_command(app);
  const ds::app::CommandRunner token_map = ds::app::add_token_map_command(app);
  const ds::app::CommandRunner render_chat = ds::app::add_render_chat_command(app);
  const ds::app::CommandRunner bench = ds::app::add_bench_command(app);
  const ds::app::CommandRunner serve = ds::app::add_serve_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return ds::app::report_parse_error(app, error, argc, argv);
  }
  ds::log::set_level(quiet ? ds::log::Level::error : verbose ? ds::log::Level::debug : ds::log::Level::info);
  ds::log::set_format(log_format == "json" ? ds::log::Format::json : ds::log::Format::text);
  try {
    if (app.got_subcommand("inspect")) return inspect();
    if (app.got_subcommand("make-checkpoint")) return make_checkpoint();
    if (app.got_subcommand("logits")) return logits();
    if (app.got_subcommand("generate")) return generate();
    if (app.got_subcommand("tokenize")) return tokenize();
    if (app.got_subcommand("detokenize")) return detokenize();
    if (app.got_subcommand("token-map")) return token_map();
    if (app.got_subcommand("render-chat")) return render_chat();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("serve")) return serve();
  } catch (const std::exception& error) {  // last line of defence: report, never crash silently
    std::fprintf(stderr, "deltaserve: error: %s\n", error.what());
    return 1;
  }
  return 1;
}
