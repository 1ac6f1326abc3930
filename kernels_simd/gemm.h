// The GEMM engine: out = alpha * (a @ b) + beta * c over strided matrices, for a batch of
// problems. It serves matmul, linear, addmm/baddbmm, and the convolutions' implicit GEMM.
//
// Note [gemm numerics]
// - Golden (fast = false): a and b are widened to double while they are packed; every
//   product of two float32 (or float16/bfloat16) values is exact in double, so a fused and an
//   unfused multiply-add give the same bits and the sum over k is one double chain
//   acc = acc + a[i,k] * b[k,j] for k = 0, 1, ..., K-1 in order. alpha and beta apply in
//   double ((alpha * acc) + (beta * c), each step rounded in double) and the result is rounded
//   once to the output dtype. Max error on float32: 0.5 ulp of the result plus
//   K * 2^-53 * sum_k |a[i,k] b[k,j]| (the double chain's error), so within 1 ulp of the
//   correctly rounded sum wherever K * 2^-53 * sum |a b| <= 0.5 ulp(result). float64 inputs
//   run the same chain with fused multiply-adds (on targets without FMA, SSE4 and the
//   portable scalar target, the products round first, and the bits differ there).
// - Fast (fast = true): float32 (and float16/bfloat16, widened to float32) accumulate in float
//   lanes by the same in-order chain of fused multiply-adds, then alpha and beta in float and
//   one rounding to the output dtype. Max error: K * 2^-24 * sum_k |a[i,k] b[k,j]| plus the
//   final roundings (tested with c = 1, docs/numerics.md). The same bits on every target with
//   FMA (AVX2, AVX-512, NEON); SSE4 and the scalar target round each product.
// Every output element's chain is fixed by K alone: the blocking, the thread count and the
// SIMD width never change it, so the results are bit-identical for any thread count and any
// partition. NaN and infinity propagate through the chain as in IEEE arithmetic (inf * 0 is
// NaN, as in PyTorch); a convolution's taps in the padding form no product (gemm_im2col).
//
// Note [gemm scratch]
// Packed copies live in scratch that the engine owns and documents: b is packed in column chunks of
// at most kGemmPackedBBytes (16 MiB). A problem threaded over its tiles takes its chunk from a pool
// that keeps the largest chunk returned (kernels_simd/scratch_pool.h; one more per caller running
// at the same time, freed when it returns); when many small problems run in parallel each thread
// keeps its own chunk. Each thread keeps, for its lifetime, one packed block of a (96 x 128 values
// of the accumulation type, 96 KiB in double) and, when K exceeds 128, one accumulator tile (96 x
// 576 values, 432 KiB in double). A convolution that cannot read x in place (Note [conv in
// registers] in gemm_engine-inl.h) stages, per task, the input rows its pixels read, widened: for a
// task of 96 pixels (AVX-512's; 72 on AVX2) at most (95 / out_w + 1) stride_h + (kernel_h - 1)
// dilation_h + 1 rows of width x channels values of the accumulation type, kept per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.h"

namespace mpsim::simd {

inline constexpr std::size_t kGemmPackedBBytes = std::size_t{16} << 20;

// One problem: element strides (any sign-free layout: transposed and broadcast views work;
// a stride may be 0). `c` may be null (then beta is ignored); when beta == 0, c is not read,
// so NaN in c does not propagate (PyTorch's addmm rule). out must not overlap a, b or c.
struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t a_rs = 0, a_cs = 0;
  const void* b = nullptr;
  std::int64_t b_rs = 0, b_cs = 0;
  // b's rows in b_taps runs of k / b_taps, each run b_tap_stride after the one before: row k
  // is b + (k / run) b_tap_stride + (k % run) b_rs (a convolution's weight read through its
  // [kH, kW, C, Cout] view, the taps apart from the channels). 1: one run, b_rs apart.
  std::int64_t b_taps = 1, b_tap_stride = 0;
  const void* c = nullptr;
  std::int64_t c_rs = 0, c_cs = 0;
  void* out = nullptr;
  std::int64_t o_rs = 0, o_cs = 0;
};

struct GemmConfig {
  DType dtype = DType::Float32;  // of a, b, c and out: Float16, BFloat16, Float32 or Float64
  double alpha = 1, beta = 0;
  bool fast = false;  // Note [gemm numerics]
};

// The a operand of a convolution read as an implicit GEMM (im2col, never materialized): the
// problem's `a` points at x[image, first channel of the group, 0, 0]; row p of a is output
// pixel (p / out_w, p % out_w) and column k is the tap (kh, kw) = ((k / channels) / kernel_w,
// (k / channels) % kernel_w) of channel k % channels, reading
// x[c, oh * stride_h - pad_h + kh * dilation_h, ow * stride_w - pad_w + kw * dilation_w];
// a tap outside the input (in the padding) forms no product, as in PyTorch. So every output's
// chain runs over its taps inside x, (kh, kw, c) with c fastest, whatever x's memory format:
// NCHW and channels-last inputs give the same bits.
struct Im2Col {
  std::int64_t channels = 0, height = 0, width = 0;  // of one group of one image
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;  // top and left (the bottom and right follow from out)
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t out_w = 1;
  std::int64_t c_stride = 0, h_stride = 0, w_stride = 0;  // x's element strides
};

// The transposed problem out^T = b^T a^T: its outputs' chains are the problem's (products
// commute exactly), so it gives the same bits. A problem with b_taps > 1 has none.
inline GemmProblem transposed(const GemmProblem& p) {
  GemmProblem t = p;
  t.m = p.n;
  t.n = p.m;
  t.a = p.b;
  t.a_rs = p.b_cs;
  t.a_cs = p.b_rs;
  t.b = p.a;
  t.b_rs = p.a_cs;
  t.b_cs = p.a_rs;
  t.c_rs = p.c_cs;
  t.c_cs = p.c_rs;
  t.o_rs = p.o_cs;
  t.o_cs = p.o_rs;
  return t;
}

// Runs every problem of the batch; threads over problems or over output tiles in fixed-size
// blocks (never throws; sizes must be valid).
void gemm(const GemmConfig& config, std::span<const GemmProblem> problems);
// The same with a read through `im2col` (the problems' a_rs and a_cs are unused).
void gemm_im2col(const GemmConfig& config, const Im2Col& im2col,
                 std::span<const GemmProblem> problems);
// The float-accumulating engine (gemm_f32.cc) that gemm and gemm_im2col send Fast float32,
// float16 and bfloat16 to (im2col may be null).
void gemm_float_engine(const GemmConfig& config, const Im2Col* im2col,
                       std::span<const GemmProblem> problems);

}  // namespace mpsim::simd
