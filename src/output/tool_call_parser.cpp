// ToolCallParser (see tool_call_parser.h): buffers <tool_call> blocks and types their arguments, after
// vLLM's Qwen3CoderToolParser (vllm/tool_parsers/qwen3coder_tool_parser.py).
#include "output/tool_call_parser.h"

#include <algorithm>
#include <optional>
#include <random>

#include "output/tag_scan.h"
#include "output/tool_call_block.h"

namespace ds {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

uint64_t random_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

ToolCallParser::ToolCallParser(const nlohmann::json& tools) : ToolCallParser(tools, random_seed()) {}

ToolCallParser::ToolCallParser(const nlohmann::json& tools, uint64_t id_seed)
    : schemas_(tools), id_rng_(id_seed) {}

std::string ToolCallParser::next_id() {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlphabet[id_rng_.next() % kAlphabet.size()];
  return id;
}

void ToolCallParser::complete_block(std::string_view body, Delta& out) {
  std::string raw;
  raw.reserve(kOpen.size() + body.size() + kClose.size());
  raw.append(kOpen).append(body).append(kClose);
  const std::optional<ToolCallBlock> block = parse_tool_call_block(body);
  if (!block) {
    out.content += raw;
    return;
  }
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
  for (const auto& [key, value] : block->parameters) {
    arguments[key] = typed_parameter_value(value, schemas_.parameter(block->name, key));
  }
  ToolCall call;
  call.index = next_index_++;
  call.id = next_id();
  call.name = block->name;
  // Invalid UTF-8 in a value becomes U+FFFD instead of an exception.
  call.arguments = arguments.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  call.raw = std::move(raw);
  out.calls.push_back(std::move(call));
}

ToolCallParser::Delta ToolCallParser::push(std::string_view piece) {
  Delta out;
  held_.append(piece);
  const std::string_view text = held_;
  size_t pos = 0;  // first byte of held_ not yet consumed
  const std::string_view open_tag[] = {kOpen};
  for (;;) {
    if (!inside_) {
      const TagHit hit = find_first_tag(text, pos, open_tag);
      if (hit.pos == std::string_view::npos) {
        const std::string_view rest = text.substr(pos);
        const size_t hold = partial_tag_overlap(rest, kOpen);
        out.content.append(rest.substr(0, rest.size() - hold));
        pos = text.size() - hold;
        break;
      }
      out.content.append(text.substr(pos, hit.pos - pos));
      pos = hit.pos + kOpen.size();
      inside_ = true;
      scan_ = pos;
    } else {
      const size_t close = text.find(kClose, scan_);
      if (close == std::string_view::npos) {
        // Resume where a "</tool_call>" could still begin, so a long block is scanned once.
        scan_ = std::max(pos, text.size() - std::min(text.size(), kClose.size() - 1));
        break;
      }
      complete_block(text.substr(pos, close - pos), out);
      pos = close + kClose.size();
      inside_ = false;
    }
  }
  held_.erase(0, pos);
  if (inside_) scan_ -= pos;
  return out;
}

ToolCallParser::Delta ToolCallParser::finish() {
  Delta out;
  if (inside_) out.content.append(kOpen);
  out.content += held_;
  held_.clear();
  inside_ = false;
  scan_ = 0;
  return out;
}

}  // namespace ds
