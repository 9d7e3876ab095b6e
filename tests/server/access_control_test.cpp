// Access control: API keys (constant-time comparison, Bearer parsing, key files), the CORS policy
// (origin matching, preflight answers, flag lists), /detokenize and /tokenize body parsing, and
// both through a real HttpServer (no model: an authorized API call meets 503 "still loading").
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "server/api_keys.h"
#include "server/cors.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/tokenize_request.h"

namespace ds::server {
namespace {

TEST(ApiKeys, ConstantTimeEqualCompares) {
  EXPECT_TRUE(constant_time_equal("secret", "secret"));
  EXPECT_FALSE(constant_time_equal("secret", "secreT"));
  EXPECT_FALSE(constant_time_equal("secret", "secret2"));
  EXPECT_FALSE(constant_time_equal("secretsecret", "secret"));  // a repeat of the shorter text is no match
  EXPECT_FALSE(constant_time_equal("", "x"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(ApiKeys, AcceptsBearerWithAnyConfiguredKey) {
  const ApiKeys keys({"alpha-key", "beta-key"});
  EXPECT_TRUE(keys.enabled());
  EXPECT_EQ(keys.count(), 2u);
  EXPECT_TRUE(keys.accepts("Bearer alpha-key"));
  EXPECT_TRUE(keys.accepts("bearer beta-key"));  // the scheme is case-insensitive
  EXPECT_TRUE(keys.accepts("  Bearer   beta-key  "));
  EXPECT_FALSE(keys.accepts("Bearer gamma-key"));
  EXPECT_FALSE(keys.accepts("Bearer alpha-ke"));
  EXPECT_FALSE(keys.accepts("Bearer "));
  EXPECT_FALSE(keys.accepts("alpha-key"));  // no scheme
  EXPECT_FALSE(keys.accepts("Basic alpha-key"));
  EXPECT_FALSE(keys.accepts(""));
  EXPECT_FALSE(ApiKeys().enabled());
}

TEST(ApiKeys, KeyFileHoldsOneKeyPerLine) {
  const std::string path = ::testing::TempDir() + "/deltaserve-keys.txt";
  std::ofstream(path) << "  first-key \n\n second-key\r\n";
  auto keys = read_api_key_file(path);
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(*keys, (std::vector<std::string>{"first-key", "second-key"}));
  std::ofstream(path) << "\n  \n";
  auto empty = read_api_key_file(path);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("found no key"), std::string::npos) << empty.status().message();
  std::remove(path.c_str());
  auto missing = read_api_key_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos) << missing.status().message();
}

CorsPolicy policy_for(std::vector<std::string> origins) {
  CorsPolicy policy;
  policy.origins = std::move(origins);
  return policy;
}

TEST(Cors, MatchesOriginsExactly) {
  const CorsPolicy policy = policy_for({"http://localhost:3000", "https://app.example.com/"});
  EXPECT_TRUE(policy.allows_origin("http://localhost:3000"));
  EXPECT_TRUE(policy.allows_origin("https://APP.example.com"));  // a trailing / in the flag is ignored
  EXPECT_FALSE(policy.allows_origin("http://localhost:3001"));
  EXPECT_FALSE(policy.allows_origin("https://app.example.com.evil.net"));
  EXPECT_FALSE(policy.allows_origin("http://app.example.com"));  // another scheme
  EXPECT_FALSE(policy.allows_origin(""));
  EXPECT_TRUE(policy_for({"*"}).allows_origin("http://anything"));
  EXPECT_FALSE(CorsPolicy().enabled());
}

std::string header(const HeaderList& headers, const std::string& name) {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return "(absent)";
}

TEST(Cors, ResponseHeadersNameTheOriginOrStar) {
  const CorsPolicy one = policy_for({"http://localhost:3000"});
  HeaderList h = one.response_headers("http://localhost:3000");
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(header(h, "Vary"), "Origin");
  EXPECT_TRUE(one.response_headers("http://elsewhere").empty());
  EXPECT_EQ(header(policy_for({"*"}).response_headers("http://a"), "Access-Control-Allow-Origin"), "*");
  CorsPolicy credentials = policy_for({"*"});
  credentials.allow_credentials = true;  // browsers refuse "*" with credentials
  h = credentials.response_headers("http://a");
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "http://a");
  EXPECT_EQ(header(h, "Access-Control-Allow-Credentials"), "true");
}

TEST(Cors, PreflightAllowsAuthorizationAndContentType) {
  const CorsPolicy policy = policy_for({"http://localhost:3000"});
  PreflightAnswer a = answer_preflight(policy, "http://localhost:3000", "POST", "authorization, content-type");
  EXPECT_EQ(a.status, 204);
  EXPECT_EQ(header(a.headers, "Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(header(a.headers, "Access-Control-Allow-Headers"), "authorization, content-type");
  EXPECT_NE(header(a.headers, "Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_EQ(header(a.headers, "Access-Control-Max-Age"), "600");
  a = answer_preflight(policy, "http://localhost:3000", "GET", "");
  EXPECT_EQ(header(a.headers, "Access-Control-Allow-Headers"), "Authorization, Content-Type");
}

TEST(Cors, PreflightRefusesWhatIsNotAllowed) {
  CorsPolicy policy = policy_for({"http://localhost:3000"});
  PreflightAnswer a = answer_preflight(policy, "http://evil.example", "POST", "");
  EXPECT_EQ(a.status, 403);
  EXPECT_TRUE(a.headers.empty());
  EXPECT_NE(a.refusal.find("http://evil.example"), std::string::npos) << a.refusal;
  policy.methods = {"GET", "POST"};
  policy.headers = {"Authorization", "Content-Type"};
  EXPECT_EQ(answer_preflight(policy, "http://localhost:3000", "DELETE", "").status, 403);
  a = answer_preflight(policy, "http://localhost:3000", "POST", "Content-Type, X-Custom");
  EXPECT_EQ(a.status, 403);
  EXPECT_NE(a.refusal.find("X-Custom"), std::string::npos) << a.refusal;
  a = answer_preflight(policy, "http://localhost:3000", "post", "content-type");
  EXPECT_EQ(a.status, 204) << a.refusal;
  EXPECT_EQ(header(a.headers, "Access-Control-Allow-Methods"), "GET, POST");
}

TEST(Cors, FlagListsAreJsonOrCommaSeparated) {
  std::vector<std::string> out;
  EXPECT_EQ(parse_flag_list(R"(["http://a", "http://b"])", out), "");
  EXPECT_EQ(parse_flag_list("http://c, http://d,", out), "");
  EXPECT_EQ(out, (std::vector<std::string>{"http://a", "http://b", "http://c", "http://d"}));
  EXPECT_NE(parse_flag_list("[\"http://a\"", out), "");
  EXPECT_NE(parse_flag_list("[1]", out), "");
}

TEST(TokenizeRequest, FormIsPromptOrMessages) {
  auto kind = tokenize_request_kind(R"({"prompt": "hi"})");
  ASSERT_TRUE(std::holds_alternative<TokenizeKind>(kind));
  EXPECT_EQ(std::get<TokenizeKind>(kind), TokenizeKind::prompt);
  kind = tokenize_request_kind(R"({"messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_TRUE(std::holds_alternative<TokenizeKind>(kind));
  EXPECT_EQ(std::get<TokenizeKind>(kind), TokenizeKind::chat);
  EXPECT_TRUE(std::holds_alternative<ApiError>(tokenize_request_kind("{}")));
  EXPECT_TRUE(std::holds_alternative<ApiError>(tokenize_request_kind(R"({"prompt": "a", "messages": []})")));
  EXPECT_TRUE(std::holds_alternative<ApiError>(tokenize_request_kind("[1]")));
}

TEST(DetokenizeRequest, IdsMustBeInTheVocabulary) {
  DetokenizeRequest request;
  EXPECT_FALSE(parse_detokenize_request(R"({"tokens": [0, 5, 99], "model": "m"})", 100, request));
  EXPECT_EQ(request.tokens, (std::vector<int32_t>{0, 5, 99}));
  EXPECT_EQ(request.model, "m");
  for (const char* body : {R"({"tokens": [1, 100]})", R"({"tokens": [-1]})", R"({"tokens": [18446744073709551615]})"}) {
    DetokenizeRequest bad;
    auto error = parse_detokenize_request(body, 100, bad);
    ASSERT_TRUE(error) << body;
    EXPECT_NE(error->message.find("outside the vocabulary [0, 100)"), std::string::npos) << error->message;
  }
  DetokenizeRequest bad;
  auto error = parse_detokenize_request(R"({"tokens": [1, 100]})", 100, bad);
  ASSERT_TRUE(error);
  EXPECT_NE(error->message.find("tokens[1]: token id 100"), std::string::npos) << error->message;
  EXPECT_TRUE(parse_detokenize_request(R"({"tokens": "1 2"})", 100, bad));
  EXPECT_TRUE(parse_detokenize_request(R"({"tokens": [1.5]})", 100, bad));
  EXPECT_TRUE(parse_detokenize_request(R"({})", 100, bad));
}

// A listening HttpServer with these options, without a model: an API route that passes the key
// check answers 503 (still loading), one that does not answers 401.
HttpOptions on_any_free_port(HttpOptions options) {
  options.port = 0;
  options.threads = 4;
  return options;
}

class ServerWithAccess {
 public:
  explicit ServerWithAccess(const HttpOptions& options) : http_(on_any_free_port(options), metrics_) {
    EXPECT_TRUE(http_.bind().ok());
    listener_ = std::thread([this] { http_.serve(); });
  }
  ~ServerWithAccess() {
    http_.stop();
    listener_.join();
  }
  httplib::Client client() { return httplib::Client("127.0.0.1", http_.port()); }

 private:
  ServerMetrics metrics_{"test"};
  HttpServer http_;
  std::thread listener_;
};

TEST(HttpAccess, KeyNeededEverywhereButProbes) {
  HttpOptions options;
  options.api_keys = ApiKeys({"k1"});
  ServerWithAccess server(options);
  httplib::Client client = server.client();
  for (const char* probe : {"/health", "/ready", "/metrics"}) {
    auto res = client.Get(probe);
    ASSERT_TRUE(res) << probe;
    EXPECT_NE(res->status, 401) << probe;
  }
  auto res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("\"code\":\"invalid_api_key\""), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("\"type\":\"invalid_request_error\""), std::string::npos) << res->body;
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
  res = client.Post("/tokenize", httplib::Headers{{"Authorization", "Bearer wrong"}}, "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->body.find("wrong"), std::string::npos) << "the presented key is never echoed: " << res->body;
  res = client.Get("/v1/models", httplib::Headers{{"Authorization", "Bearer k1"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;  // past the key check: the model is still loading
  res = client.Get("/no/such/route");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);  // without a key, not even which routes exist
}

TEST(HttpAccess, PreflightAnsweredWithoutKeyAndResponsesCarryCors) {
  HttpOptions options;
  options.api_keys = ApiKeys({"k1"});
  options.cors.origins = {"http://localhost:3000"};
  ServerWithAccess server(options);
  httplib::Client client = server.client();
  auto res = client.Options("/v1/chat/completions", httplib::Headers{{"Origin", "http://localhost:3000"},
                                                                     {"Access-Control-Request-Method", "POST"},
                                                                     {"Access-Control-Request-Headers", "authorization,content-type"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Headers"), "authorization, content-type");
  res = client.Options("/v1/chat/completions", httplib::Headers{{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  // A 401 to an allowed origin carries CORS headers, so the page can read why.
  res = client.Get("/v1/models", httplib::Headers{{"Origin", "http://localhost:3000"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(res->get_header_value("Vary"), "Origin");
  res = client.Get("/health", httplib::Headers{{"Origin", "http://evil.example"}});
  ASSERT_TRUE(res);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
}

TEST(HttpAccess, CorsOffByDefault) {
  ServerWithAccess server{HttpOptions{}};
  httplib::Client client = server.client();
  auto res = client.Get("/health", httplib::Headers{{"Origin", "http://localhost:3000"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);  // no key asked for
}

}  // namespace
}  // namespace ds::server
