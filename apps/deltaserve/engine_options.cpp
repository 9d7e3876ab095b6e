// Engine command-line options: byte sizes with binary or decimal suffixes, and the start-up log.
#include "engine_options.h"

#include <cmath>
#include <cstdlib>

#include "io/token_map_file.h"
#include "util/human.h"
#include "util/log.h"

namespace ds::app {

void add_engine_options(CLI::App* command, EngineCliOptions& options) {
  command->add_option("--cache-memory", options.cache_memory,
                      "Memory for the KV cache and DeltaNet state slots (e.g. 4GiB, 512MiB); with "
                      "--speculative-tokens each sequence takes two slots (the second is what a verify writes into)")
      ->capture_default_str();
  command->add_option("--kv-cache-dtype", options.kv_cache_dtype,
                      "Element type of the KV cache: auto (bf16 when the model computes in fast mode, fp32 in f32 "
                      "mode), bf16 (half the bytes: twice the cached context; fast mode only) or fp32")
      ->check(CLI::IsMember({"auto", "bf16", "fp32"}))
      ->capture_default_str();
  auto* prefix = command
                     ->add_option("--prefix-cache-memory", options.prefix_cache_memory,
                                  "Memory for DeltaNet snapshots of the prefix cache, on top of --cache-memory "
                                  "(a Qwen3.5-2B snapshot is 19.3 MiB)")
                     ->capture_default_str();
  auto* dir = command->add_option("--prefix-cache-dir", options.prefix_cache_dir,
                                  "Keep the prefix cache on disk in this directory: evicted KV blocks and snapshots "
                                  "(and at shutdown all of them) are written there, and reloaded at the next start; "
                                  "files of another model, config or version are skipped");
  auto* disk = command
                   ->add_option("--prefix-cache-disk", options.prefix_cache_disk,
                                "Disk space --prefix-cache-dir may use; the oldest files are deleted first")
                   ->capture_default_str();
  command->add_flag("--no-prefix-cache", options.no_prefix_cache,
                    "Compute every prompt from its first token (no cached KV blocks or DeltaNet snapshots)")
      ->excludes(prefix)
      ->excludes(dir)
      ->excludes(disk);
  command->add_option("--max-batch-tokens", options.engine.limits.max_batch_tokens,
                      "Token budget of one engine step (prefill chunks + decodes)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command->add_option("--max-seqs", options.engine.limits.max_seqs, "Sequences running at once")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  command->add_option("--max-model-len", options.engine.max_model_len,
                      "Context limit, prompt + generated tokens (default: the config's, lowered to what the cache holds)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  command->add_option("--max-queue", options.engine.max_queue, "Requests that may wait for capacity before new ones are refused")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24))
      ->capture_default_str();
  command->add_option("--speculative-tokens", options.engine.speculative_tokens,
                      str_cat("Speculative decoding with the checkpoint's own MTP head (its mtp.* tensors; a checkpoint "
                              "without them is an error): up to K tokens drafted and verified per step, output identical "
                              "to plain decoding. 0 = off, at most ", kMaxSpeculativeTokens))
      ->check(CLI::Range(int64_t{0}, kMaxSpeculativeTokens))
      ->capture_default_str();
  command->add_option("--draft-vocab", options.draft_vocab,
                      "With --speculative-tokens K: the MTP head drafts among the first N tokens only — the N first of "
                      "the tokenizer's merge rank, the order in which byte-level BPE (Qwen's) numbers its tokens — so "
                      "each head step reads N rows of lm_head instead of the whole vocabulary (e.g. 32768); output "
                      "unchanged. A multiple of the head weight's rows per panel (16 or 32); 0 = the whole vocabulary. "
                      "With --speculative-token-map: the first N ids of the map (any N up to its length)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24))
      ->capture_default_str();
  command->add_option("--speculative-token-map", options.speculative_token_map,
                      "With --speculative-tokens K: the MTP head drafts among the token ids this FILE lists, most "
                      "frequent first (SGLang's hot-token map), the first N with --draft-vocab N, else all it lists; "
                      "the head's rows are gathered from lm_head at start (N x hidden x the head's bytes per weight "
                      "of extra memory); output unchanged. FILE: a .npy 1-D int32/int64 array, or text of ids "
                      "separated by whitespace (a line may be \"id count\": the count is ignored; # comments); "
                      "`deltaserve token-map` counts one from your own text")
      ->type_name("FILE");
  command->add_flag_callback(
      "--no-adaptive-drafts", [&options] { options.engine.adaptive_drafts = false; },
      "With --speculative-tokens K: verify K drafts every round, whatever the acceptance (default: adaptive k — each "
      "request drafts as many as its acceptance so far makes pay, down to none, retrying now and then)");
}

Result<DraftVocab> draft_vocab(const EngineCliOptions& cli, int64_t vocab) {
  DraftVocab draft{cli.draft_vocab, {}};
  if (cli.speculative_token_map.empty()) return draft;
  auto map = read_token_map(cli.speculative_token_map, vocab);
  if (!map.ok()) return map.status().with_context("--speculative-token-map");
  draft.token_map = std::move(map).value();
  return draft;
}

// The draft vocabulary the log suggests when none is given: the size docs/mtp.md measures.
constexpr int64_t kSuggestedDraftVocab = 32768;

Result<std::unique_ptr<MtpDrafter>> speculative_drafter(EngineOptions& options, StepModel& step_model,
                                                        const EngineCliOptions& cli) {
  options.drafter = nullptr;
  const bool mapped = !cli.speculative_token_map.empty();
  if (options.speculative_tokens == 0) {
    if (cli.draft_vocab > 0) return Status::error("--draft-vocab needs --speculative-tokens K of at least 1, found 0");
    if (mapped) return Status::error("--speculative-token-map needs --speculative-tokens K of at least 1, found 0");
    return std::unique_ptr<MtpDrafter>();
  }
  DS_ASSIGN_OR_RETURN(const DraftVocab vocab, draft_vocab(cli, step_model.vocab_size()));
  auto drafter = MtpDrafter::create(step_model, vocab);
  if (!drafter.ok()) {
    std::string context = cli.draft_vocab > 0 ? str_cat("--draft-vocab ", cli.draft_vocab) : "";
    if (mapped) context += str_cat(context.empty() ? "" : " with ", "--speculative-token-map ", cli.speculative_token_map);
    return drafter.status().with_context(context.empty() ? str_cat("--speculative-tokens ", options.speculative_tokens) : context);
  }
  use_head_costs(options, step_model);
  if (mapped)
    log::info("draft head: ", step_model.draft_vocab_size(), " rows gathered from ", cli.speculative_token_map, ", ",
              human_bytes(step_model.draft_head_bytes()));
  else if (cli.draft_vocab == 0 && step_model.vocab_size() > 2 * kSuggestedDraftVocab)
    log::info("draft head: the whole vocabulary (", step_model.vocab_size(), " rows), each head step ",
              static_cast<int>(100.0 * step_model.head_step_weight_share() + 0.5), "% of a decode step's weight bytes; --draft-vocab ",
              kSuggestedDraftVocab, " drafts among the first ", kSuggestedDraftVocab, " ids (docs/mtp.md: they cover 92–94% of ",
              "English and code, a token map from your own text more)");
  options.drafter = drafter->get();
  return drafter;
}

void use_head_costs(EngineOptions& options, StepModel& step_model) {
  // Decode and head steps both stream their weights: their bytes' ratio is what a draft costs until
  // the engine has measured it (the 2B's full head 0.27, its 32K head 0.05, the 27B's head 0.07).
  if (const double share = step_model.head_step_weight_share(); share > 0) options.draft_costs.draft_step = share;
}

Result<uint64_t> parse_byte_size(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  double scale = 0.0;
  if (unit.empty() || unit == "B") scale = 1.0;
  else if (unit == "KiB" || unit == "K") scale = 1024.0;
  else if (unit == "MiB" || unit == "M") scale = 1024.0 * 1024.0;
  else if (unit == "GiB" || unit == "G") scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  if (end == text.c_str() || scale == 0.0 || !std::isfinite(value) || value <= 0.0 || value * scale > 1e15)
    return Status::errorf(option, ": expected a positive size such as 4GiB, 512MiB or 1000000, found \"", text, "\"");
  return static_cast<uint64_t>(value * scale);
}

Result<EngineOptions> engine_options(const EngineCliOptions& options) {
  EngineOptions engine = options.engine;
  DS_ASSIGN_OR_RETURN(engine.cache_memory, parse_byte_size(options.cache_memory, "--cache-memory"));
  DS_ASSIGN_OR_RETURN(const uint64_t prefix_cache_memory,
                      parse_byte_size(options.prefix_cache_memory, "--prefix-cache-memory"));
  engine.prefix_cache_memory = options.no_prefix_cache ? 0 : prefix_cache_memory;
  DS_ASSIGN_OR_RETURN(engine.prefix_cache_disk, parse_byte_size(options.prefix_cache_disk, "--prefix-cache-disk"));
  if (!options.prefix_cache_dir.empty() && !options.no_prefix_cache) {
    DS_TRY(prepare_prefix_store_dir(options.prefix_cache_dir));
    engine.prefix_cache_dir = options.prefix_cache_dir;
  }
  return engine;
}

Result<KvDtype> kv_cache_dtype(const EngineCliOptions& options, const Qwen35Model& model) {
  return resolve_kv_dtype(options.kv_cache_dtype, model);
}

void use_message_start_token(EngineOptions& options, const Tokenizer& tokenizer) {
  if (const int32_t id = tokenizer.token_to_id("<|im_start|>"); id >= 0) options.snapshots.message_start_tokens = {id};
}

void log_engine_limits(const Engine& engine, const EngineOptions& options) {
  const EngineLimits& l = engine.limits();
  const int64_t block_size = engine.block_size();
  log::info("engine: cache ", human_bytes(l.cache_bytes), " of ", human_bytes(options.cache_memory), ": ",
            l.capacity.num_blocks, " ", kv_dtype_name(engine.kv_dtype()), " KV blocks of ", block_size, " tokens (",
            l.capacity.num_blocks * block_size, " positions), ", l.capacity.num_slots, " DeltaNet state slots",
            l.capacity.num_spare_slots > 0 ? " (each with a spare that speculative verifies write into)" : "",
            "; up to ", options.limits.max_seqs, " sequences and ", options.limits.max_batch_tokens, " tokens per step");
  if (l.capacity.num_snapshots == 0) {
    log::info("engine: prefix cache off");
  } else {
    log::info("engine: prefix cache on: ", l.capacity.num_snapshots, " DeltaNet snapshots (state + a KV tail block) of ",
              human_bytes(l.snapshot_bytes / static_cast<uint64_t>(l.capacity.num_snapshots)), " in ",
              human_bytes(l.snapshot_bytes), " (--prefix-cache-memory ", human_bytes(options.prefix_cache_memory),
              "), KV blocks shared by content",
              options.snapshots.message_start_tokens.empty() ? "; no message-start token known (snapshots at prompt ends and every 1K–4K only)" : "");
    if (!options.prefix_cache_dir.empty())
      log::info("engine: prefix cache on disk in ", options.prefix_cache_dir, " (--prefix-cache-disk ",
                human_bytes(options.prefix_cache_disk), ")");
  }
  log::info("engine: max_model_len ", l.max_model_len, " (", l.max_model_len_source, ")");
  if (options.speculative_tokens > 0)
    log::info("engine: speculative decoding: up to ", options.speculative_tokens,
              " drafts per step from the checkpoint's MTP head (its KV is one more layer of every KV block)");
}

}  // namespace ds::app
