// Hub ids (`--model Qwen/Qwen3.5-2B`), resolved offline from the Hugging Face cache that
// `huggingface-cli download` / `snapshot_download` fill — never from the network: the cache
// directory is $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub; a repository `org/name` lives in models--org--name/, its files under
// snapshots/<commit>/, and refs/<revision> names the commit of a revision (main by default).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace ds {

// Whether `model` is written like a Hub id: "org/name", no other slash, not starting with "." or
// "/" (a path that exists is always taken as a path, before this is asked).
bool looks_like_hub_id(std::string_view model);

// The cache directory, from the environment as huggingface_hub computes it.
std::string hub_cache_dir();

// The snapshot directory of `id` at `revision` in `cache_dir`; an error says where it looked,
// what it found, and how to get the model there.
Result<std::string> resolve_hub_model(std::string_view id, const std::string& cache_dir, std::string_view revision = "main");

// --model as given: the path itself when it exists or does not look like a Hub id, else its
// snapshot in the cache, else the error of resolve_hub_model.
Result<std::string> resolve_model_argument(const std::string& model);

}  // namespace ds
