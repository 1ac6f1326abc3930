// The binary, comparison, where and clamp ops on every dtype, checked against oracles written
// here: double/__int128 arithmetic, then an independent rounding to the result dtype
// (static_cast<float> for float32, a frexp/nearbyint rounding for float16/bfloat16, explicit
// modular wrapping for integers). Also broadcasting, strided views, promotion, empty tensors,
// every compiled SIMD target, and bit-identical results for 1, 2 and 8 threads.
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
#include <string>
#include <tuple>
#include <vector>

#include "core/mpsim.h"
#include "kernels_simd/simd_target.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Oracles ----

// Nearest-even rounding of x to a binary format with `mant` stored mantissa bits, minimum
// normal exponent `emin` and largest finite value `max`: scale to the quantum (exact, a power
// of two), round with nearbyint (ties to even in the default mode), scale back.
double round_format(double x, int mant, int emin, double max) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  const int lead = std::max(e - 1, emin);
  const double q = std::ldexp(1.0, lead - mant);
  const double r = std::nearbyint(x / q) * q;
  return std::fabs(r) > max ? std::copysign(kInf, x) : r;
}
double round_to(DType d, double x) {
  switch (d) {
    case DType::Float16:
      return round_format(x, 10, -14, 65504.0);
    case DType::BFloat16:
      return round_format(x, 7, -126, std::ldexp(255.0, 120));
    case DType::Float32:
      return static_cast<float>(x);
    default:
      return x;
  }
}

// Two's-complement wrap of an exact integer into T.
template <class T>
T wrap(__int128 v) {
  constexpr int kBits = 8 * sizeof(T);
  const unsigned __int128 m =
      static_cast<unsigned __int128>(v) & ((static_cast<unsigned __int128>(1) << kBits) - 1);
  if constexpr (std::is_signed_v<T>) {
    const __int128 half = static_cast<__int128>(1) << (kBits - 1);
    return static_cast<T>(static_cast<__int128>(m) >= half ? static_cast<__int128>(m) - 2 * half
                                                           : static_cast<__int128>(m));
  } else {
    return static_cast<T>(m);
  }
}

struct Rng {
  std::uint64_t s = 0x2545F4914F6CDD1Dull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53;
  }
};

// Values of dtype d (exactly representable), with specials mixed in.
std::vector<double> float_values(DType d, std::size_t n, Rng& rng, bool specials = true) {
  static const double kSpecials[] = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 65504.0, 1e-7, 3.0};
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng.next();
    double x;
    if (specials && r % 13 == 0) {
      x = kSpecials[(r >> 8) % 10];
    } else {
      const int scale = static_cast<int>((r >> 16) % 40) - 20;  // magnitudes 2^-20 .. 2^20
      x = std::ldexp(rng.uniform(-1, 1), scale);
    }
    v[i] = round_to(d, x);
  }
  return v;
}

Tensor make(const std::vector<double>& v, DType d, const Shape& shape) {
  return from_vector(v, shape).to(d);  // exact: every value is representable in d
}

std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", x);
  return buf;
}

// Same value and sign of zero; any NaN matches any NaN.
bool same(double got, double want) {
  return std::isnan(want) ? std::isnan(got)
                          : std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want);
}
void expect_same(double got, double want, const std::string& what) {
  EXPECT_TRUE(same(got, want)) << what << ": got " << fmt(got) << ", want " << fmt(want);
}

const DType kFloatTypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// IEEE 754-2019 maximum/minimum, written from the definition.
double ieee_max_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
  return a > b ? a : b;
}
double ieee_min_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return a < b ? a : b;
}

// Python/PyTorch floor division of floats (b == 0 gives the IEEE quotient; an infinite
// dividend gives nan; a finite x // inf is 0 or -1 by the signs).
double floor_div_ref(double a, double b) {
  if (b == 0 || std::isnan(a) || std::isnan(b)) return a / b;
  if (std::isinf(a)) return kNaN;
  if (std::isinf(b)) {
    if (a == 0 || std::signbit(a) == std::signbit(b)) return std::copysign(0.0, a / b);
    return -1.0;
  }
  const long double q = std::floor(static_cast<long double>(a) / static_cast<long double>(b));
  return q == 0 ? std::copysign(0.0, a / b) : static_cast<double>(q);
}
double trunc_div_ref(double a, double b) {
  return static_cast<double>(std::trunc(static_cast<long double>(a) / static_cast<long double>(b)));
}

using TensorOp = std::function<Tensor(const Tensor&, const Tensor&)>;
using Ref = std::function<double(double, double)>;

struct FloatCase {
  const char* name;
  TensorOp op;
  Ref ref;  // exact or correctly rounded in double; round_to() does the final rounding
};

std::vector<FloatCase> float_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
       [](double a, double b) { return a + b; }},
      {"add_alpha2", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); },
       [](double a, double b) { return a + 2 * b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); },
       [](double a, double b) { return a - b; }},
      {"sub_alpha-0.5", [](const Tensor& a, const Tensor& b) { return sub(a, b, -0.5); },
       [](double a, double b) { return a + 0.5 * b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; },
       [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; },
       [](double a, double b) { return a / b; }},
      {"div_trunc", [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); },
       trunc_div_ref},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, ieee_max_ref},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, ieee_min_ref},
  };
}

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

TEST(BinaryFloatTest, AllOpsAllFloatDTypesVsOracle) {
  Rng rng;
  for (DType d : kFloatTypes) {
    const std::size_t n = 3000;
    const std::vector<double> a = float_values(d, n, rng), b = float_values(d, n, rng);
    const Tensor ta = make(a, d, {30, 100}), tb = make(b, d, {30, 100});
    for (const FloatCase& c : float_cases()) check_float_case(c, d, a, b, ta, tb);
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
  const std::vector<double> prod64 = mul(a.to(DType::Float64), b.to(DType::Float64))
                                         .to_vector<double>();  // 36 MiB of float64
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double pa = va[i], pb = vb[i];
    ASSERT_EQ(prod[i], static_cast<float>(pa * pb)) << i;
    ASSERT_EQ(sum[i], static_cast<float>(pa + 2.5)) << i;
    ASSERT_EQ(prod64[i], pa * pb) << i;  // exact: 24-bit x 24-bit fits a double
  }
}

TEST(BinaryFloatTest, EveryFloat16AndBFloat16Pattern) {
  check_every_pattern<Half>(10, 5);
  check_every_pattern<BFloat16>(7, 8);
}

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

TEST(BinaryIntTest, ArithmeticWrapsAndDividesLikeTorch) {
  Rng rng;
  check_int_ops<std::uint8_t>(rng);
  check_int_ops<std::int32_t>(rng);
  check_int_ops<std::int64_t>(rng);
}

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

// ---- comparisons ----

TEST(CompareTest, AllDTypesAndNaN) {
  using Cmp = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Cmp> ops[] = {{"eq", eq}, {"ne", ne}, {"lt", lt},
                                             {"le", le}, {"gt", gt}, {"ge", ge}};
  // a = {1, 2, 3, 0} vs b = {2, 2, 1, 0}, per op.
  const std::vector<bool> plain[] = {{0, 1, 0, 1}, {1, 0, 1, 0}, {1, 0, 0, 0},
                                     {1, 1, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 1}};
  // a = {nan, nan, 1, -0, -inf} vs b = {nan, 1, nan, +0, inf}: NaN is unordered, -0 == +0.
  const std::vector<bool> special[] = {{0, 0, 0, 1, 0}, {1, 1, 1, 0, 1}, {0, 0, 0, 0, 1},
                                       {0, 0, 0, 1, 1}, {0, 0, 0, 0, 0}, {0, 0, 0, 1, 0}};
  for (DType d : {DType::UInt8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64}) {
    const Tensor a = make({1, 2, 3, 0}, d, {4}), b = make({2, 2, 1, 0}, d, {4});
    const Tensor sa = make({kNaN, kNaN, 1.0, -0.0, -kInf}, d, {5}),
                 sb = make({kNaN, 1.0, kNaN, 0.0, kInf}, d, {5});
    for (int k = 0; k < 6; ++k) {
      const Tensor r = ops[k].second(a, b);
      EXPECT_EQ(r.dtype(), DType::Bool);
      EXPECT_EQ(r.to_vector<bool>(), plain[k]) << ops[k].first << " " << d;
      if (is_floating(d)) {
        EXPECT_EQ(ops[k].second(sa, sb).to_vector<bool>(), special[k]) << ops[k].first << " " << d;
      }
    }
  }
  // Promotion: int tensor vs 2.5 compares in float32; 0-dim/scalar broadcasting.
  const Tensor i = from_vector<std::int32_t>({2, 3}, {2});
  EXPECT_EQ(eq(i, 2.5).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(lt(i, 2.5).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(ge(i, scalar_tensor(3, DType::Int64)).to_vector<bool>(),
            (std::vector<bool>{false, true}));
}

// ---- where / clamp ----

TEST(WhereTest, AllDTypesBroadcastAndPromotion) {
  const Tensor c = from_vector<bool>({true, false, false, true}, {4});
  for (DType d : {DType::Bool, DType::UInt8, DType::Int32, DType::Int64, DType::Float16,
                  DType::BFloat16, DType::Float32, DType::Float64}) {
    const Tensor a = make({1, 1, 1, 1}, d, {4}), b = make({0, 0, 0, 0}, d, {4});
    const Tensor w = where(c, a, b);
    EXPECT_EQ(w.dtype(), d);
    EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, 0, 0, 1})) << d;
  }
  const Tensor cb = from_vector<bool>({true, false, true}, {3, 1});
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor w = where(cb, a, scalar_tensor(-1.0, DType::Float32));
  EXPECT_EQ(w.shape(), (Shape{3, 4}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4}));
  const Tensor wi = where(c, from_vector<std::int32_t>({1, 2, 3, 4}, {4}), 2.5);
  EXPECT_EQ(wi.dtype(), DType::Float32);
  EXPECT_EQ(wi.to_vector<float>(), (std::vector<float>{1, 2.5f, 2.5f, 4}));
  EXPECT_EQ(where(c, 1, 0).dtype(), DType::Int64);
  EXPECT_EQ(where(c, 1, 0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(where(c, 1.5, 0).dtype(), DType::Float32);
  const Tensor nan_other =
      where(c, from_vector<float>({1, 2, 3, 4}, {4}), from_vector<float>({NAN, 5, 6, NAN}, {4}));
  EXPECT_EQ(nan_other.to_vector<float>(), (std::vector<float>{1, 5, 6, 4}));
  // Half and float32: the result promotes to float32 (both are dim > 0 tensors).
  EXPECT_EQ(where(c, make({1, 1, 1, 1}, DType::Float16, {4}),
                  make({0.5, 0.5, 0.5, 0.5}, DType::Float32, {4}))
                .dtype(),
            DType::Float32);
  EXPECT_THROW(where(from_vector<std::uint8_t>({1}, {1}), a, a), DTypeError);
}

TEST(ClampTest, ScalarBoundsNaNAndOrder) {
  for (DType d : kFloatTypes) {
    const Tensor x = make({-2.0, 0.5, 3.0, kNaN, -kInf, kInf}, d, {6});
    expect_same(
        clamp(x, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<double>()[0], -1.0,
        "lo");
    const std::vector<double> c =
        clamp(x, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<double>();
    const double want[] = {-1.0, 0.5, 1.0, kNaN, -1.0, 1.0};
    for (int i = 0; i < 6; ++i)
      expect_same(c[i], want[i], std::string(dtype_name(d)) + " clamp " + std::to_string(i));
    const std::vector<double> nb =
        clamp(x, std::optional<Scalar>(kNaN), std::nullopt).to_vector<double>();
    for (double v : nb) EXPECT_TRUE(std::isnan(v)) << d;  // a NaN bound gives NaN everywhere
    const std::vector<double> inv =
        clamp(x, std::optional<Scalar>(2), std::optional<Scalar>(1)).to_vector<double>();
    const double want_inv[] = {1.0, 1.0, 1.0, kNaN, 1.0, 1.0};  // min > max: max
    for (int i = 0; i < 6; ++i)
      expect_same(inv[i], want_inv[i],
                  std::string(dtype_name(d)) + " inverted " + std::to_string(i));
    EXPECT_EQ(clamp_min(x, 0).to_vector<double>()[0], 0.0);
    EXPECT_EQ(clamp_max(x, 0).to_vector<double>()[2], 0.0);
  }
  const Tensor xi = from_vector<std::int32_t>({-5, 0, 5}, {3});
  EXPECT_EQ(
      clamp(xi, std::optional<Scalar>(-1), std::optional<Scalar>(1)).to_vector<std::int32_t>(),
      (std::vector<std::int32_t>{-1, 0, 1}));
  const Tensor xf = clamp(xi, std::optional<Scalar>(0.5), std::nullopt);  // promotes to float32
  EXPECT_EQ(xf.dtype(), DType::Float32);
  EXPECT_EQ(xf.to_vector<float>(), (std::vector<float>{0.5f, 0.5f, 5.0f}));
  EXPECT_EQ(clamp(from_vector<std::uint8_t>({0, 100, 255}, {3}), std::optional<Scalar>(10),
                  std::optional<Scalar>(200))
                .to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{10, 100, 200}));
  const Tensor cb = clamp(from_vector<bool>({true, false}, {2}), std::optional<Scalar>(0),
                          std::optional<Scalar>(0));
  EXPECT_EQ(cb.dtype(), DType::Int64);  // bool tensor with int bounds computes in int64, as torch
  EXPECT_EQ(cb.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0}));
  EXPECT_THROW(clamp(xi, std::optional<Scalar>(), std::optional<Scalar>()), InvalidArgument);
  EXPECT_THROW(clamp(xi, std::optional<Tensor>(), std::optional<Tensor>()), InvalidArgument);
}

TEST(ClampTest, TensorBoundsBroadcast) {
  const Tensor x = from_vector<float>({-3, -1, 0, 1, 3, NAN}, {2, 3});
  const Tensor lo = from_vector<float>({-2, 0, NAN}, {3});
  const Tensor hi = from_vector<float>({2}, {1, 1});
  const std::vector<float> got =
      clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi)).to_vector<float>();
  const double want[] = {-2, 0, kNaN, 1, 2, kNaN};
  for (int i = 0; i < 6; ++i) expect_same(got[i], want[i], "tensor bounds " + std::to_string(i));
  const Tensor wide = clamp(from_vector<float>({5}, {1}),
                            std::optional<Tensor>(from_vector<float>({1, 6}, {2, 1})));
  EXPECT_EQ(wide.shape(), (Shape{2, 1}));
  EXPECT_EQ(wide.to_vector<float>(), (std::vector<float>{5, 6}));
  const Tensor only_max =
      clamp(x, std::nullopt, std::optional<Tensor>(scalar_tensor(0, DType::Float32)));
  expect_same(only_max.to_vector<float>()[4], 0.0, "only max");
  expect_same(only_max.to_vector<float>()[0], -3.0, "only max keeps low values");
}

// ---- broadcasting, strided views, promotion, empty ----

// out[i...] = f(a[broadcast index], b[broadcast index]) for contiguous float32 a and b.
std::vector<float> broadcast_ref(const std::vector<float>& a, const Shape& sa,
                                 const std::vector<float>& b, const Shape& sb, const Shape& out,
                                 const std::function<float(float, float)>& f) {
  const std::size_t nd = out.size();
  auto offset = [&](const Shape& s, const std::vector<std::int64_t>& idx) {
    std::int64_t off = 0, stride = 1;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const std::size_t dim = s.size() - 1 - k;
      const std::int64_t i = idx[nd - 1 - k];
      off += (s[dim] == 1 ? 0 : i) * stride;
      stride *= s[dim];
    }
    return off;
  };
  std::vector<float> r(out.numel());
  std::vector<std::int64_t> idx(nd, 0);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;
    for (std::size_t k = nd; k-- > 0;) {
      idx[k] = rest % out[k];
      rest /= out[k];
    }
    r[flat] = f(a[offset(sa, idx)], b[offset(sb, idx)]);
  }
  return r;
}

std::vector<float> rand_floats(std::int64_t n, Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.uniform(-4, 4));
  return v;
}

TEST(BroadcastTest, ShapesAgainstIndexOracle) {
  Rng rng;
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {{{2, 3, 4}, {3, 1}, {2, 3, 4}},
                        {{2, 3, 4}, {4}, {2, 3, 4}},
                        {{2, 3, 4}, {}, {2, 3, 4}},
                        {{3, 1}, {1, 5}, {3, 5}},
                        {{2, 320, 8, 8}, {320, 1, 1}, {2, 320, 8, 8}},
                        {{1}, {7, 1, 3}, {7, 1, 3}},
                        {{5, 1, 1}, {1, 1, 37}, {5, 1, 37}}};
  for (const Case& c : cases) {
    const std::vector<float> a = rand_floats(c.a.numel(), rng), b = rand_floats(c.b.numel(), rng);
    const Tensor ta = from_vector(a, c.a), tb = from_vector(b, c.b);
    const Tensor s = add(ta, tb), m = mul(tb, ta), mx = maximum(ta, tb);
    ASSERT_EQ(s.shape(), c.out);
    EXPECT_EQ(s.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return x + y; }))
        << c.a << c.b;
    EXPECT_EQ(m.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return y * x; }))
        << c.a << c.b;
    EXPECT_EQ(mx.to_vector<float>(),
              broadcast_ref(a, c.a, b, c.b, c.out, [](float x, float y) { return x > y ? x : y; }));
  }
  // Python scalars on either side.
  const Tensor x = from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ((x + 1).to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ((2 - x).to_vector<float>(), (std::vector<float>{1, 0, -1}));
  EXPECT_EQ((3 * x).to_vector<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ((1 / x).to_vector<float>()[1], 0.5f);
  EXPECT_EQ((x / 2).to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f}));
  EXPECT_EQ((-x).to_vector<float>(), (std::vector<float>{-1, -2, -3}));
}

TEST(BroadcastTest, StridedAndExpandedInputsAndStridedOutput) {
  Rng rng;
  const std::vector<float> av = rand_floats(48, rng), bv = rand_floats(48, rng);
  const Tensor a = from_vector(av, {4, 12}), b = from_vector(bv, {12, 4});
  const Tensor at = a.slice(1, 1, 12, 3);     // [4, 4], strides [12, 3]
  const Tensor bt = b.t().slice(1, 0, 8, 2);  // [4, 4], strides [1, 8]
  const Tensor be = b.select(1, 2).slice(0, 0, 4).unsqueeze(0).expand({4, 4});  // stride 0 rows
  for (const FloatCase& c : float_cases()) {
    const std::vector<float> r1 = c.op(at, bt).to_vector<float>(),
                             r2 = c.op(at, be).to_vector<float>();
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const double x = av[i * 12 + 1 + 3 * j], y1 = bv[(2 * j) * 4 + i], y2 = bv[j * 4 + 2];
        const double w1 = round_to(DType::Float32, c.ref(x, y1));
        const double w2 = round_to(DType::Float32, c.ref(x, y2));
        EXPECT_TRUE(same(r1[i * 4 + j], w1)) << c.name << " strided " << i << "," << j;
        EXPECT_TRUE(same(r2[i * 4 + j], w2)) << c.name << " expanded " << i << "," << j;
      }
    }
  }
  // A transposed destination receives the result in its own layout.
  Tensor base = zeros({4, 4});
  base.t().copy_(add(at, bt));
  const std::vector<float> sum = add(at, bt).to_vector<float>(), bs = base.to_vector<float>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(bs[j * 4 + i], sum[i * 4 + j]);
}

TEST(BroadcastTest, PromotionOfResults) {
  const Tensor i = from_vector<std::int32_t>({1, -2}, {2});
  EXPECT_EQ(add(i, 2.5).to_vector<float>(), (std::vector<float>{3.5f, 0.5f}));
  EXPECT_EQ(mul(i, 1.5).dtype(), DType::Float32);
  EXPECT_EQ(mul(i, 1.5).to_vector<float>(), (std::vector<float>{1.5f, -3.0f}));
  EXPECT_EQ(add(i, scalar_tensor(1, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ(add(i, from_vector<std::int64_t>({1, 1}, {2})).dtype(), DType::Int64);
  EXPECT_EQ(add(i, scalar_tensor(1, DType::Int64)).dtype(), DType::Int32);
  const Tensor h = make({1.0, 2049.0}, DType::Float16, {2});  // 2049 is not a half: stored 2048
  const Tensor hs = add(h, scalar_tensor(1.0, DType::Float32));
  EXPECT_EQ(hs.dtype(), DType::Float16);
  EXPECT_EQ(hs.to_vector<float>(), (std::vector<float>{2.0f, 2048.0f}));  // 2049 ties to 2048
  const Tensor hb = add(h, make({0.5, 0.5}, DType::BFloat16, {2}));
  EXPECT_EQ(hb.dtype(), DType::Float32);
  EXPECT_EQ(hb.to_vector<float>(), (std::vector<float>{1.5f, 2048.5f}));
  EXPECT_EQ(add(from_vector<std::uint8_t>({200}, {1}), scalar_tensor(100, DType::Int64))
                .item<std::uint8_t>(),
            44);
}

TEST(BroadcastTest, EmptyTensors) {
  const Tensor e = add(zeros({0, 3}), from_vector<float>({1, 2, 3}, {3}));
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(mul(zeros({0}), scalar_tensor(2, DType::Float32)).shape(), (Shape{0}));
  EXPECT_EQ(div(zeros({2, 0}, DType::Int32), zeros({2, 1}, DType::Int32), "floor").shape(),
            (Shape{2, 0}));
  EXPECT_EQ(where(zeros({0}, DType::Bool), 1.0, 2.0).shape(), (Shape{0}));
  EXPECT_EQ(clamp(zeros({0, 2}), std::optional<Scalar>(0)).shape(), (Shape{0, 2}));
  EXPECT_EQ(eq(zeros({3, 0}), zeros({0})).shape(), (Shape{3, 0}));
}

// ---- SIMD targets and threads ----

// Raw output bytes of a set of ops over dense and broadcast-scalar operands of many lengths.
std::vector<std::uint8_t> op_battery_bytes() {
  std::vector<std::uint8_t> all;
  Rng rng;
  for (DType d : {DType::Float32, DType::Float64}) {
    for (std::int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 83, 1000}) {
      std::vector<double> a = float_values(d, n, rng), b = float_values(d, n, rng);
      const Tensor ta = make(a, d, {n}), tb = make(b, d, {n});
      const Tensor s = make({-0.0}, d, {});
      for (const Tensor& r :
           {add(ta, tb), sub(ta, tb), mul(ta, tb), div(ta, tb), maximum(ta, tb), minimum(ta, tb),
            add(ta, s), maximum(s, tb), minimum(ta, s), div(s, tb)}) {
        const Tensor c = r.contiguous();
        const auto* p = static_cast<const std::uint8_t*>(n ? c.data_ptr() : nullptr);
        all.insert(all.end(), p, p + c.nbytes());
      }
      // Each target also matches the oracle (checked on add).
      const std::vector<double> got = add(ta, tb).to_vector<double>();
      for (std::int64_t i = 0; i < n; ++i)
        EXPECT_TRUE(same(got[i], round_to(d, a[i] + b[i]))) << "target add " << i;
    }
  }
  return all;
}

TEST(SimdTargetTest, EveryTargetBitIdentical) {
  const std::vector<std::string> targets = simd::available_targets();
  ASSERT_FALSE(targets.empty());
  std::string names;
  for (const std::string& t : targets) names += t + " ";
  RecordProperty("simd_targets", names);
  std::vector<std::uint8_t> reference;
  for (const std::string& t : targets) {
    simd::restrict_targets(t);
    EXPECT_EQ(simd::current_target(), t);
    const std::vector<std::uint8_t> bytes = op_battery_bytes();
    simd::reset_targets();
    if (reference.empty()) {
      reference = bytes;
    } else {
      EXPECT_TRUE(bytes == reference) << "target " << t << " differs from " << targets.front();
    }
  }
  EXPECT_THROW(simd::restrict_targets("bogus"), InvalidArgument);
  EXPECT_EQ(simd::current_target(), targets.front());
}

// Rows that start off a vector boundary and end in a partial vector, broadcast against a
// column, on every target: the row tail must stay inside the row (Highway 1.0.3's SSE4
// MaskedLoad is a full aligned load, which faulted here).
TEST(SimdTargetTest, BroadcastRowTailsOnEveryTarget) {
  for (const std::string& t : simd::available_targets()) {
    simd::restrict_targets(t);
    const Tensor a = arange(0, 5 * 7 * 11, 1, DType::Float32).reshape({5, 7, 11});
    const Tensor b = arange(0, 7, 1, DType::Float32).reshape({7, 1});
    for (const Tensor& r : {add(a, b), sub(a, b), mul(a, b), div(a, b), maximum(b, a)}) {
      ASSERT_EQ(r.sizes(), Shape({5, 7, 11})) << t;
    }
    const std::vector<float> got = add(a, b).to_vector<float>();
    for (int i = 0; i < 5 * 7 * 11; ++i) {
      EXPECT_EQ(got[i], static_cast<float>(i + (i / 11) % 7)) << t << " " << i;
    }
    simd::reset_targets();
  }
}

std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
  return std::vector<std::uint8_t>(p, p + c.nbytes());
}

TEST(DeterminismTest, BitIdenticalFor1_2_8Threads) {
  constexpr std::int64_t kRows = 513, kCols = 517;  // 265221 > 2^18 elements: many fixed blocks
  Rng rng;
  const std::vector<double> av = float_values(DType::Float32, kRows * kCols, rng);
  const std::vector<double> bv = float_values(DType::Float32, kCols, rng);
  const Tensor a = make(av, DType::Float32, {kRows, kCols});
  const Tensor b = make(bv, DType::Float32, {kCols});  // broadcast over rows
  const Tensor col = make(bv, DType::Float32, {kCols}).slice(0, 0, kRows).unsqueeze(1);  // [513, 1]
  const Tensor h = a.to(DType::Float16);
  auto run = [&] {
    std::vector<std::vector<std::uint8_t>> r;
    for (const Tensor& t : {add(a, b),
                            add(a, b, 2.5),
                            sub(a, col, 3),
                            mul(a.t(), col.t()),
                            div(a, b),
                            div(a, b, "trunc"),
                            div(a, b, "floor"),
                            maximum(a, col),
                            minimum(a, col),
                            pow(a, 2),
                            pow(a, b),
                            clamp(a, std::optional<Scalar>(-0.5), std::optional<Scalar>(0.5)),
                            where(gt(a, b), a, col),
                            eq(a, col),
                            ne(a, col),
                            lt(a, col),
                            le(a, col),
                            gt(a, col),
                            ge(a, col),
                            a.to(DType::BFloat16),
                            add(h, h),
                            div(a.to(DType::Int32), 3, "floor"),
                            full({kRows, kCols}, 0.1),
                            arange(0.0, 3e5, 0.7)}) {
      r.push_back(bytes_of(t));
    }
    return r;
  };
  std::vector<std::vector<std::uint8_t>> ref;
  for (int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const auto r = run();
    if (ref.empty()) {
      ref = r;
      continue;
    }
    for (std::size_t k = 0; k < r.size(); ++k)
      EXPECT_TRUE(r[k] == ref[k]) << "op #" << k << " with " << threads << " threads";
  }
  // And against the oracle once: the broadcast add.
  const std::vector<float> sum = add(a, b).to_vector<float>();
  for (std::int64_t i = 0; i < kRows * kCols; i += 97) {
    ASSERT_TRUE(same(sum[i], round_to(DType::Float32, av[i] + bv[i % kCols]))) << i;
  }
}

}  // namespace
}  // namespace mpsim
