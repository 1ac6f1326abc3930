// Note [pooled pixels]
// A channels-last output pixel pools its window with its channels in vectors (pool_rows.h):
// each lane runs the scalar definition of pool.cc for its channel, so the bits are the scalar
// loop's on every target. An average sums the taps in double lanes in (ih, iw) order (float32
// and the 16-bit types widened exactly), divides in double and rounds once (to float by
// F64ToF32, to float16 / bfloat16 through round-to-odd float: the correctly rounded value, as
// the scalar conversions). A maximum compares in T's lanes (the 16-bit types widened to float)
// and keeps the winning tap's own bits (NaN payloads included), and its index where one is
// asked for. Channels past the last vector take the scalar loop itself. Four vectors of channels
// run at a time, four independent sums or maxima: far faster than the scalar loops
// (`MPSIM_NUM_THREADS=1 elementwise_bench --benchmark_filter=pool/`, beside a build of the scalar
// loops; docs/measurements.md).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/pool_rows.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "core/dtype.h"
#include "hwy/highway.h"
#include "kernels_simd/cast16-inl.h"
#include "kernels_simd/pool_rows.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr std::size_t kUnroll = 4;  // vectors of channels at a time

// Calls tap(offset, index) for every tap of the window in (ih, iw) order: offset in elements
// from the image, index the flat ih * in_w + iw.
template <class Tap>
HWY_INLINE void EachTap(const PooledPixel& p, std::int64_t in_w, const Tap& tap) {
  for (std::int64_t ih = p.h.begin; ih < p.h.end; ih += p.h.step) {
    for (std::int64_t iw = p.w.begin; iw < p.w.end; iw += p.w.step) {
      tap(ih * p.h_stride + iw * p.w_stride, ih * in_w + iw);
    }
  }
}

template <class T>
constexpr bool kHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// T's values as double (16-bit ones through float: exact).
template <class T>
HWY_INLINE double Widen(T v) {
  if constexpr (kHalf<T>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// The raw lanes of T: T itself, or the 16-bit patterns.
template <class T>
using Raw = std::conditional_t<kHalf<T>, std::uint16_t, T>;

// The compare lanes of T: T itself, or float (exact for the 16-bit types).
template <class T>
using Compare = std::conditional_t<kHalf<T>, float, T>;

// Lanes of DC (T's compare lanes) from T's values at `at`.
template <class T, class DC>
HWY_INLINE hn::Vec<DC> LoadCompare(DC dc, const T* HWY_RESTRICT at) {
  if constexpr (std::is_same_v<T, Half>) {
    return F16BitsToF32ForArithmetic(
        dc, hn::LoadU(hn::Rebind<std::uint16_t, DC>(), reinterpret_cast<const std::uint16_t*>(at)));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BF16BitsToF32(
        dc, hn::LoadU(hn::Rebind<std::uint16_t, DC>(), reinterpret_cast<const std::uint16_t*>(at)));
  } else {
    return hn::LoadU(dc, at);
  }
}

// T's values at `at` as double lanes: exactly.
template <class DD, class T>
HWY_INLINE hn::Vec<DD> LoadDouble(DD dd, const T* HWY_RESTRICT at) {
  if constexpr (std::is_same_v<T, double>) {
    return hn::LoadU(dd, at);
  } else {
    return hn::PromoteTo(dd, LoadCompare(hn::Rebind<float, DD>(), at));
  }
}

// Double lanes rounded once to T and stored at `at` (16-bit types through round-to-odd float:
// the correctly rounded value, as Half(double) and BFloat16(double)).
template <class DD, class T>
HWY_INLINE void StoreDouble(DD dd, hn::Vec<DD> v, T* HWY_RESTRICT at) {
  const hn::Rebind<float, DD> df;
  const hn::Rebind<std::uint16_t, DD> d16;
  if constexpr (std::is_same_v<T, double>) {
    hn::StoreU(v, dd, at);
  } else if constexpr (std::is_same_v<T, float>) {
    hn::StoreU(F64ToF32(dd, v), df, at);
  } else if constexpr (std::is_same_v<T, Half>) {
    hn::StoreU(F32ToF16Bits(df, F64ToF32RoundOdd(dd, v)), d16,
               reinterpret_cast<std::uint16_t*>(at));
  } else {
    hn::StoreU(F32ToBF16Bits(df, F64ToF32RoundOdd(dd, v)), d16,
               reinterpret_cast<std::uint16_t*>(at));
  }
}

template <class T>
void Average(const PooledPixel& p, double divisor) {
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const bool empty = p.h.begin >= p.h.end || p.w.begin >= p.w.end;
  const hn::ScalableTag<double> dd;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(dd));
  const auto d = hn::Set(dd, divisor);
  // kU vectors of channels from c.
  const auto vectors = [&]<std::size_t kU>(std::int64_t c) {
    hn::Vec<decltype(dd)> acc[kU];
    for (auto& v : acc) v = hn::Zero(dd);
    EachTap(p, 0, [&](std::int64_t at, std::int64_t) {
      for (std::size_t u = 0; u < kU; ++u) {
        acc[u] = hn::Add(acc[u], LoadDouble(dd, x + at + c + static_cast<std::int64_t>(u) * n));
      }
    });
    for (std::size_t u = 0; u < kU; ++u) {
      StoreDouble(dd, empty ? hn::Zero(dd) : hn::Div(acc[u], d),
                  out + c + static_cast<std::int64_t>(u) * n);
    }
  };
  std::int64_t c = 0;
  for (; c + static_cast<std::int64_t>(kUnroll) * n <= p.channels; c += kUnroll * n) {
    vectors.template operator()<kUnroll>(c);
  }
  for (; c + n <= p.channels; c += n) vectors.template operator()<1>(c);
  for (; c < p.channels; ++c) {  // the scalar loop
    double acc = 0.0;
    EachTap(p, 0, [&](std::int64_t at, std::int64_t) { acc += Widen(x[at + c]); });
    out[c] = empty ? T(0.0) : T(acc / divisor);
  }
}

// A mask of DF's lanes as one of DR's (as many lanes, any lane size).
template <class DF, class DR>
HWY_INLINE hn::Mask<DR> LaneMask(DF df, DR dr, hn::Mask<DF> m) {
  using F = hn::TFromD<DF>;
  using R = hn::TFromD<DR>;
  if constexpr (sizeof(F) == sizeof(R)) {
    return hn::RebindMask(dr, m);
  } else {
    const hn::Rebind<hwy::MakeSigned<F>, DF> ds;
    const hn::Rebind<hwy::MakeSigned<R>, DF> dt;
    const auto bits = hn::BitCast(ds, hn::VecFromMask(df, m));  // all ones or zero
    if constexpr (sizeof(R) > sizeof(F)) {
      return hn::MaskFromVec(hn::BitCast(dr, hn::PromoteTo(dt, bits)));
    } else {
      return hn::MaskFromVec(hn::BitCast(dr, hn::DemoteTo(dt, bits)));
    }
  }
}

// kIndex: the lanes are as many as an int64 vector's (float32 and the 16-bit types in part
// vectors).
template <bool kIndex, class T>
void MaxLanes(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices) {
  using DI = hn::ScalableTag<std::int64_t>;
  using D = std::conditional_t<kIndex, hn::Rebind<Compare<T>, DI>, hn::ScalableTag<Compare<T>>>;
  const D d;
  const DI di;
  const hn::Rebind<Raw<T>, D> dr;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t first = p.h.begin * in_w + p.w.begin;
  const T lowest_value(-std::numeric_limits<float>::infinity());
  Raw<T> lowest_raw;
  std::memcpy(&lowest_raw, &lowest_value, sizeof(T));
  // kU vectors of channels from c: the running maxima (compare lanes), their own bits (raw
  // lanes) and their indices.
  const auto vectors = [&]<std::size_t kU>(std::int64_t c) {
    hn::Vec<D> best[kU];
    hn::Vec<decltype(dr)> raw[kU];
    hn::Vec<DI> index[kU];
    for (std::size_t u = 0; u < kU; ++u) {
      best[u] = hn::Set(d, -std::numeric_limits<Compare<T>>::infinity());
      raw[u] = hn::Set(dr, lowest_raw);
      if constexpr (kIndex) index[u] = hn::Set(di, first);
    }
    EachTap(p, in_w, [&](std::int64_t at, std::int64_t tap) {
      for (std::size_t u = 0; u < kU; ++u) {
        const T* from = x + at + c + static_cast<std::int64_t>(u) * n;
        const auto v = LoadCompare(d, from);
        const auto take = hn::Or(hn::Gt(v, best[u]), hn::IsNaN(v));
        best[u] = hn::IfThenElse(take, v, best[u]);
        if constexpr (kHalf<T>) {
          raw[u] = hn::IfThenElse(LaneMask(d, dr, take),
                                  hn::LoadU(dr, reinterpret_cast<const Raw<T>*>(from)), raw[u]);
        }
        if constexpr (kIndex)
          index[u] = hn::IfThenElse(LaneMask(d, di, take), hn::Set(di, tap), index[u]);
      }
    });
    for (std::size_t u = 0; u < kU; ++u) {
      const std::int64_t at = c + static_cast<std::int64_t>(u) * n;
      if constexpr (kHalf<T>) {
        hn::StoreU(raw[u], dr, reinterpret_cast<Raw<T>*>(out + at));
      } else {
        hn::StoreU(best[u], d, out + at);
      }
      if constexpr (kIndex) hn::StoreU(index[u], di, indices + at);
    }
  };
  std::int64_t c = 0;
  for (; c + static_cast<std::int64_t>(kUnroll) * n <= p.channels; c += kUnroll * n) {
    vectors.template operator()<kUnroll>(c);
  }
  for (; c + n <= p.channels; c += n) vectors.template operator()<1>(c);
  for (; c < p.channels; ++c) {  // the scalar loop
    T best = lowest_value;
    double best_value = -std::numeric_limits<double>::infinity();
    std::int64_t best_index = first;
    EachTap(p, in_w, [&](std::int64_t at, std::int64_t tap) {
      const double v = Widen(x[at + c]);
      if (v > best_value || std::isnan(v)) {
        best = x[at + c];
        best_value = v;
        best_index = tap;
      }
    });
    out[c] = best;
    if (indices != nullptr) indices[c] = best_index;
  }
}

template <class T>
void Bilinear(const BilinearPixel& p) {
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const hn::ScalableTag<double> dd;
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(dd));
  hn::Vec<decltype(dd)> w[4];
  for (std::size_t k = 0; k < 4; ++k) w[k] = hn::Set(dd, p.weight[k]);
  const auto vectors = [&]<std::size_t kU>(std::int64_t c) {
    hn::Vec<decltype(dd)> acc[kU];
    for (std::size_t u = 0; u < kU; ++u) {
      const std::int64_t at = c + static_cast<std::int64_t>(u) * n;
      acc[u] = hn::Mul(w[0], LoadDouble(dd, x + p.offset[0] + at));
      for (std::size_t k = 1; k < 4; ++k) {
        acc[u] = hn::Add(acc[u], hn::Mul(w[k], LoadDouble(dd, x + p.offset[k] + at)));
      }
    }
    for (std::size_t u = 0; u < kU; ++u) {
      StoreDouble(dd, acc[u], out + c + static_cast<std::int64_t>(u) * n);
    }
  };
  std::int64_t c = 0;
  for (; c + static_cast<std::int64_t>(kUnroll) * n <= p.channels; c += kUnroll * n) {
    vectors.template operator()<kUnroll>(c);
  }
  for (; c + n <= p.channels; c += n) vectors.template operator()<1>(c);
  for (; c < p.channels; ++c) {  // the scalar loop
    double acc = p.weight[0] * Widen(x[p.offset[0] + c]);
    for (std::size_t k = 1; k < 4; ++k) acc += p.weight[k] * Widen(x[p.offset[k] + c]);
    out[c] = T(acc);
  }
}

void BilinearPixelOf(const BilinearPixel& p) {
  switch (p.dtype) {
    case DType::Float64:
      return Bilinear<double>(p);
    case DType::Float16:
      return Bilinear<Half>(p);
    case DType::BFloat16:
      return Bilinear<BFloat16>(p);
    default:
      return Bilinear<float>(p);
  }
}

template <class T>
void Pool(const PooledPixel& p, double divisor, std::int64_t in_w, std::int64_t* indices,
          bool max) {
  if (!max) return Average<T>(p, divisor);
  if (indices != nullptr) return MaxLanes<true, T>(p, in_w, indices);
  MaxLanes<false, T>(p, in_w, nullptr);
}

// max: the maximum (indices: null or where they go), else the average over `divisor`.
void PoolPixel(const PooledPixel& p, double divisor, std::int64_t in_w, std::int64_t* indices,
               bool max) {
  switch (p.dtype) {
    case DType::Float64:
      return Pool<double>(p, divisor, in_w, indices, max);
    case DType::Float16:
      return Pool<Half>(p, divisor, in_w, indices, max);
    case DType::BFloat16:
      return Pool<BFloat16>(p, divisor, in_w, indices, max);
    default:
      return Pool<float>(p, divisor, in_w, indices, max);
  }
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(PoolPixel);
HWY_EXPORT(BilinearPixelOf);

void bilinear_pixel(const BilinearPixel& p) { HWY_DYNAMIC_DISPATCH(BilinearPixelOf)(p); }

void pool_average_pixel(const PooledPixel& p, double divisor) {
  HWY_DYNAMIC_DISPATCH(PoolPixel)(p, divisor, 0, nullptr, false);
}

void pool_max_pixel(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices) {
  HWY_DYNAMIC_DISPATCH(PoolPixel)(p, 0.0, in_w, indices, true);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
