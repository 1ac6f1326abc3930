// float64 unary rows in vectors (Note [float64 exp rows]): exp. The other float64 math ops are
// glibc's functions value by value (scalar_math.h), or the exact rows of unary.cc.

// Note [float64 exp rows]
// ~~~~~~~~~~~~~~~~~~~~~~~
// x = N ln2/16 + r, N = round(16 x / ln2) = 16 k + j, j in [0, 16): r1 = x - N L1 is exact (L1 =
// ln2/16 to 38 bits, so N L1 has at most 53 and the difference, below 2^-5.5, sits on x's grid
// or L1's), r = r1 - N L2 rounded once (the rest of ln2/16 is below 2^-106). e^r - 1 = p =
// r + r^2 (1/2 + r/6 + ... + r^5/5040) (truncation below 2^-59 for |r| <= ln2/32), and
// e^x = 2^k (T + (T p + T_lo)) with T = 2^(j/16) as a double pair (kF64Exp2Hi/Lo, 2^-107).
// Roundings: r's 2^-53 |r| (2^-58.5 of the result), p's and the FMA's (2^-58.5 each), then the
// final addition's half ulp: within 0.57 ulp, and correctly rounded except near a midpoint.
// 2^k is added to the exponent field, so the vector range is where the result is normal and
// k in [-1020, 1023]: -707 <= x <= 709; other lanes (NaN, infinities, overflow, subnormal and
// zero results) take glibc's exp, lane by lane, and the row's tail runs through a padded vector:
// every lane's bits depend on its own input only. Targets without FMA round the polynomial's
// products apart: within 1 ulp there too, and their last bits may differ from FMA targets'.
// Tested against long double (unary_test: Float64ExpRowsWithinHalfAnUlpAndABit); speed:
// bench/torch_sweep.py ("f64 exp").

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary_f64.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <cmath>

#include "hwy/highway.h"
#include "kernels_simd/cr_tables.h"
#include "kernels_simd/unary.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DD = hn::ScalableTag<double>;
using VD = hn::Vec<DD>;
using DI64 = hn::RebindToSigned<DD>;
using VI64 = hn::Vec<DI64>;

// One value per lane from a 16-entry double table at the low 4 bits of idx: one vpermt2pd on
// AVX-512, a gather elsewhere.
HWY_INLINE VD Lookup16(DD d, const double* table, VI64 idx) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)d;
  return VD{_mm512_permutex2var_pd(_mm512_load_pd(table), idx.raw, _mm512_load_pd(table + 8))};
#else
  return hn::GatherIndex(d, table, hn::And(idx, hn::Set(DI64(), 15)));
#endif
}

HWY_INLINE void ExpVectorF64(const double* in, double* out) {
  const DD d;
  const DI64 di;
  const VD x = hn::LoadU(d, in);
  const VD magic = hn::Set(d, 0x1.8p52);
  const VD t = hn::MulAdd(x, hn::Set(d, 0x1.71547652b82fep+4), magic);  // 16/ln2
  const VD kf = hn::Sub(t, magic);
  const VD r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e42fefa0000p-5), x);  // exact
  const VD r = hn::NegMulAdd(kf, hn::Set(d, 0x1.cf79abc9e3b3ap-44), r1);
  VD c = hn::MulAdd(r, hn::Set(d, 1.0 / 5040), hn::Set(d, 1.0 / 720));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 120));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 24));
  c = hn::MulAdd(r, c, hn::Set(d, 1.0 / 6));
  c = hn::MulAdd(r, c, hn::Set(d, 0.5));
  const VD p = hn::MulAdd(hn::Mul(r, r), c, r);
  const VI64 kbits = hn::BitCast(di, t);
  const VD th = Lookup16(d, kF64Exp2Hi, kbits);
  const VD y = hn::Add(th, hn::MulAdd(th, p, Lookup16(d, kF64Exp2Lo, kbits)));
  // 2^k with k = N >> 4: (t's bits with j cleared) << 48 is k << 52 (kMagic's bits leave).
  const VI64 k52 = hn::ShiftLeft<48>(hn::And(kbits, hn::Set(di, ~std::int64_t{15})));
  hn::StoreU(hn::BitCast(d, hn::Add(hn::BitCast(di, y), k52)), d, out);
  const auto special =
      hn::Not(hn::And(hn::Ge(x, hn::Set(d, -707.0)), hn::Le(x, hn::Set(d, 709.0))));
  if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
    HWY_ALIGN double xs[hn::MaxLanes(DD())];
    hn::Store(x, d, xs);  // `in` may alias `out`
    for (std::size_t j = 0; j < hn::Lanes(d); ++j) {
      if (!(xs[j] >= -707.0 && xs[j] <= 709.0)) out[j] = std::exp(xs[j]);
    }
  }
}

}  // namespace

bool MathRowsF64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  if (kind != UnaryKind::Exp) return false;
  const DD d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) ExpVectorF64(in + i, out + i);
  if (i < n) {
    HWY_ALIGN double buf_in[hn::MaxLanes(DD())] = {};
    HWY_ALIGN double buf_out[hn::MaxLanes(DD())];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    ExpVectorF64(buf_in, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
  return true;
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(MathRowsF64);

bool math_rows_f64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(MathRowsF64)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
