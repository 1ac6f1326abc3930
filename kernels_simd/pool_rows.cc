// Note [pooled pixels]
// A channels-last output pixel of float32 or float64 pools its window with its channels in
// vectors (pool_rows.h): each lane runs the scalar definition of pool.cc for its channel, so
// the bits are the scalar loop's on every target. An average sums the taps in double lanes in
// (ih, iw) order (float32 widened exactly), divides in double and rounds once (F64ToF32 rounds
// to nearest even, as the scalar cast); a maximum selects lane by lane, keeping the winning
// tap's own bits (NaN payloads included), and its index where one is asked for. Channels past
// the last vector take the scalar loop itself. Four vectors of channels run at a time, four
// independent sums or maxima. [1, 320, 64, 64] channels-last, 3x3 windows, stride 1, pad 1, one
// thread: avg_pool2d 2.5 -> 0.51 ms, max_pool2d 34.5 -> 0.45 ms (`MPSIM_NUM_THREADS=1
// elementwise_bench --benchmark_filter=pool/`, beside a build of the scalar loops; PyTorch 1.13
// on one thread: 0.50 and 1.28 ms).
#include <cmath>
#include <cstdint>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/pool_rows.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
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

// T's lanes as double: as they are, or float widened exactly.
template <class DD, class T>
HWY_INLINE hn::Vec<DD> LoadDouble(DD dd, const T* HWY_RESTRICT at) {
  if constexpr (std::is_same_v<T, double>) {
    return hn::LoadU(dd, at);
  } else {
    return hn::PromoteTo(dd, hn::LoadU(hn::Rebind<float, DD>(), at));
  }
}

template <class DD, class T>
HWY_INLINE void StoreDouble(DD dd, hn::Vec<DD> v, T* HWY_RESTRICT at) {
  if constexpr (std::is_same_v<T, double>) {
    hn::StoreU(v, dd, at);
  } else {
    hn::StoreU(F64ToF32(dd, v), hn::Rebind<float, DD>(), at);
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
  std::int64_t c = 0;
  for (; c + static_cast<std::int64_t>(kUnroll) * n <= p.channels; c += kUnroll * n) {
    hn::Vec<decltype(dd)> acc[kUnroll];
    for (auto& v : acc) v = hn::Zero(dd);
    EachTap(p, 0, [&](std::int64_t at, std::int64_t) {
      for (std::size_t u = 0; u < kUnroll; ++u) {
        acc[u] = hn::Add(acc[u], LoadDouble(dd, x + at + c + static_cast<std::int64_t>(u) * n));
      }
    });
    for (std::size_t u = 0; u < kUnroll; ++u) {
      const auto mean = empty ? hn::Zero(dd) : hn::Div(acc[u], d);
      StoreDouble(dd, mean, out + c + static_cast<std::int64_t>(u) * n);
    }
  }
  for (; c + n <= p.channels; c += n) {
    auto acc = hn::Zero(dd);
    EachTap(p, 0, [&](std::int64_t at, std::int64_t) {
      acc = hn::Add(acc, LoadDouble(dd, x + at + c));
    });
    StoreDouble(dd, empty ? hn::Zero(dd) : hn::Div(acc, d), out + c);
  }
  for (; c < p.channels; ++c) {  // the scalar loop
    double acc = 0.0;
    EachTap(p, 0, [&](std::int64_t at, std::int64_t) { acc += static_cast<double>(x[at + c]); });
    out[c] = empty ? T(0) : static_cast<T>(acc / divisor);
  }
}

// The running maxima of one vector of channels (lanes of D, T's own type) and, when kIndex,
// their indices in int64 lanes of DI (as many lanes as D).
template <bool kIndex, class D, class DI>
struct Running {
  hn::Vec<D> best;
  hn::Vec<DI> index;
};

template <class D, class DI>
HWY_INLINE hn::Mask<DI> IndexMask(D d, DI di, hn::Mask<D> m) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 8) {
    return hn::RebindMask(di, m);
  } else {
    // float lanes: all-ones or zero bits, sign-extended to int64.
    const hn::Rebind<std::int32_t, D> d32;
    return hn::MaskFromVec(hn::PromoteTo(di, hn::BitCast(d32, hn::VecFromMask(d, m))));
  }
}

// kIndex: D holds as many lanes as an int64 vector (float32 in half vectors).
template <bool kIndex, class T>
void MaxLanes(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices) {
  using DI = hn::ScalableTag<std::int64_t>;
  using D = std::conditional_t<kIndex, hn::Rebind<T, DI>, hn::ScalableTag<T>>;
  const D d;
  const DI di;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const std::int64_t n = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t first = p.h.begin * in_w + p.w.begin;
  const auto lowest = hn::Set(d, -std::numeric_limits<T>::infinity());
  std::int64_t c = 0;
  for (; c + static_cast<std::int64_t>(kUnroll) * n <= p.channels; c += kUnroll * n) {
    Running<kIndex, D, DI> r[kUnroll];
    for (auto& s : r) {
      s.best = lowest;
      if constexpr (kIndex) s.index = hn::Set(di, first);
    }
    EachTap(p, in_w, [&](std::int64_t at, std::int64_t index) {
      for (std::size_t u = 0; u < kUnroll; ++u) {
        const auto v = hn::LoadU(d, x + at + c + static_cast<std::int64_t>(u) * n);
        const auto take = hn::Or(hn::Gt(v, r[u].best), hn::IsNaN(v));
        r[u].best = hn::IfThenElse(take, v, r[u].best);
        if constexpr (kIndex) {
          r[u].index = hn::IfThenElse(IndexMask(d, di, take), hn::Set(di, index), r[u].index);
        }
      }
    });
    for (std::size_t u = 0; u < kUnroll; ++u) {
      const std::int64_t at = c + static_cast<std::int64_t>(u) * n;
      hn::StoreU(r[u].best, d, out + at);
      if constexpr (kIndex) hn::StoreU(r[u].index, di, indices + at);
    }
  }
  for (; c + n <= p.channels; c += n) {
    Running<kIndex, D, DI> r{lowest, {}};
    if constexpr (kIndex) r.index = hn::Set(di, first);
    EachTap(p, in_w, [&](std::int64_t at, std::int64_t index) {
      const auto v = hn::LoadU(d, x + at + c);
      const auto take = hn::Or(hn::Gt(v, r.best), hn::IsNaN(v));
      r.best = hn::IfThenElse(take, v, r.best);
      if constexpr (kIndex) r.index = hn::IfThenElse(IndexMask(d, di, take), hn::Set(di, index), r.index);
    });
    hn::StoreU(r.best, d, out + c);
    if constexpr (kIndex) hn::StoreU(r.index, di, indices + c);
  }
  for (; c < p.channels; ++c) {  // the scalar loop
    T best = -std::numeric_limits<T>::infinity();
    std::int64_t best_index = first;
    EachTap(p, in_w, [&](std::int64_t at, std::int64_t index) {
      const T v = x[at + c];
      if (v > best || std::isnan(v)) {
        best = v;
        best_index = index;
      }
    });
    out[c] = best;
    if (indices != nullptr) indices[c] = best_index;
  }
}

void PoolAverage(const PooledPixel& p, double divisor) {
  if (p.dtype == DType::Float64) return Average<double>(p, divisor);
  Average<float>(p, divisor);
}

void PoolMax(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices) {
  if (p.dtype == DType::Float64) {
    if (indices != nullptr) return MaxLanes<true, double>(p, in_w, indices);
    return MaxLanes<false, double>(p, in_w, nullptr);
  }
  if (indices != nullptr) return MaxLanes<true, float>(p, in_w, indices);
  MaxLanes<false, float>(p, in_w, nullptr);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpsim::simd {

HWY_EXPORT(PoolAverage);
HWY_EXPORT(PoolMax);

void pool_average_pixel(const PooledPixel& p, double divisor) {
  HWY_DYNAMIC_DISPATCH(PoolAverage)(p, divisor);
}

void pool_max_pixel(const PooledPixel& p, std::int64_t in_w, std::int64_t* indices) {
  HWY_DYNAMIC_DISPATCH(PoolMax)(p, in_w, indices);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
