// Unary ops: special values, dtype rules, views, empty tensors, bad input and determinism.
// Accuracy against the oracle over the whole range is unary_accuracy_test.cc.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels_simd/simd_target.h"
#include "tests/numerics/oracle.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float one(const Tensor& t) { return t.item<float>(); }
Tensor f(float v) { return from_vector<float>({v}, {1}); }

TEST(Unary, SpecialValuesFollowIeeeAndPyTorch) {
  EXPECT_EQ(one(exp(f(-kInf))), 0.0f);
  EXPECT_EQ(one(exp(f(kInf))), kInf);
  EXPECT_EQ(one(exp(f(100.0f))), kInf);  // Highway's Exp returns garbage here
  EXPECT_EQ(one(exp(f(-110.0f))), 0.0f);
  EXPECT_EQ(one(exp(f(-103.5f))), static_cast<float>(std::exp(-103.5L)));  // subnormal
  EXPECT_TRUE(std::isnan(one(exp(f(kNaN)))));
  EXPECT_EQ(one(log(f(0.0f))), -kInf);
  EXPECT_EQ(one(log(f(-0.0f))), -kInf);
  EXPECT_TRUE(std::isnan(one(log(f(-1.0f)))));
  EXPECT_EQ(one(log(f(kInf))), kInf);
  EXPECT_TRUE(std::isnan(one(log(f(kNaN)))));
  EXPECT_EQ(one(log1p(f(-1.0f))), -kInf);
  EXPECT_TRUE(std::isnan(one(log1p(f(-2.0f)))));
  EXPECT_EQ(one(expm1(f(-kInf))), -1.0f);
  EXPECT_TRUE(std::signbit(one(sqrt(f(-0.0f)))));
  EXPECT_TRUE(std::isnan(one(sqrt(f(-1.0f)))));
  EXPECT_EQ(one(rsqrt(f(0.0f))), kInf);
  EXPECT_EQ(one(rsqrt(f(-0.0f))), -kInf);
  EXPECT_EQ(one(rsqrt(f(kInf))), 0.0f);
  EXPECT_TRUE(std::isnan(one(sin(f(kInf)))));
  EXPECT_TRUE(std::isnan(one(cos(f(-kInf)))));
  EXPECT_TRUE(std::signbit(one(sin(f(-0.0f)))));
  EXPECT_EQ(one(tanh(f(kInf))), 1.0f);
  EXPECT_EQ(one(tanh(f(-kInf))), -1.0f);
  EXPECT_EQ(one(erf(f(-kInf))), -1.0f);
  EXPECT_TRUE(std::signbit(one(erf(f(-0.0f)))));
  EXPECT_EQ(one(sigmoid(f(-kInf))), 0.0f);
  EXPECT_EQ(one(sigmoid(f(kInf))), 1.0f);
  EXPECT_EQ(one(silu(f(kInf))), kInf);
  EXPECT_TRUE(std::isnan(one(silu(f(-kInf)))));  // PyTorch: -inf / (1 + inf)
  EXPECT_EQ(one(gelu(f(kInf))), kInf);
  EXPECT_EQ(one(softplus(f(kInf))), kInf);
  EXPECT_EQ(one(softplus(f(-kInf))), 0.0f);
  EXPECT_EQ(one(reciprocal(f(-0.0f))), -kInf);
  // relu keeps NaN and -0.0 (PyTorch 1.13: torch.relu(torch.tensor([-0.0])) is tensor([-0.])).
  EXPECT_TRUE(std::isnan(one(relu(f(kNaN)))));
  EXPECT_TRUE(std::signbit(one(relu(f(-0.0f)))));
  EXPECT_FALSE(std::signbit(one(relu(f(0.0f)))));
  EXPECT_FALSE(std::signbit(one(abs(f(-0.0f)))));
  EXPECT_TRUE(std::signbit(one(neg(f(0.0f)))));
}

TEST(Unary, SubnormalsAreNotFlushed) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(one(abs(f(-tiny))), tiny);
  EXPECT_EQ(one(sin(f(tiny))), tiny);
  EXPECT_EQ(one(tanh(f(3 * tiny))), 3 * tiny);
  EXPECT_EQ(one(log1p(f(5 * tiny))), 5 * tiny);
  EXPECT_EQ(one(square(f(0x1p-70f))), 0x1p-140f);  // a subnormal result
  // exp(-100) = 3.72e-44 is subnormal in float: correctly rounded, not zero.
  EXPECT_EQ(one(exp(f(-100.0f))), static_cast<float>(std::exp(-100.0L)));
}

TEST(Unary, ClassicCancellationTraps) {
  // gelu(x) for x << 0 must keep its digits (x/2 (1 + erf) would give 0 or garbage).
  for (float x : {-5.5f, -8.0f, -10.0f, -12.0f}) {
    const long double want = gelu_oracle(x);
    EXPECT_LE(ulp_error(one(gelu(f(x))), want), 0.5001) << x;
  }
  // softplus, log1p, expm1 near 0 and sigmoid for large |x|.
  EXPECT_EQ(one(log1p(f(1e-10f))), static_cast<float>(std::log1p(1e-10L)));
  EXPECT_EQ(one(expm1(f(1e-10f))), static_cast<float>(std::expm1(1e-10L)));
  EXPECT_EQ(one(softplus(f(-30.0f))), static_cast<float>(softplus_oracle(-30.0L)));
  EXPECT_EQ(one(sigmoid(f(-90.0f))), static_cast<float>(1.0L / (1.0L + std::exp(90.0L))));
  EXPECT_EQ(one(gelu(f(-9.0f), "tanh")), static_cast<float>(gelu_tanh_oracle(-9.0L)));
}

TEST(Unary, IntegerInputsFollowPyTorchDtypeRules) {
  const Tensor i = from_vector<std::int32_t>({-3, 0, 4}, {3});
  const Tensor e = exp(i);
  EXPECT_EQ(e.dtype(), DType::Float32);
  EXPECT_EQ(e.to_vector<float>()[2], static_cast<float>(std::exp(4.0L)));
  const Tensor a = abs(i);
  EXPECT_EQ(a.dtype(), DType::Int32);
  EXPECT_EQ(a.to_vector<std::int32_t>(), (std::vector<std::int32_t>{3, 0, 4}));
  EXPECT_EQ(neg(i).to_vector<std::int32_t>(), (std::vector<std::int32_t>{3, 0, -4}));
  EXPECT_EQ(relu(i).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 0, 4}));
  EXPECT_EQ(square(i).to_vector<std::int32_t>(), (std::vector<std::int32_t>{9, 0, 16}));
  const Tensor min64 = from_vector<std::int64_t>({std::numeric_limits<std::int64_t>::min()}, {1});
  EXPECT_EQ(abs(min64).item<std::int64_t>(), std::numeric_limits<std::int64_t>::min());  // wraps
  EXPECT_EQ(sigmoid(from_vector<bool>({true}, {1})).item<float>(),
            static_cast<float>(1 / (1 + std::exp(-1.0L))));
}

TEST(Unary, BadInputThrowsClearErrorsAndLeaksNothing) {
  const std::int64_t live = Storage::live_count();
  const Tensor i = from_vector<std::int64_t>({1, 2}, {2});
  const Tensor b = from_vector<bool>({true}, {1});
  auto message_of = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THROW(gelu(i), DTypeError);
  EXPECT_NE(message_of([&] { gelu(i); }).find("[gelu] expected a floating point tensor, got int64"),
            std::string::npos);
  EXPECT_THROW(silu(i), DTypeError);
  EXPECT_THROW(softplus(i), DTypeError);
  EXPECT_THROW(neg(b), DTypeError);
  EXPECT_NE(message_of([&] { abs(b); }).find("[abs]"), std::string::npos);
  EXPECT_THROW(gelu(f(1), "fast"), InvalidArgument);
  EXPECT_NE(message_of([&] { gelu(f(1), "fast"); }).find("'fast'"), std::string::npos);
  EXPECT_THROW(softplus(f(1), 0), InvalidArgument);
  EXPECT_THROW(exp(Tensor()), InvalidArgument);
  EXPECT_EQ(Storage::live_count(), live + 2);  // only i and b, created above
}

TEST(Unary, EmptyAndZeroDimTensors) {
  const Tensor e = exp(empty({0, 3}));
  EXPECT_EQ(e.sizes(), Shape({0, 3}));
  EXPECT_EQ(e.numel(), 0);
  const Tensor s = tanh(scalar_tensor(0.5, DType::Float32));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), static_cast<float>(std::tanh(0.5L)));
}

// Views: transposed, sliced with a step and expanded inputs give the oracle's values.
TEST(Unary, NonContiguousInputsFloat32AndFloat16) {
  std::vector<float> v(7 * 11);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = -4.0f + 0.1f * static_cast<float>(k);
  const Tensor x = from_vector(v, {7, 11});
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const Tensor xt = x.to(dt).t();                 // [11, 7], strides [1, 11]
    const Tensor xs = x.to(dt).slice(1, 1, 11, 3);  // [7, 4], step 3
    const Tensor xe = x.to(dt).select(0, 2).unsqueeze(0).expand({5, 11});  // stride 0
    for (const Tensor* view_ptr : {&xt, &xs, &xe}) {
      const Tensor& view = *view_ptr;
      const Tensor y = tanh(view);
      // The transposed input's layout, as torch.tanh gives it; the others dense row-major.
      EXPECT_EQ(y.strides(), view_ptr == &xt ? Strides({1, 11}) : contiguous_strides(y.sizes()));
      const std::vector<float> in = view.to_vector<float>();  // the view's values, row-major
      const std::vector<float> got = y.to_vector<float>();
      for (std::size_t k = 0; k < in.size(); ++k) {
        const long double exact = std::tanh(static_cast<long double>(in[k]));
        const long double want = dt == DType::Float32   ? static_cast<float>(exact)
                                 : dt == DType::Float16 ? round_to_f16(exact)
                                                        : round_to_bf16(exact);
        EXPECT_EQ(static_cast<long double>(got[k]), want) << dtype_name(dt) << " element " << k;
      }
    }
  }
}

// Same bits for 1, 2 and 8 threads, across repeated runs, for every op and float dtype.
TEST(Unary, DeterministicForAnyThreadCount) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-12, 12);
  std::vector<float> v((1 << 18) + 77);
  for (float& x : v) x = dist(rng);
  const Tensor x32 = from_vector(v, {static_cast<std::int64_t>(v.size())});
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
    const Tensor x = x32.to(dt);
    for (const UnaryCase& c : unary_cases()) {
      std::vector<double> reference;
      for (int threads : {1, 2, 8, 2}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        const std::vector<double> got = c.op(x).to_vector<double>();
        if (reference.empty()) {
          reference = got;
          continue;
        }
        ASSERT_EQ(std::memcmp(got.data(), reference.data(), got.size() * sizeof(double)), 0)
            << c.name << " " << dtype_name(dt) << " with " << threads << " threads";
      }
    }
  }
}

// Note [rounding test]: the AVX-512 fast paths (erf, gelu, sigmoid, silu) store a result only
// when it provably rounds like the exact value, so every target returns the same bits. Inputs:
// a dense sweep of [-12, 12] and the 64 floats either side of every polynomial interval edge
// (k/4 for erf, k/2 for gelu), of gelu's -8 and of erf's +-4. The scalar target, which has no
// fast path, is the reference; the values themselves are checked against the oracle in
// unary_accuracy_test.
TEST(Unary, FastPathsGiveTheSameBitsOnEveryTarget) {
  std::vector<float> v;
  for (int i = -120000; i <= 120000; ++i) v.push_back(static_cast<float>(i) * 1e-4f);
  for (int k = -64; k <= 64; ++k) {
    for (float edge : {k / 4.0f, k / 8.0f}) {
      float up = edge, down = edge;
      for (int s = 0; s < 64; ++s) {
        v.push_back(up = std::nextafter(up, kInf));
        v.push_back(down = std::nextafter(down, -kInf));
      }
    }
  }
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 3e38f, -3e38f, kInf, -kInf, kNaN}) {
    v.push_back(x);
  }
  const Tensor x = from_vector(v, {static_cast<std::int64_t>(v.size())});
  for (const UnaryCase& c : unary_cases()) {
    if (c.name != "erf" && c.name != "gelu" && c.name != "sigmoid" && c.name != "silu") continue;
    std::vector<float> reference;
    {
      const test::TargetReset reset;
      simd::restrict_targets("scalar");
      reference = c.op(x).to_vector<float>();
    }
    test::for_each_target([&](const std::string& t) {
      const std::vector<float> got = c.op(x).to_vector<float>();
      for (std::size_t i = 0; i < v.size(); ++i) {
        ASSERT_TRUE(same_float(got[i], reference[i]))
            << c.name << " on " << t << " at x = " << v[i] << ": " << got[i] << " vs "
            << reference[i];
      }
    });
  }
}

// Note [pipelined fast paths]: sigmoid, silu and gelu (fast paths) and log, sin, cos, tanh
// (golden paths) run two vectors at a time, stage 1 of the next beside stage 2 of this one.
// Rows of every length from 1 to 40 (no pipelined step, one, several, with and without a
// tail), with a value that the vector path cannot take (a special lane, or a fast-path
// failure) placed in turn at every position, so that a vector inside the pipeline is redone.
// Every element must equal the same op applied to that element alone (a one-element row
// never enters the pipeline), on every SIMD target; the values themselves are checked against
// the oracle in unary_accuracy_test.
class UnaryOnTarget : public test::OnEveryTarget {};

TEST_P(UnaryOnTarget, PipelinedPathsGiveTheSameBitsForEveryRowLength) {
  struct Staged {
    std::string_view name;
    float start, step;         // row values start + step * i
    std::vector<float> bad;    // values that leave the pipelined path
  };
  const std::vector<Staged> staged = {
      {"sigmoid", -6.0f, 0.37f, {kNaN, kInf, -kInf}},
      {"silu", -6.0f, 0.37f, {kNaN, kInf}},
      {"gelu", -6.0f, 0.37f, {kNaN, -9.0f}},
      {"log", 0.01f, 0.37f, {0.0f, -1.0f, kInf, kNaN}},
      {"sin", -6.0f, 0.37f, {1e6f, kNaN, -kInf, -0.0f}},
      {"cos", -6.0f, 0.37f, {-1e6f, kNaN, kInf}},
      {"tanh", -6.0f, 0.37f, {kNaN, kInf, -0.0f}},
  };
  for (const UnaryCase& c : unary_cases()) {
    const auto it = std::find_if(staged.begin(), staged.end(),
                                 [&](const Staged& st) { return st.name == c.name; });
    if (it == staged.end()) continue;
    auto alone = [&](float v) { return c.op(from_vector<float>({v}, {1})).item<float>(); };
    for (int n = 1; n <= 40; ++n) {
      for (int bad = -1; bad < n; ++bad) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[i] = it->start + it->step * static_cast<float>(i);
        if (bad >= 0) v[bad] = it->bad[static_cast<std::size_t>(bad) % it->bad.size()];
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

// Note [libm special lanes]: log, log1p and rsqrt compute the lanes that glibc's scalar path
// used to take (negative inputs, zeros, infinities, NaN) in vectors. Each must be glibc's
// result bit for bit, NaN payloads and the default NaN's sign included, in Golden and Fast, on
// every SIMD target, at every position of rows that mix them with ordinary values (a standard
// normal row: half its lanes are negative), and rounded once to float16 and bfloat16.
TEST_P(UnaryOnTarget, SpecialLanesGiveGlibcBits) {
  std::vector<float> v = {0.0f,    -0.0f,     kInf,   -kInf,   kNaN,   -kNaN,       -1.0f,
                          -2.0f,   -0.5f,     1e-40f, -1e-40f, 1.0f,   3e38f,       -3e38f,
                          -1e-30f, 0x1p-149f, 2.0f,   0.75f,   -0.75f, -1.0000001f, -0.99999994f};
  for (std::uint32_t payload : {0x7fc00001u, 0xffc12345u, 0x7f800001u, 0xff9abcdeu}) {
    v.push_back(float_of(payload));  // quiet and signaling NaNs of both signs with payloads
  }
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  while (v.size() < 203) v.push_back(normal(gen));
  std::shuffle(v.begin() + 25, v.end(), gen);
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  struct Case {
    std::string_view name;
    Tensor (*op)(const Tensor&);
    double (*libm)(double);
    bool (*special)(float);  // the lanes the scalar path took: x outside the op's vector range
  };
  const Case cases[] = {
      {"log", [](const Tensor& t) { return log(t); }, [](double x) { return std::log(x); },
       [](float x) { return !(x > 0.0f && x < kInf); }},
      {"log1p", [](const Tensor& t) { return log1p(t); }, [](double x) { return std::log1p(x); },
       [](float x) { return !(x > -1.0f && x < kInf); }},
      {"rsqrt", [](const Tensor& t) { return rsqrt(t); },
       [](double x) { return 1.0 / std::sqrt(x); },
       [](float x) { return !(x > 0.0f && x < kInf); }},
      {"log2", [](const Tensor& t) { return log2(t); }, [](double x) { return std::log2(x); },
       [](float x) { return !(x > 0.0f && x < kInf); }},
      {"log10", [](const Tensor& t) { return log10(t); }, [](double x) { return std::log10(x); },
       [](float x) { return !(x > 0.0f && x < kInf); }},
      {"acosh", [](const Tensor& t) { return acosh(t); }, [](double x) { return std::acosh(x); },
       [](float x) { return !(x > 1.0f && x < kInf); }},
      {"atanh", [](const Tensor& t) { return atanh(t); }, [](double x) { return std::atanh(x); },
       [](float x) { return !(std::fabs(x) < 1.0f); }},
  };
  auto bits16 = [](const Tensor& t) {
    std::vector<std::uint16_t> b(static_cast<std::size_t>(t.numel()));
    std::memcpy(b.data(), t.data_ptr(), b.size() * 2);
    return b;
  };
  for (const Precision precision : {Precision::Golden, Precision::Fast}) {
    const PrecisionGuard guard(precision);
    for (const Case& c : cases) {
      const std::vector<float> got = c.op(from_vector(v, {n})).to_vector<float>();
      std::int64_t checked = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (!c.special(v[i])) continue;  // ordinary lanes: the accuracy tests' bounds
        ++checked;
        const float want = static_cast<float>(c.libm(static_cast<double>(v[i])));
        ASSERT_EQ(bits_of(got[i]), bits_of(want))
            << c.name << " on " << target() << " at x = " << v[i] << " (bits " << std::hex
            << bits_of(v[i]) << std::dec << "): " << got[i] << " vs " << want;
      }
      ASSERT_GT(checked, 30) << c.name;  // the listed values and many normal draws
      for (DType dt : {DType::Float16, DType::BFloat16}) {
        const Tensor x16 = from_vector(v, {n}).to(dt);
        const std::vector<std::uint16_t> got16 = bits16(c.op(x16));
        const std::vector<float> x16f = x16.to(DType::Float32).to_vector<float>();
        for (std::int64_t i = 0; i < n; ++i) {
          if (!c.special(x16f[i])) continue;
          // The 16-bit result of glibc's double value, rounded once by the conversion
          // under test's own oracle (to(dt) of a double is a single rounding).
          const double want = c.libm(static_cast<double>(x16f[i]));
          const std::vector<std::uint16_t> want16 =
              bits16(from_vector<double>({want}, {1}).to(dt));
          ASSERT_EQ(got16[i], want16[0])
              << c.name << " " << dtype_name(dt) << " on " << target() << " at x = " << x16f[i];
        }
      }
    }
  }
}

// Note [exact float64 rows]: float64 abs, neg, sqrt, rsqrt, reciprocal, square and relu run
// dense rows in vectors. Each value must be the scalar definition's IEEE operations, computed
// here, bit for bit (NaN payloads and signs, +-0, +-inf, subnormals), at every position of rows
// with a tail, on every SIMD target, and strided rows (value by value) the same.
TEST_P(UnaryOnTarget, ExactFloat64RowsGiveTheIeeeBits) {
  std::vector<double> v = {0.0,   -0.0,   1.0, -1.0, 4.0, 0.25, 1e-310, -1e-310,
                           1e308, -1e308, 3.0, -7.5, 2.0, 0.1,  1e-300, 5e-324};
  v.push_back(std::numeric_limits<double>::infinity());
  v.push_back(-std::numeric_limits<double>::infinity());
  for (std::uint64_t payload :
       {0x7ff8000000000001ull, 0xfff0000000000abcull, 0xfff8000000000000ull}) {
    double d;
    std::memcpy(&d, &payload, 8);
    v.push_back(d);
  }
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> uni(-100, 100);
  while (v.size() < 101) v.push_back(uni(gen));
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&);
    double (*ieee)(double);
  };
  const Case cases[] = {
      {"abs", [](const Tensor& t) { return abs(t); }, [](double x) { return std::fabs(x); }},
      {"neg", [](const Tensor& t) { return neg(t); }, [](double x) { return -x; }},
      {"sqrt", [](const Tensor& t) { return sqrt(t); }, [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](const Tensor& t) { return rsqrt(t); },
       [](double x) { return 1.0 / std::sqrt(x); }},
      {"reciprocal", [](const Tensor& t) { return reciprocal(t); },
       [](double x) { return 1.0 / x; }},
      {"square", [](const Tensor& t) { return square(t); }, [](double x) { return x * x; }},
      {"relu", [](const Tensor& t) { return relu(t); },
       [](double x) { return (x >= 0 || std::isnan(x)) ? x : 0.0; }},
  };
  const Tensor x = from_vector(v, {n});
  const Tensor strided = x.unsqueeze(1).expand({n, 2}).contiguous().select(1, 1);
  for (const Case& c : cases) {
    for (const Tensor& in : {x, strided}) {
      const std::vector<double> got = c.op(in).to_vector<double>();
      for (std::int64_t i = 0; i < n; ++i) {
        const double want = c.ieee(v[static_cast<std::size_t>(i)]);
        ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>(i)], &want, 8), 0)
            << c.name << " on " << target() << " at x = " << v[static_cast<std::size_t>(i)] << ": "
            << got[static_cast<std::size_t>(i)] << " vs " << want;
      }
    }
  }
}

// Dense float16/bfloat16 rows widen and round in vectors (unary.cc, transpose.h); strided rows
// convert value by value with the scalar conversions. Both compute the same doubles, so every
// op must give the same bits both ways, for every 16-bit pattern, on every SIMD target (the
// values themselves: unary_accuracy_test's exhaustive 16-bit tests).
TEST_P(UnaryOnTarget, DenseSixteenBitRowsGiveTheScalarConversionsBits) {
  std::vector<Half> h(65536);
  std::vector<BFloat16> b(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    h[i] = Half::from_bits(static_cast<std::uint16_t>(i));
    b[i] = BFloat16::from_bits(static_cast<std::uint16_t>(i));
  }
  const Tensor inputs[] = {from_vector(h, {65536}), from_vector(b, {65536})};
  auto bits = [](const Tensor& t) {
    std::vector<std::uint16_t> v(static_cast<std::size_t>(t.numel()));
    const Tensor c = t.contiguous();
    std::memcpy(v.data(), c.data_ptr(), v.size() * 2);
    return v;
  };
  for (const Tensor& x : inputs) {
    // The same values two elements apart: rows of stride 2, the scalar path.
    const Tensor strided = x.unsqueeze(1).expand({65536, 2}).contiguous().select(1, 0);
    for (const UnaryCase& c : unary_cases()) {
      const std::vector<std::uint16_t> dense = bits(c.op(x)), scalar = bits(c.op(strided));
      for (std::size_t i = 0; i < dense.size(); ++i) {
        ASSERT_EQ(dense[i], scalar[i])
            << c.name << " " << dtype_name(x.dtype()) << " on " << target() << " at bits " << i;
      }
    }
  }
}

MPSIM_ON_EVERY_TARGET(UnaryOnTarget);

// Note [streaming stores]: outputs of 16 MiB and more are written with streaming stores; the
// values are those of the same op on small slices (normal stores), and match the oracle.
TEST(Unary, LargeOutputsUseStreamingStoresWithTheSameValues) {
  const std::int64_t n = (std::int64_t{18} << 20) / 4 + 13;  // 18 MiB of float32, odd tail
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-10, 10);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& e : v) e = dist(rng);
  const Tensor x = from_vector(v, {n});
  for (const UnaryCase& c : unary_cases()) {
    if (c.name != "relu" && c.name != "exp" && c.name != "gelu" && c.name != "sqrt") continue;
    const std::vector<float> big = c.op(x).to_vector<float>();
    const std::int64_t piece = 1 << 20;  // 4 MiB outputs: normal stores
    for (std::int64_t start = 0; start < n; start += piece) {
      const std::int64_t len = std::min(piece, n - start);
      const std::vector<float> small = c.op(x.slice(0, start, start + len)).to_vector<float>();
      for (std::int64_t i = 0; i < len; ++i) {
        ASSERT_TRUE(same_float(big[static_cast<std::size_t>(start + i)],
                               small[static_cast<std::size_t>(i)]))
            << c.name << " at element " << start + i;
      }
    }
    for (std::int64_t i = 0; i < n; i += 4099) {  // and a sample against the oracle
      const long double exact = c.oracle(v[static_cast<std::size_t>(i)]);
      if (std::isnan(static_cast<double>(exact))) continue;
      EXPECT_LE(ulp_error(big[static_cast<std::size_t>(i)], exact), 0.5 + 1e-6)
          << c.name << " at x = " << v[static_cast<std::size_t>(i)];
    }
  }
}

TEST(Unary, SimdTargetsCanBeRestrictedAtRunTime) {
  const std::vector<std::string> targets = test::all_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets.back(), "scalar");
  for (const std::string& t : targets) {
    simd::restrict_targets(t);
    EXPECT_EQ(simd::current_target(), t);
  }
  simd::reset_targets();
  EXPECT_EQ(simd::current_target(), targets.front());
  EXPECT_THROW(simd::restrict_targets("avx9000"), InvalidArgument);
  EXPECT_EQ(simd::current_target(), targets.front());
}

}  // namespace
}  // namespace mpsim::testing

namespace mpsim::testing {
namespace {

// Note [16-bit unary tables]: every math-family function without parameters, float16 and
// bfloat16, gives the same bits for each of the 65536 inputs from one dense row of 65536 (a
// lookup in the table) as from dense rows of 8192 (the row kernel, below kTable16MinValues),
// twice (the second lookup reads the built table).
template <class T>
void expect_tables_match_rows() {
  const AllSixteenBit<T> all = all_sixteen_bit<T>();
  const Tensor& dense = all.dense;
  auto check = [&](std::string_view name, Tensor (*op)(const Tensor&)) {
    // The modified Bessel functions of the second kind take an integral per value and have no
    // tables (seconds over bfloat16's range)
    if (name.find("bessel_k") != std::string_view::npos) return;
    const std::vector<T> want = op(all.short_rows).template to_vector<T>();
    for (int round = 0; round < 2; ++round) {
      const std::vector<T> got = op(dense).template to_vector<T>();
      int differ = 0;
      for (std::size_t b = 0; b < 65536; ++b) differ += got[b].bits != want[b].bits;
      EXPECT_EQ(differ, 0) << name << " " << dtype_name(dense.dtype()) << " round " << round;
    }
  };
#define MPSIM_CHECK_MATH_TABLE(name, doc, rule) check(#name, &mpsim::name);
  MPSIM_MATH_OPS(MPSIM_CHECK_MATH_TABLE)
#undef MPSIM_CHECK_MATH_TABLE
}

TEST(Unary, SixteenBitTablesGiveTheRowKernelsBits) {
  expect_tables_match_rows<Half>();
  expect_tables_match_rows<BFloat16>();
}

}  // namespace
}  // namespace mpsim::testing
