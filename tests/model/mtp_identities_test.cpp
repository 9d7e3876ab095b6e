// The MTP head and the hidden rows it reads, without a reference: asking for hidden rows leaves the
// logits' bits alone and gives what the head reads; an MTP pass over several sequences equals each
// alone bit for bit; an MTP pass that rewrites its KV entries gives what a fresh pass gives, as do
// passes after rows that went through for the KV only; and the
// head's preconditions (a checkpoint with mtp.*, room in the workspace and the KV pool) are errors
// with a message.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "test_util.h"

namespace ds {
namespace {

#define EXPECT_STATUS_CONTAINS(expression, needle)                                                      \
  do {                                                                                                 \
    const Status ds_status_ = (expression);                                                           \
    EXPECT_FALSE(ds_status_.ok()) << "expected an error containing: " << (needle);                      \
    EXPECT_NE(ds_status_.message().find(needle), std::string::npos) << "message: " << ds_status_.message(); \
  } while (0)

class MtpIdentities : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  CpuBackend backend_{detect_isa(), 2};
  LoadedModel loaded_;
  void SetUp() override {
    RandomCheckpointOptions writer;
    writer.with_mtp = true;
    test::write_micro_checkpoint(tmp_ / "m", {}, writer);
    auto loaded = load_model(tmp_ / "m", backend_, ComputeMode::fast);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    ASSERT_TRUE(loaded_.model->has_mtp());
  }
  Qwen35Model& model() { return *loaded_.model; }
  int64_t H() const { return loaded_.config.text.hidden_size; }
  int64_t V() const { return loaded_.config.text.vocab_size; }
  SequenceRunner runner(int64_t positions) {
    return SequenceRunner(model(), positions, positions, default_kv_dtype(model()), kKvBlockSize, /*with_mtp=*/true);
  }
  // One MTP pass over every pair of `tokens` (each hidden row with the token after it) in a fresh
  // sequence: every row's logits [rows, V] and hidden after mtp.norm [rows, H].
  struct HeadRows {
    std::vector<float> logits, g;
  };
  HeadRows every_row_pass(const std::vector<int32_t>& tokens) {
    SequenceRunner r = runner(static_cast<int64_t>(tokens.size()) + 10);
    std::vector<float> unused, hidden;
    HeadRows out;
    const size_t pairs = tokens.size() - 1;
    EXPECT_TRUE(r.feed(tokens, LogitsRows::none, unused, LogitsRows::all, hidden).ok());
    EXPECT_TRUE(r.mtp(std::span(hidden).first(pairs * static_cast<size_t>(H())), std::span(tokens).subspan(1), 0, 0,
                      LogitsRows::all, out.logits, out.g).ok());
    return out;
  }
};

TEST_F(MtpIdentities, HiddenRowsLeaveLogitsBitIdenticalAndFeedTheHead) {
  const auto tokens = test::random_tokens(37, V(), 5);
  std::vector<float> plain, with_hidden, hidden_all, hidden_last, logits_last, unused;
  {
    SequenceRunner r = runner(40);
    ASSERT_TRUE(r.feed(tokens, LogitsRows::all, plain).ok());
  }
  {
    SequenceRunner r = runner(40);
    ASSERT_TRUE(r.feed(tokens, LogitsRows::all, with_hidden, LogitsRows::all, hidden_all).ok());
  }
  {
    SequenceRunner r = runner(40);
    ASSERT_TRUE(r.feed(tokens, LogitsRows::last, logits_last, LogitsRows::last, hidden_last).ok());
  }
  EXPECT_EQ(plain, with_hidden);
  ASSERT_EQ(hidden_all.size(), tokens.size() * H());
  EXPECT_EQ(hidden_last, std::vector<float>(hidden_all.end() - H(), hidden_all.end()));
  EXPECT_EQ(logits_last, std::vector<float>(plain.end() - V(), plain.end()));
  // Hidden rows only (no logits): the same rows.
  SequenceRunner r = runner(40);
  std::vector<float> hidden_only;
  ASSERT_TRUE(r.feed(tokens, LogitsRows::none, unused, LogitsRows::all, hidden_only).ok());
  EXPECT_TRUE(unused.empty());
  EXPECT_EQ(hidden_only, hidden_all);
}

TEST_F(MtpIdentities, MtpPassOverSeveralSequencesEqualsEachAlone) {
  const TextConfig& c = loaded_.config.text;
  const std::vector<int64_t> lengths = {21, 1, 9};
  struct Alone {
    std::vector<int32_t> next;  // the tokens paired with the hidden rows
    std::vector<float> hidden, logits, g;
  };
  std::vector<Alone> alone;
  for (size_t s = 0; s < lengths.size(); ++s) {
    const auto tokens = test::random_tokens(static_cast<size_t>(lengths[s]) + 1, V(), 40 + s);
    Alone a;
    a.next.assign(tokens.begin() + 1, tokens.end());
    SequenceRunner r = runner(32);
    std::vector<float> unused;
    ASSERT_TRUE(r.feed(std::span(tokens).first(static_cast<size_t>(lengths[s])), LogitsRows::none, unused,
                       LogitsRows::all, a.hidden).ok());
    ASSERT_TRUE(r.mtp(a.hidden, a.next, 0, 0, LogitsRows::all, a.logits, a.g).ok());
    alone.push_back(std::move(a));
  }
  // One batch: each sequence its own blocks of one pool, rows concatenated.
  KvBlockPool kv(8, kKvBlockSize, model().num_kv_layers(true), c.num_key_value_heads, c.head_dim, default_kv_dtype(model()));
  Workspace ws(c, 64, /*mtp=*/true);
  const std::vector<std::vector<int32_t>> tables = {{0, 1}, {2}, {3}};
  ForwardBatch batch;
  std::vector<float> pair_hidden;
  for (size_t s = 0; s < lengths.size(); ++s) {
    SequenceInput seq{alone[s].next, 0, tables[s], 0, {}, LogitsRows::all};
    seq.hidden = LogitsRows::all;
    batch.sequences.push_back(seq);
    pair_hidden.insert(pair_hidden.end(), alone[s].hidden.begin(), alone[s].hidden.end());
  }
  std::vector<float> logits(static_cast<size_t>(batch.logits_rows() * V())), g(static_cast<size_t>(batch.hidden_rows() * H()));
  ASSERT_TRUE(model().mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data(), g.data()).ok());
  size_t logits_at = 0, g_at = 0;
  for (const Alone& a : alone) {
    EXPECT_EQ(std::vector<float>(logits.begin() + logits_at, logits.begin() + logits_at + a.logits.size()), a.logits);
    EXPECT_EQ(std::vector<float>(g.begin() + g_at, g.begin() + g_at + a.g.size()), a.g);
    logits_at += a.logits.size();
    g_at += a.g.size();
  }
}

// Chained drafts write MTP KV entries at positions a later pass over the committed pairs rewrites;
// after the rewrite the head computes what a run that never drafted computes, bit for bit.
TEST_F(MtpIdentities, RewrittenMtpEntriesEqualAFreshPass) {
  const auto tokens = test::random_tokens(30, V(), 8);
  const HeadRows fresh = every_row_pass(tokens);
  SequenceRunner r = runner(40);
  std::vector<float> unused, h, logits, g;
  ASSERT_TRUE(r.feed(tokens, LogitsRows::none, unused, LogitsRows::all, h).ok());
  ASSERT_TRUE(r.mtp(std::span(h).first(20 * H()), std::span(tokens).subspan(1, 20), 0, 0, LogitsRows::last, logits, g).ok());
  // Three chained drafts at positions 20..22 from wrong tokens, then the committed pairs 20..28 rewrite them.
  for (int j = 0; j < 3; ++j) {
    const std::vector<float> prev = g;
    const int32_t wrong = (tokens[21 + j] + 1) % static_cast<int32_t>(V());
    ASSERT_TRUE(r.mtp(prev, std::span(&wrong, 1), 20 + j, j + 1, LogitsRows::last, logits, g).ok());
  }
  ASSERT_TRUE(r.mtp(std::span(h).subspan(20 * H(), 9 * H()), std::span(tokens).subspan(21, 9), 20, 0, LogitsRows::all, logits,
                    g).ok());
  EXPECT_EQ(logits, std::vector<float>(fresh.logits.end() - 9 * V(), fresh.logits.end()));
  EXPECT_EQ(g, std::vector<float>(fresh.g.end() - 9 * H(), fresh.g.end()));
}

// Rows that go through the head for its KV only (kept back by the drafter: no logits, no hidden) stop
// after K and V (Qwen35Model::decoder_layer outputs_only); what later passes compute from that KV, and
// the last row of a pass asking for it alone, are bit-identical to a pass computing every row.
TEST_F(MtpIdentities, RowsThroughTheHeadForItsKvOnlyChangeNoBit) {
  const auto tokens = test::random_tokens(30, V(), 9);
  const HeadRows every = every_row_pass(tokens);
  std::vector<float> unused;
  {
    SequenceRunner r = runner(40);
    std::vector<float> h, logits, g;
    ASSERT_TRUE(r.feed(tokens, LogitsRows::none, unused, LogitsRows::all, h).ok());
    ASSERT_TRUE(r.mtp(std::span(h).first(20 * H()), std::span(tokens).subspan(1, 20), 0, 0, LogitsRows::none, logits, g).ok());
    EXPECT_TRUE(logits.empty());
    ASSERT_TRUE(r.mtp(std::span(h).subspan(20 * H(), 9 * H()), std::span(tokens).subspan(21, 9), 20, 0, LogitsRows::all,
                      logits, g).ok());
    EXPECT_EQ(logits, std::vector<float>(every.logits.end() - 9 * V(), every.logits.end()));
    EXPECT_EQ(g, std::vector<float>(every.g.end() - 9 * H(), every.g.end()));
  }
  SequenceRunner r = runner(40);
  std::vector<float> h, logits, g;
  ASSERT_TRUE(r.feed(tokens, LogitsRows::none, unused, LogitsRows::all, h).ok());
  ASSERT_TRUE(r.mtp(std::span(h).first(29 * H()), std::span(tokens).subspan(1), 0, 0, LogitsRows::last, logits, g).ok());
  EXPECT_EQ(logits, std::vector<float>(every.logits.end() - V(), every.logits.end()));
  EXPECT_EQ(g, std::vector<float>(every.g.end() - H(), every.g.end()));
}

TEST_F(MtpIdentities, PreconditionsAreErrorsWithAMessage) {
  const TextConfig& c = loaded_.config.text;
  const auto tokens = test::random_tokens(4, V(), 3);
  const std::vector<int32_t> table = {0};
  ForwardBatch batch;
  batch.sequences.push_back(SequenceInput{tokens, 0, table, 0, {}, LogitsRows::last});
  const std::vector<float> pair_hidden(4 * H(), 0.5f);
  std::vector<float> logits(V());
  {
    KvBlockPool kv(2, kKvBlockSize, model().num_kv_layers(false), c.num_key_value_heads, c.head_dim, default_kv_dtype(model()));
    Workspace ws(c, 8, true);
    EXPECT_STATUS_CONTAINS(model().mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data()),
                          "the MTP head needs 2");
  }
  KvBlockPool kv(2, kKvBlockSize, model().num_kv_layers(true), c.num_key_value_heads, c.head_dim, default_kv_dtype(model()));
  {
    Workspace ws(c, 8);
    EXPECT_STATUS_CONTAINS(model().mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data()), "no MTP buffers");
  }
  Workspace ws(c, 8, true);
  EXPECT_TRUE(model().mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data()).ok());
  batch.sequences[0].hidden = LogitsRows::last;
  EXPECT_STATUS_CONTAINS(model().mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data()), "gives no buffer");

  SequenceRunner plain(model(), 8, 8);
  std::vector<float> g;
  EXPECT_STATUS_CONTAINS(plain.mtp(pair_hidden, tokens, 0, 0, LogitsRows::last, logits, g), "without room for the MTP head");

  // A checkpoint without mtp.* loads; the head is then unavailable, and says so.
  test::write_micro_checkpoint(tmp_ / "plain", {});
  auto without = load_model(tmp_ / "plain", backend_, ComputeMode::fast);
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_FALSE(without->model->has_mtp());
  EXPECT_EQ(without->model->num_kv_layers(true), without->model->num_attention_layers());
  EXPECT_STATUS_CONTAINS(without->model->mtp_forward(batch, 0, pair_hidden.data(), kv, ws, logits.data()),
                        "no MTP head (no mtp.* tensors): MTP is unavailable");
}

}  // namespace
}  // namespace ds
