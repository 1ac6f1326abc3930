// Searching sorted sequences, unique values, histograms and membership (core/search_ops.cc):
// compositions of comparisons, sort, cumsum, nonzero and the scatter kernel. Every result is
// an index, a count or an input value: nothing is rounded.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// For each value, the number of elements of its row of sorted_sequence that are smaller
// (right: not larger), found by torch's binary search (the same result where a sequence is
// unsorted or holds NaN; a NaN value passes every boundary). A 1-d sequence serves every
// value; an n-d one holds a row per row of values (their leading dims equal). sorter: int64
// indices that sort each row. O(values x log(row length)) work.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
// The counts of [min, max] split in `bins` equal bins (min == max: the input's range); values
// outside and NaN are not counted. The bin of x is floor((x - min) * bins / (max - min)) in
// the input's dtype (torch's), x == max in the last. Input's dtype.
Tensor histc(const Tensor& x, std::int64_t bins, double min, double max);
// Whether each element equals some element of test_elements (NaN equals nothing).
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert);
// (values, inverse, counts): the distinct values (dim None) or slices along dim in ascending
// order (slices: lexicographic), the index of each input element's (slice's) value, and how
// many there are of each. unique_consecutive: runs of equal neighbours instead, in input order.
std::vector<Tensor> unique(const Tensor& x, std::optional<std::int64_t> dim);
std::vector<Tensor> unique_consecutive(const Tensor& x, std::optional<std::int64_t> dim);

}  // namespace mpsim
