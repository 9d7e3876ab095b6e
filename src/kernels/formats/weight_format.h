// WeightFormat: one way a matmul weight can sit in memory, and everything that depends on it, in one
// folder under kernels/formats/: the bytes an [n, k] weight takes, how it is packed from a
// checkpoint tensor, the value of each element (the reference dequantisation), the reference
// matmul that is its kernels' oracle, and its kernels per ISA with the activations they read.
//
// A backend asks format_of(w) and runs what the format offers; which weight gets which format is
// model/'s decision (model/weight_packing.h). Adding a format: a folder here and a line in
// weight_formats.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "io/tensor_view.h"
#include "kernels/cpu/isa.h"

namespace ds {

// What the caller asks of the activations: rounded to bf16 first (fast mode), and for formats that
// quantise them, how many byte planes (TensorView::activation_planes).
struct ActivationOptions {
  bool round_bf16 = false;
  int64_t planes = 1;
  bool operator==(const ActivationOptions&) const = default;
};

// What a fast kernel reads as its input: x [m, k] fp32, prepared once per call for every output
// sharing it (a layer's projections). prepare() fills rows [r_begin, r_end) of `out` (bytes(m, k)
// bytes, 64-byte aligned); a row never depends on another, so threads may split the rows and the
// result never depends on the batch.
struct ActivationCodec {
  const char* name;
  uint64_t (*bytes)(int64_t m, int64_t k, const ActivationOptions& options);
  void (*prepare)(const float* x, int64_t m, int64_t k, const ActivationOptions& options, int64_t r_begin, int64_t r_end,
                  std::byte* out);
};

// y[m, n] for the output rows of panels [panel_begin, panel_end) of w, from activations a codec
// prepared. Every output row is accumulated in a fixed order whatever m and the panel range.
using PanelKernel = void (*)(const std::byte* activations, int64_t m, const ActivationOptions& options,
                             const TensorView& w, int64_t panel_begin, int64_t panel_end, float* y);

struct FastMatmul {
  const ActivationCodec* activations;
  PanelKernel kernel;
};

class WeightFormat {
 public:
  virtual ~WeightFormat() = default;
  virtual WeightFormatId id() const = 0;
  virtual const char* name() const = 0;  // "bf16", "bf16 panels", "int8 panels", ...
  // Output rows per panel: kernel calls and the threads' ranges split weights at panels.
  virtual int64_t panel_rows() const = 0;
  int64_t panels(int64_t n) const { return (n + panel_rows() - 1) / panel_rows(); }
  // Bytes of an [n, k] weight in this format.
  virtual uint64_t bytes(int64_t n, int64_t k) const = 0;
  // Whether pack() can make this format from another at load time.
  virtual bool packable() const { return false; }
  // Packs panels [panel_begin, panel_end) of `source` (a 2-D weight of any format) into `packed`
  // (bytes() of its shape, 64-byte aligned), padding included; calls on different panels touch
  // disjoint bytes, so threads may pack at once. The view of the result: packed_view().
  virtual void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const;
  virtual TensorView packed_view(const TensorView& source, const std::byte* packed) const;
  // Packs rows `rows` of w (this format, [n, k]), in that order, into `packed` (bytes(rows.size(), k),
  // 64-byte aligned): a weight of this format whose row i holds exactly the values of w's row rows[i]
  // (the MTP head over a token map's rows, model/gathered_rows.h). Only where gatherable().
  virtual bool gatherable() const { return false; }
  virtual void gather_rows(const TensorView& w, std::span<const int32_t> rows, std::byte* packed) const;
  // Whether the first n rows of a weight (n a multiple of panel_rows()) are its first bytes(n, k)
  // bytes, laid out as an [n, k] weight of this format (panels one after another, each over the whole
  // k): the MTP head over a draft vocabulary of the first n tokens reads them in place.
  virtual bool leading_rows_in_place() const { return false; }
  // out[k] = row `row` of w as fp32: what the weight's values are.
  virtual void dequantize_row(const TensorView& w, int64_t row, float* out) const = 0;
  // y[m, n] = x · wᵀ with plain loops: the oracle of this format's kernels, treating activations as
  // they do (rounded to bf16 with round_input_bf16, or quantised as the format defines).
  virtual void reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) const;
  // The kernel for `isa` and this compute mode, or nullopt: the backend then runs the reference.
  virtual std::optional<FastMatmul> fast_matmul(Isa isa, bool round_input_bf16) const = 0;
};

// The format of w (by w.format, and by w.dtype for stored weights); an error names a dtype no
// format computes with.
const WeightFormat& format_of(const TensorView& w);
const WeightFormat& weight_format(WeightFormatId id, DType dtype);

}  // namespace ds
