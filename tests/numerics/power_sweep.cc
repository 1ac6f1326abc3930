// power_sweep: compares mpsim::pow(x, y) of float32 x with glibc's pow in double rounded once
// (pow's definition, docs/ops.md) over all 2^32 inputs (or every STRIDE-th one), bit for bit
// (NaN bits included), for the exponents of Note [exact powers] (kernels_simd/exact_power.h),
// per SIMD target. Not a CI test (the full sweep takes a minute or two per exponent); CI runs
// the same comparison on a sample (binary_test's PowOnTarget.ExactPowersGiveGlibcBits).
//
//   power_sweep [--stride N] [--target NAME|all]
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels_simd/simd_target.h"
#include "tests/numerics/oracle.h"

namespace {

using namespace mpsim;
using namespace mpsim::testing;

struct Mismatch {
  std::uint64_t count = 0;
  std::uint32_t first = 0;
};

Mismatch sweep(double y, std::uint64_t stride) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;
  Mismatch total;
  std::vector<float> xs;
  for (std::uint64_t base = 0; base < (std::uint64_t{1} << 32); base += kChunk * stride) {
    xs.clear();
    for (std::uint64_t i = 0; i < kChunk && base + i * stride < (std::uint64_t{1} << 32); ++i) {
      xs.push_back(float_of(static_cast<std::uint32_t>(base + i * stride)));
    }
    const std::int64_t n = static_cast<std::int64_t>(xs.size());
    const std::vector<float> got = pow(from_vector(xs, {n}), Scalar(y)).to_vector<float>();
    const Mismatch m = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, n, 1 << 14), Mismatch{},
        [&](const tbb::blocked_range<std::int64_t>& r, Mismatch acc) {
          for (std::int64_t i = r.begin(); i < r.end(); ++i) {
            const float want = static_cast<float>(std::pow(static_cast<double>(xs[i]), y));
            if (bits_of(got[i]) != bits_of(want)) {
              if (acc.count++ == 0) acc.first = bits_of(xs[i]);
            }
          }
          return acc;
        },
        [](Mismatch a, const Mismatch& b) {
          if (a.count == 0) a.first = b.first;
          a.count += b.count;
          return a;
        });
    if (total.count == 0) total.first = m.first;
    total.count += m.count;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t stride = 1;
  std::string target = "best";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--stride") == 0) stride = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--target") == 0) target = argv[i + 1];
  }
  std::vector<std::string> targets = {target};
  if (target == "all") targets = mpsim::simd::available_targets();
  int failures = 0;
  for (const std::string& t : targets) {
    if (t != "best") mpsim::simd::restrict_targets(t);
    for (const double y : {0.0, 0.5, 1.0, 2.0, 3.0, -1.0, -2.0}) {
      const Mismatch m = sweep(y, stride);
      std::printf("%-8s y = %4.1f: %llu of 2^32/%llu inputs differ from glibc%s", t.c_str(), y,
                  static_cast<unsigned long long>(m.count),
                  static_cast<unsigned long long>(stride), m.count ? ", first x bits " : "\n");
      if (m.count) std::printf("0x%08x\n", m.first);
      failures += m.count != 0;
    }
  }
  return failures == 0 ? 0 : 1;
}
