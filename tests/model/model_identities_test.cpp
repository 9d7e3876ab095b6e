// Forward-pass identities that need no reference: whole prefill == split prefill == token by token
// (chunk boundaries move: error ≤ 1e-5), one sequence alone == inside a batch of mixed lengths
// (bit-identical), and bad batches rejected with a message.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "test_util.h"
#include "util/random.h"

namespace ds {
namespace {

// Per position: max |a − b| ÷ max |b|; the worst position.
double max_relative_error(const std::vector<float>& a, const std::vector<float>& b, int64_t row) {
  double worst = 0;
  for (size_t r = 0; r < a.size(); r += row) {
    double max_ref = 0, max_diff = 0;
    for (size_t i = r; i < r + row; ++i) {
      max_ref = std::max(max_ref, double(std::fabs(b[i])));
      max_diff = std::max(max_diff, double(std::fabs(a[i] - b[i])));
    }
    worst = std::max(worst, max_diff / max_ref);
  }
  return worst;
}

class ModelIdentities : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};  // the kernels users run; the reference is per row by construction
  LoadedModel loaded_;
  void SetUp() override {
    test::MicroOptions options;
    options.layers = 8;  // LLLF LLLF
    test::write_micro_checkpoint(tmp_ / "m", options);
    auto loaded = load_model(tmp_ / "m", backend_, ComputeMode::f32);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
  }
  int64_t vocab() const { return loaded_.config.text.vocab_size; }

  // All-position logits of `tokens` fed in calls of the given sizes.
  std::vector<float> logits_in_calls(const std::vector<int32_t>& tokens, const std::vector<int64_t>& calls) {
    SequenceRunner runner(*loaded_.model, static_cast<int64_t>(tokens.size()), 256);
    std::vector<float> all, part;
    int64_t offset = 0;
    for (int64_t n : calls) {
      const Status status = runner.feed(std::span(tokens).subspan(offset, n), LogitsRows::all, part);
      EXPECT_TRUE(status.ok()) << status.message();
      all.insert(all.end(), part.begin(), part.end());
      offset += n;
    }
    return all;
  }
};

TEST_F(ModelIdentities, WholePrefillEqualsSplitPrefillEqualsTokenByToken) {
  const auto tokens = test::random_tokens(150, vocab(), 11);
  const auto whole = logits_in_calls(tokens, {150});
  EXPECT_LE(max_relative_error(logits_in_calls(tokens, {100, 37, 1, 12}), whole, vocab()), 1e-5);
  EXPECT_LE(max_relative_error(logits_in_calls(tokens, {64, 64, 22}), whole, vocab()), 1e-5);
  EXPECT_LE(max_relative_error(logits_in_calls(tokens, std::vector<int64_t>(150, 1)), whole, vocab()), 1e-5);
}

TEST_F(ModelIdentities, SequenceAloneIsBitIdenticalToSequenceInABatch) {
  const TextConfig& c = loaded_.config.text;
  const std::vector<std::vector<int32_t>> prompts = {test::random_tokens(70, vocab(), 1), test::random_tokens(5, vocab(), 2),
                                                     test::random_tokens(1, vocab(), 3)};
  // Alone: each sequence prefilled, then two decode steps with fixed tokens.
  std::vector<std::vector<float>> alone;
  for (const auto& prompt : prompts) {
    SequenceRunner runner(*loaded_.model, 80, 128);
    std::vector<float> out, step;
    ASSERT_TRUE(runner.feed(prompt, LogitsRows::all, out).ok());
    for (int32_t token : {7, 9}) {
      ASSERT_TRUE(runner.feed(std::span(&token, 1), LogitsRows::last, step).ok());
      out.insert(out.end(), step.begin(), step.end());
    }
    alone.push_back(out);
  }
  // Together: the same calls as batches of three sequences sharing one pool.
  KvBlockPool kv(64, kKvBlockSize, loaded_.model->num_attention_layers(), c.num_key_value_heads, c.head_dim);
  DeltaNetStateSlots states(4, loaded_.model->num_deltanet_layers(), c.conv_dim(), c.linear_conv_kernel_dim - 1,
                            c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim);
  Workspace ws(c, 128);
  std::vector<std::vector<int32_t>> tables(3);
  std::vector<int32_t> slots;
  for (int s = 0; s < 3; ++s) {
    // Interleaved blocks and slots in reverse, so no sequence's table is the identity.
    for (int b = 0; b < 5; ++b) tables[s].push_back(63 - (b * 3 + s));
    slots.push_back(3 - s);
    states.reset(slots.back());
  }
  std::vector<std::vector<float>> together(3);
  ForwardBatch prefill;
  for (int s = 0; s < 3; ++s) prefill.sequences.push_back({prompts[s], 0, tables[s], slots[s], {}, LogitsRows::all});
  std::vector<float> logits(static_cast<size_t>(prefill.logits_rows() * vocab()));
  ASSERT_TRUE(loaded_.model->forward(prefill, kv, states, ws, logits.data()).ok());
  int64_t offset = 0;
  for (int s = 0; s < 3; ++s) {
    const int64_t size = static_cast<int64_t>(prompts[s].size()) * vocab();
    together[s].assign(logits.begin() + offset, logits.begin() + offset + size);
    offset += size;
  }
  for (int32_t token : {7, 9}) {
    ForwardBatch decode;
    for (int s = 0; s < 3; ++s) {
      const int64_t pos = static_cast<int64_t>(prompts[s].size()) + (token == 9 ? 1 : 0);
      decode.sequences.push_back({std::span(&token, 1), pos, tables[s], slots[s], {}, LogitsRows::last});
    }
    logits.resize(static_cast<size_t>(3 * vocab()));
    ASSERT_TRUE(loaded_.model->forward(decode, kv, states, ws, logits.data()).ok());
    for (int s = 0; s < 3; ++s) together[s].insert(together[s].end(), logits.begin() + s * vocab(), logits.begin() + (s + 1) * vocab());
  }
  for (int s = 0; s < 3; ++s) EXPECT_EQ(together[s], alone[s]) << "sequence " << s;
}

// A forward's last layer computes past its KV only the rows read after it (Qwen35Model::decoder_layer
// outputs_only): the rows returned, and every later call (which reads the KV of all), are bit-identical
// to computing every row — in both compute modes, the fast one's bf16 kernels included. The checkpoints: this fixture's (last layer attention) and one of 5 layers, L L L F L, whose last layer
// is a DeltaNet one (its recurrence takes every row; the MLP the output rows).
TEST_F(ModelIdentities, TheLastLayersOutputRowsOnlyChangeNoBit) {
  const auto tokens = test::random_tokens(90, vocab(), 17);
  const std::vector<int32_t> decoded = {5, 11, 2};
  test::MicroOptions five;
  five.layers = 5;
  test::write_micro_checkpoint(tmp_ / "m5", five);
  for (const char* checkpoint : {"m", "m5"})
  for (const ComputeMode mode : {ComputeMode::f32, ComputeMode::fast}) {
    SCOPED_TRACE(testing::Message() << checkpoint << (mode == ComputeMode::f32 ? ", f32" : ", fast"));
    auto loaded = load_model(tmp_ / checkpoint, backend_, mode);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    // The prompt in chunks of 40, 40, 10 asking for `rows`, then three decode steps.
    auto run = [&](LogitsRows rows) {
      SequenceRunner runner(*loaded->model, 100, 64);
      std::vector<float> out, part;
      for (const auto& [offset, n] : {std::pair<size_t, size_t>{0, 40}, {40, 40}, {80, 10}}) {
        EXPECT_TRUE(runner.feed(std::span(tokens).subspan(offset, n), rows, part).ok());
        out.insert(out.end(), part.begin(), part.end());
      }
      for (const int32_t& token : decoded) {
        EXPECT_TRUE(runner.feed(std::span(&token, 1), LogitsRows::last, part).ok());
        out.insert(out.end(), part.begin(), part.end());
      }
      return out;
    };
    const std::vector<float> every = run(LogitsRows::all), last = run(LogitsRows::last), none = run(LogitsRows::none);
    const auto V = static_cast<size_t>(vocab());
    ASSERT_EQ(every.size(), (90 + decoded.size()) * V);
    std::vector<float> every_last;  // the last row of each chunk, then the decode steps
    for (size_t row : {39, 79, 89, 90, 91, 92}) every_last.insert(every_last.end(), every.begin() + row * V, every.begin() + (row + 1) * V);
    EXPECT_EQ(last, every_last);
    EXPECT_EQ(none, std::vector<float>(every_last.end() - 3 * V, every_last.end())) << "decode after prefill chunks without logits";
  }
}

TEST_F(ModelIdentities, BadBatchesAreErrors) {
  const TextConfig& c = loaded_.config.text;
  KvBlockPool kv(4, kKvBlockSize, loaded_.model->num_attention_layers(), c.num_key_value_heads, c.head_dim);
  DeltaNetStateSlots states(1, loaded_.model->num_deltanet_layers(), c.conv_dim(), c.linear_conv_kernel_dim - 1,
                            c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim);
  states.reset(0);
  Workspace ws(c, 8);
  std::vector<float> logits(static_cast<size_t>(vocab()) * 20);
  const std::vector<int32_t> table{0}, bad_token{1, 512}, long_prompt(20, 1), fine{1, 2};
  auto run = [&](std::span<const int32_t> tokens, int64_t start) {
    ForwardBatch batch;
    batch.sequences.push_back({tokens, start, table, 0, {}, LogitsRows::last});
    return loaded_.model->forward(batch, kv, states, ws, logits.data());
  };
  EXPECT_NE(run(bad_token, 0).message().find("token id 512 is outside the vocabulary [0, 512)"), std::string::npos);
  EXPECT_NE(run(long_prompt, 0).message().find("exceeds the workspace capacity of 8"), std::string::npos);
  EXPECT_NE(run(fine, 15).message().find("needs 2 KV blocks for 17 positions, has 1"), std::string::npos);
  EXPECT_TRUE(run(fine, 0).ok());
}

}  // namespace
}  // namespace ds
