// parse_json: nlohmann's parse errors rewritten for API clients — its position is a byte
// count and its text quotes raw bytes, so the message is rebuilt from the offset and the reason.
// A number that overflows a double is its other exception (out_of_range), caught here too so
// that it stays a 400 and never reaches the server's exception handler (500).
#include "server/json_body.h"

#include <algorithm>
#include <string_view>

#include "tokenizer/utf8.h"
#include "util/str_cat.h"

namespace ds::server {
namespace {

std::string hex_byte(unsigned char c) {
  const char* digits = "0123456789ABCDEF";
  return str_cat("0x", digits[c >> 4], digits[c & 15]);
}

// nlohmann's "...: syntax error while parsing value - invalid string: ...; last read: '...'" →
// the reason alone ("invalid string: ..."), with the "last read" quote only when it is plain ASCII.
std::string reason_of(const std::string& what) {
  std::string reason = what;
  if (const size_t dash = reason.find(" - "); dash != std::string::npos) reason = reason.substr(dash + 3);
  else if (const size_t colon = reason.find(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
  if (const size_t quote = reason.find("; last read: '"); quote != std::string::npos) {
    const size_t end = reason.find("'", quote + 14);
    const std::string read = reason.substr(quote + 14, end == std::string::npos ? std::string::npos : end - quote - 14);
    const bool plain = std::all_of(read.begin(), read.end(), [](char c) { return c >= 0x20 && c < 0x7f; }) &&
                       read.find("<U+") == std::string::npos;
    if (!plain) reason.erase(quote, end == std::string::npos ? std::string::npos : end + 1 - quote);
  }
  return reason;
}

}  // namespace

Status parse_json(const std::string& body, nlohmann::ordered_json& out) {
  try {
    out = nlohmann::ordered_json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string what = e.what();
    const bool bad_utf8 = what.find("ill-formed UTF-8") != std::string::npos;
    // e.byte counts the bytes read, the bad one included; inside a broken UTF-8 sequence that is
    // past its start, which the UTF-8 validator finds.
    size_t offset = std::min(e.byte > 0 ? e.byte - 1 : 0, body.empty() ? 0 : body.size() - 1);
    if (bad_utf8 || (!body.empty() && static_cast<unsigned char>(body[offset]) >= 0x80))
      offset = std::min(offset, utf8::valid_prefix(body));
    const auto before = std::string_view(body).substr(0, offset);
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t newline = before.rfind('\n');
    const size_t column = offset - (newline == std::string_view::npos ? 0 : newline + 1) + 1;
    const auto byte = body.empty() ? 0 : static_cast<unsigned char>(body[offset]);
    std::string reason;
    if (bad_utf8) {
      reason = str_cat("invalid UTF-8 in a string: byte ", hex_byte(byte), " starts no valid UTF-8 sequence");
    } else if (what.find("must be followed by U+DC00") != std::string::npos) {
      reason = "lone UTF-16 surrogate in a string: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape";
    } else if (what.find("must follow U+D800") != std::string::npos) {
      reason = "lone UTF-16 surrogate in a string: a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF escape";
    } else {
      reason = reason_of(what);
      if (byte >= 0x80) reason += str_cat(" (found byte ", hex_byte(byte), "; outside strings JSON is ASCII)");
    }
    return Status::errorf("the request body is not valid JSON: at line ", line, ", column ", column, " (byte offset ", offset, "): ", reason);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double ("1e500"): nlohmann gives no position, but quotes the literal.
    const std::string what = e.what();
    const size_t quote = what.find('\'');
    return Status::errorf("the request body is not valid JSON: a number out of range (beyond a double): ",
                          quote == std::string::npos ? what : what.substr(quote));
  }
  return {};
}

std::optional<ApiError> parse_json_object(const std::string& body, nlohmann::ordered_json& out) {
  if (Status parsed = parse_json(body, out); !parsed.ok()) return bad_request(parsed.message());
  if (!out.is_object()) return bad_request(str_cat("the request body must be a JSON object, found ", json_kind(out)));
  return std::nullopt;
}

const char* json_kind(const nlohmann::ordered_json& v) {
  using Json = nlohmann::ordered_json;
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "a list";
    case Json::value_t::object: return "an object";
    case Json::value_t::number_float: return "a number";
    default: return "an integer";
  }
}

}  // namespace ds::server
