// What a kernel sees: strided views of its operands, the op's typed parameters, the precision,
// and the status it reports instead of throwing; and the table a backend fills with kernels.
// Kernels include this header only: they never see a Tensor (core/backend.h owns those).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <variant>
#include <vector>

#include "base/error.h"
#include "core/dtype.h"
#include "core/op_list.h"
#include "core/runtime.h"
#include "core/scalar.h"

namespace mpsim {

// A plain strided view: what a kernel sees of a tensor. Strides are in elements. `data` points
// at the first element (storage offset applied). Valid for the duration of one kernel call.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::Float32;
  std::span<const std::int64_t> sizes;
  std::span<const std::int64_t> strides;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::int64_t s : sizes) n *= s;
    return n;
  }
  template <class T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

// ---- The typed parameters of the ops that have any. ----
// Note [op parameters]
// An op's front end (core/*_ops.cc) validates its arguments and fills every field of its
// parameter struct; the defaults of the user-facing arguments live in the op's declaration
// (core/op_signatures.cc) and nowhere else, so no field has a default here. A misspelt field
// fails to compile; a kernel handed another op's struct stops at its MPSIM_CHECK (an internal
// invariant, never user input). Lists of dims are in the order the kernel reads them.

enum class GeluApproximation : std::uint8_t { None, Tanh };
struct GeluParams {
  GeluApproximation approximate;
};
struct SoftplusParams {
  double beta;
  double threshold;
};
// The math family's parameters (core/math_op_list.h): elu's alpha, scale and input_scale;
// celu's alpha; logit's eps (NaN: none); round's decimals.
struct MathParams {
  double alpha;
  double scale;
  double input_scale;
  double eps;
  std::int64_t decimals;
};
// sort: descending order (NaN first; ascending puts NaN last, as torch).
struct SortParams {
  bool descending;
};
// The scans (cumsum, cumprod, logcumsumexp, cummax, cummin) carry no parameters: the op says
// which.
// add and sub: a +- alpha * b.
struct AlphaParams {
  Scalar alpha;
};
enum class RoundingMode : std::uint8_t { None, Trunc, Floor };
struct DivParams {
  RoundingMode rounding_mode;
};
// An absent bound is passed as the input itself and ignored.
struct ClampParams {
  bool has_min;
  bool has_max;
};
// One part of a larger output (cat): the whole output's size, which decides streaming stores
// (Note [streaming stores]). A copy without it writes its whole output.
struct CopyParams {
  std::int64_t output_bytes;
};
struct FillParams {
  Scalar value;
};
struct ArangeParams {
  Scalar start;
  Scalar step;
};
struct LinspaceParams {
  double start;
  double end;
};
// The input is permuted so that the reduced dims are the trailing `num_reduced` ones.
// `correction` is var's, std's and var_mean's (0 for the other reductions).
struct ReduceParams {
  std::int64_t num_reduced;
  std::int64_t correction;
};
// out[e] = in[e + index[e] * stride], index values in [0, size).
struct GatherParams {
  std::int64_t stride;
  std::int64_t size;
};
// scatter: out[target(e)] = src[e], or combined with it by `reduce`, for every element e of
// the index in row-major (source) order; target(e) is e's position with coordinate `dim`
// replaced by index[e] (Note [scatter order] in kernels_simd/scatter.cc). A negative index
// counts from the end when `wrap_negative` (put, index_fill, index_put), else is out of range.
// Sum adds alpha * src (index_add's alpha; 1 otherwise). include_self: the output's own value
// takes part in the reduction (scatter_reduce's and index_reduce's include_self).
enum class ScatterReduce : std::uint8_t { None, Sum, Prod, Mean, Amax, Amin };
struct ScatterParams {
  std::int64_t dim;
  ScatterReduce reduce;
  bool include_self;
  bool wrap_negative;
  double alpha;
};
struct FlipParams {
  std::vector<std::int64_t> dims;  // distinct, in [0, ndim)
};
enum class PadMode : std::uint8_t { Constant, Reflect, Replicate };
struct PadParams {
  std::vector<std::int64_t> pads;  // (left, right) of every dim, in dim order
  PadMode mode;
  Scalar value;  // Constant's
};
struct TriangleParams {
  std::int64_t diagonal;
};
// layer_norm, rms_norm, group_norm: each group is the trailing `num_reduced` dims;
// batch_norm normalizes over every dim but the channels (num_reduced unused: 0).
struct NormParams {
  std::int64_t num_reduced;
  double eps;
};
enum class RandomDist : std::uint8_t { Uniform, Normal, Randint, Bernoulli, Dropout };
// Element i of the output depends only on (seed, offset, i). Uniform: [a, b); Normal: mean a,
// std b; Randint: low + bits mod range; Bernoulli: the input's probabilities; Dropout: the
// input, zeroed with probability a.
struct RandomParams {
  RandomDist dist;
  std::uint64_t seed;
  std::uint64_t offset;
  double a;
  double b;
  std::int64_t low;
  std::uint64_t range;
};
// out = alpha * a @ b + beta * c (beta unused without c).
struct MatmulParams {
  double alpha;
  double beta;
};
// 2-d convolution (and its transpose): [h, w] each; padding is the leading side's.
struct ConvParams {
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> padding;
  std::vector<std::int64_t> dilation;
  std::int64_t groups;
};
// slice_size: queries per slice of the score matrix (0: the kernel's choice).
struct AttentionParams {
  double scale;
  bool is_causal;
  std::int64_t slice_size;
};
// 2-d pooling windows, [h, w] each. count_include_pad and divisor_override are avg_pool2d's
// (divisor_override 0: none).
struct PoolParams {
  std::vector<std::int64_t> kernel_size;
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> padding;
  std::vector<std::int64_t> dilation;
  bool count_include_pad;
  std::int64_t divisor_override;
};
enum class ResizeMode : std::uint8_t { Nearest, Bilinear };
// scale_h, scale_w: the user's scale factors (0: derived from the sizes).
struct ResizeParams {
  ResizeMode mode;
  bool align_corners;
  double scale_h;
  double scale_w;
};
struct SkipLayerNormParams {
  double eps;
  bool has_bias;
};
struct GroupNormNhwcParams {
  std::int64_t num_groups;
  double eps;
  bool silu;
};
struct MultiHeadAttentionParams {
  double scale;
};
// The lapack family (kernels_simd/lapack.h, Note [lapack in double]); each op reads the fields
// its front end (core/lapack_ops.cc) says it does.
enum class MatrixOrd : std::uint8_t { Fro, Nuc, One, MinusOne, Two, MinusTwo, Inf, MinusInf };
struct LapackParams {
  bool upper;          // which triangle holds the matrix (cholesky, eigh, triangular solves)
  bool left;           // A X = B; false: X A = B (solves, ormqr: Q C; false: C Q)
  bool unitriangular;  // solve_triangular: a unit diagonal, not read
  bool transpose;      // lu_solve: A^T X = B; ormqr: Q^T
  bool full;           // svd: full_matrices; qr: mode 'complete'
  bool vectors;        // eigh, svd: the vectors too (else the values only)
  bool hermitian;      // pinv, matrix_rank: through eigh instead of svd
  bool residuals;      // lstsq: the squared residuals of each column
  double atol;         // pinv, matrix_rank: singular values <= max(atol, rtol * s_max) are zero
  double rtol;         // (lstsq: rcond)
  MatrixOrd ord;       // matrix_norm, cond
  std::int64_t power;  // matrix_power
};

// std::monostate: an op without parameters.
// The Fourier transforms (Note [Fourier transforms] in kernels_simd/fft.cc). The input is read
// zero-padded or trimmed to `sizes` along `dims` (C2R: to sizes.back() / 2 + 1 along the last
// of dims, then extended by Hermitian symmetry); the output has `sizes` along dims but R2C's
// last, which keeps sizes.back() / 2 + 1. C2R's output is the real part.
enum class FftKind : std::uint8_t { C2C, R2C, C2R };
struct FftParams {
  std::vector<std::int64_t> dims;   // distinct, in [0, ndim); R2C/C2R: the one-sided dim last
  std::vector<std::int64_t> sizes;  // the signal length along each of dims
  FftKind kind;
  bool inverse;  // exponent sign +: sum_j x_j exp(+2 pi i j k / n)
  double scale;  // every output is multiplied by it (the norm mode's 1, 1/n or 1/sqrt(n))
};

using OpParams =
    std::variant<std::monostate, GeluParams, SoftplusParams, MathParams, SortParams, AlphaParams,
                 DivParams, ClampParams, CopyParams, FillParams, ArangeParams, LinspaceParams,
                 ReduceParams, GatherParams, ScatterParams, FlipParams, PadParams, TriangleParams,
                 NormParams, RandomParams, MatmulParams, ConvParams, AttentionParams, PoolParams,
                 ResizeParams, SkipLayerNormParams, GroupNormNhwcParams, MultiHeadAttentionParams,
                 LapackParams, FftParams>;

// What a kernel may report instead of throwing (kernels and TBB bodies never throw).
enum class KernelStatus : std::uint8_t {
  Ok,
  IntegerDivisionByZero,
  IndexOutOfRange,  // an index operand held a value outside the indexed dim (nothing read there)
};

// One kernel invocation. Inputs have already been validated, promoted to the op's compute
// dtype and broadcast (expanded) to the output's sizes by the op front end, unless the op's
// family says otherwise (Copy converts between dtypes; Where's condition is bool).
struct KernelCall {
  OpId op;
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  const OpParams& params;
  // The precision of the caller's thread when the op was called (stamped once, by dispatch).
  Precision precision;

  // The op's parameters (Note [op parameters]).
  template <class P>
  const P& params_as() const {
    const P* p = std::get_if<P>(&params);
    MPSIM_CHECK(p != nullptr);
    return *p;
  }
  bool fast() const { return precision == Precision::Fast; }
};

using KernelFn = KernelStatus (*)(const KernelCall&);

// A backend's kernels, one slot per op of the op list; an empty slot (or a dtype missing from
// its mask) means "unsupported" and sends the call to the fallback path.
class KernelTable {
 public:
  void set(OpId op, KernelFn fn, std::initializer_list<DType> dtypes);
  KernelFn kernel(OpId op) const { return slots_[op.index()].fn; }
  bool supports(OpId op, DType dtype) const {
    const Slot& s = slots_[op.index()];
    return s.fn != nullptr && (s.dtypes >> static_cast<int>(dtype) & 1u) != 0;
  }
  // Removes an op (e.g. MPSIM_MPS_DISABLE_OPS) so calls take the fallback path.
  void clear(OpId op) { slots_[op.index()] = Slot{}; }

 private:
  struct Slot {
    KernelFn fn = nullptr;
    std::uint32_t dtypes = 0;
  };
  std::array<Slot, kNumOps> slots_{};
};

inline constexpr std::initializer_list<DType> kAllDTypes = {
    DType::Bool,    DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
    DType::Int64,   DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr std::initializer_list<DType> kAllAndComplexDTypes = {
    DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int16,     DType::Int32,
    DType::Int64,   DType::Float16,  DType::BFloat16, DType::Float32,  DType::Float64,
    DType::Complex32, DType::Complex64, DType::Complex128};
inline constexpr std::initializer_list<DType> kComplexDTypes = {DType::Complex32, DType::Complex64,
                                                                DType::Complex128};
inline constexpr std::initializer_list<DType> kNumericDTypes = {
    DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,  DType::Int64,
    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr std::initializer_list<DType> kFloatDTypes = {DType::Float16, DType::BFloat16,
                                                              DType::Float32, DType::Float64};

}  // namespace mpsim
