// ChoiceOutput: the per-token pipeline detokenizer → stop strings → reasoning → tool calls.
#include "server/choice_output.h"

#include "tokenizer/utf8.h"

namespace ds::server {

std::string logprob_token_text(const Tokenizer& tokenizer, int32_t id) {
  const std::string bytes = tokenizer.token_bytes(id);
  if (utf8::valid_prefix(bytes) == bytes.size()) return bytes;
  static const char* kHex = "0123456789abcdef";
  std::string out = "bytes:";
  for (unsigned char c : bytes) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

ChoiceOutput::ChoiceOutput(const Tokenizer& tokenizer, const ChoiceSettings& settings)
    : tokenizer_(tokenizer),
      settings_(settings),
      decoder_(tokenizer, settings.skip_special_tokens),
      stops_(settings.stop) {
  if (settings.reasoning) reasoning_.emplace(settings.starts_in_reasoning);
  // The parser takes nlohmann::json; the request keeps key order (ordered_json).
  if (settings.parse_tool_calls) tools_.emplace(nlohmann::json::parse(settings.tools.dump()));
}

void ChoiceOutput::route(std::string text, ChoiceDelta& out) {
  if (text.empty()) return;
  std::string content = std::move(text);
  if (reasoning_) {
    ReasoningParser::Delta d = reasoning_->push(content);
    out.reasoning += d.reasoning;
    content = std::move(d.content);
  }
  if (tools_ && !content.empty()) {
    ToolCallParser::Delta d = tools_->push(content);
    content = std::move(d.content);
    tool_calls_ += static_cast<int64_t>(d.calls.size());
    for (auto& call : d.calls) out.tool_calls.push_back(std::move(call));
  }
  out.content += content;
}

ChoiceDelta ChoiceOutput::push(const SampledToken& token) {
  ChoiceDelta out;
  if (stopped_) return out;
  ++tokens_;
  if (settings_.logprobs) {
    TokenLogprobView view;
    view.token = logprob_token_text(tokenizer_, token.token);
    const std::string bytes = tokenizer_.token_bytes(token.token);
    view.bytes.assign(bytes.begin(), bytes.end());
    view.logprob = token.logprob;
    for (const TokenLogprob& alt : token.top) view.top.emplace_back(logprob_token_text(tokenizer_, alt.token), alt.logprob);
    out.logprobs.push_back(std::move(view));
  }
  const StopStringMatcher::Step step = stops_.push(decoder_.push(token.token));
  route(step.text, out);
  if (step.stopped) {
    stopped_ = true;
    ChoiceDelta rest = finish();
    out.content += rest.content;
    out.reasoning += rest.reasoning;
    for (auto& call : rest.tool_calls) out.tool_calls.push_back(std::move(call));
  }
  return out;
}

ChoiceDelta ChoiceOutput::finish() {
  ChoiceDelta out;
  if (!stopped_) route(stops_.push(decoder_.finish()).text + stops_.finish(), out);
  if (reasoning_) {
    ReasoningParser::Delta d = reasoning_->finish();
    out.reasoning += d.reasoning;
    if (tools_ && !d.content.empty()) {
      ToolCallParser::Delta t = tools_->push(d.content);
      out.content += t.content;
      tool_calls_ += static_cast<int64_t>(t.calls.size());
      for (auto& call : t.calls) out.tool_calls.push_back(std::move(call));
    } else {
      out.content += d.content;
    }
  }
  if (tools_) {
    ToolCallParser::Delta d = tools_->finish();
    out.content += d.content;
    tool_calls_ += static_cast<int64_t>(d.calls.size());
    for (auto& call : d.calls) out.tool_calls.push_back(std::move(call));
  }
  return out;
}

}  // namespace ds::server
