// StopCondition: a request's own test for the end of its output beyond token ids — stop strings,
// which need the text, which the engine does not have. The engine asks it about every token it
// commits, once each and in order, on the engine thread, and ends the request at the first token it
// names — inside an accepted run of drafts too — so no token past the stop is emitted or committed.
#pragma once

#include <cstdint>

namespace ds {

class StopCondition {
 public:
  virtual ~StopCondition() = default;
  // After generated token `token` (the tokens before it were asked already): does the output end here?
  virtual bool ends_at(int32_t token) = 0;
};

}  // namespace ds
