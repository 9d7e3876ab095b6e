// `deltaserve token-map --model M --corpus FILE... [--held-out FILE...] [--out MAP]`: a draft head's
// token map from text a deployment sees (its prompts and replies, a domain's documents): the corpus's
// token counts, most frequent first (the file `--speculative-token-map` reads), and how much of the
// corpus — and of held-out text, the honest measure — the first N ids of that map and of the merge
// rank (`--draft-vocab N` alone) cover. A drafted token outside the draft vocabulary cannot be
// proposed, so coverage bounds what a restricted head can get accepted (docs/mtp.md).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_errors.h"
#include "commands.h"
#include "io/token_map_file.h"
#include "model_argument.h"
#include "tokenizer/token_counts.h"
#include "tokenizer/tokenizer.h"
#include "util/elapsed.h"
#include "util/human.h"
#include "util/log.h"
#include "util/str_cat.h"

namespace ds::app {
namespace {

struct TokenMapOptions {
  std::string model;
  std::vector<std::string> corpus, held_out;
  std::string out;
  int64_t size = 0;  // 0: every id of the vocabulary
  std::vector<int64_t> report_sizes{4096, 8192, 16384, 32768, 65536};
};

// Encodes `path` line by line (each line keeps its newline) into `counts`. A line that is not UTF-8
// is left out and counted in `skipped`: a corpus of logs should not fail on one bad byte.
Status count_file(const Tokenizer& tokenizer, const std::string& path, const char* what, TokenCounts& counts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf(what, ": cannot read ", path);
  const auto start = std::chrono::steady_clock::now();
  const uint64_t tokens_before = counts.total();
  uint64_t bytes = 0, lines = 0, skipped = 0;
  for (std::string line; std::getline(in, line);) {
    if (!in.eof()) line += '\n';
    bytes += line.size();
    ++lines;
    auto ids = tokenizer.encode(line);
    if (!ids.ok()) {
      if (skipped++ == 0) log::warn(what, ": ", path, ": line ", lines, " left out: ", ids.status().message());
      continue;
    }
    counts.add(*ids);
  }
  if (in.bad()) return Status::errorf(what, ": error reading ", path);
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.2f s", seconds_since(start));
  log::info(what, ": ", path, ": ", human_bytes(bytes), ", ", lines, " lines, ", counts.total() - tokens_before, " tokens (",
            seconds, ")", skipped > 0 ? str_cat("; ", skipped, " lines not UTF-8, left out") : std::string());
  return {};
}

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof(text), "%.2f%%", 100.0 * share);
  return text;
}

int run_token_map(const TokenMapOptions& options) {
  auto tokenizer = Tokenizer::load_dir(options.model);
  if (!tokenizer.ok()) return report_error(tokenizer.status());
  TokenCounts corpus(tokenizer->id_limit()), held_out(tokenizer->id_limit());
  for (const std::string& path : options.corpus)
    if (Status s = count_file(*tokenizer, path, "--corpus", corpus); !s.ok()) return report_error(s);
  for (const std::string& path : options.held_out)
    if (Status s = count_file(*tokenizer, path, "--held-out", held_out); !s.ok()) return report_error(s);
  if (corpus.total() == 0) return report_error(Status::errorf("--corpus: expected text, found no tokens in ", options.corpus.size(), " file(s)"));

  const std::vector<int32_t> ordering = corpus.ordering([&](int32_t id) { return tokenizer->is_known(id); });
  std::printf("corpus: %llu tokens, %lld distinct ids of the vocabulary's %zu\n",
              static_cast<unsigned long long>(corpus.total()), static_cast<long long>(corpus.distinct()), ordering.size());
  if (held_out.total() > 0)
    std::printf("held-out: %llu tokens, %lld distinct ids\n", static_cast<unsigned long long>(held_out.total()),
                static_cast<long long>(held_out.distinct()));
  std::printf("\n  %-12s %-26s %s\n", "draft vocab", "corpus: map / merge rank", held_out.total() > 0 ? "held-out: map / merge rank" : "");
  for (int64_t n : options.report_sizes) {
    std::string row = str_cat(percent(corpus.coverage(ordering, n)), " / ", percent(corpus.coverage_below(n)));
    if (held_out.total() > 0)
      row = str_cat(row, std::string(row.size() < 26 ? 26 - row.size() : 1, ' '), percent(held_out.coverage(ordering, n)),
                    " / ", percent(held_out.coverage_below(n)));
    std::printf("  %-12lld %s\n", static_cast<long long>(n), row.c_str());
  }
  if (options.out.empty()) return 0;

  const size_t size = options.size > 0 ? std::min(ordering.size(), static_cast<size_t>(options.size)) : ordering.size();
  const std::span<const int32_t> ids(ordering.data(), size);
  std::vector<uint64_t> counts(size);
  for (size_t i = 0; i < size; ++i) counts[i] = corpus.count(ids[i]);
  std::string sources;
  for (const std::string& path : options.corpus) sources += str_cat(sources.empty() ? "" : ", ", path);
  const std::string comment =
      str_cat("deltaserve token-map: ", size, " token ids of ", options.model, ", most frequent first in ", corpus.total(),
              " tokens of ", sources, "\n(unseen ids follow in id order, the merge rank); \"id count\" a line, for --speculative-token-map");
  if (Status s = write_token_map(options.out, ids, counts, comment); !s.ok()) return report_error(s.with_context("--out"));
  log::info("token-map: wrote ", options.out, ": ", size, " ids (", std::min<int64_t>(corpus.distinct(), static_cast<int64_t>(size)),
            " seen in the corpus)");
  return 0;
}

}  // namespace

CommandRunner add_token_map_command(CLI::App& app) {
  auto options = std::make_shared<TokenMapOptions>();
  CLI::App* command = app.add_subcommand(
      "token-map",
      "Count the tokens of a text corpus into a draft head's token map (--speculative-token-map: ids most frequent first) "
      "and report how much of the corpus, and of held-out text, the first N ids cover against the merge rank "
      "(--draft-vocab N alone)");
  add_model_option(command, options->model, "Checkpoint directory or GGUF file (only its tokenizer is read)")->required();
  command->add_option("--corpus", options->corpus,
                      "Text files whose tokens are counted (UTF-8, encoded line by line; rendered chats count their "
                      "template's special tokens too)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--held-out", options->held_out, "Text files measured but not counted: the coverage the map would give on text it was not made from")
      ->check(CLI::ExistingFile);
  command->add_option("-o,--out", options->out, "Write the map here (text, \"id count\" a line; without it only the coverage is reported)");
  command->add_option("--size", options->size, "Ids to write (default: every id of the vocabulary, the unseen ones last in id order)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  command->add_option("--report-sizes", options->report_sizes, "Draft vocabulary sizes to report coverage at")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  return [options] { return run_token_map(*options); };
}

}  // namespace ds::app
