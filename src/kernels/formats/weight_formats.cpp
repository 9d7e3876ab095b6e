// The registry of weight formats, and what formats share unless they say otherwise.
#include "kernels/formats/bf16_panels/bf16_panels_format.h"
#include "kernels/formats/fp8/fp8_blocks_format.h"
#include "kernels/formats/fp8/fp8_panels_format.h"
#include "kernels/formats/int8_panels/int8_panels_format.h"
#include "kernels/formats/iq4_xs/iq4_xs.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q5_k/q5_k.h"
#include "kernels/formats/q6_k/q6_k.h"
#include "kernels/formats/q8_0/q8_0_format.h"
#include "kernels/formats/reference_rows.h"
#include "kernels/formats/row_major/row_major_format.h"
#include "kernels/formats/weight_format.h"
#include "util/check.h"
#include "util/float16.h"

namespace ds {

void WeightFormat::pack(const TensorView& source, int64_t, int64_t, std::byte*) const {
  DS_CHECK(false, "weight format ", name(), " cannot be made at load time (from ", source.name, ")");
}

void WeightFormat::gather_rows(const TensorView& w, std::span<const int32_t>, std::byte*) const {
  DS_CHECK(false, "weight format ", name(), " cannot gather rows (of ", w.name, ")");
}

TensorView WeightFormat::packed_view(const TensorView& source, const std::byte* packed) const {
  DS_CHECK(source.shape.size() == 2, "packed weight ", source.name, " must be 2-D");
  TensorView view = source;
  view.name = source.name + " (" + name() + ")";
  view.format = id();
  view.data = packed;
  view.nbytes = bytes(source.shape[0], source.shape[1]);
  return view;
}

// Dequantised rows times the activations as given (or rounded to bf16), fp32 accumulation in input
// order: the oracle of every format whose kernels take fp32 or bf16 activations.
void WeightFormat::reference_matmul(const float* x, int64_t m, const TensorView& w, float* y,
                                    bool round_input_bf16) const {
  reference_rows_matmul(*this, x, m, w, round_input_bf16, y, [](const float* xr, const float* row, int64_t k) {
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) acc += xr[i] * row[i];
    return acc;
  });
}

const WeightFormat& weight_format(WeightFormatId id, DType dtype) {
  switch (id) {
    case WeightFormatId::stored: return row_major_format(dtype);
    case WeightFormatId::bf16_panels: return bf16_panels_format();
    case WeightFormatId::int8_panels: return int8_panels_format();
    case WeightFormatId::q8_0: return q8_0_format();
    case WeightFormatId::q8_0_int8_panels: return q8_0_int8_panels_route();
    case WeightFormatId::q4_k: return q4_k_type().blocks_format();
    case WeightFormatId::q4_k_panels: return q4_k_type().panels_format();
    case WeightFormatId::q5_k: return q5_k_type().blocks_format();
    case WeightFormatId::q5_k_panels: return q5_k_type().panels_format();
    case WeightFormatId::q6_k: return q6_k_type().blocks_format();
    case WeightFormatId::q6_k_panels: return q6_k_type().panels_format();
    case WeightFormatId::iq4_xs: return iq4_xs_type().blocks_format();
    case WeightFormatId::iq4_xs_panels: return iq4_xs_type().panels_format();
    case WeightFormatId::fp8_blocks: return fp8_blocks_format();
    case WeightFormatId::fp8_panels: return fp8_panels_format();
  }
  DS_CHECK(false, "unknown weight format ", static_cast<int>(id));
  return bf16_panels_format();
}

const WeightFormat& format_of(const TensorView& w) { return weight_format(w.format, w.dtype); }

}  // namespace ds
