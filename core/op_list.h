// The one op list. Every operator is declared here once; its id, name, family and dtype rule
// derive from this table (op_id("add") is a compile-time lookup, a typo fails to compile).
// Adding an op: docs/adding-an-op.md.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/math_op_list.h"

namespace mpsim {

// An op family is implemented by one kernel template in kernels_simd/<family>.cc.
enum class OpFamily : std::uint8_t {
  Unary,      // y = f(x), elementwise
  Binary,     // y = f(a, b), elementwise with broadcasting and promotion
  Compare,    // bool y = a (op) b
  Where,      // y = cond ? a : b
  Clamp,      // y = min(max(x, lo), hi)
  Copy,       // strided copy with dtype conversion (contiguous, to(dtype), copy_)
  Fill,       // out = value
  Arange,     // out[i] = start + i * step
  Reduce,     // out[m] = reduce over the trailing `num_reduced` dims of the (permuted) input
  ArgReduce,  // int64 index of the first max/min over the trailing dim
  Softmax,    // softmax / log_softmax over the trailing dim of the (permuted) input
  Gather,     // out[e] = in[e + index[e] * stride]: gather and index_select
  Rearrange,  // out = in's elements reordered, zeroed or padded: flip, pad, tril, triu
  Norm,       // normalize each group of trailing dims by its statistics, then an affine map
  Random,     // counter-based (Philox) random numbers: element i depends only on (seed, offset, i)
  Matmul,  // out[*b] = alpha * a[*b] @ b[*b] + beta * c[*b] over batch dims (kernels_simd/gemm.h)
  Conv,    // convolution as an implicit GEMM over (kh, kw, c) taps (kernels_simd/conv.cc)
  Attention,  // softmax(q k^T scale + mask) v, flash-style (kernels_simd/attention.h)
  Pool,       // out[n, c, oh, ow] = the average or maximum of a window of in[n, c] (2-d pooling)
  Resize,     // out[n, c, oh, ow] = in[n, c] sampled at a scaled position (interpolate)
  Fused,  // Stable Diffusion fusions, each equal to its unfused composition (kernels_simd/fused.h)
  Sort,   // values and int64 indices of each trailing-dim row in order (kernels_simd/sort.cc)
  Scan,   // running sums, products, logsumexp, max, min along each trailing-dim row (scan.cc)
  Lapack,  // dense linear algebra of each matrix of a batch, in double (kernels_simd/lapack.h)
  Scatter,  // out[index[e]] = src[e] or reduced with it, in source order; nonzero (scatter.cc)
  Fourier,  // discrete Fourier transforms over dims, in double, rounded once (kernels_simd/fft.cc)
};

// How a unary op treats integer and bool inputs (PyTorch's rules).
enum class IntRule : std::uint8_t {
  ToFloat,    // ints and bool compute in the default float dtype (exp, sigmoid, ...)
  Keep,       // ints keep their dtype; bool is rejected (abs, neg, relu, square)
  FloatOnly,  // ints and bool are rejected (silu, gelu, softplus)
  NotApplicable,
};

struct OpDef {
  std::string_view name;
  OpFamily family;
  IntRule int_rule = IntRule::NotApplicable;
};

inline constexpr OpDef kOpDefs[] = {
    // unary
    {"abs", OpFamily::Unary, IntRule::Keep},
    {"neg", OpFamily::Unary, IntRule::Keep},
    {"exp", OpFamily::Unary, IntRule::ToFloat},
    {"log", OpFamily::Unary, IntRule::ToFloat},
    {"log1p", OpFamily::Unary, IntRule::ToFloat},
    {"expm1", OpFamily::Unary, IntRule::ToFloat},
    {"sqrt", OpFamily::Unary, IntRule::ToFloat},
    {"rsqrt", OpFamily::Unary, IntRule::ToFloat},
    {"sin", OpFamily::Unary, IntRule::ToFloat},
    {"cos", OpFamily::Unary, IntRule::ToFloat},
    {"tanh", OpFamily::Unary, IntRule::ToFloat},
    {"erf", OpFamily::Unary, IntRule::ToFloat},
    {"relu", OpFamily::Unary, IntRule::Keep},
    {"sigmoid", OpFamily::Unary, IntRule::ToFloat},
    {"silu", OpFamily::Unary, IntRule::FloatOnly},
    {"gelu", OpFamily::Unary, IntRule::FloatOnly},
    {"softplus", OpFamily::Unary, IntRule::FloatOnly},
    {"reciprocal", OpFamily::Unary, IntRule::ToFloat},
    {"square", OpFamily::Unary, IntRule::Keep},
// the math family (core/math_op_list.h)
#define MPSIM_MATH_ROW(name, rule) {#name, OpFamily::Unary, IntRule::rule},
#define MPSIM_MATH_DOC_ROW(name, doc, rule) MPSIM_MATH_ROW(name, rule)
    MPSIM_MATH_OPS(MPSIM_MATH_DOC_ROW) MPSIM_MATH_OPS_WITH_PARAMS(MPSIM_MATH_ROW)
#undef MPSIM_MATH_DOC_ROW
#undef MPSIM_MATH_ROW
    // binary
    {"add", OpFamily::Binary},
    {"sub", OpFamily::Binary},
    {"mul", OpFamily::Binary},
    {"div", OpFamily::Binary},
    {"maximum", OpFamily::Binary},
    {"minimum", OpFamily::Binary},
    {"pow", OpFamily::Binary},
// the binary math family (core/math_op_list.h)
#define MPSIM_BINARY_MATH_ROW(name, doc, rule) {#name, OpFamily::Binary, IntRule::rule},
    MPSIM_BINARY_MATH_OPS(MPSIM_BINARY_MATH_ROW)
#undef MPSIM_BINARY_MATH_ROW
    // comparison
    {"eq", OpFamily::Compare},
    {"ne", OpFamily::Compare},
    {"lt", OpFamily::Compare},
    {"le", OpFamily::Compare},
    {"gt", OpFamily::Compare},
    {"ge", OpFamily::Compare},
    // selection
    {"where", OpFamily::Where},
    {"clamp", OpFamily::Clamp},
    // data movement and creation
    {"copy", OpFamily::Copy},
    {"fill", OpFamily::Fill},
    {"arange", OpFamily::Arange},
    {"linspace", OpFamily::Arange},
    // reductions and normalizations over dims
    {"sum", OpFamily::Reduce},
    {"mean", OpFamily::Reduce},
    {"prod", OpFamily::Reduce},
    {"var", OpFamily::Reduce},
    {"std", OpFamily::Reduce},
    {"var_mean", OpFamily::Reduce},
    {"norm", OpFamily::Reduce},
    {"amax", OpFamily::Reduce},
    {"amin", OpFamily::Reduce},
    {"logsumexp", OpFamily::Reduce},
    {"argmax", OpFamily::ArgReduce},
    {"argmin", OpFamily::ArgReduce},
    {"softmax", OpFamily::Softmax},
    {"log_softmax", OpFamily::Softmax},
    // indexing
    {"gather", OpFamily::Gather},
    {"flip", OpFamily::Rearrange},
    {"pad", OpFamily::Rearrange},
    {"tril", OpFamily::Rearrange},
    {"triu", OpFamily::Rearrange},
    // normalization
    {"layer_norm", OpFamily::Norm},
    {"rms_norm", OpFamily::Norm},
    {"group_norm", OpFamily::Norm},
    {"batch_norm", OpFamily::Norm},
    // random numbers
    {"random", OpFamily::Random},
    // linear algebra
    {"matmul", OpFamily::Matmul},
    {"mm", OpFamily::Matmul},
    {"bmm", OpFamily::Matmul},
    {"addmm", OpFamily::Matmul},
    {"baddbmm", OpFamily::Matmul},
    {"linear", OpFamily::Matmul},
    // convolution
    {"conv2d", OpFamily::Conv},
    {"conv_transpose2d", OpFamily::Conv},
    // attention
    {"scaled_dot_product_attention", OpFamily::Attention},
    // pooling and resizing (kernels_simd/pool.cc, resize.cc)
    {"avg_pool2d", OpFamily::Pool},
    {"max_pool2d", OpFamily::Pool},
    {"adaptive_avg_pool2d", OpFamily::Pool},
    {"interpolate", OpFamily::Resize},
    // Stable Diffusion fusions (ONNX Runtime contrib ops; core/fused_ops.cc)
    {"bias_add", OpFamily::Fused},
    {"bias_split_gelu", OpFamily::Fused},
    {"skip_layer_norm", OpFamily::Fused},
    {"group_norm_nhwc", OpFamily::Fused},
    {"multi_head_attention", OpFamily::Fused},
    {"sort", OpFamily::Sort},
    {"cumsum", OpFamily::Scan},
    {"cumprod", OpFamily::Scan},
    {"logcumsumexp", OpFamily::Scan},
    {"cummax", OpFamily::Scan},
    {"cummin", OpFamily::Scan},
    // dense linear algebra in double (core/lapack_ops.cc; Note [lapack in double])
    {"linalg_lu_factor_ex", OpFamily::Lapack},
    {"linalg_lu_solve", OpFamily::Lapack},
    {"linalg_det", OpFamily::Lapack},
    {"linalg_slogdet", OpFamily::Lapack},
    {"linalg_inv_ex", OpFamily::Lapack},
    {"linalg_solve_ex", OpFamily::Lapack},
    {"linalg_solve_triangular", OpFamily::Lapack},
    {"linalg_cholesky_ex", OpFamily::Lapack},
    {"cholesky_solve", OpFamily::Lapack},
    {"cholesky_inverse", OpFamily::Lapack},
    {"geqrf", OpFamily::Lapack},
    {"linalg_householder_product", OpFamily::Lapack},
    {"ormqr", OpFamily::Lapack},
    {"linalg_qr", OpFamily::Lapack},
    {"linalg_eigh", OpFamily::Lapack},
    {"linalg_eig", OpFamily::Lapack},
    {"linalg_svd", OpFamily::Lapack},
    {"linalg_lstsq", OpFamily::Lapack},
    {"linalg_pinv", OpFamily::Lapack},
    {"linalg_matrix_rank", OpFamily::Lapack},
    {"linalg_matrix_norm", OpFamily::Lapack},
    {"linalg_cond", OpFamily::Lapack},
    {"linalg_matrix_power", OpFamily::Lapack},
    {"linalg_matrix_exp", OpFamily::Lapack},
    {"linalg_multi_dot", OpFamily::Lapack},
    // scatter and the ops made of it (core/scatter_ops.cc)
    {"scatter", OpFamily::Scatter},
    {"nonzero", OpFamily::Scatter},
    // the Fourier transforms: one kernel for c2c, r2c and c2r (core/complex_ops.cc)
    {"fft_fftn", OpFamily::Fourier},
};

inline constexpr int kNumOps = static_cast<int>(std::size(kOpDefs));

// A strong index into kOpDefs.
class OpId {
 public:
  constexpr OpId() = default;
  constexpr explicit OpId(std::uint16_t index) : index_(index) {}
  constexpr std::uint16_t index() const { return index_; }
  constexpr const OpDef& def() const { return kOpDefs[index_]; }
  constexpr std::string_view name() const { return def().name; }
  constexpr OpFamily family() const { return def().family; }
  friend constexpr bool operator==(OpId, OpId) = default;

 private:
  std::uint16_t index_ = 0;
};

// Compile-time lookup by name: an unknown name is not a constant expression.
consteval OpId op_id(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kOpDefs); ++i) {
    if (kOpDefs[i].name == name) return OpId(static_cast<std::uint16_t>(i));
  }
  throw "unknown op name";  // NOLINT: makes the call ill-formed at compile time
}

// Run-time lookup (CLI, Python); throws InvalidArgument naming the unknown op.
OpId find_op(std::string_view name);

// Every op of a family, in table order.
template <OpFamily F>
constexpr auto ops_of_family() {
  constexpr std::size_t n = [] {
    std::size_t c = 0;
    for (const OpDef& d : kOpDefs) c += d.family == F;
    return c;
  }();
  std::array<OpId, n> out{};
  std::size_t j = 0;
  for (std::size_t i = 0; i < std::size(kOpDefs); ++i) {
    if (kOpDefs[i].family == F) out[j++] = OpId(static_cast<std::uint16_t>(i));
  }
  return out;
}

}  // namespace mpsim
