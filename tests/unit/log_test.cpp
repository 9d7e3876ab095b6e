// --log-format json: every line is one JSON object a collector can parse whatever the message holds
// (quotes, control characters, bytes that are not UTF-8), with an event's fields as typed members.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "util/log.h"

namespace ds {
namespace {

TEST(JsonLog, AnyMessageIsOneParsableObjectWithTypedFields) {
  const std::string message = "a \"quoted\" \\ path\twith\ncontrol \x01 bytes, UTF-8 é ✓ and a lone \xff\xc3 byte";
  const std::string line = log::json_line(12.3456, log::Level::warn, message, "request",
                                          {{"id", std::string("chatcmpl-1")},
                                           {"prompt_tokens", int64_t{512}},
                                           {"ttft_s", 0.25},
                                           {"none", std::nan("")},
                                           {"stream", true}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  const auto json = nlohmann::json::parse(line);
  EXPECT_EQ(json["time"], 12.346);
  EXPECT_EQ(json["level"], "warn");
  EXPECT_EQ(json["event"], "request");
  EXPECT_EQ(json["message"], "a \"quoted\" \\ path\twith\ncontrol \x01 bytes, UTF-8 é ✓ and a lone \xef\xbf\xbd\xef\xbf\xbd byte");
  EXPECT_EQ(json["id"], "chatcmpl-1");
  EXPECT_EQ(json["prompt_tokens"], 512);
  EXPECT_DOUBLE_EQ(json["ttft_s"].get<double>(), 0.25);
  EXPECT_TRUE(json["none"].is_null());
  EXPECT_EQ(json["stream"], true);
  // A plain line has no event member.
  EXPECT_FALSE(nlohmann::json::parse(log::json_line(0.0, log::Level::info, "ready", "", {})).contains("event"));
}

}  // namespace
}  // namespace ds
