// Tests of ReasoningParser (Qwen3.5 <think> split, after vLLM's Qwen3ReasoningParser) and
// prompt_ends_in_open_think, with the text cut at every possible position (split_pieces.h).
#include "output/reasoning_parser.h"

#include <chrono>

#include <gtest/gtest.h>

#include "split_pieces.h"

namespace ds {
namespace {

struct Split {
  std::string reasoning, content;
  bool operator==(const Split&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Split& s) {
  return os << "{reasoning='" << s.reasoning << "', content='" << s.content << "'}";
}

Split run(bool starts_in_reasoning, const testing::Pieces& pieces, bool tool_call_ends = true) {
  ReasoningParser parser(starts_in_reasoning, tool_call_ends);
  Split out;
  for (const std::string& piece : pieces) {
    const ReasoningParser::Delta d = parser.push(piece);
    out.reasoning += d.reasoning;
    out.content += d.content;
  }
  const ReasoningParser::Delta d = parser.finish();
  out.reasoning += d.reasoning;
  out.content += d.content;
  return out;
}

void expect_split(bool starts_in_reasoning, std::string_view text, const Split& expected, bool tool_call_ends = true) {
  for (const testing::Pieces& pieces : testing::all_partitions(text)) {
    ASSERT_EQ(run(starts_in_reasoning, pieces, tool_call_ends), expected) << "pieces: " << pieces.size();
  }
}

TEST(ReasoningParser, ThinkingOnSplitsAtEndTag) {
  expect_split(true, "The user asks 2+2.\n</think>\n\nIt is 4.", {"The user asks 2+2.\n", "It is 4."});
  expect_split(true, "r</think>c", {"r", "c"});
  expect_split(true, "</think>\n\n", {"", ""});
}

TEST(ReasoningParser, TruncatedThinkingIsAllReasoning) {
  expect_split(true, "still thinking about it", {"still thinking about it", ""});
  expect_split(true, "still thinking </thi", {"still thinking </thi", ""});  // a partial tag is text at the end
}

TEST(ReasoningParser, OnlyNewlinesAfterEndTagAreStripped) {
  expect_split(true, "r</think>\n \nX", {"r", " \nX"});
  expect_split(true, "r</think>\r\nX", {"r", "\r\nX"});
  expect_split(true, "r</think>\n\n\n\nX\n\nY", {"r", "X\n\nY"});
}

TEST(ReasoningParser, RepeatedOpenTagInsideReasoningIsDropped) {
  expect_split(true, "<think>\nhm</think>\n\nA", {"\nhm", "A"});
  expect_split(true, "a<think>b<think>c</think>d", {"abc", "d"});
}

TEST(ReasoningParser, OnlyTheFirstBlockCounts) {
  expect_split(true, "r</think>A<think>B</think>C", {"r", "A<think>B</think>C"});
  expect_split(false, "<think>r</think>A<think>B</think>C", {"r", "A<think>B</think>C"});
}

TEST(ReasoningParser, ToolCallEndsReasoningImplicitly) {
  const std::string call = "<tool_call>\n<function=f>\n</function>\n</tool_call>";
  expect_split(true, "I should call f.\n" + call, {"I should call f.\n", call});
  expect_split(true, "x</think>\n\n" + call, {"x", call});
  expect_split(true, "I should call f.\n" + call, {"I should call f.\n" + call, ""}, /*tool_call_ends=*/false);
  // Outside reasoning <tool_call> is just content.
  expect_split(false, "a" + call, {"", "a" + call});
}

TEST(ReasoningParser, ThinkingOffLooksForOpenTag) {
  expect_split(false, "Hello there", {"", "Hello there"});
  expect_split(false, "<think>\nplan\n</think>\n\nAnswer", {"\nplan\n", "Answer"});
  expect_split(false, "pre<think>r</think>post", {"r", "prepost"});
  expect_split(false, "<think>never closed", {"never closed", ""});
}

TEST(ReasoningParser, StrayEndTagEndsTheReasoningPhase) {
  expect_split(false, "x</think>\n\ny<think>z", {"", "xy<think>z"});
}

TEST(ReasoningParser, LookalikesAreText) {
  expect_split(false, "a < b <thinking> </thinker> <think", {"", "a < b <thinking> </thinker> <think"});
  expect_split(true, "<<think>>x<</think>", {"<>x<", ""});
  expect_split(true, "<tool_cal <tool_call", {"<tool_cal <tool_call", ""});
}

TEST(ReasoningParser, EmptyPiecesAndNothingAtAll) {
  expect_split(true, "", {"", ""});
  expect_split(false, "", {"", ""});
}

TEST(ReasoningParser, LongOutputIsLinear) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "<thin< /think <tool_ca ";
  text += "</think>";
  for (int i = 0; i < 100000; ++i) text += "<think></think>";
  const auto start = std::chrono::steady_clock::now();
  ReasoningParser parser(true);
  size_t reasoning = 0, content = 0;
  for (size_t i = 0; i < text.size(); i += 3) {
    const auto d = parser.push(std::string_view(text).substr(i, 3));
    reasoning += d.reasoning.size();
    content += d.content.size();
  }
  const auto d = parser.finish();
  reasoning += d.reasoning.size();
  content += d.content.size();
  EXPECT_EQ(reasoning, 100000u * 23);
  EXPECT_EQ(content, 100000u * 15);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST(PromptEndsInOpenThink, QwenGenerationPrompts) {
  EXPECT_TRUE(prompt_ends_in_open_think("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(prompt_ends_in_open_think("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(prompt_ends_in_open_think("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
  EXPECT_FALSE(prompt_ends_in_open_think(""));
  // A user message that mentions the tags does not count once the generation prompt closes them.
  EXPECT_FALSE(prompt_ends_in_open_think("say <think> please<|im_end|>\n<think>\n\n</think>\n\n"));
  EXPECT_TRUE(prompt_ends_in_open_think("</think> then <think> and text after"));
}

}  // namespace
}  // namespace ds
