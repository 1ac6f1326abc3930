// The scatter family: scatter (every scatter, index_* and put op of core/scatter_ops.cc runs
// it) and nonzero. Inputs of scatter: the int64 index and the source, contiguous, of one shape
// I; the output, contiguous, already holds the tensor scattered into (the front end's copy of
// self). The result does not depend on the thread count (Note [scatter order]).
//
// Note [scatter order]
// Two elements of the index whose coordinates differ outside `dim` write to different columns
// of the output (a column: the output's elements that differ only in `dim`). The kernel runs
// the columns in parallel and each column's sources in order along `dim`, so every output
// element sees its sources in row-major (source) order on any thread count: without a
// reduction the last of them is written (put, index_copy, scatter with a repeated index), and
// a reduction combines them in that order. A reducing task keeps scratch of one slot per
// position along dim (the output's size there) and an accumulator per position touched.
//
// Note [scatter rounding]
// Sum and mean accumulate floats in double with Neumaier's compensation, starting from the
// output's value when include_self, and round once per output element: float32, float16 and
// bfloat16 sums are correctly rounded but for a cancellation below 2^-100 of the terms'
// magnitudes; mean divides the double sum by the count in double, then rounds once. Prod
// multiplies in double and rounds once (within 1 ULP of float32 for fewer than 2^28 factors).
// amax and amin are exact; a NaN among the values makes the result NaN. Integers accumulate in
// int64, wrapping as torch's; an integer mean divides with floor, as torch's. Output elements
// that no source reaches keep their value.
#include "kernels_simd/scatter.h"

#include <tbb/parallel_for.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "core/dtype.h"

namespace mpsim::simd {

namespace {

template <class T>
constexpr bool kFloat = std::is_floating_point_v<T> || Float16Like<T>;

// One output element's running reduction (floats: Note [scatter rounding]).
template <class T>
struct Acc {
  using Value = std::conditional_t<kFloat<T>, double, std::int64_t>;
  Value value;
  double carry;  // Neumaier's compensation of a float sum
  std::int64_t count;

  void start(ScatterReduce r, T self, bool include_self) {
    carry = 0;
    count = include_self ? 1 : 0;
    if (include_self || r == ScatterReduce::Amax || r == ScatterReduce::Amin) {
      value = from(self);
    } else {
      value = r == ScatterReduce::Prod ? 1 : 0;
    }
    first = !include_self;
  }
  void add(ScatterReduce r, Value v) {
    ++count;
    switch (r) {
      case ScatterReduce::Sum:
      case ScatterReduce::Mean:
        if constexpr (kFloat<T>) {
          const double t = value + v;
          if (std::isfinite(t)) {
            carry += std::fabs(value) >= std::fabs(v) ? (value - t) + v : (v - t) + value;
          }
          value = t;
        } else {
          value =
              static_cast<Value>(static_cast<std::uint64_t>(value) + static_cast<std::uint64_t>(v));
        }
        break;
      case ScatterReduce::Prod:
        if constexpr (kFloat<T>) {
          value *= v;
        } else {
          value =
              static_cast<Value>(static_cast<std::uint64_t>(value) * static_cast<std::uint64_t>(v));
        }
        break;
      case ScatterReduce::Amax:
      case ScatterReduce::Amin:
        if (first) {
          value = v;
        } else if (!is_nan(value)) {
          const bool larger = r == ScatterReduce::Amax ? v > value : v < value;
          if (is_nan(v) || larger) value = v;
        }
        break;
      case ScatterReduce::None:
        value = v;
        break;
    }
    first = false;
  }
  T result(ScatterReduce r) const {
    if constexpr (kFloat<T>) {
      const double sum = std::isfinite(value) ? value + carry : value;
      if (r == ScatterReduce::Sum) return static_cast<T>(sum);
      if (r == ScatterReduce::Mean) return static_cast<T>(sum / static_cast<double>(count));
      return static_cast<T>(value);
    } else {
      if (r == ScatterReduce::Mean && count > 0) {
        std::int64_t q = value / count;
        if ((value % count != 0) && ((value < 0) != (count < 0))) --q;  // floor
        return static_cast<T>(q);
      }
      return static_cast<T>(value);
    }
  }
  static Value from(T v) {
    if constexpr (kFloat<T>) {
      return convert<double>(v);
    } else {
      return static_cast<Value>(v);
    }
  }
  static bool is_nan(Value v) {
    if constexpr (kFloat<T>) {
      return std::isnan(v);
    } else {
      return false;
    }
  }
  bool first;
};

// Column geometry: the index's shape split at `dim` into outer coordinates (their own dims),
// the run along dim and the contiguous inner block.
struct Columns {
  std::vector<std::int64_t> index_sizes;
  std::vector<std::int64_t> out_strides;  // contiguous strides of the output
  std::int64_t dim, run, inner, count, out_size;
};

Columns columns_of(const KernelCall& call, std::int64_t dim) {
  const TensorView& index = call.inputs[0];
  const TensorView& out = call.outputs[0];
  Columns c;
  c.index_sizes.assign(index.sizes.begin(), index.sizes.end());
  c.out_strides.assign(out.sizes.size(), 1);
  for (std::size_t k = out.sizes.size(); k-- > 1;) {
    c.out_strides[k - 1] = c.out_strides[k] * out.sizes[k];
  }
  c.dim = dim;
  c.run = index.sizes[static_cast<std::size_t>(dim)];
  c.inner = 1;
  for (std::size_t k = static_cast<std::size_t>(dim) + 1; k < index.sizes.size(); ++k) {
    c.inner *= index.sizes[k];
  }
  c.count = c.run == 0 ? 0 : index.numel() / c.run;
  c.out_size = out.sizes[static_cast<std::size_t>(dim)];
  return c;
}

// The output offset of column q's element 0 along dim (coordinates of the index's shape).
std::int64_t column_base(const Columns& c, std::int64_t q) {
  std::int64_t rest = q, base = 0;
  for (std::size_t k = c.index_sizes.size(); k-- > 0;) {
    if (static_cast<std::int64_t>(k) == c.dim) continue;
    const std::int64_t coord = rest % c.index_sizes[k];
    rest /= c.index_sizes[k];
    base += coord * c.out_strides[k];
  }
  return base;
}

template <class T>
bool scatter_columns(const KernelCall& call, const ScatterParams& p, const Columns& c,
                     std::int64_t begin, std::int64_t end) {
  const auto* index = call.inputs[0].ptr<const std::int64_t>();
  const T* src = call.inputs[1].ptr<const T>();
  T* out = call.outputs[0].ptr<T>();
  const std::int64_t step = c.out_strides[static_cast<std::size_t>(c.dim)];
  using A = Acc<T>;
  std::vector<A> acc;
  std::vector<std::int64_t> touched;  // positions along dim, in first-touch order
  std::vector<std::int64_t> slot;     // position -> 1 + its entry of acc (0: untouched)
  if (p.reduce != ScatterReduce::None) slot.assign(static_cast<std::size_t>(c.out_size), 0);
  const auto value = [&](std::int64_t e) {
    if constexpr (kFloat<T>) {
      return p.alpha == 1 ? convert<double>(src[e]) : p.alpha * convert<double>(src[e]);
    } else {
      return p.alpha == 1 ? static_cast<std::int64_t>(src[e])
                          : static_cast<std::int64_t>(src[e]) * static_cast<std::int64_t>(p.alpha);
    }
  };
  for (std::int64_t q = begin; q < end; ++q) {
    const std::int64_t base = column_base(c, q);
    const std::int64_t first = (q / c.inner) * c.run * c.inner + q % c.inner;
    for (std::int64_t j = 0; j < c.run; ++j) {
      const std::int64_t e = first + j * c.inner;
      std::int64_t i = index[e];
      if (i < 0 && p.wrap_negative) i += c.out_size;
      if (i < 0 || i >= c.out_size) return false;
      T* target = out + base + i * step;
      if (p.reduce == ScatterReduce::None) {
        *target = src[e];
        continue;
      }
      std::int64_t& s = slot[static_cast<std::size_t>(i)];
      if (s == 0) {
        acc.emplace_back();
        acc.back().start(p.reduce, *target, p.include_self);
        touched.push_back(i);
        s = static_cast<std::int64_t>(acc.size());
      }
      acc[static_cast<std::size_t>(s - 1)].add(p.reduce, static_cast<typename A::Value>(value(e)));
    }
    for (std::size_t t = 0; t < touched.size(); ++t) {
      out[base + touched[t] * step] = acc[t].result(p.reduce);
      slot[static_cast<std::size_t>(touched[t])] = 0;
    }
    acc.clear();
    touched.clear();
  }
  return true;
}

// Columns per task: enough work to amortize a task; any value gives the same bits.
constexpr std::int64_t kColumnGrain = 64;

KernelStatus scatter_kernel(const KernelCall& call) {
  const ScatterParams& p = call.params_as<ScatterParams>();
  const Columns c = columns_of(call, p.dim);
  std::atomic<bool> ok{true};
  visit_dtype(call.outputs[0].dtype, [&]<class T>() {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, c.count, kColumnGrain),
                      [&](const auto& r) {
                        if (!scatter_columns<T>(call, p, c, r.begin(), r.end())) {
                          ok.store(false, std::memory_order_relaxed);
                        }
                      });
  });
  return ok.load() ? KernelStatus::Ok : KernelStatus::IndexOutOfRange;
}

// nonzero: the coordinates of the input's nonzero elements (NaN is nonzero, -0 is zero) in
// row-major order, one row of the [count, ndim] int64 output each. One pass in order: the
// front end has counted them (the output's rows), so a row is never written twice.
KernelStatus nonzero_kernel(const KernelCall& call) {
  const TensorView& in = call.inputs[0];
  const TensorView& out = call.outputs[0];
  auto* coords = out.ptr<std::int64_t>();
  const std::int64_t rows = out.sizes[0];
  const auto ndim = static_cast<std::int64_t>(in.sizes.size());
  const std::int64_t n = in.numel();
  visit_dtype(in.dtype, [&]<class T>() {
    const T* x = in.ptr<const T>();
    std::vector<std::int64_t> at(static_cast<std::size_t>(ndim), 0);
    std::int64_t row = 0;
    for (std::int64_t e = 0; e < n && row < rows; ++e) {
      bool nonzero;
      if constexpr (kFloat<T>) {
        nonzero = convert<double>(x[e]) != 0 || std::isnan(convert<double>(x[e]));
      } else {
        nonzero = x[e] != T{0};
      }
      if (nonzero) {
        for (std::int64_t k = 0; k < ndim; ++k) coords[row * ndim + k] = at[k];
        ++row;
      }
      for (std::int64_t k = ndim; k-- > 0;) {  // the next element's coordinates
        if (++at[k] < in.sizes[k]) break;
        at[k] = 0;
      }
    }
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_scatter_kernels(KernelTable& table) {
  table.set(op_id("scatter"), &scatter_kernel, kAllDTypes);
  table.set(op_id("nonzero"), &nonzero_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
