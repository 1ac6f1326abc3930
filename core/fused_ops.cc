// Front ends of the Stable Diffusion fusions (ONNX Runtime contrib semantics): validation with
// messages naming the op, the argument, what was expected and what was given, then one
// dispatch of the fused kernel (kernels_simd/fused.h) under the fusion's own op id, so the
// profiler, the support table and the fallback path see the fusion, not its parts.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/runtime.h"

namespace mpsim {
namespace {

std::string prefix(OpId op) {
  std::string p = "[";  // appended, not "[" + name: GCC 12 warns falsely (-Wrestrict) on that
  p += op.name();
  p += "] ";
  return p;
}

// x: the operand that sets the dtype and device of the others.
void check_main(OpId op, const Tensor& x, const char* what, std::int64_t min_dim) {
  if (!x.defined()) throw InvalidArgument(prefix(op) + "expected a defined " + what);
  if (!is_floating(x.dtype())) {
    throw DTypeError(prefix(op) + "expected " + what +
                     " of a floating dtype (float16, bfloat16, float32, float64), got " +
                     std::string(dtype_name(x.dtype())));
  }
  if (x.dim() < min_dim) {
    throw ShapeError(prefix(op) + "expected " + what + " of at least " + std::to_string(min_dim) +
                     " dims, got " + x.sizes().to_string());
  }
}

// t: defined, of x's dtype and device, and (when expected is given) of that shape.
void check_operand(OpId op, const Tensor& t, const char* what, const Tensor& x,
                   const std::optional<Shape>& expected) {
  if (!t.defined()) throw InvalidArgument(prefix(op) + "expected a defined " + what);
  if (t.dtype() != x.dtype()) {
    throw DTypeError(prefix(op) + "expected " + what + " of dtype " +
                     std::string(dtype_name(x.dtype())) + " (the input's), got " +
                     std::string(dtype_name(t.dtype())));
  }
  if (t.device() != x.device()) {
    throw DeviceError(prefix(op) + "expected " + what + " on " + x.device().to_string() +
                      " (the input's device), got " + t.device().to_string());
  }
  if (expected && t.sizes() != *expected) {
    throw ShapeError(prefix(op) + "expected " + what + " of shape " + expected->to_string() +
                     ", got " + t.sizes().to_string());
  }
}

Shape last_dim(const Tensor& x) { return Shape({x.size(-1)}); }

std::pair<Tensor, Tensor> skip_layer_norm_impl(const Tensor& x, const Tensor& skip,
                                               const Tensor& gamma,
                                               const std::optional<Tensor>& beta,
                                               const std::optional<Tensor>& bias, double eps,
                                               bool with_sum) {
  constexpr OpId kOp = op_id("skip_layer_norm");
  check_main(kOp, x, "input", 1);
  check_operand(kOp, skip, "skip", x, x.sizes());
  check_operand(kOp, gamma, "gamma", x, last_dim(x));
  const bool has_beta = beta && beta->defined(), has_bias = bias && bias->defined();
  if (has_beta) check_operand(kOp, *beta, "beta", x, last_dim(x));
  if (has_bias) check_operand(kOp, *bias, "bias", x, last_dim(x));
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  Tensor sum = with_sum ? empty(x.sizes(), x.dtype(), x.device()) : Tensor();
  if (x.numel() == 0) return {out, sum};
  // layer_norm without a bias adds zeros (core/norm_ops.cc): so does the fusion.
  std::vector<Tensor> inputs = {
      x.contiguous(), skip.contiguous(), gamma.contiguous(),
      has_beta ? beta->contiguous() : zeros(last_dim(x), x.dtype(), x.device())};
  if (has_bias) inputs.push_back(bias->contiguous());
  std::vector<Tensor> outputs = {out};
  if (with_sum) outputs.push_back(sum);
  dispatch(OpCall{kOp, x.dtype(), std::move(inputs), std::move(outputs),
                  SkipLayerNormParams{eps, has_bias}});
  return {out, sum};
}

}  // namespace

Tensor bias_add(const Tensor& x, const Tensor& bias, const Tensor& skip) {
  constexpr OpId kOp = op_id("bias_add");
  check_main(kOp, x, "input", 1);
  check_operand(kOp, bias, "bias", x, last_dim(x));
  check_operand(kOp, skip, "skip", x, x.sizes());
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  dispatch(OpCall{kOp,
                  x.dtype(),
                  {x.contiguous(), bias.contiguous(), skip.contiguous()},
                  {out}});
  return out;
}

Tensor bias_split_gelu(const Tensor& x, const Tensor& bias) {
  constexpr OpId kOp = op_id("bias_split_gelu");
  check_main(kOp, x, "input", 1);
  const std::int64_t c = x.size(-1);
  if (c % 2 != 0) {
    throw ShapeError(prefix(kOp) + "expected the last dim of input to be even (split in halves)" +
                     ", got input of shape " + x.sizes().to_string());
  }
  check_operand(kOp, bias, "bias", x, last_dim(x));
  std::vector<std::int64_t> dims(x.sizes().begin(), x.sizes().end());
  dims.back() = c / 2;
  Tensor out = empty(Shape(dims), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  dispatch(OpCall{kOp, x.dtype(), {x.contiguous(), bias.contiguous()}, {out}});
  return out;
}

Tensor skip_layer_norm(const Tensor& x, const Tensor& skip, const Tensor& gamma,
                       const std::optional<Tensor>& beta, const std::optional<Tensor>& bias,
                       double eps) {
  return skip_layer_norm_impl(x, skip, gamma, beta, bias, eps, false).first;
}

std::pair<Tensor, Tensor> skip_layer_norm_with_sum(const Tensor& x, const Tensor& skip,
                                                   const Tensor& gamma,
                                                   const std::optional<Tensor>& beta,
                                                   const std::optional<Tensor>& bias, double eps) {
  return skip_layer_norm_impl(x, skip, gamma, beta, bias, eps, true);
}

Tensor group_norm_nhwc(const Tensor& x, std::int64_t num_groups, const Tensor& gamma,
                       const Tensor& beta, double eps, std::string_view activation) {
  constexpr OpId kOp = op_id("group_norm_nhwc");
  check_main(kOp, x, "input", 4);
  if (x.dim() != 4) {
    throw ShapeError(prefix(kOp) + "expected input of shape [N, H, W, C] (NHWC), got " +
                     x.sizes().to_string());
  }
  const std::int64_t c = x.size(3);
  if (num_groups <= 0 || c % num_groups != 0) {
    throw InvalidArgument(prefix(kOp) + "expected the number of channels " + std::to_string(c) +
                          " (the last dim of input) to be divisible by num_groups " +
                          std::to_string(num_groups));
  }
  if (activation != "none" && activation != "silu") {
    throw InvalidArgument(prefix(kOp) + "expected activation 'none' or 'silu', got '" +
                          std::string(activation) + "'");
  }
  check_operand(kOp, gamma, "gamma", x, last_dim(x));
  check_operand(kOp, beta, "beta", x, last_dim(x));
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  dispatch(OpCall{kOp,
                  x.dtype(),
                  {x.contiguous(), gamma.contiguous(), beta.contiguous()},
                  {out},
                  GroupNormNhwcParams{num_groups, eps, activation == "silu"}});
  return out;
}

Tensor multi_head_attention(const Tensor& query, const std::optional<Tensor>& key,
                            std::optional<double> scale) {
  constexpr OpId kOp = op_id("multi_head_attention");
  const bool packed_qkv = !key || !key->defined();
  check_main(kOp, query, "query", packed_qkv ? 5 : 3);
  const Tensor qc = query.contiguous();
  Tensor q, k, v;  // [B, H, L or S, D] views of the packed tensors
  std::int64_t b = 0, l = 0, h = 0, d = 0;
  if (packed_qkv) {
    if (query.dim() != 5 || query.size(3) != 3) {
      throw ShapeError(prefix(kOp) +
                       "expected query to be packed QKV [B, S, H, 3, D] when key is absent, got " +
                       query.sizes().to_string());
    }
    b = query.size(0), l = query.size(1), h = query.size(2), d = query.size(4);
    q = qc.select(3, 0).permute({0, 2, 1, 3});
    k = qc.select(3, 1).permute({0, 2, 1, 3});
    v = qc.select(3, 2).permute({0, 2, 1, 3});
  } else {
    check_operand(kOp, *key, "key", query, std::nullopt);
    const Tensor& kv = *key;
    if (kv.dim() != 5 || kv.size(3) != 2) {
      throw ShapeError(prefix(kOp) + "expected key to be packed KV [B, S, H, 2, D], got " +
                       kv.sizes().to_string());
    }
    b = kv.size(0), h = kv.size(2), d = kv.size(4);
    if (query.dim() != 3 || query.size(0) != b || query.size(2) != h * d) {
      throw ShapeError(prefix(kOp) + "expected query of shape [B, L, H * D] = [" +
                       std::to_string(b) + ", L, " + std::to_string(h * d) + "] for key of shape " +
                       kv.sizes().to_string() + ", got " + query.sizes().to_string());
    }
    l = query.size(1);
    const Tensor kvc = kv.contiguous();
    q = qc.view(Shape({b, l, h, d})).permute({0, 2, 1, 3});
    k = kvc.select(3, 0).permute({0, 2, 1, 3});
    v = kvc.select(3, 1).permute({0, 2, 1, 3});
  }
  const Shape out_shape({b, l, h * d});
  // No keys: an empty sum of weights, a zero result (scaled_dot_product_attention's).
  if (k.size(2) == 0) return zeros(out_shape, query.dtype(), query.device());
  Tensor out = empty(out_shape, query.dtype(), query.device());
  if (out.numel() == 0) return out;
  const Tensor out_heads = out.view(Shape({b, l, h, d})).permute({0, 2, 1, 3});
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));
  dispatch(OpCall{
      kOp, query.dtype(), {q, k, v}, {out_heads}, MultiHeadAttentionParams{s}});
  return out;
}

}  // namespace mpsim
