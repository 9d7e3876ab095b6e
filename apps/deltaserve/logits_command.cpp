// `deltaserve logits --model DIR (--tokens 1,2,3 | --messages FILE.json [--template-kwargs JSON])
// [--chunks 5,3,1] --out FILE.npy`: float32 logits [n_tokens, vocab] at every position, the tokens fed
// in the given chunk sizes (a chunk of 1 after the first call takes the decode path). --messages
// renders a chat (image parts as data: URLs, file:// URLs or local paths) with the generation prompt,
// each image expanded to its tokens, its merger rows at them and mRoPE positions: any HF-made case
// can be checked from the command line. A stable contract other tooling depends on.
#include <fstream>
#include <numeric>
#include <sstream>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "engine/request_images.h"
#include "image_prompt.h"
#include "run_options.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "server/openai_request.h"
#include "token_list.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"
#include "util/npy.h"
#include "vision_options.h"

namespace ds::app {
namespace {

struct LogitsOptions {
  std::string model_dir, tokens, messages_file, template_kwargs, chunks, out;
  RunOptions run;
};

// The chat of --messages (a list of messages, or an object with "messages"), checked as the server
// checks a request, local image paths made file:// URLs.
Result<nlohmann::ordered_json> read_messages(const LogitsOptions& options) {
  std::ifstream in(options.messages_file, std::ios::binary);
  if (!in) return Status::errorf("--messages: cannot read ", options.messages_file);
  std::ostringstream text;
  text << in.rdbuf();
  auto json = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (json.is_discarded()) return Status::errorf("--messages: ", options.messages_file, ": expected JSON, found a syntax error");
  nlohmann::ordered_json body = json.is_array() ? nlohmann::ordered_json{{"messages", json}} : json;
  if (!body.is_object() || !body.contains("messages"))
    return Status::errorf("--messages: expected a list of messages or {\"messages\": [...]}, found ", body.type_name());
  local_paths_as_file_urls(body["messages"]);
  server::ChatCompletionRequest request;
  if (auto error = server::parse_chat_request(nlohmann::ordered_json{{"messages", body["messages"]}}.dump(), {}, request))
    return Status::errorf("--messages: ", error->message);
  return request.messages;
}

// The rendered chat's token ids (image pads not yet expanded).
Result<std::vector<int32_t>> chat_ids(const LogitsOptions& options, const nlohmann::ordered_json& messages) {
  DS_ASSIGN_OR_RETURN(std::string source, load_chat_template(options.model_dir));
  DS_ASSIGN_OR_RETURN(nlohmann::ordered_json special, load_special_tokens(options.model_dir));
  ChatRequest chat;
  chat.messages = messages;
  if (!options.template_kwargs.empty()) {
    chat.template_kwargs = nlohmann::ordered_json::parse(options.template_kwargs, nullptr, false);
    if (chat.template_kwargs.is_discarded() || !chat.template_kwargs.is_object())
      return Status::errorf("--template-kwargs: expected a JSON object, found '", options.template_kwargs, "'");
  }
  DS_ASSIGN_OR_RETURN(std::string text, apply_chat_template(source, special, chat));
  DS_ASSIGN_OR_RETURN(Tokenizer tokenizer, Tokenizer::load_dir(options.model_dir));
  return tokenizer.encode(text);
}

int run_logits(const LogitsOptions& options) {
  std::vector<int32_t> tokens;
  nlohmann::ordered_json messages;
  if (!options.messages_file.empty()) {
    auto read = read_messages(options);
    if (!read.ok()) return report_error(read.status());
    messages = std::move(*read);
    auto ids = chat_ids(options, messages);
    if (!ids.ok()) return report_error(ids.status().with_context("--messages"));
    tokens = std::move(*ids);
  } else {
    auto ids = parse_int_list(options.tokens, "--tokens");
    if (!ids.ok()) return report_error(ids.status());
    tokens = std::move(*ids);
    // Before the weights load: a bad id fails at once.
    if (Status valid = check_token_ids(tokens, options.model_dir, "--tokens"); !valid.ok()) return report_error(valid);
  }
  const auto backend = make_backend(options.run);
  auto loaded = load_model(options.model_dir, *backend, compute_mode(options.run),
                           weights_choice(options.run), thread_count(options.run));
  if (!loaded.ok()) return report_error(loaded.status());
  // Images: the tower over each, the pads expanded, positions and rows laid out as the engine does.
  RequestImages images;
  if (server::count_image_parts(messages) > 0) {
    std::string refusal;
    const std::unique_ptr<VisionModel> vision = load_vision_if_present(*loaded, options.model_dir, thread_count(options.run), refusal);
    auto prompt_images = load_message_images(messages, vision.get(), refusal);
    if (!prompt_images.ok()) return report_error(prompt_images.status().with_context("--messages"));
    auto expanded = expand_image_pads(tokens, vision->image_token_id, *prompt_images, vision->merge_size());
    if (!expanded.ok()) return report_error(expanded.status().with_context("--messages"));
    tokens = std::move(*expanded);
    auto planned = plan_request_images(tokens, std::move(*prompt_images), vision->image_token_id, vision->merge_size());
    if (!planned.ok()) return report_error(planned.status().with_context("--messages"));
    images = std::move(*planned);
    for (size_t j = 0; j < images.images.size(); ++j) {
      const PromptImage& image = images.images[j];
      auto out = vision->tower->forward(*backend, *image.pixel_values, std::span(&image.grid, 1),
                                        loaded->model->mode() == ComputeMode::fast);
      if (!out.ok()) return report_error(out.status().with_context("the vision tower"));
      images.rows[j] = std::make_shared<const std::vector<float>>(std::move(out->merged));
    }
  }
  std::vector<int32_t> chunks{static_cast<int32_t>(tokens.size())};
  if (!options.chunks.empty()) {
    auto parsed = parse_int_list(options.chunks, "--chunks");
    if (!parsed.ok()) return report_error(parsed.status());
    chunks = *parsed;
    const int64_t sum = std::accumulate(chunks.begin(), chunks.end(), int64_t{0});
    if (sum != static_cast<int64_t>(tokens.size()) || std::find(chunks.begin(), chunks.end(), 0) != chunks.end())
      return report_error(Status::errorf("--chunks: sizes must be positive and sum to the ", tokens.size(),
                                         " tokens, found a sum of ", sum));
  }
  if (!options.messages_file.empty()) {
    if (Status valid = check_token_ids(tokens, options.model_dir, "--messages"); !valid.ok()) return report_error(valid);
  }
  const int64_t vocab = loaded->config.text.vocab_size;
  const int32_t largest = *std::max_element(chunks.begin(), chunks.end());
  SequenceRunner runner(*loaded->model, static_cast<int64_t>(tokens.size()), largest);
  std::vector<float> all(tokens.size() * static_cast<size_t>(vocab)), logits;
  size_t offset = 0;
  for (int32_t chunk : chunks) {
    const auto piece = std::span(tokens).subspan(offset, static_cast<size_t>(chunk));
    Status status;
    if (images.empty()) {
      status = runner.feed(piece, LogitsRows::all, logits);
    } else {
      SequenceInput input;
      images.fill(input, static_cast<int64_t>(offset), chunk, static_cast<int64_t>(tokens.size()));
      status = runner.feed(piece, input.positions, input.embedding_at, input.embedding_rows, LogitsRows::all, logits);
    }
    if (!status.ok()) return report_error(status);
    std::copy(logits.begin(), logits.end(), all.begin() + static_cast<int64_t>(offset) * vocab);
    offset += static_cast<size_t>(chunk);
  }
  const Status written = write_npy_f32(options.out, {static_cast<int64_t>(tokens.size()), vocab}, all.data());
  if (!written.ok()) return report_error(written);
  log::info("logits: wrote ", options.out, " [", tokens.size(), ", ", vocab, "]",
            images.empty() ? "" : str_cat(" (", images.images.size(), " image(s), rope_delta ", images.rope_delta, ")"));
  return 0;
}

}  // namespace

CommandRunner add_logits_command(CLI::App& app) {
  auto options = std::make_shared<LogitsOptions>();
  CLI::App* command = app.add_subcommand("logits", "Write the logits at every position of a token sequence or a rendered chat to a .npy file");
  add_model_option(command, options->model_dir, "Checkpoint directory, or a GGUF file (FILE.gguf, or any part of a split set)")->required();
  auto* tokens = command->add_option("--tokens", options->tokens, "Token ids, comma-separated");
  auto* messages = command->add_option(
      "--messages", options->messages_file,
      "JSON file: a chat (a list of messages, or {\"messages\": [...]}), rendered with the checkpoint's chat template and "
      "the generation prompt; image_url parts may be data: URLs, file:// URLs or local paths");
  tokens->excludes(messages);
  command->add_option("--template-kwargs", options->template_kwargs, "With --messages: JSON object of extra template variables")
      ->needs(messages);
  command->add_option("--chunks", options->chunks, "Feed the tokens in calls of these sizes (default: one call)");
  command->add_option("--out", options->out, "Output .npy file: float32 [n_tokens, vocab_size]")->required();
  command->callback([tokens, messages] {
    if (tokens->count() == 0 && messages->count() == 0) throw CLI::ValidationError("one of --tokens or --messages is required");
  });
  add_run_options(command, options->run);
  return [options] { return run_logits(*options); };
}

}  // namespace ds::app
