// The --model argument every command takes: a checkpoint directory or file as given, or a Hub id
// (`Qwen/Qwen3.5-2B`) replaced at parse time by its snapshot in the Hugging Face cache, read
// offline (io/hub_cache.h). An id that is not in the cache is a parse error that says where it
// looked and how to get it there.
#pragma once

#include <CLI/CLI.hpp>

namespace ds::app {

CLI::Validator hub_model_resolver();

}  // namespace ds::app
