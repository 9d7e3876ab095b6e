// parse_int_list / join_ints / check_token_ids.
#include "token_list.h"

#include <charconv>

#include "io/model_config.h"
#include "model/model_loader.h"

namespace ds::app {

Result<std::vector<int32_t>> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int32_t> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    int32_t value = 0;
    const auto [ptr, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || ptr != item.data() + item.size() || value < 0)
      return Status::errorf(option, ": item ", values.size() + 1, " \"", item, "\" is not a non-negative integer");
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

std::string join_ints(const std::vector<int32_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  return text;
}

Status check_token_ids(std::span<const int32_t> ids, const std::string& model_dir, const std::string& option) {
  DS_ASSIGN_OR_RETURN(const ModelConfig config, load_checkpoint_config(model_dir));
  const int64_t vocab = config.text.vocab_size;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      return Status::errorf(option, ": item ", i + 1, ": token id ", ids[i], " is outside the vocabulary [0, ", vocab,
                            ") of ", is_gguf_path(model_dir) ? model_dir : model_dir + "/config.json");
  return {};
}

}  // namespace ds::app
