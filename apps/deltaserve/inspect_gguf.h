// `deltaserve inspect --model FILE.gguf`: the container's header, architecture and tokenizer
// metadata, tensors by ggml type with bits per weight, then every tensor (name, type, shape, bpw).
#pragma once

#include <string>

namespace ds::app {

int inspect_gguf(const std::string& path);

// One "key  value" line of an inspect report (both reports share the layout).
void print_inspect_row(const char* key, const std::string& value);

}  // namespace ds::app
