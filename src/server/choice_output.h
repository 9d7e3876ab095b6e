// ChoiceOutput: one choice's generated tokens → what the client sees, incrementally: detokenize
// (never a broken UTF-8 character), cut at stop strings (never emitted, found across pieces), split
// reasoning from content, and parse Qwen's XML tool calls out of the content. vLLM's order: stop
// strings act on the raw text, reasoning and tool-call parsing on what remains.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "output/reasoning_parser.h"
#include "output/stop_strings.h"
#include "output/tool_call_parser.h"
#include "tokenizer/stream_decoder.h"

namespace ds::server {

struct ChoiceSettings {
  std::vector<std::string> stop;
  bool skip_special_tokens = true;
  bool reasoning = false;             // split <think> … </think> into reasoning (chat)
  bool starts_in_reasoning = false;   // the prompt ends inside an open <think>
  bool parse_tool_calls = false;
  nlohmann::ordered_json tools;       // for typing tool-call arguments
  bool logprobs = false;              // report each token's logprob (and its alternatives)
};

// One token's logprob as OpenAI shows it: its text, its bytes, and the top alternatives.
struct TokenLogprobView {
  std::string token;
  std::vector<uint8_t> bytes;
  float logprob = 0.0f;
  std::vector<std::pair<std::string, float>> top;  // (token text, logprob), most likely first
};

struct ChoiceDelta {
  std::string content, reasoning;
  std::vector<ToolCallParser::ToolCall> tool_calls;
  std::vector<TokenLogprobView> logprobs;
  bool empty() const { return content.empty() && reasoning.empty() && tool_calls.empty() && logprobs.empty(); }
};

class ChoiceOutput {
 public:
  ChoiceOutput(const Tokenizer& tokenizer, const ChoiceSettings& settings);

  ChoiceDelta push(const SampledToken& token);
  // Generation ended: flush whatever parsers hold back.
  ChoiceDelta finish();
  bool stopped() const { return stopped_; }  // a stop string was found: the caller ends the request
  bool saw_tool_calls() const { return tool_calls_ > 0; }
  int64_t tokens() const { return tokens_; }

 private:
  void route(std::string text, ChoiceDelta& out);  // after stop strings: reasoning, then tool calls
  std::string token_text(int32_t id) const;

  const Tokenizer& tokenizer_;
  ChoiceSettings settings_;
  StreamDecoder decoder_;
  StopStringMatcher stops_;
  std::optional<ReasoningParser> reasoning_;
  std::optional<ToolCallParser> tools_;
  bool stopped_ = false;
  int64_t tokens_ = 0;
  int64_t tool_calls_ = 0;
};

// Text of a token for logprobs: its bytes when they are valid UTF-8, else "bytes:\xNN…" as OpenAI does.
std::string logprob_token_text(const Tokenizer& tokenizer, int32_t id);

}  // namespace ds::server
