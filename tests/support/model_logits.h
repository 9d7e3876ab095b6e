// What the model tests share for comparing logits: the backends to run on, every position's logits
// of a prompt, and the relative error of one set of logits against another.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "model/qwen35_model.h"

namespace ds::test {

// The reference backend and the CPU backend at every ISA this machine has (2 threads).
std::vector<std::unique_ptr<Backend>> logit_backends();

// [n, vocab] logits of every position of `ids`, fed in one call.
std::vector<float> all_logits(Qwen35Model& model, const std::vector<int32_t>& ids);

// Per position max |ours − ref| ÷ max |ref|, the worst position.
double worst_error(const std::vector<float>& ours, const std::vector<float>& ref, int64_t vocab);

}  // namespace ds::test
