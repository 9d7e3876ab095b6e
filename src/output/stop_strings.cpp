// StopStringMatcher (see stop_strings.h): per-stop KMP automata over the stream; the stop semantics
// mirror vLLM's StopChecker (vllm/v1/engine/detokenizer.py: truncate before the stop, never emit it).
#include "output/stop_strings.h"

#include <algorithm>

namespace ds {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (size_t index = 0; index < stops.size(); ++index) {
    if (stops[index].empty()) continue;
    Automaton a;
    a.stop = std::move(stops[index]);
    a.stop_index = index;
    a.failure.assign(a.stop.size(), 0);
    for (size_t i = 1, k = 0; i < a.stop.size(); ++i) {
      while (k > 0 && a.stop[i] != a.stop[k]) k = a.failure[k - 1];
      if (a.stop[i] == a.stop[k]) ++k;
      a.failure[i] = k;
    }
    automata_.push_back(std::move(a));
  }
}

StopStringMatcher::Step StopStringMatcher::push(std::string_view piece) {
  Step step;
  if (stopped_) return step;
  // held_ is the unemitted tail of the stream; the new piece starts at held_[start].
  const size_t start = held_.size();
  held_.append(piece);

  size_t best_begin = std::string::npos;  // in held_ coordinates
  for (Automaton& a : automata_) {
    for (size_t i = start; i < held_.size(); ++i) {
      const char c = held_[i];
      while (a.state > 0 && a.stop[a.state] != c) a.state = a.failure[a.state - 1];
      if (a.stop[a.state] == c) ++a.state;
      if (a.state == a.stop.size()) {
        // The state never exceeds the held tail, so the match begins inside held_.
        const size_t begin = i + 1 - a.stop.size();
        if (begin < best_begin) {
          best_begin = begin;
          matched_stop_ = static_cast<int>(a.stop_index);
        }
        break;  // this stop's first completion is its earliest start
      }
    }
  }
  if (best_begin != std::string::npos) {
    stopped_ = true;
    step.stopped = true;
    step.text = held_.substr(0, best_begin);
    held_.clear();
    held_.shrink_to_fit();
    return step;
  }
  size_t hold = 0;
  for (const Automaton& a : automata_) hold = std::max(hold, a.state);
  hold = std::min(hold, held_.size());
  step.text = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return step;
}

std::string StopStringMatcher::finish() {
  std::string rest;
  rest.swap(held_);
  for (Automaton& a : automata_) a.state = 0;
  return rest;
}

}  // namespace ds
