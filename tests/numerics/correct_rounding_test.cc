// The correctly rounded float32 paths (Note [correctly rounded float lanes] in
// kernels_simd/unary_cr-inl.h, Note [hard lanes] in kernels_simd/vec_math-inl.h): every input whose
// exact value lies near a rounding boundary (the hard cases, listed over all 2^32 floats by
// `ulp_sweep --hard 45`), rows of them among easy lanes at every position, in place and not,
// against MPFR; and the float-lane path against the double-lane path, bit for bit. ctest runs
// this binary once per SIMD target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels_simd/math_unary.h"
#include "kernels_simd/unary.h"
#include "tests/numerics/composite_hard_cases.h"
#include "tests/numerics/hard_cases.h"
#include "tests/numerics/math_hard_cases.h"
#include "tests/numerics/mpfr_oracle.h"
#include "tests/numerics/oracle.h"

namespace mpsim::testing {
namespace {

float mpfr_float(std::string_view op, float x) {
  return static_cast<float>(mpfr_correctly_rounded(op, x, kF32));
}

struct HardList {
  std::string_view op;
  simd::UnaryKind kind;
  std::function<Tensor(const Tensor&)> fn;
  const std::vector<float>& inputs;
};

simd::UnaryKind kind_of(std::string_view op) {
  using K = simd::UnaryKind;
  if (op == "exp") return K::Exp;
  if (op == "expm1") return K::Expm1;
  if (op == "log") return K::Log;
  if (op == "log1p") return K::Log1p;
  if (op == "rsqrt") return K::Rsqrt;
  if (op == "sin") return K::Sin;
  if (op == "cos") return K::Cos;
  if (op == "tanh") return K::Tanh;
  if (op == "erf") return K::Erf;
  if (op == "sigmoid") return K::Sigmoid;
  if (op == "silu") return K::Silu;
  if (op == "gelu") return K::GeluErf;
  if (op == "gelu_tanh") return K::GeluTanh;
  if (op == "softplus") return K::Softplus;
  ADD_FAILURE() << "no kind for " << op;
  return K::Abs;
}

simd::MathKind math_kind_of(std::string_view op) {
  using K = simd::MathKind;
  if (op == "exp2") return K::exp2;
  if (op == "log2") return K::log2;
  if (op == "log10") return K::log10;
  if (op == "tan") return K::tan;
  if (op == "cosh") return K::cosh;
  if (op == "sinh") return K::sinh;
  if (op == "atanh") return K::atanh;
  if (op == "acosh") return K::acosh;
  if (op == "asinh") return K::asinh;
  if (op == "atan") return K::atan;
  if (op == "asin") return K::asin;
  if (op == "acos") return K::acos;
  ADD_FAILURE() << "no math kind for " << op;
  return K::exp2;
}

// Every op of hard_cases.h and composite_hard_cases.h with its Tensor op (oracle.h's
// unary_cases) and row kind.
std::vector<HardList> hard_lists() {
  std::vector<HardList> lists;
  for (const auto* table : {&hard_cases(), &composite_hard_cases()}) {
    for (const HardCases& h : *table) {
      for (const UnaryCase& c : unary_cases()) {
        if (c.name == h.op) lists.push_back({h.op, kind_of(h.op), c.op, h.inputs});
      }
    }
  }
  EXPECT_EQ(lists.size(), hard_cases().size() + composite_hard_cases().size());
  return lists;
}

// The golden float32 row in place: the float-lane path where the target has it, else the
// double-lane path (as the unary kernel chooses).
void golden_row_in_place(simd::UnaryKind kind, std::vector<float>& v) {
  if (!simd::unary_cr_row_f32(kind, v.data(), v.data(), v.size(), simd::UnaryParams{}))
    simd::unary_row_f32(kind, v.data(), v.data(), v.size(), simd::UnaryParams{});
}

TEST(CorrectRounding, EveryHardCaseIsCorrectlyRounded) {
  for (const HardList& h : hard_lists()) {
    ASSERT_GT(h.inputs.size(), 10u) << h.op;
    const std::vector<float> got = h.fn(from_vector(h.inputs)).to_vector<float>();
    for (std::size_t i = 0; i < h.inputs.size(); ++i) {
      EXPECT_TRUE(same_float(got[i], mpfr_float(h.op, h.inputs[i])))
          << h.op << "(" << std::hexfloat << h.inputs[i] << ") = " << got[i] << ", MPFR "
          << mpfr_float(h.op, h.inputs[i]);
    }
  }
}

// Rows where every lane is hard, or one hard lane sits at each position among easy ones, of
// every length up to three vectors and a long one (the pending lanes cross batches), in place and
// into another tensor: the results depend on each lane's input alone.
TEST(CorrectRounding, HardLanesAtEveryPositionOfEveryRowLength) {
  for (const HardList& h : hard_lists()) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> easy(0.01f, 20.0f);  // in every op's domain
    auto check = [&](const std::vector<float>& xs) {
      std::vector<float> want(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) want[i] = mpfr_float(h.op, xs[i]);
      const Tensor in = from_vector(xs);
      const std::vector<float> got = h.fn(in).to_vector<float>();
      std::vector<float> got_inplace = xs;
      golden_row_in_place(h.kind, got_inplace);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        ASSERT_TRUE(same_float(got[i], want[i]))
            << h.op << " row of " << xs.size() << ", lane " << i << ": x = " << std::hexfloat
            << xs[i] << " gives " << got[i] << ", MPFR " << want[i];
        ASSERT_TRUE(same_float(got_inplace[i], want[i])) << h.op << " in place, lane " << i;
      }
    };
    // Every length to three vectors for the ops with float lanes, to 20 for the others.
    const bool float_lanes = h.op == "exp" || h.op == "log" || h.op == "sigmoid" || h.op == "silu";
    const std::size_t max_n = float_lanes ? 48 : 20;
    for (std::size_t n = 1; n <= max_n; ++n) {
      std::vector<float> all_hard(n);
      for (std::size_t i = 0; i < n; ++i) all_hard[i] = h.inputs[(i * 7 + n) % h.inputs.size()];
      check(all_hard);
      for (std::size_t pos = 0; pos < n; ++pos) {
        std::vector<float> xs(n);
        for (float& v : xs) v = easy(rng);
        xs[pos] = h.inputs[(pos + n) % h.inputs.size()];
        check(xs);
      }
    }
    std::vector<float> long_row(100003);
    for (std::size_t i = 0; i < long_row.size(); ++i)
      long_row[i] = i % 3 == 0 ? h.inputs[i % h.inputs.size()] : easy(rng);
    check(long_row);
  }
}

// The float-lane path (the Tensor op) and the double-lane path (unary_row_f32) are two
// algorithms with one answer: the correctly rounded float. Random inputs over the whole float
// range and dense ones over the range where results are normal.
TEST(CorrectRounding, FloatLanesGiveTheDoublePathBits) {
  std::mt19937 rng(11);
  std::vector<float> xs;
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> dense(-90.0f, 90.0f);
  for (int i = 0; i < 300000; ++i) xs.push_back(float_of(bits(rng)));
  for (int i = 0; i < 700000; ++i) xs.push_back(dense(rng));
  for (const HardList& h : hard_lists()) {
    const std::vector<float> got = h.fn(from_vector(xs)).to_vector<float>();
    std::vector<float> want(xs.size());
    simd::unary_row_f32(h.kind, xs.data(), want.data(), xs.size(), simd::UnaryParams{});
    std::size_t differ = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) differ += same_float(got[i], want[i]) ? 0 : 1;
    EXPECT_EQ(differ, 0u) << h.op;
  }
}

// Zeros keep their sign and subnormal inputs their value through the float-lane frame, where
// they run in full vectors (a short row never reaches it): rows of signed zeros, subnormals and
// the smallest normals against the value-by-value rows, bit for bit. sin(-0) = -0 needs its
// double lanes' reduction to add x last and its polynomial to multiply by r.
TEST(CorrectRounding, FloatLanesKeepSignedZerosAndSubnormals) {
  const std::vector<float> pattern = {0.0f,      -0.0f,      0x1p-149f, -0x1p-149f, 0x1.8p-127f,
                                      -0x1.8p-127f, 0x1p-126f, -0x1p-126f, 1.0f,      -1.0f};
  std::vector<float> xs;
  while (xs.size() < 4096) xs.insert(xs.end(), pattern.begin(), pattern.end());
  for (const HardList& h : hard_lists()) {
    std::vector<float> got(xs.size()), want(xs.size());
    if (!simd::unary_cr_row_f32(h.kind, xs.data(), got.data(), xs.size(), simd::UnaryParams{}))
      continue;
    simd::unary_row_f32(h.kind, xs.data(), want.data(), xs.size(), simd::UnaryParams{});
    for (std::size_t i = 0; i < xs.size(); ++i) {
      ASSERT_TRUE(same_float(got[i], want[i]))
          << h.op << "(" << std::hexfloat << xs[i] << ") = " << got[i] << ", value by value "
          << want[i];
    }
  }
  using M = simd::MathKind;
  for (const M kind : {M::exp2, M::log2, M::log10, M::sinh, M::cosh, M::asinh, M::acosh,
                       M::atanh, M::atan, M::tan, M::asin, M::acos}) {
    std::vector<float> got(xs.size()), want(xs.size());
    if (!simd::math_cr_row_f32(kind, xs.data(), got.data(), xs.size())) continue;
    simd::math_row_f32(kind, xs.data(), want.data(), xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      ASSERT_TRUE(same_float(got[i], want[i]))
          << "math kind " << static_cast<int>(kind) << "(" << std::hexfloat << xs[i]
          << ") = " << got[i] << ", value by value " << want[i];
    }
  }
}

// Note [special lanes in vectors] (unary_cr-inl.h): +-inf, NaNs (quiet and signaling, both signs,
// payloads), overflowing, vanishing and out-of-domain inputs, alternating with ordinary ones and
// filling whole vectors, rows with a tail: the float-lane and double-lane rows give the
// value-by-value row's bits, NaN bits included. A row whose every other lane is +-inf (a masked
// row), or a NaN, keeps those lanes in the vectors: at most one lane in 64 takes the slow path,
// where all of them did when a special lane sent its vector there. The rows span several of
// CrRow's blocks, so that the blocks after one with special lanes take them inline, and one row
// alternates long stretches with and without them (Note [special lanes in vectors], blocks).
TEST(CorrectRounding, SpecialLanesInVectorsGiveTheValueByValueBits) {
  const float kInf = std::numeric_limits<float>::infinity();
  const float kMax = std::numeric_limits<float>::max();
  const std::vector<float> specials = {
      kInf,   -kInf,  float_of(0x7fc00000), float_of(0xffc00000), float_of(0x7f800001),
      float_of(0xffa00000), float_of(0x7fc12345), kMax, -kMax, 1e30f, -1e30f, 0x1p26f,
      -0x1p26f, 89.5f, -89.5f, 89.0f, 100.0f, -104.0f, -112.0f, -200.0f, -14.5f, -11.0f,
      -20.0f, 2.0f, -2.0f, 1.5f, 0x1p20f, -0x1p20f};
  const std::vector<float> ordinary = {0.5f, -0.75f, 1.25f, -3.0f, 0.1f, 7.0f, -0.3f, 0.9f};
  std::vector<float> xs;
  for (std::size_t i = 0; i < 16384; ++i) {
    xs.push_back(i % 2 == 0 ? specials[(i / 2) % specials.size()] : ordinary[i % ordinary.size()]);
  }
  for (const float s : specials) xs.insert(xs.end(), 64, s);  // whole vectors
  xs.insert(xs.end(), {kInf, 0.5f, -kInf, float_of(0x7f800001), 1.0f});  // a tail
  // Every other lane +-inf, the others ordinary.
  std::vector<float> masked(16384);
  for (std::size_t i = 0; i < masked.size(); ++i) {
    masked[i] = i % 2 == 0 ? (i % 4 == 0 ? kInf : -kInf) : ordinary[i % ordinary.size()];
  }
  // Every other lane -inf, the others ordinary (a mask of -inf alone).
  std::vector<float> neg_masked(16384);
  for (std::size_t i = 0; i < neg_masked.size(); ++i) {
    neg_masked[i] = i % 2 == 0 ? -kInf : ordinary[i % ordinary.size()];
  }
  // Every other lane a NaN (quiet and signaling, both signs, payloads), the others ordinary.
  const std::vector<std::uint32_t> nan_bits = {0x7fc00000, 0xffc00000, 0x7f800001, 0xffa00000,
                                               0x7fc12345, 0xff812345};
  std::vector<float> nans(16384);
  for (std::size_t i = 0; i < nans.size(); ++i) {
    nans[i] = i % 2 == 0 ? float_of(nan_bits[(i / 2) % nan_bits.size()])
                         : ordinary[i % ordinary.size()];
  }
  // Stretches of 8192 lanes: ordinary, masked, ordinary, NaN every other lane, ordinary.
  std::vector<float> stretches;
  for (const auto* part : {&masked, &nans}) {
    for (std::size_t i = 0; i < 8192; ++i) stretches.push_back(ordinary[i % ordinary.size()]);
    stretches.insert(stretches.end(), part->begin(), part->begin() + 8192);
  }
  for (std::size_t i = 0; i < 8192; ++i) stretches.push_back(ordinary[i % ordinary.size()]);
  const auto check = [&](const std::string& op, const std::vector<float>& in,
                         const std::vector<float>& got, const std::vector<float>& want) {
    int wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (bits_of(got[i]) != bits_of(want[i]) && ++wrong <= 3) {
        ADD_FAILURE() << op << "(" << std::hexfloat << in[i] << ") = " << got[i] << " (bits  "
                      << std::hex << bits_of(got[i]) << "), value by value " << want[i]
                      << " (bits " << bits_of(want[i]) << ")";
      }
    }
    EXPECT_EQ(wrong, 0) << op;
  };
  using Row = std::function<bool(const float*, float*, std::size_t)>;
  // The lanes of each special row (masked, nans) that took the slow path: at most one in 64.
  const auto check_slow_lanes = [&](const std::string& op, const Row& row) {
    for (const auto* special_row : {&masked, &neg_masked, &nans}) {
      std::vector<float> out(special_row->size());
      simd::reset_unary_cr_stats();
      row(special_row->data(), out.data(), special_row->size());
      EXPECT_LE(simd::unary_cr_stats().slow_lanes, special_row->size() / 64)
          << op << ": lanes of a " << (special_row == &nans ? "NaN" : "masked") << " row on the "
          << "slow path";
    }
  };
  using U = simd::UnaryKind;
  for (const auto& [op, kind] :
       {std::pair{"exp", U::Exp}, std::pair{"expm1", U::Expm1}, std::pair{"log", U::Log},
        std::pair{"log1p", U::Log1p}, std::pair{"sigmoid", U::Sigmoid}, std::pair{"silu", U::Silu},
        std::pair{"tanh", U::Tanh}, std::pair{"softplus", U::Softplus},
        std::pair{"gelu", U::GeluErf}, std::pair{"gelu_tanh", U::GeluTanh},
        std::pair{"sin", U::Sin}, std::pair{"cos", U::Cos}, std::pair{"rsqrt", U::Rsqrt}}) {
    bool lanes = true;
    for (const auto* in : {&xs, &neg_masked, &stretches}) {
      std::vector<float> got(in->size()), want(in->size());
      lanes = simd::unary_cr_row_f32(kind, in->data(), got.data(), in->size(), simd::UnaryParams{});
      if (!lanes) break;
      simd::unary_row_f32(kind, in->data(), want.data(), in->size(), simd::UnaryParams{});
      check(op, *in, got, want);
    }
    if (!lanes) continue;
    check_slow_lanes(op, [&](const float* in, float* out, std::size_t n) {
      return simd::unary_cr_row_f32(kind, in, out, n, simd::UnaryParams{});
    });
  }
  using M = simd::MathKind;
  for (const auto& [op, kind] :
       {std::pair{"exp2", M::exp2}, std::pair{"log2", M::log2}, std::pair{"log10", M::log10},
        std::pair{"sinh", M::sinh}, std::pair{"cosh", M::cosh}, std::pair{"asinh", M::asinh},
        std::pair{"acosh", M::acosh}, std::pair{"atanh", M::atanh}, std::pair{"atan", M::atan},
        std::pair{"tan", M::tan}, std::pair{"asin", M::asin}, std::pair{"acos", M::acos}}) {
    // asin and acos: float lanes on AVX-512, the double lanes elsewhere
    const bool lanes_row = (kind == M::asin || kind == M::acos) &&
                           !simd::math_cr_row_f32(kind, xs.data(), nullptr, 0);
    const auto row = [&](const float* in, float* out, std::size_t n) {
      return lanes_row ? simd::math_lanes_row_f32(kind, in, out, n)
                       : simd::math_cr_row_f32(kind, in, out, n);
    };
    bool lanes = true;
    for (const auto* in : {&xs, &neg_masked, &stretches}) {
      std::vector<float> got(in->size()), want(in->size());
      lanes = row(in->data(), got.data(), in->size());
      if (!lanes) break;
      simd::math_row_f32(kind, in->data(), want.data(), in->size());
      check(op, *in, got, want);
    }
    if (!lanes) continue;
    if (!lanes_row) check_slow_lanes(op, row);
  }
}

// Each float-lane op around the edges of its certified range (Note [correctly rounded float
// lanes]), where a pair's error bound stops holding (a low part below the subnormals, a scale
// that leaves the normal range): about 2^18 evenly spaced floats of each range below, both
// signs, against the double-lane path.
TEST(CorrectRounding, FloatLanesAroundTheEdgesOfTheirCertifiedRanges) {
  struct Ranges {
    std::string_view op;
    std::vector<std::pair<float, float>> ranges;  // [lo, hi) of |x|
  };
  const float kMax = std::numeric_limits<float>::max();
  const std::vector<Ranges> edges = {
      {"exp", {{32.0f, 128.0f}, {0x1p-30f, 0x1p-20f}}},
      {"log", {{0x1p-130f, 0x1p-120f}, {0x1p120f, kMax}}},
      {"sigmoid", {{32.0f, 128.0f}, {0x1p-30f, 0x1p-20f}}},
      {"silu", {{32.0f, 128.0f}, {0x1p-100f, 0x1p-80f}}},
      {"rsqrt", {{0x1p-130f, 0x1p-120f}, {0x1p90f, kMax}}},
      {"gelu_tanh", {{4.0f, 16.0f}, {0x1p-100f, 0x1p-80f}, {0x1p20f, kMax}}},
      {"gelu", {{7.0f, 10.0f}, {0x1p-110f, 0x1p-90f}, {0x1p-8f, 0x1p-2f}, {0x1p120f, kMax}}},
      {"sin", {{0x1p12f, 0x1p16f}, {0x1p-130f, 0x1p-120f}, {0x1p-8f, 0x1p-4f}}},
      {"cos", {{0x1p12f, 0x1p16f}, {0x1p-8f, 0x1p-4f}}},
      {"tan", {{0x1p12f, 0x1p16f}, {0x1p-130f, 0x1p-120f}, {0x1p-8f, 0x1p-4f}, {1.0f, 2.0f}}},
      {"exp2", {{64.0f, 256.0f}, {0x1p-30f, 0x1p-20f}}},
      {"log2", {{0x1p-130f, 0x1p-120f}, {0x1p120f, kMax}, {0.5f, 2.0f}}},
      {"log10", {{0x1p-130f, 0x1p-120f}, {0x1p120f, kMax}, {0.5f, 2.0f}}},
      {"cosh", {{32.0f, 128.0f}, {0x1p-30f, 0x1p-20f}}},
      {"sinh", {{32.0f, 128.0f}, {0x1p-8f, 0x1p-5f}, {0x1p-130f, 0x1p-120f}}},
      {"expm1", {{64.0f, 128.0f}, {16.0f, 32.0f}, {0x1p-8f, 0x1p-5f}, {0x1p-130f, 0x1p-120f}}},
      {"tanh", {{8.0f, 16.0f}, {0x1p-9f, 0x1p-6f}, {0x1p-130f, 0x1p-120f}}},
      {"atanh", {{0.5f, 2.0f}, {0x1p-7f, 0x1p-4f}, {0x1p-130f, 0x1p-120f}}},
      {"acosh", {{1.0f, 2.0f}, {0x1p22f, 0x1p26f}}},
      {"asinh", {{0x1p56f, 0x1p64f}, {0x1p-7f, 0x1p-4f}, {0x1p-130f, 0x1p-120f}}},
      {"atan", {{0.5f, 2.0f}, {0x1p122f, kMax}, {0x1p-130f, 0x1p-120f}}},
      {"asin", {{0.5f, 1.0f}, {0x1p-130f, 0x1p-120f}}},
      {"acos", {{0.5f, 1.0f}, {0x1p-130f, 0x1p-120f}}},
      {"log1p", {{0x1p-130f, 0x1p-120f}, {0x1p-6f, 0x1p-4f}, {0.5f, 1.0f}, {0x1p120f, kMax}}},
      {"softplus", {{64.0f, 128.0f}, {16.0f, 32.0f}, {2.0f, 8.0f}, {0x1p-130f, 0x1p-120f}}}};
  const std::vector<HardList> lists = hard_lists();
  const std::vector<UnaryCase> cases = unary_cases();
  for (const Ranges& e : edges) {
    const auto c = std::find_if(cases.begin(), cases.end(),
                                [&](const UnaryCase& u) { return u.name == e.op; });
    ASSERT_NE(c, cases.end()) << e.op;
    std::vector<float> xs;
    for (const auto& [lo, hi] : e.ranges) {
      const std::uint32_t step = std::max<std::uint32_t>(1, (bits_of(hi) - bits_of(lo)) >> 18);
      for (std::uint32_t b = bits_of(lo); b < bits_of(hi); b += step) xs.push_back(float_of(b));
    }
    // The negative inputs after the positive ones: a vector where most lanes fail goes to the
    // double path whole, so mixed signs would hide the float lanes.
    for (std::size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i]);
    const std::vector<float> got = c->op(from_vector(xs)).to_vector<float>();
    // The value-by-value path: the unary family's double-lane row, the math family's scalar one.
    std::vector<float> want(xs.size());
    const auto h =
        std::find_if(lists.begin(), lists.end(), [&](const HardList& l) { return l.op == e.op; });
    if (h != lists.end()) {
      simd::unary_row_f32(h->kind, xs.data(), want.data(), xs.size(), simd::UnaryParams{});
    } else {
      simd::math_row_f32(math_kind_of(e.op), xs.data(), want.data(), xs.size());
    }
    int wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (!same_float(got[i], want[i]) && ++wrong <= 3) {
        ADD_FAILURE() << e.op << "(" << std::hexfloat << xs[i] << ") = " << got[i]
                      << ", the value-by-value path " << want[i];
      }
    }
    EXPECT_EQ(wrong, 0) << e.op;
  }
}

// sin and cos near their zeros, where the result is small and the reduction's absolute error
// becomes relative: the two floats either side of k pi/2 for every k up to the vector range
// (2^18), on every target, against long double (MPFR near a boundary).
TEST(CorrectRounding, SinAndCosNearTheirZeros) {
  std::vector<float> xs;
  for (int k = 1; k < 166886; ++k) {
    const float near = static_cast<float>(k * 1.5707963267948966192313216916397514L);
    float up = near, down = near;
    xs.push_back(near);
    for (int i = 0; i < 2; ++i) {
      xs.push_back(up = std::nextafter(up, INFINITY));
      xs.push_back(down = std::nextafter(down, -INFINITY));
    }
  }
  for (const UnaryCase& c : unary_cases()) {
    if (c.name != "sin" && c.name != "cos") continue;
    const std::vector<float> got = c.op(from_vector(xs)).to_vector<float>();
    int wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float want =
          static_cast<float>(correctly_rounded(c.name, xs[i], c.oracle(xs[i]), kF32));
      if (!same_float(got[i], want) && ++wrong <= 3) {
        ADD_FAILURE() << c.name << "(" << std::hexfloat << xs[i] << ") = " << got[i]
                      << ", correctly rounded " << want;
      }
    }
    EXPECT_EQ(wrong, 0) << c.name;
  }
}

// sin, cos and tan beyond 2^18 (Note [large trig arguments] in kernels_simd/vec_math-inl.h):
// for every exponent to 2^127, the float nearest a multiple of pi/2 (the generator's
// continued-fraction minimum, trig_reduction_cases.inc) and its neighbours, and random floats
// of 2^14..2^128, both signs, against MPFR. Through the ops (contiguous, strided, short rows)
// and through each double-lane row directly (the float lanes leave these lanes to them).
TEST(CorrectRounding, SinCosAndTanBeyondTwoToTheEighteen) {
  const std::vector<float> hardest = {
#include "tests/numerics/trig_reduction_cases.inc"
  };
  std::vector<float> xs;
  for (float x : hardest) {
    float up = x, down = x;
    xs.push_back(x);
    for (int i = 0; i < 2; ++i) {
      xs.push_back(up = std::nextafter(up, INFINITY));
      xs.push_back(down = std::nextafter(down, -INFINITY));
    }
  }
  std::mt19937 rng(18);
  std::uniform_int_distribution<std::uint32_t> big(bits_of(0x1p14f), bits_of(0x1.fffffep127f));
  while (xs.size() < 100000) xs.push_back(float_of(big(rng)));
  for (std::size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i]);
  std::shuffle(xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2), xs.end(), rng);
  const std::size_t n = xs.size();
  std::vector<float> pairs(2 * n);
  for (std::size_t i = 0; i < n; ++i) pairs[2 * i] = pairs[2 * i + 1] = xs[i];
  const Tensor strided = from_vector(pairs, {static_cast<std::int64_t>(n), 2}).select(1, 0);
  const std::vector<float> short_row(xs.begin(), xs.begin() + 7);
  const std::vector<UnaryCase> cases = unary_cases();
  for (const std::string_view op : {"sin", "cos", "tan"}) {
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = mpfr_float(op, xs[i]);
    const auto c =
        std::find_if(cases.begin(), cases.end(), [&](const UnaryCase& u) { return u.name == op; });
    ASSERT_NE(c, cases.end()) << op;
    std::vector<float> lanes(n);
    if (op == "tan") {
      ASSERT_TRUE(simd::math_lanes_row_f32(simd::MathKind::tan, xs.data(), lanes.data(), n));
    } else {
      simd::unary_row_f32(kind_of(op), xs.data(), lanes.data(), n, simd::UnaryParams{});
    }
    if (op != "tan") {
      // The double results before rounding, within the golden bound (2^-45 relative, Note
      // [hard lanes]): a reduction error that rounding would mostly hide shows here.
      constexpr Format kLongDouble{64, -16382, 16383};
      std::vector<double> unrounded(n);
      simd::unary_row_f32_to_f64(kind_of(op), xs.data(), unrounded.data(), n,
                                 simd::UnaryParams{});
      int loose = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const long double exact = mpfr_correctly_rounded(op, xs[i], kLongDouble);
        const long double error = std::fabs((unrounded[i] - exact) / exact);
        if (!(error < 0x1p-45L) && ++loose <= 3) {
          ADD_FAILURE() << op << "(" << std::hexfloat << xs[i] << "): double " << unrounded[i]
                        << ", exact " << static_cast<double>(exact) << std::defaultfloat
                        << ", relative error 2^" << std::log2(static_cast<double>(error));
        }
      }
      EXPECT_EQ(loose, 0) << op;
    }
    const std::vector<std::pair<std::string, std::vector<float>>> results = {
        {"contiguous", c->op(from_vector(xs)).to_vector<float>()},
        {"strided", c->op(strided).to_vector<float>()},
        {"short row", c->op(from_vector(short_row)).to_vector<float>()},
        {"double lanes", lanes}};
    for (const auto& [how, got] : results) {
      int wrong = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (!same_float(got[i], want[i]) && ++wrong <= 3) {
          ADD_FAILURE() << op << "(" << std::hexfloat << xs[i] << ") = " << got[i] << ", MPFR "
                        << want[i] << " (" << how << ")";
        }
      }
      EXPECT_EQ(wrong, 0) << op << " " << how;
    }
  }
}

// The math family's double-lane rows (math_lanes.cc: erfc, tan, asin, acos) give the
// value-by-value row's bits, in place and not, for rows of every length to 40 (the tails) and a
// long row: each function's hard cases (their lanes fail the test and take the scalar path)
// among random inputs of its domain, special values included.
TEST(CorrectRounding, DoubleLaneMathRowsGiveTheScalarRowsBits) {
  const float kInf = std::numeric_limits<float>::infinity();
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  for (const auto& [op, kind] : {std::pair{"erfc", simd::MathKind::erfc},
                                 std::pair{"tan", simd::MathKind::tan},
                                 std::pair{"asin", simd::MathKind::asin},
                                 std::pair{"acos", simd::MathKind::acos}}) {
    std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 0x1p-149f, -0x1p-130f,
                             0x1.000002p0f, kInf, -kInf, kNaN, 3e38f, 0x1p19f};
    for (const HardCases& h : math_hard_cases()) {
      if (h.op == op) xs.insert(xs.end(), h.inputs.begin(), h.inputs.end());
    }
    std::mt19937 rng(40);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    while (xs.size() < 6000) xs.push_back(u(rng) * (op == std::string_view("tan") ? 20.0f : 1.0f));
    std::shuffle(xs.begin(), xs.end(), rng);
    std::vector<float> want(xs.size());
    simd::math_row_f32(kind, xs.data(), want.data(), xs.size());
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{17}, std::size_t{40},
                          xs.size()}) {
      for (std::size_t begin = 0; begin + n <= xs.size(); begin += (n < 40 ? 997 : xs.size())) {
        std::vector<float> out(n), in_place(xs.begin() + begin, xs.begin() + begin + n);
        ASSERT_TRUE(simd::math_lanes_row_f32(kind, xs.data() + begin, out.data(), n)) << op;
        ASSERT_TRUE(simd::math_lanes_row_f32(kind, in_place.data(), in_place.data(), n)) << op;
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_float(out[i], want[begin + i]))
              << op << "(" << std::hexfloat << xs[begin + i] << ") = " << out[i]
              << ", value by value " << want[begin + i] << " (row of " << std::dec << n << ")";
          ASSERT_TRUE(same_float(in_place[i], want[begin + i]))
              << op << "(" << std::hexfloat << xs[begin + i] << ") in place = " << in_place[i];
        }
      }
    }
  }
}

// asin and acos in float lanes (AVX-512; Note [correctly rounded float lanes], asin and acos)
// against the double lanes, bit for bit: every float in [1/2, 1/2 + 2^-5) (the first pieces
// above 1/2, whose t = sqrt((1 - |x|)/2) lies in the last piece and needs sqrt's low part
// times the full derivative), both signs; the floats around each piece's ends t = k/64, as
// |x| and as their preimages 1 - 2 t^2; and random floats of [-1, 1].
TEST(CorrectRounding, AsinAndAcosFloatLanesGiveTheDoubleLaneBits) {
  using M = simd::MathKind;
  if (!simd::math_cr_row_f32(M::asin, nullptr, nullptr, 0)) {
    GTEST_SKIP() << "asin and acos take the double lanes on this target";
  }
  std::vector<float> xs;
  for (std::uint32_t b = bits_of(0.5f); b < bits_of(0.5f + 0x1p-5f); ++b) {
    xs.push_back(float_of(b));
  }
  for (int k = 0; k <= 32; ++k) {
    const float t = static_cast<float>(k) / 64;
    for (const float centre : {t, 1.0f - 2.0f * t * t}) {
      float up = centre, down = centre;
      xs.push_back(centre);
      for (int i = 0; i < 64; ++i) {
        xs.push_back(up = std::nextafter(up, 2.0f));
        xs.push_back(down = std::nextafter(down, -2.0f));
      }
    }
  }
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < 500000; ++i) xs.push_back(u(rng));
  for (std::size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i]);
  for (const auto& [op, kind] : {std::pair{"asin", M::asin}, std::pair{"acos", M::acos}}) {
    std::vector<float> got(xs.size()), want(xs.size());
    ASSERT_TRUE(simd::math_cr_row_f32(kind, xs.data(), got.data(), xs.size()));
    ASSERT_TRUE(simd::math_lanes_row_f32(kind, xs.data(), want.data(), xs.size()));
    int wrong = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (!same_float(got[i], want[i]) && ++wrong <= 3) {
        ADD_FAILURE() << op << "(" << std::hexfloat << xs[i] << ") = " << got[i]
                      << ", double lanes " << want[i];
      }
    }
    EXPECT_EQ(wrong, 0) << op;
  }
}

// The math family's correctly rounded functions (Note [math family hard lanes]): every input
// within 2^-45 of a boundary, contiguous and strided (every other element of a wider tensor),
// against MPFR.
TEST(CorrectRounding, MathFamilyHardCasesAreCorrectlyRounded) {
  const std::vector<UnaryCase> cases = unary_cases();
  for (const HardCases& h : math_hard_cases()) {
    const auto c = std::find_if(cases.begin(), cases.end(),
                                [&](const UnaryCase& u) { return u.name == h.op; });
    ASSERT_NE(c, cases.end()) << h.op;
    const std::size_t n = h.inputs.size();
    ASSERT_GT(n, 10u) << h.op;
    std::vector<float> pairs(2 * n);  // each hard input beside another
    for (std::size_t i = 0; i < n; ++i) {
      pairs[2 * i] = h.inputs[i];
      pairs[2 * i + 1] = h.inputs[(i + 1) % n];
    }
    const Tensor strided = from_vector(pairs, {static_cast<std::int64_t>(n), 2}).select(1, 0);
    for (const Tensor& in : {from_vector(h.inputs), strided}) {
      const std::vector<float> got = c->op(in).to_vector<float>();
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_TRUE(same_float(got[i], mpfr_float(h.op, h.inputs[i])))
            << h.op << "(" << std::hexfloat << h.inputs[i] << ") = " << got[i] << ", MPFR "
            << mpfr_float(h.op, h.inputs[i]) << (in.is_contiguous() ? "" : " (strided)");
      }
    }
  }
}

}  // namespace
}  // namespace mpsim::testing
