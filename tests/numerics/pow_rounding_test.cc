// pow of float32, float16 and bfloat16 correctly rounded (Note [correctly rounded pow],
// kernels_simd/pow_cr.h), against 256-bit MPFR (mpfr_oracle.h): exact midpoints, the inputs
// where glibc's double rounded once misrounds, random pairs over the whole range, every 16-bit
// input, and the paths: the double-lane row of a scalar exponent (every SIMD target: this test
// runs once per target), the value-by-value path of tensor exponents and strided rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels_simd/pow_cr.h"
#include "kernels_simd/unary.h"
#include "tests/numerics/mpfr_oracle.h"
#include "tests/numerics/oracle.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

struct PowCase {
  float x, y;
};

// x^y correctly rounded to `format`; zeros, infinities and NaN as glibc's pow in double (pow's
// definition for them).
double want_pow(float x, float y, Format format) {
  const double glibc = std::pow(static_cast<double>(x), static_cast<double>(y));
  if (glibc == 0 || !std::isfinite(glibc)) return glibc;
  return static_cast<double>(pow_oracle(x, y, format));
}

std::string describe(float x, float y) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "pow(%a, %a)", static_cast<double>(x), static_cast<double>(y));
  return buf;
}

// float32 pow of the cases three ways: x as a dense row with y as a scalar (the double-lane
// row), the same row strided (every other element), and x and y as tensors (value by value).
void expect_f32_correctly_rounded(const std::vector<PowCase>& cases) {
  std::vector<float> xs, ys, wide;
  for (const PowCase& c : cases) {
    xs.push_back(c.x);
    ys.push_back(c.y);
  }
  const auto n = static_cast<std::int64_t>(cases.size());
  const std::vector<float> tensor_y = pow(from_vector(xs), from_vector(ys)).to_vector<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    const PowCase& c = cases[static_cast<std::size_t>(i)];
    const float want = static_cast<float>(want_pow(c.x, c.y, kF32));
    EXPECT_TRUE(same_float(tensor_y[i], want))
        << describe(c.x, c.y) << " = " << std::hexfloat << tensor_y[i] << ", MPFR " << want;
    // The scalar-exponent row: x beside a few easy values, at a position that varies.
    std::vector<float> row(19, 1.75f);
    const std::size_t at = static_cast<std::size_t>(i) % row.size();
    row[at] = c.x;
    const Tensor dense = from_vector(row);
    std::vector<float> pairs;
    for (float v : row) pairs.insert(pairs.end(), {v, 0.5f});
    const Tensor strided = from_vector(pairs, {19, 2}).select(1, 0);
    for (const Tensor& in : {dense, strided}) {
      const float got = pow(in, Scalar(static_cast<double>(c.y))).to_vector<float>()[at];
      EXPECT_TRUE(same_float(got, want))
          << describe(c.x, c.y) << (in.is_contiguous() ? " (row)" : " (strided row)") << " = "
          << std::hexfloat << got << ", MPFR " << want;
    }
  }
}

// x^y is a midpoint between two floats, so ties go to the even one: c^3 of an odd c in [257,
// 321] has 25 significant bits (x = c^2, y = 3/2), as c^5 of c = 29, 31 (x = c^2, y = 5/2;
// x = c, y = 5; x = c^4, y = 5/4), scaled by powers of two into other binades and the
// subnormal range; and 2^-150 (half the smallest subnormal: +0).
TEST(PowRounding, ExactMidpointsTieToEven) {
  std::vector<PowCase> cases;
  for (int c = 257; c <= 321; c += 2) {
    for (int scale : {0, 20, -60, -100, -110}) {
      cases.push_back({std::ldexp(static_cast<float>(c * c), scale), 1.5f});
    }
  }
  for (int c : {29, 31}) {
    const auto f = static_cast<float>(c);
    cases.push_back({f * f, 2.5f});
    cases.push_back({std::ldexp(f * f, -40), 2.5f});
    cases.push_back({f, 5.0f});
    cases.push_back({-f, 5.0f});
    cases.push_back({std::ldexp(-f, -25), 5.0f});
    cases.push_back({f * f * f * f, 1.25f});
  }
  cases.push_back({0x1p-25f, 6.0f});
  cases.push_back({0x1p-100f, 1.5f});
  cases.push_back({-0x1p-30f, 5.0f});
  // Sanity of the cases themselves: the first few are midpoints (MPFR's rounding is even).
  EXPECT_EQ(static_cast<float>(mpfr_pow_correctly_rounded(66049.0f, 1.5f, kF32)), 16974592.0f);
  EXPECT_EQ(static_cast<float>(mpfr_pow_correctly_rounded(29.0f, 5.0f, kF32)), 20511148.0f);
  // The exact stage computes each of them exactly: a bracket of width zero at x^y.
  constexpr Format kF64{53, -1022, 1023};
  for (const PowCase& c : cases) {
    const simd::PowBracket b = simd::pow_bracket(c.x, c.y);
    const auto exact = static_cast<double>(mpfr_pow_correctly_rounded(c.x, c.y, kF64));
    EXPECT_TRUE(b.lo == exact && b.mid == exact && b.hi == exact)
        << describe(c.x, c.y) << ": [" << std::hexfloat << b.lo << ", " << b.hi << "], exact "
        << exact;
  }
  expect_f32_correctly_rounded(cases);
}

// Inputs whose glibc double lies within 4 double ULPs of a float rounding boundary, so that the
// exact and quad stages decide them (all irrational powers): found by tests/numerics/power_sweep
// over all 2^32 x for its exponents ("stage 2 x = ...").
const std::vector<PowCase>& stage2_cases() {
  static const std::vector<PowCase> cases = {
#include "tests/numerics/pow_hard_cases.inc"
  };
  return cases;
}

TEST(PowRounding, StageTwoInputsAreCorrectlyRounded) {
  ASSERT_GE(stage2_cases().size(), 16u);
  int glibc_misrounded = 0;
  for (const PowCase& c : stage2_cases()) {
    const double glibc = std::pow(static_cast<double>(c.x), static_cast<double>(c.y));
    const auto u = std::bit_cast<std::uint64_t>(glibc);
    const float below = static_cast<float>(std::bit_cast<double>(u - simd::kGlibcMarginUlps));
    const float above = static_cast<float>(std::bit_cast<double>(u + simd::kGlibcMarginUlps));
    EXPECT_NE(bits_of(below), bits_of(above)) << describe(c.x, c.y) << " does not reach stage 2";
    // The quad stage brackets x^y tightly enough to decide it.
    const float want = static_cast<float>(want_pow(c.x, c.y, kF32));
    glibc_misrounded += bits_of(static_cast<float>(glibc)) != bits_of(want);
    const simd::PowBracket b = simd::pow_bracket(c.x, c.y);
    EXPECT_EQ(bits_of(static_cast<float>(b.lo)), bits_of(want)) << describe(c.x, c.y);
    EXPECT_EQ(bits_of(static_cast<float>(b.hi)), bits_of(want)) << describe(c.x, c.y);
  }
  // The list holds inputs that glibc's double rounded once gets wrong: a pow without the later
  // stages fails here.
  EXPECT_EQ(glibc_misrounded, 8);
  expect_f32_correctly_rounded(stage2_cases());
}

// Random pairs: x of every magnitude and sign (all bit patterns, NaN and infinities included),
// y uniform in [-12, 12], small integers, halves and quarters (negative x with integral y),
// and exponents large enough to overflow or underflow.
TEST(PowRounding, RandomPairsMatchMpfr) {
  std::mt19937 rng(11);
  std::vector<PowCase> cases;
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> near_one(0.5f, 2.0f), moderate(-12.0f, 12.0f);
  std::uniform_int_distribution<int> small(-40, 40);
  for (int i = 0; i < 20000; ++i) {
    float x = float_of(bits(rng));
    if (i % 4 == 1) x = near_one(rng);
    float y = moderate(rng);
    if (i % 5 == 1) y = static_cast<float>(small(rng));
    if (i % 5 == 2) y = static_cast<float>(small(rng)) / 4;
    if (i % 5 == 3) y = std::ldexp(moderate(rng), small(rng) / 3);
    cases.push_back({x, y});
  }
  for (float y : {0.0f, -0.0f, 1.0f, NAN, INFINITY, -INFINITY}) {
    for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, INFINITY, -INFINITY, NAN}) {
      cases.push_back({x, y});
    }
  }
  expect_f32_correctly_rounded(cases);
}

// Long rows of one exponent: the double-lane row's lanes (x from 2^-20 to 2^20 and negative for
// integral y), every class of special x (y = -1/2: the rsqrt row and its special lanes), and x
// near the overflow and underflow edges. -4, 5, 40, 63 and -64 take Note [integer powers]
// (binary powering; 64 = 2^6 squarings alone, 63 the most products), 65 the log and exp row.
TEST(PowRounding, ScalarExponentRows) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> log2x(-20.0f, 20.0f);
  for (float y : {1.5f, 2.2f, 1 / 2.2f, -0.5f, 5.0f, -3.0f, 0.1f, 40.0f, -7.25f, -4.0f, 63.0f,
                  -64.0f, 65.0f}) {
    std::vector<float> xs;
    for (int i = 0; i < 4000; ++i) {
      float x = std::exp2(log2x(rng));
      if (std::nearbyint(y) == y && i % 3 == 0) x = -x;
      xs.push_back(x);
    }
    // Every class of special x, each in the middle of the row.
    for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -2.5f, 0x1p-149f, -0x1p-149f,
                    0x1.fffffep127f, -0x1.fffffep127f, 1.0f}) {
      xs.push_back(v);
    }
    // x^y near FLT_MAX and near the subnormals: x = 2^(e / y) for e around 128 and -126..-150.
    for (float e = -152.0f; e <= 129.0f; e += 0.37f) {
      const float x = std::exp2(e / y);
      xs.insert(xs.end(), {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)});
    }
    const std::vector<float> got =
        pow(from_vector(xs), Scalar(static_cast<double>(y))).to_vector<float>();
    int wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float want = static_cast<float>(want_pow(xs[i], y, kF32));
      if (!same_float(got[i], want) && ++wrong <= 3) {
        ADD_FAILURE() << describe(xs[i], y) << " = " << std::hexfloat << got[i] << ", MPFR "
                      << want;
      }
    }
    EXPECT_EQ(wrong, 0) << "y = " << y;
  }
}

// The float lanes (Note [correctly rounded float lanes], pow) against the double-lane row bit
// for bit where their certified range ends: y log x = +-87 (the float lanes' bound), x near the
// subnormals and near 1, consecutive floats around each, and log-uniform x; y large and small
// so that the rounding test's bound, which grows with |y log x|, is tried at both ends.
TEST(PowRounding, FloatLanesGiveTheDoubleLaneRowsBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> log2x(-126.0f, 128.0f);
  for (float y : {1.5f, 2.2f, -0.3f, 0.001f, 1000.0f, -1000.0f, 65.0f, -65.0f, 66.0f, -3.0f,
                  -7.5f, 0.4545f}) {
    std::vector<float> xs;
    auto around = [&](float x, std::uint32_t half_width) {
      const std::uint32_t b = bits_of(x);
      for (std::uint32_t k = b - std::min(b, half_width); k < b + half_width; ++k) {
        xs.push_back(std::bit_cast<float>(k));
      }
    };
    for (float t : {87.0f, -87.0f, 88.5f, -88.5f, -95.0f, -103.0f, 40.0f, -40.0f}) {
      const float x = std::exp(t / y);
      if (x > 0 && x < INFINITY) around(x, 4096);
    }
    around(1.0f, 4096);
    around(0x1p-126f, 4096);
    for (int i = 0; i < 1 << 16; ++i) xs.push_back(std::exp2(log2x(rng)));
    // Negative x: x's sign for an odd y, NaN for a non-integral one; runs of each sign and
    // mixed vectors.
    for (int i = 0; i < 1 << 12; ++i) xs.push_back(-std::exp2(log2x(rng)) * (i % 3 ? 1 : -1));
    std::vector<float> lanes(xs.size()), row(xs.size());
    if (!simd::pow_cr_lanes_row_f32(xs.data(), y, lanes.data(), xs.size())) {
      GTEST_SKIP() << "no float lanes on this target";
    }
    simd::pow_cr_row_f32(xs.data(), y, row.data(), xs.size());
    int wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (bits_of(lanes[i]) != bits_of(row[i]) && ++wrong <= 3) {
        ADD_FAILURE() << describe(xs[i], y) << " = " << std::hexfloat << lanes[i]
                      << ", the double-lane row " << row[i];
      }
    }
    EXPECT_EQ(wrong, 0) << "y = " << y;
  }
}

// A finite negative x to a non-integral scalar power is NaN in the row's vectors, and y = -1/2
// (the rsqrt row) computes zeros, infinities and NaN there too: glibc's bits for every x <= 0,
// infinity and NaN (std::pow's, converted), on every SIMD target, in rows with and without
// other lanes.
TEST(PowRounding, SpecialBasesOfNonIntegralExponentRowsGiveGlibcBits) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  std::vector<float> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(normal(rng));
  for (float v : {-0.0f, 0.0f, -INFINITY, INFINITY, NAN, -NAN, -0x1p-149f, -0x1.fffffep127f}) {
    xs.push_back(v);
  }
  for (int i = 0; i < 64; ++i) xs.push_back(-1.0f - static_cast<float>(i));  // whole vectors
  for (std::uint32_t payload : {0x7fc00001u, 0xffc12345u, 0x7f800001u}) {
    xs.push_back(std::bit_cast<float>(payload));  // NaNs with payloads, one signalling
  }
  for (float y : {1.5f, -0.75f, 2.2f, 0.1f, -0.5f}) {
    test::for_each_target([&](const std::string& target) {
      const std::vector<float> got =
          pow(from_vector(xs), Scalar(static_cast<double>(y))).to_vector<float>();
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] > 0 && xs[i] < INFINITY) continue;
        const float want = static_cast<float>(std::pow(static_cast<double>(xs[i]), y));
        ASSERT_EQ(bits_of(got[i]), bits_of(want)) << describe(xs[i], y) << " on " << target;
      }
    });
  }
}

// A row of 2^22 + 3 values (16 MiB and more: the streaming stores of Note [streaming stores])
// with a scalar exponent, on every target: 1021 distinct x repeated, each result against MPFR.
TEST(PowRounding, LongRowsWithStreamingStores) {
  constexpr std::size_t kN = (std::size_t{1} << 22) + 3, kDistinct = 1021;
  std::vector<float> distinct(kDistinct), want(kDistinct);
  for (std::size_t j = 0; j < kDistinct; ++j) {
    distinct[j] = 0.01f + static_cast<float>(j) * 0.0123f;
    want[j] = static_cast<float>(want_pow(distinct[j], 2.2f, kF32));
  }
  std::vector<float> xs(kN);
  for (std::size_t i = 0; i < kN; ++i) xs[i] = distinct[i % kDistinct];
  for (float y : {2.2f}) {
    const std::vector<float> got =
        pow(from_vector(xs), Scalar(static_cast<double>(y))).to_vector<float>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kN; ++i) wrong += bits_of(got[i]) != bits_of(want[i % kDistinct]);
    EXPECT_EQ(wrong, 0u);
  }
}

// float16 and bfloat16: every x for several exponents (midpoints included: 169^1.5 = 13^3 has
// 12 significant bits), as a row with a scalar exponent and as tensors.
TEST(PowRounding, Every16BitInput) {
  struct Type16 {
    DType dtype;
    Format format;
  };
  for (const Type16& t : {Type16{DType::Float16, kF16}, Type16{DType::BFloat16, kBF16}}) {
    std::vector<float> xs(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) {
      xs[b] = t.dtype == DType::Float16
                  ? static_cast<float>(Half::from_bits(static_cast<std::uint16_t>(b)))
                  : static_cast<float>(BFloat16::from_bits(static_cast<std::uint16_t>(b)));
    }
    const Tensor x = from_vector(xs).to(t.dtype);
    for (float y : {1.5f, 2.2f, -0.5f, 5.0f, 0.1f, -2.5f}) {
      const float y16 =
          static_cast<float>(from_vector(std::vector<float>{y}).to(t.dtype).to_vector<float>()[0]);
      const std::vector<float> by_scalar =
          pow(x, Scalar(static_cast<double>(y16))).to_vector<float>();
      const std::vector<float> by_tensor =
          pow(x, from_vector(std::vector<float>(65536, y16)).to(t.dtype)).to_vector<float>();
      int wrong = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const auto want = static_cast<float>(want_pow(xs[i], y16, t.format));
        for (float got : {by_scalar[i], by_tensor[i]}) {
          if (!(same_float(got, want) || (std::isnan(got) && std::isnan(want))) && ++wrong <= 3) {
            ADD_FAILURE() << dtype_name(t.dtype) << " " << describe(xs[i], y16) << " = "
                          << std::hexfloat << got << ", MPFR " << want;
          }
        }
      }
      EXPECT_EQ(wrong, 0) << dtype_name(t.dtype) << " y = " << y16;
    }
  }
}

}  // namespace
}  // namespace mpsim::testing
