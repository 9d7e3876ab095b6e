// ReasoningParser: splits Qwen3.5 output into reasoning (inside <think>…</think>) and content, one
// piece at a time. Semantics follow vLLM's Qwen3ReasoningParser (vllm/reasoning/qwen3_reasoning_parser.py).
#pragma once

#include <string>
#include <string_view>

namespace ds {

// True when the rendered prompt ends inside an open <think> block: its last "<think>" comes after
// its last "</think>". Qwen3.5's template then ends with "<think>\n" (thinking on); with thinking off
// it ends with "<think>\n\n</think>\n\n" and this is false.
bool prompt_ends_in_open_think(std::string_view rendered_prompt);

// Three phases; tags are never emitted:
//  - before reasoning (starts_in_reasoning = false): text is content; "<think>" opens reasoning; a
//    stray "</think>" is dropped and ends the reasoning phase (as if the block were empty).
//  - reasoning (starts_in_reasoning = true, or after "<think>"): text is reasoning until "</think>".
//    A repeated "<think>" is dropped (the older Qwen3 template let the model write it itself).
//    "<tool_call>" also ends reasoning (Qwen3.5 sometimes calls a tool without closing its thought;
//    vLLM treats it as an implicit end); the tag is NOT dropped: it starts the content so the
//    tool-call parser sees it.
//  - after reasoning: everything is content, verbatim, tags included (only the first block counts,
//    as vLLM partitions at the first "</think>"). The newlines right after "</think>" are stripped:
//    the template writes "</think>\n\n" before the answer and strips them itself when it re-reads
//    a reply (`content.split('</think>')[-1].lstrip('\n')`); vLLM keeps them (content starts "\n\n").
// Reasoning keeps its own newlines verbatim (vLLM does too; the template trims on re-render).
// Partial tags at the end of a piece are held back until the next piece (or finish()) decides.
class ReasoningParser {
 public:
  explicit ReasoningParser(bool starts_in_reasoning, bool tool_call_ends_reasoning = true);

  struct Delta {
    std::string reasoning, content;
  };
  Delta push(std::string_view piece);
  // Releases held-back text: a partial tag that never completed is text of the current phase.
  Delta finish();

  bool in_reasoning() const { return phase_ == Phase::kReasoning; }
  bool reasoning_ended() const { return phase_ == Phase::kAfter; }

 private:
  enum class Phase { kBefore, kReasoning, kAfter };
  void emit(Delta& out, std::string_view text);

  Phase phase_;
  bool tool_call_ends_reasoning_;
  bool strip_newlines_ = false;  // just after "</think>": drop '\n' until other text comes
  std::string held_;             // a possible partial tag
};

}  // namespace ds
