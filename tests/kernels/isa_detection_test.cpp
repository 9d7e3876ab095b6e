// ISA names, detection and the AMX gate: what --isa accepts, that detection agrees with what the
// kernel reports of the CPU (/proc/cpuinfo, an independent source), and that asking for AMX kernels
// where they cannot run is a clear error, not SIGILL.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

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

// The first CPU's flags as Linux lists them.
std::set<std::string> cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string flag; words >> flag;) flags.insert(flag);
      break;
    }
  return flags;
}

TEST(Isa, DetectionAgreesWithTheKernelsCpuFlags) {
  const std::set<std::string> flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags to compare with";
  auto has = [&](const char* flag) { return flags.count(flag) > 0; };
  const bool avx512 = has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512_bf16");
  const bool amx = avx512 && has("avx512_vnni") && has("amx_tile") && has("amx_bf16") && has("amx_int8");
  const Isa isa = detect_isa();
  EXPECT_EQ(isa >= Isa::avx512, avx512) << isa_name(isa);
  // Linux lists amx_* only where it enables the tile state, so only a refused permission may differ.
  if (amx) {
    EXPECT_EQ(isa, Isa::amx) << "the CPU lists AMX but detection says: " << amx_unavailable_reason();
  } else {
    EXPECT_NE(isa, Isa::amx);
  }
  EXPECT_EQ(isa == Isa::amx, amx_unavailable_reason().empty()) << amx_unavailable_reason();
}

TEST(IsaDeathTest, AmxBackendWithoutAmxIsAClearError) {
  if (detect_isa() == Isa::amx)
    GTEST_SKIP() << "this CPU has AMX, so the error for a CPU without it cannot be provoked here";
  EXPECT_DEATH(CpuBackend(Isa::amx, 1), "AMX kernels requested, but");
}

}  // namespace
}  // namespace ds
