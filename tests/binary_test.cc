// The arithmetic binary ops (add, sub, mul, div and its rounding modes, maximum, minimum, pow)
// on every dtype, checked against the oracles of binary_oracles.h: every float16/bfloat16
// pattern, integer wrapping and division by zero, bool rules, and streaming-store outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/mpsim.h"
#include "tests/binary_oracles.h"
#include "tests/simd_targets.h"

namespace mpsim::testing {
namespace {

using ::testing::HasSubstr;

void check_float_case(const FloatCase& c, DType d, const std::vector<double>& a,
                      const std::vector<double>& b, const Tensor& ta, const Tensor& tb) {
  const Tensor out = c.op(ta, tb);
  ASSERT_EQ(out.dtype(), d) << c.name;
  const std::vector<double> got = out.to_vector<double>();
  ASSERT_EQ(got.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double want = round_to(d, c.ref(a[i], b[i]));
    if (!same(got[i], want)) {  // one report per case is enough
      ADD_FAILURE() << c.name << " " << dtype_name(d) << " (" << fmt(a[i]) << ", " << fmt(b[i])
                    << "): got " << fmt(got[i]) << ", want " << fmt(want);
      return;
    }
  }
}

// Every SIMD target (the vector rows: Note [16-bit binary rows], Note [float32 rows in double]),
// dense operands and a broadcast scalar on either side.
class BinaryFloatOnTarget : public test::OnEveryTarget {};

TEST_P(BinaryFloatOnTarget, AllOpsAllFloatDTypesVsOracle) {
  Rng rng;
  for (DType d : kFloatTypes) {
    const std::size_t n = 3000;
    const std::vector<double> a = float_values(d, n, rng), b = float_values(d, n, rng);
    const Tensor ta = make(a, d, {30, 100}), tb = make(b, d, {30, 100});
    for (const FloatCase& c : float_cases()) check_float_case(c, d, a, b, ta, tb);
    const std::vector<double> s(n, b[7]);
    const Tensor ts = tb.reshape({3000}).narrow(0, 7, 1).reshape({1, 1});
    for (const FloatCase& c : float_cases()) {
      check_float_case(c, d, a, s, ta, ts);
      check_float_case(c, d, s, a, ts, ta);
    }
  }
}

// Every 16-bit pattern (NaNs, infinities, subnormals included) against a partner pattern.
double decode_bits(std::uint16_t bits, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1, e = (bits >> mant) & ((1 << exp_bits) - 1),
            m = bits & ((1 << mant) - 1);
  const double v = e == (1 << exp_bits) - 1 ? (m ? kNaN : kInf)
                   : e == 0                 ? std::ldexp(m, 1 - bias - mant)
                                            : std::ldexp(m + (1 << mant), e - bias - mant);
  return (bits & 0x8000) ? -v : v;
}

template <class T>
void check_every_pattern(int mant, int exp_bits) {
  const DType d = dtype_of<T>;
  std::vector<T> a(65536), b(65536);
  std::vector<double> av(65536), bv(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto pb =
        static_cast<std::uint16_t>(i * 40503u + 12345u);  // odd multiplier: a permutation
    a[i] = T::from_bits(static_cast<std::uint16_t>(i));
    b[i] = T::from_bits(pb);
    av[i] = decode_bits(static_cast<std::uint16_t>(i), mant, exp_bits);
    bv[i] = decode_bits(pb, mant, exp_bits);
  }
  const Tensor ta = from_vector(a, {256, 256}), tb = from_vector(b, {256, 256});
  for (const FloatCase& c : float_cases()) check_float_case(c, d, av, bv, ta, tb);
  // A broadcast scalar on either side (rows of stride 0), and rows with a tail.
  for (const std::uint16_t pattern : {std::uint16_t{0x4248}, std::uint16_t{0x8001}}) {
    const std::vector<double> sv(65536, decode_bits(pattern, mant, exp_bits));
    const Tensor ts = from_vector(std::vector<T>{T::from_bits(pattern)}, {1, 1});
    for (const FloatCase& c : float_cases()) {
      check_float_case(c, d, av, sv, ta, ts);
      check_float_case(c, d, sv, av, ts, ta);
    }
  }
  const Tensor odd_a = ta.reshape({65536}).slice(0, 0, 1001),
               odd_b = tb.reshape({65536}).slice(0, 0, 1001);
  const std::vector<double> odd_av(av.begin(), av.begin() + 1001),
      odd_bv(bv.begin(), bv.begin() + 1001);
  for (const FloatCase& c : float_cases()) check_float_case(c, d, odd_av, odd_bv, odd_a, odd_b);
}

// Note [streaming stores]: outputs of 16 MiB and more are written with streaming stores. The
// values must be the exact products/sums (oracle: double arithmetic rounded once, exact for
// one float op), for dense operands, a broadcast scalar, float32 and float64.
TEST(BinaryFloatTest, LargeOutputsUseStreamingStoresWithExactValues) {
  const std::int64_t n = (std::int64_t{18} << 20) / 4 + 5;  // 18 MiB of float32, odd tail
  std::vector<float> va(static_cast<std::size_t>(n)), vb(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    va[static_cast<std::size_t>(i)] = static_cast<float>(i % 1009) * 0.37f - 150.0f;
    vb[static_cast<std::size_t>(i)] = static_cast<float>(i % 997) * 0.013f + 0.5f;
  }
  const Tensor a = from_vector(va, {n});
  const Tensor b = from_vector(vb, {n});
  const std::vector<float> prod = mul(a, b).to_vector<float>();
  const std::vector<float> sum = add(a, from_vector<float>({2.5f}, {1})).to_vector<float>();
  const std::vector<double> prod64 =
      mul(a.to(DType::Float64), b.to(DType::Float64)).to_vector<double>();  // 36 MiB of float64
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double pa = va[i], pb = vb[i];
    ASSERT_EQ(prod[i], static_cast<float>(pa * pb)) << i;
    ASSERT_EQ(sum[i], static_cast<float>(pa + 2.5)) << i;
    ASSERT_EQ(prod64[i], pa * pb) << i;  // exact: 24-bit x 24-bit fits a double
  }
}

// Note [16-bit binary rows]: dense and broadcast float16/bfloat16 rows run in vectors on every
// SIMD target.
TEST_P(BinaryFloatOnTarget, EveryFloat16AndBFloat16Pattern) {
  check_every_pattern<Half>(10, 5);
  check_every_pattern<BFloat16>(7, 8);
}

MPSIM_ON_EVERY_TARGET(BinaryFloatOnTarget);

TEST(BinaryFloatTest, FloorDivisionFiniteOperands) {
  Rng rng;
  for (DType d : kFloatTypes) {
    std::vector<double> a = float_values(d, 2000, rng, false),
                        b = float_values(d, 2000, rng, false);
    for (double& x : a) x = std::isinf(x) ? 3.0 : x;  // float16 overflows above 65504
    for (double& x : b) x = std::isinf(x) ? -3.0 : x;
    b[0] = 0.0, b[1] = -0.0, a[2] = 0.0, a[3] = -0.0, b[3] = -5.0, a[4] = -0.0, b[4] = 0.0;
    const FloatCase c{"div_floor",
                      [](const Tensor& x, const Tensor& y) { return div(x, y, "floor"); },
                      floor_div_ref};
    check_float_case(c, d, a, b, make(a, d, {2000}), make(b, d, {2000}));
  }
}

TEST(BinaryFloatTest, DivisionRoundingModesNegativeOperandsAndZero) {
  const Tensor a =
      from_vector<float>({7.5f, -7.5f, 7.5f, -7.5f, 1.0f, -1.0f, 0.0f, 1.0f, -1.0f, 0.0f}, {10});
  const Tensor b =
      from_vector<float>({2.0f, 2.0f, -2.0f, -2.0f, -3.0f, 3.0f, -3.0f, 0.0f, 0.0f, 0.0f}, {10});
  const std::vector<float> floor = div(a, b, "floor").to_vector<float>();
  const std::vector<float> trunc = div(a, b, "trunc").to_vector<float>();
  const std::vector<float> none = div(a, b).to_vector<float>();
  const float want_floor[] = {3, -4, -4, 3, -1, -1, -0.0f, INFINITY, -INFINITY, NAN};
  const float want_trunc[] = {3, -3, -3, 3, -0.0f, -0.0f, -0.0f, INFINITY, -INFINITY, NAN};
  const float want_none[] = {3.75f,     -3.75f, -3.75f,   3.75f,     -1.0f / 3,
                             -1.0f / 3, -0.0f,  INFINITY, -INFINITY, NAN};
  for (int i = 0; i < 10; ++i) {
    expect_same(floor[i], want_floor[i], "floor " + std::to_string(i));
    expect_same(trunc[i], want_trunc[i], "trunc " + std::to_string(i));
    expect_same(none[i], want_none[i], "true " + std::to_string(i));
  }
}

// torch.div(a, b, rounding_mode='floor') follows Python: inf // 2 is nan, -5 // inf is -1,
// 5 // -inf is -1, 5 // inf is 0 (c10 div_floor_floating computes through fmod).
TEST(BinaryFloatTest, FloorDivisionWithInfinitiesAsPython) {
  for (DType d : kFloatTypes) {
    const Tensor a = make({kInf, -kInf, -5.0, 5.0, 5.0, -5.0, 0.0}, d, {7});
    const Tensor b = make({2.0, 2.0, kInf, -kInf, kInf, -kInf, -kInf}, d, {7});
    const std::vector<double> got = div(a, b, "floor").to_vector<double>();
    const double want[] = {kNaN, kNaN, -1.0, -1.0, 0.0, 0.0, -0.0};
    for (int i = 0; i < 7; ++i)
      expect_same(got[i], want[i], std::string(dtype_name(d)) + " #" + std::to_string(i));
  }
}

TEST(BinaryFloatTest, MaximumMinimumSpecialValues) {
  for (DType d : kFloatTypes) {
    const Tensor a = make({-0.0, 0.0, kNaN, 1.0, kNaN, -kInf, 2.0}, d, {7});
    const Tensor b = make({0.0, -0.0, 1.0, kNaN, kInf, kNaN, -3.0}, d, {7});
    const std::vector<double> mx = maximum(a, b).to_vector<double>(),
                              mn = minimum(a, b).to_vector<double>();
    const double want_max[] = {0.0, 0.0, kNaN, kNaN, kNaN, kNaN, 2.0};
    const double want_min[] = {-0.0, -0.0, kNaN, kNaN, kNaN, kNaN, -3.0};
    for (int i = 0; i < 7; ++i) {
      expect_same(mx[i], want_max[i],
                  std::string("max ") + std::string(dtype_name(d)) + std::to_string(i));
      expect_same(mn[i], want_min[i],
                  std::string("min ") + std::string(dtype_name(d)) + std::to_string(i));
    }
    // The same through the strided (non-SIMD) path: every other element of a longer tensor.
    const Tensor a2 = make({-0.0, 9.0, 0.0, 9.0, kNaN, 9.0}, d, {6}).slice(0, 0, 6, 2);
    const Tensor b2 = make({0.0, 9.0, -0.0, 9.0, 1.0, 9.0}, d, {6}).slice(0, 0, 6, 2);
    const std::vector<double> mx2 = maximum(a2, b2).to_vector<double>(),
                              mn2 = minimum(a2, b2).to_vector<double>();
    expect_same(mx2[0], 0.0, "strided max(-0,+0)");
    expect_same(mx2[1], 0.0, "strided max(+0,-0)");
    expect_same(mn2[0], -0.0, "strided min(-0,+0)");
    expect_same(mn2[1], -0.0, "strided min(+0,-0)");
    expect_same(mx2[2], kNaN, "strided max nan");
  }
}

// ---- Integers and bools ----

template <class T>
void check_int_ops(Rng& rng) {
  const DType d = dtype_of<T>;
  const std::size_t n = 2000;
  std::vector<T> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(rng.next());
    b[i] = static_cast<T>(rng.next() >> (i % 3 == 0 ? 58 : 0));  // some small divisors
    if (b[i] == 0) b[i] = 1;
  }
  a[0] = std::numeric_limits<T>::min(), b[0] = static_cast<T>(-1);  // INT_MIN / -1 wraps
  a[1] = static_cast<T>(-7), b[1] = 2;
  a[2] = 7, b[2] = static_cast<T>(-2);
  const Tensor ta = from_vector(a, {n}), tb = from_vector(b, {n});
  using I = __int128;
  const std::vector<std::tuple<const char*, TensorOp, std::function<I(I, I)>>> cases = {
      {"add", [](const Tensor& x, const Tensor& y) { return add(x, y); },
       [](I x, I y) { return x + y; }},
      {"add_alpha3", [](const Tensor& x, const Tensor& y) { return add(x, y, 3); },
       [](I x, I y) { return x + 3 * y; }},
      {"sub", [](const Tensor& x, const Tensor& y) { return sub(x, y); },
       [](I x, I y) { return x - y; }},
      {"sub_alpha-2", [](const Tensor& x, const Tensor& y) { return sub(x, y, -2); },
       [](I x, I y) { return x + 2 * y; }},
      {"mul", [](const Tensor& x, const Tensor& y) { return mul(x, y); },
       [](I x, I y) { return x * y; }},
      {"trunc", [](const Tensor& x, const Tensor& y) { return div(x, y, "trunc"); },
       [](I x, I y) { return x / y; }},
      {"floor", [](const Tensor& x, const Tensor& y) { return div(x, y, "floor"); },
       [](I x, I y) { return x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0); }},
      {"maximum", [](const Tensor& x, const Tensor& y) { return maximum(x, y); },
       [](I x, I y) { return x > y ? x : y; }},
      {"minimum", [](const Tensor& x, const Tensor& y) { return minimum(x, y); },
       [](I x, I y) { return x < y ? x : y; }},
  };
  for (const auto& [name, op, ref] : cases) {
    const Tensor r = op(ta, tb);
    ASSERT_EQ(r.dtype(), d) << name;
    const std::vector<T> got = r.template to_vector<T>();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], wrap<T>(ref(a[i], b[i]))) << dtype_name(d) << " " << name << " " << i;
    }
    // A broadcast scalar on either side (Note [integer binary rows]: rows of stride 0).
    if (std::string_view(name) == "trunc" || std::string_view(name) == "floor") continue;
    const Tensor one = tb.narrow(0, 5, 1);
    const std::vector<T> left = op(ta, one).template to_vector<T>();
    const std::vector<T> right = op(one, ta).template to_vector<T>();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(left[i], wrap<T>(ref(a[i], b[5]))) << dtype_name(d) << " " << name << " " << i;
      ASSERT_EQ(right[i], wrap<T>(ref(b[5], a[i]))) << dtype_name(d) << " " << name << " " << i;
    }
  }
  // True division converts both operands to float32 first.
  const Tensor q = div(ta, tb);
  EXPECT_EQ(q.dtype(), DType::Float32);
  const std::vector<float> tdiv = q.template to_vector<float>();
  for (std::size_t i = 0; i < n; ++i) {
    const float want = static_cast<float>(static_cast<double>(static_cast<float>(a[i])) /
                                          static_cast<float>(b[i]));
    ASSERT_EQ(tdiv[i], want) << dtype_name(d) << " true div " << i;
  }
}

class BinaryIntOnTarget : public test::OnEveryTarget {};

TEST_P(BinaryIntOnTarget, ArithmeticWrapsAndDividesLikeTorch) {
  Rng rng;
  check_int_ops<std::uint8_t>(rng);
  check_int_ops<std::int8_t>(rng);
  check_int_ops<std::int16_t>(rng);
  check_int_ops<std::int32_t>(rng);
  check_int_ops<std::int64_t>(rng);
}

MPSIM_ON_EVERY_TARGET(BinaryIntOnTarget);

TEST(BinaryIntTest, DivisionByZeroAndLiterals) {
  const Tensor a = from_vector<std::int32_t>({7, -7, 7, -7, 1, 0}, {6});
  const Tensor b = from_vector<std::int32_t>({2, 2, -2, -2, 0, 0}, {6});
  for (const char* mode : {"trunc", "floor"}) {
    try {
      div(a, b, mode);
      ADD_FAILURE() << "integer division by zero did not throw (" << mode << ")";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("[div]"));
      EXPECT_THAT(e.what(), HasSubstr("ZeroDivisionError"));
    }
    EXPECT_THROW(div(from_vector<std::uint8_t>({1}, {1}), 0, mode), InvalidArgument);
  }
  const Tensor a4 = a.slice(0, 0, 4), b4 = b.slice(0, 0, 4);
  EXPECT_EQ(div(a4, b4, "floor").to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{3, -4, -4, 3}));
  EXPECT_EQ(div(a4, b4, "trunc").to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{3, -3, -3, 3}));
  const std::vector<float> t =
      div(a, b).to_vector<float>();  // true division: inf and nan, no error
  EXPECT_EQ(t[0], 3.5f);
  EXPECT_EQ(t[4], INFINITY);
  EXPECT_TRUE(std::isnan(t[5]));
  const Tensor mn = from_vector<std::int64_t>({INT64_MIN}, {1});
  EXPECT_EQ(div(mn, -1, "trunc").item<std::int64_t>(), INT64_MIN);
  EXPECT_EQ(div(mn, -1, "floor").item<std::int64_t>(), INT64_MIN);
  EXPECT_EQ(mul(from_vector<std::int32_t>({INT32_MAX}, {1}), 2).item<std::int32_t>(), -2);
  EXPECT_EQ(sub(from_vector<std::uint8_t>({3}, {1}), 5).item<std::uint8_t>(), 254);
}

TEST(BinaryBoolTest, BoolRules) {
  const Tensor a = from_vector<bool>({false, false, true, true}, {4});
  const Tensor b = from_vector<bool>({false, true, false, true}, {4});
  EXPECT_EQ(add(a, b).dtype(), DType::Bool);
  EXPECT_EQ(add(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));    // or
  EXPECT_EQ(mul(a, b).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));  // and
  EXPECT_EQ(maximum(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(minimum(a, b).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_THROW(sub(a, b), DTypeError);
  EXPECT_THROW(a - b, DTypeError);
  EXPECT_THROW(div(a, b, "trunc"), DTypeError);
  const std::vector<float> q = div(a, b).to_vector<float>();  // promotes to float32
  EXPECT_TRUE(std::isnan(q[0]));
  EXPECT_EQ(q[2], INFINITY);
  EXPECT_EQ(q[3], 1.0f);
  EXPECT_EQ(add(a, 2).dtype(), DType::Int64);
  EXPECT_EQ(add(a, 2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 2, 3, 3}));
  EXPECT_EQ(sub(a, 1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-1, -1, 0, 0}));
  EXPECT_EQ(add(a, 0.5).to_vector<float>(), (std::vector<float>{0.5f, 0.5f, 1.5f, 1.5f}));
  EXPECT_EQ(add(a, b, true).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(gt(a, b).to_vector<bool>(),
            (std::vector<bool>{false, false, true, false}));  // False < True
}

// ---- pow ----

TEST(PowTest, FloatValuesAndSpecials) {
  Rng rng;
  for (DType d : kFloatTypes) {
    std::vector<double> base(500), ex(500);
    for (int i = 0; i < 500; ++i) {
      base[i] = round_to(d, rng.uniform(0.01, 8));
      ex[i] = round_to(d, rng.uniform(-4, 4));
    }
    const std::vector<double> got =
        pow(make(base, d, {500}), make(ex, d, {500})).to_vector<double>();
    for (int i = 0; i < 500; ++i) {
      const double want =
          round_to(d, static_cast<double>(std::pow(static_cast<long double>(base[i]),
                                                   static_cast<long double>(ex[i]))));
      if (d == DType::Float64) {  // f64 pow: within 1 ULP
        EXPECT_LE(std::fabs(got[i] - want), std::fabs(want) * 0x1p-52)
            << fmt(base[i]) << "^" << fmt(ex[i]);
      } else {
        expect_same(got[i], want,
                    std::string(dtype_name(d)) + " " + fmt(base[i]) + "^" + fmt(ex[i]));
      }
    }
    const Tensor sb = make({kNaN, 1.0, -2.0, 0.0, -0.0, -2.0, kInf, 2.0, -8.0, 3.0}, d, {10});
    const Tensor se = make({0.0, kNaN, 0.5, -1.0, -1.0, 3.0, -1.0, 0.5, 1.0 / 3, 2.0}, d, {10});
    const std::vector<double> s = pow(sb, se).to_vector<double>();
    const double want[] = {1.0,  1.0, kNaN, kInf, -kInf, -8.0, 0.0, round_to(d, std::sqrt(2.0)),
                           kNaN, 9.0};
    for (int i = 0; i < 10; ++i)
      expect_same(s[i], want[i], std::string(dtype_name(d)) + " special " + std::to_string(i));
  }
  EXPECT_EQ(pow(make({2.0, 10.0}, DType::Float16, {2}), 16).to_vector<float>()[0],
            INFINITY);  // 65536
  EXPECT_EQ(pow(from_vector<float>({4.0f}, {1}), 0.5).item<float>(), 2.0f);
  EXPECT_EQ(pow(2.0, from_vector<float>({3.0f, -1.0f}, {2})).to_vector<float>(),
            (std::vector<float>{8.0f, 0.5f}));
}

// Note [square powers]: pow(x, 2) of float32 and 16-bit x is x^2 rounded once (exact in
// long double here), for random values over the whole range (overflow to inf, underflow to
// subnormals and zero), specials, contiguous, strided and channels-last.
TEST(PowTest, SquaresAreRoundedOnce) {
  Rng rng;
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16}) {
    std::vector<double> base(1000);
    for (double& b : base) {
      b = round_to(d, std::ldexp(rng.uniform(-2, 2), static_cast<int>(rng.uniform(-80, 80))));
    }
    const double specials[] = {kNaN, kInf, -kInf, 0.0, -0.0, 0x1p-149, -0x1p-140, 65504.0};
    for (int i = 0; i < 8; ++i) base[static_cast<std::size_t>(i * 97)] = round_to(d, specials[i]);
    const Tensor x = make(base, d, {10, 100});
    for (const Tensor& in :
         {x, x.t(), x.slice(1, 0, 100, 3), x.reshape({2, 5, 10, 10}).permute({0, 2, 3, 1})}) {
      const std::vector<double> got = pow(in, 2.0).to_vector<double>();
      const std::vector<double> values = in.to_vector<double>();
      for (std::size_t i = 0; i < got.size(); ++i) {
        const long double v = values[i];
        expect_same(got[i], round_to(d, static_cast<double>(v * v)),
                    std::string(dtype_name(d)) + " " + fmt(values[i]) + "^2");
      }
    }
  }
}

// Note [exact powers]: pow(x, y) of float32, float16 and bfloat16 x for y = 0, 1/2, 1, 3, -1
// and -2 (2: SquaresAreRoundedOnce) computes the exact power rounded once, in vectors for dense
// float32 rows, and must give glibc's pow rounded once, bit for bit (float32 NaN payloads and
// signs included: glibc's steps flip a negative NaN's sign for odd y), on every SIMD target and
// for strided rows. float32: 65536 spread bit patterns (every class: zeros, subnormals, the
// overflow edges of x^3 and x^-2, infinities, NaNs with payloads), dense (vector lanes and a
// tail) and transposed (the scalar path); 16-bit types: every bit pattern. The full float32
// range is tests/numerics/power_sweep (all 2^32 inputs, every exponent: no difference).
class PowOnTarget : public test::OnEveryTarget {};

TEST_P(PowOnTarget, ExactPowersGiveGlibcBits) {
  std::vector<float> f32;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 65537) {
    f32.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b * 2654435761u)));
  }
  for (float v : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1p-64f, -0x1p-64f, 0x1.000002p-64f,
                  0x1.428a2ep42f, 0x1.428a30p42f, -0x1.428a30p42f, 3.4028235e38f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::bit_cast<float>(0x7fc01234u), std::bit_cast<float>(0xffc00001u),
                  std::bit_cast<float>(0x7f800005u), std::bit_cast<float>(0xff812345u)}) {
    f32.push_back(v);
  }
  f32.resize(f32.size() / 2 * 2 + 1);  // odd: a row with a tail
  const std::int64_t n = static_cast<std::int64_t>(f32.size());
  std::vector<Half> h(65536);
  std::vector<BFloat16> bf(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    h[b] = Half::from_bits(static_cast<std::uint16_t>(b));
    bf[b] = BFloat16::from_bits(static_cast<std::uint16_t>(b));
  }
  const Tensor x16[] = {from_vector(h, {256, 256}), from_vector(bf, {256, 256})};
  for (const double y : {0.0, 0.5, 1.0, 3.0, -1.0, -2.0}) {
    const std::string what = "y = " + fmt(y);
    const Tensor x = from_vector(f32, {n});
    for (const Tensor& in :
         {x, from_vector(f32, {n, 1}).expand({n, 2}).contiguous().select(1, 1)}) {
      const std::vector<float> got = pow(in, y).to_vector<float>();
      for (std::int64_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(std::pow(static_cast<double>(f32[i]), y));
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want))
            << what << ", x = " << fmt(f32[i]) << ": " << fmt(got[i]) << " vs " << fmt(want);
      }
    }
    for (const Tensor& x16d : x16) {
      const DType d = x16d.dtype();
      for (const Tensor& in : {x16d, x16d.t()}) {
        const std::vector<double> got = pow(in, y).to_vector<double>();
        const std::vector<double> in_values = in.to_vector<double>();
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double want = round_to(d, std::pow(in_values[i], y));
          ASSERT_TRUE(same(got[i], want) && std::signbit(got[i]) == std::signbit(want))
              << what << " " << dtype_name(d) << ", x = " << fmt(in_values[i]) << ": "
              << fmt(got[i]) << " vs " << fmt(want);
        }
      }
    }
  }
}

// Note [float-lane cubes] (binary.cc): x^3 of dense float32 rows whose vectors lie in the float
// lanes' range, 2^-26 <= |x| <= 2^42 or zero, in float lanes: log-uniform magnitudes over that
// range, both signs, the range's edges and zeros, against glibc's pow rounded once, bit for
// bit; then the same rows with one lane outside the range (+-2^-27, 2^43, inf, NaN) per 64,
// whose vectors take the double lanes.
TEST_P(PowOnTarget, CubesInFloatLanesGiveGlibcBits) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> log2_magnitude(-26.0, 42.0);
  std::vector<float> f32;
  for (int i = 0; i < 400000; ++i) {
    const float v = static_cast<float>(std::exp2(log2_magnitude(rng)));
    f32.push_back(i % 2 == 0 ? v : -v);
  }
  for (float v : {0x1p-26f, -0x1p-26f, 0x1p42f, -0x1p42f, 0.0f, -0.0f, 1.0f, -1.0f,
                  0x1.fffffep41f, 0x1.000002p-26f}) {
    f32.insert(f32.begin() + 1000, 32, v);
  }
  std::vector<float> mixed = f32;
  const float outside[] = {0x1p-27f, -0x1p-27f, 0x1p43f, std::numeric_limits<float>::infinity(),
                           std::bit_cast<float>(0xffc00001u), 0x1p-149f};
  for (std::size_t i = 17; i < mixed.size(); i += 64) mixed[i] = outside[i % 6];
  for (const std::vector<float>* row : {&f32, &mixed}) {
    const std::vector<float> got = pow(from_vector(*row), 3.0).to_vector<float>();
    for (std::size_t i = 0; i < row->size(); ++i) {
      const float want = static_cast<float>(std::pow(static_cast<double>((*row)[i]), 3.0));
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want))
          << "x = " << fmt((*row)[i]) << ": " << fmt(got[i]) << " vs " << fmt(want);
    }
  }
}

MPSIM_ON_EVERY_TARGET(PowOnTarget);

TEST(PowTest, Integers) {
  const Tensor base = from_vector<std::int32_t>({2, 3, -2, 0, 5, 7}, {6});
  const Tensor ex = from_vector<std::int32_t>({10, 3, 3, 0, 20, 1}, {6});
  __int128 p5 = 1;
  for (int i = 0; i < 20; ++i) p5 = static_cast<__int128>(wrap<std::int32_t>(p5 * 5));
  EXPECT_EQ(pow(base, ex).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1024, 27, -8, 1, static_cast<std::int32_t>(p5), 7}));
  // Negative exponent tensors: 1 -> 1, -1 -> +-1 by parity, anything else -> 0 (as torch).
  const Tensor nb = from_vector<std::int64_t>({1, -1, -1, 2, 0, -3}, {6});
  const Tensor ne_ = from_vector<std::int64_t>({-1, -1, -2, -1, -1, -3}, {6});
  EXPECT_EQ(pow(nb, ne_).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -1, 1, 0, 0, 0}));
  EXPECT_EQ(pow(from_vector<std::uint8_t>({3, 2}, {2}), from_vector<std::uint8_t>({5, 8}, {2}))
                .to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{243, 0}));
  EXPECT_EQ(pow(base, 2).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{4, 9, 4, 0, 25, 49}));
  EXPECT_EQ(pow(base, 2).dtype(), DType::Int32);
  const Tensor r = pow(from_vector<std::int32_t>({4, 9}, {2}), 0.5);
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{2.0f, 3.0f}));
  EXPECT_EQ(pow(2, from_vector<std::int32_t>({0, 1, 10}, {3})).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, 2, 1024}));
  try {
    pow(base, -1);
    ADD_FAILURE() << "pow(int tensor, -1) did not throw";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("[pow]"));
  }
  EXPECT_THROW(pow(from_vector<bool>({true}, {1}), from_vector<bool>({true}, {1})), DTypeError);
}

}  // namespace
}  // namespace mpsim::testing
