// Concurrency bench: one reader thread per request records when each token arrives; the decode
// window starts when the last request has its first token, so prefill never counts as decode.
#include "bench_concurrency.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "util/random.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

}  // namespace

Result<ConcurrencyResult> run_concurrency(Engine& engine, int64_t vocab, int64_t concurrency, int64_t prompt_tokens,
                                          int64_t decode_tokens, const SamplingParams& sampling, uint64_t seed) {
  Xoshiro256 rng(seed);
  std::vector<std::shared_ptr<RequestStream>> streams;
  std::vector<std::vector<Clock::time_point>> arrivals(static_cast<size_t>(concurrency));  // per request, per token
  std::vector<std::string> errors(static_cast<size_t>(concurrency));
  SamplingParams params = sampling;
  params.max_tokens = decode_tokens;
  params.ignore_eos = true;
  const auto start = Clock::now();
  for (int64_t i = 0; i < concurrency; ++i) {
    std::vector<int32_t> prompt(static_cast<size_t>(prompt_tokens));
    for (auto& id : prompt) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
    DS_ASSIGN_OR_RETURN(auto stream, engine.submit(std::move(prompt), params));
    streams.push_back(std::move(stream));
  }
  std::vector<std::thread> readers;
  for (int64_t i = 0; i < concurrency; ++i)
    readers.emplace_back([&, i] {
      auto& times = arrivals[static_cast<size_t>(i)];
      while (auto event = streams[static_cast<size_t>(i)]->next()) {
        const auto now = Clock::now();
        times.insert(times.end(), event->tokens.size(), now);
        if (event->finish && *event->finish == FinishReason::error) errors[static_cast<size_t>(i)] = event->error;
      }
    });
  for (auto& reader : readers) reader.join();
  const auto end = Clock::now();
  for (const std::string& error : errors)
    if (!error.empty()) return Status::error(error);

  ConcurrencyResult r;
  r.concurrency = concurrency;
  Clock::time_point all_decoding = start;  // the last first token
  std::vector<double> gaps;
  int64_t total = 0;
  for (const auto& times : arrivals) {
    if (times.empty()) return Status::error("a request produced no tokens");
    const double ttft = std::chrono::duration<double>(times.front() - start).count();
    r.ttft_mean_s += ttft / static_cast<double>(concurrency);
    r.ttft_max_s = std::max(r.ttft_max_s, ttft);
    all_decoding = std::max(all_decoding, times.front());
    for (size_t t = 1; t < times.size(); ++t) gaps.push_back(std::chrono::duration<double>(times[t] - times[t - 1]).count());
    total += static_cast<int64_t>(times.size());
  }
  int64_t in_window = 0;
  Clock::time_point last = all_decoding;
  for (const auto& times : arrivals)
    for (const auto& t : times)
      if (t > all_decoding) {
        ++in_window;
        last = std::max(last, t);
      }
  const double window = std::chrono::duration<double>(last - all_decoding).count();
  r.decode_tokens_per_s = window > 0 ? static_cast<double>(in_window) / window : 0;
  r.total_tokens_per_s = static_cast<double>(total) / std::chrono::duration<double>(end - start).count();
  double gap_sum = 0;
  for (double g : gaps) gap_sum += g;
  r.itl_mean_s = gaps.empty() ? 0 : gap_sum / static_cast<double>(gaps.size());
  r.itl_p50_s = percentile(gaps, 0.5);
  r.itl_p99_s = percentile(gaps, 0.99);
  return r;
}

}  // namespace ds::app
