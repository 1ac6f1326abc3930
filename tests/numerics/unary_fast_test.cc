// Precision::Fast (Note [fast float unary] in kernels_simd/unary_fast.cc): the float32 kernels of
// exp, log, sin, cos, sigmoid, silu, gelu, rsqrt, log1p, expm1 and softplus against the long
// double oracle on the CI sample and on the inputs that stress their reductions, on every SIMD
// target; special values, lane independence, determinism, softplus's parameters, the precision
// setting, dtypes, views and the mps device.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels_simd/unary.h"
#include "tests/numerics/oracle.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// docs/numerics.md, "Precision::Fast": every fast kernel is within 1 ULP (swept: <= 0.83).
constexpr double kMaxUlpFast = 1.0;

std::vector<UnaryCase> fast_cases() {
  std::vector<UnaryCase> out;
  for (const UnaryCase& c : unary_cases()) {
    for (std::string_view n : {"exp", "log", "sin", "cos", "sigmoid", "silu", "gelu",
                               "gelu_tanh", "rsqrt", "log1p", "expm1", "softplus"}) {
      if (c.name == n) out.push_back(c);
    }
  }
  return out;
}

// The CI sample plus what stresses each reduction: floats next to multiples of pi/2 up to 4096
// (sin/cos cancel there) and to the AVX-512 sin/cos piece edges, around gelu's and sigmoid's
// piece edges (both kernels': quarters near 0, 7.25,
// 8.25, halves up to 12.5, integers up to 15) and fast-range ends, around exp's and sigmoid's
// range ends, near 1 for log, and a dense sweep of [-16, 16].
std::vector<float> fast_sample() {
  std::vector<float> xs = f32_sample();
  for (int n = 1; n <= 2608; ++n) {
    float v = static_cast<float>(n * 1.57079632679489661923);
    for (int s = 0; s < 3; ++s) {
      xs.push_back(v);
      xs.push_back(-v);
      v = std::nextafter(v, kInf);
    }
  }
  // The AVX-512 sin/cos pieces end at odd multiples of pi/32: all up to 128, then a sparse set.
  for (int k = 1; k < 41722; k += k < 1304 ? 2 : 194) {
    const float v = static_cast<float>(k * 0.0981747704246810387019);
    for (float e : {v, std::nextafter(v, kInf), std::nextafter(v, -kInf)}) {
      xs.push_back(e);
      xs.push_back(-e);
    }
  }
  std::vector<float> edges = {0.25f, 0.5f, 0.75f, 1,     1.5f,  2,     2.5f,   3,     3.5f,
                              4,     4.5f, 5,     5.5f,  6,     6.5f,  7,      7.25f, 7.5f,
                              8,     8.25f, 8.5f, 9,     9.5f,  10,    10.5f,  11,    11.5f,
                              12,    12.5f, 13,   15,    87,    80,    88.7f,  103.9f, 150,
                              4096,  0x1p-60f, 0x1p-126f};
  for (float e : edges) {
    for (float sign : {1.0f, -1.0f}) {
      float up = sign * e, down = sign * e;
      for (int s = 0; s < 32; ++s) {
        xs.push_back(up = std::nextafter(up, kInf));
        xs.push_back(down = std::nextafter(down, -kInf));
      }
    }
  }
  for (int i = -160000; i <= 160000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);
  // rsqrt's fast kernel is correctly rounded on all but ~1 in 10^6 inputs (NEON: 17 of the 2^24
  // in [1, 4); AVX-512 118), too few for the sample above to show that it ran: the NEON ones.
  for (float v : {0x1.14b90cp+0f, 0x1.39fa88p+0f, 0x1.701528p+0f, 0x1.745472p+0f, 0x1.819a4cp+0f,
                  0x1.ad1bc6p+0f, 0x1.b5d284p+0f, 0x1.055d72p+1f, 0x1.059196p+1f, 0x1.13e07p+1f,
                  0x1.23fb8ep+1f, 0x1.4054fp+1f}) {
    xs.push_back(v);
  }
  return xs;
}

class UnaryFastOnTarget : public test::OnEveryTarget {};

// The oracle on fast_sample(), computed once per op for the runs on every target.
const std::vector<long double>& exact_on_sample(const UnaryCase& c,
                                                const std::vector<float>& xs) {
  static std::map<std::string, std::vector<long double>> cache;
  const auto [it, inserted] = cache.try_emplace(std::string(c.name));
  if (inserted) {
    it->second.resize(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) it->second[i] = c.oracle(xs[i]);
  }
  return it->second;
}

TEST_P(UnaryFastOnTarget, WithinOneUlpAndEngagedWhereThereIsFma) {
  const std::vector<float> xs = fast_sample();
  const Tensor input = from_vector(xs);
  for (const UnaryCase& c : fast_cases()) {
    const std::vector<long double>& exact = exact_on_sample(c, xs);
    const std::vector<float> golden = c.op(input).to_vector<float>();
    std::vector<float> got;
    {
      const PrecisionGuard fast(Precision::Fast);
      got = c.op(input).to_vector<float>();
    }
    const bool available = simd::unary_fast_available();
    double max_ulp = 0;
    float worst = 0;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double e = ulp_error(got[i], exact[i]);
      if (e > max_ulp) {
        max_ulp = e;
        worst = xs[i];
      }
      if (!same_float(got[i], golden[i])) ++differ;
    }
    std::printf("%-8s %-7s fast: max %.4f ULP (x = %a), %zu of %zu differ from golden\n",
                std::string(c.name).c_str(), target().c_str(), max_ulp, worst, differ, xs.size());
    EXPECT_LE(max_ulp, kMaxUlpFast) << c.name << " on " << target() << " at x = " << worst;
    if (available) {
      // A float kernel is correctly rounded on ~99.9% of inputs, not all: it ran.
      EXPECT_GT(differ, 0u) << c.name << " on " << target() << ": the fast kernel did not run";
    } else {
      EXPECT_EQ(differ, 0u) << c.name << " on " << target() << " (no FMA: golden)";
    }
  }
}

// Non-finite inputs, and sin/cos beyond 4096, are the golden kernel's lanes: the same bits.
TEST(UnaryFast, SpecialValuesAreTheGoldenOnes) {
  const std::vector<float> v = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, 1e6f, -1e6f, 4097.0f,
                                3e38f, -3e38f, 1e-45f, -1e-45f};
  const Tensor x = from_vector(v);
  for (const UnaryCase& c : fast_cases()) {
    const std::vector<float> golden = c.op(x).to_vector<float>();
    const PrecisionGuard fast(Precision::Fast);
    const std::vector<float> got = c.op(x).to_vector<float>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const bool must_match = !std::isfinite(v[i]) || v[i] == 0 ||
                              ((c.name == "sin" || c.name == "cos") && std::fabs(v[i]) > 4096);
      if (must_match) {
        EXPECT_TRUE(same_float(got[i], golden[i]))
            << c.name << "(" << v[i] << "): " << got[i] << " vs golden " << golden[i];
      }
      EXPECT_LE(ulp_error(got[i], c.oracle(v[i])), kMaxUlpFast) << c.name << "(" << v[i] << ")";
    }
    if (c.name == "sin") {
      EXPECT_TRUE(std::signbit(got[5]));  // sin(-0) = -0
    }
  }
}

// Each lane's result depends on its own input only: rows of every length 1..40 with an input
// outside the fast range (which sends its vector down the wide or golden path) at every
// position, on every SIMD target, against the op applied to each element alone.
TEST_P(UnaryFastOnTarget, EveryLaneDependsOnItsOwnInputOnly) {
  const std::vector<float> outside = {kNaN, 100.0f, -120.0f, 14.0f, -14.5f, 5000.0f, 1e-30f,
                                      -kInf};
  for (const UnaryCase& c : fast_cases()) {
    const PrecisionGuard fast(Precision::Fast);
    auto alone = [&](float v) { return c.op(from_vector<float>({v}, {1})).item<float>(); };
    for (int n = 1; n <= 40; ++n) {
      for (int bad = -1; bad < n; ++bad) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[i] = 0.05f + 0.37f * static_cast<float>(i - 20);
        if (c.name == "log") {
          for (float& e : v) e = std::fabs(e) + 0.01f;
        }
        if (bad >= 0) v[bad] = outside[static_cast<std::size_t>(bad) % outside.size()];
        const std::vector<float> got = c.op(from_vector(v, {n})).to_vector<float>();
        for (int i = 0; i < n; ++i) {
          ASSERT_TRUE(same_float(got[i], alone(v[i])))
              << c.name << " on " << target() << ", n = " << n << ", bad = " << bad
              << ", i = " << i;
        }
      }
    }
  }
}

MPSIM_ON_EVERY_TARGET(UnaryFastOnTarget);

// softplus's fast kernel takes beta 1 only (x beta rounds: other betas are the golden kernel's,
// bit for bit) and any threshold: x above it (or above 20, where e^-x is below x's rounding)
// is x itself, as PyTorch defines it.
TEST(UnaryFast, SoftplusParametersKeepTheirMeaning) {
  std::vector<float> v;
  for (int i = -4000; i <= 12000; ++i) v.push_back(static_cast<float>(i) * 0.0025f);
  for (float extra : {21.0f, 50.0f, 86.9f, 88.0f, 1e30f, -86.9f, -87.5f, -100.0f}) v.push_back(extra);
  const Tensor x = from_vector(v);
  for (const auto& [beta, threshold] : {std::pair{1.0, 20.0}, std::pair{1.0, 5.0},
                                        std::pair{1.0, 100.0}, std::pair{1.0, -3.0},
                                        std::pair{2.0, 20.0}, std::pair{0.5, 3.0}}) {
    const std::vector<float> golden = softplus(x, beta, threshold).to_vector<float>();
    const PrecisionGuard fast(Precision::Fast);
    const std::vector<float> got = softplus(x, beta, threshold).to_vector<float>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (beta != 1.0) {
        EXPECT_TRUE(same_float(got[i], golden[i])) << "beta " << beta << " x " << v[i];
      } else if (v[i] > threshold) {
        EXPECT_TRUE(same_float(got[i], v[i])) << "threshold " << threshold << " x " << v[i];
      } else {
        const long double xl = v[i];
        const long double exact = std::fmax(xl, 0.0L) + std::log1p(std::exp(-std::fabs(xl)));
        EXPECT_LE(ulp_error(got[i], exact), kMaxUlpFast) << "threshold " << threshold << " x " << v[i];
      }
    }
  }
}

TEST(UnaryFast, DeterministicForAnyThreadCount) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-20, 20);
  std::vector<float> v((1 << 19) + 33);
  for (float& x : v) x = dist(rng);
  const Tensor x = from_vector(v);
  const PrecisionGuard fast(Precision::Fast);
  for (const UnaryCase& c : fast_cases()) {
    std::vector<float> reference;
    for (int threads : {1, 2, 8, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const std::vector<float> got = c.op(x).to_vector<float>();
      if (reference.empty()) {
        reference = got;
        continue;
      }
      ASSERT_EQ(std::memcmp(got.data(), reference.data(), got.size() * sizeof(float)), 0)
          << c.name << " with " << threads << " threads";
    }
  }
}

TEST(UnaryFast, PrecisionSettingNestsAndRestores) {
  const Precision base = precision();  // Golden unless MPSIM_PRECISION says otherwise
  {
    const PrecisionGuard a(Precision::Fast);
    EXPECT_EQ(precision(), Precision::Fast);
    {
      const PrecisionGuard b(Precision::Golden);
      EXPECT_EQ(precision(), Precision::Golden);
    }
    EXPECT_EQ(precision(), Precision::Fast);
  }
  EXPECT_EQ(precision(), base);
  set_precision(Precision::Fast);
  EXPECT_EQ(precision(), Precision::Fast);
  {
    const PrecisionGuard g(Precision::Golden);  // a guard beats the process-wide value
    EXPECT_EQ(precision(), Precision::Golden);
  }
  set_precision(Precision::Golden);
  EXPECT_EQ(precision(), Precision::Golden);
  set_precision(base);
  EXPECT_EQ(parse_precision("fast"), Precision::Fast);
  EXPECT_EQ(precision_name(Precision::Golden), "golden");
  try {
    parse_precision("quick");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected 'golden' or 'fast', got 'quick'"),
              std::string::npos);
  }
}

// The process-wide default comes from MPSIM_PRECISION (ctest also runs this test with
// MPSIM_PRECISION=fast: unary_fast_env).
TEST(UnaryFast, ProcessDefaultComesFromTheEnvironment) {
  const char* env = std::getenv("MPSIM_PRECISION");
  const Precision expected = env != nullptr && *env != '\0' ? parse_precision(env) : Precision::Golden;
  EXPECT_EQ(precision(), expected);
}

// Fast changes float32 only; float16/bfloat16 round the golden double result and float64 is
// the f64 path. Strided float32 views take the same fast kernel as contiguous rows.
TEST(UnaryFast, OtherDtypesAreGoldenAndViewsMatchContiguousRows) {
  std::vector<float> v;
  for (int i = 0; i < 4000; ++i) v.push_back(-9.0f + 0.0045f * static_cast<float>(i));
  const Tensor x32 = from_vector(v, {40, 100});
  for (const UnaryCase& c : fast_cases()) {
    const Tensor base = c.name == "log" ? abs(x32) : x32;
    for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
      const Tensor x = base.to(dt);
      const std::vector<double> golden = c.op(x).to_vector<double>();
      const PrecisionGuard fast(Precision::Fast);
      const std::vector<double> got = c.op(x).to_vector<double>();
      ASSERT_EQ(std::memcmp(got.data(), golden.data(), got.size() * sizeof(double)), 0)
          << c.name << " " << dtype_name(dt);
    }
    const PrecisionGuard fast(Precision::Fast);
    const Tensor t = base.transpose(0, 1);  // strided rows
    const std::vector<float> strided = c.op(t).to_vector<float>();
    const std::vector<float> contiguous = c.op(t.contiguous()).to_vector<float>();
    for (std::size_t i = 0; i < strided.size(); ++i) {
      ASSERT_TRUE(same_float(strided[i], contiguous[i])) << c.name << " at " << i;
    }
  }
}

// An mps op reads the precision when it is called (encoded), not when its queue runs it.
TEST(UnaryFast, MpsOpsTakeThePrecisionOfTheirCall) {
  std::vector<float> v;
  for (int i = 0; i < 100000; ++i) v.push_back(-8.0f + 0.00016f * static_cast<float>(i));
  const Tensor cpu_x = from_vector(v);
  std::vector<float> cpu_fast;
  {
    const PrecisionGuard fast(Precision::Fast);
    cpu_fast = sigmoid(cpu_x).to_vector<float>();
  }
  const Tensor x = cpu_x.to(Device::mps());
  Tensor y;
  {
    const PrecisionGuard fast(Precision::Fast);
    y = sigmoid(x);
  }
  const std::vector<float> got = y.to_vector<float>();  // synchronizes after the guard ended
  std::vector<float> golden;
  {
    const PrecisionGuard g(Precision::Golden);
    golden = sigmoid(cpu_x).to_vector<float>();
  }
  std::size_t differ = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_TRUE(same_float(got[i], cpu_fast[i])) << "at x = " << v[i];
    differ += same_float(got[i], golden[i]) ? 0 : 1;
  }
  if (simd::unary_fast_available()) {
    EXPECT_GT(differ, 0u);
  }
}

}  // namespace
}  // namespace mpsim::testing
