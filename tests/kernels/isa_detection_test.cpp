// ISA names, detection and the AMX gate: what --isa accepts, that the detected level and the AMX
// reason agree, and that asking for AMX kernels where they cannot run is a clear error, not SIGILL.
#include <gtest/gtest.h>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/isa.h"

namespace ds {
namespace {

TEST(Isa, ParsesEveryLevelByNameAndRejectsOthers) {
  Isa isa = Isa::scalar;
  for (auto [name, expected] : {std::pair{"amx", Isa::amx}, {"avx512", Isa::avx512}, {"avx2", Isa::avx2},
                                {"scalar", Isa::scalar}}) {
    ASSERT_TRUE(parse_isa(name, &isa)) << name;
    EXPECT_EQ(isa, expected) << name;
  }
  ASSERT_TRUE(parse_isa("auto", &isa));
  EXPECT_EQ(isa, detect_isa());
  EXPECT_FALSE(parse_isa("avx", &isa));
  EXPECT_FALSE(parse_isa("AMX", &isa));
}

TEST(Isa, AmxLevelExactlyWhenItsReasonIsEmpty) {
  const Isa isa = detect_isa();
  EXPECT_EQ(isa == Isa::amx, amx_unavailable_reason().empty()) << isa_name(isa) << ": " << amx_unavailable_reason();
  EXPECT_EQ(has_avx512(isa), isa >= Isa::avx512);
  EXPECT_FALSE(has_avx512(Isa::avx2));
}

TEST(IsaDeathTest, AmxBackendWithoutAmxIsAClearError) {
  if (detect_isa() == Isa::amx)
    GTEST_SKIP() << "this CPU has AMX, so the error for a CPU without it cannot be provoked here";
  EXPECT_DEATH(CpuBackend(Isa::amx, 1), "AMX kernels requested, but");
}

}  // namespace
}  // namespace ds
