// "No allocation per token": decode steps of a micro model through the real forward on the CPU
// backend with 2 threads allocate nothing once warmed up. This binary replaces the global operator
// new / new[] with counting versions (so it is its own executable); the counter is switched on only
// around the measured steps and counts every thread, the pool's workers included.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "cache/deltanet_state_slots.h"
#include "cache/kv_block_pool.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/workspace.h"
#include "test_util.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
// Sizes of the first allocations counted, to say what allocated when the test fails.
constexpr int kSizesKept = 8;
std::atomic<size_t> first_sizes[kSizesKept];

void* counted_allocation(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) {
    const int64_t index = allocations.fetch_add(1, std::memory_order_relaxed);
    if (index < kSizesKept) first_sizes[index].store(size, std::memory_order_relaxed);
  }
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t) ? std::malloc(size)
                                                   : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size, 0); }
void* operator new[](std::size_t size) { return counted_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t align) { return counted_allocation(size, static_cast<size_t>(align)); }
void* operator new[](std::size_t size, std::align_val_t align) {
  return counted_allocation(size, static_cast<size_t>(align));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size, 0);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size, 0);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace ds {
namespace {

// The measured steps take the context from 8 to 400 tokens, far past the scratch that the prefill
// and the warm-up sized (the attention scores of a decode step grow by a 64-key block every 64
// tokens, and overtake the conv's taps, which share their buffer, at about 200), so scratch that
// grows with the context shows, as does anything allocated per op or per step.
constexpr int64_t kPrompt = 5, kWarmUpSteps = 3, kMeasuredSteps = 392;

struct Counted {
  int64_t allocations = 0;
  std::vector<size_t> sizes;
};

// Prefills kPrompt tokens, decodes kWarmUpSteps, then counts the allocations of kMeasuredSteps
// more decode steps (each one forward of one token, as the engine runs them).
Counted count_decode_allocations(const std::string& dir, ComputeMode mode, WeightsChoice format) {
  CpuBackend backend(detect_isa(), 2);
  auto loaded = load_model(dir, backend, mode, format);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return {};
  Qwen35Model& model = *loaded->model;
  const TextConfig& c = model.config();
  const int64_t positions = kPrompt + kWarmUpSteps + kMeasuredSteps, block_size = kKvBlockSize;
  KvBlockPool kv((positions + block_size - 1) / block_size, block_size, model.num_attention_layers(),
                 c.num_key_value_heads, c.head_dim);
  DeltaNetStateSlots states(1, model.num_deltanet_layers(), c.conv_dim(), c.linear_conv_kernel_dim - 1,
                            c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim);
  Workspace ws(c, kPrompt);
  std::vector<int32_t> blocks;  // the whole pool, in order
  while (static_cast<int64_t>(blocks.size()) * block_size < positions) blocks.push_back(static_cast<int32_t>(blocks.size()));
  const int32_t slot = 0;
  states.reset(slot);
  const std::vector<int32_t> tokens = test::random_tokens(positions, c.vocab_size, 5);
  std::vector<float> logits(static_cast<size_t>(c.vocab_size));

  // One batch, built once: each step only moves its token span and position.
  ForwardBatch batch;
  batch.sequences.push_back({std::span(tokens).first(kPrompt), 0, blocks, slot, {}, LogitsRows::last});
  EXPECT_TRUE(model.forward(batch, kv, states, ws, logits.data()).ok());
  SequenceInput& step = batch.sequences[0];
  step.kind = StepKind::decode;
  Status status;
  auto decode = [&](int64_t pos) {
    step.tokens = std::span(tokens).subspan(static_cast<size_t>(pos), 1);
    step.start_pos = pos;
    if (status.ok()) status = model.forward(batch, kv, states, ws, logits.data());
  };
  for (int64_t pos = kPrompt; pos < kPrompt + kWarmUpSteps; ++pos) decode(pos);
  allocations.store(0);
  counting.store(true);
  for (int64_t pos = kPrompt + kWarmUpSteps; pos < positions; ++pos) decode(pos);
  counting.store(false);
  EXPECT_TRUE(status.ok()) << status.message();
  Counted counted{allocations.load(), {}};
  for (int64_t i = 0; i < std::min<int64_t>(counted.allocations, kSizesKept); ++i) counted.sizes.push_back(first_sizes[i]);
  return counted;
}

TEST(DecodeAllocations, NoneAfterWarmUpInEveryModeAndWeightFormat) {
  if (detect_isa() == Isa::scalar)
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512, so the CPU backend runs the reference kernels, which "
                    "allocate their scratch per call by design (written for clarity, not the hot path)";
  test::TempDir tmp;
  test::write_micro_checkpoint(tmp / "m", {});
  const struct {
    ComputeMode mode;
    WeightsChoice format;
    const char* name;
  } cases[] = {{ComputeMode::f32, WeightsChoice::native, "f32"},
               {ComputeMode::fast, WeightsChoice::native, "fast"},
               {ComputeMode::fast, WeightsChoice::int8, "fast, int8 weights"}};
  for (const auto& c : cases) {
    const Counted counted = count_decode_allocations(tmp / "m", c.mode, c.format);
    ::testing::Message sizes;
    for (size_t size : counted.sizes) sizes << " " << size;
    EXPECT_EQ(counted.allocations, 0) << c.name << ": " << counted.allocations << " allocations in " << kMeasuredSteps
                                      << " decode steps on " << isa_name(detect_isa())
                                      << " with 2 threads; the first of (bytes):" << sizes;
  }
}

}  // namespace
}  // namespace ds
