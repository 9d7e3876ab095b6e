// Chat templates as transformers 5.24.0's apply_chat_template(tokenize=False) renders them: the template
// from a checkpoint (chat_template.jinja, else tokenizer_config.json's chat_template), HF's variables
// (messages with reasoning fields aliased, tools, documents=None, add_generation_prompt, the named special
// tokens of tokenizer_config.json, then the caller's template kwargs) and the Jinja interpreter.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/render.h"
#include "util/status.h"

namespace ds {

struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // list of objects
  nlohmann::ordered_json tools;                                          // null: no tools (HF passes None)
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
};

// chat_template.jinja of DIR, else tokenizer_config.json's "chat_template" (a string, or HF's list of
// {name, template} where "default" is used). Error when neither exists. A .gguf path: the file's
// tokenizer.chat_template (gguf_tokenizer.h); the same for the special tokens below.
Result<std::string> load_chat_template(const std::string& model_dir);

// The named special tokens HF passes to templates (bos_token, eos_token, unk_token, sep_token, pad_token,
// cls_token, mask_token) from DIR/tokenizer_config.json (strings or {"content": ...}); empty when absent.
Result<nlohmann::ordered_json> load_special_tokens(const std::string& model_dir);

// Checks the shapes HF checks (messages: a list of objects; tools: a list of objects; kwargs: an object
// that does not redefine messages / tools / documents / add_generation_prompt) and renders.
Result<std::string> apply_chat_template(const std::string& template_source, const nlohmann::ordered_json& special_tokens,
                                        const ChatRequest& request, const jinja::RenderLimits& limits = {});

}  // namespace ds
