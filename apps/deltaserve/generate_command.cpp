// `deltaserve generate --model DIR (--tokens IDS | --prompt TEXT [--chat]) [--image FILE]... [sampling] [engine]`:
// one request through the engine (the same path the server takes), its text streamed as it comes.
#include <chrono>
#include <cstdio>
#include <optional>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine/qwen35_step_model.h"
#include "engine_options.h"
#include "image_prompt.h"
#include "model_identity.h"
#include "io/generation_config.h"
#include "model/model_loader.h"
#include "run_options.h"
#include "token_list.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"
#include "vision_options.h"

namespace ds::app {
namespace {

struct GenerateOptions {
  std::string model_dir, tokens, prompt, stop_ids;
  std::vector<std::string> images;  // --image FILE, in prompt order
  RunOptions run;
  EngineCliOptions engine;
  SamplingParams sampling;
  std::optional<uint64_t> seed;
  bool ids = false;
  bool chat = false;  // --chat: the prompt is one user message through the checkpoint's chat template
};

Result<std::vector<int32_t>> prompt_ids(const GenerateOptions& options, const std::optional<Tokenizer>& tokenizer) {
  if (options.prompt.empty()) return parse_int_list(options.tokens, "--tokens");
  std::string text = options.prompt;
  if (options.chat) {
    auto source = load_chat_template(options.model_dir);
    auto special = load_special_tokens(options.model_dir);
    if (!source.ok() || !special.ok()) return (source.ok() ? special.status() : source.status()).with_context("--chat");
    ChatRequest request;
    nlohmann::ordered_json content = options.prompt;
    if (!options.images.empty()) {  // the images first, then the text: one image pad each, expanded later
      content = nlohmann::ordered_json::array();
      for (const std::string& image : options.images)
        content.push_back({{"type", "image_url"}, {"image_url", {{"url", "file://" + image}}}});
      content.push_back({{"type", "text"}, {"text", options.prompt}});
    }
    request.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", content}}});
    auto rendered = apply_chat_template(*source, *special, request);
    if (!rendered.ok()) return rendered.status().with_context("--chat");
    text = std::move(*rendered);
  }
  DS_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer->encode(text));
  if (ids.empty()) return Status::error("--prompt: expected text that encodes to at least one token, found none");
  return ids;
}

int run_generate(GenerateOptions options) {
  options.sampling.seed = options.seed;
  if (!options.stop_ids.empty()) {
    auto stops = parse_int_list(options.stop_ids, "--stop-token-ids");
    if (!stops.ok()) return report_error(stops.status());
    options.sampling.stop_token_ids = *stops;
  }
  const Status valid = validate_sampling(options.sampling);
  if (!valid.ok()) return report_error(valid);
  auto engine_config = engine_options(options.engine);
  if (!engine_config.ok()) return report_error(engine_config.status());
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
  if (tokenizer) use_message_start_token(*engine_config, *tokenizer);
  auto prompt = prompt_ids(options, tokenizer);
  if (!prompt.ok()) return report_error(prompt.status());
  const Status in_vocabulary = check_token_ids(*prompt, options.model_dir, options.prompt.empty() ? "--tokens" : "--prompt");
  if (!in_vocabulary.ok()) return report_error(in_vocabulary);
  auto generation = load_generation_config(options.model_dir);
  if (!generation.ok()) return report_error(generation.status());

  const auto backend = make_backend(options.run);
  auto loaded = load_model(options.model_dir, *backend, compute_mode(options.run),
                           weights_choice(options.run), thread_count(options.run));
  if (!loaded.ok()) return report_error(loaded.status());
  engine_config->eos_token_ids = stop_token_ids(loaded->config.text, *generation);
  auto kv_dtype = kv_cache_dtype(options.engine, *loaded->model);
  if (!kv_dtype.ok()) return report_error(kv_dtype.status());
  if (Status identified = identify_model(*engine_config, options.model_dir, *loaded, *backend); !identified.ok())
    return report_error(identified);
  Qwen35StepModel step_model(*loaded->model, *kv_dtype, engine_config->speculative_tokens > 0);
  auto drafter = speculative_drafter(*engine_config, step_model, options.engine);  // outlives the engine
  if (!drafter.ok()) return report_error(drafter.status());
  std::unique_ptr<VisionModel> vision;
  std::vector<PromptImage> images;
  if (!options.images.empty()) {
    std::string refusal;
    vision = load_vision_if_present(*loaded, options.model_dir, thread_count(options.run), refusal);
    if (!vision) return report_error(Status::errorf("--image: this model takes text only (", refusal, ")"));
    for (const std::string& path : options.images) {
      auto image = load_image_file(path, *vision);
      if (!image.ok()) return report_error(image.status());
      images.push_back(std::move(*image));
    }
    auto expanded = expand_image_pads(*prompt, vision->image_token_id, images, vision->merge_size());
    if (!expanded.ok()) return report_error(expanded.status().with_context("--image"));
    *prompt = std::move(*expanded);
    step_model.attach_vision(*vision);
  }
  auto engine = Engine::start(step_model, *engine_config);
  if (!engine.ok()) return report_error(engine.status());
  log_engine_limits(**engine, *engine_config);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto stream = (*engine)->submit(*prompt, options.sampling, std::move(images));
  if (!stream.ok()) return report_error(stream.status());
  std::vector<int32_t> generated;
  std::optional<StreamDecoder> text;
  if (tokenizer && !options.ids) text.emplace(*tokenizer);
  std::optional<Clock::time_point> first_token;
  FinishReason reason = FinishReason::error;
  std::string error;
  while (auto event = (*stream)->next()) {
    if (!first_token && !event->tokens.empty()) first_token = Clock::now();
    for (const SampledToken& t : event->tokens) {
      generated.push_back(t.token);
      if (text) {
        const std::string piece = text->push(t.token);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
      }
    }
    std::fflush(stdout);
    if (event->finish) {
      reason = *event->finish;
      error = event->error;
    }
  }
  if (text) {
    const std::string rest = text->finish();
    std::printf("%s\n", rest.c_str());
  } else {
    std::printf("%s\n", join_ints(generated).c_str());
  }
  if (reason == FinishReason::error) return report_error(Status::error(error));
  const auto done = Clock::now();
  const double ttft = std::chrono::duration<double>(first_token.value_or(done) - start).count();
  const double decode_s = std::chrono::duration<double>(done - first_token.value_or(done)).count();
  log::info("generate: prompt ", prompt->size(), " tokens in ", ttft, " s (", prompt->size() / std::max(ttft, 1e-9),
            " tok/s); ", generated.size(), " new tokens (finish: ", finish_reason_name(reason), "), decode ",
            static_cast<double>(generated.size() > 1 ? generated.size() - 1 : 0) / std::max(decode_s, 1e-9), " tok/s");
  if (engine_config->speculative_tokens > 0) {
    const EngineCounters c = (*engine)->counters();
    log::info("generate: speculative decoding: ", c.spec_drafts, " verify rounds, ", c.spec_accepted_tokens, " of ",
              c.spec_draft_tokens, " drafts accepted, ", c.steps, " engine steps");
  }
  return 0;
}

}  // namespace

CommandRunner add_generate_command(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  SamplingParams& s = options->sampling;
  s.max_tokens = 32;
  CLI::App* command = app.add_subcommand("generate", "Generate a continuation of a prompt (one request through the engine)");
  add_model_option(command, options->model_dir, "Checkpoint directory, or a GGUF file (FILE.gguf, or any part of a split set)")->required();
  auto* tokens = command->add_option("--tokens", options->tokens, "Prompt as token ids, comma-separated");
  auto* prompt = command->add_option("--prompt", options->prompt, "Prompt text, encoded with the checkpoint's tokenizer (no chat template)");
  tokens->excludes(prompt);
  command->add_flag("--chat", options->chat, "Render --prompt as one user message with the checkpoint's chat template (generation prompt added)")
      ->needs(prompt);
  command->add_option("--image", options->images,
                      "An image file (PNG, JPEG, WebP, GIF), repeatable, in prompt order. With --chat the images come "
                      "before the text in the user message; otherwise the prompt holds one <|image_pad|> per image "
                      "(each expanded to the image's tokens)")
      ->check(CLI::ExistingFile);
  command->add_option("--max-tokens", s.max_tokens, "New tokens to generate")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command->add_option("--temperature", s.temperature, "0 = greedy")->capture_default_str();
  command->add_option("--top-p", s.top_p, "Nucleus sampling mass (1 = off)")->capture_default_str();
  command->add_option("--top-k", s.top_k, "Keep the k most likely tokens (0 = off)")->capture_default_str();
  command->add_option("--min-p", s.min_p, "Keep tokens with p >= min_p * p_max (0 = off)")->capture_default_str();
  command->add_option("--presence-penalty", s.presence_penalty, "Subtract once from generated tokens' logits")->capture_default_str();
  command->add_option("--frequency-penalty", s.frequency_penalty, "Subtract per occurrence in the generated tokens")->capture_default_str();
  command->add_option("--repetition-penalty", s.repetition_penalty, "Divide (or multiply, if negative) logits of seen tokens")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Sampling seed (default: drawn by the engine)");
  command->add_option("--stop-token-ids", options->stop_ids, "Extra stop token ids, comma-separated");
  command->add_flag("--ids", options->ids, "Print the generated ids on one line, comma-separated");
  command->add_flag("--ignore-eos", s.ignore_eos, "Do not stop at the model's end-of-sequence tokens");
  command->callback([tokens, prompt] {
    if (tokens->count() == 0 && prompt->count() == 0) throw CLI::ValidationError("one of --tokens or --prompt is required");
  });
  add_run_options(command, options->run);
  add_engine_options(command, options->engine);
  return [options] { return run_generate(*options); };
}

}  // namespace ds::app
