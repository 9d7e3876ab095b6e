// Reference matmul (nn.Linear without bias), by the weight's format, and embedding lookup.
#include "kernels/formats/weight_format.h"
#include "kernels/ref/ref_backend.h"
#include "util/check.h"

namespace ds {

void RefBackend::matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  DS_CHECK(w.shape.size() == 2, "matmul weight ", w.name, " must be 2-D");
  format_of(w).reference_matmul(x, m, w, y, round_input_bf16);
}

void RefBackend::embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) {
  const int64_t vocab = table.shape[0], dim = table.shape[1];
  const WeightFormat& format = format_of(table);  // stored, or GGUF blocks read in place
  for (int64_t i = 0; i < n; ++i) {
    DS_CHECK(ids[i] >= 0 && ids[i] < vocab, "token id ", ids[i], " outside the vocabulary of ", vocab);
    format.dequantize_row(table, ids[i], out + i * dim);
  }
}

}  // namespace ds
