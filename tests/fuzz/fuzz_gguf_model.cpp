// libFuzzer target: a whole GGUF model as `serve --model x.gguf` reads it — the container, the
// qwen35.* config, the tensor mapping back to the HF model (llama.cpp's conversions undone), binding,
// the tokenizer and chat template from the metadata — then one forward of two tokens on the
// reference backend, which reads every tensor (the block-type embedding gather and matmuls included).
// The input is written to a scratch file first: the loader maps files, as it does for users.
// Invariants on accepted input: a positive vocabulary, and the forward succeeds and fills
// [2, vocab] logits (the values may be anything: the weights are fuzzed). Seeds: tiny random models from make_gguf_model_seeds (run it into
// corpus/gguf_model after a format change).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/ref/ref_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"

namespace {

// One scratch file per process (libFuzzer's workers are processes), removed at exit.
const std::string& scratch_path() {
  static const std::string path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "ds_fuzz_gguf_model.XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    static std::string to_remove = dir;
    std::atexit([] { std::filesystem::remove_all(to_remove); });
    ds::log::set_level(ds::log::Level::quiet);
    return dir + "/model.gguf";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0) std::abort();
  }
  // The tokenizer and the template are read from the metadata whether or not the weights load.
  (void)ds::Tokenizer::load_dir(path);
  (void)ds::load_chat_template(path);
  (void)ds::load_special_tokens(path);

  ds::RefBackend backend;
  auto loaded = ds::load_model(path, backend, ds::ComputeMode::f32, ds::WeightsChoice::native, 1);
  if (!loaded.ok()) return 0;
  const int64_t vocab = loaded->config.text.vocab_size;
  if (vocab <= 0) __builtin_trap();
  ds::SequenceRunner runner(*loaded->model, 2, 2);
  std::vector<float> logits;
  const std::vector<int32_t> ids = {0, static_cast<int32_t>(vocab - 1)};
  if (!runner.feed(ids, ds::LogitsRows::all, logits).ok()) __builtin_trap();
  if (logits.size() != static_cast<size_t>(2 * vocab)) __builtin_trap();
  return 0;
}
