// DS_CHECK: internal invariants (programming errors, never user input). Aborts with file:line,
// the failed condition and the values given, so a broken invariant is never silently carried on.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "util/str_cat.h"

namespace ds::detail {
[[noreturn]] inline void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "deltaserve: internal check failed at %s:%d: %s %s\n", file, line, cond, msg.c_str());
  std::abort();
}
}  // namespace ds::detail

#define DS_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond)) ::ds::detail::check_failed(__FILE__, __LINE__, #cond, ::ds::str_cat(__VA_ARGS__)); \
  } while (0)
