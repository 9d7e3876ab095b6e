// Subcommands of the `deltaserve` binary; each registers its CLI11 options and returns a runner.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ds::app {

using CommandRunner = std::function<int()>;  // exit code

CommandRunner add_inspect_command(CLI::App& app);
CommandRunner add_make_checkpoint_command(CLI::App& app);
CommandRunner add_logits_command(CLI::App& app);
CommandRunner add_generate_command(CLI::App& app);
CommandRunner add_tokenize_command(CLI::App& app);
CommandRunner add_detokenize_command(CLI::App& app);
CommandRunner add_token_map_command(CLI::App& app);
CommandRunner add_render_chat_command(CLI::App& app);
CommandRunner add_bench_command(CLI::App& app);
CommandRunner add_serve_command(CLI::App& app);

}  // namespace ds::app
