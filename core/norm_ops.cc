// Front ends of layer_norm, rms_norm, group_norm and batch_norm (inference). The kernel sees
// the input, weight, bias and output as same-shaped views whose trailing `num_reduced` dims
// form one normalization group (weight and bias broadcast with stride 0).
#include <limits>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace mpsim {
namespace {

std::string name_of(OpId op) { return std::string(op.name()); }

void check_input(OpId op, const Tensor& x) {
  if (!x.defined()) throw InvalidArgument("[" + name_of(op) + "] expected a defined input");
  if (!is_floating(x.dtype())) {
    throw DTypeError("[" + name_of(op) + "] expected a floating point input, got " +
                     std::string(dtype_name(x.dtype())));
  }
}

// weight or bias: `expected` sizes on the input's device, converted to the input's dtype;
// absent -> fill.
Tensor affine_param(OpId op, const std::optional<Tensor>& t, const char* what,
                    const Shape& expected, const Tensor& x, double fill) {
  if (!t || !t->defined()) return full(expected, fill, x.dtype(), x.device());
  if (t->sizes() != expected) {
    throw ShapeError("[" + name_of(op) + "] expected " + what + " of shape " +
                     expected.to_string() + ", got " + t->sizes().to_string());
  }
  if (t->device() != x.device()) {  // torch's rule: no implicit move between devices
    throw DeviceError("[" + name_of(op) + "] expected all tensors to be on the same device, but " +
                      what + " is on " + t->device().to_string() + " and the input on " +
                      x.device().to_string());
  }
  return t->to(x.dtype());
}

// The trailing normalized dims of x must equal `normalized_shape`.
void check_normalized_shape(OpId op, const Tensor& x, const IntList& normalized_shape) {
  const std::int64_t k = static_cast<std::int64_t>(normalized_shape.size());
  bool ok = k > 0 && k <= x.dim();
  for (std::int64_t i = 0; ok && i < k; ++i) ok = x.sizes()[x.dim() - k + i] == normalized_shape[i];
  if (!ok) {
    throw ShapeError("[" + name_of(op) + "] normalized_shape " + to_string(normalized_shape) +
                     " must be non-empty and equal the trailing dims of the input shape " +
                     x.sizes().to_string());
  }
}

Tensor run_norm(OpId op, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& out,
                std::int64_t num_reduced, double eps) {
  if (x.numel() > 0) {
    dispatch(OpCall{op,
                    x.dtype(),
                    {x, w, b},
                    {out},
                    NormParams{num_reduced, eps}});
  }
  return out;
}

// Normalizes groups of the trailing dims of x (layer_norm, rms_norm).
Tensor trailing_norm(OpId op, const Tensor& x, const IntList& normalized_shape,
                     const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     double eps, bool has_bias) {
  check_input(op, x);
  check_normalized_shape(op, x, normalized_shape);
  const Shape ns(normalized_shape);
  const Tensor w = affine_param(op, weight, "weight", ns, x, 1).expand(x.sizes());
  const Tensor b = has_bias ? affine_param(op, bias, "bias", ns, x, 0).expand(x.sizes()) : w;
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  return run_norm(op, x, w, b, out, static_cast<std::int64_t>(normalized_shape.size()), eps);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const IntList& normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps) {
  return trailing_norm(op_id("layer_norm"), x, normalized_shape, weight, bias, eps, true);
}

Tensor rms_norm(const Tensor& x, const IntList& normalized_shape,
                const std::optional<Tensor>& weight, std::optional<double> eps) {
  constexpr OpId kRms = op_id("rms_norm");
  check_input(kRms, x);
  const double e = eps.value_or(visit_dtype(x.dtype(), []<class T>() -> double {
    if constexpr (std::is_same_v<T, double>)
      return std::numeric_limits<double>::epsilon();
    else if constexpr (std::is_same_v<T, Half>)
      return 0x1p-10;
    else if constexpr (std::is_same_v<T, BFloat16>)
      return 0x1p-7;
    else
      return std::numeric_limits<float>::epsilon();
  }));
  return trailing_norm(kRms, x, normalized_shape, weight, std::nullopt, e, false);
}

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  constexpr OpId kGroup = op_id("group_norm");
  check_input(kGroup, x);
  if (x.dim() < 2) {
    throw ShapeError("[group_norm] expected an input of shape [N, C, *], got " +
                     x.sizes().to_string());
  }
  const std::int64_t n = x.sizes()[0], c = x.sizes()[1];
  if (num_groups <= 0 || c % num_groups != 0) {
    throw InvalidArgument("[group_norm] expected the number of channels " + std::to_string(c) +
                          " to be divisible by num_groups " + std::to_string(num_groups));
  }
  const Tensor w = affine_param(kGroup, weight, "weight", Shape({c}), x, 1);
  const Tensor b = affine_param(kGroup, bias, "bias", Shape({c}), x, 0);
  // Views of shape [N, G, C/G, *spatial]: a group is the trailing dims from C/G on.
  std::vector<std::int64_t> sizes = {n, num_groups, c / num_groups};
  Strides xs = {x.strides()[0], x.strides()[1] * (c / num_groups), x.strides()[1]};
  for (std::int64_t d = 2; d < x.dim(); ++d) {
    sizes.push_back(x.sizes()[d]);
    xs.push_back(x.strides()[d]);
  }
  const Shape grouped(sizes);
  // Channel-only parameters: stride 0 over N and the spatial dims.
  Strides ps(sizes.size(), 0);
  ps[1] = c / num_groups;
  ps[2] = 1;
  const Tensor wc = w.contiguous(), bc = b.contiguous();
  // The output keeps the input's memory format: the same strides when x is dense in some
  // permutation (channels-last included), else contiguous.
  const bool channels_last = x.dim() == 4 && x.strides() == channels_last_strides(x.sizes());
  Tensor out = channels_last ? empty_strided(x.sizes(), x.strides(), x.dtype(), x.device())
                             : empty(x.sizes(), x.dtype(), x.device());
  Strides os = {out.strides()[0], out.strides()[1] * (c / num_groups), out.strides()[1]};
  for (std::int64_t d = 2; d < x.dim(); ++d) os.push_back(out.strides()[d]);
  run_norm(kGroup, x.as_strided(grouped, xs, x.storage_offset()),
           wc.as_strided(grouped, ps, wc.storage_offset()),
           bc.as_strided(grouped, ps, bc.storage_offset()),
           out.as_strided(grouped, os, out.storage_offset()), x.dim() - 1, eps);
  return out;
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  bool training, double, double eps) {
  constexpr OpId kBatch = op_id("batch_norm");
  check_input(kBatch, x);
  if (training) {
    throw NotImplementedError(
        "[batch_norm] training mode (batch statistics) is not implemented; "
        "mpsim provides batch_norm for inference (training=false)");
  }
  if (x.dim() < 2) {
    throw ShapeError("[batch_norm] expected an input of shape [N, C, *], got " +
                     x.sizes().to_string());
  }
  const std::int64_t c = x.sizes()[1];
  const Shape channel({c});
  const Tensor mean = affine_param(kBatch, running_mean, "running_mean", channel, x, 0);
  const Tensor var = affine_param(kBatch, running_var, "running_var", channel, x, 1);
  const Tensor w = affine_param(kBatch, weight, "weight", channel, x, 1);
  const Tensor b = affine_param(kBatch, bias, "bias", channel, x, 0);
  // Per-channel parameters broadcast over N and the spatial dims.
  std::vector<std::int64_t> view(static_cast<std::size_t>(x.dim()), 1);
  view[1] = c;
  auto spread = [&](const Tensor& t) { return t.reshape(Shape(view)).expand(x.sizes()); };
  // In x's layout (Note [elementwise output layout] in core/tensor.cc), as PyTorch's.
  Tensor out =
      empty_strided(x.sizes(), layout_strides(x.sizes(), {x}, true), x.dtype(), x.device());
  if (x.numel() > 0) {
    dispatch(OpCall{kBatch,
                    x.dtype(),
                    {x, spread(mean), spread(var), spread(w), spread(b)},
                    {out},
                    NormParams{0, eps}});
  }
  return out;
}

}  // namespace mpsim
