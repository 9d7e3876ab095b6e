// One Qwen3.5 tool-call block (see tool_call_block.h); the value rules mirror vLLM's
// Qwen3CoderToolParser._parse_xml_function_call (vllm/tool_parsers/qwen3coder_tool_parser.py).
#include "output/tool_call_block.h"

namespace ds {
namespace {

constexpr std::string_view kFunction = "<function=";
constexpr std::string_view kFunctionEnd = "</function>";
constexpr std::string_view kParameter = "<parameter=";
constexpr std::string_view kParameterEnd = "</parameter>";

size_t skip_space(std::string_view text, size_t pos) {
  const size_t next = text.find_first_not_of(" \t\r\n", pos);
  return next == std::string_view::npos ? text.size() : next;
}

// "NAME>" at pos: the name, pos moved past '>'. Empty on a malformed name.
std::string_view read_name(std::string_view text, size_t& pos) {
  const size_t close = text.find_first_of("<>\n", pos);
  if (close == std::string_view::npos || text[close] != '>' || close == pos) return {};
  const std::string_view name = text.substr(pos, close - pos);
  pos = close + 1;
  return name;
}

// Where the value starting at pos ends: the first '<' that opens one of the three terminators.
size_t value_end(std::string_view text, size_t pos) {
  for (size_t lt = text.find('<', pos); lt != std::string_view::npos; lt = text.find('<', lt + 1)) {
    const std::string_view rest = text.substr(lt);
    if (rest.starts_with(kParameterEnd) || rest.starts_with(kParameter) || rest.starts_with(kFunctionEnd)) return lt;
  }
  return text.size();
}

}  // namespace

std::optional<ToolCallBlock> parse_tool_call_block(std::string_view body) {
  size_t pos = skip_space(body, 0);
  if (!body.substr(pos).starts_with(kFunction)) return std::nullopt;
  pos += kFunction.size();
  const std::string_view name = read_name(body, pos);
  if (name.empty()) return std::nullopt;
  ToolCallBlock block;
  block.name = std::string(name);
  for (;;) {
    pos = skip_space(body, pos);
    const std::string_view rest = body.substr(pos);
    if (rest.empty()) return block;  // "</function>" missing: tolerated
    if (rest.starts_with(kFunctionEnd)) {
      return skip_space(body, pos + kFunctionEnd.size()) == body.size() ? std::optional(std::move(block)) : std::nullopt;
    }
    if (!rest.starts_with(kParameter)) return std::nullopt;
    pos += kParameter.size();
    const std::string_view key = read_name(body, pos);
    if (key.empty()) return std::nullopt;
    const size_t end = value_end(body, pos);
    std::string_view value = body.substr(pos, end - pos);
    if (value.starts_with('\n')) value.remove_prefix(1);
    if (value.ends_with('\n')) value.remove_suffix(1);
    block.parameters.emplace_back(std::string(key), std::string(value));
    pos = end;
    if (body.substr(pos).starts_with(kParameterEnd)) pos += kParameterEnd.size();
  }
}

}  // namespace ds
