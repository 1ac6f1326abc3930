// The scan family: running reductions along each contiguous row of the last dim, rows in
// parallel (each row in order: the bits do not depend on the thread count).
//
// Note [golden scans]
// cumsum accumulates floats in double with Neumaier's compensation (the running error of each
// addition, exact by TwoSum, carried in a second double) and rounds each output once: a
// float32, float16 or bfloat16 result is the correctly rounded prefix sum but for a
// cancellation below 2^-100 of the terms' magnitudes; float64 results within 1 ULP plus
// 2^-100 of the terms' sum of magnitudes. cumprod multiplies in double (float64 inputs: their
// products chain), logcumsumexp adds in double through log1p(exp(-|a - b|)); both round each
// output once from a double value whose error grows by a double rounding per step (n 2^-53
// relative: within 1 ULP of float32 for rows below 2^28). cummax and cummin are exact.
// Integers (cumsum, cumprod) accumulate in int64, wrapping as torch's.
#include "kernels_simd/scan.h"

#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert.h"
#include "core/dtype.h"
#include "kernels_simd/order_key.h"

namespace mpsim::simd {

namespace {

enum class ScanKind : std::uint8_t { Sum, Prod, LogSumExp, Max, Min };

template <class T>
void scan_row(ScanKind kind, const T* in, T* out, std::int64_t* index, std::int64_t n) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (kind == ScanKind::Sum || kind == ScanKind::Prod) {
      std::uint64_t acc = kind == ScanKind::Sum ? 0 : 1;  // wraps as two's complement
      for (std::int64_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::uint64_t>(static_cast<std::int64_t>(in[i]));
        acc = kind == ScanKind::Sum ? acc + v : acc * v;
        out[i] = static_cast<T>(static_cast<std::int64_t>(acc));
      }
      return;
    }
  }
  if constexpr (std::is_floating_point_v<T> || Float16Like<T>) {
    if (kind == ScanKind::Sum) {
      double sum = 0, carry = 0;  // Neumaier: sum + carry is the exact prefix sum to ~2^-106
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = convert<double>(in[i]);
        const double t = sum + v;
        if (std::isfinite(t)) {
          carry += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
        }
        sum = t;
        out[i] = static_cast<T>(std::isfinite(sum) ? sum + carry : sum);
      }
      return;
    }
    if (kind == ScanKind::Prod) {
      double p = 1;
      for (std::int64_t i = 0; i < n; ++i) {
        p *= convert<double>(in[i]);
        out[i] = static_cast<T>(p);
      }
      return;
    }
    if (kind == ScanKind::LogSumExp) {
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = convert<double>(in[i]);
        if (std::isnan(v) || std::isnan(m)) {
          m = std::numeric_limits<double>::quiet_NaN();
        } else if (v == m && std::isinf(v)) {
          // -inf with -inf stays -inf; +inf with +inf stays +inf
        } else {
          const double hi = std::fmax(m, v), lo = std::fmin(m, v);
          m = hi + std::log1p(std::exp(lo - hi));
        }
        out[i] = static_cast<T>(m);
      }
      return;
    }
  }
  if (kind == ScanKind::Max || kind == ScanKind::Min) {
    auto best = order_key(in[0]);
    std::int64_t at = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto v = order_key(in[i]);
      if (!is_nan_key(best)) {
        const bool take = is_nan_key(v) || (kind == ScanKind::Max ? v >= best : v <= best);
        if (take) {
          best = v;
          at = i;
        }
      }
      out[i] = in[at];
      index[i] = at;
    }
  }
}

template <ScanKind K>
KernelStatus scan_kernel(const KernelCall& call) {
  const TensorView& in = call.inputs[0];
  const TensorView& out = call.outputs[0];
  std::int64_t* index = call.outputs.size() > 1 ? call.outputs[1].ptr<std::int64_t>() : nullptr;
  const std::int64_t n = in.sizes.back();
  const std::int64_t rows = n == 0 ? 0 : in.numel() / n;
  visit_dtype(in.dtype, [&]<class T>() {
    const T* src = in.ptr<T>();
    T* dst = out.ptr<T>();
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows), [&](const auto& range) {
      for (std::int64_t r = range.begin(); r < range.end(); ++r) {
        scan_row<T>(K, src + r * n, dst + r * n, index ? index + r * n : nullptr, n);
      }
    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_scan_kernels(KernelTable& table) {
  table.set(op_id("cumsum"), &scan_kernel<ScanKind::Sum>, kNumericDTypes);
  table.set(op_id("cumprod"), &scan_kernel<ScanKind::Prod>, kNumericDTypes);
  table.set(op_id("logcumsumexp"), &scan_kernel<ScanKind::LogSumExp>, kFloatDTypes);
  table.set(op_id("cummax"), &scan_kernel<ScanKind::Max>, kAllDTypes);
  table.set(op_id("cummin"), &scan_kernel<ScanKind::Min>, kAllDTypes);
}

}  // namespace mpsim::simd
