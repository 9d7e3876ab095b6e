// libFuzzer target: parse, check and RENDER a Jinja chat template with a small fixed context (messages
// with reasoning, tool calls and a content list; tools; flags) under tight budgets. Any bytes must end in
// output or a Status with a message: no crash, hang, unbounded recursion or memory growth.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/parser.h"
#include "tokenizer/jinja/render.h"

namespace {

const ds::jinja::Dict& context() {
  static const ds::jinja::Dict globals = [] {
    const auto json = nlohmann::ordered_json::parse(R"({
      "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is this? é😊"}]},
        {"role": "assistant", "content": "<think>\nhm\n</think>\n\nA cat.", "reasoning_content": "hm",
         "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, null, 2.5], "c": "s"}}}]},
        {"role": "tool", "content": "{\"ok\": 1}"},
        {"role": "user", "content": "thanks"}],
      "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}],
      "add_generation_prompt": true, "enable_thinking": false, "eos_token": "<|im_end|>", "n": 3, "x": 0.1})");
    ds::jinja::Dict d;
    for (const auto& [k, v] : json.items()) d.emplace_back(k, ds::jinja::Value::from_json(v));
    return d;
  }();
  return globals;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = ds::jinja::parse_template(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!program.ok()) {
    if (program.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (!ds::jinja::check_template(*program).ok()) return 0;
  ds::jinja::RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_steps = 200'000;
  limits.max_call_depth = 40;
  auto out = ds::jinja::render_template(*program, context(), limits, [](const std::string& f) { return f; });
  if (!out.ok() && out.status().message().empty()) __builtin_trap();
  if (out.ok() && out->size() > limits.max_output_bytes) __builtin_trap();
  return 0;
}
