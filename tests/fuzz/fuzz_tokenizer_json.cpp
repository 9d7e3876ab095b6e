// libFuzzer target: tokenizer.json (a file a user points `--tokenizer` or a checkpoint at), then, for
// an accepted one, encoding and decoding a text cut from the same input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.h"
#include "util/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ds::log::set_level(ds::log::Level::quiet);  // the pipeline's notes, once per input, would be most of a run
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The part after the last NUL byte, if any, is the text to encode.
  const size_t cut = input.rfind('\0');
  const std::string_view json = cut == std::string_view::npos ? input : input.substr(0, cut);
  const std::string text(cut == std::string_view::npos ? std::string_view("ab c<x>abc") : input.substr(cut + 1));
  for (const ds::TokenizerPipeline pipeline : {ds::TokenizerPipeline::as_written, ds::TokenizerPipeline::qwen35}) {
    auto tokenizer = ds::Tokenizer::from_json(json, "fuzz/tokenizer.json", pipeline);
    if (!tokenizer.ok()) continue;
    const auto ids = tokenizer->encode(text);
    if (!ids.ok()) continue;
    for (const int32_t id : *ids)
      if (id < 0) __builtin_trap();
    (void)tokenizer->decode(*ids);
  }
  return 0;
}
