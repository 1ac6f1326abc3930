// The unary family's rows: every elementwise math op is one functor (unary_ops-inl.h) applied
// by one row template, per SIMD target; the kernels over tensors are in unary_kernel.cc.
// Numerics: Note [golden unary evaluation] in vec_math-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/unary.cc"
#include "kernels_simd/unary.h"

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/unary_ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Ops with an AVX-512 speculative path (Note [rounding test]) define Fast(d, x, params, &fail), or
// the same in two stages (FastStage1, FastStage2: Note [pipelined speculative paths]), whose result
// on lanes outside `fail` is within 2^-37 relative of the exact value.
template <class Op, class D>
concept HasOneStageFast = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  { Op::Fast(d, x, p, fail) };
};
// Note [pipelined speculative paths]
// A speculative path is one long chain of dependent instructions per vector (sigmoid: ~95 cycles
// for ~36 uops). Out-of-order execution overlaps the chains of successive vectors only as far as
// its scheduler holds the uops still waiting for their inputs, and a long chain keeps most of its
// uops waiting: the loop ran at about half the two vector ports' rate. Ops whose speculative path
// splits in two (FastStage1: x -> t, FastStage2: (x, t) -> y) therefore run software-pipelined:
// each step issues stage 1 of the next vector and stage 2 of this one, whose input t is then
// already computed, so its uops wait little. The golden evaluations of log, sin, cos and tanh split
// the same way (EvalStage1/EvalStage2, below) and run pipelined on every target. Measured
// (bench/elementwise_bench unary_cache/, one thread, A/B against the library before): sigmoid, silu
// and gelu 10-20% less time, log, sin and tanh 14-22% (exp, whose chain is mostly one polynomial,
// gained ~5% and stays unsplit). The arithmetic of each vector, and so every output bit, is
// unchanged (test: PipelinedPathsGiveTheSameBits...).
template <class Op, class D>
concept HasFastStages = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  { Op::FastStage2(d, x, Op::FastStage1(d, x), p, fail) };
};
template <class Op, class D>
concept HasFast = HasOneStageFast<Op, D> || HasFastStages<Op, D>;
// The golden evaluation in two stages (EvalStage1: x -> t, EvalStage2: (x, t, &special) -> r),
// pipelined the same way on every target: log, sin, cos, tanh.
template <class Op, class D>
concept HasEvalStages = requires(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* special) {
  { Op::EvalStage2(d, x, Op::EvalStage1(d, x), p, special) };
};

// A wide op whose special lanes have the scalar path's values in vectors (Note [libm special
// lanes] in libm_special-inl.h): Special(d, x) on those lanes, none left to scalar_unary.
template <class Op, class D>
concept HasVectorSpecial = requires(D d, hn::Vec<D> x) {
  {Op::Special(d, x)};
};

// The golden evaluation of a wide op: Eval, or its two stages.
template <class Op, class D>
HWY_INLINE hn::Vec<D> Evaluate(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* special) {
  if constexpr (HasEvalStages<Op, D>) {
    return Op::EvalStage2(d, x, Op::EvalStage1(d, x), p, special);
  } else {
    return Op::Eval(d, x, p, special);
  }
}

template <class Op, class D>
HWY_INLINE hn::Vec<D> FastPath(D d, hn::Vec<D> x, const UnaryParams& p, hn::Mask<D>* fail) {
  if constexpr (HasFastStages<Op, D>) {
    return Op::FastStage2(d, x, Op::FastStage1(d, x), p, fail);
  } else {
    return Op::Fast(d, x, p, fail);
  }
}

// Elements one UnaryVector call handles: a full float vector for float-only evaluation into
// float, else as many floats as a double vector has lanes (they are widened to double).
template <class Op, class TOut>
HWY_INLINE std::size_t UnaryStep() {
  if constexpr (!Op::kWide && sizeof(TOut) == 4) {
    return hn::Lanes(hn::ScalableTag<float>());
  } else {
    return hn::Lanes(hn::ScalableTag<double>());
  }
}

#if MPSIM_SPECULATIVE_GOLDEN
// Note [rounding test]: the fast result y of x is stored only if every lane passes.
template <class Op, class D>
HWY_INLINE bool FastResultStands(D d, hn::Vec<D> x, hn::Vec<D> y, hn::Mask<D> fail) {
  auto safe = RoundsSafely(d, y);
  if constexpr (Op::kZeroExact) safe = hn::Or(safe, hn::Eq(x, hn::Zero(d)));
  return hn::AllTrue(d, hn::AndNot(fail, safe));
}
#endif

// Evaluates UnaryStep() floats at `in`, writing results of type TOut (float: rounded once;
// double: unrounded) to `out`. in and out may alias.
// Stores a float vector: streaming (`out` aligned to the vector) or normal. A vector narrower
// than 16 bytes never streams (Note [streaming stores]).
template <class D>
HWY_INLINE void StoreFloats(hn::Vec<D> v, D d, float* out, bool stream) {
  constexpr bool kStreamable = hn::MaxLanes(D()) * sizeof(float) >= 16;
  if (kStreamable && stream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// Note [hard lanes]: for a guarded op, recomputes the stored float results of the lanes that
// are not special and whose double result r lies near a rounding boundary or is a float
// subnormal of at least 2^-151.
// v: the float inputs (in a register: `in` may alias `out`). A plain store after a streaming
// one to the same line is still ordered.
template <class Op, class D, class VF>
HWY_INLINE void PatchHardLanes(D dd, hn::Vec<D> r, hn::Mask<D> special, VF v, float* out,
                               const UnaryParams& p) {
  if constexpr (Op::kGuarded) {
    // results below 2^-151 round to +-0 whatever their error (2^-43 relative)
    const auto tiny = hn::Lt(hn::Abs(r), hn::Set(dd, 0x1p-151));
    const auto hard =
        hn::AndNot(hn::Or(special, tiny), hn::Not(RoundsSafelyWithin<kHardMarginUlps>(dd, r)));
    if (HWY_LIKELY(hn::AllFalse(dd, hard))) return;
    const hn::Rebind<float, D> df;
    HWY_ALIGN float xs[HWY_MAX_BYTES / sizeof(double)];
    hn::StoreU(v, df, xs);
    std::uint8_t bits[HWY_MAX_BYTES / 8 / 8 + 8] = {};
    hn::StoreMaskBits(dd, hard, bits);
    for (std::size_t j = 0; j < hn::Lanes(dd); ++j) {
      if (((bits[j / 8] >> (j % 8)) & 1) && !hard_lane_exempt(Op::kKind, xs[j]))
        out[j] = scalar_unary_hard_f32(Op::kKind, xs[j], p);
    }
  }
}

// `stream`: float results go out through streaming stores (Note [streaming stores]); `out`
// is then aligned to the vector of results.
template <class Op, class TOut>
HWY_INLINE void UnaryVector(const float* in, TOut* out, const UnaryParams& p, bool stream) {
  if constexpr (!Op::kWide && sizeof(TOut) == 4) {
    const hn::ScalableTag<float> df;
    StoreFloats(Op::EvalF32(df, hn::LoadU(df, in)), df, out, stream);
  } else {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const auto v = hn::LoadU(df, in);
    if constexpr (!Op::kWide) {
      hn::StoreU(hn::PromoteTo(dd, Op::EvalF32(df, v)), dd, out);
    } else {
      hn::Mask<decltype(dd)> special;
      const auto x = hn::PromoteTo(dd, v);
      if constexpr (sizeof(TOut) == 4 && HasFast<Op, decltype(dd)>) {
        // Note [rounding test]: the cheap evaluation when every lane provably rounds right.
        hn::Mask<decltype(dd)> fail;
        const auto y = FastPath<Op>(dd, x, p, &fail);
        if (HWY_LIKELY(FastResultStands<Op>(dd, x, y, fail))) {
          StoreFloats(hn::DemoteTo(df, y), df, out, stream);
          return;
        }
      }
      auto r = Evaluate<Op>(dd, x, p, &special);
      if constexpr (Op::kOddAtZero) r = hn::IfThenElse(hn::Eq(x, hn::Zero(dd)), x, r);
      if constexpr (HasVectorSpecial<Op, decltype(dd)>) {
        // Float results take the float lanes' values: DemoteTo is no IEEE conversion of
        // infinities on every target (Highway's scalar target clamps them to +-FLT_MAX). The
        // special values cost a division: only vectors with a special lane pay it.
        if (HWY_LIKELY(hn::AllFalse(dd, special))) {
          if constexpr (sizeof(TOut) == 4) {
            StoreFloats(hn::DemoteTo(df, r), df, out, stream);
          } else {
            hn::StoreU(r, dd, out);
          }
        } else if constexpr (sizeof(TOut) == 4) {
          StoreFloats(
              hn::IfThenElse(Op::SpecialLanes(df, v), Op::Special(df, v), hn::DemoteTo(df, r)), df,
              out, stream);
        } else {
          hn::StoreU(hn::IfThenElse(special, Op::Special(dd, x), r), dd, out);
        }
        if constexpr (sizeof(TOut) == 4) PatchHardLanes<Op>(dd, r, special, v, out, p);
        return;
      }
      const bool any_special = !hn::AllFalse(dd, special);
      HWY_ALIGN float saved[HWY_MAX_BYTES / sizeof(double)];
      hn::StoreU(v, df, saved);  // `in` may alias `out`
      if constexpr (sizeof(TOut) == 4) {
        StoreFloats(hn::DemoteTo(df, r), df, out, stream);
      } else {
        hn::StoreU(r, dd, out);
      }
      if (HWY_UNLIKELY(any_special)) {
        std::uint8_t bits[HWY_MAX_BYTES / 8 / 8 + 8] = {};
        hn::StoreMaskBits(dd, special, bits);
        for (std::size_t j = 0; j < hn::Lanes(dd); ++j) {
          if ((bits[j / 8] >> (j % 8)) & 1) {
            // A plain store after a streaming one to the same line is still ordered.
            if constexpr (sizeof(TOut) == 4 && Op::kGuarded) {
              // Note [hard lanes]: finite special lanes too (exp beyond its range, ...):
              // the double path where it rounds safely, else long double
              if (std::isfinite(saved[j]) && !hard_lane_exempt(Op::kKind, saved[j])) {
                const double y = scalar_unary(Op::kKind, static_cast<double>(saved[j]), p);
                out[j] = rounds_safely_to_f32(y) ? static_cast<float>(y)
                                                 : scalar_unary_hard_f32(Op::kKind, saved[j], p);
                continue;
              }
            }
            out[j] = static_cast<TOut>(scalar_unary(Op::kKind, static_cast<double>(saved[j]), p));
          }
        }
      }
      if constexpr (sizeof(TOut) == 4) PatchHardLanes<Op>(dd, r, special, v, out, p);
    }
  }
}

// Note [pipelined speculative paths] over the whole vectors of a float row but the last: returns
// the elements done. kFast: the speculative path's stages and the rounding test (AVX-512); else the
// golden evaluation's stages, stored when no lane is special. A vector that fails is redone by
// UnaryVector (the whole path, special lanes included). In-place rows are safe: vector i + 1 is
// loaded before vector i is stored, and the redo reads vector i before writing it.
template <class Op, bool kFast>
HWY_INLINE std::size_t UnaryPipelined(const float* in, float* out, std::size_t n,
                                      const UnaryParams& p, bool stream) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t step = hn::Lanes(dd);
  if (n < 2 * step) return 0;
  auto stage1 = [dd](hn::Vec<decltype(dd)> x) {
    if constexpr (kFast) {
      return Op::FastStage1(dd, x);
    } else {
      return Op::EvalStage1(dd, x);
    }
  };
  auto x_next = hn::PromoteTo(dd, hn::LoadU(df, in));
  auto t_next = stage1(x_next);
  std::size_t i = 0;
  for (; i + 2 * step <= n; i += step) {
    // 4 KiB ahead: the hardware prefetcher alone falls behind these long loop bodies (16M
    // values of gelu took 2.97 ns each against 1.56 on 2.6M; `unary/gelu` and `unary_sd/gelu`
    // of elementwise_bench)
    hwy::Prefetch(in + i + 1024);
    const auto x = x_next;
    const auto t = t_next;
    x_next = hn::PromoteTo(dd, hn::LoadU(df, in + i + step));
    t_next = stage1(x_next);
    hn::Vec<decltype(dd)> y;
    bool ok;
    if constexpr (kFast) {
      hn::Mask<decltype(dd)> fail;
      y = Op::FastStage2(dd, x, t, p, &fail);
      if constexpr (HasVectorSpecial<Op, decltype(dd)>) {
        // The special lanes take the functor's values (no rounding test) and the others stand
        // or fall as usual: a masked row (-inf in every other lane) stays on this path.
        const auto special = Op::SpecialLanes(dd, x);
        if (HWY_UNLIKELY(!hn::AllFalse(dd, special))) {
          if (FastResultStands<Op>(dd, x, hn::IfThenElse(special, hn::Set(dd, 1.0), y),
                                   hn::AndNot(special, fail))) {
            const auto v = hn::LoadU(df, in + i);
            StoreFloats(hn::IfThenElse(Op::SpecialLanes(df, v), Op::Special(df, v),
                                       hn::DemoteTo(df, y)),
                        df, out + i, stream);
          } else {
            UnaryVector<Op>(in + i, out + i, p, stream);
          }
          continue;
        }
      }
      ok = FastResultStands<Op>(dd, x, y, fail);
    } else {
      hn::Mask<decltype(dd)> special;
      y = Op::EvalStage2(dd, x, t, p, &special);
      if constexpr (Op::kOddAtZero) y = hn::IfThenElse(hn::Eq(x, hn::Zero(dd)), x, y);
      if constexpr (HasVectorSpecial<Op, decltype(dd)>) {
        // As UnaryVector: the float lanes' values (vector i + 1 is loaded, i not yet stored).
        const auto v = hn::LoadU(df, in + i);  // not yet overwritten (DemoteTo clamps inf)
        if (HWY_LIKELY(hn::AllFalse(dd, special))) {
          StoreFloats(hn::DemoteTo(df, y), df, out + i, stream);
        } else {
          StoreFloats(hn::IfThenElse(Op::SpecialLanes(df, v), Op::Special(df, v),
                                     hn::DemoteTo(df, y)),
                      df, out + i, stream);
        }
        PatchHardLanes<Op>(dd, y, special, v, out + i, p);
        continue;
      }
      ok = hn::AllFalse(dd, special);
    }
    if (HWY_LIKELY(ok)) {
      if constexpr (!kFast) {
        const auto v = hn::LoadU(df, in + i);  // before the store: `in` may alias `out`
        StoreFloats(hn::DemoteTo(df, y), df, out + i, stream);
        PatchHardLanes<Op>(dd, y, hn::FirstN(dd, 0), v, out + i, p);
      } else {
        StoreFloats(hn::DemoteTo(df, y), df, out + i, stream);
      }
    } else {
      UnaryVector<Op>(in + i, out + i, p, stream);
    }
  }
  return i;
}

// A contiguous row of any length: whole steps, then the tail through a padded buffer so that
// every element goes through the same lane arithmetic (results do not depend on position).
template <class Op, class TOut>
void UnaryRow(const float* in, TOut* out, std::size_t n, const UnaryParams& p) {
  const std::size_t step = UnaryStep<Op, TOut>();
  const bool stream = sizeof(TOut) == 4 && p.stream_out &&
                      reinterpret_cast<std::uintptr_t>(out) % (step * sizeof(TOut)) == 0;
  std::size_t i = 0;
  if constexpr (sizeof(TOut) == 4 && HasFastStages<Op, hn::ScalableTag<double>>) {
    i = UnaryPipelined<Op, true>(in, out, n, p, stream);
  } else if constexpr (sizeof(TOut) == 4 && HasEvalStages<Op, hn::ScalableTag<double>>) {
    i = UnaryPipelined<Op, false>(in, out, n, p, stream);
  }
  for (; i + step <= n; i += step) {
    hwy::Prefetch(in + i + 1024);
    UnaryVector<Op>(in + i, out + i, p, stream);
  }
  if (i < n) {
    HWY_ALIGN float buf_in[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN TOut buf_out[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    UnaryVector<Op>(buf_in, buf_out, p, false);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
  if (stream) stream_fence();
}

template <class TOut>
using RowFn = void (*)(const float*, TOut*, std::size_t, const UnaryParams&);

// The row kernel of every kind, placed by the functor's own kind (no parallel list to keep in
// step with the enum).
template <class TOut, class... Ops>
constexpr auto MakeRows() {
  std::array<RowFn<TOut>, kNumUnaryKinds> rows{};
  ((rows[static_cast<int>(Ops::kKind)] = &UnaryRow<Ops, TOut>), ...);
  return rows;
}
template <class TOut>
constexpr auto kRows = MakeRows<TOut, OpAbs, OpNeg, OpExp, OpLog, OpLog1p, OpExpm1, OpSqrt, OpRsqrt,
                                OpSin, OpCos, OpTanh, OpErf, OpRelu, OpSigmoid, OpSilu, OpGeluErf,
                                OpGeluTanh, OpSoftplus, OpReciprocal, OpSquare>();

void UnaryRowF32(UnaryKind kind, const float* in, float* out, std::size_t n, const UnaryParams& p) {
  kRows<float>[static_cast<int>(kind)](in, out, n, p);
}
void UnaryRowF32ToF64(UnaryKind kind, const float* in, double* out, std::size_t n,
                      const UnaryParams& p) {
  kRows<double>[static_cast<int>(kind)](in, out, n, p);
}

// Note [exact float64 rows]
// float64 ops whose scalar definition (scalar_unary) is one or two IEEE operations or a bit
// operation: abs, neg, sqrt, rsqrt (1 / sqrt), reciprocal, square, relu. Dense rows apply the
// same operations in vectors: the same bits (NaN payloads included: each lane is the IEEE
// operation the scalar path performs). The other float64 ops are glibc's functions, value by
// value. The gain over value-by-value rows: docs/measurements.md.
template <class Op>
void ExactRowF64(const double* in, double* out, std::size_t n) {
  const hn::ScalableTag<double> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto x = hn::LoadU(d, in + i);
    if constexpr (Op::kKind == UnaryKind::Rsqrt) {
      hn::StoreU(RsqrtSpecial(d, x), d, out + i);
    } else {
      hn::StoreU(Op::EvalF32(d, x), d, out + i);
    }
  }
  for (; i < n; ++i) out[i] = scalar_unary(Op::kKind, in[i], UnaryParams{});
}

// Whether ExactRowF64 ran (kind one of Note [exact float64 rows]'s).
bool ExactRowsF64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  switch (kind) {
    case UnaryKind::Abs:
      ExactRowF64<OpAbs>(in, out, n);
      return true;
    case UnaryKind::Neg:
      ExactRowF64<OpNeg>(in, out, n);
      return true;
    case UnaryKind::Sqrt:
      ExactRowF64<OpSqrt>(in, out, n);
      return true;
    case UnaryKind::Rsqrt:
      ExactRowF64<OpRsqrt>(in, out, n);
      return true;
    case UnaryKind::Reciprocal:
      ExactRowF64<OpReciprocal>(in, out, n);
      return true;
    case UnaryKind::Square:
      ExactRowF64<OpSquare>(in, out, n);
      return true;
    case UnaryKind::Relu:
      ExactRowF64<OpRelu>(in, out, n);
      return true;
    default:
      return false;
  }
}

// exp of doubles (softmax and logsumexp rows): ExpCore on [-708, 709], glibc elsewhere.
// Relative error < 2^-47 (not a float64 result: callers round to float dtypes).
void ExpRowF64(const double* in, double* out, std::size_t n) {
  const hn::ScalableTag<double> d;
  const std::size_t lanes = hn::Lanes(d);
  auto one_vector = [&](const double* src, double* dst) {
    const auto x = hn::LoadU(d, src);
    const auto special = OutsideClosed(d, x, -708.0, 709.0);
    hn::StoreU(ExpCore(d, Clamp(d, x, -708.0, 709.0)), d, dst);
    if (HWY_UNLIKELY(!hn::AllFalse(d, special))) {
      for (std::size_t j = 0; j < lanes; ++j) {
        if (!(src[j] >= -708.0 && src[j] <= 709.0)) dst[j] = std::exp(src[j]);
      }
    }
  };
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) one_vector(in + i, out + i);
  if (i < n) {
    HWY_ALIGN double buf_in[HWY_MAX_BYTES / sizeof(double)] = {};
    HWY_ALIGN double buf_out[HWY_MAX_BYTES / sizeof(double)];
    for (std::size_t j = i; j < n; ++j) buf_in[j - i] = in[j];
    one_vector(buf_in, buf_out);
    for (std::size_t j = i; j < n; ++j) out[j] = buf_out[j - i];
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(UnaryRowF32);
HWY_EXPORT(UnaryRowF32ToF64);
HWY_EXPORT(ExpRowF64);
HWY_EXPORT(ExactRowsF64);

void unary_row_f32(UnaryKind kind, const float* in, float* out, std::size_t n,
                   const UnaryParams& p) {
  HWY_DYNAMIC_DISPATCH(UnaryRowF32)(kind, in, out, n, p);
}
void unary_row_f32_to_f64(UnaryKind kind, const float* in, double* out, std::size_t n,
                          const UnaryParams& p) {
  HWY_DYNAMIC_DISPATCH(UnaryRowF32ToF64)(kind, in, out, n, p);
}
void exp_row_f64(const double* in, double* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(ExpRowF64)(in, out, n);
}
bool exact_rows_f64(UnaryKind kind, const double* in, double* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(ExactRowsF64)(kind, in, out, n);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
