// Generation: round-robin over the choices' streams; each event goes through the choice's output
// pipeline and out as a chunk (streaming) or into the accumulated message (not streaming).
#include "server/generation.h"

#include "server/api_error.h"
#include "server/request_log.h"

namespace ds::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kKeepAlive = std::chrono::seconds(1);  // silence after which a keep-alive is written

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const char* openai_finish(FinishReason reason, bool stopped_by_string, bool tool_calls) {
  if (reason == FinishReason::length && !stopped_by_string) return "length";
  if (reason == FinishReason::stop || stopped_by_string) return tool_calls ? "tool_calls" : "stop";
  return reason == FinishReason::cancelled ? "abort" : "error";
}

}  // namespace

Generation::Generation(GenerationPlan plan, std::vector<std::shared_ptr<RequestStream>> streams,
                       const Tokenizer& tokenizer, ServerMetrics& metrics)
    : plan_(std::move(plan)), tokenizer_(tokenizer), metrics_(metrics) {
  for (auto& stream : streams) choices_.emplace_back(std::move(stream), ChoiceOutput(tokenizer_, plan_.choice));
}

Generation::~Generation() { cancel_all(); }

void Generation::cancel_all() {
  for (Choice& c : choices_)
    if (c.stream) c.stream->cancel();
}

void Generation::accumulate(Choice& c, const ChoiceDelta& d) {
  c.content += d.content;
  c.reasoning += d.reasoning;
  for (const auto& call : d.tool_calls) c.tool_calls.push_back(call);
  for (const auto& lp : d.logprobs) c.logprobs.push_back(lp);
}

bool Generation::emit_delta(Choice& c, size_t index, const ChoiceDelta& d, const char* finish, ResponseWriter& writer) {
  if (d.empty() && !finish && c.sent_role) return true;
  Json body;
  Json logprobs = nullptr;
  if (plan_.chat) {
    body = Json::object();
    if (!c.sent_role) {
      body["role"] = "assistant";
      c.sent_role = true;
    }
    if (!d.reasoning.empty()) body["reasoning_content"] = d.reasoning;
    if (!d.content.empty() || (body.contains("role") && d.reasoning.empty() && d.tool_calls.empty())) body["content"] = d.content;
    if (!d.tool_calls.empty()) body["tool_calls"] = tool_calls_json(d.tool_calls, true);
    if (plan_.choice.logprobs && !d.logprobs.empty()) logprobs = chat_logprobs_json(d.logprobs);
  } else {
    body = d.content;
    c.sent_role = true;
    if (plan_.choice.logprobs && !d.logprobs.empty()) {
      logprobs = completion_logprobs_json(d.logprobs, c.text_offset);
    }
    c.text_offset += static_cast<int64_t>(d.content.size());
  }
  return writer.write(sse(chunk_json(plan_.who, static_cast<int64_t>(index), body, logprobs, finish, plan_.include_usage)));
}

bool Generation::poll(Choice& c, std::chrono::milliseconds wait, ResponseWriter* stream_to, bool& client_gone) {
  auto event = c.stream->next(wait);
  if (!event) return false;
  const size_t index = static_cast<size_t>(&c - choices_.data());
  ChoiceDelta delta;
  for (const SampledToken& token : event->tokens) {
    const auto now = Clock::now();
    if (!c.any_token) {
      metrics_.observe_ttft(seconds(now - plan_.arrival));
      c.any_token = true;
      if (first_token_ == Clock::time_point{}) first_token_ = now;
    } else {
      metrics_.observe_inter_token(seconds(now - c.last_token));
    }
    c.last_token = now;
    ChoiceDelta d = c.output.push(token);
    delta.content += d.content;
    delta.reasoning += d.reasoning;
    for (auto& call : d.tool_calls) delta.tool_calls.push_back(std::move(call));
    for (auto& lp : d.logprobs) delta.logprobs.push_back(std::move(lp));
  }
  const char* finish = nullptr;
  if (event->finish) {
    if (!c.output.stopped()) {
      ChoiceDelta rest = c.output.finish();
      delta.content += rest.content;
      delta.reasoning += rest.reasoning;
      for (auto& call : rest.tool_calls) delta.tool_calls.push_back(std::move(call));
    }
    finish = openai_finish(*event->finish, c.output.stopped(), c.output.saw_tool_calls());
    c.finish_reason = finish;
    c.error = *event->finish == FinishReason::cancelled && !abort_reason_.empty() ? abort_reason_ : event->error;
    metrics_.count_finished(finish);
    metrics_.observe_e2e(seconds(Clock::now() - plan_.arrival));
  }
  if (stream_to) {
    if (!emit_delta(c, index, delta, finish, *stream_to)) client_gone = true;
  } else {
    accumulate(c, delta);
  }
  return true;
}

void Generation::run(ResponseWriter& writer, const Lifecycle* lifecycle) {
  auto last_write = Clock::now();
  bool client_gone = false;
  auto running = [&] {
    for (const Choice& c : choices_)
      if (c.finish_reason.empty()) return true;
    return false;
  };
  while (running() && !client_gone) {
    if (lifecycle && lifecycle->aborting() && abort_reason_.empty()) {
      abort_reason_ = lifecycle->abort_reason();
      cancel_all();  // each choice ends at the engine's next step, as "abort" with the reason
    }
    const auto wait = std::chrono::milliseconds(choices_.size() == 1 ? 200 : 5);
    bool any = false;
    for (Choice& c : choices_)
      if (c.finish_reason.empty()) any |= poll(c, wait, plan_.stream ? &writer : nullptr, client_gone);
    if (any && plan_.stream) last_write = Clock::now();
    // Only a write tells a closed connection apart: after a second of silence write something the
    // client ignores — an SSE comment, or whitespace before the JSON body.
    if (!client_gone && Clock::now() - last_write > kKeepAlive) {
      client_gone = !writer.write(plan_.stream ? std::string_view(": keep-alive\n\n") : std::string_view(" "));
      last_write = Clock::now();
    }
  }
  int64_t completion = 0;
  for (const Choice& c : choices_) completion += c.output.tokens();
  metrics_.count_usage(plan_.prompt_tokens, completion, cached_tokens());
  if (client_gone) {  // nobody reads the rest: cancel, and count the unfinished choices as aborted
    cancel_all();
    for (Choice& c : choices_)
      if (c.finish_reason.empty()) {
        c.finish_reason = "abort";
        metrics_.count_finished("abort");
        metrics_.observe_e2e(seconds(Clock::now() - plan_.arrival));
      }
    log_finished(completion);
    return;
  }
  if (plan_.stream) {
    if (!abort_reason_.empty() && !writer.write(sse(Json::parse(ApiError{503, abort_reason_, "", ""}.body())))) return;
    if (plan_.include_usage) {
      if (!writer.write(sse(usage_chunk_json(plan_.who, usage_json(plan_.prompt_tokens, completion, cached_tokens()))))) return;
    }
    writer.write("data: [DONE]\n\n");
  } else {
    writer.write(final_body());
  }
  log_finished(completion);
}

void Generation::log_finished(int64_t completion_tokens) const {
  FinishedRequest r;
  r.id = plan_.who.id;
  r.route = plan_.chat ? "/v1/chat/completions" : "/v1/completions";
  r.stream = plan_.stream;
  r.choices = static_cast<int64_t>(choices_.size());
  r.prompt_tokens = plan_.prompt_tokens;
  r.cached_tokens = cached_tokens();
  r.completion_tokens = completion_tokens;
  const auto now = Clock::now();
  if (first_token_ != Clock::time_point{}) r.ttft_s = seconds(first_token_ - plan_.arrival);
  r.duration_s = seconds(now - plan_.arrival);
  for (const Choice& c : choices_) r.finish += (r.finish.empty() ? "" : ",") + c.finish_reason;
  server::log_finished(r);
}

int64_t Generation::cached_tokens() const {
  // The choices share one prompt; the first one's admission is the one a client waits for.
  return choices_.empty() ? 0 : choices_.front().stream->cached_tokens();
}

std::string Generation::final_body() const {
  Json choices = Json::array();
  int64_t completion = 0;
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    completion += c.output.tokens();
    Json choice{{"index", i}};
    if (plan_.chat) {
      // With tool calls, the newlines the format leaves around them are not content.
      const bool blank = c.content.find_first_not_of(" \n\r\t") == std::string::npos;
      Json message{{"role", "assistant"}, {"content", blank && !c.tool_calls.empty() ? Json(nullptr) : Json(c.content)}};
      if (!c.reasoning.empty()) message["reasoning_content"] = c.reasoning;
      if (!c.tool_calls.empty()) message["tool_calls"] = tool_calls_json(c.tool_calls, false);
      choice["message"] = message;
      choice["logprobs"] = plan_.choice.logprobs ? chat_logprobs_json(c.logprobs) : Json(nullptr);
    } else {
      choice["text"] = c.content;
      choice["logprobs"] = plan_.choice.logprobs ? completion_logprobs_json(c.logprobs, 0) : Json(nullptr);
    }
    choice["finish_reason"] = c.finish_reason;
    if (!c.error.empty()) choice["error"] = c.error;
    choices.push_back(std::move(choice));
  }
  Json body{{"id", plan_.who.id}, {"object", plan_.chat ? "chat.completion" : "text_completion"}, {"created", plan_.who.created},
            {"model", plan_.who.model}, {"choices", choices}, {"usage", usage_json(plan_.prompt_tokens, completion, cached_tokens())}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ds::server
