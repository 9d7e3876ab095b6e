// StopStringMatcher: OpenAI `stop` semantics over streamed text — the output ends right before the
// stop string, which is never emitted; text that may still become a stop string is held back.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ds {

// Feed each generated piece to push(); emit Step::text. When Step::stopped is true the request must
// end (the stop string and everything after it are dropped; further pushes return nothing). If
// generation ends otherwise, finish() returns the text still held back.
//
// Each stop string runs a Knuth–Morris–Pratt automaton over the stream, carried across pushes, so a
// stop split over any number of pieces is found and every byte is looked at O(stops) times: no
// rescanning, whatever the piece sizes. The automaton state of a stop is also the length of the
// longest tail of the text that is a prefix of that stop: exactly what must be held back.
//
// When several stops complete in the same push, the output ends before the one that starts first.
// A stop that has only started when another completes cannot win: generation ends at that push
// (servers check stops after every token, vLLM included). Empty stop strings are ignored.
class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Step {
    std::string text;      // safe to send now
    bool stopped = false;  // a stop string was found: end the request
  };
  Step push(std::string_view piece);
  // The held-back text when generation ends without a stop ("" after a stop or a second call).
  std::string finish();

  bool stopped() const { return stopped_; }
  // Which stop string ended the output (index into the constructor's list), -1 if none.
  int matched_stop() const { return matched_stop_; }

 private:
  struct Automaton {
    std::string stop;
    std::vector<size_t> failure;  // KMP prefix function
    size_t state = 0;             // chars of `stop` matched at the end of the text seen so far
    size_t stop_index = 0;        // position in the constructor's list
  };
  std::vector<Automaton> automata_;
  std::string held_;  // unemitted tail of the stream
  bool stopped_ = false;
  int matched_stop_ = -1;
};

}  // namespace ds
