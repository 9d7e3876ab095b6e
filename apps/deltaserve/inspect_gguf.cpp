// GGUF inspection: the validated container (metadata, tensor types, bits per weight), and whether it binds as a model.
#include "inspect_gguf.h"

#include <cstdio>
#include <map>
#include <string>

#include "cli_errors.h"
#include "io/generation_config.h"
#include "io/gguf_file.h"
#include "model/gguf_checkpoint.h"
#include "model/qwen35_weights.h"
#include "util/human.h"
#include "util/mapped_file.h"
#include "util/str_cat.h"

namespace ds::app {

void print_inspect_row(const char* key, const std::string& value) { std::printf("  %-15s %s\n", key, value.c_str()); }

namespace {

std::string metadata_text(const GgufFile& gguf, const char* key) {
  const GgufEntry* e = gguf.find(key);
  if (e == nullptr) return "(none)";
  if (const auto s = e->string(); s.ok()) return std::string(*s);
  if (const auto n = e->integer(); n.ok()) return std::to_string(*n);
  if (e->type == GgufType::array) return str_cat("array of ", e->count, " ", gguf_type_name(e->element_type));
  return gguf_type_name(e->type);
}

double bits_per_weight(uint64_t bytes, int64_t numel) { return numel > 0 ? 8.0 * static_cast<double>(bytes) / static_cast<double>(numel) : 0.0; }

std::string shape_text(const GgufTensor& t) {
  std::string text;
  for (int64_t n : t.shape) text += str_cat(text.empty() ? "" : " x ", n);
  return text;
}

// Whether the file (with the rest of its split set) binds as a model, and what it is, or why not.
std::string model_text(const std::string& path) {
  auto checkpoint = GgufCheckpoint::open(path);
  if (!checkpoint.ok()) return str_cat("does not load: ", checkpoint.status().message());
  auto weights = bind_qwen35_weights(*checkpoint, checkpoint->config(), nullptr);
  if (!weights.ok()) return str_cat("does not load: ", weights.status().message());
  const TextConfig& c = checkpoint->config().text;
  return str_cat("loads (", checkpoint->files().size(), " file(s)): ", c.num_hidden_layers, " layers (",
                 c.num_layers_of(LayerType::linear_attention), " Gated DeltaNet + ", c.num_layers_of(LayerType::full_attention),
                 " gated attention), hidden ", c.hidden_size, ", vocab ", c.vocab_size,
                 checkpoint->config().tie_word_embeddings ? ", tied head" : "",
                 weights->mtp ? str_cat(", MTP head of ", weights->mtp->layers.size(), " layer(s) (nextn blocks from ", c.num_hidden_layers, ")")
                              : "",
                 "; ", checkpoint->tensors().size(), " tensors under HF names");
}

}  // namespace

int inspect_gguf(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file.ok()) return report_error(file.status());
  auto parsed = parse_gguf(file->bytes(), path);
  if (!parsed.ok()) return report_error(parsed.status());
  const GgufFile& gguf = *parsed;

  std::printf("%s\n", path.c_str());
  const std::string arch = metadata_text(gguf, "general.architecture");
  print_inspect_row("container", str_cat("GGUF v", gguf.version, ", ", gguf.metadata.size(), " metadata pairs, ", gguf.tensors.size(),
                                 " tensors, alignment ", gguf.alignment, ", ", human_bytes(file->size())));
  print_inspect_row("architecture", arch == "qwen35" ? arch
                                             : str_cat(arch, " (deltaserve runs architecture qwen35 — Qwen3.5 / Qwen3.6 dense)"));
  print_inspect_row("name", metadata_text(gguf, "general.name"));
  if (gguf.find("split.count") != nullptr) {
    const GgufEntry* no = gguf.find("split.no");
    const auto index = no != nullptr ? no->integer() : Result<int64_t>(Status::errorf("no split.no"));
    // split.no counts from 0 (gguf-split), the file names from 1.
    print_inspect_row("split", str_cat("file ", index.ok() ? std::to_string(*index + 1) : metadata_text(gguf, "split.no"), " of ",
                               metadata_text(gguf, "split.count"), " (this file's tensors only)"));
  }
  print_inspect_row("file type", metadata_text(gguf, "general.file_type"));
  print_inspect_row("tokenizer", str_cat(metadata_text(gguf, "tokenizer.ggml.model"), " / ", metadata_text(gguf, "tokenizer.ggml.pre"),
                                 ", tokens: ", metadata_text(gguf, "tokenizer.ggml.tokens")));
  print_inspect_row("chat template", gguf.find("tokenizer.chat_template") != nullptr ? "in the metadata" : "none");
  const auto generation = gguf_generation_config(gguf, path);
  print_inspect_row("sampling", generation.ok() ? str_cat("general.sampling.*: ", sampling_defaults_text(*generation))
                                                : str_cat("refused: ", generation.status().message()));
  print_inspect_row("as a model", model_text(path));

  struct TypeTotals {
    int64_t tensors = 0, numel = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, TypeTotals> by_type;
  TypeTotals all;
  for (const GgufTensor& t : gguf.tensors) {
    TypeTotals& totals = by_type[t.type.name];
    for (TypeTotals* x : {&totals, &all}) {
      ++x->tensors;
      x->numel += t.numel;
      x->bytes += t.bytes;
    }
  }
  std::printf("\n  %-8s %8s %12s %14s %6s\n", "type", "tensors", "params", "bytes", "bpw");
  for (const auto& [name, t] : by_type)
    std::printf("  %-8s %8lld %12s %14s %6.2f\n", name.c_str(), static_cast<long long>(t.tensors),
                human_count(static_cast<uint64_t>(t.numel)).c_str(), human_bytes(t.bytes).c_str(), bits_per_weight(t.bytes, t.numel));
  std::printf("  %-8s %8lld %12s %14s %6.2f\n", "total", static_cast<long long>(all.tensors),
              human_count(static_cast<uint64_t>(all.numel)).c_str(), human_bytes(all.bytes).c_str(), bits_per_weight(all.bytes, all.numel));

  std::printf("\n  %-40s %-8s %-24s %6s\n", "tensor", "type", "shape (ggml order)", "bpw");
  for (const GgufTensor& t : gguf.tensors)
    std::printf("  %-40.*s %-8s %-24s %6.2f\n", static_cast<int>(t.name.size()), t.name.data(), t.type.name,
                shape_text(t).c_str(), bits_per_weight(t.bytes, t.numel));
  return 0;
}

}  // namespace ds::app
