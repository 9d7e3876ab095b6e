// ReasoningParser (see reasoning_parser.h): a three-phase scanner over <think>, </think> and
// <tool_call>, after vLLM's Qwen3ReasoningParser (vllm/reasoning/qwen3_reasoning_parser.py).
#include "output/reasoning_parser.h"

#include <array>

#include "output/tag_scan.h"

namespace ds {
namespace {

constexpr std::string_view kThink = "<think>";
constexpr std::string_view kEndThink = "</think>";
constexpr std::string_view kToolCall = "<tool_call>";

}  // namespace

bool prompt_ends_in_open_think(std::string_view rendered_prompt) {
  const size_t open = rendered_prompt.rfind(kThink);
  if (open == std::string_view::npos) return false;
  const size_t close = rendered_prompt.rfind(kEndThink);
  return close == std::string_view::npos || open > close;
}

ReasoningParser::ReasoningParser(bool starts_in_reasoning, bool tool_call_ends_reasoning)
    : phase_(starts_in_reasoning ? Phase::kReasoning : Phase::kBefore),
      tool_call_ends_reasoning_(tool_call_ends_reasoning) {}

void ReasoningParser::emit(Delta& out, std::string_view text) {
  if (phase_ == Phase::kAfter && strip_newlines_) {
    const size_t keep = text.find_first_not_of('\n');
    if (keep == std::string_view::npos) return;
    text.remove_prefix(keep);
    strip_newlines_ = false;
  }
  (phase_ == Phase::kReasoning ? out.reasoning : out.content).append(text);
}

ReasoningParser::Delta ReasoningParser::push(std::string_view piece) {
  Delta out;
  if (phase_ == Phase::kAfter && held_.empty()) {
    emit(out, piece);  // the common case once the answer runs: no buffering at all
    return out;
  }
  held_.append(piece);
  const std::string_view text = held_;
  size_t pos = 0;
  while (phase_ != Phase::kAfter) {
    std::array<std::string_view, 3> tags = {kThink, kEndThink, kToolCall};
    const size_t n_tags = (phase_ == Phase::kReasoning && tool_call_ends_reasoning_) ? 3 : 2;
    const std::span<const std::string_view> active(tags.data(), n_tags);
    const TagHit hit = find_first_tag(text, pos, active);
    if (hit.pos == std::string_view::npos) {
      const std::string_view rest = text.substr(pos);
      const size_t hold = partial_overlap_any(rest, active);
      emit(out, rest.substr(0, rest.size() - hold));
      held_.erase(0, text.size() - hold);
      return out;
    }
    emit(out, text.substr(pos, hit.pos - pos));
    const std::string_view tag = active[hit.which];
    pos = hit.pos + tag.size();
    if (tag == kThink) {
      phase_ = Phase::kReasoning;
    } else if (tag == kEndThink) {
      phase_ = Phase::kAfter;
      strip_newlines_ = true;
    } else {  // <tool_call> inside reasoning: content from the tag on
      phase_ = Phase::kAfter;
      pos = hit.pos;
    }
  }
  emit(out, text.substr(pos));
  held_.clear();
  return out;
}

ReasoningParser::Delta ReasoningParser::finish() {
  Delta out;
  emit(out, held_);
  held_.clear();
  return out;
}

}  // namespace ds
