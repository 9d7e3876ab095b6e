// llama.cpp's K-quant family (Q4_K, Q5_K, Q6_K) and IQ4_XS: GGUF block types that store 256 weights
// of a row as one superblock of small unsigned codes plus a few scale bytes. Each type is one
// KquantType (its own folder: kernels/formats/q4_k/, ...) that says where its codes and scales sit
// in a GGUF block, what a block's values are, and how one group of 32 inputs enters a dot product.
// This folder holds what the types share:
//
// - two weight formats per type: the blocks as the file stores them, read in place (the reference
//   values: bit-identical to gguf-py's dequantisation), and **panels**, the same bytes rearranged at
//   load so that the VNNI kernels stream them (lossless; the panels are as large as the file, Q6_K's 0.95% larger);
// - the panel layout (below), the packing between the two, the activation codec (int8 per group of
//   32, kquant_activations.h) and the reference matmul that defines what the kernels compute.
//
// Panel layout. Rows are grouped into panels of kKquantPanelRows (16) output rows, one per int32 lane
// of a 512-bit vector. A panel holds its superblocks in order, each its **codes** then its **side
// bytes**, padded to whole cache lines (kquant_superblock_bytes), so a decode reads every panel as one
// sequential stream (with the side bytes of all superblocks at the panel's end instead, a Zen 5 thread
// streamed Q4_K at 35 GB/s, against 41 this way; docs/benchmarks.md) and every code vector starts on a
// cache line:
//   codes, code_bytes():
//     [0, 2048)         the low 4 bits of every code: for group j (32 inputs) and v in 0..3, 64 bytes
//                       at 256·j + 64·v where byte 4·r + t (row r, t in 0..3) holds the code of input
//                       32·j + 4·v + t in its low nibble and that of input 32·j + 16 + 4·v + t in its
//                       high nibble — so one AND / shift gives 16 rows × 4 consecutive inputs, the
//                       operand of one `vpdpbusd` (quads v and v + 4 of the group);
//     high bits         5-bit codes: bit 4 of each code, per group j 8 little-endian u64 masks at
//                       2048 + 64·j (mask u: bit 4·r + t for input 32·j + 4·u + t); 6-bit codes: bits
//                       4–5, per group j 2 × 64 bytes at 2048 + 128·j (half h: byte 4·r + t holds, at
//                       bits 2s and 2s + 1, the high bits of input 32·j + 4·(4h + s) + t); none for 4 bits;
//   side bytes, side_bytes(): the block's scale fields (KquantField), each element of the 16 rows side
//                       by side (element e of row r at 16·e + r, in units of its size), so 16 rows' d
//                       load as one vector of fp16.
// A superblock's codes and side bytes are 16 GGUF blocks' bytes, so a panel is the file's size, but
// for Q6_K, whose 3,360 bytes pad to 3,392 (0.95% more). Panels follow each other; rows past n are
// zero (codes 0, scales 0: the value 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "kernels/formats/weight_format.h"

namespace ds {

inline constexpr int64_t kSuperblock = 256;      // values per GGUF block of these types
inline constexpr int64_t kKquantGroup = 32;      // inputs per activation scale (and per weight scale but Q6_K's 16)
inline constexpr int64_t kGroupsPerSuperblock = kSuperblock / kKquantGroup;  // 8
inline constexpr int64_t kKquantPanelRows = 16;
inline constexpr int64_t kNibbleBytes = kKquantPanelRows * kSuperblock / 2;  // 2,048

// A scale field of a GGUF block: `count` elements of `element_bytes` at `block_offset`.
struct KquantField {
  int64_t block_offset, element_bytes, count;
};

// What the kernels read of one token's activations for one group of 32 inputs: codes q (int8), the
// scale sx (x ≈ sx · q), fl(sx · Σ q) over the 32 codes, and Σ q over each half (16 codes).
struct ActivationGroup {
  const int8_t* q;  // [32]
  float scale;
  float scaled_sum;
  int32_t half_sums[2];
};

// The constants of a type.
struct KquantLayout {
  const char* name;  // as llama.cpp prints it: "Q4_K"
  WeightFormatId blocks_id, panels_id;
  int64_t block_bytes;  // one superblock in the file
  int code_bits;        // 4, 5 or 6
  std::span<const KquantField> fields;
  // The panels' kernels (kquant_matmul_*.h): VNNI, AVX2, and AMX-INT8 (VNNI below 16 tokens).
  PanelKernel avx512_vnni_kernel, avx2_kernel, amx_kernel;
};

class KquantType {
 public:
  explicit KquantType(const KquantLayout& layout);
  virtual ~KquantType();
  KquantType(const KquantType&) = delete;
  KquantType& operator=(const KquantType&) = delete;

  // codes[256] of a block: the unsigned values the kernels multiply (the stored bits of each weight).
  virtual void read_codes(const std::byte* block, uint8_t* codes) const = 0;
  // The inverse: writes the code bits of `block`, leaving its fields alone.
  virtual void write_codes(const uint8_t* codes, std::byte* block) const = 0;
  // out[256] = the block's values, exactly as gguf-py's gguf.quants.dequantize computes them.
  virtual void dequantize(const std::byte* block, float* out) const = 0;
  // The kernels' arithmetic, one group: returns acc plus group j's contribution of a block to the
  // dot product of its row with one token (every operation, and their order, is what the kernels do).
  virtual float accumulate(const std::byte* block, const uint8_t* codes, int64_t j, const ActivationGroup& x,
                           float acc) const = 0;
  // The panels' kernel for this ISA — AMX-INT8 at Isa::amx, AVX-512 VNNI where the CPU has it, else
  // AVX2 — or nullopt (the reference matmul then runs). All compute the same bits.
  std::optional<FastMatmul> fast_matmul(Isa isa) const;
  // Whether quantize() exists: the panels are then made from weights of any format too (`--weights
  // q4_k`, deltaserve's own GGUF files), else only from this type's blocks.
  virtual bool quantizes() const { return false; }
  // block = values[256] quantised to this type (round to nearest on the type's grid; no imatrix).
  virtual void quantize(const float* values, std::byte* block) const;

  const char* name() const { return layout_.name; }
  WeightFormatId blocks_id() const { return layout_.blocks_id; }
  WeightFormatId panels_id() const { return layout_.panels_id; }
  int64_t block_bytes() const { return layout_.block_bytes; }
  int code_bits() const { return layout_.code_bits; }
  std::span<const KquantField> fields() const { return layout_.fields; }
  int64_t high_bytes() const { return code_bits() == 4 ? 0 : code_bits() == 5 ? 512 : 1024; }
  int64_t code_bytes() const { return kNibbleBytes + high_bytes(); }                   // a superblock's, 16 rows
  int64_t side_bytes() const { return kKquantPanelRows * block_bytes() - code_bytes(); }  // likewise

  // The two weight formats of this type.
  const WeightFormat& blocks_format() const { return *blocks_; }
  const WeightFormat& panels_format() const { return *panels_; }

 private:
  KquantLayout layout_;
  std::unique_ptr<WeightFormat> blocks_, panels_;
};

// Panel geometry of an [n, k] weight (k a multiple of 256): a superblock's codes and side bytes,
// padded to whole cache lines, then the next's.
inline int64_t kquant_panels(int64_t n) { return (n + kKquantPanelRows - 1) / kKquantPanelRows; }
constexpr int64_t kquant_superblock_bytes(int64_t code_bytes, int64_t side_bytes) {
  return (code_bytes + side_bytes + 63) / 64 * 64;
}
inline int64_t kquant_panel_bytes(int64_t code_bytes, int64_t side_bytes, int64_t k) {
  return k / kSuperblock * kquant_superblock_bytes(code_bytes, side_bytes);
}
inline int64_t kquant_panel_bytes(const KquantType& type, int64_t k) {
  return kquant_panel_bytes(type.code_bytes(), type.side_bytes(), k);
}

// Where superblock b of a panel keeps its codes and its side bytes.
struct KquantSuperblock {
  std::byte* codes;
  std::byte* side;
};
inline KquantSuperblock kquant_superblock(const KquantType& type, std::byte* panel, int64_t b) {
  std::byte* codes = panel + b * kquant_superblock_bytes(type.code_bytes(), type.side_bytes());
  return {codes, codes + type.code_bytes()};
}

// Moves row `row` (0..15) of a superblock between a GGUF block and a panel: lossless, each the inverse
// of the other; the panel must start zeroed (codes' bits are or-ed in).
void kquant_block_to_panel(const KquantType& type, const std::byte* block, int64_t row, const KquantSuperblock& to);
void kquant_panel_to_block(const KquantType& type, const KquantSuperblock& from, int64_t row, std::byte* block);

}  // namespace ds
