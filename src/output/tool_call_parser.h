// ToolCallParser: Qwen3.5's XML tool calls (<tool_call><function=NAME><parameter=ARG>…) in streamed
// content, turned into OpenAI tool calls; mirrors vLLM's Qwen3CoderToolParser (qwen3_coder / qwen3_xml).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/tool_arguments.h"
#include "util/random.h"

namespace ds {

// Feed it the content (after the reasoning split). Text outside tool calls passes through as content
// (a tail that may still become "<tool_call>" is held back). A block is buffered from "<tool_call>"
// to "</tool_call>" and then parsed (tool_call_block.h): well formed -> one ToolCall with JSON-typed
// arguments (tool_arguments.h); malformed -> its raw text, tags included, goes to content. An
// unterminated block goes to content at finish(). Calls are reported whole, when their block closes.
// Calls naming a function that is not in `tools` are still reported (as vLLM); the server decides.
class ToolCallParser {
 public:
  // tools: the request's "tools" array (null or empty: no schemas, values typed by JSON alone).
  // id_seed: ids are "call_" + 24 alphanumerics drawn from xoshiro256** seeded with it, so a
  // request seed gives reproducible ids; the one-argument form seeds from std::random_device.
  explicit ToolCallParser(const nlohmann::json& tools);
  ToolCallParser(const nlohmann::json& tools, uint64_t id_seed);

  struct ToolCall {
    int index = 0;          // 0, 1, ... in the order of the response
    std::string id;         // "call_" + 24 alphanumerics
    std::string name;
    std::string arguments;  // a JSON object, compact, in the order the parameters came
    std::string raw;        // the block as generated, tags included (for logs and tests)
  };
  struct Delta {
    std::string content;          // all text of this piece outside well-formed calls
    std::vector<ToolCall> calls;  // calls completed in this piece
  };
  Delta push(std::string_view piece);
  // Releases held-back text: a partial "<tool_call>" or an unterminated block, as content.
  Delta finish();

  bool saw_tool_call() const { return next_index_ > 0; }  // finish_reason "tool_calls"
  bool in_tool_call() const { return inside_; }            // a block is being buffered

 private:
  void complete_block(std::string_view body, Delta& out);
  std::string next_id();

  ToolSchemas schemas_;
  Xoshiro256 id_rng_;
  int next_index_ = 0;
  bool inside_ = false;  // between "<tool_call>" and "</tool_call>"
  size_t scan_ = 0;      // inside: where the search for "</tool_call>" resumes in held_
  std::string held_;     // outside: a possible partial "<tool_call>"; inside: the block's body
};

}  // namespace ds
