// `deltaserve tokenize --model DIR --text TEXT` and `deltaserve detokenize --model DIR --ids 1,2,3`:
// the checkpoint's tokenizer alone (tokenizer.json, config.json for the pipeline choice); no weights.
#include <chrono>
#include <cstdio>
#include <fstream>

#include "model_argument.h"
#include "cli_errors.h"
#include "commands.h"
#include "token_list.h"
#include "tokenizer/tokenizer.h"
#include "util/log.h"

namespace ds::app {
namespace {

struct TokenizeOptions {
  std::string model_dir, text, file, ids;
  bool skip_special = false;
};

// --file: encodes every line (newline kept) on one thread and logs the speed; prints the id count.
int run_tokenize_file(const Tokenizer& tokenizer, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return report_error(Status::errorf("--file: cannot read ", path));
  std::vector<std::string> lines;
  size_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    if (!in.eof()) line += '\n';
    bytes += line.size();
    lines.push_back(std::move(line));
  }
  size_t count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < lines.size(); ++i) {
    auto ids = tokenizer.encode(lines[i]);
    if (!ids.ok()) return report_error(ids.status().with_context(str_cat("--file: line ", i + 1)));
    count += ids->size();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("tokenize: ", bytes, " bytes in ", lines.size(), " lines -> ", count, " tokens in ", seconds, " s: ",
            static_cast<double>(bytes) / 1e6 / seconds, " MB/s (one thread)");
  std::printf("%zu\n", count);
  return 0;
}

int run_tokenize(const TokenizeOptions& options) {
  auto tokenizer = Tokenizer::load_dir(options.model_dir);
  if (!tokenizer.ok()) return report_error(tokenizer.status());
  if (!options.file.empty()) return run_tokenize_file(*tokenizer, options.file);
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
  add_model_option(command, options->model_dir, "Checkpoint directory or GGUF file (only its tokenizer is read)")->required();
  auto* text = command->add_option("--text", options->text, "Text to encode (UTF-8)");
  auto* file = command->add_option("--file", options->file, "Encode every line of a file instead; prints the token count and logs MB/s");
  text->excludes(file);
  command->callback([text, file] {
    if (text->count() == 0 && file->count() == 0) throw CLI::ValidationError("one of --text or --file is required");
  });
  return [options] { return run_tokenize(*options); };
}

CommandRunner add_detokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("detokenize", "Print the text of token ids (exactly, no newline added)");
  add_model_option(command, options->model_dir, "Checkpoint directory or GGUF file (only its tokenizer is read)")->required();
  command->add_option("--ids", options->ids, "Token ids, comma-separated")->required();
  command->add_flag("--skip-special-tokens", options->skip_special, "Leave out special added tokens, as HF decode(skip_special_tokens=True)");
  return [options] { return run_detokenize(*options); };
}

}  // namespace ds::app
