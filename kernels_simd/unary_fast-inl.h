// Per-target pieces shared by the Precision::Fast float32 unary kernels (Note [fast float
// unary] in unary_fast.cc; the ops in unary_fast_exp_log.cc, unary_fast_sigmoid_gelu.cc and
// unary_fast_trig.cc): float pair arithmetic, exp's table reduction, the reciprocal estimate,
// the 32-entry permute of AVX-512, and the row loop that runs an op's fast, wide and golden
// forms (the float pair pieces: float_pair-inl.h). Only targets with FMA have fast kernels. Included after `hwy/foreach_target.h`; opens
// HWY_NAMESPACE itself.
#if defined(MPSIM_KERNELS_SIMD_UNARY_FAST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPSIM_KERNELS_SIMD_UNARY_FAST_INL_H_
#undef MPSIM_KERNELS_SIMD_UNARY_FAST_INL_H_
#else
#define MPSIM_KERNELS_SIMD_UNARY_FAST_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/float_pair-inl.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/unary.h"
#include "kernels_simd/precision_fast_tables.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_NATIVE_FMA
// 2^k for integer lanes k in [-126, 127], exactly.
HWY_INLINE VF Pow2(DF d, VI k) {
  const DI di;
  return hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 127))));
}
// 2^k for k in [-126, 127] from the bits of k + kMagic: the shift drops kMagic's bits.
HWY_INLINE VF Pow2FromMagic(DF d, VI kbits) {
  const DI di;
  return hn::BitCast(d, hn::Add(hn::ShiftLeft<23>(kbits), hn::Set(di, 127 << 23)));
}
HWY_INLINE VI IntFromMagic(VI kbits) { return hn::Sub(kbits, hn::Set(DI(), kMagicBits)); }

// One value per lane from a 16-entry table at the lanes' indices (the low 4 bits of j): one
// permute on 16-lane targets, two and a blend on 8-lane ones, a gather elsewhere.
HWY_INLINE VF Lookup16(DF d, const float* table, VI j) {
  const DI di;
  if constexpr (hn::MaxLanes(DF()) == 16) {
    return hn::TableLookupLanes(hn::Load(d, table),
                                hn::IndicesFromVec(d, hn::And(j, hn::Set(di, 15))));
  } else if constexpr (hn::MaxLanes(DF()) == 8) {
    const auto idx = hn::IndicesFromVec(d, hn::And(j, hn::Set(di, 7)));
    const MF upper = hn::RebindMask(d, hn::Ne(hn::And(j, hn::Set(di, 8)), hn::Zero(di)));
    return hn::IfThenElse(upper, hn::TableLookupLanes(hn::Load(d, table + 8), idx),
                          hn::TableLookupLanes(hn::Load(d, table), idx));
  } else {
    return hn::GatherIndex(d, table, hn::And(j, hn::Set(di, 15)));
  }
}

// e^(a + a_lo) = (hi + lo) 2^k for a in [-232, 89], |a_lo| <= 2^-17, relative error below
// 2^-29; hi + lo is not normalized (|lo| < 0.023 hi). a = (16 k + j) ln2/16 + r with
// |r| <= ln2/32: r1 = a - (16 k + j) ln2_hi/16 is exact (both terms are multiples of 2^-29 and
// |r1| < 2^-5), the rest of ln2/16 and a_lo round once (2^-30 of r). e^r = 1 + p,
// p = r + r^2 (1/2 + r/6 + r^2/24) (truncation < 2^-34), and 2^(j/16) is a float pair from a
// 16-entry table (Lookup16): hi = 2^(j/16)_hi, lo = 2^(j/16)_hi p + 2^(j/16)_lo.
// kbits: the bits of 16 k + j + kMagic.
// The structs of vectors here are built whole ({...}), never default-constructed and then
// filled: GCC's implicit constructor of such a struct lacks the target attribute on NEON
// ("inlining failed ... target specific option mismatch").
struct ExpParts {
  VF hi, lo;
  VI kbits;
};
HWY_INLINE ExpParts ExpReduce(DF d, VF a, VF a_lo) {
  const VF t = hn::MulAdd(a, hn::Set(d, 0x1.715476p+4f), hn::Set(d, kMagic));
  const VF kf = hn::Sub(t, hn::Set(d, kMagic));
  const VF r1 = hn::NegMulAdd(kf, hn::Set(d, 0x1.62e430p-5f), a);  // exact
  const VF r = hn::Add(r1, hn::NegMulAdd(kf, hn::Set(d, -0x1.05c610p-33f), a_lo));
  VF q = hn::MulAdd(r, hn::Set(d, 0x1.555556p-5f), hn::Set(d, 0x1.555556p-3f));  // 1/24, 1/6
  q = hn::MulAdd(q, r, hn::Set(d, 0.5f));
  const VF p = hn::MulAdd(hn::Mul(r, r), q, r);
  const VI kbits = hn::BitCast(DI(), t);
  const VF hi = Lookup16(d, kExp2Hi, kbits);
  return {hi, hn::MulAdd(hi, p, Lookup16(d, kExp2Lo, kbits)), kbits};
}
// 2^k of ExpParts' kbits (k in [-126, 127]) and k itself.
HWY_INLINE VF ExpScale(DF d, VI kbits) { return Pow2FromMagic(d, hn::ShiftRight<4>(kbits)); }
HWY_INLINE VI ExpK(VI kbits) { return hn::ShiftRight<4>(IntFromMagic(kbits)); }

// 1/v to 2^-14 or better: the quotients below correct their residual with it, so its error
// enters squared. AVX-512's estimate has 14 bits; AVX2's 12 take a Newton step; elsewhere the
// estimate may be coarser and a division is safe.
HWY_INLINE VF Reciprocal(DF d, VF v) {
#if HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86
  (void)d;
  return hn::ApproximateReciprocal(v);
#elif HWY_TARGET == HWY_AVX2
  const VF r = hn::ApproximateReciprocal(v);
  return hn::MulAdd(r, hn::NegMulAdd(v, r, hn::Set(d, 1.0f)), r);
#else
  return hn::Div(hn::Set(d, 1.0f), v);
#endif
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// One value per lane from a 32-entry table at the low 5 bits of idx's lanes: one vpermt2ps.
HWY_INLINE VF Lookup32(const float* table, VI idx) {
  return VF{_mm512_permutex2var_ps(_mm512_load_ps(table), idx.raw, _mm512_load_ps(table + 16))};
}
#endif

// Each op has a fast range: Wide(x) marks the lanes outside it, which Eval<true> (the full range,
// rarer, slower) computes instead of Eval<false>; of those, Golden(x) marks the lanes left to the
// golden kernel (non-finite inputs, mostly).
// Stores a float vector: streaming (`out` aligned to the vector) or normal.
HWY_INLINE void StoreOut(VF v, DF d, float* out, bool stream) {
  if (stream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// Op::Eval<kWide>(d, x), or Op::Eval<kWide>(d, x, p) for the ops with parameters (softplus).
template <class Op, bool kWide>
HWY_INLINE VF EvalOp(DF d, VF x, const UnaryParams& p) {
  if constexpr (requires { Op::template Eval<kWide>(d, x, p); }) {
    return Op::template Eval<kWide>(d, x, p);
  } else {
    return Op::template Eval<kWide>(d, x);
  }
}

template <class Op>
HWY_INLINE void FastVector(const float* in, float* out, const UnaryParams& p, bool stream) {
  const DF d;
  const VF x = hn::LoadU(d, in);
  const MF wide = Op::Wide(d, x);
  if (HWY_LIKELY(hn::AllFalse(d, wide))) {
    StoreOut(EvalOp<Op, false>(d, x, p), d, out, stream);
    return;
  }
  const VF y = hn::IfThenElse(wide, EvalOp<Op, true>(d, x, p), EvalOp<Op, false>(d, x, p));
  const MF golden = Op::Golden(d, x);
  if (HWY_LIKELY(hn::AllFalse(d, golden))) {
    StoreOut(y, d, out, stream);
    return;
  }
  if constexpr (requires { Op::Special(d, x); }) {
    // Note [libm special lanes]: the golden kernel's values, in vectors.
    StoreOut(hn::IfThenElse(golden, Op::Special(d, x), y), d, out, stream);
    return;
  }
  HWY_ALIGN float xs[hn::MaxLanes(DF())];
  hn::Store(x, d, xs);  // `in` may alias `out`
  StoreOut(y, d, out, stream);
  std::uint8_t bits[(hn::MaxLanes(DF()) + 7) / 8 + 8] = {};
  hn::StoreMaskBits(d, golden, bits);
  UnaryParams one = p;
  one.stream_out = false;
  one.fast = false;
  for (std::size_t j = 0; j < hn::Lanes(d); ++j) {
    if ((bits[j / 8] >> (j % 8)) & 1) unary_row_f32(Op::kKind, &xs[j], &out[j], 1, one);
  }
}

template <class Op>
void FastRow(const float* in, float* out, std::size_t n, const UnaryParams& p) {
  const DF d;
  const std::size_t step = hn::Lanes(d);
  const bool stream =
      p.stream_out && reinterpret_cast<std::uintptr_t>(out) % (step * sizeof(float)) == 0;
  std::size_t i = 0;
  for (; i + step <= n; i += step) {
    hwy::Prefetch(in + i + 1024);  // 4 KiB ahead
    FastVector<Op>(in + i, out + i, p, stream);
  }
  if (i < n) {
    HWY_ALIGN float buf_in[hn::MaxLanes(DF())] = {};
    HWY_ALIGN float buf_out[hn::MaxLanes(DF())];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    FastVector<Op>(buf_in, buf_out, p, false);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
  if (stream) stream_fence();
}

// The fast rows of each group of ops: false where `kind` is not the group's, or has no fast
// kernel for these parameters (the caller computes the golden result). Defined in
// unary_fast_exp_log.cc, unary_fast_sigmoid_gelu.cc and unary_fast_trig.cc.
bool FastExpLogRow(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p);
bool FastSigmoidGeluRow(UnaryKind kind, const float* in, float* out, std::size_t n,
                        const UnaryParams& p);
bool FastTrigRow(UnaryKind kind, const float* in, float* out, std::size_t n, const UnaryParams& p);
#endif  // HWY_NATIVE_FMA

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPSIM_KERNELS_SIMD_UNARY_FAST_INL_H_
