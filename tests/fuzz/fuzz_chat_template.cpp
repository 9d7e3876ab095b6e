// libFuzzer target: the Jinja chat-template parser (tag scanner with HF's whitespace settings and the
// expression grammar) must return a Status for any bytes, never crash, hang or recurse without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tokenizer/jinja/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto program = ds::jinja::parse_template(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!program.ok() && program.status().message().empty()) __builtin_trap();  // errors must say something
  return 0;
}
