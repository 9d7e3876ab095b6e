// Reference matmul (nn.Linear without bias) and embedding lookup.
#include <vector>

#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"

namespace ds {

void RefBackend::matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  DS_CHECK(w.shape.size() == 2, "matmul weight ", w.name, " must be 2-D");
  const int64_t n = w.shape[0], k = w.shape[1];
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<float> input(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m * k; ++i) input[i] = round_input_bf16 ? bf16_to_float(float_to_bf16(x[i])) : x[i];
  for (int64_t col = 0; col < n; ++col) {
    weight_span(w, col * k, k, row.data());
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = input.data() + r * k;
      float acc = 0.0f;
      for (int64_t i = 0; i < k; ++i) acc += xr[i] * row[i];
      y[r * n + col] = acc;
    }
  }
}

void RefBackend::embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) {
  const int64_t vocab = table.shape[0], dim = table.shape[1];
  for (int64_t i = 0; i < n; ++i) {
    DS_CHECK(ids[i] >= 0 && ids[i] < vocab, "token id ", ids[i], " outside the vocabulary of ", vocab);
    weight_span(table, static_cast<int64_t>(ids[i]) * dim, dim, out + i * dim);
  }
}

}  // namespace ds
