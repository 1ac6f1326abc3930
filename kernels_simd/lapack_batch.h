// The lapack family's batch driver (kernels_simd/lapack.cc, lapack_spectral.cc): matrix b of a
// [B, rows, cols] view read into double, the op run per matrix, each output rounded once
// (Note [lapack in double] in kernels_simd/lapack.h).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "core/kernel_call.h"

namespace mpsim::simd::detail {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

// Matrix b of a [B, rows, cols] view, in double.
inline Mat load(const TensorView& v, std::int64_t b) {
  const std::int64_t rows = v.sizes[1], cols = v.sizes[2];
  Mat m(rows, cols);
  visit_dtype(v.dtype, [&]<class T>() {
    const T* p = v.ptr<T>() + b * rows * cols;
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) m(i, j) = static_cast<double>(p[i * cols + j]);
    }
  });
  return m;
}

// Rounds m once into matrix b of a [B, rows, cols] view (integer outputs hold exact values).
inline void store(const TensorView& v, std::int64_t b, const Mat& m) {
  const std::int64_t rows = v.sizes[1], cols = v.sizes[2];
  visit_dtype(v.dtype, [&]<class T>() {
    T* p = v.ptr<T>() + b * rows * cols;
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) p[i * cols + j] = static_cast<T>(m(i, j));
    }
  });
}

// Runs f(params, inputs, outputs) on every matrix of the batch; outputs arrive zeroed in their
// view's size and leave rounded once.
template <class F>
KernelStatus run(const KernelCall& call, F f) {
  const auto& params = call.params_as<LapackParams>();
  const std::int64_t batch = call.outputs[0].sizes[0];
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, batch), [&](const auto& range) {
    for (std::int64_t b = range.begin(); b < range.end(); ++b) {
      std::vector<Mat> in, out;
      for (const TensorView& v : call.inputs) in.push_back(load(v, b));
      for (const TensorView& v : call.outputs) out.push_back(Mat::Zero(v.sizes[1], v.sizes[2]));
      f(params, std::span<const Mat>(in), std::span<Mat>(out));
      for (std::size_t i = 0; i < out.size(); ++i) store(call.outputs[i], b, out[i]);
    }
  });
  return KernelStatus::Ok;
}

}  // namespace mpsim::simd::detail
