// `deltaserve logits --model DIR --tokens 1,2,3 [--chunks 5,3,1] --out FILE.npy`: float32 logits
// [n_tokens, vocab] at every position, the tokens fed in the given chunk sizes (a chunk of 1 after
// the first call takes the decode path). A stable contract other tooling depends on.
#include <numeric>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "run_options.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "token_list.h"
#include "util/log.h"
#include "util/npy.h"

namespace ds::app {
namespace {

struct LogitsOptions {
  std::string model_dir, tokens, chunks, out;
  RunOptions run;
};

int run_logits(const LogitsOptions& options) {
  auto tokens = parse_int_list(options.tokens, "--tokens");
  if (!tokens.ok()) return report_error(tokens.status());
  std::vector<int32_t> chunks{static_cast<int32_t>(tokens->size())};
  if (!options.chunks.empty()) {
    auto parsed = parse_int_list(options.chunks, "--chunks");
    if (!parsed.ok()) return report_error(parsed.status());
    chunks = *parsed;
    const int64_t sum = std::accumulate(chunks.begin(), chunks.end(), int64_t{0});
    if (sum != static_cast<int64_t>(tokens->size()) || std::find(chunks.begin(), chunks.end(), 0) != chunks.end())
      return report_error(Status::errorf("--chunks: sizes must be positive and sum to the ", tokens->size(),
                                         " tokens, found a sum of ", sum));
  }
  if (Status valid = check_token_ids(*tokens, options.model_dir, "--tokens"); !valid.ok()) return report_error(valid);
  const auto backend = make_backend(options.run);
  auto loaded = load_model(options.model_dir, *backend, compute_mode(options.run),
                           weights_choice(options.run), thread_count(options.run));
  if (!loaded.ok()) return report_error(loaded.status());
  const int64_t vocab = loaded->config.text.vocab_size;
  const int32_t largest = *std::max_element(chunks.begin(), chunks.end());
  SequenceRunner runner(*loaded->model, static_cast<int64_t>(tokens->size()), largest);
  std::vector<float> all(tokens->size() * static_cast<size_t>(vocab)), logits;
  size_t offset = 0;
  for (int32_t chunk : chunks) {
    const Status status = runner.feed(std::span(*tokens).subspan(offset, chunk), LogitsRows::all, logits);
    if (!status.ok()) return report_error(status);
    std::copy(logits.begin(), logits.end(), all.begin() + static_cast<int64_t>(offset) * vocab);
    offset += chunk;
  }
  const Status written = write_npy_f32(options.out, {static_cast<int64_t>(tokens->size()), vocab}, all.data());
  if (!written.ok()) return report_error(written);
  log::info("logits: wrote ", options.out, " [", tokens->size(), ", ", vocab, "]");
  return 0;
}

}  // namespace

CommandRunner add_logits_command(CLI::App& app) {
  auto options = std::make_shared<LogitsOptions>();
  CLI::App* command = app.add_subcommand("logits", "Write the logits at every position of a token sequence to a .npy file");
  add_model_option(command, options->model_dir, "Checkpoint directory, or a GGUF file (FILE.gguf, or any part of a split set)")->required();
  command->add_option("--tokens", options->tokens, "Token ids, comma-separated")->required();
  command->add_option("--chunks", options->chunks, "Feed the tokens in calls of these sizes (default: one call)");
  command->add_option("--out", options->out, "Output .npy file: float32 [n_tokens, vocab_size]")->required();
  add_run_options(command, options->run);
  return [options] { return run_logits(*options); };
}

}  // namespace ds::app
