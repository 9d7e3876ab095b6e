// SamplingParams validation (ranges as vLLM's SamplingParams checks them).
#include "engine/sampling_params.h"

#include <cmath>

namespace ds {

Status validate_sampling(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
    return Status::errorf("temperature must be a finite number >= 0, found ", p.temperature);
  if (p.top_k < -1) return Status::errorf("top_k must be -1 or 0 (off) or a positive count, found ", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return Status::errorf("top_p must be in (0, 1], found ", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return Status::errorf("min_p must be in [0, 1], found ", p.min_p);
  if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f))
    return Status::errorf("presence_penalty must be in [-2, 2], found ", p.presence_penalty);
  if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f))
    return Status::errorf("frequency_penalty must be in [-2, 2], found ", p.frequency_penalty);
  if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0.0f)
    return Status::errorf("repetition_penalty must be a finite number > 0, found ", p.repetition_penalty);
  if (p.max_tokens < 1) return Status::errorf("max_tokens must be at least 1, found ", p.max_tokens);
  if (p.logprobs < -1 || p.logprobs > kMaxLogprobs)
    return Status::errorf("logprobs must be in [0, ", kMaxLogprobs, "], found ", p.logprobs);
  for (int32_t id : p.stop_token_ids)
    if (id < 0) return Status::errorf("stop_token_ids must be token ids >= 0, found ", id);
  return {};
}

}  // namespace ds
