// Tests of ToolCallParser (Qwen3.5 XML tool calls, after vLLM's Qwen3CoderToolParser) and of the
// argument typing, with the text cut at every possible position (split_pieces.h).
#include "output/tool_call_parser.h"

#include <chrono>

#include <gtest/gtest.h>

#include "output/tool_arguments.h"
#include "output/tool_call_block.h"
#include "split_pieces.h"

namespace ds {
namespace {

const nlohmann::json& tools() {
  static const nlohmann::json t = nlohmann::json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
      "city": {"type": "string"}, "days": {"type": "integer"}, "celsius": {"type": "boolean"},
      "ratio": {"type": "number"}, "opts": {"type": "object"}, "tags": {"type": "array"},
      "maybe": {"type": ["null", "integer"]}, "choice": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
      "plain": {"description": "no type"}, "kind": {"type": "string", "enum": ["a", "b"]}}}}},
    {"type": "function", "function": {"name": "no_params"}},
    "junk", {"type": "function"}, {"function": {"name": 3}}
  ])");
  return t;
}

struct Result {
  std::string content;
  std::vector<ToolCallParser::ToolCall> calls;
  bool saw = false;
};

Result run(const testing::Pieces& pieces, const nlohmann::json& tool_list = tools()) {
  ToolCallParser parser(tool_list, 42);
  Result r;
  auto take = [&](ToolCallParser::Delta d) {
    r.content += d.content;
    for (auto& c : d.calls) r.calls.push_back(std::move(c));
  };
  for (const std::string& piece : pieces) take(parser.push(piece));
  take(parser.finish());
  r.saw = parser.saw_tool_call();
  return r;
}

// The expected result is the whole-text parse; every partition must give the same.
Result expect_same_for_all_splits(std::string_view text, const nlohmann::json& tool_list = tools()) {
  const Result whole = run({std::string(text)}, tool_list);
  for (const testing::Pieces& pieces : testing::all_partitions(text)) {
    const Result got = run(pieces, tool_list);
    EXPECT_EQ(got.content, whole.content) << "pieces: " << pieces.size();
    EXPECT_EQ(got.calls.size(), whole.calls.size());
    for (size_t i = 0; i < std::min(got.calls.size(), whole.calls.size()); ++i) {
      EXPECT_EQ(got.calls[i].index, whole.calls[i].index);
      EXPECT_EQ(got.calls[i].id, whole.calls[i].id);
      EXPECT_EQ(got.calls[i].name, whole.calls[i].name);
      EXPECT_EQ(got.calls[i].arguments, whole.calls[i].arguments);
      EXPECT_EQ(got.calls[i].raw, whole.calls[i].raw);
    }
    if (::testing::Test::HasFailure()) break;
  }
  return whole;
}

std::string call_text(std::string_view name, std::vector<std::pair<std::string, std::string>> params) {
  std::string s = "<tool_call>\n<function=" + std::string(name) + ">\n";
  for (const auto& [k, v] : params) s += "<parameter=" + k + ">\n" + v + "\n</parameter>\n";
  return s + "</function>\n</tool_call>";
}

TEST(ToolCallParser, TemplateFormatWithContentBefore) {
  const std::string call = call_text("get_weather", {{"city", "Paris"}, {"days", "3"}});
  const Result r = expect_same_for_all_splits("Let me check.\n\n" + call);
  EXPECT_EQ(r.content, "Let me check.\n\n");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris","days":3})");
  EXPECT_EQ(r.calls[0].index, 0);
  EXPECT_EQ(r.calls[0].raw, call);
  EXPECT_TRUE(r.saw);
}

TEST(ToolCallParser, SeveralCallsAndContentBetweenAndAfter) {
  const std::string a = call_text("get_weather", {{"city", "Paris"}});
  const std::string b = call_text("get_weather", {{"city", "Rome"}});
  const Result r = expect_same_for_all_splits(a + "\n" + b + "\nDone.");
  EXPECT_EQ(r.content, "\n\nDone.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].index, 0);
  EXPECT_EQ(r.calls[1].index, 1);
  EXPECT_EQ(r.calls[1].arguments, R"({"city":"Rome"})");
  EXPECT_NE(r.calls[0].id, r.calls[1].id);
  for (const auto& c : r.calls) {
    ASSERT_EQ(c.id.size(), 5u + 24u);
    EXPECT_EQ(c.id.substr(0, 5), "call_");
    for (char ch : c.id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch))) << c.id;
  }
}

TEST(ToolCallParser, IdsAreDeterministicInTheSeedAndDifferAcrossSeeds) {
  const std::string call = call_text("f", {});
  ToolCallParser a(nullptr, 1), b(nullptr, 1), c(nullptr, 2), d(nullptr);
  const std::string ida = a.push(call).calls.at(0).id;
  EXPECT_EQ(ida, b.push(call).calls.at(0).id);
  EXPECT_NE(ida, c.push(call).calls.at(0).id);
  EXPECT_EQ(d.push(call).calls.at(0).id.size(), 29u);
}

TEST(ToolCallParser, NoToolCallIsPlainContent) {
  const Result r = expect_same_for_all_splits("Just text with <b>tags</b> and <tool_cal and <tool_call");
  EXPECT_EQ(r.content, "Just text with <b>tags</b> and <tool_cal and <tool_call");
  EXPECT_TRUE(r.calls.empty());
  EXPECT_FALSE(r.saw);
}

TEST(ToolCallParser, ValuesAreTypedByTheSchema) {
  const std::string call = call_text("get_weather", {{"city", "42"},
                                                     {"days", " 7 "},
                                                     {"celsius", "True"},
                                                     {"ratio", "0.25"},
                                                     {"opts", R"({"b": 1, "a": [true, null]})"},
                                                     {"tags", R"(["x", "y"])"},
                                                     {"maybe", "5"},
                                                     {"choice", "12"},
                                                     {"plain", "3"},
                                                     {"kind", "a"},
                                                     {"unknown", "[1, 2]"}});
  const Result r = expect_same_for_all_splits(call);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments,
            R"({"city":"42","days":7,"celsius":true,"ratio":0.25,"opts":{"b":1,"a":[true,null]},"tags":["x","y"],)"
            R"("maybe":5,"choice":12,"plain":"3","kind":"a","unknown":[1,2]})");
}

TEST(ToolArguments, ConversionRules) {
  const auto typed = [](std::string_view value, std::string_view type) {
    const nlohmann::json schema = {{"type", type}};
    return typed_parameter_value(value, &schema).dump();
  };
  EXPECT_EQ(typed("null", "string"), "null");  // vLLM checks "null" before the type
  EXPECT_EQ(typed("NULL", "integer"), "null");
  EXPECT_EQ(typed("  text  ", "string"), "\"  text  \"");
  EXPECT_EQ(typed("-12", "integer"), "-12");
  EXPECT_EQ(typed("+12", "int"), "12");
  EXPECT_EQ(typed("18446744073709551615", "integer"), "18446744073709551615");
  EXPECT_EQ(typed("99999999999999999999", "integer"), "\"99999999999999999999\"");
  EXPECT_EQ(typed("-9223372036854775808", "integer"), "-9223372036854775808");
  EXPECT_EQ(typed("1.5", "integer"), "\"1.5\"");
  EXPECT_EQ(typed("ten", "integer"), "\"ten\"");
  EXPECT_EQ(typed("5.0", "number"), "5");
  EXPECT_EQ(typed("-.5e1", "number"), "-5");
  EXPECT_EQ(typed("1e-3", "float"), "0.001");
  EXPECT_EQ(typed("1e400", "number"), "\"1e400\"");
  EXPECT_EQ(typed("inf", "number"), "\"inf\"");
  EXPECT_EQ(typed("0x10", "number"), "\"0x10\"");
  EXPECT_EQ(typed(".", "number"), "\".\"");
  EXPECT_EQ(typed("FALSE", "boolean"), "false");
  EXPECT_EQ(typed("yes", "boolean"), "\"yes\"");
  EXPECT_EQ(typed("[1,", "array"), "\"[1,\"");
  EXPECT_EQ(typed("{\"a\":1}", "object"), "{\"a\":1}");
  EXPECT_EQ(typed("\"quoted\"", "any"), "\"quoted\"");
  EXPECT_EQ(typed("1e999", "object"), "\"1e999\"");
  EXPECT_EQ(typed_parameter_value("true", nullptr).dump(), "true");
  EXPECT_EQ(typed_parameter_value("Paris", nullptr).dump(), "\"Paris\"");
  EXPECT_EQ(typed_parameter_value("", nullptr).dump(), "\"\"");
  // Deep nesting is not parsed (dump would recurse): stays a string.
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_TRUE(typed_parameter_value(deep, nullptr).is_string());
  EXPECT_TRUE(typed_parameter_value("[[[[1]]]]", nullptr).is_array());
}

TEST(ToolArguments, SchemaTypeNames) {
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"({"type": " Integer "})")), "integer");
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"({"type": ["null", "number"]})")), "number");
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"({"type": ["null"]})")), "null");
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"({"oneOf": []})")), "object");
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"({"enum": [1]})")), "string");
  EXPECT_EQ(schema_type_name(nlohmann::json::parse(R"(7)")), "string");
}

TEST(ToolCallParser, StringValuesKeepAllButOneNewlineEachSide) {
  const Result r = expect_same_for_all_splits(call_text("get_weather", {{"city", "\nline1\n  line2 <b> a < b\n"}}));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"\nline1\n  line2 <b> a < b\n"})");
}

TEST(ToolCallParser, NoToolsMeansJsonTyping) {
  const Result r = expect_same_for_all_splits(call_text("anything", {{"n", "3"}, {"s", "Paris"}, {"o", "{\"a\":1}"}}),
                                              nlohmann::json());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "anything");
  EXPECT_EQ(r.calls[0].arguments, R"({"n":3,"s":"Paris","o":{"a":1}})");
}

TEST(ToolCallParser, LenientLikeVllm) {
  // Missing </parameter> before the next parameter or </function>; missing </function>.
  const Result r = expect_same_for_all_splits(
      "<tool_call><function=get_weather><parameter=city>Oslo<parameter=days>\n2\n</function></tool_call>"
      "<tool_call>\n<function=no_params>\n</tool_call>");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Oslo","days":2})");
  EXPECT_EQ(r.calls[1].name, "no_params");
  EXPECT_EQ(r.calls[1].arguments, "{}");
  EXPECT_EQ(r.content, "");
}

TEST(ToolCallParser, DuplicateParameterLastWinsInFirstPosition) {
  const Result r = expect_same_for_all_splits(call_text("f", {{"a", "1"}, {"b", "2"}, {"a", "3"}}));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":3,"b":2})");
}

TEST(ToolCallParser, MalformedBlocksBecomeContent) {
  for (const std::string bad : {"<tool_call>\nno function here\n</tool_call>",
                                "<tool_call><function=get_weather</tool_call>",
                                "<tool_call><function=>\n</function></tool_call>",
                                "<tool_call><function=a\nb>\n</function></tool_call>",
                                "<tool_call><function=f>\njunk<parameter=a>1</parameter></function></tool_call>",
                                "<tool_call><function=f>\n<parameter=>1</parameter></function></tool_call>",
                                "<tool_call><function=f></function>trailing</tool_call>",
                                "<tool_call><function=f></function><function=g></function></tool_call>",
                                "<tool_call>x<tool_call><function=f></function></tool_call>"}) {
    const Result r = expect_same_for_all_splits("A" + bad + "B");
    EXPECT_EQ(r.content, "A" + bad + "B") << bad;
    EXPECT_TRUE(r.calls.empty()) << bad;
  }
}

TEST(ToolCallParser, UnterminatedBlockIsContentAtFinish) {
  const std::string text = "Sure.<tool_call>\n<function=get_weather>\n<parameter=city>\nPar";
  const Result r = expect_same_for_all_splits(text);
  EXPECT_EQ(r.content, text);
  EXPECT_TRUE(r.calls.empty());
  ToolCallParser parser(tools(), 1);
  EXPECT_EQ(parser.push("Sure.<tool_call>\n<func").content, "Sure.");
  EXPECT_TRUE(parser.in_tool_call());
  EXPECT_EQ(parser.finish().content, "<tool_call>\n<func");
}

TEST(ToolCallParser, InvalidUtf8InAValueDoesNotThrow) {
  const Result r = expect_same_for_all_splits(call_text("f", {{"s", "bad \xff\xfe bytes"}}));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{\"s\":\"bad \xEF\xBF\xBD\xEF\xBF\xBD bytes\"}");
}

TEST(ToolCallParser, HugeValueCharByCharIsLinear) {
  std::string value;
  for (int i = 0; i < 50000; ++i) value += "<parameter x</tool_cal</function ";
  const std::string text = call_text("get_weather", {{"city", value}}) + "tail";
  const auto start = std::chrono::steady_clock::now();
  ToolCallParser parser(tools(), 3);
  std::string content;
  std::vector<ToolCallParser::ToolCall> calls;
  for (char c : text) {
    auto d = parser.push(std::string_view(&c, 1));
    content += d.content;
    for (auto& call : d.calls) calls.push_back(std::move(call));
  }
  content += parser.finish().content;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(content, "tail");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(calls[0].arguments)["city"], value);
}

TEST(ToolCallBlock, ManyUnterminatedParametersIsLinear) {
  std::string body = "<function=f>";
  for (int i = 0; i < 200000; ++i) body += "<parameter=p>v";
  const auto start = std::chrono::steady_clock::now();
  const auto block = parse_tool_call_block(body);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->parameters.size(), 200000u);
}

}  // namespace
}  // namespace ds
