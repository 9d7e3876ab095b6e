// Embedded asset accessors (symbols come from cmake/EmbedFile.cmake).
#include "default_assets.h"

extern "C" {
extern const char ds_asset_tokenizer_json[];
extern const char ds_asset_tokenizer_json_end[];
extern const char ds_asset_tokenizer_config_json[];
extern const char ds_asset_tokenizer_config_json_end[];
extern const char ds_asset_chat_template[];
extern const char ds_asset_chat_template_end[];
extern const char ds_asset_chat_page[];
extern const char ds_asset_chat_page_end[];
}

namespace ds::app {

std::string_view default_tokenizer_json() {
  return {ds_asset_tokenizer_json, static_cast<size_t>(ds_asset_tokenizer_json_end - ds_asset_tokenizer_json)};
}
std::string_view default_tokenizer_config_json() {
  return {ds_asset_tokenizer_config_json,
          static_cast<size_t>(ds_asset_tokenizer_config_json_end - ds_asset_tokenizer_config_json)};
}
std::string_view default_chat_template() {
  return {ds_asset_chat_template, static_cast<size_t>(ds_asset_chat_template_end - ds_asset_chat_template)};
}
std::string_view chat_page() { return {ds_asset_chat_page, static_cast<size_t>(ds_asset_chat_page_end - ds_asset_chat_page)}; }

}  // namespace ds::app
