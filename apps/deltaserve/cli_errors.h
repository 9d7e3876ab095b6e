// One way every subcommand reports a failure: "deltaserve: error: <message>" and exit code 1.
#pragma once

#include <cstdio>

#include "util/status.h"

namespace ds::app {

inline int report_error(const Status& status) {
  std::fprintf(stderr, "deltaserve: error: %s\n", status.message().c_str());
  return 1;
}

}  // namespace ds::app
