// Workspace sizing from the text config.
#include "model/workspace.h"

namespace ds {

Workspace::Workspace(const TextConfig& c, int64_t max_tokens_, bool mtp) : max_tokens(max_tokens_) {
  const auto rows = static_cast<size_t>(max_tokens);
  auto size = [&](int64_t columns) { return rows * static_cast<size_t>(columns); };
  const int64_t H = c.hidden_size, D = c.head_dim, nH = c.num_attention_heads, nKV = c.num_key_value_heads;
  const int64_t nV = c.linear_num_value_heads, dV = c.linear_value_head_dim;
  hidden.resize(size(H));
  normed.resize(size(H));
  mixer_out.resize(size(H));
  rope_cos.resize(size(c.rotary_dim() / 2));
  rope_sin.resize(size(c.rotary_dim() / 2));
  tokens.resize(rows);
  positions.resize(size(3));
  query_gate.resize(size(nH * 2 * D));
  query.resize(size(nH * D));
  gate.resize(size(nH * D));
  key.resize(size(nKV * D));
  value.resize(size(nKV * D));
  attn.resize(size(nH * D));
  mixed_qkv.resize(size(c.conv_dim()));
  conv_out.resize(size(c.conv_dim()));
  z.resize(size(nV * dV));
  a.resize(size(nV));
  b.resize(size(nV));
  g.resize(size(nV));
  beta.resize(size(nV));
  core.resize(size(nV * dV));
  core_normed.resize(size(nV * dV));
  mlp_gate.resize(size(c.intermediate_size));
  mlp_up.resize(size(c.intermediate_size));
  mlp_act.resize(size(c.intermediate_size));
  head_in.resize(size(H));
  if (mtp) mtp_pair.resize(size(2 * H));
}

}  // namespace ds
