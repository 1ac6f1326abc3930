#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/simd_target.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
std::int64_t TargetHere() { return HWY_TARGET; }
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cctype>
#include <cstdint>

#include "core/error.h"
#include "kernels_simd/simd_target.h"

namespace mpsim::simd {
namespace {

HWY_EXPORT(TargetHere);

struct TargetName {
  std::string_view name;
  std::int64_t bits;
};

constexpr std::int64_t kAllBits = ~std::int64_t{0};

std::vector<TargetName> target_names() {
  std::vector<TargetName> names = {{"scalar", HWY_EMU128 | HWY_SCALAR}, {"emu128", HWY_EMU128}};
#if HWY_ARCH_X86
  names.insert(names.end(), {{"sse4", HWY_SSE4},
                             {"ssse3", HWY_SSSE3},
                             {"avx2", HWY_AVX2},
                             {"avx512", HWY_AVX3 | HWY_AVX3_DL},
                             {"avx3", HWY_AVX3},
                             {"avx3_dl", HWY_AVX3_DL}});
#elif HWY_ARCH_ARM
  names.insert(names.end(), {{"neon", HWY_NEON}, {"sve", HWY_SVE}, {"sve2", HWY_SVE2}});
#endif
  return names;
}

std::string name_of(std::int64_t bit) {
  for (const TargetName& t : target_names()) {
    if ((t.bits & bit) != 0) return std::string(t.name);
  }
  std::string name = hwy::TargetName(bit);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

std::string current_target() { return name_of(HWY_DYNAMIC_DISPATCH(TargetHere)()); }

std::vector<std::string> available_targets() {
  std::vector<std::string> out;
  const std::int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
  for (std::int64_t bits = usable; bits != 0; bits &= bits - 1) {
    out.push_back(name_of(bits & -bits));  // lowest bit first = best target first
  }
  return out;
}

void restrict_targets(std::string_view spec) {
  std::int64_t allowed = 0;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', pos), spec.size());
    std::string word(spec.substr(pos, comma - pos));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::int64_t bits = 0;
    for (const TargetName& t : target_names()) {
      if (t.name == word) bits = t.bits;
    }
    if (bits == 0) {
      throw InvalidArgument("[simd] unknown SIMD target '" + word +
                            "' (expected scalar, sse4, avx2, avx512, neon, sve or sve2)");
    }
    allowed |= bits;
    pos = comma + 1;
  }
  reset_targets();
  if ((allowed & hwy::SupportedTargets() & HWY_TARGETS) == 0) {
    std::string available;
    for (const std::string& t : available_targets())
      available += (available.empty() ? "" : ", ") + t;
    throw InvalidArgument("[simd] none of the SIMD targets '" + std::string(spec) +
                          "' is available on this CPU in this build (available: " + available +
                          ")");
  }
  hwy::DisableTargets(kAllBits & ~allowed);
}

void reset_targets() { hwy::DisableTargets(0); }

}  // namespace mpsim::simd
#endif  // HWY_ONCE
