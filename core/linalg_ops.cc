// Front ends of the matmul family: matmul (every torch.matmul case), mm, bmm, addmm, baddbmm and
// linear. Each validates as PyTorch does, reduces its operands to one batched product
// a [*batch, M, K] @ b [*batch, K, N] (+ beta * c) of broadcast views, and dispatches it with
// its own op id, so the profiler, the support table and fallback see the name the user called.
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/runtime.h"

namespace mpsim {
namespace {

std::string name_of(OpId op) { return std::string(op.name()); }

// Every operand defined, floating, of one dtype and on one device.
void check_operands(OpId op, std::initializer_list<std::pair<const char*, const Tensor*>> list) {
  const Tensor* first = nullptr;
  const char* first_name = "";
  for (const auto& [what, t] : list) {
    if (t == nullptr) continue;
    if (!t->defined()) {
      throw InvalidArgument("[" + name_of(op) + "] expected a defined tensor for " + what);
    }
    if (!is_floating(t->dtype())) {
      throw DTypeError("[" + name_of(op) + "] supports floating point tensors (float16, " +
                       "bfloat16, float32, float64), got " + what + " of dtype " +
                       std::string(dtype_name(t->dtype())));
    }
    if (first == nullptr) {
      first = t;
      first_name = what;
      continue;
    }
    if (t->dtype() != first->dtype()) {
      throw DTypeError("[" + name_of(op) + "] expected " + what + " to have the dtype of " +
                       first_name + ", " + std::string(dtype_name(first->dtype())) + ", got " +
                       std::string(dtype_name(t->dtype())));
    }
    if (t->device() != first->device()) {
      throw DeviceError("[" + name_of(op) +
                        "] expected all tensors to be on the same device, but found at least two "
                        "devices, " +
                        first->device().to_string() + " and " + t->device().to_string());
    }
  }
}

[[noreturn]] void throw_inner(OpId op, const Tensor& a, const Tensor& b) {
  throw ShapeError("[" + name_of(op) + "] inner dimensions differ: self is " +
                   a.sizes().to_string() + ", other is " + b.sizes().to_string());
}

// Whether `from` expands to `to` (PyTorch's expand rule: trailing dims equal or 1).
bool expands_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  }
  return true;
}

Shape concat(const Shape& batch, std::initializer_list<std::int64_t> tail) {
  std::vector<std::int64_t> dims(batch.begin(), batch.end());
  dims.insert(dims.end(), tail);
  return Shape(dims);
}

// out [*batch, M, N] = alpha * a @ b + beta * c, with a [*, M, K] and b [*, K, N] broadcast
// over `batch` and c (optional) broadcast to the result. Shapes are valid here.
Tensor product(OpId op, const Tensor& a, const Tensor& b, const Shape& batch,
               const std::optional<Tensor>& c, Scalar beta, Scalar alpha) {
  const std::int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  const Shape out_shape = concat(batch, {m, n});
  std::vector<Tensor> inputs = {a.expand(concat(batch, {m, k})), b.expand(concat(batch, {k, n}))};
  if (c) {
    if (!expands_to(c->sizes(), out_shape)) {
      throw ShapeError("[" + name_of(op) + "] input of shape " + c->sizes().to_string() +
                       " cannot be broadcast to the result's shape " + out_shape.to_string());
    }
    inputs.push_back(c->expand(out_shape));
  }
  Tensor out = empty(out_shape, a.dtype(), a.device());
  if (out.numel() == 0) return out;
  dispatch(OpCall{op, a.dtype(), std::move(inputs), {out},
                  MatmulParams{alpha.to_double(), beta.to_double()}});
  return out;
}

// torch.matmul's cases on validated operands of rank >= 1.
Tensor matmul_impl(OpId op, const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) {
    throw ShapeError("[" + name_of(op) + "] both arguments need to be at least 1-d, got " +
                     std::to_string(a.dim()) + "-d and " + std::to_string(b.dim()) + "-d");
  }
  const std::int64_t ka = a.size(-1);
  const std::int64_t kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  if (ka != kb) throw_inner(op, a, b);
  // A 1-d operand is a row (a) or a column (b) whose dim leaves the result.
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Tensor out;
  if (b2.dim() == 2 && a2.dim() >= 2) {
    // b has no batch dims: a's batch folds into its rows (one problem, the same chains).
    std::vector<std::int64_t> dims(a2.sizes().begin(), a2.sizes().end() - 1);
    const Tensor rows = a2.reshape({Shape(dims).numel(), ka});
    dims.push_back(b2.size(1));
    out = product(op, rows, b2, Shape(), std::nullopt, 0, 1).view(Shape(dims));
  } else {
    const Shape batch_a(std::vector<std::int64_t>(a2.sizes().begin(), a2.sizes().end() - 2));
    const Shape batch_b(std::vector<std::int64_t>(b2.sizes().begin(), b2.sizes().end() - 2));
    out = product(op, a2, b2, broadcast_shapes(op.name(), batch_a, batch_b), std::nullopt, 0, 1);
  }
  if (a.dim() == 1) out = out.squeeze(out.dim() - 2);
  if (b.dim() == 1) out = out.squeeze(out.dim() - 1);
  return out;
}

void check_rank(OpId op, const Tensor& t, const char* what, std::int64_t rank) {
  if (t.dim() != rank) {
    throw ShapeError("[" + name_of(op) + "] expected " + what + " to be a " + std::to_string(rank) +
                     "-d tensor, got shape " + t.sizes().to_string());
  }
}

void check_batch_match(OpId op, const Tensor& a, const Tensor& b) {
  if (a.size(0) != b.size(0)) {
    throw ShapeError("[" + name_of(op) + "] batch sizes differ: self is " + a.sizes().to_string() +
                     ", other is " + b.sizes().to_string());
  }
  if (a.size(2) != b.size(1)) throw_inner(op, a, b);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  constexpr OpId kOp = op_id("matmul");
  check_operands(kOp, {{"self", &a}, {"other", &b}});
  return matmul_impl(kOp, a, b);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  constexpr OpId kOp = op_id("mm");
  check_operands(kOp, {{"self", &a}, {"mat2", &b}});
  check_rank(kOp, a, "self", 2);
  check_rank(kOp, b, "mat2", 2);
  if (a.size(1) != b.size(0)) throw_inner(kOp, a, b);
  return product(kOp, a, b, Shape(), std::nullopt, 0, 1);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  constexpr OpId kOp = op_id("bmm");
  check_operands(kOp, {{"self", &a}, {"mat2", &b}});
  check_rank(kOp, a, "self", 3);
  check_rank(kOp, b, "mat2", 3);
  check_batch_match(kOp, a, b);
  return product(kOp, a, b, Shape({a.size(0)}), std::nullopt, 0, 1);
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  constexpr OpId kOp = op_id("addmm");
  check_operands(kOp, {{"input", &input}, {"mat1", &a}, {"mat2", &b}});
  check_rank(kOp, a, "mat1", 2);
  check_rank(kOp, b, "mat2", 2);
  if (a.size(1) != b.size(0)) throw_inner(kOp, a, b);
  return product(kOp, a, b, Shape(), input, beta, alpha);
}

Tensor baddbmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  constexpr OpId kOp = op_id("baddbmm");
  check_operands(kOp, {{"input", &input}, {"batch1", &a}, {"batch2", &b}});
  check_rank(kOp, a, "batch1", 3);
  check_rank(kOp, b, "batch2", 3);
  check_batch_match(kOp, a, b);
  return product(kOp, a, b, Shape({a.size(0)}), input, beta, alpha);
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  constexpr OpId kOp = op_id("linear");
  const Tensor* bias_ptr = bias && bias->defined() ? &*bias : nullptr;
  check_operands(kOp, {{"input", &x}, {"weight", &weight}, {"bias", bias_ptr}});
  if (x.dim() == 0 || weight.dim() == 0 || weight.dim() > 2) {
    throw ShapeError("[linear] expected input of at least 1-d and a 1-d or 2-d weight, got " +
                     x.sizes().to_string() + " and " + weight.sizes().to_string());
  }
  if (x.size(-1) != weight.size(-1)) {
    throw ShapeError("[linear] input's last dim " + std::to_string(x.size(-1)) +
                     " differs from weight's in_features " + std::to_string(weight.size(-1)) +
                     ": input is " + x.sizes().to_string() + ", weight is " +
                     weight.sizes().to_string());
  }
  // x [*, in] -> rows [R, in]; weight [out, in] -> its transpose [in, out] (a view).
  const std::int64_t in = x.size(-1);
  const Tensor w = weight.dim() == 1 ? weight.unsqueeze(1) : weight.t();
  std::vector<std::int64_t> dims(x.sizes().begin(), x.sizes().end() - 1);
  const Tensor rows = x.reshape({Shape(dims).numel(), in});
  if (weight.dim() == 2) dims.push_back(weight.size(0));
  std::optional<Tensor> c;
  if (bias_ptr != nullptr) {
    // The bias broadcasts against the result [*, out]; as a [1, out] row of the 2-d product.
    const Shape result(dims);
    if (!expands_to(bias_ptr->sizes(), result)) {
      throw ShapeError("[linear] bias of shape " + bias_ptr->sizes().to_string() +
                       " cannot be broadcast to the result's shape " + result.to_string());
    }
    c = bias_ptr->expand(result).reshape({rows.size(0), w.size(1)});
  }
  return product(kOp, rows, w, Shape(), c, c ? Scalar(1) : Scalar(0), 1).view(Shape(dims));
}

}  // namespace mpsim
