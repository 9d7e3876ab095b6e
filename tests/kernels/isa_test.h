// Kernel tests parametrised over the CPU backend's instruction sets: a build this CPU cannot run
// is reported as skipped (with the reason), never quietly dropped from the sweep.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
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

// scalar, avx2, avx512 or amx: the test name's suffix.
inline const char* isa_short_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::amx: return "amx";
  }
  return "unknown";
}

inline std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) { return isa_short_name(info.param); }

}  // namespace ds::test

namespace ds {
// How gtest prints a parameter (ctest's test names carry it): the ISA by name, not as 4 raw bytes.
inline void PrintTo(Isa isa, std::ostream* os) { *os << test::isa_short_name(isa); }
}  // namespace ds
