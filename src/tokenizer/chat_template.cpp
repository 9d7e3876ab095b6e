// apply_chat_template(tokenize=False) of transformers 5.24.0: render_jinja_template with
// template_kwargs = {**special_tokens_map, **kwargs} and _alias_reasoning_fields on every message.
#include "tokenizer/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/gguf_tokenizer.h"
#include "tokenizer/jinja/parser.h"

namespace ds {
namespace {

Result<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<nlohmann::ordered_json> read_json(const std::filesystem::path& path) {
  DS_ASSIGN_OR_RETURN(std::string text, read_text(path));
  auto json = nlohmann::ordered_json::parse(text, nullptr, false);
  if (json.is_discarded()) return Status::errorf(path.string(), ": expected JSON, found a syntax error");
  return json;
}

// transformers' _alias_reasoning_fields: {"thinking": r, **message, "reasoning_content": r} where r is the
// first non-null of reasoning_content, thinking, reasoning.
nlohmann::ordered_json alias_reasoning(const nlohmann::ordered_json& message) {
  const nlohmann::ordered_json* reasoning = nullptr;
  for (const char* key : {"reasoning_content", "thinking", "reasoning"}) {
    auto it = message.find(key);
    if (it != message.end() && !it->is_null()) {
      reasoning = &*it;
      break;
    }
  }
  if (!reasoning) return message;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["thinking"] = *reasoning;
  for (const auto& [k, v] : message.items()) out[k] = v;
  out["reasoning_content"] = *reasoning;
  return out;
}

}  // namespace

Result<std::string> load_chat_template(const std::string& model_dir) {
  if (model_dir.ends_with(".gguf")) {
    DS_ASSIGN_OR_RETURN(GgufTokenizerFiles files, load_gguf_tokenizer_files(model_dir));
    if (!files.chat_template) return Status::errorf(model_dir, ": expected a tokenizer.chat_template in the metadata, found none");
    return std::move(*files.chat_template);
  }
  const std::filesystem::path dir(model_dir);
  if (std::filesystem::exists(dir / "chat_template.jinja")) return read_text(dir / "chat_template.jinja");
  const auto config_path = dir / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) {
    DS_ASSIGN_OR_RETURN(auto config, read_json(config_path));
    auto it = config.is_object() ? config.find("chat_template") : config.end();
    if (it != config.end() && it->is_string()) return it->get<std::string>();
    if (it != config.end() && it->is_array()) {
      for (const auto& entry : *it)
        if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") && entry["template"].is_string())
          return entry["template"].get<std::string>();
      return Status::errorf(config_path.string(), ": chat_template: expected a template named \"default\" in the list");
    }
  }
  return Status::errorf(model_dir, ": expected chat_template.jinja or a chat_template in tokenizer_config.json, found neither");
}

Result<nlohmann::ordered_json> load_special_tokens(const std::string& model_dir) {
  if (model_dir.ends_with(".gguf")) {
    DS_ASSIGN_OR_RETURN(GgufTokenizerFiles files, load_gguf_tokenizer_files(model_dir));
    return std::move(files.special_tokens);
  }
  nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
  const auto path = std::filesystem::path(model_dir) / "tokenizer_config.json";
  if (!std::filesystem::exists(path)) return tokens;
  DS_ASSIGN_OR_RETURN(auto config, read_json(path));
  if (!config.is_object()) return Status::errorf(path.string(), ": expected a JSON object");
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    if (it->is_string()) tokens[key] = *it;
    else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) tokens[key] = (*it)["content"];
    else return Status::errorf(path.string(), ": ", key, ": expected a string or {\"content\": string}");
  }
  return tokens;
}

Result<std::string> apply_chat_template(const std::string& template_source, const nlohmann::ordered_json& special_tokens,
                                        const ChatRequest& request, const jinja::RenderLimits& limits) {
  if (!request.messages.is_array()) return Status::errorf("messages: expected a list of message objects, found JSON ", request.messages.type_name());
  if (request.messages.empty())  // transformers checks this before rendering
    return Status::error("Cannot apply chat template to an empty conversation. Provide at least one message.");
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < request.messages.size(); ++i) {
    if (!request.messages[i].is_object())
      return Status::errorf("messages: item ", i + 1, ": expected a message object, found JSON ", request.messages[i].type_name());
    messages.push_back(alias_reasoning(request.messages[i]));
  }
  if (!request.tools.is_null()) {
    if (!request.tools.is_array()) return Status::errorf("tools: expected a list of tool schemas, found JSON ", request.tools.type_name());
    for (size_t i = 0; i < request.tools.size(); ++i)
      if (!request.tools[i].is_object())
        return Status::errorf("tools: item ", i + 1, ": expected a JSON schema object, found JSON ", request.tools[i].type_name());
  }
  if (!request.template_kwargs.is_object())
    return Status::errorf("template kwargs: expected a JSON object, found JSON ", request.template_kwargs.type_name());
  for (const char* reserved : {"messages", "tools", "documents", "add_generation_prompt", "conversation", "chat_template"})
    if (request.template_kwargs.contains(reserved))
      return Status::errorf("template kwargs: '", reserved, "' is set by apply_chat_template itself");

  DS_ASSIGN_OR_RETURN(jinja::Program program, jinja::parse_template(template_source));
  DS_TRY(jinja::check_template(program));
  jinja::Dict globals;
  globals.emplace_back("messages", jinja::Value::from_json(messages));
  globals.emplace_back("tools", jinja::Value::from_json(request.tools));
  globals.emplace_back("documents", jinja::Value::none());
  globals.emplace_back("add_generation_prompt", jinja::Value::boolean(request.add_generation_prompt));
  jinja::Value extra = jinja::Value::dict({});
  for (const auto& [k, v] : special_tokens.items()) extra.set(k, jinja::Value::from_json(v));
  for (const auto& [k, v] : request.template_kwargs.items()) extra.set(k, jinja::Value::from_json(v));
  for (const auto& item : extra.as_dict()) globals.push_back(item);
  return jinja::render_template(program, globals, limits);
}

}  // namespace ds
