// `deltaserve bench (--model DIR | --shape S) [--threads N] [--json]`: prefill tok/s at several
// prompt lengths, decode tok/s, TTFT, TPOT, peak RSS, and the machine's own limits measured in the
// same run — streaming read bandwidth (decode's floor) and the bf16 peaks of AVX-512 and AMX tiles
// (prefill's); optionally the engine under concurrency, the prefix cache, and speculative decoding
// at scripted acceptance (--speculative-tokens K --draft-acceptance P,...).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model_argument.h"
#include "bench_concurrency.h"
#include "bench_images.h"
#include "bench_prefix_cache.h"
#include "bench_speculative.h"
#include "cli_errors.h"
#include "engine/qwen35_step_model.h"
#include "engine/sampler.h"
#include "engine_options.h"
#include "run_options.h"
#include "commands.h"
#include "default_assets.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/timed_backend.h"
#include "model/model_loader.h"
#include "model/model_summary.h"
#include "model/random_checkpoint.h"
#include "model/shape_presets.h"
#include "model/sequence_runner.h"
#include "timed_step_model.h"
#include "token_list.h"
#include "util/elapsed.h"
#include "util/human.h"
#include "util/log.h"
#include "util/parallel_ranges.h"
#include "util/process_memory.h"
#include "util/random.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kProbeBytes = uint64_t{512} << 20;  // 16× the L3 of this machine class

struct BenchOptions {
  std::string model_dir, shape, prompts = "128,512,2048,8192", concurrency, prefix_cache, draft_acceptance, images;
  int64_t decode_tokens = 128;
  int64_t prefill_chunk = 512;
  RunOptions run;
  EngineCliOptions engine;
  bool json = false;
  bool op_times = false;
  SamplingParams sampling;  // --concurrency's requests: greedy unless --temperature
};


// A figure with a fixed number of decimals, for the text report (the JSON keeps full precision).
std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// The process's peak resident memory from construction on, the loading peak included, without the
// bandwidth probes' buffers (kProbeBytes, freed when a probe returns): the kernel's high-water mark
// (VmHWM) is restarted at construction (making a --shape checkpoint is not part of the run), read
// before every probe and restarted after it. Sampling VmRSS after each run instead missed the
// loading peak (2B checkpoint: 1.83 GiB sampled, 2.33 GiB by /usr/bin/time).
class PeakResidentMemory {
 public:
  PeakResidentMemory() : restartable_(reset_peak_resident_memory()) {}
  template <typename Probe>
  auto left_out(Probe probe) {
    peak_ = std::max(peak_, peak_resident_memory_bytes());
    auto result = probe();
    restartable_ = reset_peak_resident_memory() && restartable_;
    return result;
  }
  uint64_t bytes() const { return std::max(peak_, peak_resident_memory_bytes()); }
  // False where the kernel does not allow restarting the mark: the peak then counts from the
  // process's start and may include a probe buffer.
  bool restartable() const { return restartable_; }

 private:
  uint64_t peak_ = 0;
  bool restartable_;
};

// Bytes one decode step must read: every text weight it uses (the whole head, one embedding row),
// DeltaNet state read + written, and the KV of `context` positions in the cache's dtype.
uint64_t decode_step_bytes(const LoadedModel& loaded, int64_t context, KvDtype kv_dtype) {
  const TextConfig& c = loaded.config.text;
  const ModelSummary summary = summarize_checkpoint(*loaded.checkpoint, loaded.config,
                                                    loaded.config.nested ? kNestedTextPrefix : kFlatTextPrefix);
  // The text weights with the matmul weights as the model reads them (repacked, quantised), but
  // never more than the file's: padding in a repacked layout (Q6_K panels) is no byte a step needs.
  uint64_t bytes = summary.text_bytes - loaded.matmul_file_bytes + std::min(loaded.matmul_bytes, loaded.matmul_file_bytes);
  const auto embed = summary.parts.find(WeightPart::embeddings);
  const bool tied = summary.parts.find(WeightPart::head) == summary.parts.end();
  if (embed != summary.parts.end() && !tied) bytes -= embed->second.bytes;  // only one row is gathered
  const ContextMemory memory = context_memory(c, context);
  const uint64_t recurrent = static_cast<uint64_t>(c.num_layers_of(LayerType::linear_attention)) *
                             c.linear_num_value_heads * c.linear_key_head_dim * c.linear_value_head_dim * 4;
  const uint64_t kv_bytes = memory.kv_bytes / sizeof(float) * static_cast<uint64_t>(kv_dtype_bytes(kv_dtype));
  return bytes + 2 * recurrent + kv_bytes;
}

void emit(bool json, const std::string& test, double tokens_per_s, const BenchOptions& o, int threads,
          const std::string& extra_json, const std::string& extra_text) {
  if (json)
    std::printf("{\"test\": \"%s\", \"tokens_per_s\": %.3f, \"weights\": \"%s\", \"threads\": %d%s}\n", test.c_str(),
                tokens_per_s, o.run.weights.c_str(), threads, extra_json.c_str());
  else
    std::printf("  %-8s %10.1f tok/s   %s\n", test.c_str(), tokens_per_s, extra_text.c_str());
  std::fflush(stdout);
}

// The engine with N requests at once, for each N of --concurrency: 128-token prompts, decode_tokens each.
Status bench_concurrency(const BenchOptions& options, LoadedModel& loaded, int threads) {
  DS_ASSIGN_OR_RETURN(const std::vector<int32_t> levels, parse_int_list(options.concurrency, "--concurrency"));
  DS_TRY(validate_sampling(options.sampling));
  DS_ASSIGN_OR_RETURN(EngineOptions engine_options_, engine_options(options.engine));
  DS_ASSIGN_OR_RETURN(const KvDtype kv_dtype, kv_cache_dtype(options.engine, *loaded.model));
  Qwen35StepModel plain(*loaded.model, kv_dtype, engine_options_.speculative_tokens > 0);
  TimedStepModel step_model(plain);  // with --op-times: the batched decodes' ops apart from the rest
  DS_ASSIGN_OR_RETURN(auto drafter, speculative_drafter(engine_options_, step_model, options.engine));  // outlives the engine
  DS_ASSIGN_OR_RETURN(auto engine, Engine::start(step_model, engine_options_));
  for (int32_t n : levels) {
    if (n < 1) return Status::errorf("--concurrency: expected request counts >= 1, found ", n);
    DS_ASSIGN_OR_RETURN(const ConcurrencyResult r,
                        run_concurrency(*engine, loaded.config.text.vocab_size, n, 128, options.decode_tokens, options.sampling, 7));
    emit(options.json, str_cat("tg", options.decode_tokens, "_c", n), r.decode_tokens_per_s, options, threads,
         str_cat(", \"concurrency\": ", n, ", \"total_tokens_per_s\": ", r.total_tokens_per_s, ", \"ttft_mean_s\": ",
                 r.ttft_mean_s, ", \"ttft_max_s\": ", r.ttft_max_s, ", \"itl_mean_s\": ", r.itl_mean_s,
                 ", \"itl_p50_s\": ", r.itl_p50_s, ", \"itl_p99_s\": ", r.itl_p99_s),
         str_cat(n, " requests at once: aggregate decode; TTFT mean ", fixed(r.ttft_mean_s, 3), " s (max ",
                 fixed(r.ttft_max_s, 3), " s), inter-token p50 ", fixed(1000 * r.itl_p50_s, 1), " ms, p99 ",
                 fixed(1000 * r.itl_p99_s, 1), " ms"));
  }
  return {};
}

// The prefix cache, for each N of --prefix-cache: TTFT of N shared tokens + a 32-token question,
// cold then warm (another question after the first), and the cost of one DeltaNet snapshot.
Status bench_prefix_cache(const BenchOptions& options, LoadedModel& loaded, int threads) {
  DS_ASSIGN_OR_RETURN(const std::vector<int32_t> lengths, parse_int_list(options.prefix_cache, "--prefix-cache"));
  DS_ASSIGN_OR_RETURN(EngineOptions engine_options_, engine_options(options.engine));
  Qwen35StepModel step_model(*loaded.model, default_kv_dtype(*loaded.model), engine_options_.speculative_tokens > 0);
  DS_ASSIGN_OR_RETURN(auto drafter, speculative_drafter(engine_options_, step_model, options.engine));  // outlives the engine
  DS_ASSIGN_OR_RETURN(auto engine, Engine::start(step_model, engine_options_));
  constexpr int64_t kQuestion = 32;
  for (int32_t n : lengths) {
    if (n < 1) return Status::errorf("--prefix-cache: expected shared prefix lengths >= 1, found ", n);
    DS_ASSIGN_OR_RETURN(const PrefixCacheResult r,
                        run_prefix_cache(*engine, loaded.config.text.vocab_size, n, kQuestion, 11 + static_cast<uint64_t>(n)));
    const double speedup = r.warm_ttft_s > 0 ? r.cold_ttft_s / r.warm_ttft_s : 0;
    emit(options.json, str_cat("prefix", n), static_cast<double>(n + kQuestion) / r.warm_ttft_s, options, threads,
         str_cat(", \"shared_tokens\": ", n, ", \"question_tokens\": ", kQuestion, ", \"cold_ttft_s\": ", r.cold_ttft_s,
                 ", \"warm_ttft_s\": ", r.warm_ttft_s, ", \"cached_tokens\": ", r.cached_tokens, ", \"speedup\": ", speedup),
         str_cat(n, " shared + ", kQuestion, " new tokens: TTFT cold ", fixed(r.cold_ttft_s, 3), " s, warm ",
                 fixed(r.warm_ttft_s, 3), " s (", r.cached_tokens, " cached): ", fixed(speedup, 1), "x"));
  }
  const SnapshotCost cost = measure_snapshot_cost(step_model.cache_geometry(), step_model.backend());
  DS_ASSIGN_OR_RETURN(const PrefixCacheResult chunk, run_prefix_cache(*engine, loaded.config.text.vocab_size, 0, 64, 3));
  if (options.json)
    std::printf("{\"test\": \"snapshot\", \"bytes\": %llu, \"take_s\": %.6f, \"restore_s\": %.6f, \"chunk64_s\": %.6f}\n",
                static_cast<unsigned long long>(cost.bytes), cost.take_s, cost.restore_s, chunk.cold_ttft_s);
  else
    std::printf("  snapshot %s: take %.2f ms, restore %.2f ms (%.2f%% and %.2f%% of a 64-token prompt's %.0f ms)\n",
                human_bytes(cost.bytes).c_str(), 1e3 * cost.take_s, 1e3 * cost.restore_s,
                100 * cost.take_s / chunk.cold_ttft_s, 100 * cost.restore_s / chunk.cold_ttft_s, 1e3 * chunk.cold_ttft_s);
  return {};
}

// `--op-times`: per kind of step, each op's milliseconds per step and calls per step, the largest first.
void print_op_times(const TimedBackend& timed, bool json) {
  for (const auto& [phase, times] : timed.phases()) {
    if (times.steps == 0 || phase == "other") continue;
    std::vector<std::pair<std::string, TimedBackend::OpTime>> ops(times.ops.begin(), times.ops.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (const auto& [op, time] : ops) total += time.seconds;
    const double steps = static_cast<double>(times.steps);
    if (!json) std::printf("  op times, %s (%lld steps, %.2f ms of ops a step):\n", phase.c_str(),
                           static_cast<long long>(times.steps), 1e3 * total / steps);
    for (const auto& [op, time] : ops) {
      if (json)
        std::printf("{\"test\": \"op_times\", \"phase\": \"%s\", \"op\": \"%s\", \"steps\": %lld, \"ms_per_step\": %.6f, "
                    "\"calls_per_step\": %.3f}\n",
                    phase.c_str(), op.c_str(), static_cast<long long>(times.steps), 1e3 * time.seconds / steps,
                    static_cast<double>(time.calls) / steps);
      else
        std::printf("    %-48s %9.3f ms  %6.1f calls\n", op.c_str(), 1e3 * time.seconds / steps,
                    static_cast<double>(time.calls) / steps);
    }
  }
}

// Speculative decoding with the MTP head at scripted acceptances (bench_speculative.h): one line per P
// of --draft-acceptance, beside plain decoding measured around it.
Status bench_speculative(const BenchOptions& options, LoadedModel& loaded, int threads) {
  std::vector<double> acceptances;
  for (size_t begin = 0; begin <= options.draft_acceptance.size();) {
    const size_t end = std::min(options.draft_acceptance.find(',', begin), options.draft_acceptance.size());
    const std::string item = options.draft_acceptance.substr(begin, end - begin);
    char* parsed_end = nullptr;
    const double p = std::strtod(item.c_str(), &parsed_end);
    if (item.empty() || *parsed_end != '\0' || !(p >= 0 && p <= 1))
      return Status::errorf("--draft-acceptance: expected probabilities in [0, 1] such as 0,0.5,1, found \"", item, "\"");
    acceptances.push_back(p);
    begin = end + 1;
  }
  DS_ASSIGN_OR_RETURN(EngineOptions engine_options_, engine_options(options.engine));
  DS_ASSIGN_OR_RETURN(const KvDtype kv_dtype, kv_cache_dtype(options.engine, *loaded.model));
  if (engine_options_.speculative_tokens < 1)
    return Status::error("--draft-acceptance needs --speculative-tokens K of at least 1, found 0");
  DS_ASSIGN_OR_RETURN(const DraftVocab vocab, draft_vocab(options.engine, loaded.config.text.vocab_size));
  // The head's logits: --draft-vocab N, or the token map's length (0: the whole vocabulary).
  const int64_t draft_tokens = vocab.size > 0 || vocab.token_map.empty() ? vocab.size
                                                                           : static_cast<int64_t>(vocab.token_map.size());
  Qwen35StepModel plain(*loaded.model, kv_dtype), with_head(*loaded.model, kv_dtype, /*with_mtp=*/true);
  constexpr int64_t kPrompt = 128;
  DS_ASSIGN_OR_RETURN(const std::vector<SpeculativeResult> results,
                      run_speculative(plain, with_head, engine_options_, vocab, acceptances, kPrompt,
                                      options.decode_tokens, 17));
  const int64_t k = engine_options_.speculative_tokens;
  const char* kind = vocab.token_map.empty() ? "_v" : "_map";  // [0, N) or a token map's N
  const std::string head = draft_tokens > 0 ? str_cat(kind, draft_tokens) : "";
  const uint64_t slot_bytes = with_head.cache_geometry().slot_bytes();
  for (const SpeculativeResult& r : results) {
    const double step = r.decode_step_s, ratio = r.spec_tokens_per_s / std::max(r.plain_tokens_per_s, 1e-9);
    emit(options.json, str_cat("spec_k", k, head, "_p", fixed(r.acceptance, 2)), r.spec_tokens_per_s, options, threads,
         str_cat(", \"speculative_tokens\": ", k, ", \"draft_vocab\": ", draft_tokens, ", \"token_map\": ",
                 vocab.token_map.empty() ? "false" : "true", ", \"adaptive\": ",
                 engine_options_.adaptive_drafts ? "true" : "false", ", \"draft_acceptance\": ", r.acceptance, ", \"plain_tokens_per_s\": ",
                 r.plain_tokens_per_s, ", \"ratio\": ", ratio, ", \"accepted_fraction\": ", r.accepted_fraction,
                 ", \"tokens_per_round\": ", r.tokens_per_round, ", \"drafts_per_round\": ", r.drafts_per_round,
                 ", \"rounds\": ", r.rounds, ", \"decode_step_s\": ", step,
                 ", \"verify_s\": ", r.verify_s, ", \"head_pass_s\": ", r.head_pass_s, ", \"head_step_s\": ", r.head_step_s,
                 ", \"draft_per_round_s\": ", r.draft_per_round_s, ", \"replay_per_round_s\": ", r.replay_per_round_s,
                 ", \"measured_verify_row\": ", r.measured_costs.verify_row,
                 ", \"measured_draft_step\": ", r.measured_costs.draft_step),
         str_cat("K=", k, engine_options_.adaptive_drafts ? " (adaptive)" : " (fixed)",
                 draft_tokens > 0 ? str_cat(vocab.token_map.empty() ? " vocab " : " token map ", draft_tokens) : "", " P=",
                 fixed(r.acceptance, 2), ": ", fixed(ratio, 2), "x plain (", fixed(r.plain_tokens_per_s, 2), " tok/s); ",
                 r.rounds == 0 ? str_cat("no rounds: adaptive k decoded plainly throughout (a decode step ", fixed(1000 * step, 1),
                                         " ms; head pass ", fixed(r.head_pass_s / step, 2), "x a step)")
                               : str_cat(r.rounds, " rounds, ", fixed(100 * r.accepted_fraction, 0), "% accepted, ",
                                         fixed(r.tokens_per_round, 2), " tokens/round; verify of ",
                                         fixed(1 + r.drafts_per_round, 2), " rows (mean) ", fixed(r.verify_s / step, 2),
                                         "x a decode step (", fixed(1000 * step, 1), " ms); head pass ",
                                         fixed(r.head_pass_s / step, 2), "x, chained step ", fixed(r.head_step_s / step, 2),
                                         "x, drafting ", fixed(r.draft_per_round_s / step, 2), "x per round; replay ",
                                         fixed(1000 * r.replay_per_round_s, 2), " ms/round"),
                 "; adaptive k's costs now (their start values until rounds measure them): ",
                 fixed(r.measured_costs.verify_row, 3), " per verified row, ", fixed(r.measured_costs.draft_step, 3),
                 " per draft"));
  }
  if (!options.json)
    std::printf("  speculative: a verify writes the DeltaNet state (%s) into the sequence's spare slot, nothing is "
                "copied (a rejection replays the kept rows on the slot); a %lld-token prompt, %lld tokens greedy per "
                "run; adaptive k started from %.3f per draft (the head's weight bytes per step / a decode step's) and "
                "%.3f per verified row\n",
                human_bytes(slot_bytes).c_str(), static_cast<long long>(kPrompt),
                static_cast<long long>(options.decode_tokens), with_head.head_step_weight_share(),
                engine_options_.draft_costs.verify_row);
  return {};
}

int run_bench(const BenchOptions& options) {
  // Cold and warm times mean nothing over a cache that outlives the run.
  if (!options.engine.prefix_cache_dir.empty())
    return report_error(Status::error("bench: --prefix-cache-dir is not accepted (cold prefills would start warm)"));
  auto prompt_lengths = parse_int_list(options.prompts, "--prompts");
  if (!prompt_lengths.ok()) return report_error(prompt_lengths.status());
  for (int32_t n : *prompt_lengths)
    if (n < 1) return report_error(Status::errorf("--prompts: expected prompt lengths >= 1, found ", n));
  std::vector<int32_t> image_sides;
  if (!options.images.empty()) {
    auto sides = parse_image_sides(options.images);
    if (!sides.ok()) return report_error(sides.status());
    image_sides = std::move(*sides);
  }
  std::string dir = options.model_dir;
  if (dir.empty()) {
    auto preset = find_shape_preset(options.shape);
    if (!preset.ok()) return report_error(preset.status());
    const bool with_mtp = options.engine.engine.speculative_tokens > 0;  // the drafter is the MTP head
    dir = "models/" + preset->name + (with_mtp ? "-random-mtp" : "-random");
    if (!std::filesystem::exists(dir + "/config.json")) {
      log::info("bench: creating ", dir, " (random weights, cached for later runs)");
      RandomCheckpointOptions writer;
      writer.with_mtp = with_mtp;
      writer.out_dir = dir;
      writer.threads = available_threads();
      writer.force = true;
      const TokenizerAssets assets{std::string(default_tokenizer_json()), std::string(default_tokenizer_config_json()),
                                   std::string(default_chat_template())};
      const Status made = write_random_checkpoint(preset_config_json(*preset, false, "bfloat16"), writer, assets);
      if (!made.ok()) return report_error(made);
    }
  }
  PeakResidentMemory peak_memory;
  auto backend = make_backend(options.run);
  auto* cpu = dynamic_cast<CpuBackend*>(backend.get());
  std::unique_ptr<TimedBackend> timed = options.op_times ? std::make_unique<TimedBackend>(*backend) : nullptr;
  auto begin_op_step = [&](const char* phase) {
    if (timed) timed->begin_step(phase);
  };
  auto loaded = load_model(dir, timed ? static_cast<Backend&>(*timed) : *backend, compute_mode(options.run),
                           weights_choice(options.run), thread_count(options.run));
  if (!loaded.ok()) return report_error(loaded.status());
  const auto kv_dtype = kv_cache_dtype(options.engine, *loaded->model);
  if (!kv_dtype.ok()) return report_error(kv_dtype.status());
  const int threads = cpu->threads();

  // Both peaks wherever the CPU has AMX, so a run with --isa avx512 states the headroom beside it;
  // prefill's share is of the peak of the kernels in use.
  const double avx512_peak = measure_compute_peak(cpu->pool(), cpu->isa());
  const double amx_peak = measure_amx_peak(cpu->pool(), detect_isa());
  const bool on_amx = cpu->isa() == Isa::amx;
  // Int8 dots (int8 panels, and GGUF Q8_0 and K-quant panels) run VNNI on every AVX-512 CPU (AMX
  // ones too): their share is of the int8 dot peak. Judged by a layer's MLP, most of its matmul bytes.
  const WeightFormatId mlp_format = loaded->model->weights().layers.at(0).mlp.up_proj.format;
  const bool int8 = mlp_format == WeightFormatId::int8_panels || mlp_format == WeightFormatId::q4_k_panels ||
                    mlp_format == WeightFormatId::q5_k_panels || mlp_format == WeightFormatId::q6_k_panels ||
                    mlp_format == WeightFormatId::iq4_xs_panels;
  const double int8_peak = int8 ? measure_int8_peak(cpu->pool(), cpu->isa()) : 0;
  // Below AVX-512 the kernels widen bf16 weights to fp32 and multiply-add in fp32: their peak is the FMA's.
  const bool avx2_only = !has_avx512(cpu->isa());
  const double fma_peak = avx2_only ? measure_fma_peak(cpu->pool(), cpu->isa()) : 0;
  const double peak_flops = int8 ? int8_peak : on_amx ? amx_peak : avx2_only ? fma_peak : avx512_peak;
  const char* peak_name = int8 ? "VNNI int8 dot" : on_amx ? "AMX bf16" : avx2_only ? "AVX2 fp32 FMA" : "AVX-512 bf16";
  const double bandwidth_before =
      peak_memory.left_out([&] { return measure_read_bandwidth(cpu->pool(), kProbeBytes, 5); });
  // Layer matmul FLOPs per token: 2 × every text weight except the embedding table and head.
  const ModelSummary summary = summarize_checkpoint(*loaded->checkpoint, loaded->config,
                                                    loaded->config.nested ? kNestedTextPrefix : kFlatTextPrefix);
  uint64_t layer_params = 0;
  for (WeightPart part : {WeightPart::deltanet, WeightPart::attention, WeightPart::mlp})
    if (auto it = summary.parts.find(part); it != summary.parts.end()) layer_params += it->second.params;
  if (!options.json)
    std::printf("deltaserve bench: %s, %s, %s KV cache; read bandwidth %.1f GB/s, %s%s\n",
                dir.c_str(), cpu->name(), kv_dtype_name(*kv_dtype), bandwidth_before / 1e9,
                (avx2_only ? str_cat("compute peak: AVX2 fp32 FMA ", fixed(fma_peak / 1e9, 0), " GFLOP/s (no AVX-512)")
                           : str_cat("bf16 peaks: AVX-512 ", fixed(avx512_peak / 1e9, 0), " GFLOP/s")).c_str(),
                (str_cat(amx_peak > 0 ? str_cat(", AMX tiles ", fixed(amx_peak / 1e9, 0), " GFLOP/s") : "",
                         !int8             ? std::string()
                         : int8_peak > 0 ? str_cat("; int8 dot peak ", fixed(int8_peak / 1e9, 0), " GOP/s")
                                         : std::string("; no int8 dot peak (no AVX-512 VNNI)")))
                    .c_str());

  Xoshiro256 rng(1);
  auto random_prompt = [&](int64_t n) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto& id : ids) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(loaded->config.text.vocab_size));
    return ids;
  };
  std::vector<float> logits;
  {  // Warm-up (not reported): one chunk of the longest prompt's size brings every weight page into
     // memory and first-touches the kernels' buffers of that size, which the first timed prefill
     // otherwise paid (2B pp512: the first of two ran 2.6–3.2% below the second; with this
     // warm-up 1.2–2.3%).
    const int64_t longest = *std::max_element(prompt_lengths->begin(), prompt_lengths->end());
    const int64_t n = std::min<int64_t>(longest, options.prefill_chunk);
    const auto prompt = random_prompt(n);
    SequenceRunner warmup(*loaded->model, n + 1, n, *kv_dtype);
    if (Status s = warmup.feed(prompt, LogitsRows::last, logits); !s.ok()) return report_error(s);
  }
  for (int32_t n : *prompt_lengths) {
    const auto prompt = random_prompt(n);
    SequenceRunner runner(*loaded->model, n + 1, std::min<int64_t>(n, options.prefill_chunk), *kv_dtype);
    const auto start = Clock::now();
    for (int64_t offset = 0; offset < n; offset += options.prefill_chunk) {
      const int64_t size = std::min<int64_t>(options.prefill_chunk, n - offset);
      begin_op_step(size == options.prefill_chunk ? "prefill chunk" : "prefill tail");
      const Status status = runner.feed(std::span(prompt).subspan(offset, size), LogitsRows::last, logits);
      if (!status.ok()) return report_error(status);
    }
    const double seconds = seconds_since(start);
    const double tps = n / seconds;
    const double compute_fraction = peak_flops > 0 ? tps * 2.0 * layer_params / peak_flops : 0;
    emit(options.json, "pp" + std::to_string(n), tps, options, threads,
         str_cat(", \"ttft_s\": ", seconds, ", \"compute_fraction\": ", compute_fraction, ", \"peak_kind\": \"",
                 int8 ? "int8" : on_amx ? "amx" : avx2_only ? "avx2_fma" : "avx512", "\", \"avx512_peak_gflops\": ", avx512_peak / 1e9,
                 ", \"fma_peak_gflops\": ", fma_peak / 1e9,
                 ", \"int8_peak_gops\": ", int8_peak / 1e9,
                 ", \"amx_peak_gflops\": ", amx_peak / 1e9),
         peak_flops > 0 ? str_cat("TTFT ", fixed(seconds, 3), " s, ", fixed(compute_fraction * 100, 1), "% of the ",
                                  peak_name, " peak in layer matmuls")
                        : str_cat("TTFT ", fixed(seconds, 3), " s (no ", peak_name, " peak on this CPU to compare with)"));
  }

  // Decode: decode_tokens after a 128-token prompt, greedy. The bandwidth these machines give swings
  // by up to 2× within seconds (other tenants), so the floor is measured interleaved: a probe after
  // every kDecodeSegment tokens (outside the timed decode), and the floor uses their mean — the
  // bandwidth the decode actually had on offer, not the best moment of the run.
  {
    const int64_t context = 128;
    constexpr int64_t kDecodeSegment = 16;
    const auto prompt = random_prompt(context);
    SequenceRunner runner(*loaded->model, context + options.decode_tokens + 1, context, *kv_dtype);
    if (Status s = runner.feed(prompt, LogitsRows::last, logits); !s.ok()) return report_error(s);
    double seconds = 0, probe_sum = 0, probe_min = 1e30, probe_max = 0;
    int probes = 0;
    for (int64_t done = 0; done < options.decode_tokens;) {
      const int64_t segment = std::min(kDecodeSegment, options.decode_tokens - done);
      const auto start = Clock::now();
      for (int64_t i = 0; i < segment; ++i) {
        int32_t next = argmax(logits);  // the engine's greedy choice
        begin_op_step("decode");
        if (Status s = runner.feed(std::span(&next, 1), LogitsRows::last, logits); !s.ok()) return report_error(s);
      }
      seconds += seconds_since(start);
      done += segment;
      begin_op_step("other");
      const double probe = peak_memory.left_out([&] { return measure_read_bandwidth(cpu->pool(), kProbeBytes, 2); });
      probe_sum += probe, probe_min = std::min(probe_min, probe), probe_max = std::max(probe_max, probe), ++probes;
    }
    const double bandwidth = probe_sum / probes;
    const double tps = options.decode_tokens / seconds;
    const uint64_t step_bytes = decode_step_bytes(*loaded, context + options.decode_tokens / 2, *kv_dtype);
    const double floor_tps = bandwidth / static_cast<double>(step_bytes);
    emit(options.json, "tg" + std::to_string(options.decode_tokens), tps, options, threads,
         str_cat(", \"tpot_s\": ", seconds / options.decode_tokens, ", \"floor_fraction\": ", tps / floor_tps,
                 ", \"achieved_gb_s\": ", tps * step_bytes / 1e9, ", \"bandwidth_gb_s\": ", bandwidth / 1e9,
                 ", \"bandwidth_min_gb_s\": ", probe_min / 1e9, ", \"bandwidth_max_gb_s\": ", probe_max / 1e9,
                 ", \"bytes_per_token\": ", step_bytes, ", \"peak_rss_bytes\": ", peak_memory.bytes()),
         str_cat("TPOT ", fixed(1000 * seconds / options.decode_tokens, 2), " ms, ", fixed(tps * step_bytes / 1e9, 1),
                 " GB/s of ", fixed(bandwidth / 1e9, 1), " GB/s measured (mean of ", probes, " probes between segments, ",
                 fixed(probe_min / 1e9, 1), "–", fixed(probe_max / 1e9, 1), "): ", fixed(100 * tps / floor_tps, 1),
                 "% of the floor (", fixed(floor_tps, 1), " tok/s at ", human_bytes(step_bytes), "/token)"));
  }
  if (!options.concurrency.empty()) {
    if (Status s = bench_concurrency(options, *loaded, threads); !s.ok()) return report_error(s);
  }
  if (!options.prefix_cache.empty()) {
    if (Status s = bench_prefix_cache(options, *loaded, threads); !s.ok()) return report_error(s);
  }
  if (!options.draft_acceptance.empty()) {
    if (Status s = bench_speculative(options, *loaded, threads); !s.ok()) return report_error(s);
  }
  if (!image_sides.empty()) {
    if (Status s = bench_images(image_sides, *loaded, dir, threads, peak_flops, peak_name, options.json); !s.ok())
      return report_error(s);
  }
  if (timed) print_op_times(*timed, options.json);
  if (!options.json)
    std::printf("  peak RSS %s (text weights %s%s; the kernel's high-water mark, loading included, %s)\n",
                human_bytes(peak_memory.bytes()).c_str(),
                human_bytes(summary.text_bytes).c_str(),
                loaded->repacked ? str_cat(", of which matmul weights repacked: ", human_bytes(loaded->repacked->bytes()),
                                           loaded->weights == WeightsChoice::int8   ? " int8"
                                           : loaded->weights == WeightsChoice::q4_k ? " Q4_K (head Q6_K)"
                                           : is_gguf_path(dir) ? " panels (bf16; GGUF blocks as their kernels' panels)"
                                           : loaded->config.quantization ? " panels (block FP8 as FP8 panels; bf16)"
                                                               : " bf16 panels")
                                       .c_str()
                                 : ", mmapped",
                peak_memory.restartable()
                    ? "the bandwidth probes left out"
                    : str_cat("perhaps a ", human_bytes(kProbeBytes), " bandwidth probe included: the mark cannot be restarted here").c_str());
  return 0;
}

}  // namespace

CommandRunner add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand("bench", "Measure prefill and decode speed against this machine's bandwidth and compute peak");
  auto* model = add_model_option(command, options->model_dir, "Checkpoint directory, or a GGUF file (FILE.gguf, or any part of a split set)");
  auto* shape = command->add_option("--shape", options->shape, "Shape preset; the random checkpoint is made once under models/");
  model->excludes(shape);
  command->add_option("--prompts", options->prompts, "Prefill prompt lengths")->capture_default_str();
  command->add_option("--decode-tokens", options->decode_tokens, "Decode steps")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  command->add_option("--prefill-chunk", options->prefill_chunk, "Prompt tokens per model call")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  command->add_option("--concurrency", options->concurrency,
                      "Also run N requests at once through the engine (128-token prompts, --decode-tokens each), "
                      "for each N of a comma-separated list: aggregate decode tok/s, TTFT, inter-token latency");
  command->add_option("--temperature", options->sampling.temperature,
                      "--concurrency's requests sample at this temperature (0: greedy), with --top-p and --top-k")
      ->check(CLI::Range(0.0f, 1e6f))
      ->capture_default_str();
  command->add_option("--top-p", options->sampling.top_p, "--concurrency's requests: top-p (1: off)")
      ->check(CLI::Range(1e-6f, 1.0f))
      ->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k, "--concurrency's requests: top-k (0: off)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  command->add_option("--prefix-cache", options->prefix_cache,
                      "Also measure the prefix cache through the engine, for each N of a comma-separated list: TTFT of "
                      "N shared tokens + a 32-token question cold, then warm with another question; and the cost of "
                      "one DeltaNet snapshot");
  command->add_option("--draft-acceptance", options->draft_acceptance,
                      "With --speculative-tokens K: measure speculative decoding with the checkpoint's MTP head at "
                      "these acceptance probabilities (comma-separated, 0 to 1): the head runs (its cost is real), then "
                      "its drafts are replaced by plain decoding's known continuation with probability P per position "
                      "and a wrong token otherwise; tok/s against plain decoding measured around each P (plain, speculative twice, plain), the verify, "
                      "the head's steps and the DeltaNet replay timed (a --shape checkpoint is made with the head)");
  command->add_option("--images", options->images,
                      "Also measure images, for each side S of a comma-separated list (e.g. 512,1024,2048): TTFT of one "
                      "S x S image (a quality-90 JPEG) + a 16-token question split into decoding, preprocessing, the "
                      "vision tower and the text prefill, and the tower's matmul GFLOP/s as a share of the bf16 peak (the checkpoint needs a tower)");
  command->add_flag("--json", options->json, "One JSON object per line");
  command->add_flag("--op-times", options->op_times,
                    "Also time every op of the model (each call timed: a little slower) and print, per kind of "
                    "step (prefill chunk, decode; with --concurrency the engine's prefill steps and decodes of N "
                    "sequences; with --draft-acceptance its decodes, verifies, head passes and steps, replays), each "
                    "op's milliseconds per step; matmuls by weight format");
  add_run_options(command, options->run);
  add_engine_options(command, options->engine);
  command->callback([model, shape] {
    if (model->count() == 0 && shape->count() == 0) throw CLI::ValidationError("one of --model or --shape is required");
  });
  return [options] { return run_bench(*options); };
}

}  // namespace ds::app
