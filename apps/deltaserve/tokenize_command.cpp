// `deltaserve tokenize --model DIR --text TEXT` and `deltaserve detokenize --model DIR --ids 1,2,3`:
// the checkpoint's tokenizer alone (tokenizer.json, config.json for the pipeline choice); no weights.
#include <cstdio>

#include "cli_errors.h"
#include "commands.h"
#include "token_list.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"

namespace ds::app {
namespace {

struct TokenizeOptions {
  std::string model_dir, text, ids;
  bool skip_special = false;
};

int run_tokenize(const TokenizeOptions& options) {
  auto tokenizer = Tokenizer::load_dir(options.model_dir);
  if (!tokenizer.ok()) return report_error(tokenizer.status());
  auto ids = tokenizer->encode(options.text);
  if (!ids.ok()) return report_error(ids.status().with_context("--text"));
  std::printf("%s\n", join_ints(*ids).c_str());
  return 0;
}

int run_detokenize(const TokenizeOptions& options) {
  auto ids = parse_int_list(options.ids, "--ids");
  if (!ids.ok()) return report_error(ids.status());
  auto tokenizer = Tokenizer::load_dir(options.model_dir);
  if (!tokenizer.ok()) return report_error(tokenizer.status());
  for (size_t i = 0; i < ids->size(); ++i) {
    if (!tokenizer->is_known((*ids)[i]))
      return report_error(Status::errorf("--ids: item ", i + 1, ": expected a token id of this tokenizer (0..",
                                         tokenizer->id_limit() - 1, " and in its vocabulary), found ", (*ids)[i]));
  }
  const std::string text = tokenizer->decode(*ids, options.skip_special);
  std::fwrite(text.data(), 1, text.size(), stdout);  // exactly the text: no newline added
  return 0;
}

}  // namespace

CommandRunner add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("tokenize", "Print the token ids of a text, comma-separated");
  command->add_option("-m,--model", options->model_dir, "Checkpoint directory (only its tokenizer files are read)")->required();
  command->add_option("--text", options->text, "Text to encode (UTF-8)")->required();
  return [options] { return run_tokenize(*options); };
}

CommandRunner add_detokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("detokenize", "Print the text of token ids (exactly, no newline added)");
  command->add_option("-m,--model", options->model_dir, "Checkpoint directory (only its tokenizer files are read)")->required();
  command->add_option("--ids", options->ids, "Token ids, comma-separated")->required();
  command->add_flag("--skip-special-tokens", options->skip_special, "Leave out special added tokens, as HF decode(skip_special_tokens=True)");
  return [options] { return run_detokenize(*options); };
}

}  // namespace ds::app
