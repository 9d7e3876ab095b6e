// Command-line options of every command that runs the engine (generate, bench --concurrency,
// serve): cache memory and KV dtype, prefix cache, batch limits, context limit, queue bound,
// speculative decoding.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/engine.h"
#include "engine/mtp_drafter.h"
#include "model/kv_cache_dtype.h"
#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace ds::app {

struct EngineCliOptions {
  std::string cache_memory = "4GiB";
  std::string kv_cache_dtype = "auto";
  std::string prefix_cache_memory = "2GiB";
  std::string prefix_cache_dir;
  std::string prefix_cache_disk = "8GiB";
  bool no_prefix_cache = false;
  int64_t draft_vocab = 0;  // --draft-vocab: the MTP head drafts among tokens [0, N) (or the map's first N); 0: all
  std::string speculative_token_map;  // --speculative-token-map: token ids most frequent first (io/token_map_file.h)
  EngineOptions engine;
};

void add_engine_options(CLI::App* command, EngineCliOptions& options);
// The checkpoint's MTP head as options.drafter when --speculative-tokens K > 0 (the step model made
// with it); null when K is 0. An error naming the flag when the checkpoint has no head. The drafter
// must outlive the engine.
// --draft-vocab N restricts the head's drafts to tokens [0, N), --speculative-token-map FILE to the ids
// FILE lists (its first N with --draft-vocab N; the gathered head's size is logged); either makes a
// draft cheaper.
Result<std::unique_ptr<MtpDrafter>> speculative_drafter(EngineOptions& options, StepModel& step_model,
                                                        const EngineCliOptions& cli);
// The draft vocabulary --draft-vocab and --speculative-token-map ask for (the map read and checked
// against `vocab` ids).
Result<DraftVocab> draft_vocab(const EngineCliOptions& cli, int64_t vocab);
// Adaptive k's starting cost of a draft: the step model's head bytes ÷ its decode bytes (after its draft
// vocabulary is set); the engine then measures it.
void use_head_costs(EngineOptions& options, StepModel& step_model);
// Parses "4GiB", "512MiB", "1.5G", "1000000" (bytes) into bytes.
Result<uint64_t> parse_byte_size(const std::string& text, const std::string& option);
// The engine options with the byte sizes parsed; --prefix-cache-dir created and checked writable
// (so a bad directory fails before the model loads).
Result<EngineOptions> engine_options(const EngineCliOptions& options);
// The KV cache dtype --kv-cache-dtype asks of a model computing in `mode` (auto: bf16 in fast mode,
// fp32 in f32 mode; bf16 in f32 mode is an error).
Result<KvDtype> kv_cache_dtype(const EngineCliOptions& options, const Qwen35Model& model);
// Snapshots the prefix cache before every chat message: the tokenizer's `<|im_start|>`, if it has one.
void use_message_start_token(EngineOptions& options, const Tokenizer& tokenizer);
// Logs what start-up resolved: cache bytes, KV dtype, blocks, slots, snapshots, max_model_len and why.
void log_engine_limits(const Engine& engine, const EngineOptions& options);

}  // namespace ds::app
