// Front end of scaled_dot_product_attention: validation as PyTorch, batch broadcasting of
// q, k, v and the mask, and one dispatch of the flash-style kernel (kernels_simd/attention.h).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/runtime.h"

namespace mpsim {
namespace {

constexpr OpId kSdpa = op_id("scaled_dot_product_attention");
const std::string kName = "[scaled_dot_product_attention] ";

void check_operand(const Tensor& t, const char* what, const Tensor& q) {
  if (!t.defined()) throw InvalidArgument(kName + "expected a defined " + what);
  if (t.dim() < 2) {
    throw ShapeError(kName + "expected " + what + " of at least 2 dims [..., seq, dim], got " +
                     t.sizes().to_string());
  }
  if (t.dtype() != q.dtype()) {
    throw DTypeError(kName + "expected " + what + " of dtype " +
                     std::string(dtype_name(q.dtype())) + " (the query's), got " +
                     std::string(dtype_name(t.dtype())));
  }
  if (t.device() != q.device()) {
    throw DeviceError(kName +
                      "expected all tensors to be on the same device, but found at least "
                      "two devices, " +
                      q.device().to_string() + " and " + t.device().to_string());
  }
}

Shape batch_of(const Tensor& t) {
  return Shape(std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end() - 2));
}

Shape with_tail(const Shape& batch, std::int64_t a, std::int64_t b) {
  std::vector<std::int64_t> dims(batch.begin(), batch.end());
  dims.push_back(a);
  dims.push_back(b);
  return Shape(dims);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale,
                                    std::optional<std::int64_t> slice_size) {
  if (!q.defined()) throw InvalidArgument(kName + "expected a defined query");
  if (!is_floating(q.dtype())) {
    throw DTypeError(kName + "supports floating point tensors (float16, bfloat16, float32, " +
                     "float64), got query of dtype " + std::string(dtype_name(q.dtype())));
  }
  check_operand(q, "query", q);
  check_operand(k, "key", q);
  check_operand(v, "value", q);
  if (!(dropout_p >= 0 && dropout_p <= 1)) {
    throw InvalidArgument(kName + "dropout_p must be in [0, 1], got " + std::to_string(dropout_p));
  }
  if (dropout_p != 0) {
    throw NotImplementedError(
        kName + "dropout_p > 0 is not supported: mpsim's attention is the " +
        "deterministic inference reference; got dropout_p = " + std::to_string(dropout_p));
  }
  if (slice_size && *slice_size <= 0) {
    throw InvalidArgument(kName + "slice_size must be positive, got " +
                          std::to_string(*slice_size));
  }
  const std::int64_t l = q.size(-2), e = q.size(-1), s = k.size(-2), ev = v.size(-1);
  if (k.size(-1) != e) {
    throw ShapeError(kName + "expected query and key to share the embedding dim, got query " +
                     q.sizes().to_string() + " and key " + k.sizes().to_string());
  }
  if (v.size(-2) != s) {
    throw ShapeError(kName + "expected key and value to share the sequence length, got key " +
                     k.sizes().to_string() + " and value " + v.sizes().to_string());
  }
  const std::string op(kSdpa.name());
  const Shape batch =
      broadcast_shapes(op, broadcast_shapes(op, batch_of(q), batch_of(k)), batch_of(v));
  const bool has_mask = attn_mask && attn_mask->defined();
  if (has_mask && is_causal) {
    throw InvalidArgument(kName + "an explicit attn_mask must not be given with is_causal=true");
  }
  const Shape scores = with_tail(batch, l, s);
  if (has_mask) {
    const Tensor& m = *attn_mask;
    if (m.dtype() != DType::Bool && m.dtype() != q.dtype()) {
      throw DTypeError(kName + "expected attn_mask of dtype bool or " +
                       std::string(dtype_name(q.dtype())) + " (the query's), got " +
                       std::string(dtype_name(m.dtype())));
    }
    if (m.device() != q.device()) {
      throw DeviceError(kName + "expected attn_mask on " + q.device().to_string() + ", got " +
                        m.device().to_string());
    }
    bool fits = m.dim() <= scores.ndim();
    for (std::int64_t i = 0; fits && i < m.dim(); ++i) {
      const std::int64_t size = m.sizes()[static_cast<std::size_t>(m.dim() - 1 - i)];
      fits = size == 1 || size == scores[static_cast<std::size_t>(scores.ndim() - 1 - i)];
    }
    if (!fits) {
      throw ShapeError(kName + "attn_mask of shape " + m.sizes().to_string() +
                       " cannot be broadcast to the scores' shape " + scores.to_string());
    }
  }
  const Shape out_shape = with_tail(batch, l, ev);
  // No keys: the weights form an empty sum and the product is zero (the composition's result).
  if (s == 0) return zeros(out_shape, q.dtype(), q.device());
  Tensor out = empty(out_shape, q.dtype(), q.device());
  if (out.numel() == 0) return out;
  std::vector<Tensor> inputs = {q.expand(with_tail(batch, l, e)), k.expand(with_tail(batch, s, e)),
                                v.expand(with_tail(batch, s, ev))};
  if (has_mask) inputs.push_back(attn_mask->expand(scores));
  dispatch(OpCall{kSdpa, q.dtype(), std::move(inputs), {out},
                  AttentionParams{scale.value_or(1.0 / std::sqrt(static_cast<double>(e))),
                                  is_causal, slice_size.value_or(0)}});
  return out;
}

}  // namespace mpsim
