// The unary family's kernels over tensors: rows of any layout and dtype gathered, as needed,
// into the contiguous float rows of unary.cc (per SIMD target), integer ops in scalar code, and
// the registration of every unary op.
#include "kernels_simd/unary.h"

#include <type_traits>

#include "kernels_simd/elementwise.h"
#include "kernels_simd/scalar_math.h"
#include "kernels_simd/table16.h"
#include "kernels_simd/transpose.h"

namespace mpsim::simd {

namespace {

// Elements per chunk when a row is strided or 16-bit: gathered into float buffers on the
// stack (3 KiB), computed by the contiguous row kernel, and scattered back.
constexpr std::int64_t kChunk = 256;

// Integer abs/neg/square wrap in two's complement, as PyTorch's (abs(INT_MIN) == INT_MIN).
template <IntegralElement T>
T integer_unary(UnaryKind kind, T v) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(v);
  switch (kind) {
    case UnaryKind::Abs:
      return v < 0 ? static_cast<T>(U(0) - u) : v;
    case UnaryKind::Neg:
      return static_cast<T>(U(0) - u);
    case UnaryKind::Square:
      return static_cast<T>(static_cast<std::uint64_t>(u) * u);  // no int promotion overflow
    case UnaryKind::Relu:
      return v > 0 ? v : T(0);
    default:
      return v;  // the front end sends no other integer op here
  }
}

template <class T>
void unary_row(UnaryKind kind, const UnaryParams& p, const RowPointers<2>& r, std::int64_t n) {
  auto* out = r.ptr[0];
  const auto* in = r.ptr[1];
  const std::int64_t so = r.stride[0], si = r.stride[1];
  auto at = [](auto* base, std::int64_t stride, std::int64_t i) { return base + i * stride; };
  // float32 results: the fast kernel when asked for and there is one, else the golden one (in
  // float lanes where the op and target have them, Note [correctly rounded float lanes]).
  auto row_f32 = [kind](const float* src, float* dst, std::size_t m, const UnaryParams& q) {
    if (q.fast && unary_fast_row_f32(kind, src, dst, m, q)) return;
    if (!unary_cr_row_f32(kind, src, dst, m, q)) unary_row_f32(kind, src, dst, m, q);
  };
  if constexpr (std::is_same_v<T, float>) {
    if (so == 4 && si == 4) {
      row_f32(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out),
              static_cast<std::size_t>(n), p);
      return;
    }
  }
  if constexpr (std::is_same_v<T, float> || Float16Like<T>) {
    UnaryParams q = p;
    q.stream_out = false;  // the results go to a buffer on the stack
    float buf_in[kChunk];
    float buf_f32[kChunk];
    double buf_f64[kChunk];
    if constexpr (Float16Like<T>) {
      // Dense 16-bit rows: the widening and the rounding of the double results in vectors,
      // with the scalar conversions' bits (transpose.h); the gain is in docs/measurements.md.
      if (so == 2 && si == 2) {
        constexpr bool kBF16 = std::is_same_v<T, BFloat16>;
        const auto* in16 = reinterpret_cast<const std::uint16_t*>(in);
        auto* out16 = reinterpret_cast<std::uint16_t*>(out);
        auto compute = [&](const std::uint16_t* src, std::uint16_t* dst, std::size_t count) {
          for (std::size_t c = 0; c < count; c += kChunk) {
            const std::size_t m = std::min<std::size_t>(kChunk, count - c);
            (kBF16 ? bf16_to_f32_row : f16_to_f32_row)(src + c, buf_in, m);
            unary_row_f32_to_f64(kind, buf_in, buf_f64, m, q);
            (kBF16 ? f64_to_bf16_row : f64_to_f16_row)(buf_f64, dst + c, m);
          }
        };
        // Note [exact 16-bit unary rows]: float lanes, the same bits
        if (unary_exact_row_16(kind, kBF16, in16, out16, static_cast<std::size_t>(n))) return;
        // Note [16-bit unary tables]: the same bits by lookup (the kernel ignores p.fast here)
        const bool defaults = kind != UnaryKind::Softplus || (p.beta == 1 && p.threshold == 20);
        if (static_cast<std::size_t>(n) >= kTable16MinValues && defaults) {
          static_assert(2 * kNumUnaryKinds <= 256);  // the math family's keys follow
          const auto key = static_cast<std::uint32_t>(kind) * 2 + (kBF16 ? 1 : 0);
          lookup16_row(table16(key, compute), in16, out16, static_cast<std::size_t>(n));
          return;
        }
        compute(in16, out16, static_cast<std::size_t>(n));
        return;
      }
    }
    for (std::int64_t c = 0; c < n; c += kChunk) {
      const std::int64_t m = std::min(kChunk, n - c);
      for (std::int64_t i = 0; i < m; ++i) {
        buf_in[i] = static_cast<float>(*reinterpret_cast<const T*>(at(in, si, c + i)));
      }
      if constexpr (std::is_same_v<T, float>) {
        row_f32(buf_in, buf_f32, static_cast<std::size_t>(m), q);
        for (std::int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(at(out, so, c + i)) = buf_f32[i];
      } else {
        // 16-bit outputs round the double result once (Note [16-bit float conversions]).
        unary_row_f32_to_f64(kind, buf_in, buf_f64, static_cast<std::size_t>(m), q);
        for (std::int64_t i = 0; i < m; ++i)
          *reinterpret_cast<T*>(at(out, so, c + i)) = T(buf_f64[i]);
      }
    }
  } else if constexpr (std::is_same_v<T, double>) {
    if (so == 8 && si == 8) {
      const auto* src = reinterpret_cast<const double*>(in);
      auto* dst = reinterpret_cast<double*>(out);
      const auto m = static_cast<std::size_t>(n);
      // Note [exact float64 rows], Note [float64 exp rows].
      if (exact_rows_f64(kind, src, dst, m) || math_rows_f64(kind, src, dst, m)) return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<double*>(at(out, so, i)) =
          scalar_unary(kind, *reinterpret_cast<const double*>(at(in, si, i)), p);
    }
  } else if constexpr (IntegralElement<T>) {
    for (std::int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<T*>(at(out, so, i)) =
          integer_unary(kind, *reinterpret_cast<const T*>(at(in, si, i)));
    }
  }
}

// Note [streaming stores]: the ops whose rows move memory faster than they compute. The
// others' rows (exp, sigmoid, gelu, ..., float or double lanes, golden or Fast) run slower with
// streaming stores.
constexpr bool streams_well(UnaryKind kind) {
  switch (kind) {
    case UnaryKind::Abs:
    case UnaryKind::Neg:
    case UnaryKind::Relu:
    case UnaryKind::Square:
    case UnaryKind::Sqrt:
    case UnaryKind::Reciprocal:
      return true;
    default:
      return false;
  }
}

template <UnaryKind K>
KernelStatus unary_kernel(const KernelCall& call) {
  UnaryKind kind = K;
  UnaryParams p;
  if constexpr (K == UnaryKind::GeluErf) {
    if (call.params_as<GeluParams>().approximate == GeluApproximation::Tanh) {
      kind = UnaryKind::GeluTanh;
    }
  } else if constexpr (K == UnaryKind::Softplus) {
    const auto& softplus = call.params_as<SoftplusParams>();
    p.beta = softplus.beta;
    p.threshold = softplus.threshold;
  }
  p.fast = call.fast();
  const TensorView& out = call.outputs[0];
  const std::int64_t out_bytes = out.numel() * static_cast<std::int64_t>(dtype_size(out.dtype));
  p.stream_out = streams_well(kind) && out_bytes >= kStreamingStoreMinBytes;
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      for_each_row<2>({&out, &call.inputs[0]}, [&](const RowPointers<2>& r, std::int64_t n) {
        unary_row<T>(kind, p, r, n);
      });
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_unary_kernels(KernelTable& table) {
  // Integer and float dtypes: abs, neg, relu and square keep integer dtypes (PyTorch).
  table.set(op_id("abs"), &unary_kernel<UnaryKind::Abs>, kNumericDTypes);
  table.set(op_id("neg"), &unary_kernel<UnaryKind::Neg>, kNumericDTypes);
  table.set(op_id("relu"), &unary_kernel<UnaryKind::Relu>, kNumericDTypes);
  table.set(op_id("square"), &unary_kernel<UnaryKind::Square>, kNumericDTypes);
  // Float dtypes only: the front end computes integer inputs in float32.
  table.set(op_id("exp"), &unary_kernel<UnaryKind::Exp>, kFloatDTypes);
  table.set(op_id("log"), &unary_kernel<UnaryKind::Log>, kFloatDTypes);
  table.set(op_id("log1p"), &unary_kernel<UnaryKind::Log1p>, kFloatDTypes);
  table.set(op_id("expm1"), &unary_kernel<UnaryKind::Expm1>, kFloatDTypes);
  table.set(op_id("sqrt"), &unary_kernel<UnaryKind::Sqrt>, kFloatDTypes);
  table.set(op_id("rsqrt"), &unary_kernel<UnaryKind::Rsqrt>, kFloatDTypes);
  table.set(op_id("sin"), &unary_kernel<UnaryKind::Sin>, kFloatDTypes);
  table.set(op_id("cos"), &unary_kernel<UnaryKind::Cos>, kFloatDTypes);
  table.set(op_id("tanh"), &unary_kernel<UnaryKind::Tanh>, kFloatDTypes);
  table.set(op_id("erf"), &unary_kernel<UnaryKind::Erf>, kFloatDTypes);
  table.set(op_id("sigmoid"), &unary_kernel<UnaryKind::Sigmoid>, kFloatDTypes);
  table.set(op_id("silu"), &unary_kernel<UnaryKind::Silu>, kFloatDTypes);
  table.set(op_id("gelu"), &unary_kernel<UnaryKind::GeluErf>, kFloatDTypes);
  table.set(op_id("softplus"), &unary_kernel<UnaryKind::Softplus>, kFloatDTypes);
  table.set(op_id("reciprocal"), &unary_kernel<UnaryKind::Reciprocal>, kFloatDTypes);
}

}  // namespace mpsim::simd
