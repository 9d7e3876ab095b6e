// The two weight formats every K-quant type has (kquant_type.h): its GGUF blocks in place, and its
// panels; the lossless moves between them; the reference matmul of the panels.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/formats/int8_panels/int8_activations.h"
#include "kernels/formats/kquant/kquant_activations.h"
#include "kernels/formats/kquant/kquant_type.h"
#include "util/check.h"

namespace ds {

void kquant_block_to_panel(const KquantType& type, const std::byte* block, int64_t row, const KquantSuperblock& to) {
  uint8_t codes[kSuperblock];
  type.read_codes(block, codes);
  auto* bytes = reinterpret_cast<uint8_t*>(to.codes);
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j)
    for (int64_t v = 0; v < 4; ++v)
      for (int64_t t = 0; t < 4; ++t) {
        const int64_t lo = 32 * j + 4 * v + t;
        bytes[256 * j + 64 * v + 4 * row + t] = static_cast<uint8_t>((codes[lo] & 15) | (codes[lo + 16] & 15) << 4);
      }
  uint8_t* high = bytes + kNibbleBytes;
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j)
    for (int64_t u = 0; u < 8; ++u)
      for (int64_t t = 0; t < 4; ++t) {
        const uint8_t code = codes[32 * j + 4 * u + t];
        if (type.code_bits() == 5) {  // mask u of group j, bit 4·row + t, little-endian
          const int64_t bit = 4 * row + t;
          high[64 * j + 8 * u + bit / 8] |= static_cast<uint8_t>(((code >> 4) & 1) << (bit % 8));
        } else if (type.code_bits() == 6) {
          const int64_t h = u / 4, s = u % 4;
          high[128 * j + 64 * h + 4 * row + t] |= static_cast<uint8_t>(((code >> 4) & 3) << (2 * s));
        }
      }
  int64_t offset = 0;
  for (const KquantField& field : type.fields()) {
    for (int64_t e = 0; e < field.count; ++e)
      std::memcpy(to.side + offset + (e * kKquantPanelRows + row) * field.element_bytes,
                  block + field.block_offset + e * field.element_bytes, static_cast<size_t>(field.element_bytes));
    offset += field.count * kKquantPanelRows * field.element_bytes;
  }
}

void kquant_panel_to_block(const KquantType& type, const KquantSuperblock& from, int64_t row, std::byte* block) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(from.codes);
  uint8_t codes[kSuperblock];
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j)
    for (int64_t v = 0; v < 4; ++v)
      for (int64_t t = 0; t < 4; ++t) {
        const uint8_t byte = bytes[256 * j + 64 * v + 4 * row + t];
        codes[32 * j + 4 * v + t] = byte & 15;
        codes[32 * j + 16 + 4 * v + t] = byte >> 4;
      }
  const uint8_t* high = bytes + kNibbleBytes;
  for (int64_t j = 0; j < kGroupsPerSuperblock; ++j)
    for (int64_t u = 0; u < 8; ++u)
      for (int64_t t = 0; t < 4; ++t) {
        uint8_t& code = codes[32 * j + 4 * u + t];
        if (type.code_bits() == 5) {
          const int64_t bit = 4 * row + t;
          code |= static_cast<uint8_t>(((high[64 * j + 8 * u + bit / 8] >> (bit % 8)) & 1) << 4);
        } else if (type.code_bits() == 6) {
          const int64_t h = u / 4, s = u % 4;
          code |= static_cast<uint8_t>(((high[128 * j + 64 * h + 4 * row + t] >> (2 * s)) & 3) << 4);
        }
      }
  type.write_codes(codes, block);
  int64_t offset = 0;
  for (const KquantField& field : type.fields()) {
    for (int64_t e = 0; e < field.count; ++e)
      std::memcpy(block + field.block_offset + e * field.element_bytes,
                  from.side + offset + (e * kKquantPanelRows + row) * field.element_bytes,
                  static_cast<size_t>(field.element_bytes));
    offset += field.count * kKquantPanelRows * field.element_bytes;
  }
}

namespace {

void check_shape(const KquantType& type, const TensorView& w) {
  DS_CHECK(w.shape.size() == 2 && w.shape[1] % kSuperblock == 0, type.name(), " weight ", w.name,
           " must be 2-D with rows of a multiple of ", kSuperblock, " values, not ", shape_to_string(w.shape));
}

// The GGUF blocks of one row: k / 256 blocks in order.
const std::byte* row_blocks(const KquantType& type, const TensorView& w, int64_t row) {
  return w.data + row * (w.shape[1] / kSuperblock) * type.block_bytes();
}

// The blocks of row `row` of a panels view, put back in GGUF form: out [k / 256 · block_bytes].
void panel_row_blocks(const KquantType& type, const TensorView& w, int64_t row, std::byte* out) {
  const int64_t k = w.shape[1], superblocks = k / kSuperblock;
  // The view is read only; KquantSuperblock's pointers are shared with packing, which writes.
  auto* panel = const_cast<std::byte*>(w.data) + row / kKquantPanelRows * kquant_panel_bytes(type, k);
  for (int64_t b = 0; b < superblocks; ++b)
    kquant_panel_to_block(type, kquant_superblock(type, panel, b), row % kKquantPanelRows, out + b * type.block_bytes());
}

// The inverse: one row's GGUF blocks (k / 256 in order) into its place in a panels buffer.
void row_blocks_to_panel(const KquantType& type, const std::byte* blocks, int64_t k, int64_t row, std::byte* packed) {
  std::byte* panel = packed + row / kKquantPanelRows * kquant_panel_bytes(type, k);
  for (int64_t b = 0; b < k / kSuperblock; ++b)
    kquant_block_to_panel(type, blocks + b * type.block_bytes(), row % kKquantPanelRows, kquant_superblock(type, panel, b));
}

// GGUF blocks read in place: the reference values, and the plain matmul over them (`--weights mapped`).
class KquantBlocksFormat final : public WeightFormat {
 public:
  explicit KquantBlocksFormat(const KquantType& type) : type_(type) {}
  WeightFormatId id() const override { return type_.blocks_id(); }
  const char* name() const override { return type_.name(); }
  int64_t panel_rows() const override { return 1; }
  uint64_t bytes(int64_t n, int64_t k) const override {
    return static_cast<uint64_t>(n * (k / kSuperblock) * type_.block_bytes());
  }
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    check_shape(type_, w);
    const std::byte* blocks = row_blocks(type_, w, row);
    for (int64_t b = 0; b < w.shape[1] / kSuperblock; ++b)
      type_.dequantize(blocks + b * type_.block_bytes(), out + b * kSuperblock);
  }
  std::optional<FastMatmul> fast_matmul(Isa, bool) const override { return std::nullopt; }
  bool leading_rows_in_place() const override { return true; }  // rows one after another

 private:
  const KquantType& type_;
};

class KquantPanelsFormat final : public WeightFormat {
 public:
  explicit KquantPanelsFormat(const KquantType& type) : type_(type) {}
  WeightFormatId id() const override { return type_.panels_id(); }
  const char* name() const override { return name_.c_str(); }
  int64_t panel_rows() const override { return kKquantPanelRows; }
  uint64_t bytes(int64_t n, int64_t k) const override {
    return static_cast<uint64_t>(kquant_panels(n) * kquant_panel_bytes(type_, k));
  }
  bool packable() const override { return true; }
  // From the type's GGUF blocks: their bytes rearranged, nothing recomputed. From any other format
  // (a type that quantizes()): its rows' values quantised into blocks first.
  void pack(const TensorView& source, int64_t panel_begin, int64_t panel_end, std::byte* packed) const override {
    const bool blocks = source.format == type_.blocks_id();
    DS_CHECK(blocks || type_.quantizes(), type_.name(), " panels are packed from ", type_.name(), " blocks; ", source.name,
             " is ", format_of(source).name());
    check_shape(type_, source);
    const int64_t n = source.shape[0], k = source.shape[1], superblocks = k / kSuperblock;
    const int64_t panel_bytes = kquant_panel_bytes(type_, k);
    std::memset(packed + panel_begin * panel_bytes, 0, static_cast<size_t>((panel_end - panel_begin) * panel_bytes));
    std::vector<float> values(blocks ? 0 : static_cast<size_t>(k));                                   // [k] one row
    std::vector<std::byte> quantised(blocks ? 0 : static_cast<size_t>(superblocks * type_.block_bytes()));  // its blocks
    for (int64_t row = panel_begin * kKquantPanelRows; row < std::min(n, panel_end * kKquantPanelRows); ++row) {
      if (!blocks) {
        format_of(source).dequantize_row(source, row, values.data());
        for (int64_t b = 0; b < superblocks; ++b)
          type_.quantize(values.data() + b * kSuperblock, quantised.data() + b * type_.block_bytes());
      }
      row_blocks_to_panel(type_, blocks ? row_blocks(type_, source, row) : quantised.data(), k, row, packed);
    }
  }
  TensorView packed_view(const TensorView& source, const std::byte* packed) const override {
    TensorView view = WeightFormat::packed_view(source, packed);
    view.dtype = DType::U8;
    return view;
  }
  // Each row's GGUF blocks put back together, then packed again: the same bytes, nothing recomputed.
  bool gatherable() const override { return true; }
  void gather_rows(const TensorView& w, std::span<const int32_t> rows, std::byte* packed) const override {
    check_shape(type_, w);
    const auto n = static_cast<int64_t>(rows.size());
    const int64_t k = w.shape[1];
    std::memset(packed, 0, static_cast<size_t>(bytes(n, k)));
    std::vector<std::byte> blocks(static_cast<size_t>(k / kSuperblock * type_.block_bytes()));  // [k / 256 blocks] one row
    for (int64_t r = 0; r < n; ++r) {
      panel_row_blocks(type_, w, rows[static_cast<size_t>(r)], blocks.data());
      row_blocks_to_panel(type_, blocks.data(), k, r, packed);
    }
  }
  bool leading_rows_in_place() const override { return true; }  // panel p at p · panel bytes
  void dequantize_row(const TensorView& w, int64_t row, float* out) const override {
    check_shape(type_, w);
    std::vector<std::byte> blocks(static_cast<size_t>(w.shape[1] / kSuperblock * type_.block_bytes()));  // [k / 256 blocks]
    panel_row_blocks(type_, w, row, blocks.data());
    for (int64_t b = 0; b < w.shape[1] / kSuperblock; ++b)
      type_.dequantize(blocks.data() + b * type_.block_bytes(), out + b * kSuperblock);
  }
  // The kernels' arithmetic with plain loops (kquant_activations.h: the activations are quantised
  // whatever the compute mode).
  void reference_matmul(const float* x, int64_t m, const TensorView& w, float* y, bool) const override {
    check_shape(type_, w);
    const int64_t n = w.shape[0], k = w.shape[1], groups = k / kKquantGroup, superblocks = k / kSuperblock;
    std::vector<int8_t> q(static_cast<size_t>(m * k));            // [m, k] activation codes
    std::vector<float> scales(static_cast<size_t>(m * groups));   // [m, groups]
    std::vector<int32_t> offsets(static_cast<size_t>(m * groups));  // [m, groups] (int8 codec's −128 · Σq)
    const Int8Activations a{q.data(), scales.data(), offsets.data(), groups, 1};
    for (int64_t r = 0; r < m; ++r) quantize_activation_row_scalar(x + r * k, k, r, a);
    std::vector<std::byte> blocks(static_cast<size_t>(superblocks * type_.block_bytes()));  // one row's blocks
    std::vector<uint8_t> codes(static_cast<size_t>(k));                                      // [k] its codes
    for (int64_t col = 0; col < n; ++col) {
      panel_row_blocks(type_, w, col, blocks.data());
      for (int64_t b = 0; b < superblocks; ++b)
        type_.read_codes(blocks.data() + b * type_.block_bytes(), codes.data() + b * kSuperblock);
      for (int64_t r = 0; r < m; ++r) {
        float acc = 0.0f;
        for (int64_t g = 0; g < groups; ++g) {
          ActivationGroup group{q.data() + r * k + g * kKquantGroup, scales[r * groups + g], 0, {0, 0}};
          for (int64_t i = 0; i < kKquantGroup; ++i) group.half_sums[i / 16] += group.q[i];
          group.scaled_sum = group.scale * static_cast<float>(group.half_sums[0] + group.half_sums[1]);
          const int64_t b = g / kGroupsPerSuperblock;
          acc = type_.accumulate(blocks.data() + b * type_.block_bytes(), codes.data() + b * kSuperblock,
                                 g % kGroupsPerSuperblock, group, acc);
        }
        y[r * n + col] = acc;
      }
    }
  }
  std::optional<FastMatmul> fast_matmul(Isa isa, bool) const override { return type_.fast_matmul(isa); }

 private:
  const KquantType& type_;
  const std::string name_ = std::string(type_.name()) + " panels";
};

}  // namespace

KquantType::KquantType(const KquantLayout& layout)
    : layout_(layout),
      blocks_(std::make_unique<KquantBlocksFormat>(*this)),
      panels_(std::make_unique<KquantPanelsFormat>(*this)) {}

KquantType::~KquantType() = default;

std::optional<FastMatmul> KquantType::fast_matmul(Isa isa) const {
  static const bool vnni = has_avx512_vnni();
  // Isa::amx implies AVX-512 VNNI (CpuBackend refuses it otherwise: isa.cpp probe_amx).
  if (isa == Isa::amx) return FastMatmul{&kKquantVnniActivations, layout_.amx_kernel};
  if (has_avx512(isa) && vnni) return FastMatmul{&kKquantVnniActivations, layout_.avx512_vnni_kernel};
  if (isa >= Isa::avx2) return FastMatmul{&kKquantAvx2Activations, layout_.avx2_kernel};
  return std::nullopt;
}

void KquantType::quantize(const float*, std::byte*) const {
  DS_CHECK(false, "deltaserve has no ", name(), " quantiser (it reads ", name(), " blocks that llama.cpp made)");
}

}  // namespace ds
