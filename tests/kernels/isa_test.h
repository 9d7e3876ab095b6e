// Kernel tests parametrised over the CPU backend's instruction sets: a build this CPU cannot run
// is reported as skipped (with the reason), never quietly dropped from the sweep.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/isa.h"

namespace ds::test {

class IsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (detect_isa() < GetParam())
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << " (it has " << isa_name(detect_isa())
                   << "), so that build of the kernels is not checked here";
  }
};

// Test name suffix: scalar, avx2 or avx512.
inline std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  switch (info.param) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

}  // namespace ds::test
