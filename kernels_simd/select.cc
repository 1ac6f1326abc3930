// where(cond, a, b) and clamp(x, min, max): memory-bound selections on the shared elementwise
// driver (Note [fixed blocks]). clamp's float32 and float64 rows with dense or broadcast
// operands run in Highway vectors (Note [clamp rows]), the rest as scalar loops.
#include <cmath>
#include <cstdint>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/select.cc"
// clang-format off: foreach_target.h must come before any header that includes highway.h
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Note [clamp rows]
// clamp_one lane by lane: x where x is NaN; else lo where lo is NaN or x < lo; then hi where hi is
// NaN or the value > hi (lo > hi gives hi). Selections only, so every lane keeps the bits of the
// operand it takes (-0.0 against 0.0, NaN payloads), as the scalar loop. lo and hi are each dense
// or one broadcast value (stride 0). In vectors this runs far faster than the scalar loop
// (`elementwise_bench --benchmark_filter=clamp`, beside a build of the scalar loop;
// docs/measurements.md).
template <class T>
void ClampRow(const T* x, const T* lo, bool lo_scalar, const T* hi, bool hi_scalar, bool has_lo,
              bool has_hi, T* out, std::size_t n) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto one = [&](hn::Vec<decltype(d)> v, hn::Vec<decltype(d)> l, hn::Vec<decltype(d)> h) {
    const auto keep = hn::IsNaN(v);
    auto r = v;
    if (has_lo) r = hn::IfThenElse(hn::AndNot(keep, hn::Or(hn::IsNaN(l), hn::Lt(v, l))), l, r);
    if (has_hi) r = hn::IfThenElse(hn::AndNot(keep, hn::Or(hn::IsNaN(h), hn::Gt(r, h))), h, r);
    return r;
  };
  const auto bound = [&](const T* p, bool scalar, std::size_t i) {
    return scalar ? hn::Set(d, p[0]) : hn::LoadU(d, p + i);
  };
  std::size_t i = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
  // x86's minps and maxps return their second operand where the two compare equal or either is
  // NaN: max(lo, x) is x unless x < lo (a NaN x kept bit for bit, -0.0 kept against 0.0), and
  // min(hi, r) is r unless r > hi. With bounds that are one value each and not NaN (an absent
  // bound: -inf or +inf), that is clamp_one's selection in two instructions instead of ten:
  // [2, 320, 64, 64] float32, one thread, 0.31-0.34 ms against 0.55-0.57 with the selections
  // (`bench/torch_sweep.py --filter clamp`).
  const bool plain_lo = !has_lo || (lo_scalar && !std::isnan(lo[0]));
  const bool plain_hi = !has_hi || (hi_scalar && !std::isnan(hi[0]));
  if (plain_lo && plain_hi) {
    const auto l = hn::Set(d, has_lo ? lo[0] : -INFINITY);
    const auto h = hn::Set(d, has_hi ? hi[0] : INFINITY);
    for (; i + lanes <= n; i += lanes) {
      hn::StoreU(hn::Min(h, hn::Max(l, hn::LoadU(d, x + i))), d, out + i);
    }
  }
#endif
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(one(hn::LoadU(d, x + i), bound(lo, lo_scalar, i), bound(hi, hi_scalar, i)), d,
               out + i);
  }
  if (i < n) {  // the tail through padded buffers (no masked loads: see BinaryRowImpl)
    HWY_ALIGN T bx[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T bl[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T bh[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T bo[HWY_MAX_BYTES / sizeof(T)];
    for (std::size_t j = i; j < n; ++j) {
      bx[j - i] = x[j];
      bl[j - i] = lo[lo_scalar ? 0 : j];
      bh[j - i] = hi[hi_scalar ? 0 : j];
    }
    hn::Store(one(hn::Load(d, bx), hn::Load(d, bl), hn::Load(d, bh)), d, bo);
    for (std::size_t j = i; j < n; ++j) out[j] = bo[j - i];
  }
}

void ClampRowF32(const float* x, const float* lo, bool lo_scalar, const float* hi, bool hi_scalar,
                 bool has_lo, bool has_hi, float* out, std::size_t n) {
  ClampRow(x, lo, lo_scalar, hi, hi_scalar, has_lo, has_hi, out, n);
}

void ClampRowF64(const double* x, const double* lo, bool lo_scalar, const double* hi,
                 bool hi_scalar, bool has_lo, bool has_hi, double* out, std::size_t n) {
  ClampRow(x, lo, lo_scalar, hi, hi_scalar, has_lo, has_hi, out, n);
}

}  // namespace mpsim::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels_simd/elementwise.h"
#include "kernels_simd/select.h"

namespace mpsim::simd {

HWY_EXPORT(ClampRowF32);
HWY_EXPORT(ClampRowF64);

namespace {

template <class T>
T load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

KernelStatus where_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const std::size_t size = dtype_size(out.dtype);
  for_each_row<4>({&out, &call.inputs[0], &call.inputs[1], &call.inputs[2]},
                  [&](const RowPointers<4>& r, std::int64_t n) {
                    for (std::int64_t i = 0; i < n; ++i) {
                      const char* src = load<bool>(r.ptr[1] + i * r.stride[1])
                                            ? r.ptr[2] + i * r.stride[2]
                                            : r.ptr[3] + i * r.stride[3];
                      std::memcpy(r.ptr[0] + i * r.stride[0], src, size);
                    }
                  });
  return KernelStatus::Ok;
}

// clamp = minimum(maximum(x, lo), hi) with NaN propagation from x and from either bound; for
// lo > hi every element becomes hi, as PyTorch.
template <class T>
T clamp_one(T x, T lo, T hi, bool has_lo, bool has_hi) {
  if constexpr (Float16Like<T>) {
    return T(clamp_one(static_cast<float>(x), static_cast<float>(lo), static_cast<float>(hi),
                       has_lo, has_hi));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (has_lo && (std::isnan(lo) || x < lo)) x = lo;
    if (has_hi && (std::isnan(hi) || x > hi)) x = hi;
    return x;
  } else {
    if (has_lo && x < lo) x = lo;
    if (has_hi && x > hi) x = hi;
    return x;
  }
}

// Note [clamp rows]: a dense x and output, each bound dense or broadcast; false otherwise.
template <class T>
bool clamp_simd_row(const RowPointers<4>& r, std::int64_t n, bool has_lo, bool has_hi) {
  constexpr std::int64_t kSize = sizeof(T);
  const auto dense_or_scalar = [](std::int64_t stride) { return stride == kSize || stride == 0; };
  if (r.stride[0] != kSize || r.stride[1] != kSize || !dense_or_scalar(r.stride[2]) ||
      !dense_or_scalar(r.stride[3])) {
    return false;
  }
  const auto* x = reinterpret_cast<const T*>(r.ptr[1]);
  const auto* lo = reinterpret_cast<const T*>(r.ptr[2]);
  const auto* hi = reinterpret_cast<const T*>(r.ptr[3]);
  auto* out = reinterpret_cast<T*>(r.ptr[0]);
  if constexpr (std::is_same_v<T, float>) {
    HWY_DYNAMIC_DISPATCH(ClampRowF32)
    (x, lo, r.stride[2] == 0, hi, r.stride[3] == 0, has_lo, has_hi, out,
     static_cast<std::size_t>(n));
  } else {
    HWY_DYNAMIC_DISPATCH(ClampRowF64)
    (x, lo, r.stride[2] == 0, hi, r.stride[3] == 0, has_lo, has_hi, out,
     static_cast<std::size_t>(n));
  }
  return true;
}

KernelStatus clamp_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const bool has_lo = call.params_as<ClampParams>().has_min;
  const bool has_hi = call.params_as<ClampParams>().has_max;
  visit_dtype(out.dtype, [&]<class T>() {
    for_each_row<4>({&out, &call.inputs[0], &call.inputs[1], &call.inputs[2]},
                    [&](const RowPointers<4>& r, std::int64_t n) {
                      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                        if (clamp_simd_row<T>(r, n, has_lo, has_hi)) return;
                      }
                      for (std::int64_t i = 0; i < n; ++i) {
                        *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) =
                            clamp_one(load<T>(r.ptr[1] + i * r.stride[1]),
                                      load<T>(r.ptr[2] + i * r.stride[2]),
                                      load<T>(r.ptr[3] + i * r.stride[3]), has_lo, has_hi);
                      }
                    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_select_kernels(KernelTable& table) {
  table.set(op_id("where"), &where_kernel, kAllDTypes);
  table.set(op_id("clamp"), &clamp_kernel, kNumericDTypes);
}

}  // namespace mpsim::simd
#endif  // HWY_ONCE
