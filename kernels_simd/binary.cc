// The binary family: arithmetic (add, sub, mul, div, maximum, minimum, pow) and comparisons.
// One scalar definition per op (binary_scalar.h) covers every dtype; Highway rows cover the
// hot float32/float64 cases (dense or broadcast-scalar operands) with identical results.
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/binary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/binary_scalar.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/exact_power.h"
#include "kernels_simd/pow_cr.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/vec_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The ops on lanes of D: float lanes (every kind but pow), or int32/int64 lanes (add, sub,
// maximum, minimum, and mul on int32: Note [integer binary rows]; the others never sent).
template <class D, class V>
HWY_INLINE V ApplyBinary(D, BinaryKind kind, V a, V b) {
  using T = hn::TFromD<D>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  switch (kind) {
    case BinaryKind::Add:
      return hn::Add(a, b);
    case BinaryKind::Sub:
      return hn::Sub(a, b);
    case BinaryKind::Mul:
      if constexpr (kFloat || sizeof(T) == 4) return hn::Mul(a, b);
      break;  // int64: never sent
    case BinaryKind::Div:
      if constexpr (kFloat) return hn::Div(a, b);
      break;  // integers: never sent
    case BinaryKind::Maximum:
    case BinaryKind::Minimum: {
      const bool is_max = kind == BinaryKind::Maximum;
      if constexpr (!kFloat) {
        return is_max ? hn::Max(a, b) : hn::Min(a, b);
      } else {
        // ieee_maximum/minimum: NaN wins; for equal operands and/or of the bits orders -0 < +0.
        const V m = is_max ? hn::Max(a, b) : hn::Min(a, b);
        const V same = is_max ? hn::And(a, b) : hn::Or(a, b);
        const V r = hn::IfThenElse(hn::Eq(a, b), same, m);
        return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), r);
      }
    }
    case BinaryKind::Pow:
      break;  // never sent here (scalar path)
  }
  return a;
}

// out[i] = a[i*sa] (op) b[i*sb] with sa, sb in {0, 1}: a stride of 0 broadcasts a scalar.
// The kind is a loop-invariant switch that the compiler hoists out of the loop. `stream`:
// streaming stores where `out` is vector-aligned (Note [streaming stores]).
template <class T>
HWY_INLINE void BinaryRowImpl(BinaryKind kind, const T* a, bool a_scalar, const T* b, bool b_scalar,
                              T* out, std::size_t n, bool stream) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  auto load = [&](const T* p, bool scalar, std::size_t i) {
    return scalar ? hn::Set(d, p[0]) : hn::LoadU(d, p + i);
  };
  std::size_t i = 0;
  if (stream && reinterpret_cast<std::uintptr_t>(out) % (lanes * sizeof(T)) == 0) {
    for (; i + lanes <= n; i += lanes) {
      hn::Stream(ApplyBinary(d, kind, load(a, a_scalar, i), load(b, b_scalar, i)), d, out + i);
    }
    stream_fence();  // the streaming stores are visible before the row's task completes
  }
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(ApplyBinary(d, kind, load(a, a_scalar, i), load(b, b_scalar, i)), d, out + i);
  }
  if (i < n) {
    // The tail through padded buffers, never masked loads or stores: on some targets (SSE4 in
    // Highway 1.0.3) those are full-vector accesses that fault or touch memory past the row.
    HWY_ALIGN T buf_a[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T buf_b[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T buf_out[HWY_MAX_BYTES / sizeof(T)];
    for (std::size_t j = i; j < n; ++j) {
      buf_a[j - i] = a[a_scalar ? 0 : j];
      buf_b[j - i] = b[b_scalar ? 0 : j];
    }
    hn::Store(ApplyBinary(d, kind, hn::Load(d, buf_a), hn::Load(d, buf_b)), d, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

// Note [exact powers] (exact_power.h) in lanes. glibc's steps for zeros, infinities and NaN:
// x^2, negated for an odd y and a negative x (NaN too: its sign bit), inverted for y < 0.
template <ExactPower E, class D>
HWY_INLINE hn::Vec<D> PowSpecialLanes(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  constexpr bool kOdd = E == ExactPower::One || E == ExactPower::Three || E == ExactPower::MinusOne;
  constexpr bool kNegativeY = E == ExactPower::MinusOne || E == ExactPower::MinusTwo;
  hn::Vec<D> x2 = hn::Mul(x, x);
  if constexpr (kOdd) {
    const auto negative = hn::RebindMask(d, hn::Lt(hn::BitCast(di, x), hn::Zero(di)));
    x2 = hn::IfThenElse(negative, hn::Neg(x2), x2);
  }
  if constexpr (kNegativeY) x2 = hn::Div(hn::Set(d, 1), x2);
  return x2;
}

// A dense float32 row: out = pow(in, y), y of kind E (Note [exact powers]): y = 0, 1/2, 1, -1
// in float lanes (each a correctly rounded IEEE operation: exact_power's double rounded to
// float), 3 in float lanes on targets with FMA (Note [float-lane cubes]), and -2 (3 elsewhere)
// in double lanes, rounded to float.
template <ExactPower E>
void PowRow(const float* in, float* out, std::size_t n, bool stream) {
  std::size_t i = 0;
  if constexpr (E == ExactPower::Three || E == ExactPower::MinusTwo) {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const std::size_t lanes = hn::Lanes(dd);
    // The double lanes of [begin, end), a whole number of vectors.
    const auto double_lanes = [&](std::size_t begin, std::size_t end) {
      for (std::size_t j = begin; j < end; j += lanes) {
        const auto x = hn::PromoteTo(dd, hn::LoadU(df, in + j));
        const auto p = hn::Mul(x, x);
        auto r = E == ExactPower::Three ? hn::Mul(p, x) : hn::Div(hn::Set(dd, 1.0), p);
        const auto special = hn::Not(hn::And(hn::IsFinite(x), hn::Ne(x, hn::Zero(dd))));
        if (HWY_UNLIKELY(!hn::AllFalse(dd, special))) {
          r = hn::IfThenElse(special, PowSpecialLanes<E>(dd, x), r);
        }
        hn::StoreU(F64ToF32(dd, r), df, out + j);
      }
    };
#if HWY_NATIVE_FMA && HWY_TARGET != HWY_SCALAR
    if constexpr (E == ExactPower::Three) {
      // Note [float-lane cubes]
      // x^3 in float lanes, the same bits as the double lanes' correctly rounded (x x) x: x^2 =
      // h + l exactly (FMA), c = RN(l x), y = RN(h x + c) by one FMA. y is x^3 correctly
      // rounded for every float32 x with 2^-26 <= |x| <= 2^42, and for zeros: there every
      // operation's result is normal (l x too, l being zero or a multiple of x^2's quantum), so
      // y scales with x by powers of two and depends only on x's significand, and all 2^23 of
      // them give the correctly rounded cube (y(-x) = -y(x)); c's rounding, 2^-48 of y, moves no
      // result across a midpoint. (Without an FMA for h x, as RN(p + RN(l x + e1)), one
      // significand misrounds.) tests/numerics/power_sweep checks all 2^32 inputs against MPFR.
      // A vector with another lane (infinities, NaN, tiny and huge x) takes the double lanes.
      // 2.6M floats, one AVX-512 thread: 0.74 -> 0.43 ms (`elementwise_bench
      // --benchmark_filter=pow_exponent/3`, beside a build with the double lanes only).
      const hn::ScalableTag<float> d;
      const std::size_t fl = hn::Lanes(d);
      const auto cube = [&](hn::Vec<decltype(d)> x, hn::Mask<decltype(d)>& ok) {
        const auto h = hn::Mul(x, x);
        const auto c = hn::Mul(hn::MulSub(x, x, h), x);
        const auto ax = hn::Abs(x);
        ok = hn::And(hn::Le(ax, hn::Set(d, 0x1p42f)),
                     hn::Or(hn::Ge(ax, hn::Set(d, 0x1p-26f)), hn::Eq(ax, hn::Zero(d))));
        return hn::MulAdd(h, x, c);
      };
      for (; i + 2 * fl <= n; i += 2 * fl) {
        hn::Mask<decltype(d)> ok0, ok1;
        const auto y0 = cube(hn::LoadU(d, in + i), ok0);
        const auto y1 = cube(hn::LoadU(d, in + i + fl), ok1);
        if (HWY_LIKELY(hn::AllTrue(d, hn::And(ok0, ok1)))) {
          hn::StoreU(y0, d, out + i);
          hn::StoreU(y1, d, out + i + fl);
        } else {
          double_lanes(i, i + 2 * fl);  // fl is a multiple of the double lanes
        }
      }
    }
#endif
    const std::size_t whole = i + (n - i) / lanes * lanes;
    double_lanes(i, whole);
    i = whole;
  } else {
    const hn::ScalableTag<float> d;
    const std::size_t lanes = hn::Lanes(d);
    const bool streamed = stream && reinterpret_cast<std::uintptr_t>(out) % (lanes * 4) == 0;
    for (; i + lanes <= n; i += lanes) {
      const auto x = hn::LoadU(d, in + i);
      hn::Vec<decltype(d)> r;
      if constexpr (E == ExactPower::Zero) {
        r = hn::Set(d, 1.0f);
      } else {
        if constexpr (E == ExactPower::Half) {
          // A negative x's square root is the default NaN, as glibc's (x - x) / (x - x).
          r = hn::Sqrt(x);
        } else if constexpr (E == ExactPower::One) {
          r = x;
        } else {
          r = hn::Div(hn::Set(d, 1.0f), x);
        }
        const auto special = hn::Not(hn::And(hn::IsFinite(x), hn::Ne(x, hn::Zero(d))));
        if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
          r = hn::IfThenElse(special, PowSpecialLanes<E>(d, x), r);
        }
      }
      if (streamed) {
        hn::Stream(r, d, out + i);
      } else {
        hn::StoreU(r, d, out + i);
      }
    }
    if (streamed) stream_fence();
  }
  for (; i < n; ++i) out[i] = static_cast<float>(exact_power(static_cast<double>(in[i]), E));
}

void PowRowF32(ExactPower e, const float* in, float* out, std::size_t n, bool stream) {
  switch (e) {
    case ExactPower::Zero:
      return PowRow<ExactPower::Zero>(in, out, n, stream);
    case ExactPower::Half:
      return PowRow<ExactPower::Half>(in, out, n, stream);
    case ExactPower::One:
      return PowRow<ExactPower::One>(in, out, n, stream);
    case ExactPower::Three:
      return PowRow<ExactPower::Three>(in, out, n, stream);
    case ExactPower::MinusOne:
      return PowRow<ExactPower::MinusOne>(in, out, n, stream);
    case ExactPower::MinusTwo:
      return PowRow<ExactPower::MinusTwo>(in, out, n, stream);
    default:  // Two runs as mul (Note [square powers]); None never comes here
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(exact_power(static_cast<double>(in[i]), e));
      }
  }
}

// Note [correctly rounded pow] in double lanes: a dense float32 row x^y for a finite scalar y
// (not one of Note [exact powers]). On targets with FMA the float lanes take the row first
// (Note [correctly rounded float lanes], pow: pow_cr_lanes_row_f32) and hand this row only the
// lanes they leave open; an integral y of Note [integer powers] comes here whole. Each lane
// evaluates t = y log|x| (PowLog, relative error below 2^-44.7) and e^t (PowExp, below
// 2^-41.3). For |t| <= 104 the absolute error of t is
// below 104 (2^-44.7 + 2^-53) = 2^-37.95, so e^t is within 2^-37.8 relative of x^y:
// kPowMarginUlps = 2^17 double ULPs (2^-36 relative, 3.5x the bound) in RoundsSafelyWithin.
// t > 89 is inf and t < -104 is +0 for certain (x^y above FLT_MAX's rounding threshold
// e^88.73, below half the smallest subnormal e^-103.97), signed for a negative x and an odd y.
// A lane that fails the test (2^-11 of random lanes, and every subnormal result), or whose x is
// zero, infinite or NaN, or negative with a non-integral y, takes pow_correctly_rounded
// (pow_cr.h), value by value. The polynomials are shorter than the golden LogCore's and
// ExpCore's (2^-50 and 2^-47): 5 fewer operations per vector, 5% of the row's time, for a
// slow-lane rate 30 times higher that costs under 1% (`elementwise_bench
// --benchmark_filter=unary_sd/pow_`).
inline constexpr std::uint64_t kPowMarginUlps = std::uint64_t{1} << 17;

// Note [integer powers]
// An integral y with 4 <= |y| <= 64 needs no logarithm: x^|y| by binary powering in double
// lanes (the squarings x^2, x^4, ... up to |y|'s top bit and a product for each further set
// bit: at most 10 multiplications, 5 + 5 for |y| = 63, of which the first, x * x, is exact),
// then 1/x^|y| for y < 0 (one division). Each rounds once, so the double is within
// (1 + 2^-53)^10 - 1 < 10.01 2^-53 of x^y relative, at most 21 double ULPs of its binade, and
// RoundsSafelyWithin<kIntPowMarginUlps> (2^6 ULPs) certifies its float rounding wherever the
// result is a normal float. The bound holds there: for |x| < 1 the powers x^j, j <= |y|, only
// shrink toward x^|y| and for |x| > 1 only grow toward it, so when the result (or, for y < 0,
// its reciprocal, then within [2^-128, 2^126]) is a normal float every intermediate is a
// normal double. The rest (zeros, infinities, NaN, results outside the normal floats, and the
// 2^-22 of random lanes within 2^6 ULPs of a midpoint, exact ties included) takes
// pow_correctly_rounded. Speed beside the log and exp row: `bench/cr_speed.py --build build
// --ops pow_5` (docs/performance.md).
inline constexpr std::uint64_t kIntPowMarginUlps = std::uint64_t{1} << 6;

// x^n for 1 <= n <= kIntPowMax (Note [integer powers]).
template <class D>
HWY_INLINE hn::Vec<D> IntPow(D, hn::Vec<D> x, unsigned n) {
  hn::Vec<D> base = x;
  for (; (n & 1) == 0; n >>= 1) base = hn::Mul(base, base);
  hn::Vec<D> acc = base;
  for (n >>= 1; n != 0; n >>= 1) {
    base = hn::Mul(base, base);
    if (n & 1) acc = hn::Mul(acc, base);
  }
  return acc;
}

// log(u) for finite positive normal u: LogCore (vec_math-inl.h) with the atanh series to f^15.
// Its truncation s^8 / 17 (s = f^2 <= 0.02944) is below 2^-44.8 of log(m), |log(m)| <= ln2/2;
// f's rounding adds 1.5 2^-52 and the sum with e ln2 2^-53 of the result, which is at least
// ln2/2 when e != 0: below 2^-44.7 relative.
template <class D>
HWY_INLINE hn::Vec<D> PowLog(D d, hn::Vec<D> u) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kAtanh[7] = {1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15};
  const LogReduced<D> t = LogReduce(d, u);
  const auto s = hn::Mul(t.f, t.f);
  const auto two_f = hn::Add(t.f, t.f);
  const auto tail =
      hn::MulAdd(hn::Mul(two_f, s), Horner(d, s, kAtanh), hn::Mul(t.e, hn::Set(d, kLn2Lo)));
  return hn::MulAdd(t.e, hn::Set(d, kLn2Hi), hn::Add(two_f, tail));
}

// e^t for finite t (lanes outside [-708, 709] give garbage, which the caller replaces): ExpCore
// with the Taylor series to r^10, |r| <= ln2/2: truncation below 0.3466^11 / 11! / e^-0.3466 =
// 2^-41.4, the roundings 2^-51.
template <class D>
HWY_INLINE hn::Vec<D> PowExp(D d, hn::Vec<D> x) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kInvFact[11] = {1.0,      1.0,       1.0 / 2,    1.0 / 6,      1.0 / 24,
                                   1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
                                   1.0 / 3628800};
  const auto shift = hn::Set(d, 0x1.8p52);
  const auto kd = hn::MulAdd(x, hn::Set(d, 1.4426950408889634), shift);  // k + shift
  const auto k = hn::Sub(kd, shift);
  auto r = hn::NegMulAdd(k, hn::Set(d, kLn2Hi), x);
  r = hn::NegMulAdd(k, hn::Set(d, kLn2Lo), r);
  return hn::Mul(Horner(d, r, kInvFact), Pow2FromShifted(d, kd));
}

// kInteger: by Note [integer powers], else as e^(y log x). One function each keeps each loop's
// lambdas inlined (with both paths in one, the e^(y log x) row takes 13% longer:
// `bench/cr_speed.py --build build --ops pow_1.5`).
template <bool kInteger>
void PowCrRow(const float* in, float y, float* out, std::size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  const bool y_integral = std::nearbyint(y) == y;
  const bool y_odd = odd_integer(y);
  const auto vy = hn::Set(dd, static_cast<double>(y));
  const auto inf = hn::Set(dd, HUGE_VAL);
  const auto zero = hn::Zero(dd);
  // x^y of the lanes at in + i, and where the result is certain. Forced inline: GCC otherwise
  // calls it out of line from the unrolled loop, reloading every constant (unary/pow_1.5 and
  // pow_2.2: 294-300 -> 307 M/s, `elementwise_bench --benchmark_filter=unary/pow_`).
  auto power = [&](std::size_t i, hn::Mask<decltype(dd)>* ok) __attribute__((always_inline)) {
    const auto x = hn::PromoteTo(dd, hn::LoadU(df, in + i));
    if constexpr (kInteger) {
      auto r = IntPow(dd, x, static_cast<unsigned>(std::fabs(y)));
      if (y < 0) r = hn::Div(hn::Set(dd, 1.0), r);
      *ok = RoundsSafelyWithin<kIntPowMarginUlps>(dd, r);
      return F64ToF32(dd, r);
    }
    const auto ax = hn::Abs(x);
    auto valid = hn::And(hn::Gt(ax, zero), hn::Lt(ax, inf));
    if (!y_integral) valid = hn::And(valid, hn::Ge(x, zero));
    const auto t = hn::Mul(vy, PowLog(dd, hn::IfThenElse(valid, ax, hn::Set(dd, 1.0))));
    const auto big = hn::Gt(t, hn::Set(dd, 89.0));
    const auto tiny = hn::Lt(t, hn::Set(dd, -104.0));
    auto r = PowExp(dd, t);
    r = hn::IfThenElse(big, inf, hn::IfThenElse(tiny, zero, r));
    if (y_odd) r = hn::CopySign(r, x);
    *ok = hn::And(valid, hn::Or(hn::Or(big, tiny), RoundsSafelyWithin<kPowMarginUlps>(dd, r)));
    if (!y_integral) {
      // A finite negative x to a non-integral power: glibc's pow returns (x - x) / (x - x),
      // the default NaN, here as there (a row of signed values: no lane leaves the vector).
      const auto invalid = hn::And(hn::Lt(x, zero), hn::Gt(x, hn::Neg(inf)));
      if (HWY_UNLIKELY(!hn::AllFalse(dd, invalid))) {
        const auto z = hn::Sub(x, x);
        r = hn::IfThenElse(invalid, hn::Div(z, z), r);
        *ok = hn::Or(*ok, invalid);
      }
    }
    return F64ToF32(dd, r);
  };
  // The undecided lanes from pow_correctly_rounded, before the store (out may be in).
  auto store = [&](std::size_t i, hn::Vec<decltype(df)> r, hn::Mask<decltype(dd)> ok) {
    if (HWY_LIKELY(hn::AllTrue(dd, ok))) return hn::StoreU(r, df, out + i);
    HWY_ALIGN float result[HWY_MAX_BYTES / 8];
    std::uint8_t passed[8 + HWY_MAX_BYTES / 64] = {};
    hn::Store(r, df, result);
    hn::StoreMaskBits(dd, ok, passed);
    for (std::size_t j = 0; j < lanes; ++j) {
      if (((passed[j / 8] >> (j % 8)) & 1) == 0) {
        result[j] = pow_correctly_rounded<float>(in[i + j], y);
      }
    }
    std::copy(result, result + lanes, out + i);
  };
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {  // four vectors in flight
    hwy::Prefetch(in + i + 1024);                 // 4 KiB ahead
    hn::Mask<decltype(dd)> ok0, ok1, ok2, ok3;
    const auto r0 = power(i, &ok0);
    const auto r1 = power(i + lanes, &ok1);
    const auto r2 = power(i + 2 * lanes, &ok2);
    const auto r3 = power(i + 3 * lanes, &ok3);
    store(i, r0, ok0);
    store(i + lanes, r1, ok1);
    store(i + 2 * lanes, r2, ok2);
    store(i + 3 * lanes, r3, ok3);
  }
  for (; i + lanes <= n; i += lanes) {
    hn::Mask<decltype(dd)> ok;
    const auto r = power(i, &ok);
    store(i, r, ok);
  }
  for (; i < n; ++i) out[i] = pow_correctly_rounded<float>(in[i], y);
}

void PowCrRowF32(const float* in, float y, float* out, std::size_t n) {
  if (integer_power(y)) {
    PowCrRow<true>(in, y, out, n);
  } else {
    PowCrRow<false>(in, y, out, n);
  }
}

// The lanes of pow_minus_half_row (below) whose x is not positive and finite: x^-0.5 by
// pow_correctly_rounded over the rsqrt row's result.
void PowMinusHalfSpecials(const float* x, float* out, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    const auto regular = hn::And(hn::Gt(v, hn::Zero(d)), hn::Lt(v, hn::Set(d, HUGE_VALF)));
    if (HWY_LIKELY(hn::AllTrue(d, regular))) continue;
    for (std::size_t j = i; j < i + lanes; ++j) {
      if (!(x[j] > 0 && x[j] < HUGE_VALF)) out[j] = pow_correctly_rounded<float>(x[j], -0.5);
    }
  }
  for (; i < n; ++i) {
    if (!(x[i] > 0 && x[i] < HUGE_VALF)) out[i] = pow_correctly_rounded<float>(x[i], -0.5);
  }
}

// Note [16-bit binary rows]
// The scalar definition of + - * / maximum minimum on float16 and bfloat16 (binary_scalar.h) widens
// both operands to float, applies the float op and rounds the float result to 16 bits. These rows
// do the same in vectors: the exact widening (F16BitsToF32ForArithmetic: F16C's, whose quiet
// signalling NaN the op would make anyway; BF16BitsToF32, or Note [zipped bfloat16 lanes] on
// AVX2 and AVX-512), ApplyBinary on float lanes, and the 16-bit rounding bit-identical to the
// scalar conversion (cast16-inl.h), so the same bits (`elementwise_bench
// --benchmark_filter=add16`; docs/measurements.md).
template <class T>
HWY_INLINE void BinaryRow16Impl(BinaryKind kind, const std::uint16_t* a, bool a_scalar,
                                const std::uint16_t* b, bool b_scalar, std::uint16_t* out,
                                std::size_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::uint16_t, decltype(df)> du;
  const std::size_t lanes = hn::Lanes(df);
  auto widen = [&](hn::Vec<decltype(du)> bits) {
    if constexpr (std::is_same_v<T, BFloat16>) {
      return BF16BitsToF32(df, bits);
    } else {
      // F16C where the target has it: a signalling NaN comes out quiet, as the op makes it
      return F16BitsToF32ForArithmetic(df, bits);
    }
  };
  auto narrow = [&](hn::Vec<decltype(df)> v) {
    if constexpr (std::is_same_v<T, BFloat16>) {
      return F32ToBF16Bits(df, v);
    } else {
      return F32ToF16Bits(df, v);
    }
  };
  auto load = [&](const std::uint16_t* p, bool scalar, std::size_t i) {
    return widen(scalar ? hn::Set(du, p[0]) : hn::LoadU(du, p + i));
  };
  std::size_t i = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (std::is_same_v<T, BFloat16>) {
    // A full vector of 16-bit lanes at a time (Note [zipped bfloat16 lanes], cast16-inl.h: the
    // NaNs of + - * / maximum minimum on widened values are quiet with their low bits clear).
    const hn::Repartition<std::uint16_t, decltype(df)> dw;
    const std::size_t wide = hn::Lanes(dw);
    auto load_wide = [&](const std::uint16_t* p, bool scalar, std::size_t k) {
      hn::Vec<decltype(df)> lo, hi;
      BF16BitsToF32Zipped(df, scalar ? hn::Set(dw, p[0]) : hn::LoadU(dw, p + k), lo, hi);
      return std::pair{lo, hi};
    };
    for (; i + wide <= n; i += wide) {
      const auto [a_lo, a_hi] = load_wide(a, a_scalar, i);
      const auto [b_lo, b_hi] = load_wide(b, b_scalar, i);
      hn::StoreU(F32ToBF16BitsZipped(df, ApplyBinary(df, kind, a_lo, b_lo),
                                     ApplyBinary(df, kind, a_hi, b_hi)),
                 dw, out + i);
    }
  }
#endif
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(narrow(ApplyBinary(df, kind, load(a, a_scalar, i), load(b, b_scalar, i))), du,
               out + i);
  }
  if (i < n) {  // the tail through padded buffers, as BinaryRowImpl's
    HWY_ALIGN std::uint16_t buf_a[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN std::uint16_t buf_b[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN std::uint16_t buf_out[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = i; j < n; ++j) {
      buf_a[j - i] = a[a_scalar ? 0 : j];
      buf_b[j - i] = b[b_scalar ? 0 : j];
    }
    hn::Store(narrow(ApplyBinary(df, kind, widen(hn::Load(du, buf_a)), widen(hn::Load(du, buf_b)))),
              du, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

void BinaryRowF16(BinaryKind kind, const std::uint16_t* a, bool a_scalar, const std::uint16_t* b,
                  bool b_scalar, std::uint16_t* out, std::size_t n) {
  BinaryRow16Impl<Half>(kind, a, a_scalar, b, b_scalar, out, n);
}
void BinaryRowBF16(BinaryKind kind, const std::uint16_t* a, bool a_scalar, const std::uint16_t* b,
                   bool b_scalar, std::uint16_t* out, std::size_t n) {
  BinaryRow16Impl<BFloat16>(kind, a, a_scalar, b, b_scalar, out, n);
}

// Note [integer binary rows]
// int32 and int64 add, sub (alpha 1), maximum, minimum and int32 mul: the scalar definition
// (binary_scalar.h) wraps in two's complement, as the vector lanes do, so these rows run in vectors
// (`elementwise_bench --benchmark_filter=int_add`; docs/measurements.md).
void BinaryRowI32(BinaryKind kind, const std::int32_t* a, bool a_scalar, const std::int32_t* b,
                  bool b_scalar, std::int32_t* out, std::size_t n, bool stream) {
  BinaryRowImpl(kind, a, a_scalar, b, b_scalar, out, n, stream);
}
void BinaryRowI64(BinaryKind kind, const std::int64_t* a, bool a_scalar, const std::int64_t* b,
                  bool b_scalar, std::int64_t* out, std::size_t n, bool stream) {
  BinaryRowImpl(kind, a, a_scalar, b, b_scalar, out, n, stream);
}

// Note [float32 rows in double]
// float32 add/sub with alpha != 1 (x + alpha y in double, rounded once) and div with rounding_mode
// 'trunc' (trunc of the double quotient, rounded once: binary_scalar.h) in double lanes: the same
// IEEE operations, the same bits (`elementwise_bench --benchmark_filter=f32_in_double`;
// docs/measurements.md).
void BinaryRowF32InDouble(BinaryKind kind, double alpha, const float* a, bool a_scalar,
                          const float* b, bool b_scalar, float* out, std::size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  const auto va = hn::Set(dd, alpha);
  auto apply = [&](hn::Vec<decltype(dd)> x, hn::Vec<decltype(dd)> y) {
    if (kind == BinaryKind::Div) return hn::Trunc(hn::Div(x, y));
    const auto ay = hn::Mul(va, y);
    return kind == BinaryKind::Add ? hn::Add(x, ay) : hn::Sub(x, ay);
  };
  auto load = [&](const float* p, bool scalar, std::size_t i) {
    return hn::PromoteTo(dd, scalar ? hn::Set(df, p[0]) : hn::LoadU(df, p + i));
  };
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(F64ToF32(dd, apply(load(a, a_scalar, i), load(b, b_scalar, i))), df, out + i);
  }
  if (i < n) {  // the tail through padded buffers, as BinaryRowImpl's
    HWY_ALIGN float buf_a[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN float buf_b[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN float buf_out[HWY_MAX_BYTES / sizeof(double)];
    for (std::size_t j = i; j < n; ++j) {
      buf_a[j - i] = a[a_scalar ? 0 : j];
      buf_b[j - i] = b[b_scalar ? 0 : j];
    }
    hn::Store(F64ToF32(dd, apply(load(buf_a, false, 0), load(buf_b, false, 0))), df, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

void BinaryRowF32(BinaryKind kind, const float* a, bool a_scalar, const float* b, bool b_scalar,
                  float* out, std::size_t n, bool stream) {
  BinaryRowImpl(kind, a, a_scalar, b, b_scalar, out, n, stream);
}
void BinaryRowF64(BinaryKind kind, const double* a, bool a_scalar, const double* b, bool b_scalar,
                  double* out, std::size_t n, bool stream) {
  BinaryRowImpl(kind, a, a_scalar, b, b_scalar, out, n, stream);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels_simd/binary.h"
#include <algorithm>
#include <vector>

#include "kernels_simd/elementwise.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {

HWY_EXPORT(BinaryRowF32);
HWY_EXPORT(BinaryRowF64);
HWY_EXPORT(PowRowF32);
HWY_EXPORT(PowCrRowF32);
HWY_EXPORT(PowMinusHalfSpecials);
HWY_EXPORT(BinaryRowF16);
HWY_EXPORT(BinaryRowBF16);
HWY_EXPORT(BinaryRowI32);
HWY_EXPORT(BinaryRowF32InDouble);
HWY_EXPORT(BinaryRowI64);

void pow_cr_row_f32(const float* in, float y, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(PowCrRowF32)(in, y, out, n);
}

namespace {

// The SIMD rows handle the float ops without alpha or rounding mode, on a dense output with
// dense or broadcast-scalar inputs; everything else takes the scalar definition.
template <class T>
bool try_simd_row(BinaryKind kind, const BinaryParams& p, const RowPointers<3>& r, std::int64_t n,
                  bool stream) {
  constexpr std::int64_t kSize = sizeof(T);
  constexpr bool kInt = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
  bool simd_kind = kind != BinaryKind::Pow && p.mode == RoundingMode::None &&
                   (p.alpha == 1 || (kind != BinaryKind::Add && kind != BinaryKind::Sub));
  if constexpr (kInt) {  // Note [integer binary rows]
    simd_kind = p.alpha_int == 1 && kind != BinaryKind::Div && kind != BinaryKind::Pow &&
                (kind != BinaryKind::Mul || sizeof(T) == 4);
  }
  if constexpr (std::is_same_v<T, float>) {
    // Note [float32 rows in double]
    const bool in_double = ((kind == BinaryKind::Add || kind == BinaryKind::Sub) && p.alpha != 1 &&
                            p.mode == RoundingMode::None) ||
                           (kind == BinaryKind::Div && p.mode == RoundingMode::Trunc);
    const bool dense = r.stride[0] == kSize && (r.stride[1] == kSize || r.stride[1] == 0) &&
                       (r.stride[2] == kSize || r.stride[2] == 0);
    if (in_double && dense) {
      HWY_DYNAMIC_DISPATCH(BinaryRowF32InDouble)
      (kind, p.alpha, reinterpret_cast<const float*>(r.ptr[1]), r.stride[1] == 0,
       reinterpret_cast<const float*>(r.ptr[2]), r.stride[2] == 0,
       reinterpret_cast<float*>(r.ptr[0]), static_cast<std::size_t>(n));
      return true;
    }
  }
  if (!simd_kind || r.stride[0] != kSize) return false;
  if ((r.stride[1] != kSize && r.stride[1] != 0) || (r.stride[2] != kSize && r.stride[2] != 0))
    return false;
  const auto* a = reinterpret_cast<const T*>(r.ptr[1]);
  const auto* b = reinterpret_cast<const T*>(r.ptr[2]);
  auto* out = reinterpret_cast<T*>(r.ptr[0]);
  if constexpr (std::is_same_v<T, std::int32_t>) {
    HWY_DYNAMIC_DISPATCH(BinaryRowI32)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    HWY_DYNAMIC_DISPATCH(BinaryRowI64)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  } else if constexpr (Float16Like<T>) {
    // Note [16-bit binary rows]
    const auto* a16 = reinterpret_cast<const std::uint16_t*>(a);
    const auto* b16 = reinterpret_cast<const std::uint16_t*>(b);
    auto* out16 = reinterpret_cast<std::uint16_t*>(out);
    (std::is_same_v<T, Half> ? HWY_DYNAMIC_DISPATCH(BinaryRowF16)
                             : HWY_DYNAMIC_DISPATCH(BinaryRowBF16))(
        kind, a16, r.stride[1] == 0, b16, r.stride[2] == 0, out16, static_cast<std::size_t>(n));
  } else if constexpr (std::is_same_v<T, float>) {
    HWY_DYNAMIC_DISPATCH(BinaryRowF32)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  } else {
    HWY_DYNAMIC_DISPATCH(BinaryRowF64)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  }
  return true;
}

template <BinaryKind K>
BinaryParams binary_params(const KernelCall& call) {
  BinaryParams p;
  if constexpr (K == BinaryKind::Add || K == BinaryKind::Sub) {
    const Scalar alpha = call.params_as<AlphaParams>().alpha;
    p.alpha = alpha.to_double();
    p.alpha_int = alpha.to_int();
  } else if constexpr (K == BinaryKind::Div) {
    p.mode = call.params_as<DivParams>().rounding_mode;
  }
  return p;
}

// x^-0.5 of a dense float32 row: for a positive finite x it is rsqrt(x), whose golden row is
// correctly rounded; zeros, infinities, NaN and negative x take pow_correctly_rounded (glibc's
// pow(+-0, -0.5) = inf, where rsqrt(-0) = -inf). With rsqrt's float lanes one pass
// (pow_minus_half_cr_row_f32: those x never pass its rounding test); elsewhere the rsqrt row
// and a second pass for them, in blocks, so that an in-place row keeps its inputs.
void pow_minus_half_row(const float* in, float* out, std::size_t n) {
  const UnaryParams p;
  if (pow_minus_half_cr_row_f32(in, out, n, p)) return;
  constexpr std::size_t kBlock = 8192;
  std::vector<float> copy(in == out ? std::min(kBlock, n) : 0);
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t m = std::min(kBlock, n - i);
    const float* x = in + i;
    if (in == out) x = std::copy(in + i, in + i + m, copy.data()) - m;
    if (!unary_cr_row_f32(UnaryKind::Rsqrt, x, out + i, m, p)) {
      unary_row_f32(UnaryKind::Rsqrt, x, out + i, m, p);
    }
    HWY_DYNAMIC_DISPATCH(PowMinusHalfSpecials)(x, out + i, m);
  }
}

template <BinaryKind K>
KernelStatus binary_kernel(const KernelCall& call) {
  const BinaryParams p = binary_params<K>(call);
  const TensorView& out = call.outputs[0];
  const bool stream =
      out.numel() * static_cast<std::int64_t>(dtype_size(out.dtype)) >= kStreamingStoreMinBytes;
  std::atomic<bool> div_by_zero{false};
  visit_dtype(out.dtype, [&]<class T>() {
    for_each_row<3>({&out, &call.inputs[0], &call.inputs[1]}, [&](const RowPointers<3>& r,
                                                                  std::int64_t n) {
      if constexpr (K == BinaryKind::Pow && FloatingElement<T> && !std::is_same_v<T, double>) {
        const ExactPower e =
            r.stride[2] == 0
                ? exact_power_of(static_cast<double>(*reinterpret_cast<const T*>(r.ptr[2])))
                : ExactPower::None;
        // Note [square powers]
        // x^2 of a float32 or 16-bit x is exact in double, so glibc's pow (within 0.52 ulp) returns
        // it, and the pow row's bits are x * x rounded once: float32 rows multiply in vectors, as
        // mul, far faster than a pow call per value
        // (`elementwise_bench --benchmark_filter=pow_square`, beside a build without it;
        // docs/measurements.md).
        if constexpr (std::is_same_v<T, float>) {
          if (e == ExactPower::Two) {
            RowPointers<3> square = r;
            square.ptr[2] = r.ptr[1];
            square.stride[2] = r.stride[1];
            if (try_simd_row<T>(BinaryKind::Mul, p, square, n, stream)) return;
          }
        }
        // Note [exact powers] (exact_power.h): y = 0, 1/2, 1, 2, 3, -1, -2. 2.6M float32 in
        // [0.01, 4], one thread, run far faster this way than through glibc's pow value by value
        // (y = 1.5 still takes it) (`elementwise_bench --benchmark_filter=pow_exponent`;
        // docs/measurements.md).
        if (e != ExactPower::None) {
          if constexpr (std::is_same_v<T, float>) {
            if (r.stride[0] == 4 && r.stride[1] == 4) {
              HWY_DYNAMIC_DISPATCH(PowRowF32)
              (e, reinterpret_cast<const float*>(r.ptr[1]), reinterpret_cast<float*>(r.ptr[0]),
               static_cast<std::size_t>(n), stream);
              return;
            }
          }
          for (std::int64_t i = 0; i < n; ++i) {
            const double x =
                static_cast<double>(*reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]));
            *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = T(exact_power(x, e));
          }
          return;
        }
        // Note [correctly rounded pow]: other finite scalar exponents of a dense float32 row,
        // with plain stores (Note [streaming stores]: these rows compute more than they move).
        if constexpr (std::is_same_v<T, float>) {
          const float y = *reinterpret_cast<const float*>(r.ptr[2]);
          if (r.stride[2] == 0 && r.stride[0] == 4 && r.stride[1] == 4 && y == -0.5f) {
            pow_minus_half_row(reinterpret_cast<const float*>(r.ptr[1]),
                               reinterpret_cast<float*>(r.ptr[0]), static_cast<std::size_t>(n));
            return;
          }
          if (r.stride[2] == 0 && r.stride[0] == 4 && r.stride[1] == 4 && std::isfinite(y)) {
            const auto* x = reinterpret_cast<const float*>(r.ptr[1]);
            auto* o = reinterpret_cast<float*>(r.ptr[0]);
            const auto m = static_cast<std::size_t>(n);
            // Note [integer powers] stays in double lanes (no logarithm, fewer instructions).
            if (integer_power(y) || !pow_cr_lanes_row_f32(x, y, o, m)) {
              pow_cr_row_f32(x, y, o, m);
            }
            return;
          }
        }
      }
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || Float16Like<T> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>) {
        if (try_simd_row<T>(K, p, r, n, stream)) return;
      }
      KernelStatus status = KernelStatus::Ok;
      for (std::int64_t i = 0; i < n; ++i) {
        const T a = *reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]);
        const T b = *reinterpret_cast<const T*>(r.ptr[2] + i * r.stride[2]);
        *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = binary_scalar(K, a, b, p, status);
      }
      if (status != KernelStatus::Ok) div_by_zero.store(true, std::memory_order_relaxed);
    });
  });
  return div_by_zero.load() ? KernelStatus::IntegerDivisionByZero : KernelStatus::Ok;
}

template <CompareKind K>
KernelStatus compare_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  visit_dtype(call.inputs[0].dtype, [&]<class T>() {
    for_each_row<3>(
        {&out, &call.inputs[0], &call.inputs[1]}, [&](const RowPointers<3>& r, std::int64_t n) {
          for (std::int64_t i = 0; i < n; ++i) {
            const T a = *reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]);
            const T b = *reinterpret_cast<const T*>(r.ptr[2] + i * r.stride[2]);
            *reinterpret_cast<bool*>(r.ptr[0] + i * r.stride[0]) = compare_scalar(K, a, b);
          }
        });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_binary_kernels(KernelTable& table) {
  table.set(op_id("add"), &binary_kernel<BinaryKind::Add>, kAllDTypes);
  table.set(op_id("sub"), &binary_kernel<BinaryKind::Sub>, kNumericDTypes);
  table.set(op_id("mul"), &binary_kernel<BinaryKind::Mul>, kAllDTypes);
  table.set(op_id("div"), &binary_kernel<BinaryKind::Div>, kNumericDTypes);
  table.set(op_id("maximum"), &binary_kernel<BinaryKind::Maximum>, kAllDTypes);
  table.set(op_id("minimum"), &binary_kernel<BinaryKind::Minimum>, kAllDTypes);
  table.set(op_id("pow"), &binary_kernel<BinaryKind::Pow>, kNumericDTypes);
  table.set(op_id("eq"), &compare_kernel<CompareKind::Eq>, kAllDTypes);
  table.set(op_id("ne"), &compare_kernel<CompareKind::Ne>, kAllDTypes);
  table.set(op_id("lt"), &compare_kernel<CompareKind::Lt>, kAllDTypes);
  table.set(op_id("le"), &compare_kernel<CompareKind::Le>, kAllDTypes);
  table.set(op_id("gt"), &compare_kernel<CompareKind::Gt>, kAllDTypes);
  table.set(op_id("ge"), &compare_kernel<CompareKind::Ge>, kAllDTypes);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
