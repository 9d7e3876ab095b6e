// The MTP head over a token map's rows (--speculative-token-map): gather_rows copies rows of a weight
// in its own format value for value — bf16 panels and row-major rows bit for bit, int8 panels their
// q and fp16 scale bytes, also where re-quantising would not give them back — so a matmul with the
// gathered weight gives the whole weight's outputs at the mapped rows bit for bit (reference and CPU
// kernels, any row count, not only panel multiples); and the model's head, gathered, gives the whole
// head's logits at the map's ids.
#include "model/gathered_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <set>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/weight_format.h"
#include "kernels/ref/ref_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "test_util.h"
#include "util/float16.h"

namespace ds {
namespace {

constexpr int64_t kRows = 70, kCols = 80;  // a partial last panel and a partial last int8 group

// A stored [kRows, kCols] weight of `dtype` over `bytes`, from values.
TensorView stored(DType dtype, const std::vector<float>& values, std::vector<std::byte>& bytes) {
  bytes.resize(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::BF16) {
      const uint16_t bits = float_to_bf16(values[i]);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    } else {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
    }
  }
  TensorView w;
  w.name = "w";
  w.dtype = dtype;
  w.shape = {kRows, kCols};
  w.data = bytes.data();
  w.nbytes = bytes.size();
  return w;
}

// `source` packed into `format` over `memory`.
TensorView packed(const TensorView& source, WeightFormatId format, std::vector<std::byte>& memory) {
  const WeightFormat& f = weight_format(format, source.dtype);
  memory.assign(f.bytes(kRows, kCols) + 64, std::byte{0});
  auto* aligned = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(memory.data()) + 63) / 64 * 64);
  f.pack(source, 0, f.panels(kRows), aligned);
  return f.packed_view(source, aligned);
}

// y [m, n] of w on `backend`.
std::vector<float> matmul(Backend& backend, const std::vector<float>& x, int64_t m, const TensorView& w, bool round) {
  std::vector<float> y(static_cast<size_t>(m * w.shape[0]));
  backend.matmul(x.data(), m, w, y.data(), round);
  return y;
}

void expect_outputs_gathered(const TensorView& w, const GatheredWeight& g, std::span<const int32_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  RefBackend ref;
  CpuBackend cpu(detect_isa(), 2);
  for (Backend* backend : {static_cast<Backend*>(&ref), static_cast<Backend*>(&cpu)})
    for (const int64_t m : {1, 5})
      for (const bool round : {false, true}) {
        SCOPED_TRACE(str_cat(backend->name(), ", m ", m, round ? ", bf16 inputs" : ", fp32 inputs"));
        const std::vector<float> x = test::random_floats(static_cast<size_t>(m * kCols), 9);
        const std::vector<float> full = matmul(*backend, x, m, w, round), part = matmul(*backend, x, m, g.view, round);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t i = 0; i < n; ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(part[static_cast<size_t>(r * n + i)]),
                      std::bit_cast<uint32_t>(full[static_cast<size_t>(r * kRows + rows[static_cast<size_t>(i)])]))
                << "row " << r << ", output " << i << " (row " << rows[static_cast<size_t>(i)] << ")";
      }
}

// 37 rows in a shuffled order, the last source row among them.
std::vector<int32_t> some_rows() {
  std::vector<int32_t> rows(kRows);
  std::iota(rows.begin(), rows.end(), 0);
  Xoshiro256 rng(4);
  for (size_t i = rows.size() - 1; i > 0; --i) std::swap(rows[i], rows[rng.next() % (i + 1)]);
  rows.resize(37);
  if (std::find(rows.begin(), rows.end(), kRows - 1) == rows.end()) rows[0] = kRows - 1;
  return rows;
}

TEST(GatheredRows, RowMajorAndBf16PanelRowsAreTheSourcesBitForBit) {
  const std::vector<float> values = test::random_floats(static_cast<size_t>(kRows * kCols), 3);
  std::vector<std::byte> bf16_bytes, f32_bytes, panels;
  const TensorView bf16 = stored(DType::BF16, values, bf16_bytes), f32 = stored(DType::F32, values, f32_bytes);
  const std::vector<int32_t> rows = some_rows();
  for (const TensorView& w : {bf16, f32, packed(bf16, WeightFormatId::bf16_panels, panels)}) {
    const WeightFormat& format = format_of(w);
    SCOPED_TRACE(format.name());
    auto g = gather_rows(w, rows);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(g->view.format, w.format);
    EXPECT_EQ(g->view.dtype, w.dtype);
    EXPECT_EQ(g->view.shape, (std::vector<int64_t>{37, kCols}));
    EXPECT_EQ(g->view.nbytes, format.bytes(37, kCols));
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t c = 0; c < kCols; ++c) {
        const auto r = static_cast<int64_t>(i);
        const int64_t at = w.format == WeightFormatId::bf16_panels ? bf16_panel_offset(kCols, rows[i], c)
                                                                   : (rows[i] * kCols + c) * static_cast<int64_t>(dtype_size(w.dtype));
        const int64_t to = w.format == WeightFormatId::bf16_panels ? bf16_panel_offset(kCols, r, c)
                                                                   : (r * kCols + c) * static_cast<int64_t>(dtype_size(w.dtype));
        ASSERT_EQ(std::memcmp(w.data + at, g->view.data + to, dtype_size(w.dtype)), 0) << "row " << i << ", col " << c;
      }
    expect_outputs_gathered(w, *g, rows);
  }
}

TEST(GatheredRows, Int8PanelRowsKeepTheirQuantisedBytes) {
  std::vector<float> values = test::random_floats(static_cast<size_t>(kRows * kCols), 5);
  // A group too small for an fp16 scale (stored as scale 0, q 0: re-quantising its zeros would give
  // scale 1), and a zero row.
  for (int64_t c = 0; c < 32; ++c) values[static_cast<size_t>(3 * kCols + c)] = 1e-9f;
  for (int64_t c = 0; c < kCols; ++c) values[static_cast<size_t>(69 * kCols + c)] = 0.0f;
  std::vector<std::byte> f32_bytes, panels;
  const TensorView w = packed(stored(DType::F32, values, f32_bytes), WeightFormatId::int8_panels, panels);
  std::vector<int32_t> rows = some_rows();
  rows.push_back(3);
  if (std::find(rows.begin(), rows.end() - 1, 3) != rows.end() - 1) rows.pop_back();
  auto g = gather_rows(w, rows);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->view.format, WeightFormatId::int8_panels);
  EXPECT_EQ(g->view.shape[0], static_cast<int64_t>(rows.size()));
  EXPECT_EQ(int8_weight_scale(w, 3, 0), 0.0f);  // the underflowed group is there to copy
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t c = 0; c < kCols; ++c)
      ASSERT_EQ(int8_weight_q(g->view, static_cast<int64_t>(i), c), int8_weight_q(w, rows[i], c)) << i << ", " << c;
    for (int64_t group = 0; group < int8_groups(kCols); ++group)
      ASSERT_EQ(std::memcmp(g->view.data + int8_scale_offset(kCols, static_cast<int64_t>(i), group),
                            w.data + int8_scale_offset(kCols, rows[i], group), 2), 0) << i << ", group " << group;
  }
  expect_outputs_gathered(w, *g, rows);
}

TEST(GatheredRows, BadRowsAndFormatsAreErrors) {
  const std::vector<float> values = test::random_floats(static_cast<size_t>(kRows * kCols), 3);
  std::vector<std::byte> bytes;
  const TensorView w = stored(DType::BF16, values, bytes);
  EXPECT_ERROR_CONTAINS(gather_rows(w, std::vector<int32_t>{}), "expected at least one row, found none");
  EXPECT_ERROR_CONTAINS(gather_rows(w, std::vector<int32_t>{1, 70}), "row 70 (entry 1) is out of range: expected 0 .. 69");
  EXPECT_ERROR_CONTAINS(gather_rows(w, std::vector<int32_t>{-1}), "row -1 (entry 0) is out of range");
  TensorView q8 = w;
  q8.format = WeightFormatId::q8_0;
  q8.dtype = DType::U8;
  EXPECT_ERROR_CONTAINS(gather_rows(q8, std::vector<int32_t>{0}),
                        "expected a weight format that can gather rows, found Q8_0");
}

// The model's MTP head with a token map: logits at the map's ids, bit for bit, for every head format
// the load choices give on this machine and on the reference backend.
TEST(GatheredRows, TheMtpHeadsLogitsAreTheWholeHeadsAtTheMapsIds) {
  test::TempDir tmp;
  RandomCheckpointOptions writer;
  writer.with_mtp = true;
  test::write_micro_checkpoint(tmp / "m", {}, writer);
  RefBackend ref;
  CpuBackend cpu(detect_isa(), 2);
  struct Case {
    Backend* backend;
    ComputeMode mode;
    WeightsChoice weights;
  };
  std::set<std::string> formats;
  for (const Case& c : {Case{&ref, ComputeMode::f32, WeightsChoice::mapped}, Case{&ref, ComputeMode::fast, WeightsChoice::int8},
                        Case{&cpu, ComputeMode::fast, WeightsChoice::native}, Case{&cpu, ComputeMode::f32, WeightsChoice::mapped},
                        Case{&cpu, ComputeMode::fast, WeightsChoice::int8}}) {
    auto loaded = load_model(tmp / "m", *c.backend, c.mode, c.weights);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    Qwen35Model& model = *loaded->model;
    const int64_t V = loaded->config.text.vocab_size;
    SCOPED_TRACE(str_cat(c.backend->name(), ", head in ", format_of(model.weights().lm_head).name()));
    formats.insert(format_of(model.weights().lm_head).name());
    std::vector<int32_t> map = test::random_tokens(3 * V, V, 8);  // distinct ids, most of the vocabulary's
    std::sort(map.begin(), map.end());
    map.erase(std::unique(map.begin(), map.end()), map.end());
    Xoshiro256 rng(2);
    for (size_t i = map.size() - 1; i > 0; --i) std::swap(map[i], map[rng.next() % (i + 1)]);
    map.resize(50);  // not a panel multiple

    const std::vector<int32_t> tokens = test::random_tokens(12, V, 6);
    std::vector<float> logits, hidden, whole, mapped, g;
    SequenceRunner main(model, 16, 16, default_kv_dtype(model), kKvBlockSize, /*with_mtp=*/true);
    ASSERT_TRUE(main.feed(tokens, LogitsRows::none, logits, LogitsRows::all, hidden).ok());
    const std::span<const float> pairs(hidden.data(), hidden.size() - static_cast<size_t>(loaded->config.text.hidden_size));
    const std::span<const int32_t> next(tokens.data() + 1, tokens.size() - 1);
    ASSERT_TRUE(main.mtp(pairs, next, 0, 0, LogitsRows::all, whole, g).ok());
    ASSERT_TRUE(model.set_mtp_tokens(map).ok());
    EXPECT_EQ(model.mtp_vocab(), 50);
    EXPECT_EQ(model.mtp_head_bytes(), format_of(model.weights().lm_head).bytes(50, loaded->config.text.hidden_size));
    ASSERT_TRUE(main.mtp(pairs, next, 0, 0, LogitsRows::all, mapped, g).ok());
    const auto rows = static_cast<int64_t>(next.size());
    ASSERT_EQ(static_cast<int64_t>(mapped.size()), rows * 50);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < 50; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(mapped[static_cast<size_t>(r * 50 + i)]),
                  std::bit_cast<uint32_t>(whole[static_cast<size_t>(r * V + map[static_cast<size_t>(i)])]))
            << "row " << r << ", logit " << i << " (token " << map[static_cast<size_t>(i)] << ")";
    ASSERT_TRUE(model.set_mtp_vocab(0).ok());  // the whole head again, the gathered one freed
    EXPECT_EQ(model.mtp_vocab(), V);
    EXPECT_EQ(model.mtp_head_bytes(), 0u);
  }
  EXPECT_TRUE(formats.count("int8 panels") == 1 && formats.count("BF16") == 1) << "covered: " << str_cat(formats.size(), " formats, first ", *formats.begin());
  if (has_avx512(detect_isa())) {
    EXPECT_EQ(formats.count("bf16 panels"), 1u);
  }
}

}  // namespace
}  // namespace ds
