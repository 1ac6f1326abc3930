#include "tools/compare.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace mpsim::tools {
namespace {

// Buckets: 0, 1, 2, then (2^(k-1), 2^k] for k = 2..kLastPower, then > 2^kLastPower, then NaN.
constexpr int kLastPower = 20;
constexpr int kNumBuckets = 3 + (kLastPower - 1) + 1 + 1;
constexpr int kNanBucket = kNumBuckets - 1;

int bucket_of(std::uint64_t ulp) {
  if (ulp <= 2) return static_cast<int>(ulp);
  const int k = std::bit_width(ulp - 1);  // ulp in (2^(k-1), 2^k]
  return k > kLastPower ? kNumBuckets - 2 : k + 1;
}

std::string bucket_label(int b) {
  if (b <= 2) return std::to_string(b);
  if (b == kNanBucket) return "nan";
  std::string label;
  if (b == kNumBuckets - 2) {
    label.append(">").append(std::to_string(std::uint64_t{1} << kLastPower));
  } else {
    const int k = b - 1;
    label.append(std::to_string((std::uint64_t{1} << (k - 1)) + 1))
        .append("-")
        .append(std::to_string(std::uint64_t{1} << k));
  }
  return label;
}

// Maps the bits of a float of `width` bytes onto unsigned integers in the order of the values
// (-0 and +0 coincide), so the ulp distance is the difference of two of them.
std::uint64_t ordered(std::uint64_t bits, int width) {
  const std::uint64_t sign = std::uint64_t{1} << (8 * width - 1);
  const std::uint64_t magnitude = bits & (sign - 1);
  return bits & sign ? sign - magnitude : sign + magnitude;
}

std::vector<std::uint64_t> raw_bits(const Tensor& c) {
  const std::size_t width = c.element_size();
  std::vector<std::uint64_t> out(static_cast<std::size_t>(c.numel()));
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  for (std::size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], p + i * width, width);
  return out;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return index;
}

}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return {1e-3, 1e-5};
    case DType::BFloat16:
      return {1.6e-2, 1e-5};
    case DType::Float32:
      return {1.3e-6, 1e-5};
    case DType::Float64:
      return {1e-7, 1e-7};
    default:
      return {0, 0};
  }
}

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected,
                              const CompareOptions& options) {
  CompareResult r;
  r.tolerance = options.tolerance.value_or(default_tolerance(expected.dtype()));
  r.max_ulp = options.max_ulp;
  if (actual.sizes() != expected.sizes()) {
    r.problem = "shape mismatch: actual " + actual.sizes().to_string() + ", expected " +
                expected.sizes().to_string();
    return r;
  }
  if (actual.dtype() != expected.dtype()) {
    r.problem = "dtype mismatch: actual " + std::string(dtype_name(actual.dtype())) +
                ", expected " + std::string(dtype_name(expected.dtype()));
    return r;
  }
  r.numel = actual.numel();
  const DType dtype = actual.dtype();
  const bool floating = is_floating(dtype);
  const Tensor a = actual.to(Device::cpu()).contiguous();
  const Tensor e = expected.to(Device::cpu()).contiguous();
  // Integers compare in int64 (exact beyond 2^53); floats widen exactly to double.
  const std::vector<double> av = a.to_vector<double>(), ev = e.to_vector<double>();
  std::vector<std::int64_t> ai, ei;
  std::vector<std::uint64_t> ab, eb;
  if (floating) {
    ab = raw_bits(a);
    eb = raw_bits(e);
  } else {
    ai = a.to_vector<std::int64_t>();
    ei = e.to_vector<std::int64_t>();
  }
  const int width = static_cast<int>(a.element_size());
  std::vector<std::int64_t> histogram(kNumBuckets, 0);
  constexpr std::uint64_t kInt64Bias = std::uint64_t{1} << 63;
  bool any_finite = false;
  for (std::size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = ev[i];
    const bool x_nan = std::isnan(x), y_nan = std::isnan(y);
    std::optional<std::uint64_t> ulp;
    if (!floating) {
      const auto ox = static_cast<std::uint64_t>(ai[i]) + kInt64Bias;  // order-preserving
      const auto oy = static_cast<std::uint64_t>(ei[i]) + kInt64Bias;
      ulp = ox > oy ? ox - oy : oy - ox;
    } else if (x_nan && y_nan) {
      ulp = 0;
    } else if (!x_nan && !y_nan) {
      const std::uint64_t ox = ordered(ab[i], width), oy = ordered(eb[i], width);
      ulp = ox > oy ? ox - oy : oy - ox;
    }
    ++histogram[ulp ? bucket_of(*ulp) : kNanBucket];
    if (ulp) r.max_ulp_seen = std::max(r.max_ulp_seen, *ulp);

    // Integers: the exact distance, so int64 values beyond 2^53 that differ never compare equal.
    const double distance = floating ? std::fabs(x - y) : static_cast<double>(ulp.value_or(0));
    const auto within = [&] {
      return options.max_ulp ? *ulp <= *options.max_ulp
                             : distance <= r.tolerance.atol + r.tolerance.rtol * std::fabs(y);
    };
    bool close;
    if (x_nan || y_nan) {
      close = x_nan && y_nan && options.equal_nan;
    } else if (floating && x == y) {
      close = true;  // infinities of one sign included
    } else if (floating && (!std::isfinite(x) || !std::isfinite(y))) {
      close = false;
    } else {
      close = (!floating && *ulp == 0) || within();
    }
    if (std::isfinite(x) && std::isfinite(y)) {
      const double abs_error = floating ? std::fabs(x - y) : static_cast<double>(*ulp);
      const double rel_error = abs_error == 0 ? 0
                               : y == 0       ? std::numeric_limits<double>::infinity()
                                              : abs_error / std::fabs(y);
      if (!any_finite || abs_error > r.max_abs_error) {
        r.max_abs_error = abs_error;
        r.max_abs_index = unravel(static_cast<std::int64_t>(i), a.sizes());
      }
      if (!any_finite || rel_error > r.max_rel_error) {
        r.max_rel_error = rel_error;
        r.max_rel_index = unravel(static_cast<std::int64_t>(i), a.sizes());
      }
      any_finite = true;
    }
    if (!close) {
      ++r.mismatches;
      if (static_cast<int>(r.first.size()) < options.max_listed) {
        r.first.push_back({unravel(static_cast<std::int64_t>(i), a.sizes()), x, y, distance, ulp});
      }
    }
  }
  for (int b = 0; b < kNumBuckets; ++b) {
    if (histogram[b] > 0) r.ulp_histogram.push_back({bucket_label(b), histogram[b]});
  }
  r.passed = r.mismatches == 0;
  return r;
}

}  // namespace mpsim::tools
