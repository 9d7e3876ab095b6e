// OpenAI request parsing: a typed field reader that turns every mismatch into an ApiError with the
// field's path, then the per-endpoint rules (OpenAI's ranges, vLLM's extensions).
#include "server/openai_request.h"

#include <cmath>
#include <limits>

#include "server/json_body.h"
#include "util/str_cat.h"

namespace ds::server {
namespace {

using Json = nlohmann::ordered_json;

// Reads optional fields of one JSON object; the first error sticks and later reads do nothing.
class Fields {
 public:
  Fields(const Json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}
  std::optional<ApiError> error;

  const Json* get(const char* key) {
    if (error) return nullptr;
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string path(const char* key) const { return prefix_ + key; }
  void fail(const char* key, std::string message) { fail_at(path(key), std::move(message)); }
  // An error inside a field's value: `where` is its full path ("messages[0].role").
  void fail_at(const std::string& where, std::string message) {
    if (!error) error = bad_request(str_cat(where, ": ", message), where);
  }
  void number(const char* key, float& out, double min, double max) {
    const Json* v = get(key);
    if (!v) return;
    if (!v->is_number()) return fail(key, str_cat("expected a number, found ", json_kind(*v)));
    const double x = v->get<double>();
    if (!(x >= min && x <= max)) return fail(key, str_cat("expected a number in [", min, ", ", max, "], found ", x));
    out = static_cast<float>(x);
  }
  void integer(const char* key, int64_t& out, int64_t min, int64_t max) {
    const Json* v = get(key);
    if (!v) return;
    if (!v->is_number_integer()) {
      // 2.0 is accepted as 2 (JSON has one number type); 2.5 is not.
      if (v->is_number_float() && std::nearbyint(v->get<double>()) == v->get<double>() &&
          std::fabs(v->get<double>()) < 9e15) {
        out = static_cast<int64_t>(v->get<double>());
      } else {
        return fail(key, str_cat("expected an integer, found ", json_kind(*v)));
      }
    } else if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max)) {
      return fail(key, str_cat("expected an integer in [", min, ", ", max, "], found ", v->get<uint64_t>()));
    } else {
      out = v->get<int64_t>();
    }
    if (out < min || out > max) return fail(key, str_cat("expected an integer in [", min, ", ", max, "], found ", out));
  }
  void boolean(const char* key, bool& out) {
    const Json* v = get(key);
    if (!v) return;
    if (!v->is_boolean()) return fail(key, str_cat("expected true or false, found ", json_kind(*v)));
    out = v->get<bool>();
  }
  void string(const char* key, std::string& out) {
    const Json* v = get(key);
    if (!v) return;
    if (!v->is_string()) return fail(key, str_cat("expected a string, found ", json_kind(*v)));
    out = v->get<std::string>();
  }

 private:
  const Json& object_;
  std::string prefix_;
};

// The fields both endpoints share.
void parse_generation(Fields& f, const SamplingDefaults& d, GenerationRequest& g) {
  SamplingParams& s = g.sampling;
  s.temperature = d.temperature;
  s.top_p = d.top_p;
  s.top_k = d.top_k;
  s.min_p = d.min_p;
  s.repetition_penalty = d.repetition_penalty;
  f.string("model", g.model);
  f.number("temperature", s.temperature, 0.0, 1e6);
  f.number("top_p", s.top_p, 0.0, 1.0);
  if (!f.error && s.top_p <= 0.0f) f.fail("top_p", "expected a number in (0, 1], found 0");
  f.integer("top_k", s.top_k, -1, int64_t{1} << 30);
  f.number("min_p", s.min_p, 0.0, 1.0);
  f.number("presence_penalty", s.presence_penalty, -2.0, 2.0);
  f.number("frequency_penalty", s.frequency_penalty, -2.0, 2.0);
  f.number("repetition_penalty", s.repetition_penalty, 1e-6, 1e6);
  int64_t seed = 0;
  if (f.get("seed")) {
    f.integer("seed", seed, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    s.seed = static_cast<uint64_t>(seed);
  }
  int64_t max_tokens = 0;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (!f.get(key)) continue;
    f.integer(key, max_tokens, 1, int64_t{1} << 30);
    g.max_tokens = max_tokens;
  }
  f.integer("n", g.n, 1, 16);
  f.boolean("stream", g.stream);
  f.boolean("ignore_eos", s.ignore_eos);
  f.boolean("skip_special_tokens", g.skip_special_tokens);
  if (const Json* options = f.get("stream_options")) {
    if (!options->is_object()) return f.fail("stream_options", str_cat("expected an object, found ", json_kind(*options)));
    Fields o(*options, "stream_options.");
    o.boolean("include_usage", g.include_usage);
    if (o.error) f.error = o.error;
  }
  if (const Json* stop = f.get("stop")) {
    if (stop->is_string()) {
      g.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const Json& item : *stop) {
        if (!item.is_string()) return f.fail("stop", str_cat("expected a string or a list of strings, found a list holding ", json_kind(item)));
        g.stop.push_back(item.get<std::string>());
      }
    } else {
      return f.fail("stop", str_cat("expected a string or a list of strings, found ", json_kind(*stop)));
    }
    if (g.stop.size() > 16) return f.fail("stop", str_cat("expected at most 16 stop strings, found ", g.stop.size()));
    for (const std::string& text : g.stop)
      if (text.empty()) return f.fail("stop", "stop strings must not be empty");
  }
  if (const Json* ids = f.get("stop_token_ids")) {
    if (!ids->is_array()) return f.fail("stop_token_ids", str_cat("expected a list of token ids, found ", json_kind(*ids)));
    for (const Json& id : *ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
        return f.fail("stop_token_ids", "expected a list of token ids (integers >= 0)");
      s.stop_token_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  }
  if (const Json* format = f.get("response_format")) {
    const bool text = format->is_object() && format->contains("type") && (*format)["type"] == "text";
    if (!text) return f.fail("response_format", "only {\"type\": \"text\"} is supported (no guided decoding yet)");
  }
}

// A message's content: a string or a list of text and image_url parts ({"type": "image_url",
// "image_url": {"url": ...}}; the service loads the URLs, image_inputs.h). Video is refused.
void check_content(Fields& f, const Json& content, const std::string& path) {
  if (content.is_null() || content.is_string()) return;
  if (!content.is_array()) return f.fail_at(str_cat(path, ".content"), str_cat("expected a string or a list of parts, found ", json_kind(content)));
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string where = str_cat(path, ".content[", i, "]");
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      return f.fail_at(where, "expected an object with a \"type\"");
    const std::string type = part["type"].get<std::string>();
    if (type == "image_url") {
      const bool has_url = part.contains("image_url") && part["image_url"].is_object() &&
                           part["image_url"].contains("url") && part["image_url"]["url"].is_string();
      if (!has_url)
        return f.fail_at(str_cat(where, ".image_url"), "expected {\"url\": \"data:image/...;base64,...\"} (or a file:// URL)");
      continue;
    }
    if (type == "image" || type == "input_image")
      return f.fail_at(where, str_cat("unknown content part type \"", type, "\"; images are {\"type\": \"image_url\", ",
                                      "\"image_url\": {\"url\": \"data:image/png;base64,...\"}}"));
    if (type == "video" || type == "video_url") return f.fail_at(where, "video is not supported (images are)");
    if (type != "text") return f.fail_at(where, str_cat("unknown content part type \"", type, "\""));
    if (!part.contains("text") || !part["text"].is_string()) return f.fail_at(str_cat(where, ".text"), "expected a string");
  }
}

void parse_messages(Fields& f, const Json* messages, Json& out) {
  if (!messages) return f.fail("messages", "required: a non-empty list of messages");
  if (!messages->is_array()) return f.fail("messages", str_cat("expected a non-empty list of messages, found ", json_kind(*messages)));
  if (messages->empty()) return f.fail("messages", "expected a non-empty list of messages, found an empty list");
  out = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    Json m = (*messages)[i];
    const std::string path = str_cat("messages[", i, "]");
    if (!m.is_object()) return f.fail_at(path, str_cat("expected an object, found ", json_kind(m)));
    if (!m.contains("role") || !m["role"].is_string()) return f.fail_at(str_cat(path, ".role"), "expected a string");
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" && role != "tool")
      return f.fail_at(str_cat(path, ".role"), str_cat("expected system, developer, user, assistant or tool, found \"", role, "\""));
    if (role == "developer") m["role"] = "system";  // OpenAI's newer name; the template knows system
    if (m.contains("content")) check_content(f, m["content"], path);
    if (f.error) return;
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      Json& calls = m["tool_calls"];
      if (!calls.is_array()) return f.fail_at(str_cat(path, ".tool_calls"), "expected a list");
      for (size_t c = 0; c < calls.size(); ++c) {
        Json& call = calls[c];
        const std::string where = str_cat(path, ".tool_calls[", c, "]");
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
            !call["function"].contains("name") || !call["function"]["name"].is_string())
          return f.fail_at(where, "expected {\"function\": {\"name\": ..., \"arguments\": ...}}");
        Json& arguments = call["function"]["arguments"];
        // The template iterates arguments as a mapping; OpenAI sends them as JSON text.
        if (arguments.is_string()) {
          Json parsed = Json::parse(arguments.get<std::string>(), nullptr, false);
          if (parsed.is_discarded() || !parsed.is_object())
            return f.fail_at(str_cat(where, ".function.arguments"), "expected a JSON object in a string");
          arguments = std::move(parsed);
        } else if (arguments.is_null()) {
          arguments = Json::object();
        } else if (!arguments.is_object()) {
          return f.fail_at(str_cat(where, ".function.arguments"), "expected a JSON object in a string");
        }
      }
    }
    out.push_back(std::move(m));
  }
}

void parse_tools(Fields& f, ChatCompletionRequest& out) {
  const Json* tools = f.get("tools");
  if (tools) {
    if (!tools->is_array()) return f.fail("tools", str_cat("expected a list of tools, found ", json_kind(*tools)));
    for (size_t i = 0; i < tools->size(); ++i) {
      const Json& tool = (*tools)[i];
      if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() ||
          !tool["function"].contains("name") || !tool["function"]["name"].is_string())
        return f.fail_at(str_cat("tools[", i, "]"), "expected {\"type\": \"function\", \"function\": {\"name\": ...}}");
      if (tool.contains("type") && tool["type"] != "function")
        return f.fail_at(str_cat("tools[", i, "].type"), "only \"function\" tools are supported");
    }
  }
  std::string choice = "auto";
  if (const Json* tool_choice = f.get("tool_choice")) {
    if (tool_choice->is_string()) {
      choice = tool_choice->get<std::string>();
      if (choice != "auto" && choice != "none" && choice != "required")
        return f.fail("tool_choice", str_cat("expected \"auto\", \"none\", \"required\" or a function, found \"", choice, "\""));
    } else if (tool_choice->is_object()) {
      choice = "named";
    } else {
      return f.fail("tool_choice", str_cat("expected a string or an object, found ", json_kind(*tool_choice)));
    }
  }
  if (choice == "required" || choice == "named")
    return f.fail("tool_choice", "forcing a tool call needs guided decoding, which this server does not have yet; use \"auto\"");
  if (tools && !tools->empty() && choice == "auto") {
    out.tools = *tools;
    out.parse_tool_calls = true;
  }
}

}  // namespace

std::optional<ApiError> parse_chat_request(const std::string& body, const SamplingDefaults& defaults,
                                           ChatCompletionRequest& out) {
  Json json;
  if (auto error = parse_json_object(body, json)) return error;
  Fields f(json, "");
  parse_generation(f, defaults, out.generation);
  parse_messages(f, f.get("messages"), out.messages);
  parse_tools(f, out);
  bool logprobs = false;
  f.boolean("logprobs", logprobs);
  int64_t top_logprobs = 0;
  f.integer("top_logprobs", top_logprobs, 0, kMaxLogprobs);
  if (!f.error && top_logprobs > 0 && !logprobs) f.fail("top_logprobs", "needs \"logprobs\": true");
  out.generation.sampling.logprobs = logprobs ? top_logprobs : -1;
  if (const Json* kwargs = f.get("chat_template_kwargs")) {
    if (!kwargs->is_object()) f.fail("chat_template_kwargs", str_cat("expected an object, found ", json_kind(*kwargs)));
    else out.template_kwargs = *kwargs;
  }
  f.boolean("add_generation_prompt", out.add_generation_prompt);
  f.boolean("continue_final_message", out.continue_final_message);
  if (!f.error && out.add_generation_prompt && out.continue_final_message)
    f.fail("continue_final_message", "cannot be combined with add_generation_prompt; set add_generation_prompt to false");
  return f.error;
}

std::optional<ApiError> parse_completion_request(const std::string& body, const SamplingDefaults& defaults,
                                                 CompletionRequest& out) {
  Json json;
  if (auto error = parse_json_object(body, json)) return error;
  Fields f(json, "");
  parse_generation(f, defaults, out.generation);
  const Json* prompt = f.get("prompt");
  if (!f.error) {
    if (!prompt) {
      f.fail("prompt", "required: a string or a list of token ids");
    } else if (prompt->is_string()) {
      out.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
      std::vector<int32_t> ids;
      for (const Json& id : *prompt) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
          return bad_request("prompt: expected a list of token ids (integers >= 0)", "prompt");
        ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
      }
      out.prompt = std::move(ids);
    } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
      out.prompt = (*prompt)[0].get<std::string>();  // a batch of one text
    } else {
      f.fail("prompt", "expected a string or a list of token ids (batches of several prompts are not supported; send one request each)");
    }
  }
  int64_t logprobs = -1;
  if (f.get("logprobs")) f.integer("logprobs", logprobs, 0, kMaxLogprobs);
  out.generation.sampling.logprobs = logprobs;
  f.boolean("echo", out.echo);
  if (!f.error && out.echo) f.fail("echo", "echo is not supported yet");
  if (const Json* suffix = f.get("suffix"); suffix && !f.error) f.fail("suffix", "suffix is not supported");
  return f.error;
}

}  // namespace ds::server
