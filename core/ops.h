// The public ops: free functions with PyTorch's names, argument order and defaults.
// Each validates its arguments (throwing an mpsim::Error subtype that names the op), infers the
// result's shape and dtype, and dispatches to the backend of the inputs' device.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/math_ops.h"
#include "core/scalar.h"
#include "core/sort_ops.h"
#include "core/tensor.h"

namespace mpsim {

// ---- Unary (elementwise). Integer inputs of float ops compute in float32, as in PyTorch. ----
Tensor abs(const Tensor& x);
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor gelu(const Tensor& x, std::string_view approximate = "none");  // "none" | "tanh"
Tensor softplus(const Tensor& x, Scalar beta = 1, Scalar threshold = 20);
Tensor reciprocal(const Tensor& x);
Tensor square(const Tensor& x);

// ---- Binary (elementwise, broadcasting, type promotion). ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);  // a + alpha * b
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);  // a - alpha * b
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
// rounding_mode: none (true division; integers divide as float32), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b,
           std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor div(const Tensor& a, Scalar b, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, Scalar exponent);
Tensor pow(Scalar base, const Tensor& exponent);

// ---- Comparison: bool results. ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, Scalar b);

// ---- Selection. ----
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, Scalar b);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b);
Tensor where(const Tensor& condition, Scalar a, Scalar b);
// At least one bound; NaN in x or in a bound gives NaN; min > max gives max everywhere.
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_max(const Tensor& x, Scalar max);

// ---- Reductions over dims (an empty list reduces every dim), PyTorch's dtype rules. ----
// Float inputs accumulate in double in a fixed blocked order (bit-identical for any thread
// count); the result is rounded once. Integer and bool sums and products give int64.
Tensor sum(const Tensor& x, const IntList& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const IntList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, const IntList& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// Variance with Bessel-style `correction` (1: unbiased), as torch.var(correction=...).
Tensor var(const Tensor& x, const IntList& dims = {}, std::int64_t correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& x, const IntList& dims = {}, std::int64_t correction = 1,
           bool keepdim = false);
// (var, mean) from one pass, as torch.var_mean.
std::pair<Tensor, Tensor> var_mean(const Tensor& x, const IntList& dims = {},
                                   std::int64_t correction = 1, bool keepdim = false);
// The 2-norm sqrt(sum |x|^2) over dims (torch.norm with p=2 / torch.linalg.vector_norm).
Tensor norm(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const IntList& dims, bool keepdim = false);
// Index (int64) of the first maximum / minimum; NaN counts as the maximum (and minimum), as
// PyTorch. No dim: over the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
// softmax / log_softmax over `dim`; `dtype` casts the input first.
Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt);

// ---- Normalization. Statistics in double (compensated, fixed order), each output rounded
// once: (x - mean) / sqrt(var + eps) * weight + bias. Optional weight/bias: absent = 1 / 0.
Tensor layer_norm(const Tensor& x, const IntList& normalized_shape,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) * weight; eps defaults to the dtype's machine epsilon (as
// torch.nn.functional.rms_norm).
Tensor rms_norm(const Tensor& x, const IntList& normalized_shape,
                const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);
// x is [N, C, *] (any memory format, e.g. channels-last NHWC views); C % num_groups == 0.
// The output keeps the input's memory format.
Tensor group_norm(const Tensor& x, std::int64_t num_groups,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// Inference: running statistics per channel (dim 1). training=true is not supported.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);

// ---- Linear algebra (float16, bfloat16, float32, float64). Golden: products exact in double,
// one double chain over k in order, one rounding (within 1 ulp of the correctly rounded sum
// unless it cancels); Fast: float32 fused multiply-adds. Note [gemm numerics] in
// kernels_simd/gemm.h; bit-identical for any thread count. ----
// torch.matmul: 1-d x 1-d (dot, a 0-d result), 2-d x 2-d, 1-d x 2-d, 2-d x 1-d, and batched
// with broadcasting of the batch dims (a 1-d operand gains and then loses a dim).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // [M, K] @ [K, N]
Tensor bmm(const Tensor& a, const Tensor& b);  // [B, M, K] @ [B, K, N], no broadcasting
// beta * input + alpha * (a @ b); input broadcasts to [M, N]; beta == 0 ignores input (NaN too).
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta = 1,
             Scalar alpha = 1);
// beta * input + alpha * bmm(a, b); input broadcasts to [B, M, N].
Tensor baddbmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta = 1,
               Scalar alpha = 1);
// x @ weight^T + bias: x [*, in], weight [out, in] (or [in]: the out dim is dropped),
// bias broadcasting to [*, out].
Tensor linear(const Tensor& x, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);

// ---- Convolution (float16, bfloat16, float32, float64): x [N, C, H, W] or unbatched
// [C, H, W], weight [Cout, C / groups, kH, kW], bias [Cout]; stride, padding and dilation as
// one or two values. The output keeps x's memory format (NCHW or channels-last). Numerics as
// matmul (an implicit GEMM whose chain runs over (kh, kw, c)): NCHW and channels-last inputs
// give the same bits. ----
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              const IntList& stride = {1, 1}, const IntList& padding = {0, 0},
              const IntList& dilation = {1, 1}, std::int64_t groups = 1);
namespace detail {
Tensor conv2d_padding_mode(const Tensor& x, const Tensor& weight,
                           const std::optional<Tensor>& bias, const IntList& stride,
                           std::string_view padding, const IntList& dilation, std::int64_t groups);
}  // namespace detail
// padding "valid" (none) or "same" (output size = input size, stride 1 only; an odd total
// padding puts the extra row / column at the bottom / right, as PyTorch). A template so that
// a braced padding such as {0, 0} never reads as a string.
template <class S>
  requires std::convertible_to<const S&, std::string_view>
Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
              const IntList& stride, const S& padding, const IntList& dilation = {1, 1},
              std::int64_t groups = 1) {
  return detail::conv2d_padding_mode(x, weight, bias, stride, padding, dilation, groups);
}
// The transposed convolution (the gradient of conv2d with respect to its input), as
// torch.nn.functional.conv_transpose2d: x [N, C, H, W] or [C, H, W], weight [C, Cout / groups,
// kH, kW], bias [Cout]; output size (H - 1) stride - 2 padding + dilation (kH - 1) +
// output_padding + 1 (likewise W), where each output_padding must be smaller than its stride
// or its dilation. Computed by gathering, one implicit GEMM per output phase: every output is
// one chain over the taps that land on it, with matmul's numerics (K = those taps x
// C / groups); NCHW and channels-last inputs give the same bits and the output keeps x's format.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt,
                        const IntList& stride = {1, 1}, const IntList& padding = {0, 0},
                        const IntList& output_padding = {0, 0}, std::int64_t groups = 1,
                        const IntList& dilation = {1, 1});

// ---- Attention (float16, bfloat16, float32, float64). q [*, L, E], k [*, S, E], v [*, S, Ev]
// with broadcast batch dims; attn_mask bool (true = attend) or additive in q's dtype,
// broadcast to [*, L, S]; is_causal masks key j > query i (top-left aligned, as PyTorch);
// scale defaults to 1 / sqrt(E). Flash-style: the [L, S] scores are never formed (Note
// [attention memory] in kernels_simd/attention.h); slice_size bounds the batch x heads in
// flight (attention slicing) and never changes a bit. Fully masked rows are NaN, as
// PyTorch. dropout_p must be 0 (inference). Golden: double scores and online softmax,
// within 2 ulp of a long double reference (Note [attention numerics]). ----
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask = std::nullopt,
                                    double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    std::optional<std::int64_t> slice_size = std::nullopt);

// ---- Random numbers and ranges. ----
// Note [random numbers]: one process-wide Philox4x32-10 stream (kernels_simd/philox.h).
// manual_seed(s) restarts it; every call reserves the next ceil(numel / 2) counter blocks and
// element i takes 64 bits of block offset + i / 2, so the numbers depend only on the seed and
// the sequence of calls: the same on cpu and mps, for any thread count and any partition.
void manual_seed(std::uint64_t seed);
std::uint64_t initial_seed();
// Uniform on [0, 1): float32/float16/bfloat16 from 24 random bits, float64 from 53.
Tensor rand(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor uniform(const Shape& shape, double low, double high, DType dtype = DType::Float32,
               Device device = Device::cpu());
// Standard normal by Box-Muller in double: sqrt(-2 log u1) cos(2 pi u2), u1 in (0, 1] and u2 in
// [0, 1) from the element's two 32-bit halves, with mpsim's own log and cos (Note [normal
// transform] in kernels_simd/normal.cc: the same bits on every target); rounded once.
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor normal(double mean, double std, const Shape& shape, DType dtype = DType::Float32,
              Device device = Device::cpu());
// Integers in [low, high): low + bits mod (high - low).
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, DType dtype = DType::Int64,
               Device device = Device::cpu());
// 1 with probability p (elementwise, p in [0, 1]), else 0, in p's dtype.
Tensor bernoulli(const Tensor& p);
// training: zero each element with probability p and scale the rest by 1 / (1 - p) (computed in
// double, rounded once); not training: a copy of x.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
// steps values from start to end inclusive, as torch.linspace (computed in double from both
// ends, rounded once).
Tensor linspace(double start, double end, std::int64_t steps, DType dtype = DType::Float32,
                Device device = Device::cpu());

// ---- Data movement. Results are new tensors (splits and chunks are views). ----
// cat: every tensor has the same sizes except along `dim`; dtypes promote (PyTorch's rule);
// 1-d empty tensors are skipped, as PyTorch's legacy rule.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const IntList& split_sizes, std::int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
// index: 1-d int64 or int32 tensor of positions in [0, size(dim)).
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
// out[i][j] = x[index[i][j]][j] (dim 0); index has x's rank and index.size(d) <= x.size(d).
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
Tensor flip(const Tensor& x, const IntList& dims);
Tensor repeat(const Tensor& x, const IntList& repeats);
// F.pad: `pad` holds (left, right) pairs from the last dim backwards. mode "constant"
// (negative pads crop), "reflect" (pad < size) or "replicate".
Tensor pad(const Tensor& x, const IntList& pad, std::string_view mode = "constant",
           double value = 0);
// Lower / upper triangle of the last two dims, the rest zero; `diagonal` shifts it.
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);

// ---- Pooling and resizing (core/pool_ops.cc). x is [N, C, H, W] in any memory format (or
// [C, H, W] for the pools); the output keeps a channels-last input's memory format, else is
// contiguous. float16, bfloat16, float32, float64. Lists of sizes take one value (both dims) or
// two ({h, w}). Averages sum in double and round once; max is exact; every output bit is the
// same for NCHW and channels-last and for any thread count. ----
// stride {} means kernel_size; padding <= kernel_size / 2; divisor_override replaces the
// window's element count. Windows wholly in the padding (ceil_mode) give 0.
Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0, 0}, bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
// NaN in a window gives NaN (the last NaN, as PyTorch); ties keep the first maximum.
Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0, 0}, const IntList& dilation = {1, 1},
                  bool ceil_mode = false);
// (values, int64 indices into each flattened H * W input plane).
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntList& kernel_size,
                                                  const IntList& stride = {},
                                                  const IntList& padding = {0, 0},
                                                  const IntList& dilation = {1, 1},
                                                  bool ceil_mode = false);
// Output [.., oh, ow]: element i averages [floor(i * H / oh), ceil((i + 1) * H / oh)).
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);
// F.interpolate for 4-d x: exactly one of size ({h, w} or {s}) and scale_factor (output size
// floor(in * scale)); mode "nearest" (PyTorch's legacy index rule, values copied) or
// "bilinear" (align_corners false by default; weights and sum in double, rounded once).
Tensor interpolate(const Tensor& x, const std::optional<IntList>& size = std::nullopt,
                   const std::optional<std::vector<double>>& scale_factor = std::nullopt,
                   std::string_view mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt);

// ---- Stable Diffusion fusions (ONNX Runtime contrib semantics; core/fused_ops.cc). float16,
// bfloat16, float32, float64; every operand of the input's dtype and device. Each result has
// the bits of its unfused composition in mpsim, in Golden and in Fast (the fused kernel rounds
// where the composition rounds; docs/ops.md, "Stable Diffusion fusions"). ----
// BiasAdd: x + bias + skip, rounded after each add as add(add(x, bias), skip); x and skip
// [*, C] of one shape (ORT: [B, S, C]), bias [C].
Tensor bias_add(const Tensor& x, const Tensor& bias, const Tensor& skip);
// BiasSplitGelu: y = x + bias (rounded), split in halves a, b of the last dim, a * gelu(b)
// (exact erf gelu); x [*, 2D] (ORT: [B, S, 2D]), bias [2D]; result [*, D].
Tensor bias_split_gelu(const Tensor& x, const Tensor& bias);
// SkipLayerNormalization: layer_norm(s, {C}, gamma, beta, eps) with s = x + skip (+ bias),
// rounded after each add; x and skip [*, C], gamma, beta, bias [C].
Tensor skip_layer_norm(const Tensor& x, const Tensor& skip, const Tensor& gamma,
                       const std::optional<Tensor>& beta = std::nullopt,
                       const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// As skip_layer_norm, also returning s (ORT's optional fourth output): {output, s}.
std::pair<Tensor, Tensor> skip_layer_norm_with_sum(const Tensor& x, const Tensor& skip,
                                                   const Tensor& gamma,
                                                   const std::optional<Tensor>& beta = std::nullopt,
                                                   const std::optional<Tensor>& bias = std::nullopt,
                                                   double eps = 1e-5);
// GroupNorm of ORT: x is NHWC [N, H, W, C] (a plain 4-d tensor, channels last in its sizes),
// normalized over (H, W, C / num_groups) per group, then gamma, beta [C]; activation "none" or
// "silu". Equals group_norm(x.permute({0, 3, 1, 2}), ...) (then silu), permuted back.
Tensor group_norm_nhwc(const Tensor& x, std::int64_t num_groups, const Tensor& gamma,
                       const Tensor& beta, double eps = 1e-5,
                       std::string_view activation = "none");
// MultiHeadAttention with packed inputs; H and D come from the packed dims.
// - self-attention: query is packed QKV [B, S, H, 3, D], key absent;
// - cross-attention: query [B, L, H * D], key is packed KV [B, S, H, 2, D].
// Result [B, L, H * D]: per head softmax(q k^T scale) v (scale: 1 / sqrt(D) by default), the
// attention kernel run on strided views of the packed tensors (no copy). Equals
// scaled_dot_product_attention on the permuted views, output permuted back.
Tensor multi_head_attention(const Tensor& query, const std::optional<Tensor>& key = std::nullopt,
                            std::optional<double> scale = std::nullopt);

// ---- Results written into a given tensor (torch's out= and in-place methods). ----
// While an OutDestination lives, the first elementwise op of the name it was given that runs
// on its thread writes its result straight into `out` instead of a new tensor, when out has
// the result's shape, dtype, device and the strides the op would give its result, and overlaps
// none of the op's inputs, or (cpu only) is exactly one of them, as an in-place op's self is.
// Any other op, or that op when out does not qualify, allocates its result as usual; the
// caller copies it (Note [out destination] in core/ops.cc).
class OutDestination {
 public:
  OutDestination(Tensor out, std::string_view op);
  ~OutDestination();
  OutDestination(const OutDestination&) = delete;
  OutDestination& operator=(const OutDestination&) = delete;
  // Whether an op wrote its result into out (the op then returned a tensor equal to out).
  bool used() const { return used_; }
  // The elementwise front end's call: out when this thread's destination, offered to `op` and
  // unclaimed, qualifies for a result of this layout over these inputs (and marks it used);
  // else an undefined tensor. The first call for the op claims it, qualifying or not.
  static Tensor claim(std::string_view op, const Shape& shape, const Strides& strides,
                      DType dtype, Device device, const std::vector<Tensor>& inputs);
  // Whether an op may read `input` while writing `out`: their bytes are disjoint, or (cpu) they
  // are the same elements (address, sizes, strides and dtype).
  static bool may_read_while_writing(const Tensor& input, const Tensor& out);

 private:
  Tensor out_;
  std::string op_;
  bool open_ = true;
  bool used_ = false;
  OutDestination* previous_;
};

// ---- Operators. ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& x);

}  // namespace mpsim
