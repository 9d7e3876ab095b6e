// The grammar of one Qwen3.5 tool-call block (the text between <tool_call> and </tool_call>), as
// the chat template writes it and vLLM's Qwen3CoderToolParser reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ds {

struct ToolCallBlock {
  std::string name;
  std::vector<std::pair<std::string, std::string>> parameters;  // in order; values stripped
};

// Accepted (whitespace = spaces, tabs, CR, LF):
//   ws* "<function=" NAME ">" ( ws* "<parameter=" KEY ">" VALUE ["</parameter>"] )* ws* ["</function>" ws*]
// NAME and KEY are non-empty and hold no '<', '>' or newline. A VALUE runs to the first
// "</parameter>", "<parameter=" or "</function>" (vLLM's lookaheads: a missing "</parameter>" is
// tolerated), and loses one leading and one trailing '\n' — the ones the template adds around it.
// A missing "</function>" is tolerated (vLLM too). Anything else — text before "<function=", text
// between parameters, a second function, text after "</function>" — is malformed: std::nullopt,
// and the caller passes the whole block through as content. Linear in the body's length.
std::optional<ToolCallBlock> parse_tool_call_block(std::string_view body);

}  // namespace ds
