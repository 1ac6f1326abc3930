// Element-by-element comparison of an actual tensor against an expected one, as
// torch.testing.assert_close decides it, with the statistics `mpsim compare` prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace mpsim::tools {

struct Tolerance {
  double rtol;
  double atol;
};
// torch.testing's defaults: float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5,
// float64 1e-7/1e-7; integers and bool compare exactly.
Tolerance default_tolerance(DType dtype);

struct CompareOptions {
  std::optional<Tolerance> tolerance;    // default_tolerance(expected dtype) when absent
  std::optional<std::uint64_t> max_ulp;  // instead of rtol/atol: ulp distance <= max_ulp
  bool equal_nan = false;
  int max_listed = 10;  // mismatches listed in CompareResult::first
};

struct Mismatch {
  std::vector<std::int64_t> index;
  double actual;
  double expected;
  double abs_error;
  std::optional<std::uint64_t> ulp;  // absent when one side is NaN
};

struct UlpBucket {
  std::string label;  // "0", "1", "2", "3-4", "5-8", ..., ">1048576", "nan"
  std::int64_t count;
};

struct CompareResult {
  bool passed = false;
  std::string problem;  // set for a shape or dtype mismatch (nothing else is compared then)
  std::int64_t numel = 0;
  std::int64_t mismatches = 0;
  Tolerance tolerance{0, 0};
  std::optional<std::uint64_t> max_ulp;
  // Over elements where both values are finite; indices are of the first largest error.
  double max_abs_error = 0;
  std::vector<std::int64_t> max_abs_index;
  double max_rel_error = 0;  // |a - e| / |e|; inf where e == 0 != a
  std::vector<std::int64_t> max_rel_index;
  // Distance in units in the last place of the dtype (for integers: |a - e|); NaN against a
  // number counts in the "nan" bucket, NaN against NaN as 0.
  std::vector<UlpBucket> ulp_histogram;  // non-empty buckets, in order
  std::uint64_t max_ulp_seen = 0;
  std::vector<Mismatch> first;
};

// Shapes and dtypes must match exactly (as torch.testing.assert_close checks them); the values
// then compare as |actual - expected| <= atol + rtol * |expected| (or the ulp bound), with
// NaN equal to NaN only under equal_nan and infinities equal only to themselves.
CompareResult compare_tensors(const Tensor& actual, const Tensor& expected,
                              const CompareOptions& options);

}  // namespace mpsim::tools
