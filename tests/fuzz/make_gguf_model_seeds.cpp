// Writes the GGUF-model fuzz target's seed corpus: whole qwen35 GGUF models small enough to fuzz
// (a few KB each) — random weights written by write_random_gguf, the writer make-checkpoint uses,
// with a 48-token byte-level BPE vocabulary and a short chat template — in F32, F16, BF16, Q8_0 and
// Q4_K_M (its mix: Q4_K and Q6_K where rows are whole 256-value super-blocks — down_proj here —, Q8_0
// elsewhere, as llama-quantize falls back on short rows).
// Usage: make_gguf_model_seeds DIR
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/random_checkpoint.h"
#include "tokenizer/tokenizer_spec.h"

namespace {

constexpr int kVocab = 48;  // 44 byte tokens and merges, then 4 unused ids the added tokens take

// Byte-level BPE with the Qwen3.5 pre-tokenizer: the printable ASCII bytes '0'..'Z' and 'Ġ' (space),
// two merges, and the three special tokens the chat template uses.
std::string pico_tokenizer_json() {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  int id = 0;
  for (char c = '0'; c <= 'Z' && id < 40; ++c) vocab[std::string(1, c)] = id++;
  for (const char* symbol : {"Ġ", "ĠA", "AB"}) vocab[symbol] = id++;
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
                                             {"use_regex", false}};
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  int special = kVocab - 3;
  for (const char* content : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"})
    added.push_back({{"id", special++}, {"content", content}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  const nlohmann::ordered_json json = {
      {"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", ds::kQwen35Regex}}}, {"behavior", "Isolated"}, {"invert", false}},
          byte_level}}}},
      {"post_processor", byte_level}, {"decoder", byte_level},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", nlohmann::ordered_json::array({nlohmann::ordered_json::array({"Ġ", "A"}), nlohmann::ordered_json::array({"A", "B"})})}}}};
  return json.dump();
}

// hidden 32, two layers (DeltaNet, attention), every matmul input a multiple of Q8_0's 32; an
// intermediate size of 256 gives down_proj rows of whole K-quant super-blocks.
nlohmann::ordered_json pico_config(bool tied, int intermediate) {
  return {{"model_type", "qwen3_5_text"}, {"vocab_size", kVocab}, {"hidden_size", 32}, {"intermediate_size", intermediate},
          {"num_hidden_layers", 2}, {"layer_types", {"linear_attention", "full_attention"}},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"head_dim", 16}, {"linear_conv_kernel_dim", 4},
          {"linear_key_head_dim", 16}, {"linear_value_head_dim", 16}, {"linear_num_key_heads", 1},
          {"linear_num_value_heads", 2}, {"max_position_embeddings", 256}, {"rms_norm_eps", 1e-6},
          {"hidden_act", "silu"}, {"tie_word_embeddings", tied}, {"eos_token_id", kVocab - 1},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000}, {"partial_rotary_factor", 0.25},
                               {"mrope_section", {1, 1, 0}}, {"mrope_interleaved", true}}}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_gguf_model_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const ds::TokenizerAssets assets = {
      pico_tokenizer_json(), R"({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})",
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"};
  int written = 0;
  for (const ds::GgufFileType type : {ds::GgufFileType::f32, ds::GgufFileType::f16, ds::GgufFileType::bf16,
                                      ds::GgufFileType::q8_0, ds::GgufFileType::q4_k_m})
    for (const bool tied : {true, false}) {
      if (!tied && type != ds::GgufFileType::bf16) continue;  // one untied model (output.weight) is enough
      ds::RandomCheckpointOptions options;
      options.seed = 7;
      options.visible_text = false;
      const std::string name = std::string(ds::gguf_file_type_name(type)) + (tied ? "" : "-untied");
      const int intermediate = type == ds::GgufFileType::q4_k_m ? 256 : 32;
      const ds::Status status = ds::write_random_gguf(pico_config(tied, intermediate), options, (dir / name).string(), type, assets);
      if (!status.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), status.message().c_str());
        return 1;
      }
      ++written;
    }
  std::printf("wrote %d seeds to %s\n", written, dir.c_str());
  return 0;
}
