// Box-Muller for randn / normal (normal.h).
//
// Note [normal transform]
// z = sqrt(-2 log u1) cos(2 pi u2) is evaluated with mpsim's own double log and cos, built
// only from IEEE operations that round the same everywhere (+, -, *, /, sqrt, exact integer
// and bit manipulation; no fused multiply-add, no approximate reciprocal, no libm), so randn
// gives the same bits on every SIMD target, machine, compiler and C library; the scalar
// target runs the same code one lane wide. The constants come from
// tools/gen_normal_constants.py.
// - log u1: u1 = m 2^e with m in [sqrt(1/2), sqrt(2)) (exponent bits); log m = 2 atanh(f),
//   f = (m - 1) / (m + 1) (m - 1 exact), by its Taylor series to f^19 (truncation < 2^-55
//   relative); log u1 = e ln2_hi + (2f + (e ln2_lo + 2 f s Q(s))), e ln2_hi exact.
// - cos(2 pi u2): v = 4 u2 = lo32 / 2^30 splits, in integer arithmetic, into the nearest
//   quadrant q and t = v - q in [-1/2, 1/2) (exact); cos(2 pi u2) = cos(pi/2 (q + t)) is
//   +-cos(pi/2 t) or +-sin(pi/2 t) by q mod 4, each a Taylor series in t to t^16 / t^17
//   (truncation < 2^-58).
// - w = 0 - 2 log u1 >= +0, z = sqrt(w) * (the cosine).
// The relative error of z is below 2^-49 (measured against a long double evaluation in
// tests/random_test.cc), so a float32 result is the correctly rounded Box-Muller value except
// within 2^-25 ulp of a rounding boundary.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/normal.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/normal.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
using DU = hn::RebindToUnsigned<DD>;
using VD = hn::Vec<DD>;
using VU = hn::Vec<DU>;

// tools/gen_normal_constants.py
constexpr double kLogQ[] = {0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
                            0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
                            0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5};
constexpr double kCosC[] = {0x1.0000000000000p+0,  -0x1.3bd3cc9be45dep+0, 0x1.03c1f081b5ac4p-2,
                            -0x1.55d3c7e3cbffap-6, 0x1.e1f506891babbp-11, -0x1.a6d1f2a204a8cp-16,
                            0x1.f9d38a3763cc3p-22, -0x1.b6e24f44b128fp-28, 0x1.20c62c2f2d7f5p-34};
constexpr double kSinC[] = {0x1.921fb54442d18p+0,  -0x1.4abbce625be53p-1, 0x1.466bc6775aae2p-4,
                            -0x1.32d2cce62bd86p-8, 0x1.50783487ee782p-13, -0x1.e3074fde8871fp-19,
                            0x1.e8f434d018d63p-25, -0x1.6fadb9f155744p-31, 0x1.aaec32af93359p-38};
constexpr double kLn2Hi = 0x1.62e42fefa3980p-1, kLn2Lo = 0x1.bcd5e4f1d9cc0p-47;

// c[0] + c[1] x + ... by Horner's rule, a separate multiply and add per step.
template <std::size_t N>
HWY_INLINE VD Poly(VD x, const double (&c)[N]) {
  const DD d;
  VD r = hn::Set(d, c[N - 1]);
  for (std::size_t k = N - 1; k-- > 0;) r = hn::Add(hn::Mul(r, x), hn::Set(d, c[k]));
  return r;
}

// The double of an integer below 2^52 held in a u64 lane (exact).
HWY_INLINE VD SmallToDouble(VU u) {
  const DD d;
  const DU du;
  return hn::Sub(hn::BitCast(d, hn::Or(u, hn::Set(du, 0x4330000000000000ull))),
                 hn::Set(d, 0x1p52));
}

HWY_INLINE VD Normal(VU bits) {
  const DD d;
  const DU du;
  // log u1, u1 = (hi + 1) 2^-32 in [2^-32, 1].
  const VD u1 = hn::Mul(hn::Add(SmallToDouble(hn::ShiftRight<32>(bits)), hn::Set(d, 1.0)),
                        hn::Set(d, 0x1p-32));
  const VU ub = hn::BitCast(du, u1);
  VD m = hn::BitCast(d, hn::Or(hn::And(ub, hn::Set(du, 0x000fffffffffffffull)),
                               hn::Set(du, 0x3ff0000000000000ull)));  // [1, 2)
  VD e = hn::Sub(SmallToDouble(hn::ShiftRight<52>(ub)), hn::Set(d, 1023.0));
  const auto high = hn::Gt(m, hn::Set(d, 0x1.6a09e667f3bcdp+0));  // sqrt(2)
  m = hn::IfThenElse(high, hn::Mul(m, hn::Set(d, 0.5)), m);
  e = hn::IfThenElse(high, hn::Add(e, hn::Set(d, 1.0)), e);
  const VD f = hn::Div(hn::Sub(m, hn::Set(d, 1.0)), hn::Add(m, hn::Set(d, 1.0)));
  const VD s = hn::Mul(f, f);
  const VD tail = hn::Mul(hn::Mul(f, s), Poly(s, kLogQ));  // f s Q(s)
  const VD two_f = hn::Add(f, f);
  const VD log_u1 = hn::Add(hn::Mul(e, hn::Set(d, kLn2Hi)),
                            hn::Add(two_f, hn::Add(hn::Mul(e, hn::Set(d, kLn2Lo)),
                                                   hn::Add(tail, tail))));
  const VD w = hn::Sub(hn::Zero(d), hn::Add(log_u1, log_u1));
  // cos(2 pi u2) = cos(pi/2 v), v = lo 2^-30 = q + t.
  const VU lo = hn::And(bits, hn::Set(du, 0xffffffffull));
  const VU q = hn::ShiftRight<30>(hn::Add(lo, hn::Set(du, 1ull << 29)));  // nearest, 0..4
  // t 2^30 = lo - q 2^30 in [-2^29, 2^29): offset by 2^29 to stay unsigned.
  const VU t_biased = hn::Sub(hn::Add(lo, hn::Set(du, 1ull << 29)), hn::ShiftLeft<30>(q));
  const VD t = hn::Mul(hn::Sub(SmallToDouble(t_biased), hn::Set(d, 0x1p29)), hn::Set(d, 0x1p-30));
  const VD t2 = hn::Mul(t, t);
  // q mod 4: 0 -> cos, 1 -> -sin, 2 -> -cos, 3 -> sin. One polynomial per lane, its
  // coefficients chosen by q's parity: cos(pi/2 t) = C(t^2) (times 1, exact) and
  // sin(pi/2 t) = t S(t^2).
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(q, hn::Set(du, 1)), hn::Set(du, 1)));
  VD p = hn::IfThenElse(odd, hn::Set(d, kSinC[8]), hn::Set(d, kCosC[8]));
  for (int k = 7; k >= 0; --k) {
    p = hn::Add(hn::Mul(p, t2), hn::IfThenElse(odd, hn::Set(d, kSinC[k]), hn::Set(d, kCosC[k])));
  }
  const VD c = hn::Mul(p, hn::IfThenElse(odd, t, hn::Set(d, 1.0)));
  const VU negate = hn::ShiftLeft<62>(hn::Add(q, hn::Set(du, 1)));  // bit 63 set for q = 1, 2
  const VU sign = hn::And(negate, hn::Set(du, 0x8000000000000000ull));
  return hn::Mul(hn::Sqrt(w), hn::BitCast(d, hn::Xor(hn::BitCast(du, c), sign)));
}

void NormalFromBits(const std::uint64_t* bits, double* z, std::size_t n) {
  const DD d;
  const DU du;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(Normal(hn::LoadU(du, bits + i)), d, z + i);
  if (i < n) {
    HWY_ALIGN std::uint64_t b[HWY_MAX_BYTES / sizeof(std::uint64_t)] = {};
    HWY_ALIGN double r[HWY_MAX_BYTES / sizeof(double)];
    for (std::size_t j = i; j < n; ++j) b[j - i] = bits[j];
    hn::Store(Normal(hn::Load(du, b)), d, r);
    for (std::size_t j = i; j < n; ++j) z[j] = r[j - i];
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(NormalFromBits);

void normal_from_bits(const std::uint64_t* bits, double* z, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(NormalFromBits)(bits, z, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
