// `deltaserve render-chat (--model DIR | --template FILE.jinja) --messages FILE.json [--tools FILE.json]
// [--template-kwargs JSON] [--no-generation-prompt]`: prints exactly the prompt HF apply_chat_template
// (tokenize=False) renders, with no newline added.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "tokenizer/chat_template.h"

namespace ds::app {
namespace {

struct RenderChatOptions {
  std::string model_dir, template_file, messages_file, tools_file, template_kwargs;
  bool no_generation_prompt = false;
};

Result<nlohmann::ordered_json> read_json_file(const std::string& path, const char* option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf(option, ": cannot read ", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  auto json = nlohmann::ordered_json::parse(ss.str(), nullptr, false);
  if (json.is_discarded()) return Status::errorf(option, ": ", path, ": expected JSON, found a syntax error");
  return json;
}

int run_render_chat(const RenderChatOptions& options) {
  std::string source;
  if (!options.template_file.empty()) {
    std::ifstream in(options.template_file, std::ios::binary);
    if (!in) return report_error(Status::errorf("--template: cannot read ", options.template_file));
    std::ostringstream ss;
    ss << in.rdbuf();
    source = ss.str();
  } else {
    auto loaded = load_chat_template(options.model_dir);
    if (!loaded.ok()) return report_error(loaded.status().with_context("--model"));
    source = std::move(*loaded);
  }
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  if (!options.model_dir.empty()) {
    auto tokens = load_special_tokens(options.model_dir);
    if (!tokens.ok()) return report_error(tokens.status().with_context("--model"));
    special_tokens = std::move(*tokens);
  }
  ChatRequest request;
  auto messages = read_json_file(options.messages_file, "--messages");
  if (!messages.ok()) return report_error(messages.status());
  request.messages = std::move(*messages);
  if (!options.tools_file.empty()) {
    auto tools = read_json_file(options.tools_file, "--tools");
    if (!tools.ok()) return report_error(tools.status());
    request.tools = std::move(*tools);
  }
  if (!options.template_kwargs.empty()) {
    request.template_kwargs = nlohmann::ordered_json::parse(options.template_kwargs, nullptr, false);
    if (request.template_kwargs.is_discarded())
      return report_error(Status::error("--template-kwargs: expected a JSON object, found a syntax error"));
  }
  request.add_generation_prompt = !options.no_generation_prompt;
  auto rendered = apply_chat_template(source, special_tokens, request);
  if (!rendered.ok()) return report_error(rendered.status().with_context("render-chat"));
  std::fwrite(rendered->data(), 1, rendered->size(), stdout);  // exactly the prompt: no newline added
  return 0;
}

}  // namespace

CommandRunner add_render_chat_command(CLI::App& app) {
  auto options = std::make_shared<RenderChatOptions>();
  CLI::App* command = app.add_subcommand("render-chat", "Print the prompt a chat template renders (exactly as HF apply_chat_template)");
  auto* model = add_model_option(command, options->model_dir,
                                 "Checkpoint directory (chat_template.jinja or tokenizer_config.json's chat_template, and its special tokens) or GGUF file (tokenizer.chat_template)");
  auto* file = command->add_option("--template", options->template_file, "A Jinja chat template file instead of the checkpoint's");
  command->add_option("--messages", options->messages_file, "JSON file: the list of messages")->required();
  command->add_option("--tools", options->tools_file, "JSON file: the list of tool schemas");
  command->add_option("--template-kwargs", options->template_kwargs, "JSON object of extra template variables (e.g. {\"enable_thinking\": false})");
  command->add_flag("--no-generation-prompt", options->no_generation_prompt, "Render without add_generation_prompt");
  command->callback([model, file] {
    if (model->count() == 0 && file->count() == 0) throw CLI::ValidationError("one of --model or --template is required");
  });
  return [options] { return run_render_chat(*options); };
}

}  // namespace ds::app
