// The --model option every command takes: a checkpoint directory, a GGUF file (or any part of a
// split set), or a Hub id (`Qwen/Qwen3.5-2B`) replaced at parse time by its snapshot in the Hugging
// Face cache, read offline (io/hub_cache.h). A path that exists is always a path; an id that is not
// in the cache is a parse error that says where it looked and how to get it there.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ds::app {

// Adds "-m,--model" bound to `model`; `help` says what the command reads of it.
CLI::Option* add_model_option(CLI::App* command, std::string& model, const std::string& help);

}  // namespace ds::app
