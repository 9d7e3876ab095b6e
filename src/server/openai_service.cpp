// OpenAiService: request → prompt ids → engine submissions → Generation.
#include "server/openai_service.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "output/reasoning_parser.h"
#include "server/stop_string_condition.h"
#include "server/tokenize_request.h"
#include "tokenizer/chat_template.h"
#include "util/str_cat.h"

namespace ds::server {
namespace {

int64_t unix_now() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

OpenAiService::OpenAiService(Engine& engine, ServedModel model, ServerMetrics& metrics)
    : engine_(engine), model_(std::move(model)), metrics_(metrics), created_(unix_now()) {}

std::string OpenAiService::models() const {
  Json card{{"id", model_.name}, {"object", "model"}, {"created", created_}, {"owned_by", "deltaserve"},
            {"max_model_len", engine_.limits().max_model_len}};
  return Json{{"object", "list"}, {"data", Json::array({card})}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<ApiError> OpenAiService::check_model(const GenerationRequest& g) const {
  if (!g.model.empty() && g.model != model_.name)
    return ApiError{404, str_cat("model: the model \"", g.model, "\" does not exist; this server serves \"", model_.name, "\""), "model",
                    "model_not_found"};
  return std::nullopt;
}

std::variant<OpenAiService::Prompt, ApiError> OpenAiService::chat_prompt(const ChatCompletionRequest& r) const {
  if (model_.chat_template.empty())
    return bad_request("this model has no chat template (chat_template.jinja or tokenizer_config.json); use /v1/completions");
  ChatRequest chat;
  chat.messages = r.messages;
  chat.tools = r.tools;
  chat.template_kwargs = model_.default_template_kwargs;
  for (const auto& [key, value] : r.template_kwargs.items()) chat.template_kwargs[key] = value;
  chat.add_generation_prompt = r.add_generation_prompt;
  auto rendered = apply_chat_template(model_.chat_template, model_.special_tokens, chat);
  if (!rendered.ok()) return bad_request(str_cat("messages: the chat template failed: ", rendered.status().message()), "messages");
  Prompt prompt{std::move(*rendered), {}, {}};
  if (r.continue_final_message) {  // HF: cut the rendering right after the final message's text
    const Json& last = r.messages.back();
    if (!last.contains("content") || !last["content"].is_string())
      return bad_request("continue_final_message: the final message needs string content", "continue_final_message");
    const std::string content = last["content"].get<std::string>();
    const size_t at = prompt.text.rfind(content);
    if (at == std::string::npos) return bad_request("continue_final_message: the template dropped the final message", "continue_final_message");
    prompt.text.resize(at + content.size());
  }
  auto ids = model_.tokenizer->encode(prompt.text);
  if (!ids.ok()) return bad_request(str_cat("messages: ", ids.status().message()), "messages");
  prompt.ids = std::move(*ids);
  auto images = load_chat_images(r.messages, model_.media, model_.vision, model_.vision_refusal);
  if (auto* error = std::get_if<ApiError>(&images)) return *error;
  prompt.images = std::move(std::get<std::vector<PromptImage>>(images));
  if (!prompt.images.empty()) {
    auto expanded = expand_image_pads(prompt.ids, model_.vision->image_token_id, prompt.images, model_.vision->merge_size());
    if (!expanded.ok()) return bad_request(str_cat("messages: ", expanded.status().message()), "messages");
    prompt.ids = std::move(*expanded);
  }
  return prompt;
}

std::variant<OpenAiService::Prompt, ApiError> OpenAiService::completion_prompt(const CompletionRequest& r) const {
  Prompt prompt;
  if (const auto* text = std::get_if<std::string>(&r.prompt)) {
    auto ids = model_.tokenizer->encode(*text);
    if (!ids.ok()) return bad_request(str_cat("prompt: ", ids.status().message()), "prompt");
    prompt.text = *text;
    prompt.ids = std::move(*ids);
  } else {
    prompt.ids = std::get<std::vector<int32_t>>(r.prompt);
  }
  if (prompt.ids.empty()) return bad_request("prompt: expected text that encodes to at least one token, found none", "prompt");
  return prompt;
}

std::variant<std::unique_ptr<Generation>, ApiError> OpenAiService::start(GenerationRequest& g, const Prompt& prompt,
                                                                         bool chat, ChoiceSettings settings,
                                                                         const char* prompt_field) {
  const auto arrival = std::chrono::steady_clock::now();
  const int64_t limit = engine_.limits().max_model_len;
  const auto prompt_len = static_cast<int64_t>(prompt.ids.size());
  if (prompt_len >= limit || (g.max_tokens && prompt_len + *g.max_tokens > limit)) {
    const std::string requested = g.max_tokens ? str_cat(prompt_len + *g.max_tokens, " tokens (", prompt_len, " in the ",
                                                         prompt_field, ", ", *g.max_tokens, " for the completion)")
                                               : str_cat(prompt_len, " tokens in the ", prompt_field);
    return bad_request(str_cat("this model's maximum context length is ", limit, " tokens; the request needs ", requested,
                               ". Shorten the ", prompt_field, " or lower max_tokens"),
                       g.max_tokens && prompt_len < limit ? "max_tokens" : prompt_field);
  }
  // A request without max_tokens gets the server's cap, never more than the context has left.
  const int64_t room = limit - prompt_len;
  g.sampling.max_tokens = g.max_tokens.value_or(model_.default_max_tokens > 0 ? std::min(model_.default_max_tokens, room) : room);
  settings.stop = g.stop;
  settings.skip_special_tokens = g.skip_special_tokens;
  settings.logprobs = g.sampling.logprobs >= 0;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int64_t i = 0; i < g.n; ++i) {
    SamplingParams params = g.sampling;
    if (params.seed) params.seed = *params.seed + static_cast<uint64_t>(i);  // n choices, n different draws
    if (!settings.stop.empty())
      params.stop_condition = std::make_shared<StopStringCondition>(*model_.tokenizer, settings.stop, settings.skip_special_tokens);
    auto stream = engine_.submit(prompt.ids, params, prompt.images);
    if (!stream.ok()) {
      for (auto& s : streams) s->cancel();
      // The engine validated the prompt against the vocabulary and the context limit: bad input
      // there is the prompt's fault; overload and shutdown name no field.
      const Status& error = stream.status();
      if (error.kind() == ErrorKind::overloaded) return api_error(error.with_context("the server is busy (retry later)"));
      return api_error(error, error.kind() == ErrorKind::invalid_argument ? prompt_field : "");
    }
    streams.push_back(std::move(*stream));
  }
  GenerationPlan plan;
  plan.who = ResponseIdentity{str_cat(chat ? "chatcmpl-" : "cmpl-", unix_now(), "-", next_id_.fetch_add(1)),
                              unix_now(), model_.name, chat};
  plan.prompt_tokens = prompt_len;
  plan.stream = g.stream;
  plan.include_usage = g.stream && g.include_usage;
  plan.chat = chat;
  plan.choice = std::move(settings);
  plan.arrival = arrival;
  return std::make_unique<Generation>(std::move(plan), std::move(streams), *model_.tokenizer, metrics_);
}

std::variant<OpenAiService::Prompt, ApiError> OpenAiService::prepare_chat(const std::string& body,
                                                                        ChatCompletionRequest& request) const {
  if (auto error = parse_chat_request(body, model_.defaults, request)) return *error;
  if (auto error = check_model(request.generation)) return *error;
  return chat_prompt(request);
}

std::variant<OpenAiService::Prompt, ApiError> OpenAiService::prepare_completion(const std::string& body,
                                                                              CompletionRequest& request) const {
  if (auto error = parse_completion_request(body, model_.defaults, request)) return *error;
  if (auto error = check_model(request.generation)) return *error;
  return completion_prompt(request);
}

std::variant<std::unique_ptr<Generation>, ApiError> OpenAiService::chat(const std::string& body) {
  ChatCompletionRequest request;
  auto prompt = prepare_chat(body, request);
  if (auto* error = std::get_if<ApiError>(&prompt)) return *error;
  const Prompt& p = std::get<Prompt>(prompt);
  ChoiceSettings settings;
  settings.reasoning = true;
  settings.starts_in_reasoning = prompt_ends_in_open_think(p.text);
  settings.parse_tool_calls = request.parse_tool_calls;
  settings.tools = request.tools;
  return start(request.generation, p, true, std::move(settings), "messages");
}

std::variant<std::unique_ptr<Generation>, ApiError> OpenAiService::completion(const std::string& body) {
  CompletionRequest request;
  auto prompt = prepare_completion(body, request);
  if (auto* error = std::get_if<ApiError>(&prompt)) return *error;
  return start(request.generation, std::get<Prompt>(prompt), false, ChoiceSettings{}, "prompt");
}

// {"prompt": text, "token_ids": [...]}, or the request's error.
std::variant<std::string, ApiError> OpenAiService::render(const std::variant<Prompt, ApiError>& prompt) {
  if (const auto* error = std::get_if<ApiError>(&prompt)) return *error;
  const Prompt& p = std::get<Prompt>(prompt);
  return Json{{"prompt", p.text}, {"token_ids", p.ids}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::variant<std::string, ApiError> OpenAiService::render_chat(const std::string& body) {
  ChatCompletionRequest request;
  return render(prepare_chat(body, request));
}

std::variant<std::string, ApiError> OpenAiService::render_completion(const std::string& body) {
  CompletionRequest request;
  return render(prepare_completion(body, request));
}

}  // namespace ds::server

namespace ds::server {

std::variant<std::string, ApiError> OpenAiService::tokenize(const std::string& body) {
  auto kind = tokenize_request_kind(body);
  if (auto* error = std::get_if<ApiError>(&kind)) return *error;
  std::variant<Prompt, ApiError> prompt;
  if (std::get<TokenizeKind>(kind) == TokenizeKind::chat) {
    ChatCompletionRequest request;
    prompt = prepare_chat(body, request);
  } else {
    CompletionRequest request;
    prompt = prepare_completion(body, request);
    if (auto* p = std::get_if<Prompt>(&prompt); p && p->text.empty())
      return bad_request("prompt: expected text to tokenize, found a list of token ids", "prompt");
  }
  if (auto* error = std::get_if<ApiError>(&prompt)) return *error;
  const std::vector<int32_t>& ids = std::get<Prompt>(prompt).ids;
  return Json{{"count", ids.size()}, {"max_model_len", engine_.limits().max_model_len}, {"tokens", ids}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

std::variant<std::string, ApiError> OpenAiService::detokenize(const std::string& body) {
  DetokenizeRequest request;
  if (auto error = parse_detokenize_request(body, model_.tokenizer->id_limit(), request)) return *error;
  GenerationRequest named;
  named.model = request.model;
  if (auto error = check_model(named)) return *error;
  return Json{{"prompt", model_.tokenizer->decode(request.tokens)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ds::server
