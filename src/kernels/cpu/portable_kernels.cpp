// One build of the portable kernels (portable_kernels.h). CMake compiles this file once per ISA,
// with that ISA's flags, -ffp-contract=off, and DS_PORTABLE_KERNELS_ENTRY naming the table.
#include "kernels/cpu/portable_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/portable_exp.h"
#include "kernels/weight_access.h"
#include "util/float16.h"
#include "util/flush_denormals.h"

#ifdef __AVX512BF16__
#include <immintrin.h>  // attention_tiled.inc: vdpbf16ps on bf16 keys
#endif

#ifndef DS_PORTABLE_KERNELS_ENTRY
#error "compile with -DDS_PORTABLE_KERNELS_ENTRY=portable_kernels_<isa>"
#endif

namespace ds::kernels {
namespace {
#include "kernels/attention_tiled.inc"
#include "kernels/conv.inc"
#include "kernels/elementwise.inc"
#include "kernels/gated_delta_rule_tiled.inc"
#include "kernels/vision_ops.inc"
#include "kernels/vision_attention_bf16.inc"
}  // namespace

const PortableKernels& DS_PORTABLE_KERNELS_ENTRY() {
  static const PortableKernels table{delta_recurrent_heads, delta_chunked_heads, conv_channels,   attention_heads_tiled,
                                     rms_norm_rows,         rms_norm_gated_rows, silu_mul_range,  sigmoid_gate_range,
                                     add_range,             rope_tokens,         layer_norm_rows, add_bias_rows,
                                     gelu_tanh_range,       gelu_erf_range,      attention_bidirectional_tiles,
                                     attention_bidirectional_bf16_tiles};
  return table;
}

}  // namespace ds::kernels
