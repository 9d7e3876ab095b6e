// Speculative verify and rollback at the model level (the mechanism issue 17's engine step builds on),
// as the engine runs it: a decode call of 1 + k tokens (the last sampled token and k drafts) writes
// the DeltaNet state into a spare slot, leaving the sequence's slot as it was, and gives each row the
// logits of plain one-token decoding bit for bit. When every row stands the two slots trade storage;
// otherwise the accepted rows are replayed on the untouched slot (Qwen35Model::replay_deltanet). Either
// way the DeltaNet state, conv window and attention KV then equal, bit for bit, those of a run that
// decoded only the committed tokens. Scripted drafters reach every branch without a trained head: an
// oracle (every draft accepted), an adversary (none), random mixes.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/sampler.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "micro_checkpoint.h"
#include "model/deltanet_record.h"
#include "model/kv_cache_dtype.h"
#include "model/model_loader.h"
#include "test_util.h"
#include "util/random.h"

namespace ds {
namespace {

// One sequence's caches, fed through the raw model API (blocks 0, 1, ... in order).
class OneSequence {
 public:
  OneSequence(Qwen35Model& model, int64_t positions, int64_t max_call)
      : model_(model),
        kv_((positions + kKvBlockSize - 1) / kKvBlockSize, kKvBlockSize, model.num_attention_layers(),
            model.config().num_key_value_heads, model.config().head_dim, default_kv_dtype(model)),
        states_(2, model.num_deltanet_layers(), model.config().conv_dim(), model.config().linear_conv_kernel_dim - 1,
                model.config().linear_num_value_heads, model.config().linear_key_head_dim,
                model.config().linear_value_head_dim),
        ws_(model.config(), max_call) {
    states_.reset(0);
    for (int32_t b = 0; b < kv_.num_blocks(); ++b) blocks_.push_back(b);
    record_.reserve(model.config(), max_call);
  }

  // Runs `tokens` at position `start`; logits of every row (or the last). A verify keeps the DeltaNet
  // inputs and writes the state into the spare slot (1).
  std::vector<float> call(std::span<const int32_t> tokens, int64_t start, StepKind kind, LogitsRows rows,
                          bool verify = false) {
    ForwardBatch batch;
    batch.sequences.push_back(SequenceInput{tokens, start, blocks_, 0, {}, rows, kind});
    if (verify) {
      batch.sequences.back().record = &record_;
      batch.sequences.back().state_out_slot = 1;
    }
    std::vector<float> logits(static_cast<size_t>(batch.logits_rows() * model_.config().vocab_size));
    const Status status = model_.forward(batch, kv_, states_, ws_, logits.data());
    EXPECT_TRUE(status.ok()) << status.message();
    return logits;
  }
  std::vector<float> state() {
    std::vector<float> out(static_cast<size_t>(states_.floats_per_slot()));
    states_.save(0, out.data(), model_.backend());
    return out;
  }
  void take_spare() { states_.swap(0, 1); }
  Status replay(int64_t rows) { return model_.replay_deltanet(record_, rows, states_, 0, ws_); }

  // K and V of positions [0, n) of every attention layer, as stored (bit patterns).
  std::vector<uint32_t> kv_rows(int64_t n) {
    std::vector<uint32_t> out;
    for (int64_t l = 0; l < model_.num_attention_layers(); ++l) {
      const KvLayerView view = kv_.layer(l);
      if (view.dtype == KvDtype::bf16) append_rows<uint16_t>(view, n, out);
      else append_rows<float>(view, n, out);
    }
    return out;
  }

 private:
  template <typename T>
  static void append_rows(const KvLayerView& view, int64_t n, std::vector<uint32_t>& out) {
    for (int64_t p = 0; p < n; ++p)
      for (int64_t h = 0; h < view.num_kv_heads; ++h)
        for (int64_t d = 0; d < view.head_dim; ++d) {
          const T key = view.key_column<T>(p / view.block_size, p % view.block_size, h)[view.key_dim_offset<T>(d)];
          const T value = view.value_row<T>(p / view.block_size, p % view.block_size, h)[d];
          uint32_t k_bits = 0, v_bits = 0;
          std::memcpy(&k_bits, &key, sizeof(T));
          std::memcpy(&v_bits, &value, sizeof(T));
          out.push_back(k_bits);
          out.push_back(v_bits);
        }
  }

  Qwen35Model& model_;
  KvBlockPool kv_;
  DeltaNetStateSlots states_;
  Workspace ws_;
  DeltaNetRecord record_;
  std::vector<int32_t> blocks_;
};

enum class Drafter { oracle, adversary, random_mix };

class VerifyRollback : public ::testing::TestWithParam<std::tuple<bool, ComputeMode>> {
 protected:
  test::TempDir tmp_;
};

TEST_P(VerifyRollback, CommittedStateEqualsPlainDecodingBitForBit) {
  const auto [reference, mode] = GetParam();
  test::write_micro_checkpoint(tmp_ / "m", {});
  std::unique_ptr<Backend> backend;
  if (reference) backend = std::make_unique<RefBackend>();
  else backend = std::make_unique<CpuBackend>(detect_isa(), 2);
  auto loaded = load_model(tmp_ / "m", *backend, mode);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Qwen35Model& model = *loaded->model;
  const int64_t V = model.config().vocab_size;
  constexpr int64_t kPrompt = 23, kGenerate = 40, kMaxDrafts = 4;
  const auto prompt = test::random_tokens(kPrompt, V, 17);

  // Plain decoding: the greedy continuation, each step's logits and the state after each token.
  OneSequence plain(model, kPrompt + kGenerate + kMaxDrafts + 1, kPrompt);
  std::vector<float> row = plain.call(prompt, 0, StepKind::prefill, LogitsRows::last);
  std::vector<int32_t> committed(prompt);      // prompt + generated tokens
  std::vector<std::vector<float>> step_logits;  // [generated] the logits that chose each generated token
  std::vector<std::vector<float>> states;       // [generated] state after feeding generated token i
  for (int64_t i = 0; i < kGenerate; ++i) {
    step_logits.push_back(row);
    committed.push_back(argmax(row));
    row = plain.call(std::span(&committed.back(), 1), kPrompt + i, StepKind::decode, LogitsRows::last);
    states.push_back(plain.state());
  }
  const int64_t fed = kPrompt + kGenerate - 1;  // what a run that stops at kGenerate tokens has fed
  const std::vector<uint32_t> plain_kv = plain.kv_rows(fed);

  for (Drafter drafter : {Drafter::oracle, Drafter::adversary, Drafter::random_mix})
  for (int64_t k = 1; k <= kMaxDrafts; ++k) {
    SCOPED_TRACE(testing::Message() << "drafter " << static_cast<int>(drafter) << ", k = " << k);
    Xoshiro256 rng(100 + static_cast<uint64_t>(k));
    OneSequence spec(model, kPrompt + kGenerate + kMaxDrafts + 1, kPrompt);
    std::vector<float> last = spec.call(prompt, 0, StepKind::prefill, LogitsRows::last);
    int64_t generated = 1;  // the first token comes from the prefill's logits; it waits to be fed
    ASSERT_EQ(argmax(last), committed[kPrompt]);
    int64_t rounds = 0, accepted_total = 0;
    while (generated < kGenerate) {
      const int64_t pos = kPrompt + generated - 1;  // position of the pending token
      std::vector<int32_t> input{committed[static_cast<size_t>(pos)]};
      // Drafts stop where plain decoding's record ends (the round's last row chooses token kGenerate − 1).
      const int64_t drafts = std::min<int64_t>(k, kGenerate - 1 - generated);
      for (int64_t j = 1; j <= drafts; ++j) {
        const int32_t truth = committed[static_cast<size_t>(pos + j)];
        const bool right = drafter == Drafter::oracle || (drafter == Drafter::random_mix && rng.uniform() < 0.6);
        const auto wrong = static_cast<int32_t>((truth + 1 + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(V - 1))) % V);
        input.push_back(right ? truth : wrong);
      }
      const std::vector<float> before = spec.state();
      const std::vector<float> verify = spec.call(input, pos, StepKind::decode, LogitsRows::all, /*verify=*/true);
      ASSERT_EQ(spec.state(), before) << "the verify wrote the sequence's own slot";
      // Greedy acceptance: draft j stands while it is the argmax of row j − 1.
      int64_t accepted = 0;
      while (accepted < drafts && input[static_cast<size_t>(accepted + 1)] ==
                                      argmax(std::span(verify).subspan(static_cast<size_t>(accepted * V), static_cast<size_t>(V))))
        ++accepted;
      // Rows 0..accepted are what plain decoding computed at those positions, bit for bit.
      for (int64_t j = 0; j <= accepted; ++j) {
        const std::vector<float> verify_row(verify.begin() + j * V, verify.begin() + (j + 1) * V);
        ASSERT_EQ(verify_row, step_logits[static_cast<size_t>(generated + j)]) << "verify row " << j;
      }
      if (drafter == Drafter::oracle) {
        EXPECT_EQ(accepted, drafts);
      }
      if (accepted < drafts) {  // roll back: the accepted rows again, from the state before the call
        ASSERT_TRUE(spec.replay(accepted + 1).ok());
      } else {  // every row stands: the spare holds the state after them
        spec.take_spare();
      }
      generated += accepted + 1;
      accepted_total += accepted;
      ++rounds;
      ASSERT_EQ(spec.state(), states[static_cast<size_t>(generated - 2)]) << "state after round " << rounds;
    }
    // KV by length: every committed position's entry equals plain decoding's.
    EXPECT_EQ(spec.kv_rows(fed), plain_kv);
    EXPECT_EQ(accepted_total + rounds, kGenerate - 1);  // each round emits its accepted drafts and one more
    if (drafter == Drafter::oracle) {
      EXPECT_EQ(rounds, (kGenerate - 1 + k) / (k + 1));
    }
    if (drafter == Drafter::adversary) {
      EXPECT_EQ(accepted_total, 0);
    }
    if (drafter == Drafter::random_mix) {
      EXPECT_GT(accepted_total, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BackendsAndModes, VerifyRollback,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(ComputeMode::f32, ComputeMode::fast)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "reference" : "cpu") +
                                  (std::get<1>(info.param) == ComputeMode::f32 ? "_f32" : "_fast");
                         });

}  // namespace
}  // namespace ds
