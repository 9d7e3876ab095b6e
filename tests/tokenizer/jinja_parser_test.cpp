// Jinja parser: both real Qwen templates parse; syntax errors name line and column; float repr and
// tojson follow Python (the interpreter that renders templates is still to come, docs/tokenizer.md).
#include <gtest/gtest.h>

#include "test_util.h"
#include "tokenizer/jinja/parser.h"
#include "tokenizer/jinja/value.h"

namespace ds::jinja {
namespace {

TEST(JinjaParser, RealTemplatesParse) {
  // Hash-confirmed copies (../shared/testdata/chat_templates/SOURCES.md).
  for (const std::string& name : {std::string(DS_REPO_DIR) + "/data/chat_templates/qwen3.5.jinja", std::string(DS_FIXTURES_DIR) + "/tokenizer/qwen3.6.jinja"}) {
    const std::string source = test::read_file(name);
    ASSERT_FALSE(source.empty()) << name;
    auto program = parse_template(source);
    ASSERT_TRUE(program.ok()) << name << ": " << program.status().message();
    EXPECT_GT(program->body.size(), 5u);
  }
}

TEST(JinjaParser, ErrorsNameLineAndColumn) {
  struct Case {
    const char* source;
    const char* message;
  };
  const Case cases[] = {
      {"a\n{% include 'x' %}", "line 2, column 4: unknown statement 'include'"},
      {"{{ 1 +  }}", "line 1, column 9: expected an expression"},
      {"{% if x %}a", "expected 'endif'"},
      {"{{ x ", "tag not closed"},
      {"{{ 'abc }}", "tag not closed"},
      {"{% for in y %}{% endfor %}", "line 1, column 11: expected 'in', found 'y'"},
      {"{{ a $ b }}", "unexpected character '$'"},
      {"{% endfor %}", "unknown statement 'endfor'"},
  };
  for (const Case& c : cases) {
    auto program = parse_template(c.source);
    ASSERT_FALSE(program.ok()) << c.source;
    EXPECT_NE(program.status().message().find(c.message), std::string::npos) << c.source << " -> " << program.status().message();
  }
}

TEST(JinjaParser, DeepNestingIsAnErrorNotACrash) {
  EXPECT_FALSE(parse_template("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").ok());
  EXPECT_FALSE(parse_template("{{ " + std::string(5000, '-') + "1 }}").ok());
  std::string nested;
  for (int i = 0; i < 500; ++i) nested += "{% if x %}";
  EXPECT_FALSE(parse_template(nested).ok());
}

TEST(JinjaValue, PythonStrAndJson) {
  EXPECT_EQ(py_float_repr(1.0), "1.0");
  EXPECT_EQ(py_float_repr(0.1), "0.1");
  EXPECT_EQ(py_float_repr(1e20), "1e+20");
  EXPECT_EQ(py_float_repr(1e-5), "1e-05");
  EXPECT_EQ(py_float_repr(123456.789), "123456.789");
  EXPECT_EQ(py_float_repr(-0.0001), "-0.0001");
  EXPECT_EQ(py_float_repr(1e16), "1e+16");
  EXPECT_EQ(py_float_repr(1234567890123456.0), "1234567890123456.0");
  const Value v = Value::from_json(nlohmann::ordered_json::parse(R"({"b": [1, 2.5, null, true], "a": "é\n\"x\""})"));
  EXPECT_EQ(*to_json(v, JsonOptions{}), R"({"b": [1, 2.5, null, true], "a": "é\n\"x\""})");
  EXPECT_EQ(py_str(v), R"({'b': [1, 2.5, None, True], 'a': 'é\n"x"'})");
  JsonOptions indented;
  indented.indent = 2;
  indented.item_separator = ",";
  EXPECT_EQ(*to_json(Value::from_json(nlohmann::ordered_json::parse(R"({"a": [1]})")), indented), "{\n  \"a\": [\n    1\n  ]\n}");
}

}  // namespace
}  // namespace ds::jinja
