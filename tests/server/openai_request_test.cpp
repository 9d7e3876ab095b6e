// OpenAI request parsing on real-world bodies (tests/server/bodies: OpenAI reference examples and
// what clients such as the openai package, LangChain and vLLM's own tools send), and errors that
// name the field; the /metrics text with vLLM's names.
#include "server/openai_request.h"

#include <gtest/gtest.h>

#include "server/metrics.h"
#include "test_util.h"

namespace ds::server {
namespace {

std::string body(const std::string& name) { return test::read_file(std::string(DS_SERVER_BODIES_DIR) + "/" + name + ".json"); }

TEST(OpenAiRequest, RealWorldChatBodies) {
  const SamplingDefaults defaults{0.6f, 0.95f, 0.0f, 1.0f, 20};
  ChatCompletionRequest r;
  ASSERT_FALSE(parse_chat_request(body("chat_basic"), defaults, r));
  EXPECT_EQ(r.messages[0]["role"], "system");  // developer → system
  EXPECT_FLOAT_EQ(r.generation.sampling.temperature, 0.6f);  // generation_config default
  EXPECT_EQ(r.generation.sampling.top_k, 20);
  EXPECT_FALSE(r.generation.max_tokens.has_value());

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_stream_usage"), defaults, r));
  EXPECT_TRUE(r.generation.stream && r.generation.include_usage);
  EXPECT_EQ(*r.generation.max_tokens, 256);
  EXPECT_FLOAT_EQ(r.generation.sampling.top_p, 0.8f);

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_tools"), defaults, r));
  EXPECT_TRUE(r.parse_tool_calls);
  EXPECT_EQ(r.tools.size(), 1u);

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_tool_history"), defaults, r));
  EXPECT_TRUE(r.messages[1]["tool_calls"][0]["function"]["arguments"].is_object());  // parsed for the template
  EXPECT_EQ(r.messages[1]["tool_calls"][0]["function"]["arguments"]["days"], 2);

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_parts_logprobs"), defaults, r));
  EXPECT_EQ(r.generation.sampling.logprobs, 3);
  EXPECT_EQ(r.generation.n, 2);
  EXPECT_EQ(*r.generation.sampling.seed, 42u);
  EXPECT_EQ(r.generation.stop, (std::vector<std::string>{"\n\n", "END"}));

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_vllm_extras"), defaults, r));
  EXPECT_EQ(r.template_kwargs["enable_thinking"], false);
  EXPECT_FLOAT_EQ(r.generation.sampling.min_p, 0.05f);
  EXPECT_EQ(r.generation.sampling.stop_token_ids, (std::vector<int32_t>{248046}));
  EXPECT_EQ(*r.generation.max_tokens, 100);

  r = {};
  ASSERT_FALSE(parse_chat_request(body("chat_continue"), defaults, r));
  EXPECT_TRUE(r.continue_final_message);
  EXPECT_FALSE(r.add_generation_prompt);
}

TEST(OpenAiRequest, RefusalsNameTheField) {
  ChatCompletionRequest r;
  // An image_url part parses (the service loads its URL); one without a URL string, or video, does not.
  auto error = parse_chat_request(body("chat_image"), {}, r);
  ASSERT_FALSE(error) << error->message;
  EXPECT_EQ(r.messages[0]["content"][1]["image_url"]["url"], "https://example.com/cat.png");
  error = parse_chat_request(R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]})", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->param, "messages[0].content[0].image_url");
  EXPECT_NE(error->message.find("expected {\"url\""), std::string::npos) << error->message;
  error = parse_chat_request(R"({"messages": [{"role": "user", "content": [{"type": "video_url", "video_url": {"url": "x"}}]}]})", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->param, "messages[0].content[0]");
  EXPECT_NE(error->message.find("video is not supported"), std::string::npos) << error->message;
  error = parse_chat_request(body("chat_response_format"), {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->param, "response_format");
  error = parse_chat_request(body("bad_types"), {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->param, "temperature");
  EXPECT_NE(error->message.find("expected a number, found a string"), std::string::npos);
  for (const auto& [json, param] : std::vector<std::pair<std::string, std::string>>{
           {R"({"messages": [{"role": "user", "content": "x"}], "top_p": 0})", "top_p"},
           {R"({"messages": [{"role": "user", "content": "x"}], "n": 17})", "n"},
           {R"({"messages": [{"role": "user", "content": "x"}], "stop": ""})", "stop"},
           {R"({"messages": [{"role": "user", "content": "x"}], "seed": "1"})", "seed"},
           {R"({"messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": 1}})", "stream_options.include_usage"},
           {R"({"messages": []})", "messages"},
           {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}]})",
            "messages[0].tool_calls[0].function.arguments"},
           {R"({"messages": [{"role": "wizard", "content": "x"}]})", "messages[0].role"},
           {R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", "tools[0]"},
       }) {
    ChatCompletionRequest request;
    auto e = parse_chat_request(json, {}, request);
    ASSERT_TRUE(e) << json;
    EXPECT_EQ(e->param, param) << json << " → " << e->message;
    EXPECT_EQ(e->status, 400);
  }
}

TEST(OpenAiRequest, ErrorsSayWhereAndWhatWithoutContradiction) {
  ChatCompletionRequest r;
  auto error = parse_chat_request(R"({"messages": []})", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "messages: expected a non-empty list of messages, found an empty list");
  error = parse_chat_request(R"({"messages": {}})", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "messages: expected a non-empty list of messages, found an object");
  error = parse_chat_request(R"({"messages": [{"content": "x"}]})", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "messages[0].role: expected a string");  // not "messages: messages[0].role: ..."
  error = parse_chat_request("[1, 2]", {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "the request body must be a JSON object, found a list");
}

TEST(OpenAiRequest, MalformedJsonSaysWhereAndWhat) {
  for (const auto& [body, expected] : std::vector<std::pair<std::string, std::string>>{
           {"{not json", "the request body is not valid JSON: at line 1, column 3 (byte offset 2): invalid literal; last read: '{no'"},
           {"{\"messages\": [\n  {\"role\": \"user\",}\n]}", "at line 2, column 19 (byte offset 33): unexpected '}'"},
           {"{\"prompt\": \"caf\xe9\"}", "at line 1, column 16 (byte offset 15): invalid UTF-8 in a string: byte 0xE9"},
           {"{\"prompt\": \"\\ud83d x\"}", "lone UTF-16 surrogate in a string: a \\uD800-\\uDBFF escape must be followed by"},
           {"{\"prompt\": \"\\ude00\"}", "lone UTF-16 surrogate in a string: a \\uDC00-\\uDFFF escape must follow"},
           {std::string("\xff\xfe\0garbage", 10), "at line 1, column 1 (byte offset 0): invalid literal (found byte 0xFF"},
           {"", "at line 1, column 1 (byte offset 0): unexpected end of input"},
           {"{\"prompt\": \"x\", \"temperature\": 1e500}", "not valid JSON: a number out of range (beyond a double): '1e500'"},
       }) {
    CompletionRequest r;
    auto error = parse_completion_request(body, {}, r);
    ASSERT_TRUE(error) << body;
    EXPECT_EQ(error->status, 400);
    EXPECT_NE(error->message.find(expected), std::string::npos) << "expected \"" << expected << "\" in \"" << error->message << "\"";
  }
}

TEST(ApiError, StatusKindsMapToHttpOnce) {
  EXPECT_EQ(http_status(Status::error("bad").kind()), 400);
  EXPECT_EQ(http_status(Status::not_found("no model").kind()), 404);
  EXPECT_EQ(http_status(Status::overloaded("queue full").kind()), 429);
  EXPECT_EQ(http_status(Status::unavailable("shutting down").kind()), 503);
  EXPECT_EQ(http_status(Status::internal("bug").kind()), 500);
  const ApiError busy = api_error(Status::overloaded("queue full").with_context("submit"), "");
  EXPECT_EQ(busy.status, 429);  // the kind survives context
  EXPECT_EQ(busy.message, "submit: queue full");
  EXPECT_EQ(busy.type(), std::string("rate_limit_error"));
  EXPECT_EQ((ApiError{404, "no such model", "model", "model_not_found"}).body(),
            R"({"error":{"message":"no such model","type":"not_found_error","param":"model","code":"model_not_found"}})");
}

TEST(OpenAiRequest, Completions) {
  CompletionRequest r;
  ASSERT_FALSE(parse_completion_request(body("completion_text"), {}, r));
  EXPECT_EQ(std::get<std::string>(r.prompt), "Say this is a test");
  EXPECT_EQ(r.generation.sampling.logprobs, 2);
  EXPECT_FLOAT_EQ(r.generation.sampling.temperature, 0.0f);
  r = {};
  ASSERT_FALSE(parse_completion_request(body("completion_ids"), {}, r));
  EXPECT_EQ(std::get<std::vector<int32_t>>(r.prompt).size(), 4u);
  EXPECT_TRUE(r.generation.sampling.ignore_eos);
  r = {};
  auto error = parse_completion_request(body("completion_batch"), {}, r);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->param, "prompt");
  EXPECT_EQ((ApiError{429, "busy", "", ""}).type(), std::string("rate_limit_error"));
  EXPECT_EQ(bad_request("x", "top_p").body(), R"({"error":{"message":"x","type":"invalid_request_error","param":"top_p","code":400}})");
}

TEST(ServerMetrics, VllmNames) {
  ServerMetrics metrics("m");
  metrics.observe_ttft(0.3);
  metrics.count_finished("stop");
  EngineCounters counters;
  counters.running = 2;
  counters.num_blocks = 100;
  counters.blocks_used = 25;
  counters.prompt_tokens = 4;  // the engine's own count includes the start-up warm-up ...
  counters.generation_tokens = 2;
  counters.snapshot_capacity = 10;  // the prefix cache is on
  counters.prefix_hits = 99;        // the engine's own count, warm-up included, is not what is shown
  metrics.count_usage(5, 3, 0);  // ... the metrics count what responses' usage said
  metrics.count_usage(7, 1234567, 4);
  const std::string text = metrics.render(counters, 16);
  for (const char* needle : {"vllm:num_requests_running{model_name=\"m\"} 2", "vllm:num_requests_waiting{model_name=\"m\"} 0",
                             "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.25", "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.25",
                             "vllm:cache_config_info{model_name=\"m\",block_size=\"16\",num_gpu_blocks=\"100\"",
                             "vllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.5\"} 1",
                             "vllm:time_to_first_token_seconds_count{model_name=\"m\"} 1",
                             "vllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} 1",
                             "vllm:inter_token_latency_seconds_bucket", "vllm:prompt_tokens_total{model_name=\"m\"} 12\n",
                             "vllm:generation_tokens_total{model_name=\"m\"} 1234570\n",
                             "vllm:prefix_cache_queries_total{model_name=\"m\"} 12\n",
                             "vllm:prefix_cache_hits_total{model_name=\"m\"} 4\n", "process_resident_memory_bytes "})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  EXPECT_EQ(text.find("spec_decode"), std::string::npos) << "speculative decoding metrics without it configured";
}

TEST(ServerMetrics, SpeculativeDecodingAsVllmNamesIt) {
  ServerMetrics metrics("m");
  EngineCounters counters;
  counters.speculative_tokens = 3;
  counters.spec_drafts = 10;
  counters.spec_draft_tokens = 28;
  counters.spec_accepted_tokens = 13;
  counters.spec_accepted_per_position = {7, 4, 2};
  const std::string text = metrics.render(counters, 16);
  for (const char* needle : {"# TYPE vllm:spec_decode_num_drafts_total counter\nvllm:spec_decode_num_drafts_total{model_name=\"m\"} 10\n",
                             "vllm:spec_decode_num_draft_tokens_total{model_name=\"m\"} 28\n",
                             "vllm:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 13\n",
                             "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n"
                             "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"0\"} 7\n"
                             "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"1\"} 4\n"
                             "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"2\"} 2\n#"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
}

}  // namespace
}  // namespace ds::server
