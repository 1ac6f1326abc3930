// The Fourier family's kernel: c2c, r2c and c2r discrete Fourier transforms over any dims.
//
// Note [Fourier transforms]
// The input (any real or complex dtype) is read into a row-major complex<double> buffer whose
// transformed dims have the full signal lengths of FftParams::sizes, zero-padded or trimmed (C2R
// reads sizes.back() / 2 + 1 entries along its one-sided dim). Each transformed dim then runs a
// 1-d transform (core/fft_plan.h: radix-2, a direct sum for short odd lengths, Bluestein's
// chirp-z otherwise; twiddles exact to an ulp of double) on every line along it; C2R runs its
// one-sided dim last, after extending each line by Hermitian symmetry (X[n - k] = conj X[k]),
// and keeps the real part; a real input's first dim transforms its lines in pairs (Note [two
// real lines in one transform]). Plans are shared between calls of one length (plan_for). Finally every output element is multiplied by the norm mode's scale
// and rounded once into the output dtype. So a complex64 or float32 result is the double
// transform rounded once: within half an ulp of it, and the double transform's own error is
// about log2(n) 2^-53 ||x||_2 per element (its test: tests/fft_plan_test.cc). Lines run in
// parallel, each one serial computation, so the bits do not depend on the thread count.
#include "kernels_simd/fft.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/convert.h"
#include "core/fft_plan.h"

namespace mpsim::simd {
namespace {

using cdouble = std::complex<double>;

// An element of type T at byte address p as a complex double (a real one: imaginary 0).
template <class T>
cdouble element_at(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::is_same_v<T, ComplexHalf>)
    return cdouble(static_cast<float>(v.real), static_cast<float>(v.imag));
  else if constexpr (ComplexElement<T>)
    return cdouble(v.real(), v.imag());
  else
    return cdouble(convert<double>(v), 0.0);
}

// Calls f.template operator()<T>() with T the element type of any dtype, real or complex.
template <class F>
void visit_any_dtype(DType dtype, F&& f) {
  if (is_complex(dtype)) {
    visit_complex_dtype(dtype, f);
  } else {
    visit_dtype(dtype, f);
  }
}

// The plan of length n, shared: plans are read-only and depend on n alone, and building one costs
// n long double sin/cos (Bluestein lengths a power-of-two plan too), so repeated transforms of
// one length reuse it. A few lengths are kept, the least recently used dropped.
std::shared_ptr<const FftPlan> plan_for(std::int64_t n) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const FftPlan>> plans;  // most recent last
  constexpr std::size_t kKept = 8;
  const std::lock_guard<std::mutex> lock(mutex);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i]->size() == n) {
      std::shared_ptr<const FftPlan> plan = plans[i];
      plans.erase(plans.begin() + static_cast<std::ptrdiff_t>(i));
      plans.push_back(plan);
      return plan;
    }
  }
  plans.push_back(std::make_shared<const FftPlan>(n));
  if (plans.size() > kKept) plans.erase(plans.begin());
  return plans.back();
}

// Runs f(outer_index, row_offset) for every row of a row-major array of `sizes` (the last dim
// is the row): outer_index holds the other dims' indices.
template <class F>
void for_each_row_index(const std::vector<std::int64_t>& sizes, F&& f) {
  const std::size_t nd = sizes.size();
  std::vector<std::int64_t> outer(sizes.begin(), sizes.end() - 1), index(nd - 1, 0);
  std::int64_t rows = 1;
  for (std::int64_t s : outer) rows *= s;
  for (std::int64_t r = 0; r < rows; ++r) {
    f(index, r * sizes.back());
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < outer[d]) break;
      index[d] = 0;
    }
  }
}

// Runs the plan on every line of `work` (row-major, `sizes`) along dim d; `prepare` may change
// a line before its transform.
template <class Prepare>
void transform_dim(std::vector<cdouble>& work, const std::vector<std::int64_t>& sizes,
                   std::size_t d, bool inverse, Prepare&& prepare) {
  const std::int64_t n = sizes[d];
  std::int64_t inner = 1;
  for (std::size_t e = d + 1; e < sizes.size(); ++e) inner *= sizes[e];
  const std::int64_t lines = static_cast<std::int64_t>(work.size()) / n;
  if (lines == 0) return;
  const std::shared_ptr<const FftPlan> shared = plan_for(n);
  const FftPlan& plan = *shared;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, lines, std::max<std::int64_t>(1, 4096 / n)),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      std::vector<cdouble> line(static_cast<std::size_t>(n));
                      for (std::int64_t j = r.begin(); j < r.end(); ++j) {
                        cdouble* base = work.data() + (j / inner) * n * inner + j % inner;
                        for (std::int64_t k = 0; k < n; ++k) line[k] = base[k * inner];
                        prepare(line);
                        plan.execute(line.data(), inverse);
                        for (std::int64_t k = 0; k < n; ++k) base[k * inner] = line[k];
                      }
                    });
}

// Note [two real lines in one transform]
// The lines along a dim of a real buffer go through the transform two at a time: z = a + i b has
// Z[k] = A[k] + i B[k] with A and B Hermitian, so A[k] = (Z[k] + conj Z[n - k]) / 2 and
// B[k] = -i (Z[k] - conj Z[n - k]) / 2: half the transforms, each output a few double roundings
// from Z. The formulas give A[n - k] = conj A[k] exactly (the same sums, conjugated), and
// A[0], A[n / 2] get imaginary part +0, as a real-input transform's. A last odd line goes alone.
// Lines pair by index, so the bits do not depend on the thread count.
void transform_real_dim(std::vector<cdouble>& work, std::int64_t n, std::int64_t inner,
                        std::int64_t lines, bool inverse) {
  const std::shared_ptr<const FftPlan> shared = plan_for(n);
  const FftPlan& plan = *shared;
  const auto line_at = [&](std::int64_t j) {
    return work.data() + (j / inner) * n * inner + j % inner;
  };
  const std::int64_t pairs = (lines + 1) / 2;
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, pairs, std::max<std::int64_t>(1, 2048 / n)),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        std::vector<cdouble> z(static_cast<std::size_t>(n));
        for (std::int64_t q = r.begin(); q < r.end(); ++q) {
          cdouble* a = line_at(2 * q);
          cdouble* b = 2 * q + 1 < lines ? line_at(2 * q + 1) : nullptr;
          for (std::int64_t k = 0; k < n; ++k) {
            z[k] = cdouble(a[k * inner].real(), b != nullptr ? b[k * inner].real() : 0.0);
          }
          plan.execute(z.data(), inverse);
          for (std::int64_t k = 0; k < n; ++k) {
            const cdouble zk = z[k], zn = std::conj(z[(n - k) % n]);
            const cdouble sum = zk + zn, diff = zk - zn;
            a[k * inner] = cdouble(0.5 * sum.real(), 0.5 * sum.imag());
            if (b != nullptr) b[k * inner] = cdouble(0.5 * diff.imag(), -0.5 * diff.real());
          }
          for (cdouble* line : {a, b}) {
            if (line == nullptr) continue;
            line[0].imag(0.0);
            if (n % 2 == 0) line[(n / 2) * inner].imag(0.0);
          }
        }
      });
}

KernelStatus fft_kernel(const KernelCall& call) {
  const TensorView& in = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const FftParams& p = call.params_as<FftParams>();
  const std::size_t nd = in.sizes.size();
  std::vector<std::int64_t> sizes(in.sizes.begin(), in.sizes.end());
  std::vector<std::int64_t> limit(sizes);  // entries read along each dim
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(p.dims[i]);
    sizes[d] = p.sizes[i];
    limit[d] = std::min(in.sizes[d], p.sizes[i]);
  }
  const auto last = static_cast<std::size_t>(p.dims.back());
  if (p.kind == FftKind::C2R) limit[last] = std::min(in.sizes[last], sizes[last] / 2 + 1);
  std::int64_t total = 1;
  for (std::int64_t s : sizes) total *= s;
  if (total == 0 || out.numel() == 0) return KernelStatus::Ok;

  // Read the input, zero beyond `limit`, a row (the last dim) at a time.
  std::vector<cdouble> work(static_cast<std::size_t>(total));
  const char* in_base = static_cast<const char*>(in.data);
  const auto in_item = static_cast<std::int64_t>(dtype_size(in.dtype));
  visit_any_dtype(in.dtype, [&]<class T>() {
    const std::int64_t row_limit = limit[nd - 1], row_step = in.strides[nd - 1] * in_item;
    for_each_row_index(sizes, [&](const std::vector<std::int64_t>& index, std::int64_t at) {
      std::int64_t offset = 0;
      bool inside = true;
      for (std::size_t d = 0; d + 1 < nd; ++d) {
        inside = inside && index[d] < limit[d];
        offset += index[d] * in.strides[d];
      }
      if (!inside) return;  // work is zero-initialized
      const char* src = in_base + offset * in_item;
      cdouble* row = work.data() + at;
      for (std::int64_t k = 0; k < row_limit; ++k) row[k] = element_at<T>(src + k * row_step);
    });
  });

  // A real input's transform along its first dim is Hermitian: X[n - k] = conj X[k], so X[0]
  // and X[n / 2] are real. The lines along the last of dims (the one-sided dim of R2C) go first,
  // two at a time, and get exactly that symmetry, as a real-input transform's (torch's r2c)
  // has (Note [two real lines in one transform]).
  const auto none = [](std::vector<cdouble>&) {};
  const bool real_input = !is_complex(in.dtype) && p.kind != FftKind::C2R;
  std::vector<std::int64_t> order(p.dims.begin(), p.dims.end());
  if (real_input) {
    std::rotate(order.begin(), order.end() - 1, order.end());  // the last of dims first
    const auto d = static_cast<std::size_t>(order.front());
    const std::int64_t n = sizes[d];
    std::int64_t inner = 1;
    for (std::size_t e = d + 1; e < nd; ++e) inner *= sizes[e];
    transform_real_dim(work, n, inner, total / n, p.inverse);
    order.erase(order.begin());
  }
  for (std::int64_t dim : order) {
    const auto d = static_cast<std::size_t>(dim);
    if (p.kind == FftKind::C2R && d == last) continue;
    transform_dim(work, sizes, d, p.inverse, none);
  }
  if (p.kind == FftKind::C2R) {
    const std::int64_t n = sizes[last];
    transform_dim(work, sizes, last, p.inverse, [n](std::vector<cdouble>& line) {
      for (std::int64_t k = n / 2 + 1; k < n; ++k) line[k] = std::conj(line[n - k]);
    });
  }

  // Scale and round once into the output.
  std::vector<std::int64_t> work_strides(nd, 1);
  for (std::size_t d = nd; d-- > 1;) work_strides[d - 1] = work_strides[d] * sizes[d];
  std::vector<std::int64_t> out_sizes(out.sizes.begin(), out.sizes.end());
  char* out_base = static_cast<char*>(out.data);
  const auto out_item = static_cast<std::int64_t>(dtype_size(out.dtype));
  const double scale = p.scale;
  visit_any_dtype(out.dtype, [&]<class T>() {
    const std::int64_t row_step = out.strides[nd - 1] * out_item;
    for_each_row_index(out_sizes, [&](const std::vector<std::int64_t>& index, std::int64_t) {
      std::int64_t src = 0, dst = 0;
      for (std::size_t d = 0; d + 1 < nd; ++d) {
        src += index[d] * work_strides[d];
        dst += index[d] * out.strides[d];
      }
      const cdouble* row = work.data() + src;
      char* dst_row = out_base + dst * out_item;
      for (std::int64_t k = 0; k < out_sizes[nd - 1]; ++k) {
        const cdouble v = row[k] * scale;
        T w;
        if constexpr (std::is_same_v<T, ComplexHalf>) {
          w = ComplexHalf{Half(v.real()), Half(v.imag())};
        } else if constexpr (ComplexElement<T>) {
          using Part = typename T::value_type;
          w = T(static_cast<Part>(v.real()), static_cast<Part>(v.imag()));
        } else {
          w = convert<T>(v.real());
        }
        std::memcpy(dst_row + k * row_step, &w, sizeof(T));
      }
    });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_fft_kernels(KernelTable& table) {
  table.set(op_id("fft_fftn"), &fft_kernel,
            {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128});
}

}  // namespace mpsim::simd
