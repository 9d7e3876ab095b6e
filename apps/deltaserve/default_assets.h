// Files the binary carries (embedded at build time): the project's own Qwen3.5-layout tokenizer
// and the Qwen3.5 chat template, written into every random checkpoint, and the chat page `serve`
// answers at / (data/ui/chat.html).
#pragma once

#include <string_view>

namespace ds::app {

std::string_view default_tokenizer_json();
std::string_view default_tokenizer_config_json();
std::string_view default_chat_template();
std::string_view chat_page();

}  // namespace ds::app
