// DType names/sizes/parsing, the 16-bit float conversions and PyTorch type promotion, each
// checked against an oracle written here (bit decoding with ldexp, nearest-even rounding by
// comparing distances in long double, torch.promote_types written out literally).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/mpsim.h"
#include "kernels_simd/transpose.h"
#include "tests/simd_targets.h"

namespace mpsim {
namespace {

using ::testing::HasSubstr;

// ---- Independent oracles for the 16-bit formats ----

struct Format16 {
  int mant_bits;  // stored mantissa bits: 10 (float16) or 7 (bfloat16)
  int exp_bits;   // 5 or 8
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
};
constexpr Format16 kF16{10, 5};
constexpr Format16 kBF16{7, 8};

// Decodes a 16-bit pattern to double from its fields; NaN is returned with the pattern's sign.
double decode16(std::uint16_t bits, Format16 f) {
  const bool neg = (bits >> 15) & 1;
  const int e = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int m = bits & ((1 << f.mant_bits) - 1);
  double v;
  if (e == (1 << f.exp_bits) - 1) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1 << f.mant_bits)), e - f.bias() - f.mant_bits);
  }
  return neg ? -v : v;
}

// Every finite non-negative value of a format, ascending, with its bit pattern.
struct Grid {
  std::vector<long double> values;
  std::vector<std::uint16_t> bits;
};
Grid finite_grid(Format16 f) {
  Grid g;
  const std::uint16_t inf_bits = static_cast<std::uint16_t>(((1 << f.exp_bits) - 1) << f.mant_bits);
  for (std::uint32_t b = 0; b < inf_bits; ++b) {
    g.values.push_back(decode16(static_cast<std::uint16_t>(b), f));
    g.bits.push_back(static_cast<std::uint16_t>(b));
  }
  return g;
}

// Nearest-even rounding of x to the format by comparing distances to the two neighbours on the
// grid (long double). Beyond the largest finite value, the next "virtual" grid point is
// max + ulp(max) = 2^(emax+1); reaching it (or tying to it: it has an even mantissa) gives inf.
std::uint16_t round16_oracle(long double x, Format16 f, const Grid& g) {
  if (std::isnan(x)) return 0;  // callers check NaN separately
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const std::uint16_t inf_bits = static_cast<std::uint16_t>(((1 << f.exp_bits) - 1) << f.mant_bits);
  const long double a = std::fabs(x);
  const long double max = g.values.back();
  const long double beyond = std::ldexp(1.0L, f.bias() + 1);
  if (a >= beyond) return sign | inf_bits;
  if (a > max) {
    const long double dlo = a - max, dhi = beyond - a;
    return sign | (dlo < dhi ? g.bits.back() : inf_bits);  // a tie goes to the even "beyond"
  }
  // First grid value >= a.
  const auto it = std::lower_bound(g.values.begin(), g.values.end(), a);
  const std::size_t hi = static_cast<std::size_t>(it - g.values.begin());
  if (g.values[hi] == a || hi == 0) return sign | g.bits[hi];
  const std::size_t lo = hi - 1;
  const long double dlo = a - g.values[lo], dhi = g.values[hi] - a;
  if (dlo < dhi) return sign | g.bits[lo];
  if (dhi < dlo) return sign | g.bits[hi];
  return sign | ((g.bits[lo] & 1) == 0 ? g.bits[lo] : g.bits[hi]);
}

const Grid& f16_grid() {
  static const Grid g = finite_grid(kF16);
  return g;
}
const Grid& bf16_grid() {
  static const Grid g = finite_grid(kBF16);
  return g;
}

float f32(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// ---- DType basics ----

TEST(DTypeTest, NamesAndSizes) {
  struct Row {
    DType d;
    const char* name;
    std::size_t size;
  };
  const Row rows[] = {{DType::Bool, "bool", 1},       {DType::UInt8, "uint8", 1},
                      {DType::Int8, "int8", 1},       {DType::Int16, "int16", 2},
                      {DType::Int32, "int32", 4},     {DType::Int64, "int64", 8},
                      {DType::Float16, "float16", 2}, {DType::BFloat16, "bfloat16", 2},
                      {DType::Float32, "float32", 4}, {DType::Float64, "float64", 8}};
  for (const Row& r : rows) {
    EXPECT_EQ(dtype_name(r.d), r.name);
    EXPECT_EQ(dtype_size(r.d), r.size);
    EXPECT_EQ(parse_dtype(r.name), r.d);
    EXPECT_EQ(parse_dtype(std::string("torch.") + r.name), r.d);
    std::ostringstream os;
    os << r.d;
    EXPECT_EQ(os.str(), r.name);
  }
  EXPECT_EQ(sizeof(Half), 2u);
  EXPECT_EQ(sizeof(BFloat16), 2u);
}

TEST(DTypeTest, ParseAliases) {
  EXPECT_EQ(parse_dtype("float"), DType::Float32);
  EXPECT_EQ(parse_dtype("double"), DType::Float64);
  EXPECT_EQ(parse_dtype("half"), DType::Float16);
  EXPECT_EQ(parse_dtype("f16"), DType::Float16);
  EXPECT_EQ(parse_dtype("bf16"), DType::BFloat16);
  EXPECT_EQ(parse_dtype("long"), DType::Int64);
  EXPECT_EQ(parse_dtype("char"), DType::Int8);
  EXPECT_EQ(parse_dtype("short"), DType::Int16);
  EXPECT_EQ(parse_dtype("int"), DType::Int32);
  EXPECT_EQ(parse_dtype("torch.half"), DType::Float16);
}

// The message quotes the name as given (parse_dtype("torch.") quotes 'torch.').
TEST(DTypeTest, ParseErrors) {
  for (const char* bad : {"", "float8", "Float32", "int128", "torch.", "complex256", " float32"}) {
    try {
      parse_dtype(bad);
      ADD_FAILURE() << "parse_dtype accepted '" << bad << "'";
    } catch (const DTypeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("[dtype]"));
      EXPECT_THAT(e.what(), HasSubstr(std::string("'") + bad + "'"));
    }
  }
}

TEST(DTypeTest, Categories) {
  EXPECT_TRUE(is_floating(DType::BFloat16));
  EXPECT_FALSE(is_floating(DType::Int64));
  EXPECT_TRUE(is_integral(DType::Bool, true));
  EXPECT_FALSE(is_integral(DType::Bool, false));
  EXPECT_TRUE(is_integral(DType::UInt8, false));
  EXPECT_FALSE(is_integral(DType::Float16, true));
}

// ---- 16-bit -> float32: every bit pattern widens exactly ----

void check_widen_all(Format16 f, float (*widen)(std::uint16_t)) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double want = decode16(bits, f);
    const float got = widen(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << b;
    }
  }
}

TEST(Float16Test, AllPatternsWidenExactly) {
  check_widen_all(kF16, [](std::uint16_t b) { return static_cast<float>(Half::from_bits(b)); });
}

TEST(BFloat16Test, AllPatternsWidenExactly) {
  check_widen_all(kBF16,
                  [](std::uint16_t b) { return static_cast<float>(BFloat16::from_bits(b)); });
}

TEST(Float16Test, KnownPatterns) {
  EXPECT_EQ(Half(1.0f).bits, 0x3C00);
  EXPECT_EQ(Half(-2.0f).bits, 0xC000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(Half(0x1p-24f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(0x1p-14f).bits, 0x0400);  // smallest normal
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(BFloat16(3.0f).bits, 0x4040);
}

// ---- float32 -> 16 bits: round to nearest even ----

void check_narrow(float x, Format16 f, const Grid& g, std::uint16_t got) {
  if (std::isnan(x)) {
    const double back = decode16(got, f);
    ASSERT_TRUE(std::isnan(back)) << "x=" << x << " got 0x" << std::hex << got;
    ASSERT_EQ(std::signbit(back), std::signbit(x)) << std::hex << got;
    return;
  }
  const std::uint16_t want = round16_oracle(static_cast<long double>(x), f, g);
  ASSERT_EQ(got, want) << "x=" << std::hexfloat << x << " (bits 0x" << std::hex
                       << std::bit_cast<std::uint32_t>(x) << ")";
}

// Every midpoint between consecutive finite values (including the overflow midpoint), its
// neighbouring floats, and both signs.
template <class T>
void check_halfway_cases(Format16 f, const Grid& g) {
  std::vector<long double> points = g.values;
  points.push_back(std::ldexp(1.0L, f.bias() + 1));
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const long double mid = (points[i] + points[i + 1]) / 2;
    const float m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<long double>(m), mid) << "midpoint not a float";  // 12 bits at most
    for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      check_narrow(x, f, g, T(x).bits);
      check_narrow(-x, f, g, T(-x).bits);
    }
  }
}

TEST(Float16Test, EveryHalfwayCaseRoundsToEven) { check_halfway_cases<Half>(kF16, f16_grid()); }
TEST(BFloat16Test, EveryHalfwayCaseRoundsToEven) {
  check_halfway_cases<BFloat16>(kBF16, bf16_grid());
}

// A strided sweep over all 2^32 float patterns (both signs, every exponent, NaN payloads).
template <class T>
void check_float_sweep(Format16 f, const Grid& g) {
  for (std::uint64_t b = 0; b < (1ull << 32); b += 509) {
    const float x = f32(static_cast<std::uint32_t>(b));
    check_narrow(x, f, g, T(x).bits);
  }
}

TEST(Float16Test, StridedSweepOfAllFloats) { check_float_sweep<Half>(kF16, f16_grid()); }
TEST(BFloat16Test, StridedSweepOfAllFloats) { check_float_sweep<BFloat16>(kBF16, bf16_grid()); }

TEST(Float16Test, SpecialValues) {
  const Grid& g = f16_grid();
  const float specials[] = {0.0f,
                            -0.0f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            -NAN,
                            65504.0f,
                            65519.996f,
                            65520.0f,
                            -65520.0f,
                            65536.0f,
                            1e10f,
                            0x1p-24f,
                            0x1p-25f,
                            0x1.000002p-25f,
                            0x1.8p-24f,
                            0x1p-26f,
                            0x1p-14f,
                            0x1.ff8p-15f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            f32(0x7f800001u),
                            f32(0xffc00001u)};
  for (float x : specials) check_narrow(x, kF16, g, Half(x).bits);
  EXPECT_EQ(Half(65520.0f).bits, 0x7C00);  // the overflow threshold ties to inf
  EXPECT_EQ(Half(65519.996f).bits, 0x7BFF);
  EXPECT_EQ(Half(0x1p-25f).bits, 0x0000);    // tie between 0 and 2^-24 goes to 0 (even)
  EXPECT_EQ(Half(-0x1p-25f).bits, 0x8000);   // ... keeping the sign
  EXPECT_EQ(Half(0x1.8p-24f).bits, 0x0002);  // 1.5 units ties to 2 units
  EXPECT_EQ(Half(0x1.000002p-25f).bits, 0x0001);
}

// Casting float32 rows to float16 runs vectorized (f32_to_f16_row, kernels_simd/transpose.cc;
// F16C's conversion on x86 targets that have it, integer steps elsewhere): every halfway case with
// its neighbours and a strided sweep of all float patterns, both signs, through Tensor::to on every
// SIMD target, against the oracle; a NaN keeps its sign and the top bits of its payload, quieted
// (0x7e00), as the scalar conversion does.
class Float16OnTarget : public test::OnEveryTarget {};

TEST_P(Float16OnTarget, VectorCastMatchesTheOracle) {
  const Grid& g = f16_grid();
  std::vector<float> xs;
  std::vector<long double> points = g.values;
  points.push_back(std::ldexp(1.0L, kF16.bias() + 1));
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const float m = static_cast<float>((points[i] + points[i + 1]) / 2);
    for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (std::uint64_t b = 0; b < (1ull << 32); b += 4099) xs.push_back(f32(static_cast<std::uint32_t>(b)));
  const Tensor x = from_vector(xs, {static_cast<std::int64_t>(xs.size())});
  const Tensor h = x.to(DType::Float16);
  const Half* got = h.data_ptr<Half>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) {
      const std::uint32_t b = std::bit_cast<std::uint32_t>(xs[i]);
      const auto want =
          static_cast<std::uint16_t>(((b >> 16) & 0x8000u) | 0x7e00u | ((b >> 13) & 0x3ffu));
      ASSERT_EQ(got[i].bits, want) << "NaN 0x" << std::hex << b;
    } else {
      check_narrow(xs[i], kF16, g, got[i].bits);
    }
    if (HasFatalFailure()) {
      ADD_FAILURE() << "at " << i;
      break;
    }
  }
}

TEST(BFloat16Test, SpecialValues) {
  const Grid& g = bf16_grid();
  const float max = std::numeric_limits<float>::max();
  const float specials[] = {0.0f,
                            -0.0f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            -NAN,
                            max,
                            -max,
                            std::numeric_limits<float>::denorm_min(),
                            f32(0x00008000u),
                            f32(0x00018000u),
                            f32(0x7f7f8000u),
                            f32(0x7f800001u),
                            f32(0xff800001u),
                            1.00390625f,
                            1.01171875f};
  for (float x : specials) check_narrow(x, kBF16, g, BFloat16(x).bits);
  EXPECT_EQ(BFloat16(1.00390625f).bits, 0x3F80);  // 1 + 2^-8 ties to 1
  EXPECT_EQ(BFloat16(1.01171875f).bits, 0x3F82);  // 1 + 3*2^-8 ties to 1 + 2^-6
  EXPECT_EQ(BFloat16(max).bits, 0x7F80);          // FLT_MAX is past bf16's overflow midpoint
  // A signalling NaN pattern must stay NaN (its top 16 bits alone would read as inf).
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(f32(0x7f800001u)))));
}

// Casting bfloat16 the same way (f32_to_bf16_row): every halfway case with its neighbours and a
// strided sweep of all float patterns, through Tensor::to on every SIMD target; a NaN keeps its
// sign and top payload bits, quieted (bit 6 set), as the scalar conversion does.
class BFloat16OnTarget : public test::OnEveryTarget {};

TEST_P(BFloat16OnTarget, VectorCastMatchesTheOracle) {
  const Grid& g = bf16_grid();
  std::vector<float> xs;
  std::vector<long double> points = g.values;
  points.push_back(std::ldexp(1.0L, kBF16.bias() + 1));
  for (std::size_t i = 0; i + 1 < points.size(); i += 7) {
    const float m = static_cast<float>((points[i] + points[i + 1]) / 2);
    for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (std::uint64_t b = 0; b < (1ull << 32); b += 4099) {
    xs.push_back(f32(static_cast<std::uint32_t>(b)));
  }
  const Tensor x = from_vector(xs, {static_cast<std::int64_t>(xs.size())});
  const Tensor h = x.to(DType::BFloat16);
  const BFloat16* got = h.data_ptr<BFloat16>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) {
      const std::uint32_t b = std::bit_cast<std::uint32_t>(xs[i]);
      ASSERT_EQ(got[i].bits, static_cast<std::uint16_t>((b >> 16) | 0x40u))
          << "NaN 0x" << std::hex << b;
    } else {
      check_narrow(xs[i], kBF16, g, got[i].bits);
    }
    if (HasFatalFailure()) {
      ADD_FAILURE() << "at " << i;
      break;
    }
  }
}

MPSIM_ON_EVERY_TARGET(BFloat16OnTarget);

// Widening float16 and bfloat16 tensors runs vectorized too (f16_to_f32_row, bf16_to_f32_row):
// all 65536 patterns through Tensor::to on every SIMD target, each the value its fields
// decode to, and each NaN the float with the same sign and the payload shifted up, unquieted
// (as the scalar conversion: a signalling NaN stays signalling).
TEST_P(Float16OnTarget, VectorWidenMatchesTheOracle) {
  for (const Format16 f : {kF16, kBF16}) {
    std::vector<std::uint16_t> patterns(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<std::uint16_t>(b);
    const DType dt = f.exp_bits == 5 ? DType::Float16 : DType::BFloat16;
    Tensor h = empty({65536}, dt);
    std::memcpy(h.data_ptr(), patterns.data(), patterns.size() * sizeof(std::uint16_t));
    SCOPED_TRACE(f.exp_bits == 5 ? "float16" : "bfloat16");
    const std::vector<float> got = h.to(DType::Float32).to_vector<float>();
    for (std::uint32_t b = 0; b < 65536; ++b) {
      const double want = decode16(static_cast<std::uint16_t>(b), f);
      if (std::isnan(want)) {
        const std::uint32_t m = b & ((1u << f.mant_bits) - 1);
        const std::uint32_t bits = ((b & 0x8000u) << 16) | 0x7f800000u | (m << (23 - f.mant_bits));
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[b]), bits) << std::hex << b;
      } else {
        ASSERT_EQ(static_cast<double>(got[b]), want) << std::hex << b;
        ASSERT_EQ(std::signbit(got[b]), std::signbit(want)) << std::hex << b;
      }
    }
  }
}

MPSIM_ON_EVERY_TARGET(Float16OnTarget);

// A copy between two tensors of one dense layout other than the contiguous one (channels-last,
// a transposed contiguous tensor) runs in memory order (Note [flat copies] in
// kernels_simd/copy.cc): each element lands at its own index, in every dtype pair the vector
// rows serve. Layouts that differ, or that leave gaps, take the element-wise route: checked
// the same way.
// float32 -> int32 and int64 run dense rows in vectors (transpose.cc). Every value must be
// the conversion's definition (truncation in range; NaN, +-inf and values out of range give the
// minimum, x86's value), written here: the edges of both ranges, NaN payloads, subnormals, -0,
// spread bit patterns, dense with a tail, on every SIMD target.
class CastOnTarget : public test::OnEveryTarget {};

TEST_P(CastOnTarget, Float32ToIntegersInVectors) {
  std::vector<float> v = {
      0.0f,          -0.0f,          0.5f,           -0.5f,          1.99f,         -1.99f,
      2147483520.0f, 2147483648.0f,  -2147483648.0f, -2147483904.0f, 9.2233715e18f, 9.223372e18f,
      -9.223372e18f, -9.2233730e18f, INFINITY,       -INFINITY,      NAN,           -NAN,
      1e-40f,        -1e-40f,        16777217.0f,    3e38f,          -3e38f};
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 999983) {
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  }
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  auto want32 = [](float x) {
    const double d = x;
    return d > -2147483649.0 && d < 2147483648.0 ? static_cast<std::int32_t>(d)
                                                 : std::numeric_limits<std::int32_t>::min();
  };
  auto want64 = [](float x) {
    const double d = x;
    return d > -0x1p63 && d < 0x1p63 ? static_cast<std::int64_t>(d)
                                     : std::numeric_limits<std::int64_t>::min();
  };
  const Tensor x = from_vector(v, {n});
  const std::vector<std::int32_t> g32 = x.to(DType::Int32).to_vector<std::int32_t>();
  const std::vector<std::int64_t> g64 = x.to(DType::Int64).to_vector<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) {
    const float xi = v[static_cast<std::size_t>(i)];
    ASSERT_EQ(g32[static_cast<std::size_t>(i)], want32(xi)) << xi;
    ASSERT_EQ(g64[static_cast<std::size_t>(i)], want64(xi)) << xi;
  }
}

MPSIM_ON_EVERY_TARGET(CastOnTarget);

TEST(CastTest, CopiesBetweenLikeLaidOutTensorsKeepEveryIndex) {
  const Shape shape({2, 5, 3, 7});
  std::vector<float> values(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f - 20.0f;
  const Tensor base = from_vector(values, shape);  // exact in every 16-bit type
  const Strides cl = channels_last_strides(shape);
  const Strides transposed({21, 42, 7, 1});  // dims 0 and 1 swapped in memory
  const Strides gappy({210, 42, 14, 2});     // every other element
  for (DType from : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (DType to : {DType::Float32, DType::Float16, DType::BFloat16}) {
      for (const auto& [in_strides, out_strides] :
           {std::pair{cl, cl}, std::pair{transposed, transposed}, std::pair{cl, transposed},
            std::pair{gappy, gappy}}) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
        Tensor in = empty_strided(shape, in_strides, from);
        in.copy_(base);
        Tensor out = empty_strided(shape, out_strides, to);
        out.copy_(in);
        EXPECT_EQ(out.contiguous().to(DType::Float32).to_vector<float>(), values);
      }
    }
  }
}

// ---- double -> 16 bits rounds once ----

TEST(Float16Test, DoubleRoundsOnceNotTwice) {
  // 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10; a bit far below float precision puts d above
  // it. double -> float lands exactly on the midpoint, which then ties to 1 (double rounding);
  // the correct rounding of d is 1 + 2^-10.
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  ASSERT_EQ(static_cast<double>(static_cast<float>(d)), 1.0 + 0x1p-11);
  EXPECT_EQ(Half(static_cast<float>(d)).bits, 0x3C00);  // the double-rounded value
  EXPECT_EQ(Half(d).bits, 0x3C01);
  EXPECT_EQ(Half(-d).bits, 0xBC01);
  const double below = 1.0 + 0x1p-11 - 0x1p-40;  // just below the midpoint: 1
  EXPECT_EQ(Half(below).bits, 0x3C00);
  // The same in the subnormal range and at the overflow threshold.
  EXPECT_EQ(Half(0x1p-25 + 0x1p-60).bits, 0x0001);
  EXPECT_EQ(Half(65520.0 - 1e-9).bits, 0x7BFF);
  EXPECT_EQ(Half(65520.0).bits, 0x7C00);
  EXPECT_EQ(Half(1e300).bits, 0x7C00);
  EXPECT_EQ(Half(-1e-300).bits, 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::numeric_limits<double>::quiet_NaN()))));
}

TEST(BFloat16Test, DoubleRoundsOnceNotTwice) {
  const double d = 1.0 + 0x1p-8 + 0x1p-40;
  ASSERT_EQ(static_cast<double>(static_cast<float>(d)), 1.0 + 0x1p-8);
  EXPECT_EQ(BFloat16(static_cast<float>(d)).bits, 0x3F80);
  EXPECT_EQ(BFloat16(d).bits, 0x3F81);
  EXPECT_EQ(BFloat16(1e300).bits, 0x7F80);
  EXPECT_EQ(BFloat16(-1e300).bits, 0xFF80);
}

// xorshift64: reproducible random bits for the rounding tests.
struct XorShift {
  std::uint64_t s;
  std::uint64_t operator()() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// A double near the 16-bit grid g, from random bits r: a grid value or midpoint (bit 40) times
// 1 + a relative offset below 2^-34 (scaled down by 2^-scale), either sign (bit 41).
double near_grid(const Grid& g, std::uint64_t r, int scale = 0) {
  const std::size_t k = (r >> 1) % (g.values.size() - 1);
  const long double base = (r >> 40) & 1 ? g.values[k] : (g.values[k] + g.values[k + 1]) / 2;
  const double offset = std::ldexp(static_cast<double>((r >> 20) & 0xfff) - 2048.0, -45 - scale);
  return static_cast<double>(base) * (1.0 + offset) * ((r >> 41) & 1 ? -1.0 : 1.0);
}

TEST(Float16Test, RandomDoublesRoundOnce) {
  // Doubles near the 16-bit grid: a grid value or midpoint plus a tiny offset.
  const Grid& g = f16_grid();
  const Grid& gb = bf16_grid();
  XorShift next{0x9E3779B97F4A7C15ull};
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t r = next();
    const Grid& grid = (r & 1) ? g : gb;
    const Format16 f = (r & 1) ? kF16 : kBF16;
    const double d = near_grid(grid, r);
    const std::uint16_t got = (r & 1) ? Half(d).bits : BFloat16(d).bits;
    ASSERT_EQ(got, round16_oracle(static_cast<long double>(d), f, grid))
        << std::hexfloat << d << ((r & 1) ? " f16" : " bf16");
  }
}

// The vector rows round as Half(double) and BFloat16(double) do, bit for bit, on every SIMD
// target: doubles near the 16-bit grids (values and midpoints, tiny offsets), below float's
// normal range, beyond its largest value, and the special values, in a row no vector width
// divides.
TEST(Float16Test, DoubleRowsRoundAsTheScalarConversions) {
  std::vector<double> xs = {0.0,
                            -0.0,
                            1e-300,
                            -1e-300,
                            0x1p-126,
                            0x1p-127,
                            0x1.8p-140,
                            0x1p-25,
                            0x1.000001p-25,
                            65519.99,
                            65520.0,
                            1e300,
                            -1e300,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            std::bit_cast<double>(std::uint64_t{0x7ff0000000000001}),
                            std::bit_cast<double>(std::uint64_t{0xfff8000000000123})};
  XorShift next{0x2545F4914F6CDD1Dull};
  for (const Grid* g : {&f16_grid(), &bf16_grid()}) {
    for (int i = 0; i < 40000; ++i) {
      const std::uint64_t r = next();
      xs.push_back(near_grid(*g, r, static_cast<int>(r & 15)));
    }
  }
  const std::size_t n = xs.size() - xs.size() % 64 + 7;
  xs.resize(n, 1.5);
  std::vector<std::uint16_t> h(n), b(n);
  test::for_each_target([&](const std::string& target) {
    simd::f64_to_f16_row(xs.data(), h.data(), n);
    simd::f64_to_bf16_row(xs.data(), b.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(h[i], Half(xs[i]).bits) << std::hexfloat << xs[i] << " float16 on " << target;
      ASSERT_EQ(b[i], BFloat16(xs[i]).bits) << std::hexfloat << xs[i] << " bfloat16 on " << target;
    }
  });
}

// ---- Type promotion ----

TEST(PromotionTest, PromoteTypesFullTable) {
  constexpr DType b = DType::Bool, u8 = DType::UInt8, i8 = DType::Int8, i16 = DType::Int16,
                  i32 = DType::Int32, i64 = DType::Int64, f16 = DType::Float16,
                  bf = DType::BFloat16, f32t = DType::Float32, f64 = DType::Float64;
  const DType order[10] = {b, u8, i8, i16, i32, i64, f16, bf, f32t, f64};
  // torch.promote_types(row, column), written out.
  const DType table[10][10] = {
      /* b    */ {b, u8, i8, i16, i32, i64, f16, bf, f32t, f64},
      /* u8   */ {u8, u8, i16, i16, i32, i64, f16, bf, f32t, f64},
      /* i8   */ {i8, i16, i8, i16, i32, i64, f16, bf, f32t, f64},
      /* i16  */ {i16, i16, i16, i16, i32, i64, f16, bf, f32t, f64},
      /* i32  */ {i32, i32, i32, i32, i32, i64, f16, bf, f32t, f64},
      /* i64  */ {i64, i64, i64, i64, i64, i64, f16, bf, f32t, f64},
      /* f16  */ {f16, f16, f16, f16, f16, f16, f16, f32t, f32t, f64},
      /* bf   */ {bf, bf, bf, bf, bf, bf, f32t, bf, f32t, f64},
      /* f32t */ {f32t, f32t, f32t, f32t, f32t, f32t, f32t, f32t, f32t, f64},
      /* f64  */ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
  };
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      EXPECT_EQ(promote_types(order[i], order[j]), table[i][j]) << order[i] << " + " << order[j];
    }
  }
}

Tensor t1(DType d) { return zeros({2}, d); }  // a dim > 0 tensor
Tensor t0(DType d) { return zeros({}, d); }   // a 0-dim tensor
Tensor t2(DType d) { return zeros({2, 2}, d); }

TEST(PromotionTest, ResultTypeWithZeroDimTensorsAndScalars) {
  using D = DType;
  EXPECT_EQ(result_type({t1(D::Int32), Scalar(2.5)}), D::Float32);
  EXPECT_EQ(result_type({t1(D::Float16), t0(D::Float32)}), D::Float16);
  EXPECT_EQ(result_type({t1(D::UInt8), t0(D::Int64)}), D::UInt8);
  EXPECT_EQ(result_type({t1(D::Int32), t0(D::Float64)}), D::Float64);
  EXPECT_EQ(result_type({t1(D::Bool), Scalar(2)}), D::Int64);
  EXPECT_EQ(result_type({t1(D::Bool), Scalar(true)}), D::Bool);
  EXPECT_EQ(result_type({t1(D::Int32), t2(D::Int64)}), D::Int64);
  EXPECT_EQ(result_type({t2(D::UInt8), t1(D::Int32)}), D::Int32);
  EXPECT_EQ(result_type({t1(D::Float16), Scalar(2.5)}), D::Float16);
  EXPECT_EQ(result_type({t1(D::BFloat16), Scalar(2)}), D::BFloat16);
  EXPECT_EQ(result_type({t1(D::UInt8), Scalar(-1)}), D::UInt8);
  EXPECT_EQ(result_type({t1(D::UInt8), Scalar(true)}), D::UInt8);
  EXPECT_EQ(result_type({t1(D::Int64), Scalar(1.5)}), D::Float32);
  EXPECT_EQ(result_type({t0(D::Int64), Scalar(2.5)}), D::Float32);
  EXPECT_EQ(result_type({t0(D::Float64), Scalar(2.5)}), D::Float64);
  EXPECT_EQ(result_type({t0(D::Int32), t0(D::Int64)}), D::Int64);
  EXPECT_EQ(result_type({t0(D::Float16), t0(D::BFloat16)}), D::Float32);
  EXPECT_EQ(result_type({t1(D::Int32), t0(D::Float16)}), D::Float16);
  EXPECT_EQ(result_type({t1(D::BFloat16), t0(D::Float16)}), D::BFloat16);
  EXPECT_EQ(result_type({t1(D::Float32), t0(D::Float64)}), D::Float32);
  EXPECT_EQ(result_type({t1(D::Bool), t0(D::Int32)}), D::Int32);
  EXPECT_EQ(result_type({t1(D::Bool), t0(D::UInt8)}), D::UInt8);
  EXPECT_EQ(result_type({t0(D::Bool), Scalar(3)}), D::Int64);
  EXPECT_EQ(result_type({t0(D::UInt8), Scalar(3.0)}), D::Float32);
  EXPECT_EQ(result_type({Scalar(2), Scalar(2.5)}), D::Float32);
  EXPECT_EQ(result_type({Scalar(2), Scalar(3)}), D::Int64);
  EXPECT_EQ(result_type({Scalar(true), Scalar(false)}), D::Bool);
  EXPECT_EQ(result_type({t1(D::Int32), t0(D::Bool), Scalar(2.5)}), D::Float32);
  EXPECT_EQ(result_type({t1(D::Float64), Scalar(2.5)}), D::Float64);
}

TEST(PromotionTest, OpsUsePromotedDType) {
  const Tensor i = from_vector<std::int32_t>({1, 2, 3}, {3});
  const Tensor r = add(i, 2.5);
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{3.5f, 4.5f, 5.5f}));
  const Tensor h = from_vector<Half>({Half(1.0f), Half(2.0f)}, {2});
  const Tensor hf = add(h, scalar_tensor(0.5, DType::Float32));
  EXPECT_EQ(hf.dtype(), DType::Float16);
  EXPECT_EQ(hf.to_vector<float>(), (std::vector<float>{1.5f, 2.5f}));
  const Tensor u = from_vector<std::uint8_t>({250, 5}, {2});
  const Tensor uz = add(u, scalar_tensor(10, DType::Int64));
  EXPECT_EQ(uz.dtype(), DType::UInt8);
  EXPECT_EQ(uz.to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{4, 15}));  // wraps
  EXPECT_EQ(mul(i, scalar_tensor(0.5, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ(add(zeros({2}, DType::Bool), 2).dtype(), DType::Int64);
}

// ---- float -> integer and bool casts against PyTorch (Note [dtype conversion]) ----

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct TorchCast {
  DType from;
  double value;  // exactly representable in `from`
  int uint8;
  int int8;
  int int16;
  std::int32_t int32;
  std::int64_t int64;
  bool boolean;
};

// Recorded from PyTorch 1.13 on x86-64 (Debian python3-torch), the oracle for to(dtype):
//   /usr/bin/python3 tests/torch_cast_table.py
// prints these rows (up to comment alignment) and checks that PyTorch's vectorized and
// strided loops agree.
constexpr TorchCast kTorchCasts[] = {
    {DType::Float32, kNaN, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // nan
    {DType::Float32, kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // inf
    {DType::Float32, -kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -inf
    {DType::Float32, -0.0, 0, 0, 0, 0, 0LL, false},  // -0.0
    {DType::Float32, 0x1.ccccccp-1, 0, 0, 0, 0, 0LL, true},  // 0.8999999761581421
    {DType::Float32, -0x1.ccccccp-1, 0, 0, 0, 0, 0LL, true},  // -0.8999999761581421
    {DType::Float32, 0x1.4p+1, 2, 2, 2, 2, 2LL, true},  // 2.5
    {DType::Float32, -0x1.4p+1, 254, -2, -2, -2, -2LL, true},  // -2.5
    {DType::Float32, -0x1p+0, 255, -1, -1, -1, -1LL, true},  // -1.0
    {DType::Float32, -0x1.8p+0, 255, -1, -1, -1, -1LL, true},  // -1.5
    {DType::Float32, 0x1.ffp+7, 255, -1, 255, 255, 255LL, true},  // 255.5
    {DType::Float32, 0x1p+8, 0, 0, 256, 256, 256LL, true},  // 256.0
    {DType::Float32, 0x1.2cp+8, 44, 44, 300, 300, 300LL, true},  // 300.0
    {DType::Float32, -0x1.02p+7, 127, 127, -129, -129, -129LL, true},  // -129.0
    {DType::Float32, 0x1.9p+7, 200, -56, 200, 200, 200LL, true},  // 200.0
    {DType::Float32, 0x1.388p+15, 64, 64, -25536, 40000, 40000LL, true},  // 40000.0
    {DType::Float32, -0x1.388p+15, 192, -64, 25536, -40000, -40000LL, true},  // -40000.0
    {DType::Float32, 0x1.11708p+16, 112, 112, 4464, 70000, 70000LL, true},  // 70000.5
    {DType::Float32, 0x1.ffcp+15, 224, -32, -32, 65504, 65504LL, true},  // 65504.0
    {DType::Float32, 0x1p+31, 0, 0, 0, INT32_MIN, 2147483648LL, true},  // 2147483648.0
    {DType::Float32, -0x1p+31, 0, 0, 0, INT32_MIN, -2147483648LL, true},  // -2147483648.0
    {DType::Float32, 0x1p+32, 0, 0, 0, INT32_MIN, 4294967296LL, true},  // 4294967296.0
    {DType::Float32, 0x1.2a05f2p+33, 0, 0, 0, INT32_MIN, 10000000000LL, true},  // 10000000000.0
    {DType::Float32, -0x1.2a05f2p+33, 0, 0, 0, INT32_MIN, -10000000000LL, true},  // -10000000000.0
    {DType::Float32, 0x1p+40, 0, 0, 0, INT32_MIN, 1099511627776LL, true},  // 1099511627776.0
    {DType::Float32, 0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 9.223372036854776e+18
    {DType::Float32, -0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -9.223372036854776e+18
    {DType::Float32, 0x1p+64, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 1.8446744073709552e+19
    {DType::Float32, 0x1.c363ccp+127, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 3.0000000054977558e+38
    {DType::Float64, kNaN, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // nan
    {DType::Float64, kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // inf
    {DType::Float64, -kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -inf
    {DType::Float64, -0.0, 0, 0, 0, 0, 0LL, false},  // -0.0
    {DType::Float64, 0x1.ccccccccccccdp-1, 0, 0, 0, 0, 0LL, true},  // 0.9
    {DType::Float64, -0x1.ccccccccccccdp-1, 0, 0, 0, 0, 0LL, true},  // -0.9
    {DType::Float64, 0x1.4p+1, 2, 2, 2, 2, 2LL, true},  // 2.5
    {DType::Float64, -0x1.4p+1, 254, -2, -2, -2, -2LL, true},  // -2.5
    {DType::Float64, -0x1p+0, 255, -1, -1, -1, -1LL, true},  // -1.0
    {DType::Float64, -0x1.8p+0, 255, -1, -1, -1, -1LL, true},  // -1.5
    {DType::Float64, 0x1.ffp+7, 255, -1, 255, 255, 255LL, true},  // 255.5
    {DType::Float64, 0x1p+8, 0, 0, 256, 256, 256LL, true},  // 256.0
    {DType::Float64, 0x1.2cp+8, 44, 44, 300, 300, 300LL, true},  // 300.0
    {DType::Float64, -0x1.02p+7, 127, 127, -129, -129, -129LL, true},  // -129.0
    {DType::Float64, 0x1.9p+7, 200, -56, 200, 200, 200LL, true},  // 200.0
    {DType::Float64, 0x1.388p+15, 64, 64, -25536, 40000, 40000LL, true},  // 40000.0
    {DType::Float64, -0x1.388p+15, 192, -64, 25536, -40000, -40000LL, true},  // -40000.0
    {DType::Float64, 0x1.11708p+16, 112, 112, 4464, 70000, 70000LL, true},  // 70000.5
    {DType::Float64, 0x1.ffcp+15, 224, -32, -32, 65504, 65504LL, true},  // 65504.0
    {DType::Float64, 0x1.fffffffcp+30, 255, -1, -1, 2147483647, 2147483647LL, true},  // 2147483647.0
    {DType::Float64, 0x1.ffffffff9999ap+30, 255, -1, -1, 2147483647, 2147483647LL, true},  // 2147483647.9
    {DType::Float64, -0x1p+31, 0, 0, 0, INT32_MIN, -2147483648LL, true},  // -2147483648.0
    {DType::Float64, -0x1.00000001p+31, 0, 0, 0, INT32_MIN, -2147483648LL, true},  // -2147483648.5
    {DType::Float64, -0x1.00000002p+31, 255, 0, 0, INT32_MIN, -2147483649LL, true},  // -2147483649.0
    {DType::Float64, 0x1p+31, 0, 0, 0, INT32_MIN, 2147483648LL, true},  // 2147483648.0
    {DType::Float64, 0x1p+32, 0, 0, 0, INT32_MIN, 4294967296LL, true},  // 4294967296.0
    {DType::Float64, 0x1.00000005p+32, 5, 0, 0, INT32_MIN, 4294967301LL, true},  // 4294967301.0
    {DType::Float64, 0x1.2a05f2p+33, 0, 0, 0, INT32_MIN, 10000000000LL, true},  // 10000000000.0
    {DType::Float64, -0x1.2a05f2p+33, 0, 0, 0, INT32_MIN, -10000000000LL, true},  // -10000000000.0
    {DType::Float64, 0x1.0000000007p+40, 7, 0, 0, INT32_MIN, 1099511627783LL, true},  // 1099511627783.0
    {DType::Float64, 0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 9.223372036854776e+18
    {DType::Float64, -0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -9.223372036854776e+18
    {DType::Float64, 0x1p+64, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 1.8446744073709552e+19
    {DType::Float64, 0x1.c363cbf21f28ap+127, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 3e+38
    {DType::Float64, 0x1.7e43c8800759cp+996, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 1e+300
    {DType::Float16, kNaN, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // nan
    {DType::Float16, kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // inf
    {DType::Float16, -kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -inf
    {DType::Float16, -0.0, 0, 0, 0, 0, 0LL, false},  // -0.0
    {DType::Float16, 0x1.cccp-1, 0, 0, 0, 0, 0LL, true},  // 0.89990234375
    {DType::Float16, -0x1.cccp-1, 0, 0, 0, 0, 0LL, true},  // -0.89990234375
    {DType::Float16, 0x1.4p+1, 2, 2, 2, 2, 2LL, true},  // 2.5
    {DType::Float16, -0x1.4p+1, 254, -2, -2, -2, -2LL, true},  // -2.5
    {DType::Float16, -0x1p+0, 255, -1, -1, -1, -1LL, true},  // -1.0
    {DType::Float16, -0x1.8p+0, 255, -1, -1, -1, -1LL, true},  // -1.5
    {DType::Float16, 0x1.ffp+7, 255, -1, 255, 255, 255LL, true},  // 255.5
    {DType::Float16, 0x1p+8, 0, 0, 256, 256, 256LL, true},  // 256.0
    {DType::Float16, 0x1.2cp+8, 44, 44, 300, 300, 300LL, true},  // 300.0
    {DType::Float16, -0x1.02p+7, 127, 127, -129, -129, -129LL, true},  // -129.0
    {DType::Float16, 0x1.9p+7, 200, -56, 200, 200, 200LL, true},  // 200.0
    {DType::Float16, 0x1.388p+15, 64, 64, -25536, 40000, 40000LL, true},  // 40000.0
    {DType::Float16, -0x1.388p+15, 192, -64, 25536, -40000, -40000LL, true},  // -40000.0
    {DType::Float16, 0x1.ffcp+15, 224, -32, -32, 65504, 65504LL, true},  // 65504.0
    {DType::BFloat16, kNaN, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // nan
    {DType::BFloat16, kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // inf
    {DType::BFloat16, -kInf, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -inf
    {DType::BFloat16, -0.0, 0, 0, 0, 0, 0LL, false},  // -0.0
    {DType::BFloat16, 0x1.ccp-1, 0, 0, 0, 0, 0LL, true},  // 0.8984375
    {DType::BFloat16, -0x1.ccp-1, 0, 0, 0, 0, 0LL, true},  // -0.8984375
    {DType::BFloat16, 0x1.4p+1, 2, 2, 2, 2, 2LL, true},  // 2.5
    {DType::BFloat16, -0x1.4p+1, 254, -2, -2, -2, -2LL, true},  // -2.5
    {DType::BFloat16, -0x1p+0, 255, -1, -1, -1, -1LL, true},  // -1.0
    {DType::BFloat16, -0x1.8p+0, 255, -1, -1, -1, -1LL, true},  // -1.5
    {DType::BFloat16, 0x1p+8, 0, 0, 256, 256, 256LL, true},  // 256.0
    {DType::BFloat16, 0x1.2cp+8, 44, 44, 300, 300, 300LL, true},  // 300.0
    {DType::BFloat16, -0x1.02p+7, 127, 127, -129, -129, -129LL, true},  // -129.0
    {DType::BFloat16, 0x1.9p+7, 200, -56, 200, 200, 200LL, true},  // 200.0
    {DType::BFloat16, 0x1.38p+15, 0, 0, -25600, 39936, 39936LL, true},  // 39936.0
    {DType::BFloat16, -0x1.38p+15, 0, 0, 25600, -39936, -39936LL, true},  // -39936.0
    {DType::BFloat16, 0x1.12p+16, 0, 0, 4608, 70144, 70144LL, true},  // 70144.0
    {DType::BFloat16, 0x1p+16, 0, 0, 0, 65536, 65536LL, true},  // 65536.0
    {DType::BFloat16, 0x1p+31, 0, 0, 0, INT32_MIN, 2147483648LL, true},  // 2147483648.0
    {DType::BFloat16, -0x1p+31, 0, 0, 0, INT32_MIN, -2147483648LL, true},  // -2147483648.0
    {DType::BFloat16, 0x1p+32, 0, 0, 0, INT32_MIN, 4294967296LL, true},  // 4294967296.0
    {DType::BFloat16, 0x1.2ap+33, 0, 0, 0, INT32_MIN, 9999220736LL, true},  // 9999220736.0
    {DType::BFloat16, -0x1.2ap+33, 0, 0, 0, INT32_MIN, -9999220736LL, true},  // -9999220736.0
    {DType::BFloat16, 0x1p+40, 0, 0, 0, INT32_MIN, 1099511627776LL, true},  // 1099511627776.0
    {DType::BFloat16, 0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 9.223372036854776e+18
    {DType::BFloat16, -0x1p+63, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // -9.223372036854776e+18
    {DType::BFloat16, 0x1p+64, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 1.8446744073709552e+19
    {DType::BFloat16, 0x1.c4p+127, 0, 0, 0, INT32_MIN, INT64_MIN, true},  // 3.00405527047391e+38
};

TEST(CastTest, FloatToIntegerAndBoolMatchPyTorchOnX86) {
  for (const DType from : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    std::vector<double> values;
    std::vector<const TorchCast*> rows;
    for (const TorchCast& row : kTorchCasts) {
      if (row.from != from) continue;
      values.push_back(row.value);
      rows.push_back(&row);
    }
    ASSERT_FALSE(rows.empty());
    const auto n = static_cast<std::int64_t>(values.size());
    const Tensor x = from_vector(values, {n}).to(from);
    // The source values are exact in `from`, so building them converts nothing.
    const std::vector<double> back = x.to_vector<double>();
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::bit_cast<std::uint64_t>(back[i]) ==
                      std::bit_cast<std::uint64_t>(values[i]) ||
                  (std::isnan(back[i]) && std::isnan(values[i])))
          << dtype_name(from) << " " << values[i];
    }
    // Contiguous, and a strided view of the same values (every other element of a [n, 2]).
    const Tensor strided = x.unsqueeze(1).expand({n, 2}).contiguous().select(1, 1);
    ASSERT_FALSE(strided.is_contiguous());
    for (const Tensor& t : {x, strided}) {
      const std::vector<std::uint8_t> u8 = t.to(DType::UInt8).to_vector<std::uint8_t>();
      const std::vector<std::int8_t> i8 = t.to(DType::Int8).to_vector<std::int8_t>();
      const std::vector<std::int16_t> i16 = t.to(DType::Int16).to_vector<std::int16_t>();
      const std::vector<std::int32_t> i32 = t.to(DType::Int32).to_vector<std::int32_t>();
      const std::vector<std::int64_t> i64 = t.to(DType::Int64).to_vector<std::int64_t>();
      const std::vector<bool> b = t.to(DType::Bool).to_vector<bool>();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const TorchCast& r = *rows[i];
        const std::string what = std::string(dtype_name(from)) + " " + std::to_string(r.value);
        EXPECT_EQ(u8[i], r.uint8) << what << " -> uint8";
        EXPECT_EQ(i8[i], r.int8) << what << " -> int8";
        EXPECT_EQ(i16[i], r.int16) << what << " -> int16";
        EXPECT_EQ(i32[i], r.int32) << what << " -> int32";
        EXPECT_EQ(i64[i], r.int64) << what << " -> int64";
        EXPECT_EQ(b[i], r.boolean) << what << " -> bool";
      }
    }
  }
}

// Scalar::to_int converts a floating scalar as to(int64) does, with no undefined behaviour.
TEST(CastTest, FloatingScalarToInt) {
  EXPECT_EQ(Scalar(-2.7).to_int(), -2);
  EXPECT_EQ(Scalar(2.9f).to_int(), 2);
  EXPECT_EQ(Scalar(kNaN).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(1e300).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(-kInf).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(std::int64_t{-5}).to_int(), -5);
}

}  // namespace
}  // namespace mpsim

namespace mpsim {
namespace {

// Note [checked scalar conversion], against a table written from PyTorch 1.13's results
// (torch.full / item assignment raise for exactly the rows marked true).
TEST(CheckedScalarConversion, OverflowsFollowsPyTorch) {
  struct Row {
    Scalar value;
    DType dtype;
    bool overflows;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Row rows[] = {
      {Scalar(std::int64_t{255}), DType::UInt8, false},
      {Scalar(std::int64_t{256}), DType::UInt8, true},
      {Scalar(std::int64_t{127}), DType::Int8, false},
      {Scalar(std::int64_t{128}), DType::Int8, true},
      {Scalar(std::int64_t{-128}), DType::Int8, false},
      {Scalar(std::int64_t{-129}), DType::Int8, true},
      {Scalar(127.5), DType::Int8, true},
      {Scalar(-128.9), DType::Int8, true},
      {Scalar(std::int64_t{32767}), DType::Int16, false},
      {Scalar(std::int64_t{32768}), DType::Int16, true},
      {Scalar(std::int64_t{-32769}), DType::Int16, true},
      {Scalar(std::int64_t{-255}), DType::UInt8, false},  // wraps to 1, as torch allows
      {Scalar(std::int64_t{-256}), DType::UInt8, true},
      {Scalar(-1.0), DType::UInt8, true},
      {Scalar(255.9), DType::UInt8, true},
      {Scalar(255.0), DType::UInt8, false},
      {Scalar(std::int64_t{2147483647}), DType::Int32, false},
      {Scalar(std::int64_t{2147483648}), DType::Int32, true},
      {Scalar(std::int64_t{-2147483648}), DType::Int32, false},
      {Scalar(std::int64_t{-2147483649}), DType::Int32, true},
      {Scalar(1e10), DType::Int32, true},
      {Scalar(2.5), DType::Int32, false},
      {Scalar(nan), DType::Int64, true},
      {Scalar(inf), DType::Int64, true},
      {Scalar(0x1p63), DType::Int64, true},  // torch stores INT64_MIN here; mpsim refuses
      {Scalar(0x1p62), DType::Int64, false},
      {Scalar(std::int64_t{65504}), DType::Float16, false},
      {Scalar(std::int64_t{70000}), DType::Float16, true},
      {Scalar(1e6), DType::Float16, true},
      {Scalar(inf), DType::Float16, false},
      {Scalar(nan), DType::Float16, false},
      {Scalar(3.3e38), DType::BFloat16, false},
      {Scalar(3.4e38), DType::BFloat16, true},
      {Scalar(1e39), DType::Float32, true},
      {Scalar(-inf), DType::Float32, false},
      {Scalar(1e300), DType::Float64, false},
      {Scalar(std::int64_t{2}), DType::Bool, false},
      {Scalar(nan), DType::Bool, false},
      {Scalar(true), DType::UInt8, false},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(overflows(r.value, r.dtype), r.overflows)
        << r.value.to_string() << " into " << dtype_name(r.dtype);
  }
  EXPECT_THROW(full({2}, Scalar(1e10), DType::Int32), InvalidArgument);
  try {
    check_fits("full", Scalar(std::int64_t{300}), DType::UInt8);
    FAIL() << "300 fits uint8";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "[full] value cannot be converted to type uint8 without overflow: 300");
  }
}

}  // namespace
}  // namespace mpsim

namespace mpsim {
namespace {

// torch 1.13's promotion of complex dtypes (torch.promote_types and torch.result_type).
TEST(ComplexDTypeTest, PromotionIsTorchs) {
  EXPECT_EQ(promote_types(DType::Complex64, DType::Float64), DType::Complex128);
  EXPECT_EQ(promote_types(DType::Complex32, DType::BFloat16), DType::Complex64);
  EXPECT_EQ(promote_types(DType::Complex32, DType::Float16), DType::Complex32);
  EXPECT_EQ(promote_types(DType::Int64, DType::Complex32), DType::Complex32);
  EXPECT_EQ(promote_types(DType::Bool, DType::Complex64), DType::Complex64);
  EXPECT_EQ(promote_types(DType::Complex64, DType::Complex128), DType::Complex128);
  const Tensor f32 = zeros({2}), f16 = zeros({2}, DType::Float16);
  const Tensor i32 = zeros({2}, DType::Int32), bf16 = zeros({2}, DType::BFloat16);
  const Tensor c128_0d = zeros({}, DType::Complex128), c64_0d = zeros({}, DType::Complex64);
  EXPECT_EQ(result_type({f32, c128_0d}), DType::Complex64);
  EXPECT_EQ(result_type({f16, c128_0d}), DType::Complex32);
  EXPECT_EQ(result_type({i32, c128_0d}), DType::Complex128);
  EXPECT_EQ(result_type({bf16, c64_0d}), DType::Complex64);
  EXPECT_EQ(result_type({zeros({2}, DType::Complex64), zeros({}, DType::Float64)}),
            DType::Complex64);
  EXPECT_EQ(real_dtype(DType::Complex32), DType::Float16);
  EXPECT_EQ(complex_dtype(DType::Float64), DType::Complex128);
  EXPECT_THROW(complex_dtype(DType::BFloat16), DTypeError);
  EXPECT_EQ(dtype_size(DType::Complex32), 4u);
  EXPECT_EQ(dtype_size(DType::Complex128), 16u);
  EXPECT_EQ(parse_dtype("cfloat"), DType::Complex64);
  EXPECT_EQ(parse_dtype("torch.complex128"), DType::Complex128);
}

// Each part converts once (Note [complex conversions]); the oracle is the scalar conversion of
// each part written here.
TEST(ComplexDTypeTest, ConversionsConvertEachPartOnce) {
  const std::vector<float> values = {1.5f, -0.0f, 3e38f, 1e-40f, NAN, -INFINITY, 65520.0f, 0.1f};
  const Tensor real = from_vector(values, {4, 2});
  // real -> complex: the value and +0
  const std::vector<std::complex<double>> c =
      real.to(DType::Complex128).to_vector<std::complex<double>>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(c[i].real()),
              std::bit_cast<std::uint64_t>(static_cast<double>(values[i])))
        << i;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(c[i].imag()), 0u) << i;
  }
  // pairs as complex64 -> complex32 rounds each part as Half's conversion; -> float refuses
  // to drop the imaginary part (mpsim::real is the real part); -> bool: either part non-zero
  const Tensor pairs = view_as_complex(real);
  const std::vector<ComplexHalf> h = pairs.to(DType::Complex32).to_vector<ComplexHalf>();
  EXPECT_THROW(pairs.to(DType::Float32), DTypeError);
  EXPECT_THROW(pairs.to(DType::Int64), DTypeError);
  const std::vector<float> re = mpsim::real(pairs).to_vector<float>();
  const std::vector<bool> nonzero = pairs.to(DType::Bool).to_vector<bool>();
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(h[i].real.bits, Half(values[2 * i]).bits) << i;
    EXPECT_EQ(h[i].imag.bits, Half(values[2 * i + 1]).bits) << i;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(re[i]), std::bit_cast<std::uint32_t>(values[2 * i]));
    EXPECT_EQ(nonzero[i], values[2 * i] != 0.0f || values[2 * i + 1] != 0.0f) << i;
  }
}

TEST(ComplexDTypeTest, ViewsShareStorageWithTorchsLayout) {
  const Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  const Tensor c = view_as_complex(x.view({2, 2, 2}));
  EXPECT_EQ(c.dtype(), DType::Complex64);
  EXPECT_EQ(c.sizes(), Shape({2, 2}));
  const Tensor back = view_as_real(c.t());  // any strides: doubled, and a last stride 1
  EXPECT_EQ(back.sizes(), Shape({2, 2, 2}));
  EXPECT_EQ(back.strides(), Strides({2, 4, 1}));
  EXPECT_EQ(imag(c).contiguous().to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_THROW(view_as_complex(x.t().contiguous().t()), ShapeError);  // last stride 4
  EXPECT_THROW(view_as_complex(x), ShapeError);                        // last size 4
  EXPECT_THROW(imag(x), DTypeError);
  // view(dtype): the last dim scales with the element size
  EXPECT_EQ(x.view(DType::Complex64).sizes(), Shape({2, 2}));
  EXPECT_EQ(x.view(DType::Int16).sizes(), Shape({2, 8}));
  EXPECT_THROW(x.narrow(1, 1, 2).view(DType::Float64), ShapeError);  // offset 1
  EXPECT_THROW(x.t().view(DType::Int16), ShapeError);                 // stride(-1) 4
}

}  // namespace
}  // namespace mpsim
