// FftPlan against a naive long double DFT written here: every method (identity, direct,
// radix-2, Bluestein) forward and inverse, the round trip, impulses, special values, caller
// scratch, large sizes on sampled outputs, concurrent execution and bad sizes.
//
// Note [fft test bound]
// With twiddles within u = 2^-53, Higham ("Accuracy and Stability of Numerical Algorithms",
// Thm 24.2) bounds radix-2 Cooley-Tukey norm-wise: ||X^ - X||_2 <= log2(n) eta ||X||_2 with
// eta = (1 + 4 sqrt(2)) u + O(u^2) ~ 6.7 u. As ||X||_2 = sqrt(n) ||x||_2, the rms error of an
// output is at most 6.7 log2(n) u ||x||_2. The tests assert the largest output error against
//   8 log2(n + 1) u ||x||_2,
// the rms bound with log2(n + 1) so that n = 1 and the direct DFT (n <= 16, one rounding per
// output) get a nonzero allowance. It holds for the maximum, not only the rms, because the
// rounding errors of the stages do not align: measured maxima stay under a fifth of it,
// Bluestein's (two transforms of size <= 4n and three pointwise products) included. A wrong
// twiddle, permutation or chirp gives errors of order ||x||_2 and fails it by orders of
// magnitude. The oracle's own error (long double twiddles, compensated sums) is about
// 2^-63 ||x||_1.
#include "core/fft_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mpsim {
namespace {

using LD = long double;
using Complex = std::complex<double>;
using LongComplex = std::complex<LD>;

constexpr LD kU = 0x1p-53L;
constexpr LD kTwoPi = 6.283185307179586476925286766559005768L;

// Neumaier's compensated sum: error about 2 eps_ld sum |terms|.
class CompensatedSum {
 public:
  void add(LD v) {
    const LD t = sum_ + v;
    comp_ += std::fabs(sum_) >= std::fabs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  LD value() const { return sum_ + comp_; }

 private:
  LD sum_ = 0.0L;
  LD comp_ = 0.0L;
};

// roots[r] = exp(-2 pi i r / n), the angle taken as 2 pi r' / n with r' = r or r - n, whichever
// is smaller in magnitude, so |angle| <= pi.
std::vector<LongComplex> oracle_roots(std::int64_t n) {
  std::vector<LongComplex> roots(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t centered = 2 * r <= n ? r : r - n;
    const LD angle = kTwoPi * static_cast<LD>(centered) / static_cast<LD>(n);
    roots[r] = {std::cos(angle), -std::sin(angle)};
  }
  return roots;
}

// sum_j x[j] exp(-+2 pi i j k / n) for 0 <= k < n, j k reduced mod n exactly in integers.
LongComplex oracle_at(const std::vector<Complex>& x, const std::vector<LongComplex>& roots,
                      std::int64_t k, bool inverse) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const std::int64_t step = k % n;
  CompensatedSum re, im;
  std::int64_t r = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const LD wr = roots[r].real(), wi = inverse ? -roots[r].imag() : roots[r].imag();
    const LD xr = x[j].real(), xi = x[j].imag();
    re.add(xr * wr);
    re.add(-xi * wi);
    im.add(xr * wi);
    im.add(xi * wr);
    r += step;
    if (r >= n) r -= n;
  }
  return {re.value(), im.value()};
}

std::vector<Complex> random_line(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Complex> x(static_cast<std::size_t>(n));
  for (Complex& v : x) {
    const double re = dist(rng);
    v = {re, dist(rng)};
  }
  return x;
}

LD norm2(const std::vector<Complex>& x) {
  LD s = 0.0L;
  for (const Complex& v : x) s += LD{v.real()} * v.real() + LD{v.imag()} * v.imag();
  return std::sqrt(s);
}

// Note [fft test bound].
LD bound(std::int64_t n, LD norm) { return 8.0L * std::log2(static_cast<LD>(n) + 1) * kU * norm; }

LD distance(Complex a, LongComplex b) {
  return std::hypot(LD{a.real()} - b.real(), LD{a.imag()} - b.imag());
}

// Sizes the plan computes without Bluestein, where an impulse's transform is exact.
bool exact_on_impulse(std::int64_t n) {
  return n <= 16 || std::has_single_bit(static_cast<std::uint64_t>(n));
}

std::vector<Complex> transformed(const FftPlan& plan, std::vector<Complex> x, bool inverse) {
  plan.execute(x.data(), inverse);
  return x;
}

bool same_bits(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Complex)) == 0;
}

class FftPlanSizeTest : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(FftPlanSizeTest, MatchesOracle) {
  const std::int64_t n = GetParam();
  const FftPlan plan(n);
  ASSERT_EQ(plan.size(), n);
  const std::vector<LongComplex> roots = oracle_roots(n);
  for (std::uint64_t seed : {1u, 2u}) {
    const std::vector<Complex> x = random_line(n, seed * 1000 + static_cast<std::uint64_t>(n));
    const LD allowed = bound(n, norm2(x));
    for (bool inverse : {false, true}) {
      const std::vector<Complex> got = transformed(plan, x, inverse);
      LD worst = 0.0L;
      std::int64_t worst_k = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        const LD err = distance(got[k], oracle_at(x, roots, k, inverse));
        if (err > worst) {
          worst = err;
          worst_k = k;
        }
      }
      EXPECT_LE(worst, allowed) << "n=" << n << " inverse=" << inverse << " k=" << worst_k;
    }
  }
}

// inverse(forward(x)) = n x. The forward error dX (rms per output <= the bound above) comes back
// through the inverse as an error of norm sqrt(n) ||dX||_2, that is rms sqrt(n) times the
// forward rms; the inverse adds as much again. Hence 2 sqrt(n) times the forward bound.
TEST_P(FftPlanSizeTest, RoundTripIsNTimesInput) {
  const std::int64_t n = GetParam();
  const FftPlan plan(n);
  const std::vector<Complex> x = random_line(n, 77 + static_cast<std::uint64_t>(n));
  const std::vector<Complex> y = transformed(plan, transformed(plan, x, false), true);
  const LD allowed = 2.0L * std::sqrt(static_cast<LD>(n)) * bound(n, norm2(x));
  LD worst = 0.0L;
  for (std::int64_t j = 0; j < n; ++j) {
    // n x[j] is exact in long double (53 + 13 bits <= 64 for these sizes).
    worst = std::max(worst, distance(y[j], LongComplex(x[j]) * static_cast<LD>(n)));
  }
  EXPECT_LE(worst, allowed) << "n=" << n;
}

// An impulse at 0 transforms to all ones: exactly through the direct DFT and radix-2 (each
// output is 1 plus signed zeros), within the bound through Bluestein (whose convolution rounds).
TEST_P(FftPlanSizeTest, ImpulseGivesOnes) {
  const std::int64_t n = GetParam();
  const FftPlan plan(n);
  std::vector<Complex> impulse(static_cast<std::size_t>(n), Complex(0.0, 0.0));
  impulse[0] = 1.0;
  const LD allowed = bound(n, 1.0L);
  for (bool inverse : {false, true}) {
    const std::vector<Complex> got = transformed(plan, impulse, inverse);
    for (std::int64_t k = 0; k < n; ++k) {
      if (exact_on_impulse(n)) {
        ASSERT_EQ(got[k], Complex(1.0, 0.0)) << "n=" << n << " inverse=" << inverse << " k=" << k;
      } else {
        ASSERT_LE(distance(got[k], LongComplex(1.0L, 0.0L)), allowed)
            << "n=" << n << " inverse=" << inverse << " k=" << k;
      }
    }
  }
}

// Inf or NaN in the input gives a non-finite output (as the DFT's sums do); nothing traps.
TEST_P(FftPlanSizeTest, SpecialValuesPropagate) {
  const std::int64_t n = GetParam();
  const FftPlan plan(n);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (bool inverse : {false, true}) {
    std::vector<Complex> with_inf = random_line(n, 5);
    with_inf[n / 2] = {inf, 0.0};
    const std::vector<Complex> a = transformed(plan, with_inf, inverse);
    EXPECT_TRUE(
        std::any_of(a.begin(), a.end(),
                    [](Complex z) { return !std::isfinite(z.real()) || !std::isfinite(z.imag()); }))
        << "n=" << n << " inverse=" << inverse;

    std::vector<Complex> with_nan = random_line(n, 6);
    with_nan[n - 1] = {0.5, nan};
    const std::vector<Complex> b = transformed(plan, with_nan, inverse);
    EXPECT_TRUE(std::any_of(b.begin(), b.end(),
                            [](Complex z) { return std::isnan(z.real()) || std::isnan(z.imag()); }))
        << "n=" << n << " inverse=" << inverse;
  }
}

// Caller scratch full of NaN gives the same bits as the thread_local buffer: the plan reads no
// scratch element before writing it.
TEST_P(FftPlanSizeTest, CallerScratchMatchesThreadLocal) {
  const std::int64_t n = GetParam();
  const FftPlan plan(n);
  std::vector<Complex> scratch(static_cast<std::size_t>(plan.scratch_size()),
                               Complex(std::numeric_limits<double>::quiet_NaN(), 0.0));
  const std::vector<Complex> x = random_line(n, 9);
  for (bool inverse : {false, true}) {
    std::vector<Complex> got = x;
    plan.execute(got.data(), inverse, scratch.data());
    EXPECT_TRUE(same_bits(got, transformed(plan, x, inverse))) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FftPlanSizeTest,
                         ::testing::Values(1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 18, 31, 32, 64, 100,
                                           127, 128, 210, 1000, 1024, 4097),
                         [](const ::testing::TestParamInfo<std::int64_t>& info) {
                           return "n" + std::to_string(info.param);
                         });

// Sizes too large for a full O(n^2) oracle, checked on sampled outputs: a power of two that
// runs stages across several kBlock blocks, and a prime whose k^2 passes 2^32.
TEST(FftPlanTest, LargeSizesMatchOracleOnSampledOutputs) {
  for (std::int64_t n : {std::int64_t{1} << 17, std::int64_t{100003}}) {
    const FftPlan plan(n);
    const std::vector<LongComplex> roots = oracle_roots(n);
    const std::vector<Complex> x = random_line(n, 11);
    const LD allowed = bound(n, norm2(x));
    for (bool inverse : {false, true}) {
      const std::vector<Complex> got = transformed(plan, x, inverse);
      std::mt19937_64 rng(12);
      std::vector<std::int64_t> ks = {0, 1, n / 2, n - 1};
      for (int i = 0; i < 12; ++i) ks.push_back(static_cast<std::int64_t>(rng() % n));
      for (std::int64_t k : ks) {
        EXPECT_LE(distance(got[k], oracle_at(x, roots, k, inverse)), allowed)
            << "n=" << n << " inverse=" << inverse << " k=" << k;
      }
    }
  }
}

TEST(FftPlanTest, KnownSmallTransformIsExact) {
  const FftPlan plan(4);
  std::vector<Complex> x = {1.0, 2.0, 3.0, 4.0};
  plan.execute(x.data(), false);
  EXPECT_EQ(x, (std::vector<Complex>{{10.0, 0.0}, {-2.0, 2.0}, {-2.0, 0.0}, {-2.0, -2.0}}));
}

TEST(FftPlanTest, SizeOneIsIdentity) {
  const FftPlan plan(1);
  EXPECT_EQ(plan.scratch_size(), 0);
  for (bool inverse : {false, true}) {
    Complex z(-0.0, 3.25);
    plan.execute(&z, inverse);
    EXPECT_TRUE(std::signbit(z.real()));
    EXPECT_EQ(z, Complex(-0.0, 3.25));
  }
}

TEST(FftPlanTest, NonPositiveSizeThrows) {
  EXPECT_THROW(FftPlan(0), std::invalid_argument);
  EXPECT_THROW(FftPlan(-1), std::invalid_argument);
  EXPECT_THROW(FftPlan(std::numeric_limits<std::int64_t>::min()), std::invalid_argument);
}

// Four threads running the same plans at once give the bits of a single-threaded run. Each
// thread first runs a larger Bluestein plan, leaving its thread_local scratch larger and full
// of that plan's values.
TEST(FftPlanTest, ConcurrentRunsAreBitIdentical) {
  const std::vector<std::int64_t> sizes = {12, 1000, 1024, 4097};
  constexpr int kLines = 8;
  constexpr int kThreads = 4;
  std::vector<FftPlan> plans;
  std::vector<std::vector<Complex>> inputs, expected;
  for (std::int64_t n : sizes) {
    plans.emplace_back(n);
    for (int line = 0; line < kLines; ++line) {
      inputs.push_back(random_line(n, 100 + line));
      for (bool inverse : {false, true}) {
        expected.push_back(transformed(plans.back(), inputs.back(), inverse));
      }
    }
  }
  const FftPlan dirty(5000);
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      transformed(dirty, random_line(5000, t), false);
      for (int repeat = 0; repeat < 3; ++repeat) {
        std::size_t e = 0;
        for (std::size_t p = 0; p < plans.size(); ++p) {
          for (int line = 0; line < kLines; ++line) {
            const std::vector<Complex>& x = inputs[p * kLines + line];
            for (bool inverse : {false, true}) {
              if (!same_bits(transformed(plans[p], x, inverse), expected[e++])) ++mismatches[t];
            }
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace mpsim
