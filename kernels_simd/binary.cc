// The binary family: arithmetic (add, sub, mul, div, maximum, minimum, pow) and comparisons.
// One scalar definition per op (binary_scalar.h) covers every dtype; Highway rows cover the
// hot float32/float64 cases (dense or broadcast-scalar operands) with identical results.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels_simd/binary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels_simd/stream_fence.h"
#include "kernels_simd/binary_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace mpsim::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE V ApplyBinary(D, BinaryKind kind, V a, V b) {
  switch (kind) {
    case BinaryKind::Add:
      return hn::Add(a, b);
    case BinaryKind::Sub:
      return hn::Sub(a, b);
    case BinaryKind::Mul:
      return hn::Mul(a, b);
    case BinaryKind::Div:
      return hn::Div(a, b);
    case BinaryKind::Maximum:
    case BinaryKind::Minimum: {
      // ieee_maximum/minimum: NaN wins; for equal operands and/or of the bits orders -0 < +0.
      const bool is_max = kind == BinaryKind::Maximum;
      const V m = is_max ? hn::Max(a, b) : hn::Min(a, b);
      const V same = is_max ? hn::And(a, b) : hn::Or(a, b);
      const V r = hn::IfThenElse(hn::Eq(a, b), same, m);
      return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), r);
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
#include "kernels_simd/elementwise.h"

namespace mpsim::simd {

HWY_EXPORT(BinaryRowF32);
HWY_EXPORT(BinaryRowF64);

namespace {

// The SIMD rows handle the float ops without alpha or rounding mode, on a dense output with
// dense or broadcast-scalar inputs; everything else takes the scalar definition.
template <class T>
bool try_simd_row(BinaryKind kind, const BinaryParams& p, const RowPointers<3>& r, std::int64_t n,
                  bool stream) {
  constexpr std::int64_t kSize = sizeof(T);
  const bool simd_kind = kind != BinaryKind::Pow && p.mode == RoundingMode::None &&
                         (p.alpha == 1 || (kind != BinaryKind::Add && kind != BinaryKind::Sub));
  if (!simd_kind || r.stride[0] != kSize) return false;
  if ((r.stride[1] != kSize && r.stride[1] != 0) || (r.stride[2] != kSize && r.stride[2] != 0))
    return false;
  const auto* a = reinterpret_cast<const T*>(r.ptr[1]);
  const auto* b = reinterpret_cast<const T*>(r.ptr[2]);
  auto* out = reinterpret_cast<T*>(r.ptr[0]);
  if constexpr (std::is_same_v<T, float>) {
    HWY_DYNAMIC_DISPATCH(BinaryRowF32)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  } else {
    HWY_DYNAMIC_DISPATCH(BinaryRowF64)
    (kind, a, r.stride[1] == 0, b, r.stride[2] == 0, out, static_cast<std::size_t>(n), stream);
  }
  return true;
}

BinaryParams binary_params(const KernelCall& call) {
  BinaryParams p;
  const Scalar alpha = call.attrs.scalar("alpha", 1);
  p.alpha = alpha.to_double();
  p.alpha_int = alpha.to_int();
  const std::string_view mode = call.attrs.str("rounding_mode", "");
  p.mode = mode == "trunc"   ? RoundingMode::Trunc
           : mode == "floor" ? RoundingMode::Floor
                             : RoundingMode::None;
  return p;
}

template <BinaryKind K>
KernelStatus binary_kernel(const KernelCall& call) {
  const BinaryParams p = binary_params(call);
  const TensorView& out = call.outputs[0];
  const bool stream =
      out.numel() * static_cast<std::int64_t>(dtype_size(out.dtype)) >= kStreamingStoreMinBytes;
  std::atomic<bool> div_by_zero{false};
  visit_dtype(out.dtype, [&]<class T>() {
    for_each_row<3>({&out, &call.inputs[0], &call.inputs[1]}, [&](const RowPointers<3>& r,
                                                                  std::int64_t n) {
      if constexpr (K == BinaryKind::Pow && FloatingElement<T> && !std::is_same_v<T, double>) {
        // Note [square powers]
        // x^2 of a float32 or 16-bit x is exact in double, so glibc's pow (within 0.52
        // ulp) returns it, and the pow row's bits are x * x rounded once: float32 rows
        // multiply in vectors, as mul. 2.6M float32, one thread, 28.9 -> 0.22 ms
        // (`elementwise_bench --benchmark_filter=pow_square`, beside a build without it).
        if (r.stride[2] == 0 && static_cast<double>(*reinterpret_cast<const T*>(r.ptr[2])) == 2) {
          RowPointers<3> square = r;
          square.ptr[2] = r.ptr[1];
          square.stride[2] = r.stride[1];
          if constexpr (std::is_same_v<T, float>) {
            if (try_simd_row<T>(BinaryKind::Mul, p, square, n, stream)) return;
          }
          for (std::int64_t i = 0; i < n; ++i) {
            const double x =
                static_cast<double>(*reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]));
            *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = T(x * x);
          }
          return;
        }
      }
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
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
