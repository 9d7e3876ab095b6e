// `deltaserve generate --model DIR --tokens IDS --max-tokens N [--temperature T] [--top-p P]
// [--top-k K] [--seed S] [--ids]`: prefill the prompt, then decode token by token.
#include <chrono>
#include <optional>
#include <cstdio>

#include "cli_errors.h"
#include "commands.h"
#include "engine/sampler.h"
#include "run_options.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "token_list.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"

namespace ds::app {
namespace {

struct GenerateOptions {
  std::string model_dir, tokens, prompt, mode = "fast";
  RunOptions run;
  int64_t max_tokens = 32;
  int64_t prefill_chunk = 512;
  SamplingParams sampling;
  bool ids = false;
  bool ignore_eos = false;
  bool chat = false;  // --chat: the prompt is one user message through the checkpoint's chat template
};

int run_generate(const GenerateOptions& options) {
  const Status valid = validate_sampling(options.sampling);
  if (!valid.ok()) return report_error(valid);
  // The tokenizer is needed for --prompt and for printing text; --tokens --ids works without one.
  std::optional<Tokenizer> tokenizer;
  if (!options.prompt.empty() || !options.ids) {
    auto loaded_tokenizer = Tokenizer::load_dir(options.model_dir);
    if (loaded_tokenizer.ok()) {
      tokenizer.emplace(std::move(*loaded_tokenizer));
    } else if (!options.prompt.empty()) {
      return report_error(loaded_tokenizer.status().with_context("--prompt needs the tokenizer"));
    } else {
      log::warn("generate: no usable tokenizer (", loaded_tokenizer.status().message(), "): printing ids");
    }
  }
  std::string prompt_text = options.prompt;
  if (options.chat) {
    auto source = load_chat_template(options.model_dir);
    auto special = load_special_tokens(options.model_dir);
    if (!source.ok() || !special.ok()) return report_error((source.ok() ? special.status() : source.status()).with_context("--chat"));
    ChatRequest request;
    request.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", options.prompt}}});
    auto rendered = apply_chat_template(*source, *special, request);
    if (!rendered.ok()) return report_error(rendered.status().with_context("--chat"));
    prompt_text = std::move(*rendered);
  }
  auto prompt = options.prompt.empty() ? parse_int_list(options.tokens, "--tokens") : tokenizer->encode(prompt_text);
  if (!prompt.ok()) return report_error(prompt.status());
  if (prompt->empty()) return report_error(Status::error("--prompt: expected text that encodes to at least one token, found none"));
  const auto backend = make_backend(options.run);
  auto loaded = load_model(options.model_dir, *backend, options.mode == "f32" ? ComputeMode::f32 : ComputeMode::fast,
                           weight_format(options.run), thread_count(options.run));
  if (!loaded.ok()) return report_error(loaded.status());
  const std::vector<int64_t>& eos = loaded->config.text.eos_token_id;

  using Clock = std::chrono::steady_clock;
  SequenceRunner runner(*loaded->model, static_cast<int64_t>(prompt->size()) + options.max_tokens, options.prefill_chunk);
  Sampler sampler(options.sampling);
  std::vector<float> logits;
  const auto start = Clock::now();
  for (size_t offset = 0; offset < prompt->size(); offset += options.prefill_chunk) {
    const size_t n = std::min<size_t>(options.prefill_chunk, prompt->size() - offset);
    const Status status = runner.feed(std::span(*prompt).subspan(offset, n), LogitsRows::last, logits);
    if (!status.ok()) return report_error(status);
  }
  const auto prefilled = Clock::now();
  std::vector<int32_t> generated;
  while (static_cast<int64_t>(generated.size()) < options.max_tokens) {
    const int32_t token = sampler.sample(logits);
    generated.push_back(token);
    if (!options.ignore_eos && std::find(eos.begin(), eos.end(), token) != eos.end()) break;
    if (static_cast<int64_t>(generated.size()) == options.max_tokens) break;
    const Status status = runner.feed(std::span(&generated.back(), 1), LogitsRows::last, logits);
    if (!status.ok()) return report_error(status);
  }
  const auto done = Clock::now();
  const double prefill_s = std::chrono::duration<double>(prefilled - start).count();
  const double decode_s = std::chrono::duration<double>(done - prefilled).count();
  log::info("generate: prompt ", prompt->size(), " tokens in ", prefill_s, " s (", prompt->size() / std::max(prefill_s, 1e-9),
            " tok/s); ", generated.size(), " new tokens in ", decode_s, " s (",
            static_cast<double>(generated.size() > 1 ? generated.size() - 1 : 0) / std::max(decode_s, 1e-9), " tok/s)");
  if (options.ids || !tokenizer) {
    std::printf("%s\n", join_ints(generated).c_str());
  } else {
    std::printf("%s\n", tokenizer->decode(generated).c_str());
  }
  return 0;
}

}  // namespace

CommandRunner add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate a continuation of a prompt");
  command->add_option("-m,--model", options->model_dir, "Checkpoint directory")->required();
  auto* tokens = command->add_option("--tokens", options->tokens, "Prompt as token ids, comma-separated");
  auto* prompt = command->add_option("--prompt", options->prompt, "Prompt text, encoded with the checkpoint's tokenizer (no chat template)");
  tokens->excludes(prompt);
  command->add_flag("--chat", options->chat, "Render --prompt as one user message with the checkpoint's chat template (generation prompt added)")
      ->needs(prompt);
  command->add_option("--max-tokens", options->max_tokens, "New tokens to generate")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command->add_option("--temperature", options->sampling.temperature, "0 = greedy")->capture_default_str();
  command->add_option("--top-p", options->sampling.top_p, "Nucleus sampling mass (1 = off)")->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k, "Keep the k most likely tokens (0 = off)")->capture_default_str();
  command->add_option("--seed", options->sampling.seed, "Sampling seed")->capture_default_str();
  command->add_flag("--ids", options->ids, "Print the generated ids on one line, comma-separated");
  command->add_flag("--ignore-eos", options->ignore_eos, "Do not stop at end-of-sequence tokens");
  command->add_option("--prefill-chunk", options->prefill_chunk, "Prompt tokens per model call")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16))
      ->capture_default_str();
  command->add_option("--mode", options->mode, "f32 (reference) or fast (bf16 matmul inputs)")
      ->check(CLI::IsMember({"f32", "fast"}))
      ->capture_default_str();
  command->callback([tokens, prompt] {
    if (tokens->count() == 0 && prompt->count() == 0) throw CLI::ValidationError("one of --tokens or --prompt is required");
  });
  add_run_options(command, options->run);
  return [options] { return run_generate(*options); };
}

}  // namespace ds::app
