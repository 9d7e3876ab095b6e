// StopStringCondition: a request's stop strings, decided on the engine thread. It detokenizes the
// tokens the engine commits as the client's ChoiceOutput does (the same decoder settings and stop
// matcher over the same tokens), so the engine ends the request at the very token whose text
// completes a stop string — the token where ChoiceOutput cuts the text — and never generates past it.
#pragma once

#include <string>
#include <vector>

#include "engine/stop_condition.h"
#include "output/stop_strings.h"
#include "tokenizer/stream_decoder.h"

namespace ds::server {

class StopStringCondition final : public StopCondition {
 public:
  StopStringCondition(const Tokenizer& tokenizer, std::vector<std::string> stops, bool skip_special_tokens)
      : decoder_(tokenizer, skip_special_tokens), matcher_(std::move(stops)) {}
  bool ends_at(int32_t token) override { return matcher_.push(decoder_.push(token)).stopped; }

 private:
  StreamDecoder decoder_;
  StopStringMatcher matcher_;
};

}  // namespace ds::server
