// power_sweep: compares mpsim::pow(x, y) of float32 x with the correctly rounded x^y (Note
// [correctly rounded pow], kernels_simd/pow_cr.h) over all 2^32 inputs (or every STRIDE-th
// one), bit for bit, per SIMD target and exponent. The oracle is glibc's powl (long double)
// rounded to float, or 256-bit MPFR where powl's value lies within 2^-56 of a rounding boundary
// (mpfr_oracle.h); zeros, infinities, NaN and negative x with a non-integral y take glibc's
// pow in double, rounded once (pow's definition there, NaN bits included). Not a CI test (a
// minute or two per exponent and target on 2 cores); CI runs samples and the hard cases
// (correct_rounding_test's Pow tests, binary_test's PowOnTarget).
//
//   power_sweep [--stride N] [--target NAME|all] [--exponents Y1,Y2,...]
// The default exponents: those of Note [exact powers] and a set of others (kDefaultExponents).
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels_simd/pow_cr.h"
#include "kernels_simd/simd_target.h"
#include "tests/numerics/mpfr_oracle.h"
#include "tests/numerics/oracle.h"

namespace {

using namespace mpsim;
using namespace mpsim::testing;

// Per exponent: inputs mpsim misrounds (must be 0), inputs whose glibc double rounded once (the
// definition before Note [correctly rounded pow]) is misrounded, and inputs whose glibc double
// leaves the output rounding open (stage 2 of the Note), with the first few of each.
struct Mismatch {
  std::uint64_t count = 0, glibc_misrounded = 0, stage2 = 0;
  std::vector<std::uint32_t> first, glibc_first, stage2_first;

  void merge(const Mismatch& b) {
    count += b.count;
    glibc_misrounded += b.glibc_misrounded;
    stage2 += b.stage2;
    for (std::uint32_t v : b.first)
      if (first.size() < 4) first.push_back(v);
    for (std::uint32_t v : b.glibc_first)
      if (glibc_first.size() < 8) glibc_first.push_back(v);
    for (std::uint32_t v : b.stage2_first)
      if (stage2_first.size() < 8) stage2_first.push_back(v);
  }
};

// True where every double within kGlibcMarginUlps of glibc's r rounds to the same float (and,
// as pow_correctly_rounded, where |r| lies beyond 2^-1000 or 2^1000).
bool glibc_decides(double r) {
  if (std::fabs(r) < 0x1p-1000 || std::fabs(r) > 0x1p1000) return true;
  const std::uint64_t u = std::bit_cast<std::uint64_t>(r);
  const float lo = static_cast<float>(std::bit_cast<double>(u - simd::kGlibcMarginUlps));
  const float hi = static_cast<float>(std::bit_cast<double>(u + simd::kGlibcMarginUlps));
  return bits_of(lo) == bits_of(hi);
}

Mismatch sweep(float y, std::uint64_t stride) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;
  Mismatch total;
  std::vector<float> xs;
  for (std::uint64_t base = 0; base < (std::uint64_t{1} << 32); base += kChunk * stride) {
    xs.clear();
    for (std::uint64_t i = 0; i < kChunk && base + i * stride < (std::uint64_t{1} << 32); ++i) {
      xs.push_back(float_of(static_cast<std::uint32_t>(base + i * stride)));
    }
    const std::int64_t n = static_cast<std::int64_t>(xs.size());
    const std::vector<float> got =
        pow(from_vector(xs, {n}), Scalar(static_cast<double>(y))).to_vector<float>();
    const Mismatch m = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, n, 1 << 14), Mismatch{},
        [&](const tbb::blocked_range<std::int64_t>& r, Mismatch acc) {
          for (std::int64_t i = r.begin(); i < r.end(); ++i) {
            const double glibc = std::pow(static_cast<double>(xs[i]), y);
            const float want = glibc == 0 || !std::isfinite(glibc)
                                   ? static_cast<float>(glibc)
                                   : static_cast<float>(pow_oracle(xs[i], y, kF32));
            if (bits_of(got[i]) != bits_of(want)) {
              if (acc.count++ < 4) acc.first.push_back(bits_of(xs[i]));
            }
            if (glibc != 0 && std::isfinite(glibc)) {
              if (!glibc_decides(glibc) && acc.stage2++ < 8)
                acc.stage2_first.push_back(bits_of(xs[i]));
              if (bits_of(static_cast<float>(glibc)) != bits_of(want)) {
                if (acc.glibc_misrounded++ < 8) acc.glibc_first.push_back(bits_of(xs[i]));
              }
            }
          }
          return acc;
        },
        [](Mismatch a, const Mismatch& b) {
          a.merge(b);
          return a;
        });
    total.merge(m);
  }
  return total;
}

// Note [exact powers]'s exponents, then others: halves, quarters and eighths (exact powers of
// perfect squares), integers, gamma's 2.2 and 1/2.2, and exponents with long mantissas.
constexpr float kDefaultExponents[] = {
    0.0f,  0.5f, 1.0f, 2.0f,  3.0f,  -1.0f, -2.0f,    1.5f,     -0.5f, 0.25f, 0.125f, 2.5f,
    -1.5f, 4.0f, 5.0f, 10.0f, -3.0f, 2.2f,  1 / 2.2f, 1 / 3.0f, 0.75f, 7.5f,  0.1f,   -0.3f};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t stride = 1;
  std::string target = "best";
  std::vector<float> exponents(std::begin(kDefaultExponents), std::end(kDefaultExponents));
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--stride") == 0) stride = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--target") == 0) target = argv[i + 1];
    if (std::strcmp(argv[i], "--exponents") == 0) {
      exponents.clear();
      for (char* p = argv[i + 1]; *p != 0;) {
        exponents.push_back(std::strtof(p, &p));
        if (*p == ',') ++p;
      }
    }
  }
  std::vector<std::string> targets = {target};
  if (target == "all") targets = mpsim::simd::available_targets();
  int failures = 0;
  for (const std::string& t : targets) {
    if (t != "best") mpsim::simd::restrict_targets(t);
    for (const float y : exponents) {
      const Mismatch m = sweep(y, stride);
      std::printf(
          "%-8s y = %-11.9g (%a): %llu of 2^32/%llu inputs misrounded; glibc's double rounded "
          "once: %llu; stage 2: %llu\n",
          t.c_str(), y, y, static_cast<unsigned long long>(m.count),
          static_cast<unsigned long long>(stride),
          static_cast<unsigned long long>(m.glibc_misrounded),
          static_cast<unsigned long long>(m.stage2));
      for (std::uint32_t v : m.first) std::printf("  misrounded x = %a\n", float_of(v));
      for (std::uint32_t v : m.glibc_first) std::printf("  glibc misrounds x = %a\n", float_of(v));
      for (std::uint32_t v : m.stage2_first) std::printf("  stage 2 x = %a\n", float_of(v));
      std::fflush(stdout);
      failures += m.count != 0;
    }
  }
  return failures == 0 ? 0 : 1;
}
