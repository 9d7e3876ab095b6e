// libFuzzer target: the server's output parsers (stop strings, reasoning split, XML tool calls) on
// any generated text, cut into pieces by the input itself. Checks: no crash, nothing lost, no split dependence.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/reasoning_parser.h"
#include "output/stop_strings.h"
#include "output/tool_call_parser.h"
#include "util/random.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_output_parsers: invariant failed: %s\n", what);
  std::abort();
}

// Input layout: byte 0 = flags, byte 1 = seed of the cut; then, if the rest holds a '\0', the part
// before it is up to 4 stop strings separated by '\x01' and the part after it is the text.
struct Input {
  bool starts_in_reasoning, tool_call_ends_reasoning;
  uint64_t seed;
  std::vector<std::string> stops;
  std::string_view text;
};

Input decode(const uint8_t* data, size_t size) {
  Input in{};
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const uint8_t flags = size > 0 ? data[0] : 0;
  in.starts_in_reasoning = flags & 1;
  in.tool_call_ends_reasoning = !(flags & 2);
  in.seed = size > 1 ? data[1] : 0;
  bytes.remove_prefix(std::min<size_t>(2, bytes.size()));
  const size_t nul = bytes.find('\0');
  if (nul != std::string_view::npos) {
    std::string_view list = bytes.substr(0, nul);
    while (in.stops.size() < 4) {
      const size_t sep = list.find('\x01');
      in.stops.emplace_back(list.substr(0, sep));
      if (sep == std::string_view::npos) break;
      list.remove_prefix(sep + 1);
    }
    bytes.remove_prefix(nul + 1);
  }
  in.text = bytes;
  return in;
}

std::vector<std::string_view> cut(std::string_view text, uint64_t seed) {
  std::vector<std::string_view> pieces;
  ds::Xoshiro256 rng(seed);
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min<size_t>(rng.next() % 9, text.size() - pos);  // 0: an empty piece
    pieces.push_back(text.substr(pos, len));
    pos += len;
  }
  return pieces;
}

std::vector<std::string_view> chars(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < text.size(); ++i) pieces.push_back(text.substr(i, 1));
  return pieces;
}

// ---- stop strings
struct StopResult {
  std::string text;
  bool stopped = false;
  int matched = -1;
};

StopResult run_stops(const std::vector<std::string>& stops, const std::vector<std::string_view>& pieces) {
  ds::StopStringMatcher matcher(stops);
  StopResult r;
  for (std::string_view piece : pieces) {
    const auto step = matcher.push(piece);
    check(!r.stopped || step.text.empty(), "stop: text after the stop");
    r.text += step.text;
    r.stopped |= step.stopped;
  }
  r.text += matcher.finish();
  r.matched = matcher.matched_stop();
  return r;
}

void check_stops(const Input& in) {
  bool any_stop_in_text = false;
  for (const std::string& s : in.stops) any_stop_in_text |= !s.empty() && in.text.find(s) != std::string_view::npos;
  const StopResult whole = run_stops(in.stops, {in.text});
  for (const auto& pieces : {cut(in.text, in.seed), chars(in.text)}) {
    const StopResult r = run_stops(in.stops, pieces);
    check(in.text.starts_with(r.text), "stop: output is not a prefix of the text");
    check(r.stopped == any_stop_in_text, "stop: stopped iff a stop occurs");
    check(whole.stopped == r.stopped && whole.text.size() <= r.text.size(), "stop: whole text cuts no later");
    for (const std::string& s : in.stops) check(s.empty() || r.text.find(s) == std::string::npos, "stop: stop emitted");
    if (r.stopped) {
      check(r.matched >= 0 && static_cast<size_t>(r.matched) < in.stops.size(), "stop: matched index");
      check(in.text.substr(r.text.size()).starts_with(in.stops[r.matched]), "stop: cut is not at the stop");
    } else {
      check(r.text == in.text, "stop: text lost");
    }
  }
}

// ---- reasoning: an obviously-correct whole-text oracle of the documented rules
struct Split {
  std::string reasoning, content;
  bool operator==(const Split&) const = default;
};

Split reasoning_oracle(std::string_view text, bool starts, bool tool_call_ends) {
  enum { kBefore, kReasoning, kAfter } phase = starts ? kReasoning : kBefore;
  Split out;
  size_t i = 0;
  bool strip = false;
  while (i < text.size()) {
    const std::string_view rest = text.substr(i);
    if (phase == kAfter) {
      size_t skip = 0;
      if (strip) skip = std::min(rest.size(), rest.find_first_not_of('\n'));
      out.content += rest.substr(skip);
      break;
    }
    if (rest.starts_with("<think>")) {
      phase = kReasoning;
      i += 7;
    } else if (rest.starts_with("</think>")) {
      phase = kAfter;
      strip = true;
      i += 8;
    } else if (phase == kReasoning && tool_call_ends && rest.starts_with("<tool_call>")) {
      phase = kAfter;
    } else {
      (phase == kReasoning ? out.reasoning : out.content) += text[i++];
    }
  }
  return out;
}

Split run_reasoning(const Input& in, const std::vector<std::string_view>& pieces) {
  ds::ReasoningParser parser(in.starts_in_reasoning, in.tool_call_ends_reasoning);
  Split out;
  for (std::string_view piece : pieces) {
    const auto d = parser.push(piece);
    out.reasoning += d.reasoning;
    out.content += d.content;
  }
  const auto d = parser.finish();
  out.reasoning += d.reasoning;
  out.content += d.content;
  return out;
}

void check_reasoning(const Input& in) {
  const Split expected = reasoning_oracle(in.text, in.starts_in_reasoning, in.tool_call_ends_reasoning);
  check(run_reasoning(in, {in.text}) == expected, "reasoning: whole text differs from the oracle");
  check(run_reasoning(in, cut(in.text, in.seed)) == expected, "reasoning: pieces differ from the oracle");
  check(run_reasoning(in, chars(in.text)) == expected, "reasoning: chars differ from the oracle");
}

// ---- tool calls
struct CallsResult {
  std::string content;
  std::string reassembled;  // content and raw blocks in stream order (exact when pushed char by char)
  std::vector<ds::ToolCallParser::ToolCall> calls;
};

const nlohmann::json& fuzz_tools() {
  static const nlohmann::json tools = nlohmann::json::parse(R"([
    {"type": "function", "function": {"name": "f", "parameters": {"properties": {
      "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
      "o": {"type": "object"}, "a": {"type": "array"}, "u": {"type": ["null", "integer"]}, "x": {"anyOf": []}}}}}])");
  return tools;
}

CallsResult run_calls(const std::vector<std::string_view>& pieces) {
  ds::ToolCallParser parser(fuzz_tools(), 5);
  CallsResult r;
  auto take = [&](ds::ToolCallParser::Delta d) {
    r.content += d.content;
    r.reassembled += d.content;
    for (auto& c : d.calls) {
      r.reassembled += c.raw;
      r.calls.push_back(std::move(c));
    }
  };
  for (std::string_view piece : pieces) take(parser.push(piece));
  take(parser.finish());
  check(!parser.in_tool_call(), "tool: still inside after finish");
  check(parser.saw_tool_call() == !r.calls.empty(), "tool: saw_tool_call");
  std::set<std::string> ids;
  for (size_t i = 0; i < r.calls.size(); ++i) {
    const auto& c = r.calls[i];
    check(c.index == static_cast<int>(i), "tool: index");
    check(ids.insert(c.id).second && c.id.size() == 29, "tool: id");
    check(!c.name.empty(), "tool: empty name");
    const auto args = nlohmann::json::parse(c.arguments, nullptr, false);
    check(args.is_object(), "tool: arguments are not a JSON object");
  }
  return r;
}

void check_calls(std::string_view text, uint64_t seed) {
  const CallsResult by_char = run_calls(chars(text));
  check(by_char.reassembled == text, "tool: text lost or reordered");
  for (const auto& pieces : {std::vector<std::string_view>{text}, cut(text, seed)}) {
    const CallsResult r = run_calls(pieces);
    check(r.content == by_char.content && r.calls.size() == by_char.calls.size(), "tool: split dependence");
    for (size_t i = 0; i < r.calls.size(); ++i) {
      check(r.calls[i].raw == by_char.calls[i].raw && r.calls[i].arguments == by_char.calls[i].arguments &&
                r.calls[i].id == by_char.calls[i].id,
            "tool: call differs across splits");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const Input in = decode(data, size);
  check_stops(in);
  check_reasoning(in);
  check_calls(in.text, in.seed);
  // The server's chain: reasoning first, then tool calls on the content.
  const Split split = run_reasoning(in, cut(in.text, in.seed));
  check_calls(split.content, in.seed + 1);
  (void)ds::prompt_ends_in_open_think(in.text);
  return 0;
}
