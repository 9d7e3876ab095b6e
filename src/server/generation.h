// Generation: one accepted request's n engine streams turned into the HTTP response — SSE chunks
// as tokens arrive, or one JSON body at the end — with the request's metrics. A failed write means
// the client is gone: every choice is cancelled and its cache returned. A server that stops and
// aborts what still runs (Lifecycle::abort_in_flight) ends the choices with finish_reason "abort"
// and the reason as their error; a stream then ends with an error event, which the `openai`
// client raises.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request_stream.h"
#include "server/choice_output.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/openai_response.h"

namespace ds::server {

// Where a response body goes (an HTTP chunked writer, or a string in tests).
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  virtual bool write(std::string_view data) = 0;  // false: the client is gone
};

struct GenerationPlan {
  ResponseIdentity who;
  int64_t prompt_tokens = 0;
  bool stream = false;
  bool include_usage = false;
  bool chat = true;
  ChoiceSettings choice;
  std::chrono::steady_clock::time_point arrival;
};

class Generation {
 public:
  Generation(GenerationPlan plan, std::vector<std::shared_ptr<RequestStream>> streams, const Tokenizer& tokenizer,
             ServerMetrics& metrics);
  ~Generation();  // cancels whatever still runs
  // `lifecycle`: polled for a shutdown's abort (null: never aborted).
  void run(ResponseWriter& writer, const Lifecycle* lifecycle = nullptr);
  const char* content_type() const { return plan_.stream ? "text/event-stream" : "application/json"; }

 private:
  struct Choice {
    Choice(std::shared_ptr<RequestStream> s, ChoiceOutput o) : stream(std::move(s)), output(std::move(o)) {}
    std::shared_ptr<RequestStream> stream;
    ChoiceOutput output;
    std::string content, reasoning;  // accumulated (non-streaming)
    std::vector<ToolCallParser::ToolCall> tool_calls;
    std::vector<TokenLogprobView> logprobs;
    std::string finish_reason;       // empty while running
    std::string error;
    int64_t text_offset = 0;
    bool sent_role = false;
    std::chrono::steady_clock::time_point last_token;
    bool any_token = false;
  };
  // Reads what choice c has now; false when nothing arrived within `wait`.
  bool poll(Choice& c, std::chrono::milliseconds wait, ResponseWriter* stream_to, bool& client_gone);
  bool emit_delta(Choice& c, size_t index, const ChoiceDelta& delta, const char* finish, ResponseWriter& writer);
  void accumulate(Choice& c, const ChoiceDelta& delta);
  std::string final_body() const;
  int64_t cached_tokens() const;
  void cancel_all();
  void log_finished(int64_t completion_tokens) const;

  GenerationPlan plan_;
  const Tokenizer& tokenizer_;
  ServerMetrics& metrics_;
  std::vector<Choice> choices_;
  std::chrono::steady_clock::time_point first_token_{};  // of any choice; epoch: none yet
  std::string abort_reason_;                            // set when the server aborted this generation
};

}  // namespace ds::server
