// drain_tokens: every token a request's stream emits, to its end; a request that ends in an error
// fails the test that drained it. continued: each prompt followed by its output (what scripted
// drafters take as the true continuations). run_requests: the outputs of requests submitted to an
// engine all at once (one batch) or one after another (each alone).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/request_stream.h"

namespace ds::test {

inline std::vector<int32_t> drain_tokens(RequestStream& stream) {
  std::vector<int32_t> tokens;
  while (auto event = stream.next()) {
    for (const SampledToken& t : event->tokens) tokens.push_back(t.token);
    if (event->finish) {
      EXPECT_NE(*event->finish, FinishReason::error) << event->error;
    }
  }
  return tokens;
}

inline std::vector<std::vector<int32_t>> run_requests(Engine& engine, const std::vector<std::vector<int32_t>>& prompts,
                                                      const std::vector<SamplingParams>& params, bool together) {
  std::vector<std::vector<int32_t>> outputs;
  if (together) {
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (size_t i = 0; i < prompts.size(); ++i) streams.push_back(*engine.submit(prompts[i], params[i]));
    for (auto& stream : streams) outputs.push_back(drain_tokens(*stream));
  } else {
    for (size_t i = 0; i < prompts.size(); ++i) outputs.push_back(drain_tokens(**engine.submit(prompts[i], params[i])));
  }
  return outputs;
}

inline std::vector<std::vector<int32_t>> continued(const std::vector<std::vector<int32_t>>& prompts,
                                                   const std::vector<std::vector<int32_t>>& outputs) {
  std::vector<std::vector<int32_t>> sequences;
  for (size_t i = 0; i < prompts.size(); ++i) {
    sequences.push_back(prompts[i]);
    sequences.back().insert(sequences.back().end(), outputs[i].begin(), outputs[i].end());
  }
  return sequences;
}

}  // namespace ds::test
